// Who fixes what, one task form at a time, in a two-role tree in kubespray's
// layout. Each expectation is what the task does when Ansible runs it
// (ansible-core's module semantics: community.general.modprobe,
// ansible.posix.sysctl, ansible.builtin.systemd_service, mount, lineinfile,
// replace, copy, command/shell), written out by hand; a third-party module
// with a builtin's short name does nothing the builtin does.
import { describe, expect, it } from 'vitest';
import { walkRole } from '../../src/kubespray/tasks.js';
import { formatEvidence } from '../../src/kubespray/who-fixes.js';
import { P, N, checkout, audit } from '../helpers/kubespray-fixture.js';
import path from 'node:path';
import { execa } from 'execa';
import { ansiblePython } from '../helpers/ansible-python.js';

/** Audits a tree whose preinstall and node roles hold these task lists (YAML text), plus extra files. */

const SWAPOFF = '- name: Swap off\n  ansible.builtin.command: /sbin/swapoff -a\n';
const MASK = '- name: Mask swap\n  ansible.builtin.systemd_service:\n    name: swap.target\n    masked: true\n';
const MODPROBE = '- name: Load\n  community.general.modprobe:\n    name: br_netfilter\n    state: present\n';
const PERSIST = '- name: Persist\n  ansible.builtin.copy:\n    dest: /etc/modules-load.d/k8s.conf\n    content: "br_netfilter\\n"\n';

describe('swap', () => {
  it('swapoff and a masked swap.target: kubespray', async () => {
    expect((await audit(SWAPOFF + MASK)).swap.who).toBe('kubespray');
  });

  it('nothing at all: the operator, told to turn it off and keep it off', async () => {
    const w = await audit('- name: Other\n  ansible.builtin.debug:\n    msg: hi\n');
    expect(w.swap.who).toBe('operator');
    expect(w.swap.reason).toMatch(/^no task turns swap off/);
  });

  it('persistence without swapoff: swap stays on during the install', async () => {
    const w = await audit(MASK);
    expect(w.swap.who).toBe('operator');
    expect(w.swap.reason).toMatch(/^no task runs swapoff/);
  });

  it('swapoff without persistence: swap comes back at reboot', async () => {
    const w = await audit(SWAPOFF);
    expect(w.swap.who).toBe('operator');
    expect(w.swap.reason).toMatch(/comes back at reboot/);
  });

  it('masked: false unmasks, and service/systemd spell the same module', async () => {
    expect((await audit(SWAPOFF + MASK.replace('masked: true', 'masked: false'))).swap.who).toBe('operator');
    expect(
      (await audit(SWAPOFF + MASK.replace('ansible.builtin.systemd_service', 'ansible.builtin.systemd').replace('masked: true', 'masked: yes'))).swap.who,
    ).toBe('kubespray');
    // Masking some other unit leaves swap.target alone.
    expect((await audit(SWAPOFF + MASK.replace('swap.target', 'dev-sda5.swap'))).swap.who).toBe('operator');
  });

  it("a third-party module named like systemd masks nothing Ansible's systemd would", async () => {
    const w = await audit(SWAPOFF + MASK.replace('ansible.builtin.systemd_service', 'acme.tools.systemd'));
    expect(w.swap.who).toBe('operator');
    expect(w.swap.evidence.map((e) => e.does)).toEqual(['runs /sbin/swapoff -a']);
  });

  it('mount with fstype swap and state absent removes the fstab entry; unmounted does not', async () => {
    const mount = (state: string) => `- name: Fstab\n  ansible.posix.mount:\n    name: none\n    fstype: swap\n    state: ${state}\n`;
    const w = await audit(SWAPOFF + mount('absent'));
    expect(w.swap.who).toBe('kubespray');
    expect(w.swap.evidence.map((e) => e.does)).toContain('removes swap entries from /etc/fstab');
    expect((await audit(SWAPOFF + mount('unmounted'))).swap.who).toBe('operator');
    expect((await audit(SWAPOFF + mount('absent').replace('fstype: swap', 'fstype: ext4'))).swap.who).toBe('operator');
  });

  it('lineinfile removes fstab swap lines only with state absent; replace always rewrites them', async () => {
    const line = (extra: string) => `- name: Fstab\n  ansible.builtin.lineinfile:\n    path: /etc/fstab\n    regexp: '\\sswap\\s'\n${extra}`;
    expect((await audit(SWAPOFF + line('    state: absent\n'))).swap.who).toBe('kubespray');
    expect((await audit(SWAPOFF + line('    line: "# no swap"\n'))).swap.who).toBe('operator');
    const replace = "- name: Fstab\n  ansible.builtin.replace:\n    dest: /etc/fstab\n    regexp: '^([^#].*\\sswap\\s.*)$'\n    replace: '# \\1'\n";
    expect((await audit(SWAPOFF + replace)).swap.who).toBe('kubespray');
    // Another file, or a pattern about something else, is no swap persistence.
    expect((await audit(SWAPOFF + replace.replace('/etc/fstab', '/etc/crypttab'))).swap.who).toBe('operator');
    expect((await audit(SWAPOFF + line('    state: absent\n').replace("'\\sswap\\s'", "'\\s/boot\\s'"))).swap.who).toBe('operator');
  });

  it('sed over /etc/fstab with a swap pattern persists; sed over another file does not', async () => {
    const sed = (file: string) => `- name: Fstab\n  ansible.builtin.shell: sed -i '/ swap / s/^/#/' ${file}\n`;
    expect((await audit(SWAPOFF + sed('/etc/fstab'))).swap.who).toBe('kubespray');
    expect((await audit(SWAPOFF + sed('/etc/crypttab'))).swap.who).toBe('operator');
  });
});

