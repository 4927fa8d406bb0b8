// The plan's promises (docs/output.md, "Promises"): what it leaves true after apply and
// at the next boot, and which operator or unknown line takes each back. An
// unknown boot-time line decides whether a wanted value holds at boot, so it
// withdraws that promise and keeps --plan at 2 and apply at 1, as the
// kubespray audit's unknowns do. Expectations come from what runs at boot:
// systemd-rc-local-generator runs an executable /etc/rc.local, and `sysctl -p`
// of a file named by a variable can set any key, while `sysctl -w KEY=V` sets
// exactly KEY.
import { describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runBundle } from '../helpers/bundle-cli.js';
import { removedAfterEach } from '../helpers/temp-dirs.js';
import { buildTree } from '../helpers/tree.js';
import { planPromises, withdrawnByUnknown, type PlanUnknown } from '../../src/reconcile/promises.js';
import type { Plan } from '../../src/reconcile/plan.js';

const roots = removedAfterEach();

const reconcile = runBundle;

const DESIRED = [
  'reports_dir: /root/ks/preflight',
  'first_boot: off',
  'resources:',
  '  - type: SysctlFile',
  '    file: /etc/sysctl.d/k8s.conf',
  '    settings:',
  '      net.ipv4.ip_forward: 1',
  '      net.ipv4.tcp_syncookies: 1',
  '  - type: PortFree',
  '    ports: [6443]',
  '',
].join('\n');

/** An image with nothing to do; `rc` becomes an executable /etc/rc.local. */
function image(rc: string | null): { root: string; desired: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'promises-'));
  roots.push(root);
  buildTree(root, { 'etc/fstab': 'UUID=1 / ext4 defaults 0 1\n', 'etc/systemd/system/.keep': '' });
  const desired = path.join(root, 'desired.yaml');
  writeFileSync(desired, DESIRED);
  // Converge first, with no script: the owned file is written, nothing else is pending.
  const first = reconcile(['--apply', '-f', desired, '--root', root]);
  expect(first.code, first.stdout + first.stderr).toBe(0);
  if (rc !== null) {
    writeFileSync(path.join(root, 'etc/rc.local'), rc);
    chmodSync(path.join(root, 'etc/rc.local'), 0o755);
  }
  return { root, desired };
}

interface Promise_ {
  id: string;
  kind: string;
  subject: string;
  expect: string;
  after_apply: boolean;
  at_boot: boolean;
  withdrawn_by: Array<{ by: string; line: string; from: string }>;
}
const byId = (doc: { promises: Promise_[] }) => Object.fromEntries(doc.promises.map((p) => [p.id, p]));

