// Kubespray's sysctl_file under the ordering engine. ansibleSysctlEdit is
// compared with ansible.posix.sysctl's own read_sysctl_file + fix_lines +
// write_sysctl, run by the python ansible runs under; the ordering findings
// are worked by hand from sysctl.d(5): files sort by name across the
// directories, the last assignment of a key wins, and procps' sysctl --system
// applies /etc/sysctl.conf after them all.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execaSync } from 'execa';
import { Host } from '../../src/host.js';
import { ansibleSysctlEdit, orderingFindings, treeAfterKubespray } from '../../src/kubespray/sysctl-order.js';
import type { DesiredFile } from '../../src/desired-state.js';
import type { SysctlAssignmentByKubespray } from '../../src/kubespray/who-fixes.js';
import { observeSysctlTree } from '../../src/sysctl/observe.js';
import { ansiblePython } from '../helpers/ansible-python.js';
import { buildTree } from '../helpers/tree.js';
import type { Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots) await rm(r, { recursive: true, force: true });
});

describe('ansibleSysctlEdit (ansible.posix.sysctl fix_lines)', () => {
  it("rewrites the key's first line, drops its repeats, keeps comments, appends a missing key", () => {
    const before = '# Debian\n#net.ipv4.ip_forward=1\nnet.ipv4.ip_forward = 0\nkernel.panic = 5\nnet.ipv4.ip_forward=0\n';
    expect(ansibleSysctlEdit(before, 'net.ipv4.ip_forward', '1')).toBe('# Debian\n#net.ipv4.ip_forward=1\nnet.ipv4.ip_forward=1\nkernel.panic=5\n');
    expect(ansibleSysctlEdit('kernel.panic = 5\n', 'vm.overcommit_memory', '1')).toBe('kernel.panic=5\nvm.overcommit_memory=1\n');
  });
});

/** ansible.posix.sysctl's edit of `content` for key=value, as the module writes the file. */
function posixSysctl(content: string, key: string, value: string): string {
  const script = [
    'import sys, tempfile, os',
    'from ansible_collections.ansible.posix.plugins.modules.sysctl import SysctlModule',
    'content, key, value = sys.argv[1], sys.argv[2], sys.argv[3]',
    'fd, p = tempfile.mkstemp(); os.write(fd, content.encode()); os.close(fd)',
    'm = object.__new__(SysctlModule)',
    "m.sysctl_file = p; m.file_lines = []; m.file_values = {}; m.args = {'name': key, 'value': value, 'state': 'present'}",
    'm.read_sysctl_file(); m.fix_lines(); os.unlink(p)',
    // write_sysctl writes each fixed line stripped, with "\n".
    "sys.stdout.write(''.join(l.strip() + '\\n' for l in m.fixed_lines))",
  ].join('\n');
  return execaSync(ansiblePython(), ['-c', script, content, key, value], { stripFinalNewline: false }).stdout;
}

describe('ansibleSysctlEdit against ansible.posix.sysctl', () => {
  const CASES: Array<[string, string, string]> = [
    ['', 'net.ipv4.ip_forward', '1'],
    ['# Debian\n#net.ipv4.ip_forward=1\nnet.ipv4.ip_forward = 0\nkernel.panic = 5\nnet.ipv4.ip_forward=0\n', 'net.ipv4.ip_forward', '1'],
    ['  ; note\n\n\tkernel.panic=5   \nno equals sign\n', 'vm.overcommit_memory', '1'],
    ['a = b = c\nnet.ipv4.ip_forward=1', 'net.ipv4.ip_forward', '1'],
    ['kernel.panic = 5\r\nnet.ipv4.ip_forward = 0\r\n', 'net.ipv4.ip_forward', '1'],
    ['-net.ipv4.ip_forward = 0\nnet.ipv4.ip_forward=0\n', 'net.ipv4.ip_forward', '1'],
  ];
  for (const [content, key, value] of CASES) {
    it(JSON.stringify(content), () => {
      expect(ansibleSysctlEdit(content, key, value)).toBe(posixSysctl(content, key, value));
    });
  }
});

async function treeOf(files: Tree) {
  const root = await mkdtemp(path.join(tmpdir(), 'ks-sysctl-order-'));
  roots.push(root);
  buildTree(root, files);
  return (await observeSysctlTree(new Host({ root }))).tree;
}

const FORWARD: SysctlAssignmentByKubespray = {
  key: 'net.ipv4.ip_forward',
  value: '1',
  ref: { file: 'roles/kubernetes/preinstall/tasks/0080-system-configurations.yml', line: 40, name: 'Enable ip forwarding' },
};
const KS_FILE = '/etc/sysctl.d/99-sysctl.conf';