describe('br_netfilter', () => {
  it('modprobe now and modules-load.d: kubespray', async () => {
    expect((await audit('', MODPROBE + PERSIST)).br_netfilter.who).toBe('kubespray');
  });

  it("modprobe's persistent: present writes modules-load.d itself", async () => {
    const w = await audit('', MODPROBE + '    persistent: present\n');
    expect(w.br_netfilter.who).toBe('kubespray');
    expect(w.br_netfilter.evidence.map((e) => e.does)).toEqual(['loads br_netfilter (modprobe)', 'persists br_netfilter (modprobe persistent: present)']);
    expect((await audit('', MODPROBE + '    persistent: disabled\n')).br_netfilter.who).toBe('operator');
  });

  it('modprobe state: absent unloads it', async () => {
    const w = await audit('', MODPROBE.replace('state: present', 'state: absent') + PERSIST);
    expect(w.br_netfilter.who).toBe('operator');
    expect(w.br_netfilter.reason).toBe('br_netfilter is written to modules-load.d but no task loads it now');
  });

  it('a module that merely names br_netfilter loads nothing', async () => {
    const blacklist = '- name: Un-blacklist\n  community.general.kernel_blacklist:\n    name: br_netfilter\n    state: absent\n';
    expect((await audit('', blacklist + PERSIST)).br_netfilter.who).toBe('operator');
    expect((await audit('', MODPROBE.replace('community.general.modprobe', 'acme.tools.modprobe') + PERSIST)).br_netfilter.who).toBe('operator');
  });

  it('modprobe over a literal loop loads each item', async () => {
    const loop = '- name: Load\n  community.general.modprobe:\n    name: "{{ item }}"\n    state: present\n  loop:\n    - overlay\n    - br_netfilter\n';
    expect((await audit('', loop + PERSIST)).br_netfilter.who).toBe('kubespray');
    expect((await audit('', loop.replace('- br_netfilter', '- nf_conntrack') + PERSIST)).br_netfilter.who).toBe('operator');
  });

  it('the modprobe command loads it, modprobe -r removes it', async () => {
    expect((await audit('', '- name: Load\n  ansible.builtin.command: /sbin/modprobe br_netfilter\n' + PERSIST)).br_netfilter.who).toBe('kubespray');
    const w = await audit('', '- name: Unload\n  ansible.builtin.command: modprobe -r br_netfilter\n' + PERSIST);
    expect(w.br_netfilter.who).toBe('operator');
  });

  it('persistence: lineinfile in /etc/modules, blockinfile, or a template that writes the name', async () => {
    const lineinfile = '- name: Persist\n  ansible.builtin.lineinfile:\n    path: /etc/modules\n    line: br_netfilter\n';
    expect((await audit('', MODPROBE + lineinfile)).br_netfilter.who).toBe('kubespray');
    expect((await audit('', MODPROBE + lineinfile + '    state: absent\n')).br_netfilter.who).toBe('operator');
    const block =
      '- name: Persist\n  ansible.builtin.blockinfile:\n    path: /usr/lib/modules-load.d/k8s.conf\n    block: |\n      overlay\n      br_netfilter\n';
    expect((await audit('', MODPROBE + block)).br_netfilter.who).toBe('kubespray');
    const template = '- name: Persist\n  ansible.builtin.template:\n    src: modules.j2\n    dest: /etc/modules-load.d/k8s.conf\n';
    expect(
      (await audit('', MODPROBE + template, { [`${N}/templates/modules.j2`]: '{% for m in ["overlay", "br_netfilter"] %}{{ m }}\n{% endfor %}' })).br_netfilter
        .who,
    ).toBe('kubespray');
    expect((await audit('', MODPROBE + template, { [`${N}/templates/modules.j2`]: 'overlay\n' })).br_netfilter.who).toBe('operator');
  });

  it('content that only contains the name as part of a word persists nothing; a file outside modules-load.d neither', async () => {
    expect((await audit('', MODPROBE + PERSIST.replace('br_netfilter', 'br_netfilter_extra'))).br_netfilter.who).toBe('operator');
    expect((await audit('', MODPROBE + PERSIST.replace('/etc/modules-load.d/', '/etc/modprobe.d/'))).br_netfilter.who).toBe('operator');
  });
});

