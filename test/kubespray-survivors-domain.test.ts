// Who fixes what, for the forms the fresh whole-file mutation run of the
// kubespray group (17:46-18:08) still left unpinned. Each expectation is what
// the shell, the program or the Ansible module does when the task runs,
// written out by hand: a command substitution ends before the program it
// prefixes, curl -k is not fuser -k, ansible-core's boolean() knows only 1 and
// 0 among numbers, only set_fact sets variables, a module's str argument given
// a list names no unit.
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { execa } from 'execa';
import { walkRole } from '../src/kubespray/tasks.js';
import { ansiblePython } from './helpers/ansible-python.js';
import { P, audit, checkout } from './helpers/kubespray-fixture.js';

const SWAPOFF = '- name: Swap off\n  ansible.builtin.command: /sbin/swapoff -a\n';
const PERSIST = '- name: Persist\n  ansible.builtin.copy:\n    dest: /etc/modules-load.d/k8s.conf\n    content: "br_netfilter\\n"\n';
// ss prints the process holding the port; its output is what a later task stops.
const FIND = "- name: Find\n  ansible.builtin.shell: ss -ltnpH 'sport = :10250'\n  register: owner\n";
const does = (evidence: { does: string }[]) => evidence.map((e) => e.does);

describe('swap', () => {
  it('an assignment from a command substitution prefixes the command: X=$(cat f) swapoff -a runs swapoff', async () => {
    const w = await audit('- name: Off\n  ansible.builtin.shell: X=$(cat /etc/hostname) swapoff -a\n');
    expect(does(w.swap.evidence)).toEqual(['runs X=$(cat /etc/hostname) swapoff -a']);
  });

  it('a command that renders empty unless a run-time result says otherwise could run swapoff: unknown', async () => {
    const reg = '- name: Probe\n  ansible.builtin.command: cat /proc/swaps\n  register: swaps\n';
    const cond = '- name: Maybe off\n  ansible.builtin.shell: "{% if not swaps %}swapoff -a{% endif %}"\n';
    expect((await audit(reg + cond)).swap.who).toBe('unknown');
  });

  it('command (no shell) running cat with a run-time argument runs cat, whatever the argument: no swap fix', async () => {
    const reg = '- name: Probe\n  ansible.builtin.command: cat /proc/swaps\n  register: swaps\n';
    const cat = '- name: Cat\n  ansible.builtin.command: cat {{ swaps.stdout }}\n';
    const w = await audit(reg + cat);
    expect(w.swap.who).toBe('operator');
  });

  it('a shell command that is a registered result\'s stdout runs whatever that printed, swapoff perhaps: unknown (was operator)', async () => {
    const reg = '- name: Probe\n  ansible.builtin.command: cat /etc/swap-command\n  register: swap_cmd\n';
    const w = await audit(reg + '- name: Run\n  ansible.builtin.shell: "{{ swap_cmd.stdout }}"\n');
    expect(w.swap.who).toBe('unknown');
    expect(w.swap.reason).toContain('_raw_params {{ swap_cmd.stdout }} cannot be evaluated');
  });

  it('shell with cmd: taken from a run-time result could run swapoff: unknown', async () => {
    const reg = '- name: Probe\n  ansible.builtin.command: cat /etc/swap-command\n  register: swap_cmd\n';
    const run = '- name: Run\n  ansible.builtin.shell:\n    cmd: "{{ swap_cmd.stdout }}"\n';
    expect((await audit(reg + run)).swap.who).toBe('unknown');
  });
});