describe('treeAfterKubespray', () => {
  it("Debian's 99-sysctl.conf -> ../sysctl.conf: kubespray writes /etc/sysctl.conf, seen through both names", async () => {
    const tree = await treeOf({ 'etc/sysctl.conf': '#kernel.panic=0\nnet.ipv4.ip_forward = 0\n', 'etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' } });
    const after = treeAfterKubespray(tree, KS_FILE, '/etc/sysctl.conf', [FORWARD], []);
    const entry = after.files.find((f) => f.path === KS_FILE)!;
    expect(entry.realPath).toBe('/etc/sysctl.conf');
    expect(entry.content).toBe('#kernel.panic=0\nnet.ipv4.ip_forward=1\n');
    expect(after.sysctlConf!.content).toBe('#kernel.panic=0\nnet.ipv4.ip_forward=1\n');
  });
  it('a missing sysctl_file is created with the keys alone; a desired file in sysctl.d is counted with its content', async () => {
    const tree = await treeOf({ 'etc/sysctl.d/10-a.conf': 'kernel.panic=1\n' });
    const owned: DesiredFile[] = [{ path: '/etc/sysctl.d/50-k8s.conf', content: 'net.ipv4.ip_forward=1\n', resource: 'SysctlFile/k8s' }];
    const after = treeAfterKubespray(tree, KS_FILE, KS_FILE, [FORWARD], owned);
    expect(after.files.map((f) => [f.path, f.content])).toEqual(
      expect.arrayContaining([
        ['/etc/sysctl.d/10-a.conf', 'kernel.panic=1\n'],
        ['/etc/sysctl.d/50-k8s.conf', 'net.ipv4.ip_forward=1\n'],
        [KS_FILE, 'net.ipv4.ip_forward=1\n'],
      ]),
    );
  });
});

describe('orderingFindings', () => {
  it('a later file that sets another value beats kubespray: a warning naming the line; an earlier one does not', async () => {
    const tree = await treeOf({
      'etc/sysctl.d/10-early.conf': 'net.ipv4.ip_forward = 0\n',
      'usr/lib/sysctl.d/99-zz-vendor.conf': 'net.ipv4.ip_forward = 0\n',
    });
    const f = orderingFindings(tree, { path: KS_FILE, link: null, realPath: KS_FILE }, [FORWARD], []);
    const warnings = f.filter((x) => x.level === 'warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toContain("net.ipv4.ip_forward would be 0, not kubespray's 1: /usr/lib/sysctl.d/99-zz-vendor.conf:1");
    expect(warnings[0]!.message).not.toContain('10-early');
  });
  it('a later file with the same value is an info line, not a warning; nothing later, no finding', async () => {
    const same = await treeOf({ 'etc/sysctl.d/99-zz.conf': 'net.ipv4.ip_forward=1\n' });
    const f = orderingFindings(same, { path: KS_FILE, link: null, realPath: KS_FILE }, [FORWARD], []);
    expect(f.map((x) => x.level)).toEqual(['info']);
    expect(f[0]!.message).toContain("stays kubespray's 1: /etc/sysctl.d/99-zz.conf:1");
    const none = await treeOf({ 'etc/sysctl.d/10-a.conf': 'net.ipv4.ip_forward=0\n' });
    expect(orderingFindings(none, { path: KS_FILE, link: null, realPath: KS_FILE }, [FORWARD], [])).toEqual([]);
  });
  it('/etc/sysctl.conf setting another value beats it under sysctl --system only', async () => {
    const tree = await treeOf({ 'etc/sysctl.conf': 'net.ipv4.ip_forward=0\n' });
    const f = orderingFindings(tree, { path: KS_FILE, link: null, realPath: KS_FILE }, [FORWARD], []);
    const w = f.filter((x) => x.level === 'warning');
    expect(w).toHaveLength(1);
    expect(w[0]!.message).toMatch(/sysctl --system/);
    expect(w[0]!.message).not.toMatch(/at boot/);
  });
  it("a masked sysctl_file is said to be replaced by kubespray's file", async () => {
    const tree = await treeOf({ 'etc/sysctl.d/99-sysctl.conf': { link: '/dev/null' } });
    const f = orderingFindings(tree, { path: KS_FILE, link: '/dev/null', realPath: '/dev/null' }, [FORWARD], []);
    expect(f).toContainEqual({ level: 'info', message: `${KS_FILE} is a symlink to /dev/null (a mask): counted as replaced by kubespray's file` });
  });
});
