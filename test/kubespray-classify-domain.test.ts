// Who fixes what, for task forms the whole-file mutation run of the kubespray
// group left unpinned: a loop over several units, modules and programs that
// take the same arguments as the ones that fix but do something else, and
// sysctl values as ansible.posix.sysctl's _parse_value writes them (a boolean
// or one of Ansible's boolean words is 1 or 0, other text is stripped, the
// name is stripped). Each expectation is what the module or program does
// when Ansible runs it, written out by hand.
import { describe, expect, it } from 'vitest';
import { N, audit } from './helpers/kubespray-fixture.js';

const SWAPOFF = '- name: Swap off\n  ansible.builtin.command: /sbin/swapoff -a\n';
const MODPROBE = '- name: Load\n  community.general.modprobe:\n    name: br_netfilter\n    state: present\n';
const PERSIST = '- name: Persist\n  ansible.builtin.copy:\n    dest: /etc/modules-load.d/k8s.conf\n    content: "br_netfilter\\n"\n';

describe('swap', () => {
  it('a masking task over a loop of units masks each, swap.target among them', async () => {
    const mask = '- name: Mask\n  ansible.builtin.systemd_service:\n    name: "{{ item }}"\n    masked: true\n  loop: [other.target, swap.target]\n';
    const w = await audit(SWAPOFF + mask);
    expect(w.swap.who).toBe('kubespray');
    expect(w.swap.evidence.map((e) => e.does)).toEqual(['runs /sbin/swapoff -a', 'masks swap.target']);
  });

  it('community.general.filesystem with fstype swap and state absent wipes a device signature: it removes no fstab entry', async () => {
    const wipe = '- name: Wipe\n  community.general.filesystem:\n    dev: /dev/sdb1\n    fstype: swap\n    state: absent\n';
    const w = await audit(SWAPOFF + wipe);
    expect(w.swap.who).toBe('operator');
    expect(w.swap.evidence.map((e) => e.does)).toEqual(['runs /sbin/swapoff -a']);
  });

  it('a module other than lineinfile or replace, even one taking their arguments, removes no fstab line', async () => {
    const other = '- name: Other\n  acme.tools.lineinfile2:\n    path: /etc/fstab\n    regexp: swap\n    state: absent\n';
    expect((await audit(SWAPOFF + other)).swap.who).toBe('operator');
    // the same arguments to lineinfile do remove the lines
    const lif = '- name: Fstab\n  ansible.builtin.lineinfile:\n    path: /etc/fstab\n    regexp: swap\n    state: absent\n';
    expect((await audit(SWAPOFF + lif)).swap.who).toBe('kubespray');
  });

  it('awk over /etc/fstab prints the lines without swap; it edits nothing (sed -i does)', async () => {
    const awk = "- name: Awk\n  ansible.builtin.shell: awk '!/swap/' /etc/fstab\n";
    expect((await audit(SWAPOFF + awk)).swap.who).toBe('operator');
    const sed = "- name: Sed\n  ansible.builtin.shell: sed -i '/swap/d' /etc/fstab\n";
    expect((await audit(SWAPOFF + sed)).swap.who).toBe('kubespray');
  });
});

describe('br_netfilter', () => {
  it('a command that only names br_netfilter (echo) loads nothing', async () => {
    const echo = '- name: Echo\n  ansible.builtin.command: echo br_netfilter\n';
    const w = await audit('', echo + PERSIST);
    expect(w.br_netfilter.who).toBe('operator');
    expect(w.br_netfilter.evidence.map((e) => e.does)).toEqual(['persists br_netfilter in /etc/modules-load.d/k8s.conf']);
  });

  it('copy with src: takes the file from the role\'s files/, not templates/: a template of that name naming br_netfilter persists nothing', async () => {
    const copy = '- name: Copy\n  ansible.builtin.copy:\n    src: k8s.conf\n    dest: /etc/modules-load.d/k8s.conf\n';
    const w = await audit('', MODPROBE + copy, { [`${N}/templates/k8s.conf`]: 'br_netfilter\n', [`${N}/files/k8s.conf`]: 'overlay\n' });
    expect(w.br_netfilter.evidence.map((e) => e.does)).toEqual(['loads br_netfilter (modprobe)']);
    // file with src: and state link makes a symbolic link to that path, it writes no module name
    const link = '- name: Link\n  ansible.builtin.file:\n    src: k8s.conf\n    dest: /etc/modules-load.d/k8s.conf\n    state: link\n';
    const l = await audit('', MODPROBE + link, { [`${N}/templates/k8s.conf`]: 'br_netfilter\n' });
    expect(l.br_netfilter.evidence.map((e) => e.does)).toEqual(['loads br_netfilter (modprobe)']);
    // the same file as a template task does persist it
    const tpl = '- name: Tpl\n  ansible.builtin.template:\n    src: k8s.conf\n    dest: /etc/modules-load.d/k8s.conf\n';
    expect((await audit('', MODPROBE + tpl, { [`${N}/templates/k8s.conf`]: 'br_netfilter\n' })).br_netfilter.who).toBe('kubespray');
  });
});

describe('ip_forward: the value ansible.posix.sysctl writes', () => {
  const forward = (value: string, name = 'net.ipv4.ip_forward') => `- name: F\n  ansible.posix.sysctl:\n    name: ${name}\n    value: ${value}\n`;

  it("a boolean, or one of Ansible's boolean words, is written as 1", async () => {
    for (const v of ['true', 'yes', '"yes"', '"on"', '"Y"', '"t"', '"TRUE"']) {
      const w = await audit(forward(v));
      expect(w.ip_forward.who, v).toBe('kubespray');
      expect(w.sysctl_keys.map((k) => [k.key, k.value]), v).toEqual([['net.ipv4.ip_forward', '1']]);
    }
  });

  it('false and "off" are written as 0: not credited', async () => {
    for (const v of ['false', '"off"', '"0"']) {
      const w = await audit(forward(v));
      expect(w.ip_forward.who, v).toBe('operator');
      expect(w.sysctl_keys.map((k) => k.value), v).toEqual(['0']);
    }
  });

  it('a boolean word with blanks around it is not one (the word is compared before stripping): "yes" is written, which the kernel refuses', async () => {
    const w = await audit(forward('" yes"'));
    expect(w.ip_forward.who).toBe('operator');
    expect(w.sysctl_keys.map((k) => k.value)).toEqual(['yes']);
  });

  it('the name is stripped', async () => {
    const w = await audit(forward('"1"', '" net.ipv4.ip_forward "'));
    expect(w.ip_forward.who).toBe('kubespray');
    expect(w.sysctl_keys.map((k) => k.key)).toEqual(['net.ipv4.ip_forward']);
  });
});

describe('port 10250', () => {
  it('stopping a unit named by a registered result that did not look the port up frees nothing', async () => {
    const t = [
      '- name: Which',
      '  ansible.builtin.command: cat /etc/hostname',
      '  register: found',
      '- name: Stop it',
      '  ansible.builtin.systemd_service:',
      '    name: "{{ found.stdout }}"',
      '    state: stopped',
      '',
    ].join('\n');
    const w = await audit(t);
    expect(w.port_10250.who).toBe('operator');
    expect(w.port_10250.evidence).toEqual([]);
  });
});