describe('port 10250', () => {
  it('curl -k (insecure TLS) asking the kubelet on 10250 frees nothing', async () => {
    const w = await audit('- name: Health\n  ansible.builtin.command: curl -k https://127.0.0.1:10250/healthz\n');
    expect(w.port_10250.who).toBe('operator');
  });

  it('fuser without -k only reports the holder, even with a log file whose name has -k in it', async () => {
    const w = await audit('- name: Who\n  ansible.builtin.shell: fuser -v 10250/tcp 2>/tmp/fuser-kubelet.log\n');
    expect(w.port_10250.who).toBe('operator');
  });

  it('fuser -k on port 8080 frees 8080, even run from a directory called 10250', async () => {
    const w = await audit('- name: Kill\n  ansible.builtin.command: /srv/10250/fuser -k 8080/tcp\n');
    expect(w.port_10250.who).toBe('operator');
  });

  it('ss run from a directory called 10250, asked about no port, finds no owner of 10250: stopping its output is no fix', async () => {
    const find = '- name: Find\n  ansible.builtin.command: /srv/10250/ss -ltnpH\n  register: owner\n';
    const stop = '- name: Stop\n  ansible.builtin.systemd:\n    name: "{{ owner.stdout }}"\n    state: stopped\n';
    expect((await audit(find + stop)).port_10250.who).toBe('operator');
    // the same stop after ss asked about 10250 stops its owner
    expect((await audit(FIND + stop)).port_10250.who).toBe('kubespray');
  });

  it('echo stop after ss names port 10250 stops nothing', async () => {
    const w = await audit("- name: Say\n  ansible.builtin.shell: ss -ltn 'sport = :10250' && echo stop\n");
    expect(w.port_10250.who).toBe('operator');
  });

  it('enabled: 0 is false to ansible-core\'s boolean(): the unit found on 10250 is disabled', async () => {
    const stop = '- name: Disable\n  ansible.builtin.systemd:\n    name: "{{ owner.stdout }}"\n    enabled: 0\n';
    const w = await audit(FIND + stop);
    expect(w.port_10250.who).toBe('kubespray');
  });

  it('enabled: 2 is no boolean to ansible-core (the module fails): nothing is disabled', async () => {
    const stop = '- name: Disable\n  ansible.builtin.systemd:\n    name: "{{ owner.stdout }}"\n    enabled: 2\n';
    const w = await audit(FIND + stop);
    expect(w.port_10250.who).toBe('operator');
  });

  it('systemd name: given a list names no unit (the str argument becomes "[...]"): nothing is stopped', async () => {
    const stop = '- name: Stop\n  ansible.builtin.systemd:\n    name: ["{{ owner.stdout }}"]\n    state: stopped\n';
    const w = await audit(FIND + stop);
    expect(w.port_10250.who).toBe('operator');
  });
});

describe('br_netfilter', () => {
  it('modprobe with state: true fails its choices (absent, present): nothing is loaded', async () => {
    const load = '- name: Load\n  community.general.modprobe:\n    name: br_netfilter\n    state: true\n';
    const w = await audit('', load + PERSIST);
    expect(does(w.br_netfilter.evidence)).toEqual(['persists br_netfilter in /etc/modules-load.d/k8s.conf']);
  });
});

describe('ip_forward and the sysctl file', () => {
  it('a name templated around item is rendered per item: net.ipv4.{{ item }} over [ip_forward]', async () => {
    const t = '- name: Fwd\n  ansible.posix.sysctl:\n    name: "net.ipv4.{{ item }}"\n    value: "1"\n  loop: [ip_forward]\n';
    expect((await audit(t)).ip_forward.who).toBe('kubespray');
  });

  it('the file of the task that writes ip_forward among a loop of keys is the one chosen, over a file more tasks use', async () => {
    const fwd = '- name: Fwd\n  ansible.posix.sysctl:\n    name: "{{ item }}"\n    value: "1"\n    sysctl_file: /etc/sysctl.d/99-k8s.conf\n  loop: [net.ipv4.ip_forward, net.bridge.bridge-nf-call-iptables]\n';
    const other = (n: string) => `- name: O${n}\n  ansible.posix.sysctl:\n    name: kernel.k${n}\n    value: "1"\n    sysctl_file: /etc/sysctl.d/50-other.conf\n`;
    const w = await audit(other('1') + other('2') + fwd);
    expect(w.sysctl_file?.path).toBe('/etc/sysctl.d/99-k8s.conf');
  });

  it('only set_fact sets variables: a sysctl task\'s value: argument leaves the role default value alone', async () => {
    const first = '- name: Rp\n  ansible.posix.sysctl:\n    name: net.ipv4.conf.all.rp_filter\n    value: "1"\n';
    const fwd = '- name: Fwd\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "{{ value }}"\n';
    const w = await audit(first + fwd, '', { [`${P}/defaults/main.yml`]: '---\nvalue: "0"\n' });
    expect(w.ip_forward.who).toBe('operator');
    expect(w.sysctl_keys.map((k) => [k.key, k.value])).toEqual([['net.ipv4.conf.all.rp_filter', '1'], ['net.ipv4.ip_forward', '0']]);
  });

  it('a set_fact whose when: is false sets nothing, and no note says it may', async () => {
    const sf = '- name: Move\n  ansible.builtin.set_fact:\n    ks_sysctl: /etc/sysctl.d/moved.conf\n  when: false\n';
    const fwd = '- name: Fwd\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n    sysctl_file: "{{ ks_sysctl }}"\n';
    const w = await audit(sf + fwd, '', { [`${P}/defaults/main.yml`]: '---\nks_sysctl: /etc/sysctl.d/99-sysctl.conf\n' });
    expect(w.sysctl_file?.path).toBe('/etc/sysctl.d/99-sysctl.conf');
    expect(w.notes.filter((n) => n.includes('ks_sysctl'))).toEqual([]);
  });
});