describe('promises in the plan document', () => {
  it('a converged image promises every wanted value and port, after apply and at boot, and exits 0', () => {
    const { root, desired } = image(null);
    const r = reconcile(['--plan', '--json', '-f', desired, '--root', root]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.promises).toEqual([
      {
        id: 'sysctl:net.ipv4.ip_forward',
        kind: 'sysctl',
        subject: 'net.ipv4.ip_forward',
        expect: '1',
        resource: 'SysctlFile',
        what: 'net.ipv4.ip_forward = 1',
        after_apply: true,
        at_boot: true,
        held_by: null,
        withdrawn_by: [],
      },
      {
        id: 'sysctl:net.ipv4.tcp_syncookies',
        kind: 'sysctl',
        subject: 'net.ipv4.tcp_syncookies',
        expect: '1',
        resource: 'SysctlFile',
        what: 'net.ipv4.tcp_syncookies = 1',
        after_apply: true,
        at_boot: true,
        held_by: null,
        withdrawn_by: [],
      },
      {
        id: 'port:6443',
        kind: 'port',
        subject: '6443',
        expect: 'free',
        resource: 'PortFree',
        what: 'port 6443 free',
        after_apply: true,
        at_boot: true,
        held_by: null,
        withdrawn_by: [],
      },
    ]);
    const text = reconcile(['--plan', '-f', desired, '--root', root]);
    expect(text.stdout).toContain('Promises\n  = net.ipv4.ip_forward = 1: after apply and at the next boot\n');
  });

  it('an unknown sysctl -p at boot withdraws every wanted value at boot: --plan exits 2, apply exits 1', () => {
    const { root, desired } = image('#!/bin/sh -e\n# the previous admin\'s tuning\nsysctl -p "$TUNING_FILE"\nexit 0\n');
    const r = reconcile(['--plan', '--json', '-f', desired, '--root', root]);
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout);
    expect(doc.pending_changes).toBe(0);
    expect(doc.operator_required).toBe(0);
    const p = byId(doc);
    for (const key of ['net.ipv4.ip_forward', 'net.ipv4.tcp_syncookies']) {
      const pr = p[`sysctl:${key}`]!;
      expect(pr.after_apply).toBe(true);
      expect(pr.at_boot).toBe(false);
      expect(pr.withdrawn_by).toHaveLength(1);
      expect(pr.withdrawn_by[0]).toMatchObject({ by: 'unknown', from: 'boot' });
      expect(pr.withdrawn_by[0]!.line).toContain('/etc/rc.local:3');
    }
    // The port is no business of a sysctl line.
    expect(p['port:6443']).toMatchObject({ after_apply: true, at_boot: true, withdrawn_by: [] });
    const unknown = doc.findings.filter((f: { unknown?: boolean }) => f.unknown);
    expect(unknown).toHaveLength(1);
    expect(unknown[0].message).toContain('/etc/rc.local:3');
    expect(unknown[0].withdraws).toEqual([
      { promise: 'sysctl:net.ipv4.ip_forward', from: 'boot' },
      { promise: 'sysctl:net.ipv4.tcp_syncookies', from: 'boot' },
    ]);

    const text = reconcile(['--plan', '-f', desired, '--root', root]);
    expect(text.code).toBe(2);
    expect(text.stdout).toContain('No changes, but 1 unknown withdraws promises for the next boot');
    expect(text.stdout).toContain('  ! net.ipv4.ip_forward = 1: after apply; not promised at the next boot; withdrawn by What you must do: 1\n');
    // The unknown is told once, with every promise it takes back.
    expect(text.stdout).toContain('What you must do\n  1. SysctlFile: unknown: /etc/rc.local:3: ');
    expect(text.stdout).toContain('; withdraws sysctl:net.ipv4.ip_forward, sysctl:net.ipv4.tcp_syncookies (at the next boot)\n');
    expect(text.stdout.split('/etc/rc.local:3').length - 1).toBe(1);

    const apply = reconcile(['--apply', '-f', desired, '--root', root]);
    expect(apply.code).toBe(1);
    expect(apply.stdout).toContain('2 promises are not known to hold at the next boot');
    expect(apply.stdout).toContain('Apply incomplete');
    const applyJson = reconcile(['--apply', '--json', '-f', desired, '--root', root]);
    expect(applyJson.code).toBe(1);
    expect(JSON.parse(applyJson.stdout).verified).toBe(false);
  });

  it('an operator line names the one promise it withdraws, and only at boot', () => {
    const { root, desired } = image('#!/bin/sh -e\nsysctl -w net.ipv4.tcp_syncookies=0\nexit 0\n');
    const r = reconcile(['--plan', '--json', '-f', desired, '--root', root]);
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout);
    const op = doc.resources.find((x: { type: string }) => x.type === 'SysctlFile').changes.find((c: { id: string }) => c.id === 'boot-script:/etc/rc.local:2');
    expect(op.action).toBe('operator');
    expect(op.withdraws).toEqual([{ promise: 'sysctl:net.ipv4.tcp_syncookies', from: 'boot' }]);
    const p = byId(doc);
    expect(p['sysctl:net.ipv4.tcp_syncookies']).toMatchObject({
      after_apply: true,
      at_boot: false,
      withdrawn_by: [{ by: 'operator', line: 'boot-script:/etc/rc.local:2', from: 'boot' }],
    });
    expect(p['sysctl:net.ipv4.ip_forward']).toMatchObject({ after_apply: true, at_boot: true, withdrawn_by: [] });
    const text = reconcile(['--plan', '-f', desired, '--root', root]);
    expect(text.stdout).toContain('     withdraws: sysctl:net.ipv4.tcp_syncookies (at the next boot)\n');
  });
});

