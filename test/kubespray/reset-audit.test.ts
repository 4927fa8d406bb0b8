// Whether kubespray's reset role removes a former node's files, on trees in
// kubespray's layout written for these tests (the forms roles/reset uses
// from v2.20.0 to master: `file: path={{ item }} state=absent` over
// with_items of literal paths and of templates kubespray_defaults defines,
// "/etc/systemd/system/{{ item }}" over unit names, and loop:). The
// expectations are Ansible's documented behaviour, written out: a task
// removes each item's path and everything below it; a task whose when is
// false removes nothing; an item that cannot be evaluated could be any path.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { KubesprayCheckout } from '../../src/kubespray/checkout.js';
import { auditReset } from '../../src/kubespray/reset-audit.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const DEFAULTS = 'roles/kubespray_defaults/defaults/main.yml';
const RESET = 'roles/reset/tasks/main.yml';

function checkout(files: Tree): KubesprayCheckout {
  const root = mkdtempSync(path.join(tmpdir(), 'reset-audit-'));
  roots.push(root);
  buildTree(root, Object.fromEntries(Object.entries(files).map(([k, v]) => [`ks/${k}`, v])));
  return new KubesprayCheckout(new Host({ root }), '/ks');
}

const defaults = ['kube_config_dir: /etc/kubernetes', 'etcd_data_dir: /var/lib/etcd', 'bin_dir: /usr/local/bin', ''].join('\n');

const removeTask = (items: string[], extra: string[] = []) =>
  [
    '- name: Reset | delete some files and directories',
    '  file:',
    '    path: "{{ item }}"',
    '    state: absent',
    ...extra,
    '  with_items:',
    ...items.map((i) => `    - ${i}`),
    '  ignore_errors: true',
  ].join('\n');

const services = [
  '- name: Reset | remove services',
  '  file:',
  '    path: "/etc/systemd/system/{{ item }}"',
  '    state: absent',
  '  loop:',
  '    - kubelet.service',
  '    - etcd.service',
].join('\n');

describe("reset.yml's file removals, evaluated for the node", () => {
  it('a path is cleared by the item that is it or an ancestor, named with the task; a path no item covers is not', async () => {
    const ck = checkout({
      [DEFAULTS]: defaults,
      [RESET]: `---\n${services}\n\n${removeTask(['"{{ kube_config_dir }}"', '/var/lib/kubelet', '"{{ etcd_data_dir }}"', '/etc/cni'])}\n`,
    });
    const a = await auditReset(ck, [
      '/etc/kubernetes/manifests/kube-apiserver.yaml',
      '/var/lib/etcd',
      '/etc/cni/net.d/10-flannel.conflist',
      '/etc/systemd/system/kubelet.service',
      '/etc/rancher/k3s',
      '/etc/kubernetes-other',
    ]);
    const by = (p: string) => {
      const v = a.answers.get(p)!;
      return v.clears === true ? `${v.by.file}:${v.by.line} ${v.by.removes}` : v.clears;
    };
    expect(by('/etc/kubernetes/manifests/kube-apiserver.yaml')).toBe(`${RESET}:10 /etc/kubernetes`);
    expect(by('/var/lib/etcd')).toBe(`${RESET}:10 /var/lib/etcd`);
    expect(by('/etc/cni/net.d/10-flannel.conflist')).toBe(`${RESET}:10 /etc/cni`);
    expect(by('/etc/systemd/system/kubelet.service')).toBe(`${RESET}:2 /etc/systemd/system/kubelet.service`);
    expect(by('/etc/rancher/k3s')).toBe(false);
    // An ancestor is a directory above, not a name that starts the same way.
    expect(by('/etc/kubernetes-other')).toBe(false);
  });

  it('a task whose when is false removes nothing', async () => {
    const ck = checkout({ [DEFAULTS]: defaults, [RESET]: `---\n${removeTask(['/var/lib/kubelet'], ['  when: false'])}\n` });
    expect((await auditReset(ck, ['/var/lib/kubelet'])).answers.get('/var/lib/kubelet')).toMatchObject({ clears: false });
  });

  it('an item that cannot be evaluated makes every path no other item covers unknown, naming file, line and expression', async () => {
    const ck = checkout({ [DEFAULTS]: defaults, [RESET]: `---\n${removeTask(['"{{ kube_config_dir }}"', '"{{ no_such_dir }}"'])}\n` });
    const a = await auditReset(ck, ['/etc/kubernetes/pki', '/var/lib/etcd']);
    expect(a.answers.get('/etc/kubernetes/pki')).toMatchObject({ clears: true });
    const u = a.answers.get('/var/lib/etcd')!;
    expect(u).toMatchObject({ clears: 'unknown', warning: { file: RESET, line: 2 } });
    expect(u.clears === 'unknown' && u.warning.expression).toContain('no_such_dir');
  });

  it('a templated state could be absent: unknown; a kernel object (an interface) is not a file the role removes: unknown', async () => {
    const templated = removeTask(['/var/lib/kubelet']).replace('state: absent', 'state: "{{ reset_state }}"');
    const ck = checkout({ [DEFAULTS]: defaults, [RESET]: `---\n${templated}\n` });
    const a = await auditReset(ck, ['/var/lib/kubelet', '/sys/class/net/cni0']);
    expect(a.answers.get('/var/lib/kubelet')).toMatchObject({ clears: 'unknown' });
    expect(a.answers.get('/sys/class/net/cni0')).toMatchObject({ clears: 'unknown' });
  });
});