const FWD_TASKS = '---\n- name: Fwd\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n';

describe('the task walk', () => {
  it('action: or local_action: given null is refused by ansible-core; the walk lists no module call and goes on', async () => {
    const tasks = [{ name: 'n', action: null }, { name: 'l', local_action: null }];
    const r = await execa(ansiblePython(), [path.resolve('test/helpers/ansible-task-args.py')], { input: JSON.stringify(tasks) });
    const parsed = (JSON.parse(r.stdout) as { parsed: { error?: string }[] }).parsed;
    expect(parsed.map((x) => x.error !== undefined)).toEqual([true, true]);
    const ours = await walkRole(await checkout({ [`${P}/tasks/main.yml`]: JSON.stringify([...tasks, { name: 'c', command: 'true' }]) }), 'kubernetes/preinstall');
    expect(ours.tasks.map((t) => t.ref.name)).toEqual(['c']);
  }, 60_000);

  it('a task naming a module key and action: or local_action: is refused by ansible-core (conflicting action statements): no module call', async () => {
    const tasks = [
      { name: 'both', 'ansible.builtin.command': '/sbin/swapoff -a', action: 'ansible.builtin.shell echo' },
      { name: 'both2', 'ansible.builtin.command': '/sbin/swapoff -a', local_action: { module: 'ansible.builtin.shell', _raw_params: 'echo' } },
    ];
    const r = await execa(ansiblePython(), [path.resolve('test/helpers/ansible-task-args.py')], { input: JSON.stringify(tasks) });
    const parsed = (JSON.parse(r.stdout) as { parsed: { error?: string }[] }).parsed;
    expect(parsed.map((x) => x.error?.includes('conflicting action statements'))).toEqual([true, true]);
    const ours = await walkRole(await checkout({ [`${P}/tasks/main.yml`]: JSON.stringify([...tasks, { name: 'c', command: 'true' }]) }), 'kubernetes/preinstall');
    expect(ours.tasks.map((t) => t.ref.name)).toEqual(['c']);
  }, 60_000);

  it('include_role tasks_from: fwd.yml is the file fwd.yml (ansible-core tries fwd.yml.yml, fwd.yml.yaml, then fwd.yml)', async () => {
    const inc = '- name: Inc\n  ansible.builtin.include_role:\n    name: netcfg\n    tasks_from: fwd.yml\n';
    const w = await audit(inc, '', { 'roles/netcfg/tasks/fwd.yml': FWD_TASKS });
    expect(w.ip_forward.who).toBe('kubespray');
  });

  it('include_role tasks_from: fwd.yml-v2 is the file fwd.yml-v2.yml when that exists (the name only contains .yml)', async () => {
    const inc = '- name: Inc\n  ansible.builtin.include_role:\n    name: netcfg\n    tasks_from: fwd.yml-v2\n';
    const w = await audit(inc, '', { 'roles/netcfg/tasks/fwd.yml-v2.yml': FWD_TASKS });
    expect(w.ip_forward.who).toBe('kubespray');
  });

  it('include_tasks over a loop with a number among the files is not followed (ansible-core finds no file 5): a loud gap, no crash', async () => {
    const inc = '- name: Inc\n  ansible.builtin.include_tasks: "{{ item }}"\n  loop: [fwd.yml, 5]\n';
    const w = await audit(inc, '', { [`${P}/tasks/fwd.yml`]: FWD_TASKS });
    expect(w.ip_forward.who).toBe('unknown');
    expect(w.notes.some((n) => n.includes('"Inc"') && n.includes('not followed'))).toBe(true);
  });
});
