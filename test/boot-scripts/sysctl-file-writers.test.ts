// A sysctl file applied at boot by something other than systemd-sysctl: an
// if-up hook's `sysctl -p FILE`, and ufw.service, whose ufw-init applies
// IPT_SYSCTL from /etc/default/ufw (Debian 12's ufw 0.36.2, byte for byte:
// test/fixtures/debian-packages/). Both are one writer: the file is read as
// procps reads it (keys with "/" too, as ufw writes them), and a line that
// leaves a wanted key at another value is resolved under conflict_policy:
// resolve exactly as a sysctl.d conflict is (commented out under the same
// marker, journaled, --rollback restores every byte), or, under fail, is an
// operator line naming FILE:line that takes the key's next-boot promise back.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUNDLE } from '../helpers/bundle-cli.js';
import { removedAfterEach } from '../helpers/temp-dirs.js';
import { buildTree } from '../helpers/tree.js';
import { snapshot } from '../helpers/snapshot.js';
import { sourcedValue } from '../../src/boot-scripts/sysctl-file-writers.js';

const UFW = path.resolve('test/fixtures/debian-packages/ufw_0.36.2-1');
const OWNED = '/etc/sysctl.d/k8s.conf';
const MARKER = `# disabled by k8s-host-reconcile: conflicts with ${OWNED}`;
const roots = removedAfterEach();

interface Doc {
  promises: Array<{ id: string; at_boot: boolean; withdrawn_by: Array<{ line: string }> }>;
  resources: Array<{ type: string; changes: Array<{ id: string; action: string; summary: string; operator?: string }> }>;
}