describe('ip_forward', () => {
  const sysctl = (value: string, extra = '') => `- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "${value}"\n${extra}`;

  it('the sysctl module setting 1: kubespray; 0, or state absent: the operator', async () => {
    const w = await audit(sysctl('1'));
    expect(w.ip_forward.who).toBe('kubespray');
    expect(w.ip_forward.evidence.map((e) => e.does)).toEqual(['sets net.ipv4.ip_forward = 1 (sysctl module, file /etc/sysctl.conf)']);
    expect((await audit(sysctl('0'))).ip_forward.who).toBe('operator');
    expect((await audit(sysctl('1', '    state: absent\n'))).ip_forward.who).toBe('operator');
    expect((await audit(sysctl('1'))).sysctl_file?.path).toBe('/etc/sysctl.conf');
  });

  it('a module that is not sysctl sets nothing, whatever its arguments are called', async () => {
    const w = await audit(sysctl('1').replace('ansible.posix.sysctl', 'acme.tools.sysctl'));
    expect(w.ip_forward.who).toBe('operator');
    expect(w.sysctl_file).toBeNull();
    expect(w.sysctl_keys).toEqual([]);
  });

  it('over a loop of name/value items each pair counts on its own', async () => {
    const loop = [
      '- name: Sysctls',
      '  ansible.posix.sysctl:',
      '    name: "{{ item.name }}"',
      '    value: "{{ item.value }}"',
      '    sysctl_file: /etc/sysctl.d/99-k8s.conf',
      '  loop:',
      '    - { name: net.ipv4.ip_forward, value: 0 }',
      '    - { name: net.ipv4.tcp_syncookies, value: 1 }',
      '',
    ].join('\n');
    const w = await audit(loop);
    expect(w.ip_forward.who).toBe('operator');
    expect(w.sysctl_keys.map((k) => [k.key, k.value])).toEqual([
      ['net.ipv4.ip_forward', '0'],
      ['net.ipv4.tcp_syncookies', '1'],
    ]);
    expect(w.sysctl_file?.path).toBe('/etc/sysctl.d/99-k8s.conf');
    const on = await audit(loop.replace('ip_forward, value: 0', 'ip_forward, value: 1'));
    expect(on.ip_forward.who).toBe('kubespray');
  });

  it('a task whose when is false does nothing here; its keys are not set, but its file is still the default (issue 44)', async () => {
    const w = await audit(sysctl('1', '  when: false\n'));
    expect(w.ip_forward.who).toBe('operator');
    expect(w.sysctl_keys).toEqual([]);
    // ansible.posix.sysctl's own default for sysctl_file (its documentation): the task names none.
    expect(w.sysctl_file?.path).toBe('/etc/sysctl.conf');
    expect(formatEvidence(w.ip_forward.evidence[0]!)).toMatch(/does nothing on this host: .* when: false is false$/);
  });

  it('a when that cannot be evaluated makes the verdict unknown, with a warning naming file and line', async () => {
    const w = await audit(sysctl('1', '  when: some_undefined_flag\n'));
    expect(w.ip_forward.who).toBe('unknown');
    expect(w.warnings.map((x) => [x.file, x.line, x.expression])).toEqual([[`${P}/tasks/main.yml`, 6, 'some_undefined_flag']]);
  });
});

