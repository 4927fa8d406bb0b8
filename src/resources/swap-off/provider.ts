// SwapOff: no swap active now, and none that can come back at boot.
// Boot-time sources (README.md, "Swap and where it comes from"): fstab lines of type swap, native
// .swap units and swap services that default.target reaches through any
// dependency (src/swap/units.ts; masking swap.target stops only those under
// it), zram-generator config, gpt-auto swap partitions, and boot scripts
// (boot-script-hook.ts). Live, every active swap is traced to one of them;
// one nothing explains is an operator line naming what was searched.
import type { Commands, TargetFs, TargetHost } from '../../host.js';
import { SWAP_OFF_SCHEMA, type SwapOffSpec } from './spec.js';
import type { Change, Provider } from '../types.js';
import type { WriteDoor } from '../../door/door.js';
import { readMeminfo } from '../../observe/meminfo.js';
import { commentOutLines, disabledByUs, parseFstab, swapEntries, type FstabEntry } from '../../swap/fstab.js';
import { parseProcSwaps, type ActiveSwap } from '../../swap/proc-swaps.js';
import { isSwapTargetMasked, scanSwapUnits, SWAP_TARGET, ZRAM_SERVICES, type SwapUnit } from '../../swap/units.js';
import { maskLinkOf } from '../../systemd/unit-dirs.js';
import { SYSTEMD_SYSTEM_ETC } from '../../systemd/unit-dirs.js';
import type { BootScripts } from '../../boot-scripts/scan.js';
import { removeUnitLinks } from '../../systemd/unit-links.js';
import { readZramDevices } from '../../swap/zram.js';
import { SIGNATURE_SPAN, swapSignature } from '../../swap/signature.js';
import { withBootScripts } from '../boot-script-hook.js';
import { swapConcern } from './boot-scripts.js';
import type { ManagerSwapUnit, RefusedSwapFile, SwapObserved, SwapOrigin } from './observed.js';
import { parseShowProperties } from '../../systemd/systemctl-output.js';
import { SWAP_KIND, SWAP_PROMISE } from './promises.js';

export const FSTAB = '/etc/fstab';

export type SwapOp =
  | { kind: 'swapoff'; device: string }
  | { kind: 'fstab'; lines: number[] }
  | { kind: 'disable-unit'; unit: string; links: string[] }
  | { kind: 'mask-swap-target' }
  | { kind: 'mask-unit'; unit: string }
  | { kind: 'remove-swap-file'; path: string }
  | { kind: 'none' };

function describeEntry(e: FstabEntry): string {
  return `line ${e.line}: ${e.spec}`;
}

/** Why `p` (named as swap by `source`) must not be deleted; null when it is a swap file we may delete, undefined when there is nothing to judge. */
async function swapFileRefusal(host: TargetFs, p: string): Promise<string | null | undefined> {
  // Devices and partitions are swap too, but never files to delete: nothing to refuse either.
  if (!p.startsWith('/') || p === '/dev' || p.startsWith('/dev/')) return undefined;
  const st = await host.lstat(p);
  if (st === null) return undefined;
  if (st.isSymbolicLink()) return `is a symlink (to ${(await host.readLink(p)) ?? '?'}); only a regular file is deleted, never what a link points at`;
  if (!st.isFile()) return `is ${st.isDirectory() ? 'a directory' : st.isBlockDevice() ? 'a block device' : 'not a regular file'}`;
  if (st.nlink > 1) return `has ${st.nlink} hard links; deleting one name would free nothing and the content is shared`;
  const head = await host.readHead(p, SIGNATURE_SPAN);
  if (head === null) return 'is not a regular file';
  const sig = swapSignature(head);
  return sig.swap ? null : sig.reason;
}

/** The device node or file a path names, as the kernel would list it: links followed (live: /dev/disk/by-uuid/... -> /dev/sda5). */
async function identity(host: TargetFs, p: string): Promise<string> {
  try {
    return await host.realTarget(p);
  } catch {
    return p;
  }
}

const TAG_DIRS: Record<string, string> = {
  uuid: '/dev/disk/by-uuid',
  label: '/dev/disk/by-label',
  partuuid: '/dev/disk/by-partuuid',
  partlabel: '/dev/disk/by-partlabel',
};

