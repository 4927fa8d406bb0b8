// Boot scripts that write sysctls without `sysctl -w`: `sysctl -p
// FILE` (and -f, --load, -pFILE, no FILE), and writes into /proc/sys by
// redirection or tee. The oracle is the shell and procps themselves: each
// script runs under dash in a private network namespace (net.* sysctls are
// per namespace; this machine's own values are never written) and a private
// mount namespace where the fixture's /usr/local/etc and /etc/sysctl.conf are
// bind-mounted over this machine's, starting from ip_forward = 1; what
// /proc/sys/net/ipv4/ip_forward reads afterwards is what the script leaves
// at boot, since these scripts run after systemd-sysctl. The plan (CLI,
// --root on the same files, each script an executable if-up.d hook that
// ifupdown's run-parts runs at boot) must name the script line exactly when
// the oracle ends at 0; a script whose effect depends on what only the run
// knows must be a loud "unknown" naming file:line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUNDLE, IP_FORWARD_DESIRED, planJsonRun } from '../helpers/bundle-cli.js';
import { buildTree } from '../helpers/tree.js';

const ETC = '/usr/local/etc';

// The files the scripts load, under a directory this machine has too (bind-mounted over it in the oracle).
const FILES: Record<string, string> = {
  'zero.conf': 'net.ipv4.ip_forward = 0\n',
  'one.conf': '# forwarding for the VPN\nnet.ipv4.ip_forward = 1\n',
  // ip_forward and conf.all.forwarding are one value in the kernel: the later line wins.
  'zero-then-all-one.conf': 'net.ipv4.ip_forward = 0\nnet/ipv4/conf/all/forwarding=1\n',
  'all-zero.conf': 'net.ipv4.conf.all.forwarding = 0\n',
  'glob-zero.conf': 'net.ipv4.conf.*.forwarding = 0\n',
  'all-one.conf': 'net.ipv4.conf.all.forwarding = 1\n',
  'other-key.conf': 'net.ipv4.ip_forward_update_priority = 0\nnet.ipv4.tcp_syncookies = 1\n',
  'value-zero': '0\n',
};

interface Case {
  name: string;
  script: string;
  /** Only when what the script does depends on something the run alone knows: the reason, for the reader. */
  unknown?: string;
}

