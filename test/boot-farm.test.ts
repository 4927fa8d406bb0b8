// The boot farm's own parts that need no boot: the generator's coverage and
// composition, and the judge's rule (a broken promise is an observed
// state that differs from a promise no operator or unknown line took back),
// with `ss` itself as the oracle for the listener parse.
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
// @ts-expect-error plain ESM without types
import { NSPAWN, QEMU, CATALOGUE } from './boot/catalogue/index.mjs';
// @ts-expect-error plain ESM without types
import { compose, hosts, seedsFor, CONTROL_PLANE_PORTS } from './boot/lib/generate.mjs';
// @ts-expect-error plain ESM without types
import { findingProblems, judge, judgePromises, listeningPorts, probeProblems, rollbackProblems, runsProblems, saysProblems } from './boot/lib/judge.mjs';
// @ts-expect-error plain ESM without types
import { containerDesired } from './boot/lib/desired.mjs';
import { parseDesiredState } from '../src/reconcile/load.js';

type Entry = { id: string; port?: boolean; wild: string; tier: string; conflicts?: string[] };
const dirs: string[] = [];
const servers: Server[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  for (const s of servers.splice(0)) s.close();
});

describe('the catalogue and the generator', () => {
  it('has at least 40 entries, each with where it is seen in the wild, and the three defects booted hosts showed', () => {
    expect(CATALOGUE.length).toBeGreaterThanOrEqual(40);
    expect(new Set(CATALOGUE.map((e: Entry) => e.id)).size).toBe(CATALOGUE.length);
    for (const e of CATALOGUE as Entry[]) expect(e.wild.length, e.id).toBeGreaterThan(20);
    const ids = CATALOGUE.map((e: Entry) => e.id);
    expect(ids).toEqual(expect.arrayContaining(['etc-unit-wanted-by-enabled-target', 'linger-user-without-bus', 'swap-unit-wanted-by-local-fs']));
    expect(QEMU.every((e: Entry) => e.tier === 'qemu')).toBe(true);
  });

  it('every qemu entry names the VM scenario that boots it (no stub), and says whether the plan must keep it', () => {
    for (const e of QEMU as Array<Entry & { scenario: string | null; kept?: boolean }>) {
      const dir = path.resolve('test/vm/scenarios', String(e.scenario));
      expect(
        ['plant.sh', 'expect.mjs'].every((f) => existsSync(path.join(dir, f))),
        `${e.id}: scenario ${e.scenario}`,
      ).toBe(true);
      expect(typeof e.kept, e.id).toBe('boolean');
    }
  });

  it('the default seed count uses every nspawn entry at least 3 times, 3 to 6 per host, ports never over the six', () => {
    const n = seedsFor(NSPAWN, 3);
    const used = new Map<string, number>();
    for (const h of hosts(NSPAWN, n) as Array<{ seed: number; entries: Entry[] }>) {
      expect(h.entries.length).toBeGreaterThanOrEqual(3);
      expect(h.entries.length).toBeLessThanOrEqual(6);
      expect(new Set(h.entries).size).toBe(h.entries.length);
      expect(h.entries.filter((e) => e.port).length).toBeLessThanOrEqual(6);
      for (const e of h.entries) for (const c of e.conflicts ?? []) expect(h.entries.map((x) => x.id)).not.toContain(c);
      for (const e of h.entries) used.set(e.id, (used.get(e.id) ?? 0) + 1);
      const r = compose(h.entries);
      const ports = r.parts.filter((p: { port?: number }) => p.port !== undefined).map((p: { port: number }) => p.port);
      expect(new Set(ports).size).toBe(ports.length);
      for (const p of ports) expect(CONTROL_PLANE_PORTS).toContain(p);
    }
    for (const e of NSPAWN as Entry[]) expect(used.get(e.id) ?? 0, e.id).toBeGreaterThanOrEqual(3);
  });

  it("a seed's host depends on the seed alone (BOOT_SEED=S replays the same host)", () => {
    const short = hosts(NSPAWN, 12).map((h: { entries: Entry[] }) => h.entries.map((e) => e.id));
    const long = hosts(NSPAWN, 40)
      .slice(0, 12)
      .map((h: { entries: Entry[] }) => h.entries.map((e) => e.id));
    expect(long).toEqual(short);
  });
});

