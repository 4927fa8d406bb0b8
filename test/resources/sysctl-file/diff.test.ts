// SysctlFile's diff on its own: the host is a fixture root read by the real sysctl tree observation
// (src/sysctl/observe.ts), and the diff is asked directly, without a rehearsal unless a test gives one.
// The expectations are worked by hand from the two programs' rules (systemd-sysctl and sysctl --system
// read sysctl.d files in lexical order of their names, later assignments win; an /etc entry overrides a
// vendor one of the same name): a file sorting after ours that sets a wanted key to another value beats
// it, and is resolved in place (under /etc) or by a same-named /etc copy (a vendor file), or left to the
// operator (conflict_policy: fail).
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../../src/host.js';
import { observeSysctlTree } from '../../../src/sysctl/observe.js';
import { verdicts } from '../../../src/sysctl/order.js';
import { diff } from '../../../src/resources/sysctl-file/diff.js';
import type { SysctlFileSpec } from '../../../src/resources/sysctl-file/spec.js';
import type { SysctlFileObserved, SysctlRehearsal } from '../../../src/resources/sysctl-file/observed.js';
import { buildTree } from '../../helpers/tree.js';

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const OWNED = '/etc/sysctl.d/k8s.conf';
const spec = (over: Partial<SysctlFileSpec> = {}): SysctlFileSpec => ({
  type: 'SysctlFile',
  file: OWNED,
  settings: { 'net.ipv4.ip_forward': 1, 'net.bridge.bridge-nf-call-iptables': 1 },
  conflict_policy: 'resolve',
  ...over,
});
const KEYS = ['net.ipv4.ip_forward', 'net.bridge.bridge-nf-call-iptables'];

async function observed(
  tree: Record<string, string | { link: string }>,
  over: { runtime?: Record<string, string | null>; rehearsal?: SysctlRehearsal } = {},
): Promise<SysctlFileObserved> {
  const root = mkdtempSync(path.join(tmpdir(), 'sysctl-diff-'));
  roots.push(root);
  buildTree(root, { '/etc/hostname': 'node\n', ...tree });
  const host = new Host({ root });
  const t = await observeSysctlTree(host);
  const link = await host.readLink(OWNED);
  return {
    live: over.runtime !== undefined,
    etcReal: '/etc',
    owned: { path: OWNED, content: link === '/dev/null' ? null : await host.readBytes(OWNED), link },
    tree: t.tree,
    dirs: t.dirs,
    issues: t.issues,
    skipped: t.skipped,
    verdicts: verdicts(t.tree, KEYS),
    runtime: over.runtime ?? null,
    rehearsal: over.rehearsal ?? null,
  };
}