describe('port 10250', () => {
  it('fuser -k on the port frees it; fuser without -k only looks', async () => {
    expect((await audit('', '- name: Free\n  ansible.builtin.shell: fuser -k 10250/tcp\n')).port_10250.who).toBe('kubespray');
    expect((await audit('', '- name: Look\n  ansible.builtin.shell: fuser 10250/tcp\n')).port_10250.who).toBe('operator');
    expect((await audit('', '- name: Free\n  ansible.builtin.shell: fuser -k 10251/tcp\n')).port_10250.who).toBe('operator');
    // psmisc's fuser (fuser(1), and its usage text) spells -k also as --kill.
    expect((await audit('', '- name: Free\n  ansible.builtin.shell: fuser --kill 10250/tcp\n')).port_10250.who).toBe('kubespray');
    expect((await audit('', '- name: Free\n  ansible.builtin.shell: fuser --kill -n tcp 10250\n')).port_10250.who).toBe('kubespray');
  });

  it('a kill fed by a lookup of the port frees it; a kill alone does not', async () => {
    expect((await audit('', '- name: Free\n  ansible.builtin.shell: kill $(lsof -t -i:10250)\n')).port_10250.who).toBe('kubespray');
    expect((await audit('', '- name: Kill\n  ansible.builtin.shell: pkill kubelet\n')).port_10250.who).toBe('operator');
    expect((await audit('', "- name: Stop\n  ansible.builtin.shell: systemctl stop $(ss -Hltnp 'sport = :10250' | cut -d, -f2)\n")).port_10250.who).toBe(
      'kubespray',
    );
  });

  it('stopping the unit a registered lookup found frees it; stopping a fixed unit does not', async () => {
    const find = "- name: Find\n  ansible.builtin.shell: ss -Hltnp 'sport = :10250'\n  register: holder\n";
    const stop = (name: string, how: string) => `- name: Stop\n  ansible.builtin.systemd_service:\n    name: ${name}\n    ${how}\n`;
    expect((await audit('', find + stop('"{{ holder.stdout }}"', 'state: stopped'))).port_10250.who).toBe('kubespray');
    expect((await audit('', find + stop('"{{ holder.stdout }}"', 'enabled: false'))).port_10250.who).toBe('kubespray');
    expect((await audit('', find + stop('"{{ holder.stdout }}"', 'state: started'))).port_10250.who).toBe('operator');
    expect((await audit('', find + stop('old-agent.service', 'state: stopped'))).port_10250.who).toBe('operator');
    // The lookup must come first: a result registered later is not there yet.
    expect((await audit('', stop('"{{ holder.stdout }}"', 'state: stopped') + find)).port_10250.who).not.toBe('kubespray');
  });
});