function outDir(
  plan: unknown,
  states: { before: string; after: string; boot: string; ipf: [string, string, string] },
  rc = { plan: 2, apply: 0 },
  promisesAfter?: unknown[],
  failures: Array<{ resource: string; message: string }> = [],
): string {
  const d = mkdtempSync(path.join(tmpdir(), 'farm-judge-'));
  dirs.push(d);
  const put = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(d, rel)), { recursive: true });
    writeFileSync(path.join(d, rel), text);
  };
  put('boot1/plan.json', JSON.stringify(plan));
  put('boot1/plan.rc', `${rc.plan}\n`);
  put('boot1/apply.json', JSON.stringify({ failures, ...(promisesAfter ? { promises_after: promisesAfter } : {}) }));
  put('boot1/apply.rc', `${rc.apply}\n`);
  put('boot1/before/ss.txt', states.before);
  put('boot1/before/sysctl.txt', `net.ipv4.ip_forward=${states.ipf[0]}\n`);
  put('boot1/after-apply/ss.txt', states.after);
  put('boot1/after-apply/sysctl.txt', `net.ipv4.ip_forward=${states.ipf[1]}\n`);
  put('boot2/at-boot/ss.txt', states.boot);
  put('boot2/at-boot/sysctl.txt', `net.ipv4.ip_forward=${states.ipf[2]}\n`);
  return d;
}

const L6443 = 'LISTEN 0      5      0.0.0.0:6443 0.0.0.0:* users:(("tinyd",pid=51,fd=3))\n';
const promise = (id: string, kind: string, subject: string, expect_: string, withdrawn: Array<{ by: string; line: string; from: string }> = []) => ({
  id,
  kind,
  subject,
  expect: expect_,
  resource: 'R',
  held_by: null,
  withdrawn_by: withdrawn,
  after_apply: !withdrawn.some((w) => w.from === 'apply'),
  at_boot: withdrawn.length === 0,
});

describe("the judge of an entry's finding (catalogue/acceptance.mjs)", () => {
  // The "not judged" line as src/acceptance/run.ts notJudgedLine writes it: a failing check is NAME (what fails), a skipped one NAME alone.
  const notJudged = (m: string) => ({ plan: { findings: [{ level: 'info', message: `kubeadm preflight checks not judged here: ${m}` }] } });
  const named = { id: 'e1', finding: { check: 'ResolvConfLoop', named: true } };
  const absent = { id: 'e2', finding: { check: 'ResolvConfLoop', named: false } };
  it('named: a failing check in the not-judged line, or a finding by that check; skipped alone is not failing', () => {
    expect(findingProblems([named], notJudged('ResolvConfLoop (/etc/resolv.conf has only loopback nameservers): who fixes it is not evaluated').plan)).toEqual(
      [],
    );
    expect(findingProblems([named], { findings: [{ check: 'ResolvConfLoop', level: 'warning', message: 'x' }] })).toEqual([]);
    expect(findingProblems([named], notJudged('ResolvConfLoop: /etc/resolv.conf cannot be read').plan)).toEqual([
      'e1: the plan does not name ResolvConfLoop as failing',
    ]);
    expect(findingProblems([named], { findings: [] })).toEqual(['e1: the plan does not name ResolvConfLoop as failing']);
  });
  it('absent: not mentioned at all (neither failing nor skipped); entries without a finding are not judged here', () => {
    expect(findingProblems([absent, { id: 'e3' }], { findings: [] })).toEqual([]);
    expect(findingProblems([absent], notJudged('ResolvConfLoop: /etc/resolv.conf cannot be read').plan)).toEqual([
      'e2: the plan mentions ResolvConfLoop: kubeadm preflight checks not judged here: ResolvConfLoop: /etc/resolv.conf cannot be read',
    ]);
  });
});

