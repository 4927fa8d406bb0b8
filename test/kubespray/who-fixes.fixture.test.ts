import { cp, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { KubesprayCheckout } from '../../src/kubespray/checkout.js';
import { walkRole } from '../../src/kubespray/tasks.js';
import { auditWhoFixes, formatEvidence, whoFixesJson } from '../../src/kubespray/who-fixes.js';

const FIXTURE = path.resolve('test/fixtures/kubespray-basic');
const P = 'roles/kubernetes/preinstall/tasks';
const N = 'roles/kubernetes/node/tasks';

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A private copy of the fixture under <root>/opt/ks/kubespray, read through Host like a real target. */
async function copyFixture(): Promise<{ root: string; dir: string; ck: () => KubesprayCheckout }> {
  const root = await mkdtemp(path.join(tmpdir(), 'ks-fixture-'));
  temps.push(root);
  const dir = '/opt/ks/kubespray';
  await cp(FIXTURE, path.join(root, dir), { recursive: true });
  return { root, dir, ck: () => new KubesprayCheckout(new Host({ root }), dir) };
}

async function edit(root: string, rel: string, fn: (s: string) => string): Promise<void> {
  const p = path.join(root, 'opt/ks/kubespray', rel);
  await writeFile(p, fn(await readFile(p, 'utf8')));
}

describe('task walker', () => {
  it('follows import_tasks/include_tasks (short and FQCN, file: form) and block/rescue/always', async () => {
    const { ck } = await copyFixture();
    const r = await walkRole(ck(), 'kubernetes/preinstall');
    expect(r.files).toEqual([`${P}/main.yml`, `${P}/swap.yml`, `${P}/checks.yml`, `${P}/kernel/sysctl.yml`]);
    const names = r.tasks.map((t) => `${t.ref.file.split('/').pop()}:${t.ref.line}:${t.module}:${t.ref.name}`);
    expect(names).toContain('sysctl.yml:8:sysctl:Turn on forwarding');
    expect(names).toContain('sysctl.yml:4:stat:Stat something first');
    expect(names).toContain('sysctl.yml:15:sysctl:Extra keys');
    // the import's `when` is inherited by the imported tasks
    const swapoff = r.tasks.find((t) => t.ref.name === 'Swap off now')!;
    expect(swapoff.when).toEqual(['kubelet_fail_swap_on']);
    expect(swapoff.rawModule).toBe('ansible.builtin.command');
    // an unknown collection's "command" keeps its full name
    expect(r.tasks.find((t) => t.ref.name === 'Not a builtin, never counted')!.module).toBe('acme.tools.command');
    expect(r.issues.map((i) => i.message)).toEqual([expect.stringContaining('templated file')]);
  });
});

describe('who fixes what, on the fixture', () => {
  it('derives every verdict with file, line and task name', async () => {
    const { ck } = await copyFixture();
    const w = await auditWhoFixes(ck());
    expect(whoFixesJson(w)).toEqual({
      swap: 'kubespray',
      br_netfilter: 'kubespray',
      ip_forward: 'kubespray',
      port_10250: 'operator',
      sysctl_file: '/etc/sysctl.d/90-fixture.conf',
    });
    expect(w.swap.evidence.map((e) => `${e.file}:${e.line} ${e.name} [${e.does}]`)).toEqual([
      `${P}/swap.yml:2 Drop swap lines from fstab [removes swap entries from /etc/fstab]`,
      `${P}/swap.yml:11 Keep swap.target masked [masks swap.target]`,
      `${P}/swap.yml:16 Swap off now [runs swapoff -a]`,
    ]);
    expect(w.br_netfilter.evidence.map((e) => `${e.file}:${e.line} ${e.name}`)).toEqual([
      `${N}/main.yml:4 Load bridge netfilter`,
      `${N}/main.yml:9 Load it by hand`,
      `${N}/main.yml:12 Keep it across reboots`,
    ]);
    expect(w.ip_forward.evidence).toHaveLength(1);
    expect(formatEvidence(w.ip_forward.evidence[0]!)).toBe(
      // In the block's rescue section: it runs only when the block fails, which Ansible decides at run time.
      `${P}/kernel/sysctl.yml:8 "Turn on forwarding": sets net.ipv4.ip_forward = 1 (sysctl module, file {{ k8s_sysctl_file }}); decided at run time: it is in the rescue section at ${P}/kernel/sysctl.yml:8 and runs only if a task of the block at ${P}/kernel/sysctl.yml:2 failed`,
    );
    // ss mentions 10250 but frees nothing
    expect(w.port_10250.evidence).toEqual([]);
    expect(w.port_10250.reason).toMatch(/no task stops or frees/);
  });

  it('resolves the sysctl file through kubespray_defaults, following {{ var }} chains', async () => {
    const { ck } = await copyFixture();
    const w = await auditWhoFixes(ck());
    expect(w.sysctl_file).toMatchObject({
      path: '/etc/sysctl.d/90-fixture.conf',
      variable: 'k8s_sysctl_file',
      definedAt: [
        { file: 'roles/kubespray_defaults/defaults/main/main.yml', line: 4, variable: 'k8s_sysctl_file' },
        { file: 'roles/kubespray_defaults/defaults/main/main.yml', line: 2, variable: 'k8s_sysctl_dir' },
      ],
    });
    expect(w.sysctl_keys.map((k) => `${k.key}=${k.value}`)).toEqual([
      'net.ipv4.ip_forward=1',
      'vm.overcommit_memory=1',
      'kernel.panic=10',
      'net.bridge.bridge-nf-call-iptables=1',
      'net.bridge.bridge-nf-call-ip6tables=1',
    ]);
  });

  it('falls back to roles/kubespray-defaults (older layout); with no definition left the sysctl file is unknown, loudly', async () => {
    const { root, ck } = await copyFixture();
    const base = path.join(root, 'opt/ks/kubespray/roles');
    await rename(path.join(base, 'kubespray_defaults'), path.join(base, 'kubespray-defaults'));
    expect((await auditWhoFixes(ck())).sysctl_file?.path).toBe('/etc/sysctl.d/90-fixture.conf');
    await rm(path.join(base, 'kubespray-defaults'), { recursive: true });
    const w = await auditWhoFixes(ck());
    expect(w.sysctl_file).toBeNull();
    expect(w.warnings).toContainEqual({
      file: `${P}/kernel/sysctl.yml`,
      line: 8,
      expression: '{{ k8s_sysctl_file }}',
      message: "sysctl_file: {{ k8s_sysctl_file }} cannot be evaluated: 'k8s_sysctl_file' is undefined",
    });
  });

  it("the running role's own default beats kubespray_defaults (Ansible's role-default precedence)", async () => {
    const { root, ck } = await copyFixture();
    await edit(root, 'roles/kubernetes/preinstall/defaults/main.yml', (s) => `${s}k8s_sysctl_file: /etc/sysctl.d/00-role-default.conf\n`);
    const w = await auditWhoFixes(ck());
    expect(w.sysctl_file).toMatchObject({
      path: '/etc/sysctl.d/00-role-default.conf',
      definedAt: [{ file: 'roles/kubernetes/preinstall/defaults/main.yml', line: 6, variable: 'k8s_sysctl_file' }],
    });
  });
});

describe('mutations flip verdicts', () => {
  it("removing the swapoff task makes swap the operator's job", async () => {
    const { root, ck } = await copyFixture();
    await edit(root, `${P}/swap.yml`, (s) => s.replace(/- name: Swap off now\n.*\n.*\n/, ''));
    const w = await auditWhoFixes(ck());
    expect(w.swap.who).toBe('operator');
    expect(w.swap.reason).toMatch(/no task runs swapoff/);
    // the persistence tasks are still shown as evidence
    expect(w.swap.evidence.map((e) => e.name)).toEqual(['Drop swap lines from fstab', 'Keep swap.target masked']);
  });

  it("removing swap persistence also makes swap the operator's job", async () => {
    const { root, ck } = await copyFixture();
    await edit(root, `${P}/swap.yml`, (s) => s.replace(/- name: Drop swap lines[\s\S]*?(?=- name: Swap off now)/, ''));
    const w = await auditWhoFixes(ck());
    expect(w.swap.who).toBe('operator');
    expect(w.swap.reason).toMatch(/comes back at reboot/);
  });

  it("removing the modules-load.d persistence makes br_netfilter the operator's job", async () => {
    const { root, ck } = await copyFixture();
    await edit(root, `${N}/main.yml`, (s) => s.replace(/  always:[\s\S]*?mode: "0644"\n/, ''));
    const w = await auditWhoFixes(ck());
    expect(w.br_netfilter.who).toBe('operator');
    expect(w.br_netfilter.reason).toMatch(/no task persists it/);
  });

  it("adding a task that frees 10250 makes port_10250 kubespray's job", async () => {
    const { root, ck } = await copyFixture();
    await edit(root, `${N}/kubelet.yml`, (s) => `${s}\n- name: Free kubelet's port\n  ansible.builtin.shell: fuser -k 10250/tcp\n`);
    const w = await auditWhoFixes(ck());
    expect(w.port_10250.who).toBe('kubespray');
    expect(w.port_10250.evidence.map((e) => `${e.file}:${e.line} ${e.name}`)).toEqual([`${N}/kubelet.yml:7 Free kubelet's port`]);
  });

  it('a systemd stop of the unit holding 10250 counts too; the port can come from a default', async () => {
    const { root, ck } = await copyFixture();
    // kubespray_defaults is in every play; a default of the preinstall role is not seen by the node role's tasks.
    await edit(root, 'roles/kubespray_defaults/defaults/main/other.yml', (s) => `${s}kubelet_port: 10250\n`);
    await edit(root, `${N}/kubelet.yml`, (s) => `${s}\n- name: Kill the listener\n  command: "fuser -k {{ kubelet_port }}/tcp"\n`);
    expect((await auditWhoFixes(ck())).port_10250.who).toBe('kubespray');
    // The same default in another role's defaults: the node role's command cannot be evaluated, so unknown, loudly.
    await edit(root, 'roles/kubespray_defaults/defaults/main/other.yml', (s) => s.replace('kubelet_port: 10250\n', ''));
    await edit(root, 'roles/kubernetes/preinstall/defaults/main.yml', (s) => `${s}kubelet_port: 10250\n`);
    const unknown = await auditWhoFixes(ck());
    expect(unknown.port_10250.who).toBe('unknown');
    expect(unknown.warnings.map((w) => `${w.file}:${w.line} ${w.expression}`)).toContain(`${N}/kubelet.yml:7 fuser -k {{ kubelet_port }}/tcp`);
    const { root: root2, ck: ck2 } = await copyFixture();
    await edit(
      root2,
      `${N}/kubelet.yml`,
      (s) => `${s}\n- name: Stop whatever holds port 10250\n  systemd:\n    name: "{{ kubelet_port_check.stdout }}"\n    state: stopped\n`,
    );
    expect((await auditWhoFixes(ck2())).port_10250.who).toBe('kubespray');
  });

  it("removing the sysctl task makes ip_forward the operator's job", async () => {
    const { root, ck } = await copyFixture();
    await edit(root, `${P}/kernel/sysctl.yml`, (s) => s.replace('net.ipv4.ip_forward', 'net.ipv4.tcp_syncookies'));
    const w = await auditWhoFixes(ck());
    expect(w.ip_forward.who).toBe('operator');
    expect(w.ip_forward.reason).toMatch(/net\.ipv4\.ip_forward/);
  });
});