const F = (n: string) => `${ETC}/${n}`;
const CASES: Case[] = [
  // sysctl -p and its spellings (procps sysctl --help: "-p, --load[=<file>]", "-f alias of -p").
  { name: 'p-zero', script: `sysctl -p ${F('zero.conf')}` },
  { name: 'p-one', script: `sysctl -p ${F('one.conf')} >/dev/null` },
  { name: 'p-glued', script: `sysctl -p${F('zero.conf')}` },
  { name: 'load-eq', script: `sysctl --load=${F('zero.conf')}` },
  { name: 'load-space', script: `sysctl --load ${F('zero.conf')}` },
  { name: 'f-alias', script: `sysctl -q -f ${F('zero.conf')}` },
  { name: 'p-two-files-last-one', script: `sysctl -p ${F('zero.conf')} ${F('one.conf')}` },
  { name: 'p-two-files-last-zero', script: `sysctl -e -p ${F('one.conf')} ${F('zero.conf')}` },
  { name: 'p-coupled-later-line', script: `sysctl -p ${F('zero-then-all-one.conf')}` },
  { name: 'p-coupled-zero', script: `sysctl -p ${F('all-zero.conf')}` },
  { name: 'p-glob', script: `sysctl -p ${F('glob-zero.conf')}` },
  // One list across the files: the glob skips conf.all.forwarding, which the first file names.
  { name: 'p-glob-skips-named', script: `sysctl -p ${F('all-one.conf')} ${F('glob-zero.conf')}` },
  // With -p every operand is a file, even one with "=".
  {
    name: 'p-operand-with-eq',
    script: `sysctl net.ipv4.ip_forward=0 -p ${F('one.conf')} 2>/dev/null`,
    unknown: 'a relative file name "net.ipv4.ip_forward=0": the working directory decides',
  },
  { name: 'p-other-keys', script: `sysctl -p ${F('other-key.conf')} >/dev/null 2>&1` },
  { name: 'p-variable-literal', script: `CONF=${F('zero.conf')}\nsysctl -p "$CONF"` },
  { name: 'p-in-if', script: `if [ -r ${F('zero.conf')} ]; then\n  sysctl -p ${F('zero.conf')}\nfi` },
  { name: 'p-sh-c', script: `sh -c 'sysctl -p ${F('zero.conf')} && true'` },
  { name: 'p-variable-unknown', script: `sysctl -p "$FWCONF" 2>/dev/null || true`, unknown: 'FWCONF comes from the environment' },
  { name: 'p-missing', script: `sysctl -p ${F('missing.conf')} 2>/dev/null || true`, unknown: 'the file may exist by the time the script runs' },
  // Writes by redirection and tee.
  { name: 'echo-redirect', script: 'echo 0 > /proc/sys/net/ipv4/ip_forward' },
  { name: 'echo-append', script: 'echo 0 >>/proc/sys/net/ipv4/ip_forward' },
  { name: 'echo-one', script: 'echo 1 > /proc/sys/net/ipv4/ip_forward' },
  { name: 'echo-n', script: 'echo -n 0 > /proc/sys/net/ipv4/ip_forward' },
  { name: 'echo-coupled', script: 'echo 0 > /proc/sys/net/ipv4/conf/all/forwarding' },
  { name: 'printf', script: "printf '%s\\n' 0 > /proc/sys/net/ipv4/ip_forward" },
  { name: 'printf-plain', script: 'printf 0 >/proc/sys/net/ipv4/ip_forward' },
  { name: 'tee', script: 'echo 0 | tee /proc/sys/net/ipv4/ip_forward >/dev/null' },
  { name: 'tee-a-one', script: 'echo 1 | tee -a /proc/sys/net/ipv4/ip_forward' },
  { name: 'fd-before-redirect', script: 'echo 0 2>/dev/null >/proc/sys/net/ipv4/ip_forward' },
  { name: 'stderr-only', script: 'echo 0 2>/proc/sys/net/ipv4/ip_forward >/dev/null' },
  { name: 'other-key', script: 'echo 0 > /proc/sys/net/ipv4/ip_forward_update_priority' },
  { name: 'variable-path', script: 'KEY=/proc/sys/net/ipv4/ip_forward\necho 0 > "$KEY"' },
  { name: 'braced-variable', script: 'dir=/proc/sys/net/ipv4\nv=0\necho "$v" > ${dir}/ip_forward' },
  { name: 'in-case', script: 'case "$MODE" in\n  start|*) echo 0 > /proc/sys/net/ipv4/ip_forward ;;\nesac' },
  { name: 'to-dev-null', script: 'echo 0 > /dev/null\necho 0 >/tmp/not-proc' },
  // A path known in part that can be no wanted key's (nor a coupled one's): nothing to judge.
  { name: 'iface-rp-filter', script: 'echo 0 > /proc/sys/net/ipv4/conf/$IFACE/rp_filter 2>/dev/null || true' },
  { name: 'cat-file', script: `cat ${F('value-zero')} > /proc/sys/net/ipv4/ip_forward`, unknown: 'cat prints a file the scan does not model' },
  {
    name: 'iface-variable',
    script: 'echo 0 > /proc/sys/net/ipv4/conf/$IFACE/forwarding 2>/dev/null || true',
    unknown: 'IFACE is set by ifupdown at run time (it may be "all")',
  },
];

let fixture: string;
let sysctlConf: string;