describe('the task walk', () => {
  it('import_role walks the other role with the import condition; include_tasks with a loop walks each file', async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]: [
        '---',
        '- name: Other role',
        '  ansible.builtin.import_role:',
        '    name: extra',
        '    tasks_from: swap',
        '  when: do_swap',
        '- name: Each',
        '  ansible.builtin.include_tasks: "{{ item }}"',
        '  loop:',
        '    - a.yml',
        '    - b.yml',
        '',
      ].join('\n'),
      'roles/extra/tasks/swap.yml': '- name: "Off"\n  command: swapoff -a\n', // quoted: a bare Off is YAML 1.1 false
      [`${P}/tasks/a.yml`]: '- name: A\n  debug: { msg: a }\n',
      [`${P}/tasks/b.yml`]: '- name: B\n  debug: { msg: b }\n',
    });
    const r = await walkRole(ck, 'kubernetes/preinstall');
    expect(r.files).toEqual([`${P}/tasks/main.yml`, 'roles/extra/tasks/swap.yml', `${P}/tasks/a.yml`, `${P}/tasks/b.yml`]);
    expect(r.tasks.map((t) => [t.ref.name, t.role, t.module, t.when])).toEqual([
      ['Off', 'extra', 'command', ['do_swap']],
      ['A', 'kubernetes/preinstall', 'debug', []],
      ['B', 'kubernetes/preinstall', 'debug', []],
    ]);
    expect(r.tasks[0]!.conditions.map((c) => c.level)).toEqual(['import']);
    expect(r.issues).toEqual([]);
  });

  it('action: and local_action: name the module; args: are merged under the inline ones', async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]: [
        '---',
        '- name: Action string',
        '  action: command /sbin/swapoff -a',
        '- name: Action map',
        '  local_action:',
        '    module: ansible.builtin.sysctl',
        '    name: net.ipv4.ip_forward',
        '  args:',
        '    value: "1"',
        '- name: With items',
        '  ansible.builtin.debug:',
        '    msg: "{{ item }}"',
        '  with_items: [x, y]',
        '',
      ].join('\n'),
    });
    const r = await walkRole(ck, 'kubernetes/preinstall');
    expect(r.tasks.map((t) => [t.module, t.args, t.loop])).toEqual([
      ['command', { _raw_params: '/sbin/swapoff -a' }, null],
      ['sysctl', { name: 'net.ipv4.ip_forward', value: '1' }, null],
      ['debug', { msg: '{{ item }}' }, ['x', 'y']],
    ]);
  });

  it('an include loop is reported once and not followed again; a missing file is an unfollowed include', async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]: '---\n- name: Self\n  include_tasks: main.yml\n- name: Gone\n  import_tasks: nothere.yml\n',
    });
    const r = await walkRole(ck, 'kubernetes/preinstall');
    expect(r.issues.map((i) => [i.ref.line, i.message, i.unfollowed ?? false])).toEqual([
      [2, `include loop through ${P}/tasks/main.yml; not followed again`, false],
      [4, `task file ${P}/tasks/nothere.yml does not exist`, true],
    ]);
  });

  it('a block passes its when to block, rescue and always; rescue runs only when the block fails', async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]: [
        '---',
        '- name: Guarded',
        '  when: outer',
        '  block:',
        '    - name: In block',
        '      debug: { msg: 1 }',
        '  rescue:',
        '    - name: In rescue',
        '      debug: { msg: 2 }',
        '  always:',
        '    - name: In always',
        '      debug: { msg: 3 }',
        '',
      ].join('\n'),
    });
    const r = await walkRole(ck, 'kubernetes/preinstall');
    expect(r.tasks.map((t) => [t.ref.name, t.when, t.conditions.map((c) => c.rescue ?? false)])).toEqual([
      ['In block', ['outer'], [false]],
      ['In rescue', ['outer'], [false, true]],
      ['In always', ['outer'], [false]],
    ]);
  });

  it('include_role finds tasks_from with or without its extension, .yml before .yaml; a templated role is not followed', async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]: [
        '---',
        '- name: Explicit',
        '  include_role: { name: r1, tasks_from: t.yaml }',
        '- name: Yaml only',
        '  include_role: { name: r2, tasks_from: t }',
        '- name: Both',
        '  import_role: { name: r3 }',
        '- name: Templated',
        '  include_role: { name: "{{ which }}" }',
        '',
      ].join('\n'),
      'roles/r1/tasks/t.yaml': '- name: R1\n  debug: { msg: 1 }\n',
      'roles/r2/tasks/t.yaml': '- name: R2\n  debug: { msg: 2 }\n',
      'roles/r3/tasks/main.yml': '- name: R3 yml\n  debug: { msg: 3 }\n',
      'roles/r3/tasks/main.yaml': '- name: R3 yaml\n  debug: { msg: 3 }\n',
    });
    const r = await walkRole(ck, 'kubernetes/preinstall');
    expect(r.tasks.map((t) => [t.ref.name, t.role])).toEqual([
      ['R1', 'r1'],
      ['R2', 'r2'],
      ['R3 yml', 'r3'],
    ]);
    expect(r.tasks.map((t) => t.conditions.map((c) => c.level))).toEqual([[], [], []]);
    expect(r.issues.map((i) => [i.ref.name, i.message, i.unfollowed])).toEqual([
      ['Templated', 'include_role of a templated role ({{ which }}); not followed', true],
    ]);
  });

  it("a relative include is looked up next to the including file first, then in the role's tasks/", async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]: '- name: Sub\n  import_tasks: sub/a.yml\n',
      [`${P}/tasks/sub/a.yml`]: '- name: Near\n  include_tasks: b.yml\n- name: Far\n  ansible.builtin.include: c.yml\n',
      [`${P}/tasks/sub/b.yml`]: '- name: B near\n  debug: { msg: b }\n',
      [`${P}/tasks/b.yml`]: '- name: B in tasks\n  debug: { msg: b }\n',
      [`${P}/tasks/c.yml`]: '- name: C in tasks\n  debug: { msg: c }\n',
    });
    const r = await walkRole(ck, 'kubernetes/preinstall');
    expect(r.tasks.map((t) => t.ref.name)).toEqual(['B near', 'C in tasks']);
    expect(r.files).toEqual([`${P}/tasks/main.yml`, `${P}/tasks/sub/a.yml`, `${P}/tasks/sub/b.yml`, `${P}/tasks/c.yml`]);
    expect(r.tasks.map((t) => t.conditions.map((c) => c.level))).toEqual([[], []]);
  });

  it('include conditions are "include" level; when lists keep their order; a templated loop stays raw', async () => {
    const ck = await checkout({
      [`${P}/tasks/main.yml`]: [
        '- name: Inc',
        '  include_tasks: x.yml',
        '  when: [a, b]',
        '- name: Loop',
        '  debug: { msg: "{{ item }}" }',
        '  loop: "{{ things }}"',
        '- name: List',
        '  debug: { msg: "{{ item }}" }',
        '  with_list: [1, 2]',
        '',
      ].join('\n'),
      [`${P}/tasks/x.yml`]: '- name: X\n  debug: { msg: x }\n  when: c\n',
    });
    const r = await walkRole(ck, 'kubernetes/preinstall');
    const x = r.tasks[0]!;
    expect([x.when, x.conditions.map((c) => [c.level, c.file, c.line])]).toEqual([
      ['a', 'b', 'c'],
      [
        ['include', `${P}/tasks/main.yml`, 3],
        ['include', `${P}/tasks/main.yml`, 3],
        ['task', `${P}/tasks/x.yml`, 3],
      ],
    ]);
    expect([r.tasks[1]!.loop, r.tasks[1]!.loopRaw]).toEqual([null, '{{ things }}']);
    expect([r.tasks[2]!.loop, r.tasks[2]!.loopRaw]).toEqual([[1, 2], undefined]);
  });
});