/** Live: what read here turns each active swap on at boot (boot scripts aside). */
async function traceActive(
  host: TargetFs,
  active: ActiveSwap[],
  swap: FstabEntry[],
  units: SwapUnit[],
  zram: Awaited<ReturnType<typeof readZramDevices>>,
): Promise<SwapOrigin[]> {
  const sources: Array<{ by: string; ids: Set<string> | 'zram' | 'file' }> = [];
  for (const e of swap) {
    const p = e.device.kind === 'path' ? e.device.value : TAG_DIRS[e.device.kind] ? `${TAG_DIRS[e.device.kind]}/${e.device.value}` : null;
    if (p !== null) sources.push({ by: `${FSTAB}:${e.line}`, ids: new Set([p, await identity(host, p)]) });
  }
  for (const u of units) {
    if (u.kind === 'swap-unit' && u.what) sources.push({ by: u.unit, ids: new Set([u.what, await identity(host, u.what)]) });
    if (u.kind === 'swap-service') sources.push({ by: u.unit, ids: ZRAM_SERVICES.has(u.unit) ? 'zram' : 'file' });
  }
  for (const z of zram.filter((z) => z.swap)) sources.push({ by: `zram-generator: ${z.file} [${z.device}]`, ids: new Set([`/dev/${z.device}`]) });
  const out: SwapOrigin[] = [];
  for (const a of active) {
    const me = await identity(host, a.filename);
    const by = sources
      .filter((s) => (s.ids === 'zram' ? /^\/dev\/zram\d+$/.test(a.filename) : s.ids === 'file' ? a.type === 'file' : s.ids.has(a.filename) || s.ids.has(me)))
      .map((s) => s.by);
    out.push({ filename: a.filename, by });
  }
  return out;
}

/**
 * Live: the .swap unit the running manager made for an active swap
 * (systemd-escape names it), with its fragment, source and what pulls it in;
 * null when systemctl cannot answer.
 */
async function managerSwapUnit(host: Commands, filename: string): Promise<ManagerSwapUnit | null> {
  try {
    const esc = await host.run('systemd-escape', ['--path', '--suffix=swap', filename]);
    const unit = esc.stdout.trim();
    if (esc.exitCode !== 0 || unit === '') return null;
    const r = await host.run('systemctl', ['show', '-p', 'LoadState', '-p', 'FragmentPath', '-p', 'SourcePath', '-p', 'WantedBy', '-p', 'RequiredBy', unit]);
    if (r.exitCode !== 0) return null;
    const p = parseShowProperties(r.stdout);
    const words = (k: string) => (p.get(k) ?? '').split(/\s+/).filter(Boolean);
    return { unit, fragment: p.get('FragmentPath') || null, source: p.get('SourcePath') || null, pulledBy: [...words('WantedBy'), ...words('RequiredBy')] };
  } catch {
    return null;
  }
}

/** A generator's unit that only swap.target pulls in is stopped by masking it (gpt-auto, a generator of fstab lines read elsewhere). */
function stoppedByMask(m: ManagerSwapUnit, swapTargetMasked: boolean): boolean {
  const generated = m.fragment !== null && m.fragment.startsWith('/run/systemd/generator');
  return generated && swapTargetMasked && m.pulledBy.length > 0 && m.pulledBy.every((u) => u === 'swap.target');
}

/** Asks the running manager about each swap nothing read here explains; a generator's unit under a masked swap.target is explained by it. */
async function withManager(host: TargetFs & Partial<Commands>, origins: SwapOrigin[], swapTargetMasked: boolean): Promise<SwapOrigin[]> {
  if (host.run === undefined) return origins;
  const out: SwapOrigin[] = [];
  for (const o of origins) {
    if (o.by.length > 0) {
      out.push(o);
      continue;
    }
    const m = await managerSwapUnit(host as Commands, o.filename);
    if (m === null) out.push(o);
    else if (stoppedByMask(m, swapTargetMasked))
      out.push({ ...o, by: [`${m.unit} (${m.fragment}${m.source ? `, made from ${m.source}` : ''}), pulled in only by swap.target`] });
    else out.push({ ...o, manager: m });
  }
  return out;
}