/** ip_forward after the script, run as the oracle describes. */
function oracle(script: string): string {
  const file = path.join(fixture, 'oracle.sh');
  writeFileSync(file, `#!/bin/sh\n${script}\n`);
  const setup = [
    'set -e',
    `mount --bind ${fixture}/root${ETC} ${ETC}`,
    `mount --bind ${sysctlConf} /etc/sysctl.conf`,
    'echo 1 > /proc/sys/net/ipv4/ip_forward',
    'set +e',
    `PATH=/usr/sbin:/usr/bin:/sbin:/bin dash ${file} >/dev/null 2>&1`,
    'cat /proc/sys/net/ipv4/ip_forward',
  ].join('\n');
  const r = spawnSync('unshare', ['-m', '-n', '--propagation', 'private', 'sh', '-c', setup], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`oracle run failed (${r.status}): ${r.stderr}`);
  return r.stdout.trim();
}

interface PlanDoc {
  resources: Array<{ type: string; changes: Array<{ id: string; action: string; summary: string }> }>;
  findings: Array<{ level: string; message: string }>;
}
let plan: PlanDoc;
const truth = new Map<string, string>();

beforeAll(() => {
  fixture = mkdtempSync(path.join(tmpdir(), 'boot-sysctl-'));
  const root = path.join(fixture, 'root');
  sysctlConf = path.join(fixture, 'sysctl.conf');
  writeFileSync(sysctlConf, '# empty\n');
  const tree: Record<string, string> = { 'etc/fstab': '' };
  for (const [n, text] of Object.entries(FILES)) tree[`usr/local/etc/${n}`] = text;
  for (const c of CASES) tree[`etc/network/if-up.d/${c.name}`] = `#!/bin/sh\n${c.script}\n`;
  buildTree(root, tree);
  for (const c of CASES) chmodSync(path.join(root, 'etc/network/if-up.d', c.name), 0o755);
  for (const c of CASES) truth.set(c.name, oracle(c.script));
  const desired = path.join(fixture, 'desired.yaml');
  const r = planJsonRun(desired, IP_FORWARD_DESIRED, root);
  expect(r.status, r.stderr).toBe(2);
  plan = JSON.parse(r.stdout) as PlanDoc;
}, 120_000);
afterAll(() => rmSync(fixture, { recursive: true, force: true }));

const hook = (name: string) => `/etc/network/if-up.d/${name}`;
const linesNamed = (name: string) => plan.resources.find((r) => r.type === 'SysctlFile')!.changes.filter((c) => c.id.startsWith(`boot-script:${hook(name)}:`));
const warningsFor = (name: string) => plan.findings.filter((f) => f.level === 'warning' && f.message.includes(`${hook(name)}:`));

describe('a script that writes ip_forward at boot: the plan names it exactly when the shell and procps leave ip_forward at 0', () => {
  for (const c of CASES.filter((x) => x.unknown === undefined)) {
    it(c.name, () => {
      const undone = truth.get(c.name) !== '1';
      expect(
        linesNamed(c.name).map((x) => x.action),
        `oracle: ip_forward = ${truth.get(c.name)}`,
      ).toEqual(undone ? ['operator'] : []);
      // Known: no "cannot be judged" for it.
      expect(warningsFor(c.name)).toEqual([]);
    });
  }
  it('the oracle itself: sysctl -p and redirection do reach ip_forward in the namespace (both outcomes occur)', () => {
    expect(new Set(truth.values())).toEqual(new Set(['0', '1']));
  });
  it('the line names the loaded file and its line', () => {
    expect(linesNamed('p-two-files-last-zero')[0]!.summary).toContain(`${F('zero.conf')}:1`);
    expect(linesNamed('p-coupled-zero')[0]!.summary).toMatch(/conf\.all\.forwarding.*couples/);
    expect(linesNamed('echo-redirect')[0]!.summary).toContain('/proc/sys/net/ipv4/ip_forward');
  });
});

describe('what only the run can know stays unknown, loud, with file:line', () => {
  for (const c of CASES.filter((x) => x.unknown !== undefined)) {
    it(`${c.name} (${c.unknown})`, () => {
      expect(warningsFor(c.name).map((w) => w.message)).toEqual([expect.stringMatching(new RegExp(`^SysctlFile: unknown: ${hook(c.name)}:2: `))]);
    });
  }
});

