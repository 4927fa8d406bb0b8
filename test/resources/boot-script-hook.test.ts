// The boot-script scan through the CLI on fixture roots (--root): which
// scripts are read (each runner's own rule), the operator lines by default,
// neutralise_scripts: true commenting lines out through the write door, and
// --rollback putting every byte back. Expectations come from the runners'
// rules (systemd-rc-local-generator, cron, run-parts, systemd's .wants links),
// written out by hand below.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runBundle } from '../helpers/bundle-cli.js';
import { removedAfterEach } from '../helpers/temp-dirs.js';
import { buildTree } from '../helpers/tree.js';
import { snapshot } from '../helpers/snapshot.js';

const roots = removedAfterEach();

const reconcile = runBundle;

const RC = [
  '#!/bin/sh -e', //                                  1
  '# rc.local of the previous admin', //              2
  'swapon /swap-extra', //                            3  swap
  'sysctl -w net.ipv4.ip_forward=0', //               4  sysctl
  'sysctl -w net.ipv4.conf.all.forwarding=0', //      5  sysctl: the kernel couples it with ip_forward
  'sysctl -w net.ipv4.ip_forward=1', //               6  the wanted value: harmless
  'modprobe -r br_netfilter', //                      7  modules
  'if [ -f /swap2 ]; then', //                        8
  '  swapon /swap2', //                               9  swap, inside a compound command
  'fi', //                                            10
  'echo "swapon /not-a-command" >/dev/null', //       11
  'exit 0', //                                        12
  '',
].join('\n');
const CRON_D = '# system crontab\nSHELL=/bin/sh\n@reboot root /sbin/swapon /cron-swap\n17 * * * * root run-parts /etc/cron.hourly\n';
const USER_TAB = '# user crontab of root\n@reboot /sbin/swapon /user-swap\n';
const IF_UP = '#!/bin/sh\n[ "$IFACE" = lo ] && exit 0\nswapon /net-swap\n';
const UNIT =
  '[Unit]\nDescription=extra swap\n\n[Service]\nType=oneshot\nExecStartPre=/bin/true\nExecStart=/sbin/swapon /unit-swap\n\n[Install]\nWantedBy=multi-user.target\n';

function host(opts: { rcMode?: number } = {}): { root: string; desired: (neutralise: boolean) => string } {
  const root = mkdtempSync(path.join(tmpdir(), 'boot-scripts-'));
  roots.push(root);
  buildTree(root, {
    'etc/fstab': 'UUID=1 / ext4 defaults 0 1\n',
    'etc/rc.local': RC,
    'etc/cron.d/swap-late': CRON_D,
    // cron skips names with a dot (run-parts naming): never read.
    'etc/cron.d/swap.dpkg-old': '@reboot root swapon /ignored-cron\n',
    'var/spool/cron/crontabs/root': USER_TAB,
    'etc/network/if-up.d/swapup': IF_UP,
    // run-parts runs only executable files named [A-Za-z0-9_-]+.
    'etc/network/if-up.d/swapup.sh': IF_UP.replace('/net-swap', '/ignored-dot'),
    'etc/network/if-pre-up.d/noexec': IF_UP.replace('/net-swap', '/ignored-noexec'),
    'etc/systemd/system/extra-swap.service': UNIT,
    'etc/systemd/system/multi-user.target.wants/extra-swap.service': { link: '/etc/systemd/system/extra-swap.service' },
    // Not enabled: no link in any .wants directory.
    'etc/systemd/system/idle-swap.service': UNIT.replace('/unit-swap', '/ignored-unit'),
  });
  chmodSync(path.join(root, 'etc/rc.local'), opts.rcMode ?? 0o755);
  chmodSync(path.join(root, 'etc/network/if-up.d/swapup'), 0o755);
  chmodSync(path.join(root, 'etc/network/if-up.d/swapup.sh'), 0o755);
  chmodSync(path.join(root, 'etc/network/if-pre-up.d/noexec'), 0o644);
  chmodSync(path.join(root, 'var/spool/cron/crontabs/root'), 0o600);
  const desired = (neutralise: boolean) => {
    const f = path.join(root, `desired-${neutralise}.yaml`);
    const n = neutralise ? '\n    neutralise_scripts: true' : '';
    writeFileSync(
      f,
      `reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SwapOff${n}\n  - type: ModulesLoad${n}\n  - type: SysctlFile${n}\n`,
    );
    return f;
  };
  return { root, desired };
}