describe('what the audit cannot evaluate', () => {
  it('a command whose program cannot be known might fix it: unknown, with a warning; a templated argument of cat cannot', async () => {
    const hidden = await audit(MASK + '- name: Mystery\n  ansible.builtin.command: "{{ swap_tool }} -a"\n');
    expect(hidden.swap.who).toBe('unknown');
    expect(hidden.swap.reason).toMatch(/"Mystery": _raw_params \{\{ swap_tool \}\} -a cannot be evaluated .*, and it could fix it$/);
    expect(hidden.warnings.some((w) => w.expression === '{{ swap_tool }} -a' && w.line === 6)).toBe(true);
    const harmless = await audit(MASK + '- name: Show\n  ansible.builtin.command: cat {{ some_file }}\n');
    expect(harmless.swap.who).toBe('operator');
    const wrapped = await audit(MASK + '- name: Wrapped\n  ansible.builtin.shell: sudo {{ swap_args }}\n');
    expect(wrapped.swap.who).toBe('unknown');
  });

  it('an include that cannot be followed makes a missing fix unknown, naming the include', async () => {
    const w = await audit(SWAPOFF + '- name: Extra\n  include_tasks: "{{ extra_file }}"\n');
    expect(w.swap.who).toBe('unknown');
    expect(w.swap.reason).toMatch(/^roles\/kubernetes\/preinstall\/tasks\/main.yml:4 "Extra": .*; the tasks it includes were not read$/);
    // What is fixed anyway stays fixed.
    const fixed = await audit(SWAPOFF + MASK + '- name: Extra\n  include_tasks: "{{ extra_file }}"\n');
    expect(fixed.swap.who).toBe('kubespray');
  });

  it('an include whose condition is false is a note, not a gap', async () => {
    const w = await audit(SWAPOFF + MASK + '- name: Skipped\n  include_tasks: "{{ extra_file }}"\n  when: false\n');
    expect(w.swap.who).toBe('kubespray');
    expect(w.notes.some((n) => n.includes('"Skipped"') && n.includes('not included: '))).toBe(true);
    expect(w.warnings).toEqual([]);
  });

  it('a condition on a registered result is decided at run time: the task counts, and the evidence says so', async () => {
    const w = await audit(
      '- name: Probe\n  ansible.builtin.command: swapon --show\n  register: swaps\n' +
        SWAPOFF.replace('/sbin/swapoff -a\n', '/sbin/swapoff -a\n  when: swaps.stdout != ""\n') +
        MASK,
    );
    expect(w.swap.who).toBe('kubespray');
    const off = w.swap.evidence.find((e) => e.does === 'runs /sbin/swapoff -a')!;
    expect(off.status.runs).toBe('at run time');
    expect(formatEvidence(off)).toMatch(/; decided at run time: roles\/kubernetes\/preinstall\/tasks\/main.yml:\d+ when: swaps.stdout != "" reads /);
  });

  it('set_fact with a value the audit evaluates decides later conditions', async () => {
    const w = await audit(
      '- name: Decide\n  ansible.builtin.set_fact:\n    do_forward: false\n- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n  when: do_forward\n',
    );
    expect(w.ip_forward.who).toBe('operator');
    const on = await audit(
      '- name: Decide\n  ansible.builtin.set_fact:\n    do_forward: true\n- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n  when: do_forward\n',
    );
    expect(on.ip_forward.who).toBe('kubespray');
  });
});