describe('sysctl -p of /etc/sysctl.conf: judged as the plan leaves that file', () => {
  it('a conflicting line there is resolved by SysctlFile, and `sysctl -p` in rc.local then loads the fixed file: ip_forward stays 1', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'boot-sysctl-conf-'));
    try {
      buildTree(root, {
        'etc/fstab': '',
        'etc/sysctl.conf': '# local settings\nnet.ipv4.ip_forward = 0\n',
        'etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' },
        'etc/rc.local': '#!/bin/sh -e\nsysctl -p\nexit 0\n',
      });
      chmodSync(path.join(root, 'etc/rc.local'), 0o755);
      const desired = path.join(root, 'desired.yaml');
      const planned = JSON.parse(planJsonRun(desired, IP_FORWARD_DESIRED, root).stdout) as PlanDoc;
      const ids = planned.resources.find((r) => r.type === 'SysctlFile')!.changes.map((c) => c.id);
      expect(ids).toContain('conflict:/etc/sysctl.conf');
      expect(ids.filter((i) => i.startsWith('boot-script:'))).toEqual([]);
      // Before the fix the oracle shows rc.local's `sysctl -p` leaving 0; after apply, 1.
      writeFileSync(sysctlConf, readFileSync(path.join(root, 'etc/sysctl.conf')));
      expect(oracle('sysctl -p')).toBe('0');
      const applied = spawnSync(process.execPath, [BUNDLE, '--apply', '-f', desired, '--root', root], { encoding: 'utf8' });
      expect(applied.status, applied.stdout + applied.stderr).toBe(0);
      writeFileSync(sysctlConf, readFileSync(path.join(root, 'etc/sysctl.conf')));
      expect(oracle('sysctl -p')).toBe('1');
    } finally {
      rmSync(root, { recursive: true, force: true });
      writeFileSync(sysctlConf, '# empty\n');
    }
  });

  it('without that fix (conflict_policy: fail), rc.local`s `sysctl -p` is named as undoing it at boot', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'boot-sysctl-conf-'));
    try {
      buildTree(root, {
        'etc/fstab': '',
        'etc/sysctl.conf': '# local settings\nnet.ipv4.ip_forward = 0\n',
        'etc/rc.local': '#!/bin/sh -e\nsysctl -p\nexit 0\n',
      });
      chmodSync(path.join(root, 'etc/rc.local'), 0o755);
      const desired = path.join(root, 'desired.yaml');
      const planned = JSON.parse(
        planJsonRun(
          desired,
          'reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SysctlFile\n    file: /etc/sysctl.d/k8s.conf\n    conflict_policy: fail\n    settings:\n      net.ipv4.ip_forward: 1\n',
          root,
        ).stdout,
      ) as PlanDoc;
      const line = planned.resources.find((r) => r.type === 'SysctlFile')!.changes.find((c) => c.id === 'boot-script:/etc/rc.local:2');
      expect(line?.action).toBe('operator');
      expect(line?.summary).toContain('/etc/sysctl.conf:2');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('sysctl --system in a script adds nothing: it applies the sysctl.d tree, which SysctlFile keeps right under procps`s rules', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'boot-sysctl-conf-'));
    try {
      buildTree(root, { 'etc/fstab': '', 'etc/rc.local': '#!/bin/sh\nsysctl --system >/dev/null\n' });
      chmodSync(path.join(root, 'etc/rc.local'), 0o755);
      const desired = path.join(root, 'desired.yaml');
      const planned = JSON.parse(planJsonRun(desired, IP_FORWARD_DESIRED, root).stdout) as PlanDoc;
      expect(planned.findings.filter((f) => f.message.includes('rc.local'))).toEqual([]);
      expect(planned.resources.find((r) => r.type === 'SysctlFile')!.changes.filter((c) => c.id.startsWith('boot-script:'))).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