interface JsonChange {
  id: string;
  action: string;
  operator: string | null;
  summary: string;
}
const scriptChanges = (doc: { resources: Array<{ type: string; changes: JsonChange[] }> }, type: string) =>
  doc.resources
    .find((r) => r.type === type)!
    .changes.filter((c) => c.id.startsWith('boot-script:'))
    .map((c) => [c.id, c.action]);

const OPERATOR_SWAP = [
  'boot-script:/etc/rc.local:3',
  'boot-script:/etc/rc.local:9',
  'boot-script:/etc/cron.d/swap-late:3',
  'boot-script:/var/spool/cron/crontabs/root:2',
  'boot-script:/etc/network/if-up.d/swapup:3',
  'boot-script:/etc/systemd/system/extra-swap.service:7',
];

describe('boot-time scripts, default: operator lines naming file:line', () => {
  it('plans each script kind as an operator line, and nothing from a file its runner ignores', () => {
    const { root, desired } = host();
    const r = reconcile(['--plan', '--json', '-f', desired(false), '--root', root]);
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout);
    expect(scriptChanges(doc, 'SwapOff').sort()).toEqual(OPERATOR_SWAP.map((id) => [id, 'operator']).sort());
    // Line 7 too: removing br_netfilter takes the net.bridge keys (SysctlFile's default settings) out of the kernel.
    expect(scriptChanges(doc, 'SysctlFile')).toEqual([
      ['boot-script:/etc/rc.local:4', 'operator'],
      ['boot-script:/etc/rc.local:5', 'operator'],
      ['boot-script:/etc/rc.local:7', 'operator'],
    ]);
    expect(scriptChanges(doc, 'ModulesLoad')).toEqual([['boot-script:/etc/rc.local:7', 'operator']]);
    expect(r.stdout).not.toMatch(/ignored|not-a-command/);
    const five = doc.resources.find((x: { type: string }) => x.type === 'SysctlFile').changes.find((c: JsonChange) => c.id.endsWith(':5'));
    expect(five.summary).toContain('couples it with net.ipv4.ip_forward');
  });

  it('apply converges the rest, leaves every script byte-identical, and exits 1 naming the lines', () => {
    const { root, desired } = host();
    const before = snapshot(root, (p) => !/^(etc\/(rc\.local|cron\.d|network)|var\/spool)/.test(p) && p !== 'etc');
    const r = reconcile(['--apply', '-f', desired(false), '--root', root]);
    expect(r.code).toBe(1);
    for (const where of [
      '/etc/rc.local:3',
      '/etc/rc.local:4',
      '/etc/rc.local:7',
      '/etc/cron.d/swap-late:3',
      '/var/spool/cron/crontabs/root:2',
      '/etc/network/if-up.d/swapup:3',
      '/etc/systemd/system/extra-swap.service:7',
    ]) {
      expect(r.stdout).toContain(where);
    }
    const after = snapshot(root, (p) => !/^(etc\/(rc\.local|cron\.d|network)|var\/spool)/.test(p) && p !== 'etc');
    expect(after).toEqual(before);
  });

  // br_netfilter registers the net.bridge.* sysctls when it loads and unregisters them when it is removed
  // (net/bridge/br_netfilter_hooks.c): after rc.local's `modprobe -r br_netfilter` at boot the keys systemd-sysctl
  // set are gone, so their promises cannot hold at the next boot (a booted VM shows it: test/vm swap-module-sources).
  it('modprobe -r of the module a wanted key exists with takes that key back at boot, and only that key', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'boot-scripts-'));
    roots.push(root);
    buildTree(root, { 'etc/fstab': 'UUID=1 / ext4 defaults 0 1\n', 'etc/rc.local': '#!/bin/sh\n# bridge firewall off\nmodprobe -r br_netfilter\nexit 0\n' });
    chmodSync(path.join(root, 'etc/rc.local'), 0o755);
    const desired = (settings: string) => {
      const f = path.join(root, `desired-${settings.length}.yaml`);
      writeFileSync(f, `reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SysctlFile${settings}\n`);
      return f;
    };
    const plan = (f: string) => JSON.parse(reconcile(['--plan', '--json', '-f', f, '--root', root]).stdout);
    const doc = plan(desired(''));
    const line = { by: 'operator', resource: 'SysctlFile', line: 'boot-script:/etc/rc.local:3', from: 'boot' };
    const byId = (id: string) => doc.promises.find((p: { id: string }) => p.id === id);
    for (const key of ['net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables'])
      expect(byId(`sysctl:${key}`)).toMatchObject({ after_apply: true, at_boot: false, withdrawn_by: [line] });
    expect(byId('sysctl:net.ipv4.ip_forward')).toMatchObject({ after_apply: true, at_boot: true, withdrawn_by: [] });
    const change = doc.resources.find((x: { type: string }) => x.type === 'SysctlFile').changes.find((c: JsonChange) => c.id === line.line);
    expect(change.action).toBe('operator');
    expect(change.summary).toContain('removes br_netfilter (modprobe -r)');
    expect(change.operator).toContain('remove or comment out that line');
    // Without a key that needs br_netfilter, the line undoes nothing of this resource.
    const only = plan(desired('\n    settings:\n      net.ipv4.ip_forward: 1'));
    expect(scriptChanges(only, 'SysctlFile')).toEqual([]);
    expect(only.promises.every((p: { withdrawn_by: unknown[] }) => p.withdrawn_by.length === 0)).toBe(true);
  });

  it('an /etc/rc.local without an execute bit is not run (systemd-rc-local-generator), so not reported', () => {
    const { root, desired } = host({ rcMode: 0o644 });
    const doc = JSON.parse(reconcile(['--plan', '--json', '-f', desired(false), '--root', root]).stdout);
    expect(JSON.stringify(doc)).not.toContain('/etc/rc.local');
  });
});