describe('the judge', () => {
  it('reads listening ports as ss prints them (a listener this test opens)', async () => {
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const ss = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' });
    expect(listeningPorts(ss).has(port)).toBe(true);
    expect(listeningPorts(ss).has(1)).toBe(false);
  });

  it('a port back after the reboot breaks the promise; the same port under an operator line does not', () => {
    const kept = outDir(
      { promises: [promise('port:6443', 'port', '6443', 'free')] },
      { before: L6443, after: '', boot: L6443, ipf: ['0', '1', '1'] },
      { plan: 2, apply: 0 },
    );
    const r = judge(kept, [6443]);
    expect(r.broken).toEqual([{ promise: 'port:6443', phase: 'at boot', observed: expect.stringContaining('port 6443 is listening') }]);
    expect(r.problems).toEqual([]);
    const withdrawn = outDir(
      { promises: [promise('port:6443', 'port', '6443', 'free', [{ by: 'operator', line: 'port-6443', from: 'apply' }])] },
      { before: L6443, after: L6443, boot: L6443, ipf: ['0', '1', '1'] },
      { plan: 2, apply: 1 },
    );
    expect(judge(withdrawn, [6443])).toMatchObject({ broken: [], problems: [] });
  });

  it('a sysctl promise withdrawn at boot only is still checked after apply', () => {
    const d = outDir(
      {
        promises: [
          promise('sysctl:net.ipv4.ip_forward', 'sysctl', 'net.ipv4.ip_forward', '1', [{ by: 'unknown', line: 'unknown: /etc/rc.local:3', from: 'boot' }]),
        ],
      },
      { before: '', after: '', boot: '', ipf: ['0', '0', '0'] },
      { plan: 2, apply: 1 },
    );
    expect(judge(d, []).broken).toEqual([{ promise: 'sysctl:net.ipv4.ip_forward', phase: 'after apply', observed: 'net.ipv4.ip_forward = 0' }]);
  });

  it("a withdrawal the apply removed: apply may exit 0, and the promise is checked at boot as apply's own list makes it", () => {
    const unknownAtBoot = [{ by: 'unknown', line: 'unknown: /etc/systemd/system/d.service:5', from: 'boot' }];
    const plan = { promises: [promise('sysctl:net.ipv4.ip_forward', 'sysctl', 'net.ipv4.ip_forward', '1', unknownAtBoot)] };
    const after = [promise('sysctl:net.ipv4.ip_forward', 'sysctl', 'net.ipv4.ip_forward', '1')];
    const held = outDir(plan, { before: '', after: '', boot: '', ipf: ['0', '1', '1'] }, { plan: 2, apply: 0 }, after);
    expect(judge(held, [])).toMatchObject({ broken: [], problems: [] });
    const reverted = outDir(plan, { before: '', after: '', boot: '', ipf: ['0', '1', '0'] }, { plan: 2, apply: 0 }, after);
    expect(judge(reverted, []).broken).toEqual([{ promise: 'sysctl:net.ipv4.ip_forward', phase: 'at boot', observed: 'net.ipv4.ip_forward = 0' }]);
    const still = outDir(plan, { before: '', after: '', boot: '', ipf: ['0', '1', '1'] }, { plan: 2, apply: 0 }, plan.promises);
    expect(judge(still, []).problems).toEqual(['promises are withdrawn but --apply exited 0']);
  });

  // Seed 478: `systemctl kill` failed, apply exited 1, and the port was free when apply looked again. Apply's own list
  // now takes the port back (by: failure); the host still fails, since apply did not do what its plan said.
  it('a failure of apply is a problem even when a withdrawal keeps every promise honest', () => {
    const failure = { resource: 'PortFree', message: 'PortFree: port 6443 (wrapper.service): systemctl kill exited 1' };
    const after = [promise('port:6443', 'port', '6443', 'free', [{ by: 'failure', line: failure.message, from: 'apply' }])];
    const d = outDir(
      { promises: [promise('port:6443', 'port', '6443', 'free')] },
      { before: L6443, after: '', boot: L6443, ipf: ['0', '1', '1'] },
      { plan: 2, apply: 1 },
      after,
      [failure],
    );
    expect(judge(d, [6443])).toMatchObject({ broken: [], problems: [`apply failed: PortFree: ${failure.message}`] });
  });

  it('with a kernel of its own (the qemu suite): swap:off is /proc/swaps empty and SwapTotal 0, module:NAME a /sys/module entry', () => {
    const promises = [promise('swap:off', 'swap', 'swap', 'off'), promise('module:br_netfilter', 'module', 'br_netfilter', 'loaded')];
    const seen = (areas: string[], totalKb: number, loaded: boolean) => ({
      ports: new Map(),
      sysctl: {},
      swap: { areas, totalKb },
      modules: { br_netfilter: loaded },
    });
    const run = (afterApply: unknown, atBoot: unknown) =>
      judgePromises({ plan: { promises }, planRc: 0, apply: { failures: [] }, applyRc: 0, afterApply, atBoot });
    expect(run(seen([], 0, true), seen([], 0, true))).toMatchObject({ broken: [], problems: [] });
    expect(run(seen([], 0, true), seen(['/dev/zram0 partition 1048572 0 100'], 1048572, false)).broken).toEqual([
      { promise: 'swap:off', phase: 'at boot', observed: 'swap on: /dev/zram0 (SwapTotal 1048572 kB)' },
      { promise: 'module:br_netfilter', phase: 'at boot', observed: 'br_netfilter not loaded (no /sys/module entry)' },
    ]);
    // SwapTotal alone counts too: an area /proc/swaps no longer lists is still swap the kernel has.
    expect(run(seen([], 4, true), seen([], 0, true)).broken).toEqual([
      { promise: 'swap:off', phase: 'after apply', observed: 'swap on: no area listed (SwapTotal 4 kB)' },
    ]);
    // The farm's containers record neither: nothing to judge there.
    const farm = { ports: new Map(), sysctl: {} };
    expect(run(farm, farm)).toMatchObject({ broken: [], problems: [] });
  });

  it('withdrawn promises with --plan exit 0 or --apply exit 0 are problems; a recipe that did not take is one', () => {
    const d = outDir(
      { promises: [promise('port:6443', 'port', '6443', 'free', [{ by: 'unknown', line: 'unknown: x', from: 'boot' }])] },
      { before: '', after: '', boot: '', ipf: ['0', '1', '1'] },
      { plan: 0, apply: 0 },
    );
    const r = judge(d, [6443]);
    expect(r.problems).toEqual([
      'the recipe did not take: nothing listens on 6443 before the tool runs',
      'promises are withdrawn but --plan exited 0',
      'promises are withdrawn but --apply exited 0',
    ]);
  });
});

