// SysctlFile on fixture roots: observe -> diff -> apply -> observe must give
// an empty diff, and everything the provider did not mean to change stays
// byte-identical. "Live" cases use Host({ live: true }) on a temp root whose
// /proc/sys is plain files, so this machine's kernel is never touched.
import { afterAll, describe, expect, it } from 'vitest';
import { applyContext } from '../../helpers/door.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../../src/host.js';
import type { SysctlFileSpec } from '../../../src/resources/sysctl-file/spec.js';
import type { Change } from '../../../src/resources/types.js';
import { sysctlFileProvider as provider } from '../../../src/resources/sysctl-file/provider.js';
import type { SysctlOp } from '../../../src/resources/sysctl-file/observed.js';
import { actionable } from '../../../src/reconcile/plan.js';
import { PROVIDERS } from '../../../src/resources/index.js';
import { ReconcileError } from '../../../src/errors.js';
import { verdict } from '../../../src/sysctl/order.js';
import { buildTree } from '../../helpers/tree.js';

type Tree = Record<string, string | { link: string }>;

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots) await fs.rm(r, { recursive: true, force: true });
});

async function fixture(tree: Tree): Promise<string> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sysctl-file-'));
  roots.push(root);
  buildTree(root, tree);
  return root;
}

const read = (root: string, p: string) => fs.readFile(path.join(root, p), 'utf8');

const spec = (over: Partial<SysctlFileSpec> = {}): SysctlFileSpec => ({
  type: 'SysctlFile',
  file: '/etc/sysctl.d/k8s.conf',
  settings: { 'net.ipv4.ip_forward': 1, 'net.bridge.bridge-nf-call-iptables': 1, 'net.bridge.bridge-nf-call-ip6tables': 1 },
  conflict_policy: 'resolve',
  ...over,
});

/** The lab VM's leftovers: a security baseline that sorts after k8s.conf, Debian's sysctl.conf link. */
const SECURITY_BASELINE =
  [
    '# Security baseline (audit 2023-11)',
    'kernel.kptr_restrict = 2',
    'net.ipv4.ip_forward = 0',
    'net.ipv4.conf.all.accept_redirects=0',
    '',
    '; keep: martians',
    'net.ipv4.conf.all.log_martians = 1',
  ].join('\n') + '\n';

const labTree = (): Tree => ({
  '/etc/sysctl.d/security-baseline.conf': SECURITY_BASELINE,
  '/etc/sysctl.conf': '#\n# /etc/sysctl.conf - Configuration file for setting system variables\n#net.ipv4.ip_forward=1\n',
  '/etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' },
  '/usr/lib/sysctl.d/50-pid-max.conf': 'kernel.pid_max = 4194304\n',
});

const liveProc = (values: Record<string, string>): Tree =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [`/proc/sys/${k.replace(/\./g, '/')}`, v + '\n']));

async function plan(host: Host, s: SysctlFileSpec): Promise<Change<SysctlOp>[]> {
  return provider.diff(s, await provider.observe(host, s), { live: host.live });
}

async function converge(host: Host, s: SysctlFileSpec): Promise<Change<SysctlOp>[]> {
  const changes = await plan(host, s);
  await provider.apply(host, s, actionable(changes) as Change<SysctlOp>[], await applyContext(host, '/bk'));
  return changes;
}