// ---------------------------------------------------------------------------
// The promises apply ends with (promises_after) come from the plan it observes
// afterwards. Stopping a transient unit (systemd-run) hides it from that
// observation, but what makes it again at the next boot is still there
// (systemd.unit(5): transient units' files live in /run/systemd/transient and
// are made anew by whatever runs systemd-run), so an unknown that outlives
// apply keeps taking back the port's promise at boot; the boot farm's
// transient-systemd-run-from-rc-local entry found the port back after the
// reboot while apply had promised it free.
const portFree = {
  promised: () => [{ id: 'port:2379', kind: 'port', subject: '2379', expect: 'free' }],
  unknowns: (_s: unknown, o: { held: boolean }) => (o.held ? [transient] : []),
};
const transient = {
  message: 'port 2379 is held by transient-api.service, a transient unit (FragmentPath=/run/systemd/transient/transient-api.service)',
  withdraws: [{ promise: 'port:2379', from: 'boot' as const }],
  outlivesApply: true,
};
const planOf = (held: boolean) => ({ resources: [{ name: 'PortFree', spec: {}, provider: portFree, observed: { held }, changes: [] }] }) as unknown as Plan;

describe('promises after apply', () => {
  it('an unknown that outlives apply still takes back the promise at boot once its unit is stopped; seen again, it counts once', () => {
    const carried: PlanUnknown[] = [{ resource: 'PortFree', ...transient }];
    const stopped = planPromises(planOf(false), carried);
    expect(stopped).toMatchObject([
      { id: 'port:2379', after_apply: true, at_boot: false, withdrawn_by: [{ by: 'unknown', resource: 'PortFree', line: transient.message, from: 'boot' }] },
    ]);
    expect(withdrawnByUnknown(stopped)).toHaveLength(1);
    expect(planPromises(planOf(true), carried)[0]!.withdrawn_by).toHaveLength(1);
    // Nothing carried: the stopped unit leaves no trace, and the promise reads as kept at boot.
    expect(planPromises(planOf(false))[0]).toMatchObject({ at_boot: true, withdrawn_by: [] });
  });

  // The boot farm's seed 478: a `systemctl kill` failed, the disable after it never ran, the port was free when apply
  // looked again, and promises_after promised it free at boot; the unit started at the next boot on it.
  it('a failure of apply takes back what it names, from apply on, whatever the host shows afterwards; unnamed, every promise of its resource', () => {
    const two = {
      promised: () => [
        { id: 'port:2379', kind: 'port', subject: '2379', expect: 'free' },
        { id: 'port:2380', kind: 'port', subject: '2380', expect: 'free' },
      ],
    };
    const plan = { resources: [{ name: 'PortFree', spec: {}, provider: two, observed: {}, changes: [] }] } as unknown as Plan;
    const message = 'PortFree: port 2380 (wrapper.service): systemctl kill exited 1';
    const named = planPromises(plan, [], [], [{ resource: 'PortFree', message, promises: ['port:2380'] }]);
    expect(named).toMatchObject([
      { id: 'port:2379', after_apply: true, at_boot: true, withdrawn_by: [] },
      { id: 'port:2380', after_apply: false, at_boot: false, withdrawn_by: [{ by: 'failure', resource: 'PortFree', line: message, from: 'apply' }] },
    ]);
    const unnamed = planPromises(plan, [], [], [{ resource: 'PortFree', message }]);
    expect(unnamed.map((p) => [p.id, p.at_boot, p.withdrawn_by.length])).toEqual([
      ['port:2379', false, 1],
      ['port:2380', false, 1],
    ]);
    // Another resource's failure takes back nothing here.
    expect(planPromises(plan, [], [], [{ resource: 'SwapOff', message: 'swapoff failed' }]).every((p) => p.withdrawn_by.length === 0)).toBe(true);
  });
});

