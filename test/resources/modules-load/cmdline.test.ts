// ModulesLoad and the kernel command line: the plan names
// module_blacklist= / modprobe.blacklist= as the blocker with file and line,
// promises no modprobe the kernel will refuse, and the same for an image.
// What each entry does is the kernel's and libkmod's (test/modprobe/kernel-cmdline.test.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../../src/host.js';
import type { ModulesLoadSpec } from '../../../src/resources/modules-load/spec.js';
import { diffModules } from '../../../src/resources/modules-load/provider.js';
import { observeModules } from '../../../src/modprobe/observe.js';
import { applyPlan } from '../../../src/reconcile/apply.js';
import type { Plan } from '../../../src/reconcile/plan.js';
import type { Change, Provider } from '../../../src/resources/types.js';
import { modulesLoadProvider } from '../../../src/resources/modules-load/provider.js';
import { sysctlFileProvider } from '../../../src/resources/sysctl-file/provider.js';
import { buildTree, type Tree } from '../../helpers/tree.js';

const SPEC: ModulesLoadSpec = { type: 'ModulesLoad', file: '/etc/modules-load.d/k8s.conf', modules: ['overlay', 'br_netfilter'] };
const GRUB = 'GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX="module_blacklist=br_netfilter"\n';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'modules-cmdline-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const live = (cmdline: string): Tree => ({
  'proc/cmdline': cmdline + '\n',
  'proc/modules': '',
  'proc/sys/kernel/osrelease': '6.1.0-test\n',
  'lib/modules/6.1.0-test/modules.builtin': '',
  'lib/modules/6.1.0-test/modules.dep': 'kernel/fs/overlayfs/overlay.ko:\nkernel/net/bridge/br_netfilter.ko: kernel/net/bridge/bridge.ko\n',
});

describe('ModulesLoad and the kernel command line', () => {
  it('live, module_blacklist= on /proc/cmdline and in /etc/default/grub: no modprobe promised, both named as operator lines', async () => {
    buildTree(root, { ...live('root=/dev/vda ro module_blacklist=br_netfilter'), 'etc/default/grub': GRUB });
    const changes = diffModules(SPEC, await observeModules(new Host({ root, live: true }), SPEC), { live: true });
    expect(changes.map((c) => c.id)).toEqual([
      'file:/etc/modules-load.d/k8s.conf',
      'cmdline-boot:grub:kernel:br_netfilter',
      'cmdline-now:kernel:br_netfilter',
      'modprobe:overlay',
    ]);
    const boot = changes[1]!;
    expect(boot.action).toBe('operator');
    expect(boot.summary).toContain('/etc/default/grub:3 (GRUB_CMDLINE_LINUX)');
    expect(boot.operator).toBe('remove `module_blacklist=br_netfilter` at /etc/default/grub:3 (GRUB_CMDLINE_LINUX), run update-grub, and reboot');
    expect(changes[2]!.unmet).toEqual(['module:br_netfilter']);
  });

  it('live, modprobe.blacklist= only: modprobe loads it now (by name), the boot line names the file', async () => {
    buildTree(root, { ...live('root=/dev/vda modprobe.blacklist=br_netfilter'), 'etc/kernel/cmdline': 'root=/dev/vda modprobe.blacklist=br_netfilter\n' });
    const changes = diffModules(SPEC, await observeModules(new Host({ root, live: true }), SPEC), { live: true });
    expect(changes.map((c) => c.id)).toEqual([
      'file:/etc/modules-load.d/k8s.conf',
      'cmdline-boot:kernel-install:kmod:br_netfilter',
      'modprobe:overlay',
      'modprobe:br_netfilter',
    ]);
    expect(changes[1]!.summary).toContain('systemd-modules-load skips br_netfilter');
    expect(changes[1]!.summary).toContain('/etc/kernel/cmdline:1');
  });

  it('live, on /proc/cmdline but in no boot file read: the line says what was searched', async () => {
    buildTree(root, live('module_blacklist=br_netfilter'));
    const changes = diffModules(SPEC, await observeModules(new Host({ root, live: true }), SPEC), { live: true });
    const now = changes.find((c) => c.id === 'cmdline-now:kernel:br_netfilter')!;
    expect(now.operator).toContain('none of /etc/default/grub, /etc/default/grub.d/*.cfg, /etc/kernel/cmdline sets it');
  });

  it('offline image: the grub entry is named the same way, without /proc', async () => {
    buildTree(root, { 'etc/default/grub': GRUB });
    const changes = diffModules(SPEC, await observeModules(new Host({ root }), SPEC), { live: false });
    expect(changes.filter((c) => c.action === 'operator').map((c) => c.id)).toEqual(['cmdline-boot:grub:kernel:br_netfilter']);
  });

  it('apply: the bridge keys wait for the module the operator line leaves unloaded, and only their promises are taken back; ip_forward does not wait', async () => {
    const mods: Change[] = [
      { id: 'cmdline-now:kernel:br_netfilter', action: 'operator', operator: 'x', summary: 'x', op: { kind: 'none' }, unmet: ['module:br_netfilter'] },
    ];
    const sysctl: Change[] = [
      { id: 'runtime:net.ipv4.ip_forward', action: 'runtime', summary: '', op: { kind: 'runtime', key: 'net.ipv4.ip_forward', value: '1' } },
      {
        id: 'runtime:net.bridge.bridge-nf-call-iptables',
        action: 'runtime',
        summary: '',
        op: { kind: 'runtime', key: 'net.bridge.bridge-nf-call-iptables', value: '1' },
      },
    ];
    const applied: string[] = [];
    const spy = (p: Provider): Provider => ({ ...p, apply: async (_h, _s, changes) => void applied.push(...changes.map((c) => c.id)) });
    const plan: Plan = {
      live: true,
      root,
      resources: [
        { name: 'ModulesLoad', type: 'ModulesLoad', spec: SPEC, provider: spy(modulesLoadProvider as Provider), observed: null, changes: mods },
        {
          name: 'SysctlFile',
          type: 'SysctlFile',
          spec: { type: 'SysctlFile' } as never,
          provider: spy(sysctlFileProvider as Provider),
          observed: null,
          changes: sysctl,
        },
      ],
    };
    const result = await applyPlan(new Host({ root }), plan, { progress: () => {}, door: undefined as never });
    expect(applied).toEqual(['runtime:net.ipv4.ip_forward']);
    expect(result.failures).toEqual([
      {
        resource: 'SysctlFile',
        message: "runtime:net.bridge.bridge-nf-call-iptables not applied: ModulesLoad's module:br_netfilter, which it depends on, is left to an operator",
        changes: ['runtime:net.bridge.bridge-nf-call-iptables'],
        // That key alone: ip_forward was written and its promise stands in promises_after.
        promises: ['sysctl:net.bridge.bridge-nf-call-iptables'],
      },
    ]);
  });
});

describe('offline: what the image promises for the first boot', () => {
  it('a module the command line stops is not promised to load at first boot; the others are', async () => {
    const r = mkdtempSync(path.join(tmpdir(), 'modules-cmdline-'));
    try {
      buildTree(r, { 'etc/kernel/cmdline': 'root=/dev/vda module_blacklist=br_netfilter\n' });
      const changes = diffModules(SPEC, await observeModules(new Host({ root: r }), SPEC), { live: false });
      expect(changes.filter((c) => c.action === 'deferred').map((c) => c.summary)).toEqual([
        'overlay loads at first boot via systemd-modules-load (offline: modprobe skipped)',
      ]);
    } finally {
      rmSync(r, { recursive: true, force: true });
    }
  });
});