describe('SysctlFile provider', () => {
  it('is registered and runs after ModulesLoad', () => {
    expect(PROVIDERS.SysctlFile).toBe(provider);
    expect(provider.after).toContain('ModulesLoad');
  });

  it('lab case, live: explains the conflict, converges files and kernel, and a second plan is empty', async () => {
    const root = await fixture({
      ...labTree(),
      ...liveProc({ 'net.ipv4.ip_forward': '0', 'net.bridge.bridge-nf-call-iptables': '0', 'net.bridge.bridge-nf-call-ip6tables': '1' }),
    });
    const host = new Host({ root, live: true });
    const changes = await plan(host, spec());

    expect(changes.map((c) => c.id)).toEqual([
      'file:/etc/sysctl.d/k8s.conf',
      'conflict:/etc/sysctl.d/security-baseline.conf',
      'runtime:net.ipv4.ip_forward',
      'runtime:net.bridge.bridge-nf-call-iptables',
    ]);
    const conflict = changes[1]!;
    expect(conflict.summary).toContain(
      'at next boot and after sysctl --system net.ipv4.ip_forward would be 0: /etc/sysctl.d/security-baseline.conf:3 sorts after /etc/sysctl.d/k8s.conf',
    );
    expect(conflict.file).toMatchObject({ path: '/etc/sysctl.d/security-baseline.conf', before: SECURITY_BASELINE });
    expect(changes.filter((c) => c.runtime).map((c) => c.summary)).toEqual([
      'set net.ipv4.ip_forward = 1 in the running kernel (now 0)',
      'set net.bridge.bridge-nf-call-iptables = 1 in the running kernel (now 0)',
    ]);

    await provider.apply(host, spec(), changes, await applyContext(host, '/bk'));

    expect(await plan(host, spec())).toEqual([]);
    expect(await read(root, '/etc/sysctl.d/k8s.conf')).toContain(
      'net.ipv4.ip_forward = 1\nnet.bridge.bridge-nf-call-iptables = 1\nnet.bridge.bridge-nf-call-ip6tables = 1\n',
    );
    // Only line 3 changed; every other line is byte-identical and the original is backed up.
    const after = await read(root, '/etc/sysctl.d/security-baseline.conf');
    const lines = SECURITY_BASELINE.split('\n');
    expect(after).toBe(
      [...lines.slice(0, 2), '# disabled by k8s-host-reconcile: conflicts with /etc/sysctl.d/k8s.conf', '# net.ipv4.ip_forward = 0', ...lines.slice(3)].join(
        '\n',
      ),
    );
    expect(await read(root, '/bk/backup/etc/sysctl.d/security-baseline.conf')).toBe(SECURITY_BASELINE);
    expect(await read(root, '/proc/sys/net/ipv4/ip_forward')).toBe('1\n');
    expect(await read(root, '/proc/sys/net/bridge/bridge-nf-call-iptables')).toBe('1\n');
    // The baseline's other settings still apply at boot.
    const { tree } = (await provider.observe(host, spec())) as { tree: Parameters<typeof verdict>[0] };
    expect(verdict(tree, 'kernel.kptr_restrict', 'boot').value).toBe('2');
    expect(verdict(tree, 'net.ipv4.conf.all.log_martians', 'boot').value).toBe('1');
    expect(verdict(tree, 'net.ipv4.ip_forward', 'boot').value).toBe('1');
    expect(verdict(tree, 'net.ipv4.ip_forward', 'system').value).toBe('1');
  });

  it('offline: converges files, writes no kernel value, and lists the boot-time values as deferred', async () => {
    const root = await fixture({ ...labTree(), ...liveProc({ 'net.ipv4.ip_forward': '0' }) });
    const host = new Host({ root });
    const changes = await plan(host, spec());
    expect(changes.some((c) => c.runtime)).toBe(false);
    const deferred = changes.filter((c) => c.action === 'deferred');
    expect(deferred).toHaveLength(1);
    expect(deferred[0]!.summary).toContain('net.ipv4.ip_forward = 1');
    await provider.apply(host, spec(), actionable(changes) as Change<SysctlOp>[], await applyContext(host, '/bk'));
    expect(await plan(host, spec())).toEqual([]);
    expect(await read(root, '/proc/sys/net/ipv4/ip_forward')).toBe('0\n');
  });

  it('fail policy: conflicts become operator changes and the conflicting file is left alone', async () => {
    const root = await fixture(labTree());
    const host = new Host({ root });
    const s = spec({ conflict_policy: 'fail' });
    const changes = await plan(host, s);
    const ops = changes.filter((c) => c.operator);
    expect(ops).toHaveLength(1);
    expect(ops[0]!.summary).toBe(
      'at next boot and after sysctl --system net.ipv4.ip_forward would be 0: /etc/sysctl.d/security-baseline.conf:3 sorts after /etc/sysctl.d/k8s.conf',
    );
    expect(ops[0]!.file).toBeUndefined();
    expect(changes.filter((c) => c.file && c.file.path !== s.file)).toEqual([]);
    await converge(host, s);
    expect(await read(root, '/etc/sysctl.d/security-baseline.conf')).toBe(SECURITY_BASELINE);
    await expect(fs.access(path.join(root, '/bk/backup/etc/sysctl.d/security-baseline.conf'))).rejects.toThrow();
    // Still reported on the next plan: nothing was silently fixed.
    expect((await plan(host, s)).map((c) => c.action)).toEqual(['operator']);
  });

  it('vendor files are overridden by a same-named /etc copy that keeps their other settings', async () => {
    const vendor = 'kernel.a = 1\nnet.ipv4.ip_forward = 0\nvm.b = 2\n';
    const runVendor = '# runtime\nnet.bridge.bridge-nf-call-iptables=0\n';
    const root = await fixture({
      '/usr/lib/sysctl.d/zz-vendor.conf': vendor,
      '/run/sysctl.d/zz-run.conf': runVendor,
    });
    const host = new Host({ root });
    const changes = await plan(host, spec());
    const over = changes.filter((c) => c.id.startsWith('conflict:'));
    expect(over.map((c) => [c.id, c.action, c.file?.before])).toEqual([
      ['conflict:/etc/sysctl.d/zz-run.conf', 'create', null],
      ['conflict:/etc/sysctl.d/zz-vendor.conf', 'create', null],
    ]);
    expect(over[1]!.summary).toBe(
      'at next boot and after sysctl --system net.ipv4.ip_forward would be 0: /usr/lib/sysctl.d/zz-vendor.conf:2 sorts after /etc/sysctl.d/k8s.conf; overriding it with /etc/sysctl.d/zz-vendor.conf, a copy with line 2 commented out',
    );
    await converge(host, spec());
    expect(await plan(host, spec())).toEqual([]);
    // Package-owned files are never edited.
    expect(await read(root, '/usr/lib/sysctl.d/zz-vendor.conf')).toBe(vendor);
    expect(await read(root, '/run/sysctl.d/zz-run.conf')).toBe(runVendor);
    const copy = await read(root, '/etc/sysctl.d/zz-vendor.conf');
    expect(copy).toMatch(/^# Copy of \/usr\/lib\/sysctl.d\/zz-vendor.conf/);
    expect(copy.endsWith('kernel.a = 1\n# disabled by k8s-host-reconcile: conflicts with /etc/sysctl.d/k8s.conf\n# net.ipv4.ip_forward = 0\nvm.b = 2\n')).toBe(
      true,
    );
    const { tree } = await provider.observe(host, spec());
    for (const model of ['boot', 'system'] as const) {
      expect(verdict(tree, 'kernel.a', model)).toMatchObject({ value: '1' });
      expect(verdict(tree, 'kernel.a', model).winner!.source.path).toBe('/etc/sysctl.d/zz-vendor.conf');
      expect(verdict(tree, 'vm.b', model).value).toBe('2');
      expect(verdict(tree, 'net.bridge.bridge-nf-call-iptables', model).value).toBe('1');
    }
  });

  it('an /etc/sysctl.d link to a vendor file is replaced by a regular copy, not written through', async () => {
    const shared = 'net.ipv4.ip_forward = 0\nkernel.c = 3\n';
    const root = await fixture({
      '/usr/share/vendor/tuning.conf': shared,
      '/etc/sysctl.d/zz-tuning.conf': { link: '/usr/share/vendor/tuning.conf' },
    });
    const host = new Host({ root });
    const changes = await plan(host, spec());
    const c = changes.find((x) => x.id === 'conflict:/etc/sysctl.d/zz-tuning.conf')!;
    expect(c.action).toBe('update');
    expect(c.summary).toContain('/usr/share/vendor/tuning.conf:1 (read as /etc/sysctl.d/zz-tuning.conf) sorts after');
    await converge(host, spec());
    expect(await read(root, '/usr/share/vendor/tuning.conf')).toBe(shared);
    expect((await fs.lstat(path.join(root, '/etc/sysctl.d/zz-tuning.conf'))).isSymbolicLink()).toBe(false);
    expect(await plan(host, spec())).toEqual([]);
  });

  it('/etc/sysctl.conf beats ours only under sysctl --system; it is commented out through its 99-sysctl.conf link', async () => {
    const conf = '# legacy\r\nvm.swappiness = 10\r\nnet.ipv4.ip_forward = 0\r\nkernel.x = 1'; // CRLF, no final newline
    const root = await fixture({ '/etc/sysctl.conf': conf, '/etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' } });
    const host = new Host({ root });
    const changes = await plan(host, spec());
    const c = changes.find((x) => x.id === 'conflict:/etc/sysctl.conf')!;
    expect(c.summary).toBe(
      'after sysctl --system net.ipv4.ip_forward would be 0: /etc/sysctl.conf:3 is applied last by sysctl --system; commenting out line 3 of /etc/sysctl.conf',
    );
    await converge(host, spec());
    expect(await read(root, '/etc/sysctl.conf')).toBe(
      '# legacy\r\nvm.swappiness = 10\r\n# disabled by k8s-host-reconcile: conflicts with /etc/sysctl.d/k8s.conf\r\n# net.ipv4.ip_forward = 0\r\nkernel.x = 1',
    );
    expect(await fs.readlink(path.join(root, '/etc/sysctl.d/99-sysctl.conf'))).toBe('../sysctl.conf');
    expect(await plan(host, spec())).toEqual([]);
  });

  it('with our file sorting before 99-sysctl.conf, the same sysctl.conf line is a conflict under both programs', async () => {
    const root = await fixture({ '/etc/sysctl.conf': 'net.ipv4.ip_forward=0\n', '/etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' } });
    const s = spec({ file: '/etc/sysctl.d/50-k8s.conf' });
    const changes = await plan(new Host({ root }), s);
    expect(changes.find((x) => x.id === 'conflict:/etc/sysctl.conf')!.summary).toBe(
      'at next boot and after sysctl --system net.ipv4.ip_forward would be 0: /etc/sysctl.conf:1 (read as /etc/sysctl.d/99-sysctl.conf) sorts after /etc/sysctl.d/50-k8s.conf and is applied last by sysctl --system; commenting out line 1 of /etc/sysctl.conf',
    );
  });

  it('a later bare "-key" that cancels ours at boot is a conflict too', async () => {
    const root = await fixture({ '/etc/sysctl.d/zz.conf': '-net.ipv4.ip_forward\n' });
    const changes = await plan(new Host({ root }), spec());
    expect(changes.find((x) => x.id === 'conflict:/etc/sysctl.d/zz.conf')!.summary).toContain(
      "at next boot net.ipv4.ip_forward would keep the kernel's value: /etc/sysctl.d/zz.conf:1 (-net.ipv4.ip_forward) sorts after /etc/sysctl.d/k8s.conf and cancels it",
    );
  });

  it('replaces a /dev/null mask at our own path instead of writing through it', async () => {
    const root = await fixture({ '/etc/sysctl.d/k8s.conf': { link: '/dev/null' } });
    const host = new Host({ root });
    const changes = await plan(host, spec());
    expect(changes[0]!.summary).toContain('replace the symlink /etc/sysctl.d/k8s.conf -> /dev/null');
    await converge(host, spec());
    expect((await fs.lstat(path.join(root, '/etc/sysctl.d/k8s.conf'))).isFile()).toBe(true);
    expect(await fs.readlink(path.join(root, '/bk/backup/etc/sysctl.d/k8s.conf'))).toBe('/dev/null');
    expect(await plan(host, spec())).toEqual([]);
  });

  it('our file shadowed by a same-named file in a higher-precedence directory needs an operator', async () => {
    const root = await fixture({ '/etc/sysctl.d/k8s.conf': 'net.ipv4.ip_forward = 0\n' });
    const changes = await plan(new Host({ root }), spec({ file: '/run/sysctl.d/k8s.conf' }));
    const ops = changes.filter((c) => c.operator);
    expect(ops.map((c) => c.id)).toEqual(['owned-not-read:boot', 'owned-not-read:system']);
    expect(ops[0]!.operator).toContain('/run/sysctl.d/k8s.conf is shadowed by /etc/sysctl.d/k8s.conf');
  });

  it('a key missing from the running kernel is a clear error naming the module, after the files are written', async () => {
    const root = await fixture(liveProc({ 'net.ipv4.ip_forward': '1' }));
    const host = new Host({ root, live: true });
    const changes = await plan(host, spec());
    expect(changes.find((c) => c.id === 'runtime:net.bridge.bridge-nf-call-iptables')!.summary).toContain('br_netfilter');
    const err = await provider.apply(host, spec(), changes, await applyContext(host, '/bk')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ReconcileError);
    expect((err as Error).message).toBe(
      'net.bridge.bridge-nf-call-iptables does not exist in the running kernel (/proc/sys/net/bridge/bridge-nf-call-iptables is missing): the br_netfilter module must be loaded first (ModulesLoad, modprobe br_netfilter)',
    );
    expect(await read(root, '/etc/sysctl.d/k8s.conf')).toContain('net.bridge.bridge-nf-call-iptables = 1');
  });

  it('refuses to edit a conflicting file that changed after the plan', async () => {
    const root = await fixture(labTree());
    const host = new Host({ root });
    const changes = await plan(host, spec());
    await fs.appendFile(path.join(root, '/etc/sysctl.d/security-baseline.conf'), 'vm.new = 1\n');
    await expect(provider.apply(host, spec(), actionable(changes) as Change<SysctlOp>[], await applyContext(host, '/bk'))).rejects.toThrow(
      '/etc/sysctl.d/security-baseline.conf changed since the plan was made',
    );
    expect(await read(root, '/etc/sysctl.d/security-baseline.conf')).toBe(SECURITY_BASELINE + 'vm.new = 1\n');
  });

  it('keys written with slashes in the spec are the same keys', async () => {
    const root = await fixture({ ...liveProc({ 'net.ipv4.ip_forward': '1' }) });
    const host = new Host({ root, live: true });
    const s = spec({ settings: { 'net/ipv4/ip_forward': 1 } });
    const changes = await plan(host, s);
    expect(changes.map((c) => c.id)).toEqual(['file:/etc/sysctl.d/k8s.conf']);
    expect(changes[0]!.file!.after).toContain('net.ipv4.ip_forward = 1\n');
  });
});