describe("the judge of an entry's says (catalogue/holders.mjs)", () => {
  const entry = { id: 'e1', says: ({ port }: { port: number }) => [`to free ${port} also ends`] };
  const plan = (summary: string, operator: string | null) => ({ resources: [{ changes: [{ summary, operator }] }] });
  it("needs the words in a line about the entry's own port, its summary or its operator text", () => {
    const parts = [{ id: 'e1', port: 10250 }];
    expect(saysProblems([entry], parts, plan('port 10250 (0.0.0.0:10250) held by pid 4', 'stopping inetd.service to free 10250 also ends x'))).toEqual([]);
    expect(saysProblems([entry], parts, plan('port 6443 (0.0.0.0:6443) held by pid 4', 'stopping inetd.service to free 10250 also ends x'))).toEqual([
      'e1: no plan line about port 10250 says "to free 10250 also ends"',
    ]);
    expect(saysProblems([entry, { id: 'e2' }], parts, { resources: [] })).toEqual(['e1: no plan line about port 10250 says "to free 10250 also ends"']);
  });
});

describe('entries that need more than the root (catalogue/docker.mjs): a package layer, nspawn options, a PortFree opt-in, a port', () => {
  const e = (id: string, extra: object) => ({ id, port: true, wild: 'x', recipe: ({ port }: { port: number }) => ({ files: {}, listens: [port] }), ...extra });
  it('compose takes each once, gives a preferred port when it is free and the next one when it is not', () => {
    const a = e('a', {
      preferPort: 6443,
      layers: ['docker'],
      nspawn: ['--system-call-filter=@keyring bpf'],
      portFree: { stop_containers: ['x'] },
      rollback: true,
    });
    const b = e('b', { preferPort: 6443, layers: ['docker'], nspawn: ['--system-call-filter=@keyring bpf'] });
    const r = compose([e('plain', {}), a, b]);
    expect(r.parts).toEqual([
      { id: 'plain', port: 2379 },
      { id: 'a', port: 6443 },
      { id: 'b', port: 2380 },
    ]);
    expect([r.layers, r.nspawn, r.portFree, r.rollback]).toEqual([['docker'], ['--system-call-filter=@keyring bpf'], { stop_containers: ['x'] }, true]);
    expect(compose([e('plain', {})])).toMatchObject({ layers: [], nspawn: [], portFree: {}, rollback: false });
  });

  // Seen in a full farm run: a docker and a podman entry on one host each wrote its own stop_containers line, and
  // the desired state had the key twice ("Map keys must be unique"), so apply and --rollback refused it.
  it("two entries' stop_containers are one key in the desired state, which the tool's own loader accepts", () => {
    const r = compose([e('a', { portFree: { stop_containers: ['web6443'] } }), e('b', { portFree: { stop_containers: ['always10250', 'web6443'] } })]);
    expect(r.portFree).toEqual({ stop_containers: ['web6443', 'always10250'] });
    const desired = parseDesiredState(containerDesired('/var/lib/farm-reports', r.desired, r.portFree), '/farm/desired.yaml');
    const portFree = desired.resources.find((x) => x.type === 'PortFree') as { stop_containers?: string[] } | undefined;
    expect(portFree?.stop_containers).toEqual(['web6443', 'always10250']);
  });
});