export async function observeSwap(host: TargetFs & Partial<Commands>, spec?: Pick<SwapOffSpec, 'mask_swap_target'>): Promise<SwapObserved> {
  let active: ActiveSwap[] | null = null;
  let swapTotalKb: number | null = null;
  let memTotalKb: number | null = null;
  if (host.live) {
    active = parseProcSwaps((await host.readKernel('/proc/swaps')) ?? '');
    const meminfo = await readMeminfo(host);
    swapTotalKb = meminfo.get('SwapTotal') ?? 0;
    memTotalKb = meminfo.get('MemTotal') ?? null;
  }
  const content = await host.readBytes(FSTAB);
  const swap = content === null ? [] : swapEntries(parseFstab(content));
  const disabled = content === null ? [] : disabledByUs(content);

  const swapTargetMasked = await isSwapTargetMasked(host);
  // What still starts a unit is judged with swap.target as this run leaves it.
  const scan = await scanSwapUnits(host, { swapTargetMasked: swapTargetMasked || spec?.mask_swap_target === true });
  const units = scan.units;
  const zram = await readZramDevices(host);
  // Where each candidate is named as swap: fstab (active or commented out by us), a .swap unit, /proc/swaps.
  const candidates = new Map<string, string>();
  const name = (p: string, why: string) => candidates.has(p) || candidates.set(p, why);
  for (const e of swap) if (e.device.kind === 'path') name(e.device.value, `${FSTAB}:${e.line}`);
  for (const e of disabled) if (e.device.kind === 'path') name(e.device.value, `${FSTAB}:${e.line} (commented out)`);
  for (const u of units) if (u.what?.startsWith('/')) name(u.what, u.unit);
  for (const a of active ?? []) if (a.type === 'file') name(a.filename, '/proc/swaps');
  const swapFiles: string[] = [];
  const refusedSwapFiles: RefusedSwapFile[] = [];
  for (const [p, source] of [...candidates].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const refusal = await swapFileRefusal(host, p);
    if (refusal === null) swapFiles.push(p);
    else if (refusal !== undefined) refusedSwapFiles.push({ path: p, source, reason: refusal });
  }

  return {
    live: host.live,
    active,
    swapTotalKb,
    memTotalKb,
    fstab: { path: FSTAB, content, swap, disabled },
    units,
    unitsSearched: scan.searched,
    graphUnknown: scan.unknown,
    ...(active !== null
      ? { origins: await withManager(host, await traceActive(host, active, swap, units, zram), swapTargetMasked || spec?.mask_swap_target === true) }
      : {}),
    zram,
    swapTargetMasked,
    swapFiles,
    refusedSwapFiles,
  };
}

/** Whether a boot script's swapon may turn `filename` on: it names it, or a word of it is unknown. */
function scriptTurnsOn(scripts: BootScripts | undefined, filename: string): string | null {
  for (const h of scripts?.hits ?? []) {
    if (h.action.kind !== 'swapon') continue;
    if (h.action.argv.slice(1).some((w) => w === null || w === filename)) return `${h.file}:${h.line}`;
  }
  return null;
}

/** What the running manager said of the unit it made for an untraced swap, as the start of a sentence. */
function managerSays(m: ManagerSwapUnit | undefined): string {
  if (m === undefined) return '';
  if (m.fragment === null)
    return `the running systemd knows ${m.unit} only from /proc/swaps (no unit file: a swapon outside any unit, by hand or by a program); `;
  return `the running systemd has ${m.unit} from ${m.fragment}${m.source ? ` (made from ${m.source})` : ''}${m.pulledBy.length ? `, pulled in by ${m.pulledBy.join(', ')}` : ''}; `;
}

/** A local unit file in /etc/systemd/system: a mask link there would have to replace it. */
function localFile(u: SwapUnit): boolean {
  return u.file !== null && u.file.startsWith(`${SYSTEMD_SYSTEM_ETC}/`) && !u.links.includes(u.file);
}

type SwapDiffObserved = SwapObserved & { bootScripts?: BootScripts };

export function diffSwap(spec: SwapOffSpec, o: SwapDiffObserved, ctx: { live: boolean }): Change<SwapOp>[] {
  return [
    // Runtime first: swapoff each active area (live only; offline nothing runs).
    ...(ctx.live && o.active ? o.active.map(swapoffChange) : []),
    ...fstabChanges(o),
    // Every active swap traced to what turns it on at boot; one nothing read here explains is for a person.
    ...(ctx.live ? untracedSwapChanges(o) : []),
    ...o.units.flatMap(unitChanges),
    ...swapTargetChanges(spec, o),
    ...(spec.remove_swap_files ? swapFileChanges(o) : []),
  ];
}

function swapoffChange(a: ActiveSwap): Change<SwapOp> {
  return {
    id: `swapoff:${a.filename}`,
    action: 'runtime',
    runtime: true,
    summary: `swapoff ${a.filename} (${a.type}, ${a.sizeKb} kB, ${a.usedKb} kB used)`,
    op: { kind: 'swapoff', device: a.filename },
  };
}