describe('shell command lines', () => {
  const shell = (cmd: string) => `- name: Cmd\n  ansible.builtin.shell: ${JSON.stringify(cmd)}\n`;

  it('each command of a list counts: after ;, &&, ||, | and inside $( )', async () => {
    for (const c of ['echo x; swapoff -a', 'true && swapoff -a', 'false || swapoff -a', 'echo $(swapoff -a)', 'cat /proc/swaps | swapoff -a']) {
      expect((await audit(shell(c) + MASK)).swap.who, c).toBe('kubespray');
    }
    expect((await audit(shell('echo swapoff -a') + MASK)).swap.who).toBe('operator');
  });

  it('the port as ss, lsof, fuser and netstat spell it, and no other number', async () => {
    for (const c of [
      'fuser -k -n tcp 10250',
      'fuser -km 10250/tcp',
      'kill $(lsof -t -i:10250)',
      'kill $(lsof -t -i tcp:10250)',
      'pkill -F <(ss -ltnp sport = :10250)',
      'systemctl kill $(lsof -t -i :10250)',
    ]) {
      expect((await audit('', shell(c))).port_10250.who, c).toBe('kubespray');
    }
    for (const c of ['fuser -k 102500/tcp', 'kill $(lsof -t -i:1025)', 'ss -ltnp sport = :10250', 'systemctl status $(ss -ltnp sport = :10250)']) {
      expect((await audit('', shell(c))).port_10250.who, c).toBe('operator');
    }
  });

  it("masked: yes, 1 and on are true for Ansible's booleans; no and 0 are not", async () => {
    for (const v of ['yes', '1', 'on', 'True']) expect((await audit(SWAPOFF + MASK.replace('masked: true', `masked: ${v}`))).swap.who, v).toBe('kubespray');
    for (const v of ['no', '0', 'off']) expect((await audit(SWAPOFF + MASK.replace('masked: true', `masked: ${v}`))).swap.who, v).toBe('operator');
  });

  it('the sysctl file comes from the variable the task passes, with where it is defined', async () => {
    const w = await audit(
      '- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n    sysctl_file: "{{ my_sysctl_file }}"\n',
      '',
      { [`${P}/defaults/main.yml`]: '---\nmy_sysctl_file: /etc/sysctl.d/77-k8s.conf\n' },
    );
    expect(w.sysctl_file).toEqual({
      path: '/etc/sysctl.d/77-k8s.conf',
      variable: 'my_sysctl_file',
      definedAt: [{ file: `${P}/defaults/main.yml`, line: 2, variable: 'my_sysctl_file' }],
      tasks: [{ file: `${P}/tasks/main.yml`, line: 2, name: 'Forward' }],
    });
  });
});