describe("the judge of an entry's runs, probes and rollback", () => {
  function phases(files: Record<string, string>): string {
    const d = mkdtempSync(path.join(tmpdir(), 'farm-judge-'));
    dirs.push(d);
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(d, rel)), { recursive: true });
      writeFileSync(path.join(d, rel), text);
    }
    return d;
  }
  // As `systemctl list-units --all --no-legend --plain` prints them.
  const units = (dockerActive: string) =>
    `containerd.service loaded active running containerd container runtime\ndocker.service loaded ${dockerActive} dead Docker Application Container Engine\n`;
  it('runs: each unit active after apply and at boot, else named with the phase', () => {
    const entry = { id: 'd', runs: ['docker.service', 'containerd.service'] };
    const ok = phases({ 'boot1/after-apply/units.txt': units('active'), 'boot2/at-boot/units.txt': units('active') });
    expect(runsProblems([entry, { id: 'other' }], ok)).toEqual([]);
    const stopped = phases({ 'boot1/after-apply/units.txt': units('active'), 'boot2/at-boot/units.txt': units('inactive') });
    expect(runsProblems([entry], stopped)).toEqual(['d: at-boot: docker.service is not active']);
    expect(runsProblems([entry], phases({}))).toEqual(['d: after-apply: no units recorded', 'd: at-boot: no units recorded']);
  });
  it("probes: the text each phase recorded, trimmed, must be the entry's", () => {
    const entry = { id: 'd', probes: { p: { 'after-apply': 'no false', 'after-rollback': 'always true' } } };
    const d = phases({ 'boot1/after-apply/probe-p.txt': 'no false\n', 'rollback/after-rollback/probe-p.txt': 'no false\n' });
    expect(probeProblems([entry], d)).toEqual(['d: after-rollback: probe p printed "no false", not "always true"']);
    expect(probeProblems([entry], phases({ 'boot1/after-apply/probe-p.txt': 'no false\n' }))).toEqual(['d: after-rollback: probe p recorded nothing']);
  });
  it("rollback: exit 0 and the recipe's ports listening again; not judged without an entry that asks", () => {
    const back = { 'rollback/after-rollback/ss.txt': L6443, 'rollback/after-rollback/sysctl.txt': 'net.ipv4.ip_forward=1\n' };
    const entry = { id: 'd', rollback: true };
    expect(rollbackProblems([entry], phases({ 'rollback/rollback.rc': '0\n', ...back }), [6443])).toEqual([]);
    expect(rollbackProblems([entry], phases({ 'rollback/rollback.rc': '1\n', 'rollback/rollback.err': 'journal gone', ...back }), [6443, 2379])).toEqual([
      '--rollback exited 1: journal gone',
      'after rollback: nothing listens on 2379 again',
    ]);
    expect(rollbackProblems([entry], phases({}), [6443])).toEqual(['rollback: nothing recorded']);
    expect(rollbackProblems([{ id: 'x' }], phases({}), [6443])).toEqual([]);
  });
});