function fstabChanges(o: SwapDiffObserved): Change<SwapOp>[] {
  if (o.fstab.content === null || o.fstab.swap.length === 0) return [];
  const lines = o.fstab.swap.map((e) => e.line);
  return [
    {
      id: 'fstab',
      action: 'update',
      summary: `comment out ${lines.length} swap line${lines.length > 1 ? 's' : ''} in ${o.fstab.path} (${o.fstab.swap.map(describeEntry).join(', ')})`,
      file: { path: o.fstab.path, before: o.fstab.content, after: commentOutLines(o.fstab.content, lines) },
      op: { kind: 'fstab', lines },
    },
  ];
}

function untracedSwapChanges(o: SwapDiffObserved): Change<SwapOp>[] {
  const changes: Change<SwapOp>[] = [];
  for (const t of o.origins ?? []) {
    if (t.by.length > 0 || scriptTurnsOn(o.bootScripts, t.filename) !== null) continue;
    const searched = [
      `${o.fstab.path} (${o.fstab.swap.length} swap line${o.fstab.swap.length === 1 ? '' : 's'})`,
      `${o.unitsSearched ?? 0} swap unit${o.unitsSearched === 1 ? '' : 's'} and swap services in the unit graph from default.target${o.graphUnknown ? ` (incomplete: ${o.graphUnknown})` : ''}`,
      'zram-generator config',
      'boot scripts (rc.local, crontabs, network hooks, unit commands)',
    ];
    changes.push({
      id: `origin:${t.filename}`,
      action: 'operator',
      summary: `swap ${t.filename} is active, and nothing read here turns it on at boot: the swapoff lasts until whatever turned it on runs again`,
      operator: `searched ${searched.join(', ')}; ${managerSays(t.manager)}find what turns ${t.filename} on and remove it`,
      op: { kind: 'none' },
    });
  }
  return changes;
}

/** Disable a swap unit's links, then mask it when something else still pulls it in. */
function unitChanges(u: SwapUnit): Change<SwapOp>[] {
  const changes: Change<SwapOp>[] = [];
  const why = u.reach ? `; ${u.reach}` : '';
  if (u.links.length > 0) {
    changes.push({
      id: `unit:${u.unit}`,
      action: 'disable',
      summary: `disable ${u.unit}${u.what ? ` (${u.what})` : ''}${u.kind === 'swap-service' ? ' (runs swapon itself; masking swap.target does not stop it)' : ''}: remove ${u.links.join(', ')}${why}`,
      op: { kind: 'disable-unit', unit: u.unit, links: u.links },
    });
  }
  if (u.comeback.length === 0) return changes;
  if (localFile(u)) {
    changes.push({
      id: `mask-unit:${u.unit}`,
      action: 'operator',
      summary: `${u.unit}${u.what ? ` (${u.what})` : ''} turns swap on at boot: ${u.comeback.join('; ')}`,
      operator: `its unit file ${u.file} is in ${SYSTEMD_SYSTEM_ETC}, where a mask link would replace it: remove the file (or move it aside), or remove what pulls it in`,
      op: { kind: 'none' },
    });
    return changes;
  }
  changes.push({
    id: `mask-unit:${u.unit}`,
    action: 'mask',
    summary: `mask ${u.unit}${u.what ? ` (${u.what})` : ''} (${maskLinkOf(u.unit)} -> /dev/null): ${u.comeback.join('; ')}${u.links.length > 0 ? ' once disabled' : ''}, and masking swap.target does not stop it`,
    op: { kind: 'mask-unit', unit: u.unit },
  });
  return changes;
}

/** swap.target masked as the spec asks, or zram-generator's swap, which only that mask stops, left to the operator. */
function swapTargetChanges(spec: SwapOffSpec, o: SwapDiffObserved): Change<SwapOp>[] {
  const changes: Change<SwapOp>[] = [];
  if (spec.mask_swap_target && !o.swapTargetMasked) {
    changes.push({
      id: 'mask:swap.target',
      action: 'mask',
      summary: `mask swap.target (${SWAP_TARGET} -> /dev/null) so no swap source is pulled in at boot`,
      op: { kind: 'mask-swap-target' },
    });
  }
  const zramSwap = o.zram.filter((z) => z.swap);
  if (zramSwap.length > 0 && !spec.mask_swap_target && !o.swapTargetMasked) {
    changes.push({
      id: 'zram',
      action: 'operator',
      summary: `zram-generator will create swap on ${zramSwap.map((z) => `/dev/${z.device}`).join(', ')} at boot`,
      operator: `zram-generator config (${[...new Set(zramSwap.map((z) => z.file))].join(', ')}) makes swap at boot and swap.target is not masked: set mask_swap_target: true or remove the config`,
      op: { kind: 'none' },
    });
  }
  return changes;
}