const SWAP_MARK = '# k8s-host-reconcile: swap disabled for Kubernetes (kubelet needs swap off); the next line was active';
const SYSCTL_MARK = '# k8s-host-reconcile: this line would undo sysctl values Kubernetes needs; the next line was active';
const MOD_MARK = '# k8s-host-reconcile: this line would remove a module Kubernetes needs; the next line was active';

describe('neutralise_scripts: true', () => {
  it('comments out each safe line under its marker, keeps every other byte and the mode, and --rollback restores all', () => {
    const { root, desired } = host();
    const f = desired(true);
    // The tool's own: reports and run journals (/root/ks), the lock (/run).
    const own = (p: string) => /^(root|run)(\/|$)/.test(p);
    const original = snapshot(root, own);
    const plan = JSON.parse(reconcile(['--plan', '--json', '-f', f, '--root', root]).stdout);
    expect(scriptChanges(plan, 'SwapOff').sort()).toEqual(
      [
        ['boot-script:/etc/rc.local', 'update'],
        ['boot-script:/etc/rc.local:9', 'operator'],
        ['boot-script:/etc/cron.d/swap-late', 'update'],
        ['boot-script:/var/spool/cron/crontabs/root', 'update'],
        ['boot-script:/etc/network/if-up.d/swapup', 'update'],
        ['boot-script:/etc/systemd/system/extra-swap.service:7', 'operator'],
      ].sort(),
    );

    const r = reconcile(['--apply', '-f', f, '--root', root]);
    // The if-body line and the unit's command line remain for a person.
    expect(r.code).toBe(1);
    const lines = RC.split('\n');
    const want = [
      lines[0],
      lines[1],
      SWAP_MARK,
      '#' + lines[2],
      SYSCTL_MARK,
      '#' + lines[3],
      SYSCTL_MARK,
      '#' + lines[4],
      lines[5],
      MOD_MARK,
      '#' + lines[6],
      ...lines.slice(7),
    ].join('\n');
    expect(readFileSync(path.join(root, 'etc/rc.local'), 'latin1')).toBe(want);
    expect(statSync(path.join(root, 'etc/rc.local')).mode & 0o7777).toBe(0o755);
    expect(readFileSync(path.join(root, 'etc/cron.d/swap-late'), 'latin1')).toBe(
      '# system crontab\nSHELL=/bin/sh\n' + SWAP_MARK + '\n#@reboot root /sbin/swapon /cron-swap\n17 * * * * root run-parts /etc/cron.hourly\n',
    );
    expect(readFileSync(path.join(root, 'var/spool/cron/crontabs/root'), 'latin1')).toBe(
      '# user crontab of root\n' + SWAP_MARK + '\n#@reboot /sbin/swapon /user-swap\n',
    );
    expect(statSync(path.join(root, 'var/spool/cron/crontabs/root')).mode & 0o7777).toBe(0o600);
    expect(readFileSync(path.join(root, 'etc/network/if-up.d/swapup'), 'latin1')).toBe(
      '#!/bin/sh\n[ "$IFACE" = lo ] && exit 0\n' + SWAP_MARK + '\n#swapon /net-swap\n',
    );
    expect(readFileSync(path.join(root, 'etc/systemd/system/extra-swap.service'), 'latin1')).toBe(UNIT);
    // The result is still a valid sh script.
    expect(spawnSync('dash', ['-n', path.join(root, 'etc/rc.local')]).status).toBe(0);

    // A second plan has only the two operator lines left, the if-body now further down (markers above it).
    const nine = want.split('\n').indexOf('  swapon /swap2') + 1;
    expect(nine).toBe(13);
    const again = JSON.parse(reconcile(['--plan', '--json', '-f', f, '--root', root]).stdout);
    expect([...scriptChanges(again, 'SwapOff'), ...scriptChanges(again, 'SysctlFile'), ...scriptChanges(again, 'ModulesLoad')].sort()).toEqual(
      [
        [`boot-script:/etc/rc.local:${nine}`, 'operator'],
        ['boot-script:/etc/systemd/system/extra-swap.service:7', 'operator'],
      ].sort(),
    );

    const back = reconcile(['--rollback', '-f', f, '--root', root]);
    expect(back.code, back.stdout + back.stderr).toBe(0);
    expect(snapshot(root, own)).toEqual(original);
  });

  it('a file a person changed between plan and apply is refused, not merged', async () => {
    const { root, desired } = host();
    const { Host } = await import('../../src/host.js');
    const { PROVIDERS } = await import('../../src/resources/index.js');
    const { applyContext } = await import('../helpers/door.js');
    const spec = { type: 'SwapOff', mask_swap_target: true, remove_swap_files: false, neutralise_scripts: true };
    const h = new Host({ root });
    const p = PROVIDERS['SwapOff']!;
    const changes = p.diff(spec, await p.observe(h, spec), { live: false }).filter((c: { id: string }) => c.id === 'boot-script:/etc/rc.local');
    expect(changes).toHaveLength(1);
    writeFileSync(path.join(root, 'etc/rc.local'), RC.replace('exit 0', 'echo edited\nexit 0'));
    await expect(p.apply(h, spec, changes, await applyContext(h))).rejects.toThrow(/changed since|other content|changed/);
    expect(readFileSync(path.join(root, 'etc/rc.local'), 'latin1')).toContain('echo edited');
    void desired;
  });
});