// ---------------------------------------------------------------------------
// Who fixes what, for task forms that look like a fix: a loop over several units, modules and programs that
// take the same arguments as the ones that fix but do something else, and
// sysctl values as ansible.posix.sysctl's _parse_value writes them (a boolean
// or one of Ansible's boolean words is 1 or 0, other text is stripped, the
// name is stripped). Each expectation is what the module or program does
// when Ansible runs it, written out by hand.
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

  it("copy with src: takes the file from the role's files/, not templates/: a template of that name naming br_netfilter persists nothing", async () => {
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
      expect(
        w.sysctl_keys.map((k) => [k.key, k.value]),
        v,
      ).toEqual([['net.ipv4.ip_forward', '1']]);
    }
  });

  it('false and "off" are written as 0: not credited', async () => {
    for (const v of ['false', '"off"', '"0"']) {
      const w = await audit(forward(v));
      expect(w.ip_forward.who, v).toBe('operator');
      expect(
        w.sysctl_keys.map((k) => k.value),
        v,
      ).toEqual(['0']);
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

// ---------------------------------------------------------------------------
// Who fixes what, where a detail of the shell or of Ansible decides. Each expectation is what
// the shell, the program or the Ansible module does when the task runs,
// written out by hand: a command substitution ends before the program it
// prefixes, curl -k is not fuser -k, ansible-core's boolean() knows only 1 and
// 0 among numbers, only set_fact sets variables, a module's str argument given
// a list names no unit.
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

  it("a shell command that is a registered result's stdout runs whatever that printed, swapoff perhaps: unknown (was operator)", async () => {
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

  it("enabled: 0 is false to ansible-core's boolean(): the unit found on 10250 is disabled", async () => {
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
    const fwd =
      '- name: Fwd\n  ansible.posix.sysctl:\n    name: "{{ item }}"\n    value: "1"\n    sysctl_file: /etc/sysctl.d/99-k8s.conf\n  loop: [net.ipv4.ip_forward, net.bridge.bridge-nf-call-iptables]\n';
    const other = (n: string) =>
      `- name: O${n}\n  ansible.posix.sysctl:\n    name: kernel.k${n}\n    value: "1"\n    sysctl_file: /etc/sysctl.d/50-other.conf\n`;
    const w = await audit(other('1') + other('2') + fwd);
    expect(w.sysctl_file?.path).toBe('/etc/sysctl.d/99-k8s.conf');
  });

  it("only set_fact sets variables: a sysctl task's value: argument leaves the role default value alone", async () => {
    const first = '- name: Rp\n  ansible.posix.sysctl:\n    name: net.ipv4.conf.all.rp_filter\n    value: "1"\n';
    const fwd = '- name: Fwd\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "{{ value }}"\n';
    const w = await audit(first + fwd, '', { [`${P}/defaults/main.yml`]: '---\nvalue: "0"\n' });
    expect(w.ip_forward.who).toBe('operator');
    expect(w.sysctl_keys.map((k) => [k.key, k.value])).toEqual([
      ['net.ipv4.conf.all.rp_filter', '1'],
      ['net.ipv4.ip_forward', '0'],
    ]);
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
    const tasks = [
      { name: 'n', action: null },
      { name: 'l', local_action: null },
    ];
    const r = await execa(ansiblePython(), [path.resolve('test/helpers/ansible-task-args.py')], { input: JSON.stringify(tasks) });
    const parsed = (JSON.parse(r.stdout) as { parsed: { error?: string }[] }).parsed;
    expect(parsed.map((x) => x.error !== undefined)).toEqual([true, true]);
    const ours = await walkRole(
      await checkout({ [`${P}/tasks/main.yml`]: JSON.stringify([...tasks, { name: 'c', command: 'true' }]) }),
      'kubernetes/preinstall',
    );
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
    const ours = await walkRole(
      await checkout({ [`${P}/tasks/main.yml`]: JSON.stringify([...tasks, { name: 'c', command: 'true' }]) }),
      'kubernetes/preinstall',
    );
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