function swapFileChanges(o: SwapDiffObserved): Change<SwapOp>[] {
  return [
    ...(o.refusedSwapFiles ?? []).map((r): Change<SwapOp> => ({
      id: `remove-refused:${r.path}`,
      action: 'operator',
      summary: `not deleting ${r.path} (named as swap by ${r.source}): it ${r.reason}`,
      operator: `${r.source} names ${r.path} as swap, but it ${r.reason}; remove_swap_files deletes only swap files: check that entry`,
      op: { kind: 'none' },
    })),
    ...o.swapFiles.map((p): Change<SwapOp> => ({
      id: `remove:${p}`,
      action: 'delete',
      summary: `delete swap file ${p}`,
      op: { kind: 'remove-swap-file', path: p },
    })),
  ];
}

const ORDER: Record<SwapOp['kind'], number> = {
  swapoff: 0,
  fstab: 1,
  'disable-unit': 2,
  'mask-swap-target': 3,
  'mask-unit': 3,
  'remove-swap-file': 4,
  none: 5,
};

export async function applySwap(host: TargetHost, changes: Change<SwapOp>[], door: WriteDoor): Promise<void> {
  // swapoff before deleting a file; config changes in any order, then one daemon-reload.
  const todo = [...changes].sort((a, b) => ORDER[a.op.kind] - ORDER[b.op.kind]);
  let unitsChanged = false;
  for (const c of todo) {
    const op = c.op;
    switch (op.kind) {
      case 'swapoff':
        await door.runtime({ step: 'swapoff', device: op.device }, () => host.runChecked('swapoff', [op.device]));
        break;
      case 'fstab':
        if (c.file && c.file.after !== null) await door.writeFile({ path: c.file.path, expect: c.file.before, content: c.file.after });
        break;
      case 'disable-unit':
        await removeUnitLinks(door, op.links);
        unitsChanged = true;
        break;
      case 'mask-swap-target':
        await door.symlink(SWAP_TARGET, '/dev/null');
        unitsChanged = true;
        break;
      case 'mask-unit':
        // As `systemctl mask` does: a link to /dev/null in /etc/systemd/system, journaled by the door (--rollback removes it).
        await door.symlink(maskLinkOf(op.unit), '/dev/null');
        unitsChanged = true;
        break;
      case 'remove-swap-file':
        // The pages of a swap file are nothing to restore, and copying gigabytes could fill the disk.
        await door.remove(op.path, { backup: false });
        break;
      case 'none':
        break;
    }
  }
  if (unitsChanged && host.live) await door.runtime({ step: 'daemon-reload' }, () => host.runChecked('systemctl', ['daemon-reload']));
}

const swapOffOwn: Provider<SwapOffSpec, SwapObserved, SwapOp> = {
  type: 'SwapOff',
  schema: SWAP_OFF_SCHEMA,
  after: [],
  promised: () => [{ id: SWAP_PROMISE, kind: 'swap', subject: 'swap', expect: 'off' }],
  promiseKinds: { swap: SWAP_KIND },
  // before.json's swap_total_kb: SwapTotal of /proc/meminfo, kB.
  beforeState: async (host, seen) => ({ swap_total_kb: seen.swapTotalKb ?? (await readMeminfo(host)).get('SwapTotal') ?? 0 }),
  observe: (host, spec) => observeSwap(host, spec),
  // A warning, not yet an unknown that takes swap:off back: the image fixtures of the tests have no
  // default.target (a real Debian root always has one); PortFree's offline graph warning is the same.
  warnings: (_spec, o) => (o.graphUnknown ? [`whether a .swap unit or swap service starts at boot is unknown: ${o.graphUnknown}`] : []),
  diff: (spec, observed, ctx) => diffSwap(spec, observed, ctx),
  apply: (host, _spec, changes, ctx) => applySwap(host, changes, ctx.door),
  // Before.json's swap_total_kb and facts.json's memory, as the running host showed them.
  facts: (_spec, o) => ({ ...(o.swapTotalKb !== null ? { swapTotalKb: o.swapTotalKb } : {}), ...(o.live ? { memTotalKb: o.memTotalKb } : {}) }),
};

/** With the boot-script scan (issue 17): script lines that would undo this resource at boot. */
export const swapOffProvider = withBootScripts(swapOffOwn, swapConcern);