describe('enabled units: the command lines systemd would run', () => {
  const scan = async (tree: Parameters<typeof buildTree>[1]) => {
    const root = mkdtempSync(path.join(tmpdir(), 'boot-units-'));
    roots.push(root);
    buildTree(root, tree);
    const { Host } = await import('../../src/host.js');
    const { scanBootScripts } = await import('../../src/boot-scripts/scan.js');
    return (await scanBootScripts(new Host({ root }))).hits.map((h) => `${h.file}:${h.line} ${h.action.kind}`);
  };
  const svc = (exec: string) => `[Service]\nType=oneshot\n${exec}\n`;

  it("a drop-in that resets ExecStart= removes the fragment's swapon; a drop-in can add one too", async () => {
    expect(
      await scan({
        'usr/lib/systemd/system/a.service': svc('ExecStart=/sbin/swapon -a'),
        'etc/systemd/system/a.service.d/override.conf': '[Service]\nExecStart=\nExecStart=/bin/true\n',
        'usr/lib/systemd/system/b.service': svc('ExecStart=/bin/true'),
        'etc/systemd/system/b.service.d/swap.conf': '[Service]\nExecStartPost=/bin/sh -c "swapon /dropin-swap"\n',
        'etc/systemd/system/multi-user.target.wants/a.service': { link: '/usr/lib/systemd/system/a.service' },
        'usr/lib/systemd/system/multi-user.target.wants/b.service': { link: '../b.service' },
      }),
    ).toEqual(['/etc/systemd/system/b.service.d/swap.conf:2 swapon']);
  });

  it('a template enabled as an instance is read; a masked or unlinked unit is not', async () => {
    expect(
      await scan({
        'usr/lib/systemd/system/sw@.service': svc('ExecStart=/sbin/swapon /%i'),
        'etc/systemd/system/multi-user.target.wants/sw@x.service': { link: '/usr/lib/systemd/system/sw@.service' },
        'usr/lib/systemd/system/m.service': svc('ExecStart=/sbin/swapon /m'),
        'etc/systemd/system/m.service': { link: '/dev/null' },
        'etc/systemd/system/multi-user.target.wants/m.service': { link: '/usr/lib/systemd/system/m.service' },
        'usr/lib/systemd/system/idle.service': svc('ExecStart=/sbin/swapon /idle'),
      }),
    ).toEqual(['/usr/lib/systemd/system/sw@.service:3 swapon']);
  });

  it("a service no link names but that starts at boot ([Unit] Wants= of an enabled target, a timer) is read too, as systemd's own loader starts it", async () => {
    const { oracle, oracleStarted, SKELETON, DEFAULT_LINK, ETC, LIB, NODEFAULT } = await import('../helpers/systemd-oracle.js');
    const tree = {
      ...SKELETON,
      ...DEFAULT_LINK,
      [`${ETC}/monitoring.target`]: `${NODEFAULT}Wants=helper.service\n\n[Install]\nWantedBy=multi-user.target\n`,
      [`${ETC}/multi-user.target.wants/monitoring.target`]: { link: '../monitoring.target' },
      [`${LIB}/helper.service`]: `${NODEFAULT}[Service]\nType=oneshot\nExecStart=/sbin/swapon /helper\n`,
      [`${LIB}/late.timer`]: `${NODEFAULT}[Timer]\nOnBootSec=5min\n[Install]\nWantedBy=multi-user.target\n`,
      [`${ETC}/multi-user.target.wants/late.timer`]: { link: '../../../../usr/lib/systemd/system/late.timer' },
      [`${LIB}/late.service`]: `${NODEFAULT}[Service]\nType=oneshot\nExecStart=/sbin/swapon /late\n`,
      [`${LIB}/idle.service`]: `${NODEFAULT}[Service]\nType=oneshot\nExecStart=/sbin/swapon /idle\n`,
    };
    const root = mkdtempSync(path.join(tmpdir(), 'boot-units-graph-'));
    roots.push(root);
    buildTree(root, tree);
    const started = oracleStarted(await oracle(root));
    // The expectation comes from systemd: every service it would start whose ExecStart= runs swapon.
    const expected = ['helper.service', 'late.service', 'idle.service']
      .filter((u) => started.has(u))
      .map((u) => `/${LIB}/${u}:5 swapon`)
      .sort();
    expect(expected).toEqual([`/${LIB}/helper.service:5 swapon`, `/${LIB}/late.service:5 swapon`]);
    const { Host } = await import('../../src/host.js');
    const { scanBootScripts } = await import('../../src/boot-scripts/scan.js');
    const hits = (await scanBootScripts(new Host({ root }))).hits;
    expect(hits.map((h) => `${h.file}:${h.line} ${h.action.kind}`).sort()).toEqual(expected);
    expect(hits.find((h) => h.unit === 'helper.service')!.runBy).toContain('Wants= at /etc/systemd/system/monitoring.target:3');
    expect(hits.find((h) => h.unit === 'late.service')!.runBy).toContain('triggered by late.timer');
  });
});
