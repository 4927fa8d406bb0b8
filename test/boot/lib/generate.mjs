// From a seed, a host: 3-6 catalogue entries composed into one recipe. Seeds
// draw from a deck of seeded permutations of the catalogue, so every entry is
// used once per round and a run of R rounds' seeds uses each R times; the
// draw for seed s depends only on s (seeds before it are replayed, without
// booting, to find where its cards start).

export const CONTROL_PLANE_PORTS = [2379, 2380, 6443, 10250, 10257, 10259];

function mulberry32(a) {
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled(list, rand) {
  const a = [...list];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** The deck: round r is a permutation of the entries seeded by r. */
function card(entries, n) {
  const round = Math.floor(n / entries.length);
  return shuffled(entries, mulberry32(0x5eed + round * 7919))[n % entries.length];
}

const hostSize = (seed) => 3 + Math.floor(mulberry32(seed * 104729)() * 4);

/** Entry lists for seeds 1..last (cards are taken in order; a card a host cannot take goes to the next host). */
export function hosts(entries, last) {
  const out = [];
  let next = 0;
  let carry = [];
  for (let seed = 1; seed <= last; seed++) {
    const size = Math.min(hostSize(seed), entries.length);
    const picked = [];
    let ports = 0;
    const waiting = [];
    const take = (e) => {
      if (picked.includes(e) || (e.port && ports >= CONTROL_PLANE_PORTS.length) || (e.conflicts ?? []).some((id) => picked.some((p) => p.id === id)) || picked.some((p) => (p.conflicts ?? []).includes(e.id))) return false;
      picked.push(e);
      if (e.port) ports++;
      return true;
    };
    for (const e of carry) if (picked.length >= size || !take(e)) waiting.push(e);
    let guard = 0;
    while (picked.length < size && guard++ < entries.length * 2) {
      const e = card(entries, next++);
      if (!take(e)) waiting.push(e);
    }
    carry = waiting;
    out.push({ seed, entries: picked });
  }
  return out;
}

/** The fewest seeds whose hosts use every entry at least `times` times. */
export function seedsFor(entries, times) {
  for (let n = 1; n < 10_000; n++) {
    const used = new Map();
    for (const h of hosts(entries, n)) for (const e of h.entries) used.set(e.id, (used.get(e.id) ?? 0) + 1);
    if (entries.every((e) => (used.get(e.id) ?? 0) >= times)) return n;
  }
  throw new Error('the deck never covers the catalogue');
}

/** One recipe from entries: each entry that holds a port gets its own control-plane port. */
export function compose(entries) {
  const files = {};
  const setup = [];
  const rcLocal = [];
  const listens = [];
  const owner = {};
  let late = 0;
  let rollback = false;
  let ports = [...CONTROL_PLANE_PORTS];
  const parts = [];
  // Resource blocks entries add to the farm's desired state (lib/desired.mjs), each once.
  const desired = [];
  // PortFree list keys (opt-ins such as stop_containers: one key, every entry's items, each once), package layers
  // (lib/layer.mjs) and nspawn options entries need, each once.
  const portFree = {};
  const layers = [];
  const nspawn = [];
  const once = (list, items) => list.push(...(items ?? []).filter((x) => !list.includes(x)));
  for (const e of entries) {
    // An entry may ask for one port (a container publishing 6443 as a docker host's does); else the next one free.
    const want = e.preferPort !== undefined && ports.includes(e.preferPort) ? e.preferPort : undefined;
    const port = e.port ? (want ?? ports[0]) : undefined;
    if (port !== undefined) ports = ports.filter((p) => p !== port);
    const r = e.recipe({ port, tag: e.id });
    for (const [p, c] of Object.entries(r.files ?? {})) {
      if (p in files && JSON.stringify(files[p]) !== JSON.stringify(c)) throw new Error(`entries ${owner[p]} and ${e.id} both write ${p}`);
      files[p] = c;
      owner[p] = e.id;
    }
    setup.push(...(r.setup ?? []));
    rcLocal.push(...(r.rcLocal ?? []));
    listens.push(...(r.listens ?? []));
    late = Math.max(late, e.late ?? 0);
    rollback ||= e.rollback === true;
    for (const [key, items] of Object.entries(e.portFree ?? {})) once((portFree[key] ??= []), items);
    once(layers, e.layers);
    once(nspawn, e.nspawn);
    if (e.desired && !desired.some((d) => JSON.stringify(d) === JSON.stringify(e.desired))) desired.push(e.desired);
    parts.push({ id: e.id, port });
  }
  // rc.local is one file every entry may add lines to, as admins do over the years.
  if (rcLocal.length > 0) files['/etc/rc.local'] = { mode: 0o755, content: ['#!/bin/sh -e', '# rc.local of the previous admins', ...rcLocal, 'exit 0', ''].join('\n') };
  return { files, setup, listens, late, parts, desired, portFree, layers, nspawn, rollback };
}