function reconcile(args: string[]) {
  return spawnSync(process.execPath, [BUNDLE, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
}

function desired(root: string, policy: 'resolve' | 'fail'): string {
  const f = path.join(root, `desired-${policy}.yaml`);
  writeFileSync(f, `reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SysctlFile\n    conflict_policy: ${policy}\n`);
  return f;
}

const planOf = (root: string, policy: 'resolve' | 'fail'): Doc =>
  JSON.parse(reconcile(['--plan', '--json', '-f', desired(root, policy), '--root', root]).stdout) as Doc;
const changesOf = (d: Doc) => d.resources.find((r) => r.type === 'SysctlFile')!.changes;
const forward = (d: Doc) => d.promises.find((p) => p.id === 'sysctl:net.ipv4.ip_forward')!;

/** The stock package's files in a root: ufw installed (postinst copies ufw.conf into /etc/ufw), optionally enabled as `ufw enable` leaves it. */
function ufwRoot(opts: { enabled: boolean; forwarding?: string }): { root: string; sysctlLine: number; iptLine: number } {
  const root = mkdtempSync(path.join(tmpdir(), 'ufw-'));
  roots.push(root);
  cpSync(UFW, root, { recursive: true });
  const conf = readFileSync(path.join(UFW, 'usr/share/ufw/ufw.conf'), 'utf8');
  const stockSysctl = readFileSync(path.join(UFW, 'etc/ufw/sysctl.conf'), 'utf8');
  // An admin turns forwarding off in ufw's own file, in ufw's key format.
  const sysctl = opts.forwarding === undefined ? stockSysctl : stockSysctl.replace('#net/ipv4/ip_forward=1\n', `${opts.forwarding}\n`);
  buildTree(root, {
    'etc/fstab': 'UUID=1 / ext4 defaults 0 1\n',
    'etc/ufw/ufw.conf': opts.enabled ? conf.replace('ENABLED=no', 'ENABLED=yes') : conf,
    'etc/ufw/sysctl.conf': sysctl,
    ...(opts.enabled ? { 'etc/systemd/system/multi-user.target.wants/ufw.service': { link: '/lib/systemd/system/ufw.service' } } : {}),
  });
  const lineOf = (text: string, s: string) => text.split('\n').indexOf(s) + 1;
  return {
    root,
    sysctlLine: opts.forwarding === undefined ? 0 : lineOf(sysctl, opts.forwarding),
    iptLine: lineOf(readFileSync(path.join(UFW, 'etc/default/ufw'), 'utf8'), 'IPT_SYSCTL=/etc/ufw/sysctl.conf'),
  };
}

describe("ufw's IPT_SYSCTL: /etc/ufw/sysctl.conf applied when ufw.service starts at boot", () => {
  it('stock ufw, installed but not enabled (ENABLED=no): nothing, and no warning', () => {
    const { root } = ufwRoot({ enabled: false, forwarding: 'net/ipv4/ip_forward=0' });
    const d = planOf(root, 'fail');
    expect(changesOf(d).filter((c) => c.id.startsWith('boot-script'))).toEqual([]);
    expect(forward(d)).toMatchObject({ at_boot: true, withdrawn_by: [] });
  });

  it('enabled with its stock sysctl.conf (no forwarding line): nothing either', () => {
    const { root } = ufwRoot({ enabled: true });
    const d = planOf(root, 'fail');
    expect(changesOf(d).filter((c) => c.id.startsWith('boot-script'))).toEqual([]);
    expect(d.promises.every((p) => p.at_boot)).toBe(true);
  });

  it('enabled, net/ipv4/ip_forward=0, conflict_policy: fail: an operator line naming both files and lines, and ip_forward is not promised at the next boot', () => {
    const { root, sysctlLine, iptLine } = ufwRoot({ enabled: true, forwarding: 'net/ipv4/ip_forward=0' });
    const d = planOf(root, 'fail');
    const line = changesOf(d).find((c) => c.id.startsWith('boot-script:'))!;
    expect(line).toMatchObject({ id: `boot-script:/etc/default/ufw:${iptLine}`, action: 'operator' });
    expect(line.summary).toContain(`whose /etc/ufw/sysctl.conf:${sysctlLine} leaves net.ipv4.ip_forward = 0, undoing net.ipv4.ip_forward = 1`);
    expect(line.summary).toContain('ufw.service applies /etc/ufw/sysctl.conf when it starts at boot (/lib/ufw/ufw-init runs sysctl -e -q -p $IPT_SYSCTL');
    expect(forward(d)).toMatchObject({ at_boot: false, withdrawn_by: [{ line: `boot-script:/etc/default/ufw:${iptLine}` }] });
    // Only the key the file undoes: the bridge keys keep their promise.
    expect(d.promises.find((p) => p.id === 'sysctl:net.bridge.bridge-nf-call-iptables')!.at_boot).toBe(true);
  });

  it('conflict_policy: resolve: the line is commented out of /etc/ufw/sysctl.conf, the promise holds, and --rollback restores every byte', () => {
    const { root, sysctlLine } = ufwRoot({ enabled: true, forwarding: 'net/ipv4/ip_forward=0' });
    const d = planOf(root, 'resolve');
    const fix = changesOf(d).find((c) => c.id === 'boot-script-resolve:/etc/ufw/sysctl.conf')!;
    expect(fix.action).toBe('update');
    expect(fix.summary).toContain(`commenting out line ${sysctlLine} of /etc/ufw/sysctl.conf`);
    expect(forward(d)).toMatchObject({ at_boot: true, withdrawn_by: [] });
    const notReports = (rel: string) => rel === 'root' || rel.startsWith('desired-');
    const before = snapshot(root, notReports);
    const sysctlBefore = readFileSync(path.join(root, 'etc/ufw/sysctl.conf'), 'utf8');
    const applied = reconcile(['--apply', '-f', desired(root, 'resolve'), '--root', root]);
    expect(applied.status, applied.stdout + applied.stderr).toBe(0);
    // Exactly that line, under the marker a sysctl.d conflict gets; every other byte as it was.
    const lines = sysctlBefore.split('\n');
    lines.splice(sysctlLine - 1, 1, MARKER, `# ${lines[sysctlLine - 1]}`);
    expect(readFileSync(path.join(root, 'etc/ufw/sysctl.conf'), 'utf8')).toBe(lines.join('\n'));
    // A second plan has nothing left to do for the file.
    expect(changesOf(planOf(root, 'resolve')).filter((c) => c.id.startsWith('boot-script'))).toEqual([]);
    const back = reconcile(['--rollback', '-f', desired(root, 'resolve'), '--root', root]);
    expect(back.status, back.stdout + back.stderr).toBe(0);
    expect(snapshot(root, notReports)).toEqual(before);
  });
});

describe('an if-up hook running sysctl -p on a plain config file', () => {
  const HOOK = '#!/bin/sh\n# forwarding as the old router had it\nsysctl -q -p /etc/network/forwarding.conf\n';
  const CONF = '# routing\nnet.ipv4.conf.all.rp_filter = 1\nnet.ipv4.ip_forward = 0\n';
  function hookRoot(): string {
    const root = mkdtempSync(path.join(tmpdir(), 'ifup-sysctl-'));
    roots.push(root);
    buildTree(root, { 'etc/fstab': 'UUID=1 / ext4 defaults 0 1\n', 'etc/network/if-up.d/forwarding': HOOK, 'etc/network/forwarding.conf': CONF });
    chmodSync(path.join(root, 'etc/network/if-up.d/forwarding'), 0o755);
    return root;
  }

  it('conflict_policy: resolve comments out line 3 of the file (not the hook), and the promise holds', () => {
    const root = hookRoot();
    const d = planOf(root, 'resolve');
    expect(
      changesOf(d)
        .filter((c) => c.id.startsWith('boot-script'))
        .map((c) => [c.id, c.action]),
    ).toEqual([['boot-script-resolve:/etc/network/forwarding.conf', 'update']]);
    expect(forward(d)).toMatchObject({ at_boot: true, withdrawn_by: [] });
    const applied = reconcile(['--apply', '-f', desired(root, 'resolve'), '--root', root]);
    expect(applied.status, applied.stdout + applied.stderr).toBe(0);
    expect(readFileSync(path.join(root, 'etc/network/forwarding.conf'), 'utf8')).toBe(
      `# routing\nnet.ipv4.conf.all.rp_filter = 1\n${MARKER}\n# net.ipv4.ip_forward = 0\n`,
    );
    expect(readFileSync(path.join(root, 'etc/network/if-up.d/forwarding'), 'utf8')).toBe(HOOK);
    expect(reconcile(['--rollback', '-f', desired(root, 'resolve'), '--root', root]).status).toBe(0);
    expect(readFileSync(path.join(root, 'etc/network/forwarding.conf'), 'utf8')).toBe(CONF);
  });

  it('conflict_policy: fail: an operator line naming FILE:line', () => {
    const d = planOf(hookRoot(), 'fail');
    const line = changesOf(d).find((c) => c.id === 'boot-script:/etc/network/if-up.d/forwarding:3')!;
    expect(line.action).toBe('operator');
    expect(line.summary).toContain('whose /etc/network/forwarding.conf:3 leaves net.ipv4.ip_forward = 0');
    expect(forward(d).at_boot).toBe(false);
  });
});

describe('sourcedValue: a variable as sourced shell files leave it', () => {
  it('the last file that sets it wins; quoting is removed; a value from elsewhere is unknown, naming the line', () => {
    const stock = readFileSync(path.join(UFW, 'etc/default/ufw'), 'utf8');
    const line = stock.split('\n').indexOf('IPT_SYSCTL=/etc/ufw/sysctl.conf') + 1;
    expect(sourcedValue([{ file: '/etc/default/ufw', text: stock }], 'IPT_SYSCTL')).toEqual({ value: '/etc/ufw/sysctl.conf', file: '/etc/default/ufw', line });
    expect(
      sourcedValue(
        [
          { file: '/a', text: 'X=/one\n' },
          { file: '/b', text: '# later\nexport X="/two"\n' },
        ],
        'X',
      ),
    ).toEqual({ value: '/two', file: '/b', line: 2 });
    expect(sourcedValue([{ file: '/a', text: 'X=$(cat /f)\n' }], 'X')).toEqual({
      unknown: 'X is set at /a:1 to a value the text alone does not fix',
      file: '/a',
      line: 1,
    });
    expect(
      sourcedValue(
        [
          { file: '/a', text: '#X=/one\n' },
          { file: '/b', text: null },
        ],
        'X',
      ),
    ).toBeNull();
  });
});