/** The assignments of a sysctl.d text, read as the format says: `key = value`, '#' and ';' comments. */
const assignments = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^\s*[#;]/.test(l))
    .map((l) => l.split('=').map((s) => s.trim()));

describe('diff: the owned file', () => {
  it('absent: created with exactly the wanted settings; offline the kernel values are deferred to first boot', async () => {
    const changes = diff(spec(), await observed({}), { live: false });
    expect(changes.map((c) => [c.id, c.action])).toEqual([
      [`file:${OWNED}`, 'create'],
      ['deferred:runtime', 'deferred'],
    ]);
    const file = changes[0]!.file!;
    expect(file.before).toBeNull();
    expect(assignments(file.after!)).toEqual([
      ['net.ipv4.ip_forward', '1'],
      ['net.bridge.bridge-nf-call-iptables', '1'],
    ]);
    expect(changes[0]!.summary).toBe(`create ${OWNED} with net.ipv4.ip_forward = 1, net.bridge.bridge-nf-call-iptables = 1`);
    expect(changes[1]!.summary).toBe(`at first boot systemd-sysctl applies net.ipv4.ip_forward = 1, net.bridge.bridge-nf-call-iptables = 1 from ${OWNED}`);
  });

  it('already as wanted: no change at all offline', async () => {
    const first = diff(spec(), await observed({}), { live: false })[0]!.file!.after!;
    expect(diff(spec(), await observed({ [OWNED]: first }), { live: false })).toEqual([]);
  });

  it('different: rewritten, the old bytes kept as before', async () => {
    const changes = diff(spec(), await observed({ [OWNED]: 'net.ipv4.ip_forward = 1\n' }), { live: false });
    expect(changes[0]).toMatchObject({ id: `file:${OWNED}`, action: 'update', file: { before: 'net.ipv4.ip_forward = 1\n' } });
    expect(changes[0]!.summary.startsWith(`rewrite ${OWNED} with `)).toBe(true);
  });

  it('a /dev/null mask at its path is replaced, never written through', async () => {
    const [c] = diff(spec(), await observed({ [OWNED]: { link: '/dev/null' } }), { live: false });
    expect(c).toMatchObject({ action: 'update', op: { kind: 'owned', replaceLink: true } });
    expect(c!.summary).toBe(`replace the symlink ${OWNED} -> /dev/null with a file setting net.ipv4.ip_forward, net.bridge.bridge-nf-call-iptables`);
  });
});

describe('diff: lines that beat the owned file', () => {
  const LATER = '/etc/sysctl.d/zz-hardening.conf';
  const HARDENING = 'kernel.kptr_restrict = 2\nnet.ipv4.ip_forward = 0\n';

  it('resolve: a later /etc file is commented out in place, its other lines byte for byte', async () => {
    const changes = diff(spec(), await observed({ [LATER]: HARDENING }), { live: false });
    const c = changes.find((x) => x.id === `conflict:${LATER}`)!;
    expect(c.action).toBe('update');
    expect(c.file!.before).toBe(HARDENING);
    expect(c.file!.after).toBe(`kernel.kptr_restrict = 2\n# disabled by k8s-host-reconcile: conflicts with ${OWNED}\n# net.ipv4.ip_forward = 0\n`);
    expect(c.summary.endsWith(`; commenting out line 2 of ${LATER}`)).toBe(true);
    expect(c.op).toMatchObject({ kind: 'resolve', target: LATER, source: LATER, replaceLink: false, lines: [2] });
  });

  it('a file sorting before ours, or setting the wanted value, is no conflict', async () => {
    const changes = diff(spec(), await observed({ '/etc/sysctl.d/10-early.conf': 'net.ipv4.ip_forward = 0\n', [LATER]: 'net.ipv4.ip_forward = 1\n' }), {
      live: false,
    });
    expect(changes.filter((c) => c.id.startsWith('conflict:'))).toEqual([]);
  });

  it('resolve: a vendor file is overridden by a same-named /etc/sysctl.d copy with the line commented out', async () => {
    const vendor = '/usr/lib/sysctl.d/zz-vendor.conf';
    const changes = diff(spec(), await observed({ [vendor]: HARDENING }), { live: false });
    const c = changes.find((x) => x.id === 'conflict:/etc/sysctl.d/zz-vendor.conf')!;
    expect(c.action).toBe('create');
    expect(c.file!.before).toBeNull();
    expect(c.file!.after!.endsWith(`kernel.kptr_restrict = 2\n# disabled by k8s-host-reconcile: conflicts with ${OWNED}\n# net.ipv4.ip_forward = 0\n`)).toBe(
      true,
    );
    expect(c.summary).toContain('overriding it with /etc/sysctl.d/zz-vendor.conf, a copy with line 2 commented out');
    expect(c.op).toMatchObject({ kind: 'resolve', target: '/etc/sysctl.d/zz-vendor.conf', source: vendor, replaceLink: false });
  });

  it('fail: each conflict is an operator line naming file and line, withdrawing the key at boot; the file is left', async () => {
    const changes = diff(spec({ conflict_policy: 'fail' }), await observed({ [LATER]: HARDENING }), { live: false });
    const c = changes.find((x) => x.action === 'operator')!;
    expect(c.id).toBe(`conflict:${LATER}:2:net.ipv4.ip_forward`);
    expect(c.operator).toBe(`conflict_policy is fail: remove or comment out ${LATER}:2, or set conflict_policy: resolve`);
    expect(c.withdraws).toEqual([{ promise: 'sysctl:net.ipv4.ip_forward', from: 'boot' }]);
    expect(changes.some((x) => x.file?.path === LATER)).toBe(false);
  });
});

describe('diff: the running kernel', () => {
  it('live: a key at another value or missing is set; a key at the wanted value is not', async () => {
    const o = await observed({}, { runtime: { 'net.ipv4.ip_forward': '0', 'net.bridge.bridge-nf-call-iptables': null } });
    const rt = diff(spec(), o, { live: true }).filter((c) => c.action === 'runtime');
    expect(rt.map((c) => c.summary)).toEqual([
      'set net.ipv4.ip_forward = 1 in the running kernel (now 0)',
      'set net.bridge.bridge-nf-call-iptables = 1 in the running kernel (the key does not exist yet; it appears once br_netfilter is loaded)',
    ]);
    expect(rt.every((c) => c.runtime === true)).toBe(true);
    const ok = await observed({}, { runtime: { 'net.ipv4.ip_forward': '1', 'net.bridge.bridge-nf-call-iptables': '1' } });
    expect(diff(spec(), ok, { live: true }).filter((c) => c.action === 'runtime')).toEqual([]);
    // Live, nothing is deferred.
    expect(diff(spec(), o, { live: true }).some((c) => c.action === 'deferred')).toBe(false);
  });
});

describe('diff: what the rehearsal found', () => {
  it('a value no line explains is an operator line withdrawing the key at boot', async () => {
    const rehearsal = {
      status: 'ran',
      ms: 1,
      runs: 1,
      programs: { boot: 'systemd-sysctl', system: 'sysctl' },
      notRehearsed: [],
      start: {},
      culprits: [],
      unexplained: [{ key: 'net.ipv4.ip_forward', model: 'boot', value: '0' }],
    } as unknown as SysctlRehearsal;
    const changes = diff(spec(), await observed({}, { rehearsal }), { live: false });
    const c = changes.find((x) => x.id === 'rehearsal:net.ipv4.ip_forward:boot')!;
    expect(c.action).toBe('operator');
    expect(c.summary).toContain('the rehearsal shows net.ipv4.ip_forward = 0');
    expect(c.summary).toContain('(wanted 1)');
    expect(c.operator).toBe('no configuration line explains it (bisection in the namespace found none); check net.ipv4.ip_forward by hand with systemd-sysctl');
    expect(c.withdraws).toEqual([{ promise: 'sysctl:net.ipv4.ip_forward', from: 'boot' }]);
  });
});