describe('the FormerNode finding says what reset.yml and cluster.yml do with each piece', () => {
  it('on a former node with a checkout: reset.yml removes each piece (file:line), cluster.yml none, in --json', async () => {
    const { cpSync, writeFileSync } = await import('node:fs');
    const { spawnSync } = await import('node:child_process');
    const root = mkdtempSync(path.join(tmpdir(), 'reset-audit-plan-'));
    roots.push(root);
    cpSync(path.resolve('test/fixtures/kubespray-basic'), path.join(root, 'opt/ks/kubespray'), { recursive: true });
    const reset = `---\n${services}\n\n${removeTask(['"{{ kube_config_dir }}"', '/var/lib/kubelet', '"{{ etcd_data_dir }}"', '/etc/cni'])}\n`;
    buildTree(root, {
      'opt/ks/kubespray/roles/reset/tasks/main.yml': reset,
      'opt/ks/kubespray/roles/reset/defaults/main.yml': defaults,
      'root/ks/inventory/lab/inventory.ini': '[kube_control_plane]\nnode1\n\n[k8s_cluster:children]\nkube_control_plane\n',
      'etc/kubernetes/manifests/kube-apiserver.yaml': 'apiVersion: v1\nkind: Pod\n',
      'etc/kubernetes/kubelet.conf': 'apiVersion: v1\nkind: Config\n',
      'var/lib/etcd/member/snap/db': 'x',
      'etc/systemd/system/kubelet.service': '[Service]\nExecStart=/usr/bin/kubelet\n',
      'etc/fstab': 'UUID=1 / ext4 defaults 0 1\n',
    });
    const f = path.join(root, 'desired.yaml');
    writeFileSync(
      f,
      'reports_dir: /root/ks/preflight\nfirst_boot: off\nkubespray:\n  dir: /opt/ks/kubespray\n  inventory: /root/ks/inventory/lab/inventory.ini\n  node: node1\nresources: []\n',
    );
    const r = spawnSync(process.execPath, [path.resolve('dist/reconcile.mjs'), '--plan', '--json', '-f', f, '--root', root], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    const doc = JSON.parse(r.stdout) as { findings: Array<{ check?: string; message: string; evidence?: string[] }> };
    const finding = doc.findings.find((x) => x.check === 'FormerNode');
    expect(finding, r.stdout + r.stderr).toBeDefined();
    const pieces = finding!.evidence!.length;
    expect(finding!.message).toContain(`kubespray's reset.yml removes all ${pieces} (evaluated from roles/reset for this node)`);
    expect(finding!.message).toContain('cluster.yml clears none of them (no task of kubernetes/preinstall or kubernetes/node removes them)');
    const line = (p: string) => finding!.evidence!.find((e) => e.startsWith(`${p}: `));
    expect(line('/etc/kubernetes/manifests/kube-apiserver.yaml')).toContain(`reset.yml removes it (${RESET}:10); cluster.yml does not`);
    expect(line('/var/lib/etcd')).toContain(`reset.yml removes it (${RESET}:10)`);
    expect(line('/etc/systemd/system/kubelet.service')).toContain(`reset.yml removes it (${RESET}:2)`);
  });
});