// The kernel refuses a module named by module_blacklist= on its command line (kernel/module/main.c), and
// br_netfilter registers the net.bridge.* sysctls only while it is loaded: with br_netfilter refused now, the
// bridge keys do not exist after apply either; with it only in the next boot's command line, both hold until the
// reboot. overlay is untouched by either line. (A booted VM shows it: test/vm swap-unit-cmdline.)
describe('promises that need another: the net.bridge keys and br_netfilter', () => {
  const live = (cmdline: string, grub: string | null) => ({
    'proc/cmdline': cmdline + '\n',
    'proc/modules': '',
    'proc/sys/kernel/osrelease': '6.1.0-test\n',
    'lib/modules/6.1.0-test/modules.builtin': '',
    'lib/modules/6.1.0-test/modules.dep': 'kernel/fs/overlayfs/overlay.ko:\nkernel/net/bridge/br_netfilter.ko: kernel/net/bridge/bridge.ko\n',
    ...(grub === null ? {} : { 'etc/default/grub': `GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX="${grub}"\n` }),
  });
  const SPEC = { type: 'ModulesLoad', file: '/etc/modules-load.d/k8s.conf', modules: ['overlay', 'br_netfilter'] } as const;
  const SYSCTL = {
    type: 'SysctlFile',
    file: '/etc/sysctl.d/k8s.conf',
    settings: { 'net.ipv4.ip_forward': 1, 'net.bridge.bridge-nf-call-iptables': 1 },
  } as const;
  async function promisesOf(cmdline: string, grub: string | null) {
    const root = mkdtempSync(path.join(tmpdir(), 'promises-needs-'));
    roots.push(root);
    buildTree(root, live(cmdline, grub));
    const { Host } = await import('../../src/host.js');
    const { diffModules, modulesLoadProvider } = await import('../../src/resources/modules-load/provider.js');
    const { observeModules } = await import('../../src/modprobe/observe.js');
    const { sysctlFileProvider } = await import('../../src/resources/sysctl-file/provider.js');
    const changes = diffModules(SPEC as never, await observeModules(new Host({ root, live: true }), SPEC as never), { live: true });
    const plan = {
      live: true,
      root,
      resources: [
        { name: 'ModulesLoad', type: 'ModulesLoad', spec: SPEC, provider: modulesLoadProvider, observed: {}, changes },
        { name: 'SysctlFile', type: 'SysctlFile', spec: SYSCTL, provider: sysctlFileProvider, observed: {}, changes: [] },
      ],
    } as unknown as Plan;
    return Object.fromEntries(
      planPromises(plan).map((p) => [p.id, [p.after_apply, p.at_boot, p.withdrawn_by.map((w) => `${w.resource}:${w.line}:${w.from}`)]]),
    );
  }

  it('refused now and at the next boot: br_netfilter and the bridge key are taken back from apply, overlay and ip_forward are kept', async () => {
    expect(await promisesOf('root=/dev/vda module_blacklist=br_netfilter', 'module_blacklist=br_netfilter')).toEqual({
      'module:overlay': [true, true, []],
      'module:br_netfilter': [false, false, ['ModulesLoad:cmdline-boot:grub:kernel:br_netfilter:boot', 'ModulesLoad:cmdline-now:kernel:br_netfilter:apply']],
      'sysctl:net.ipv4.ip_forward': [true, true, []],
      'sysctl:net.bridge.bridge-nf-call-iptables': [
        false,
        false,
        ['ModulesLoad:cmdline-boot:grub:kernel:br_netfilter:boot', 'ModulesLoad:cmdline-now:kernel:br_netfilter:apply'],
      ],
    });
  });

  it('only in the next boot: both hold after apply and are taken back at boot', async () => {
    expect(await promisesOf('root=/dev/vda', 'module_blacklist=br_netfilter')).toEqual({
      'module:overlay': [true, true, []],
      'module:br_netfilter': [true, false, ['ModulesLoad:cmdline-boot:grub:kernel:br_netfilter:boot']],
      'sysctl:net.ipv4.ip_forward': [true, true, []],
      'sysctl:net.bridge.bridge-nf-call-iptables': [true, false, ['ModulesLoad:cmdline-boot:grub:kernel:br_netfilter:boot']],
    });
  });
});
