// Who fixes what, where the audit cannot evaluate everything: commands whose text the audit cannot fully
// evaluate (which programs could still do the job), each module argument that
// hides a fix when it cannot be evaluated, Ansible's boolean and set_fact
// rules, and the walk's include levels. Expectations are ansible-core's
// documented module behaviour, written out by hand over a two-role tree in
// kubespray's layout.
import { describe, expect, it } from 'vitest';
import { walkRole } from '../../src/kubespray/tasks.js';
import { whoFixesJson } from '../../src/kubespray/who-fixes.js';
import type { WhoFixes } from '../../src/kubespray/who-fixes.js';
import { execa } from 'execa';
import { ansiblePython } from '../helpers/ansible-python.js';
import { P, PM, NM, checkout, audit } from '../helpers/kubespray-fixture.js';
import { expandItem } from '../../src/kubespray/tasks.js';
import { N } from '../helpers/kubespray-fixture.js';

const SWAPOFF = '- name: Swap off\n  ansible.builtin.command: /sbin/swapoff -a\n';
const MASK = '- name: Mask swap\n  ansible.builtin.systemd_service:\n    name: swap.target\n    masked: true\n';
const MODPROBE = '- name: Load\n  community.general.modprobe:\n    name: br_netfilter\n    state: present\n';
const verdicts = (w: WhoFixes) => {
  const j = whoFixesJson(w);
  return [j.swap, j.br_netfilter, j.ip_forward, j.port_10250];
};

describe('a command with an argument the audit cannot evaluate', () => {
  const shell = (c: string) => `- name: Cmd\n  ansible.builtin.shell: ${JSON.stringify(c)}\n`;

  // [command, swap, br_netfilter, port_10250]: what the program could do once {{ x }} is known.
  const cases: [string, string, string, string][] = [
    ['swapoff {{ x }}', 'unknown', 'operator', 'operator'],
    ['sed -i {{ x }} /etc/fstab', 'unknown', 'operator', 'operator'],
    ['systemctl {{ x }}', 'unknown', 'operator', 'unknown'],
    ['modprobe {{ x }}', 'operator', 'unknown', 'operator'],
    ['insmod {{ x }}', 'operator', 'unknown', 'operator'],
    ['echo {{ x }} > /etc/modules-load.d/k8s.conf', 'operator', 'unknown', 'operator'],
    ['printf {{ x }}', 'operator', 'unknown', 'operator'],
    ['tee {{ x }}', 'operator', 'unknown', 'operator'],
    ['cp {{ x }} /etc/modules-load.d/', 'operator', 'unknown', 'operator'],
    ['install -m 0644 {{ x }} /etc/modules-load.d/', 'operator', 'unknown', 'operator'],
    ['mv {{ x }} /etc/modules-load.d/', 'operator', 'unknown', 'operator'],
    ['ln -s {{ x }} /etc/modules-load.d/', 'operator', 'unknown', 'operator'],
    ['fuser {{ x }}', 'operator', 'operator', 'unknown'],
    ['kill {{ x }}', 'operator', 'operator', 'unknown'],
    ['pkill {{ x }}', 'operator', 'operator', 'unknown'],
    ['killall {{ x }}', 'operator', 'operator', 'unknown'],
    ['cat {{ x }}', 'operator', 'operator', 'operator'],
    ['/usr/bin/cat {{ x }}', 'operator', 'operator', 'operator'],
  ];
  for (const [c, swap, br, port] of cases) {
    it(c, async () => {
      const w = await audit('', shell(c));
      expect(verdicts(w), c).toEqual([swap, br, 'operator', port]);
    });
  }

  // A program that runs another one, or a program that cannot be known, could run anything,
  // sysctl -w included: every problem stays open.
  it('a program that runs another one (sh -c, sudo, xargs, env, ...) could run any of them', async () => {
    for (const wrapper of ['sh -c', 'bash -c', 'dash -c', 'xargs', 'sudo', 'env', 'timeout 5', 'nohup', 'nsenter -t 1 -m', 'chroot /host', 'eval', 'exec']) {
      const w = await audit('', shell(`${wrapper} {{ x }}`));
      expect(verdicts(w), wrapper).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
    }
  });

  it('an argv that is one template, a filter that does not exist, or a command the shell cannot split: any program at all', async () => {
    const argv = await audit('', '- name: A\n  ansible.builtin.command:\n    argv: "{{ cmdline }}"\n');
    expect(verdicts(argv)).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
    const filter = await audit('', shell('cat {{ x | no_such_filter }}'));
    expect(verdicts(filter)).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
    const split = await audit('', shell("cat {{ x }} 'open"));
    expect(verdicts(split)).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
  });

  it('a command that renders empty when its unevaluated parts stand in as one word could still be any program', async () => {
    // The stand-in compares unequal to 1, so this renders as no command at all; with x == 1 it runs swapoff.
    const w = await audit('', `- name: Cond\n  ansible.builtin.command: "{{ 'swapoff -a' if x == 1 else '' }}"\n`);
    expect(verdicts(w)).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
  });

  it('args from a template give the module arguments known only at run time: what the task does is unknown', async () => {
    expect((await audit(SWAPOFF + MASK)).swap.who).toBe('kubespray');
    const w = await audit(SWAPOFF.replace('/sbin/swapoff -a\n', '/sbin/swapoff -a\n  args: "{{ swapoff_args }}"\n') + MASK);
    expect(w.swap.who).toBe('unknown');
    expect(w.swap.reason).toBe(
      `the condition ${PM}:4 args: "{{ swapoff_args }}" cannot be evaluated (args from a template is not modelled: the module gets its arguments at run time)`,
    );
    // Empty args are no args (ModuleArgsParser skips them).
    expect((await audit(SWAPOFF.replace('/sbin/swapoff -a\n', '/sbin/swapoff -a\n  args: ""\n') + MASK)).swap.who).toBe('kubespray');
  });

  it('a shell variable the script does not set, as the program, could be any program', async () => {
    const w = await audit('', shell('$TOOL -a {{ x }}'));
    expect(verdicts(w)).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
  });

  it('a shell comment holding a template could hold a line break, and so any command after it', async () => {
    // x = "a\necho ran" ends the comment: sh runs what follows it.
    const x = 'a\necho ran';
    const sh = await execa('sh', ['-c', `# ${x}`]);
    expect(sh.stdout).toBe('ran');
    const w = await audit('', shell('# {{ x }}'));
    expect(verdicts(w)).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
  });

  it('a program name that cannot be evaluated could be any program; only in a task that runs', async () => {
    const w = await audit('', shell('{{ tool }} -a'));
    expect(verdicts(w)).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
    const skipped = await audit('', shell('{{ tool }} -a') + '  when: false\n');
    expect(verdicts(skipped)).toEqual(['operator', 'operator', 'operator', 'operator']);
  });

  it('a later command in the same line counts on its own', async () => {
    expect(verdicts(await audit('', shell('cat /etc/os-release; swapoff {{ dev }}')))).toEqual(['unknown', 'operator', 'operator', 'operator']);
  });
});

describe('module arguments the audit cannot evaluate', () => {
  const t = (module: string, args: Record<string, string>) =>
    `- name: T\n  ${module}:\n${Object.entries(args)
      .map(([k, v]) => `    ${k}: ${JSON.stringify(v)}\n`)
      .join('')}`;

  it('each argument of a module that could persist br_netfilter', async () => {
    const forms: [string, Record<string, string>][] = [
      ['ansible.builtin.copy', { dest: '/etc/modules-load.d/k.conf', content: '{{ c }}' }],
      ['ansible.builtin.copy', { dest: '{{ d }}', content: 'br_netfilter' }],
      ['ansible.builtin.copy', { src: '{{ s }}', dest: '/etc/modules-load.d/k.conf' }],
      ['ansible.builtin.template', { src: '{{ s }}', dest: '/etc/modules-load.d/k.conf' }],
      ['ansible.builtin.lineinfile', { path: '{{ p }}', line: 'br_netfilter' }],
      ['ansible.builtin.lineinfile', { path: '/etc/modules', line: '{{ l }}' }],
      ['ansible.builtin.blockinfile', { path: '/etc/modules', block: '{{ b }}' }],
      ['community.general.modprobe', { name: '{{ m }}' }],
    ];
    for (const [m, args] of forms) {
      const w = await audit('', MODPROBE + t(m, args));
      expect(w.br_netfilter.who, `${m} ${JSON.stringify(args)}`).toBe('unknown');
    }
    // The same arguments of a module that writes no file hide nothing.
    expect((await audit('', MODPROBE + t('ansible.builtin.debug', { msg: '{{ c }}' }))).br_netfilter.who).toBe('operator');
  });

  it('a sysctl name; a systemd name, masked and enabled; a mount state', async () => {
    expect((await audit(t('ansible.posix.sysctl', { name: '{{ k }}', value: '1' }))).ip_forward.who).toBe('unknown');
    expect((await audit(t('ansible.posix.sysctl', { name: 'net.ipv4.ip_forward', value: '1', reload: '{{ r }}' }))).ip_forward.who).toBe('kubespray');
    expect((await audit(SWAPOFF + t('ansible.builtin.systemd', { name: '{{ u }}', masked: 'true' }))).swap.who).toBe('unknown');
    expect((await audit(SWAPOFF + t('ansible.builtin.systemd', { name: 'swap.target', masked: '{{ m }}' }))).swap.who).toBe('unknown');
    expect((await audit('', t('ansible.builtin.systemd', { name: 'x.service', enabled: '{{ e }}' }))).port_10250.who).toBe('unknown');
    expect((await audit('', t('ansible.builtin.systemd', { name: 'x.service', masked: '{{ e }}' }))).port_10250.who).toBe('unknown');
    expect((await audit('', t('ansible.builtin.systemd', { name: 'x.service', daemon_reload: '{{ e }}' }))).port_10250.who).toBe('operator');
    expect((await audit(SWAPOFF + t('ansible.posix.mount', { name: 'none', fstype: 'swap', state: '{{ s }}' }))).swap.who).toBe('unknown');
    // A templated argument of a module that decides nothing for the problem leaves it alone.
    expect((await audit(t('ansible.builtin.systemd', { name: '{{ u }}', state: 'started' }))).ip_forward.who).toBe('operator');
  });
});

describe("Ansible's rules", () => {
  it('a sysctl whose state cannot be evaluated may be state: absent: the audit says unknown, naming the expression', async () => {
    const w = await audit('- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n    state: "{{ s }}"\n');
    expect(w.ip_forward.who).toBe('unknown');
    expect(JSON.stringify(w.ip_forward)).toContain('{{ s }}');
    // Over a loop the state is each item's: known and present, the task counts; one item absent, it does not.
    const looped = (second: string) =>
      audit(`- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n    state: "{{ item }}"\n  loop: [present, ${second}]\n`);
    expect((await looped('present')).ip_forward.who).toBe('kubespray');
    expect((await looped('absent')).ip_forward.who).not.toBe('kubespray');
    // The same for loading br_netfilter: an unevaluated state could be absent (modprobe -r).
    const mod = await audit('- name: Load\n  community.general.modprobe:\n    name: br_netfilter\n    state: "{{ s }}"\n');
    expect(mod.br_netfilter.who).toBe('unknown');
  });

  it("masked: every string ansible-core's boolean() reads as true masks swap.target; every false one does not", async () => {
    const r = await execa(ansiblePython(), [
      '-c',
      'import json; from ansible.module_utils.parsing.convert_bool import BOOLEANS_TRUE as T, BOOLEANS_FALSE as F; print(json.dumps([sorted({x for x in T if isinstance(x, str)}), sorted({x for x in F if isinstance(x, str)})]))',
    ]);
    const [yes, no] = JSON.parse(r.stdout) as [string[], string[]];
    expect(yes).toContain('y');
    for (const v of yes.flatMap((s) => [s, s.toUpperCase()])) {
      expect((await audit(SWAPOFF + MASK.replace('masked: true', `masked: "${v}"`))).swap.who, v).toBe('kubespray');
    }
    for (const v of no) expect((await audit(SWAPOFF + MASK.replace('masked: true', `masked: "${v}"`))).swap.who, v).toBe('operator');
  });

  it("enabled: every string ansible-core's boolean() reads as false disables the unit on port 10250", async () => {
    const r = await execa(ansiblePython(), [
      '-c',
      'import json; from ansible.module_utils.parsing.convert_bool import BOOLEANS_FALSE as F; print(json.dumps(sorted({x for x in F if isinstance(x, str)})))',
    ]);
    const no = JSON.parse(r.stdout) as string[];
    expect(no).toContain('n');
    const find = "- name: Find\n  ansible.builtin.shell: ss -Hltnp 'sport = :10250'\n  register: holder\n";
    const stop = (enabled: string) => `- name: Off\n  ansible.builtin.systemd:\n    name: "{{ holder.stdout }}"\n    enabled: "${enabled}"\n`;
    for (const v of no.flatMap((x) => [x, x.toUpperCase()])) expect((await audit('', find + stop(v))).port_10250.who, v).toBe('kubespray');
    expect((await audit('', find + stop('yes'))).port_10250.who).toBe('operator');
  });

  it('masked takes only the strings Ansible reads as true, whole', async () => {
    for (const v of ['only', 'none', 'yes please', 'true1']) {
      expect((await audit(SWAPOFF + MASK.replace('masked: true', `masked: "${v}"`))).swap.who, v).toBe('operator');
    }
  });

  it('set_fact never sets cacheable: it is an option of the module', async () => {
    const w = await audit(
      '- name: Fact\n  ansible.builtin.set_fact:\n    other: 1\n    cacheable: true\n' +
        '- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n  when: cacheable | default(false)\n',
    );
    expect(w.ip_forward.who).toBe('operator');
  });

  it('task vars reach the task: its conditions and its arguments', async () => {
    const w = await audit(
      '- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "{{ fwd }}"\n  vars:\n    fwd: 1\n    go: true\n  when: go\n',
    );
    expect(w.ip_forward.who).toBe('kubespray');
    expect(w.sysctl_keys.map((k) => [k.key, k.value])).toEqual([['net.ipv4.ip_forward', '1']]);
    const off = await audit('- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n  vars:\n    go: false\n  when: go\n');
    expect(off.ip_forward.who).toBe('operator');
  });

  it('one value for every name of a loop: each name is set to it', async () => {
    const w = await audit(
      '- name: Forward\n  ansible.posix.sysctl:\n    name: "{{ item }}"\n    value: "1"\n  loop: [net.ipv4.conf.all.forwarding, net.ipv4.ip_forward]\n',
    );
    expect(w.ip_forward.who).toBe('kubespray');
    expect(w.sysctl_keys.map((k) => [k.key, k.value])).toEqual([
      ['net.ipv4.conf.all.forwarding', '1'],
      ['net.ipv4.ip_forward', '1'],
    ]);
  });

  it('one task that is unsure for both halves is warned about once', async () => {
    const w = await audit('', MODPROBE + '    persistent: present\n  when: maybe_load\n');
    expect(w.br_netfilter.who).toBe('unknown');
    expect(w.warnings.map((x) => x.message)).toEqual([`br_netfilter: whether ${NM}:2 "Load" runs cannot be evaluated: 'maybe_load' is undefined`]);
  });

  it('a note for a set_fact at run time names only the variable the sysctl file comes from', async () => {
    const w = await audit(
      '- name: Probe\n  ansible.builtin.command: "true"\n  register: p\n' +
        '- name: Other\n  ansible.builtin.set_fact:\n    unrelated: x\n  when: p.rc == 0\n' +
        '- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n    sysctl_file: "{{ my_file }}"\n',
      '',
      { [`${P}/defaults/main.yml`]: '---\nmy_file: /etc/sysctl.d/k8s.conf\n' },
    );
    expect(w.sysctl_file?.path).toBe('/etc/sysctl.d/k8s.conf');
    expect(w.notes).toEqual([]);
  });

  it('a set_fact that surely runs but whose value is known only at run time makes a later read run-time', async () => {
    const w = await audit(
      '- name: Probe\n  ansible.builtin.command: "true"\n  register: p\n- name: Fact\n  ansible.builtin.set_fact:\n    go: "{{ p.rc == 0 }}"\n' +
        MASK +
        '- name: Swap off\n  ansible.builtin.command: swapoff -a\n  when: go\n',
    );
    expect(w.swap.who).toBe('kubespray');
    const off = w.swap.evidence.find((e) => e.does === 'runs swapoff -a')!;
    expect(off.status.runs).toBe('at run time');
  });
});

describe('include levels', () => {
  it('include_role conditions are "include" level, import_role ones "import"; a role without a name is refused, as ansible-core refuses it', async () => {
    const ck = await checkout({
      [PM]: '- name: Inc\n  include_role:\n    name: r1\n  when: a\n- name: Imp\n  ansible.builtin.import_role:\n    name: r1\n  when: b\n- name: Nameless\n  include_role:\n    tasks_from: x\n',
      'roles/r1/tasks/main.yml': '- name: R1\n  command: x\n',
    });
    const r = await walkRole(ck, 'kubernetes/preinstall');
    expect(r.tasks.map((t) => t.conditions.map((c) => [c.expr, c.level]))).toEqual([[['a', 'include']], [['b', 'import']]]);
    expect(r.issues).toEqual([
      {
        ref: { file: PM, line: 9, name: 'Nameless' },
        message: "ansible-core refuses this task: 'name' is a required field for include_role.",
        unfollowed: true,
        refused: true,
      },
    ]);
  });

  it('a block whose rescue is not a list: ansible-core refuses it as it loads it, and the walk says so instead of walking the rest', async () => {
    const ck = await checkout({
      [PM]: '- name: B\n  block:\n    - name: In\n      command: x\n  rescue: nothing\n  always:\n    - name: Al\n      command: y\n',
    });
    const r = await walkRole(ck, 'kubernetes/preinstall');
    expect(r.tasks).toEqual([]);
    // ansible-core 2.14: "A malformed block was encountered while loading rescue.. The ds (nothing) should be a list ..."
    expect(r.issues).toEqual([
      {
        ref: { file: PM, line: 1, name: 'B' },
        message: 'ansible-core refuses this task: A malformed block was encountered while loading rescue.',
        unfollowed: true,
        refused: true,
      },
    ]);
  });
});

// ---------------------------------------------------------------------------
// Who fixes what at the edges: a loop the audit cannot evaluate, one name with a value per
// loop item, a half that is present while another task for it is unsure, and
// Jinja2 attribute lookups on a loop item that is a string. Expectations are
// ansible-core's and Jinja2's behaviour, written out by hand.
const PERSIST = '- name: Persist\n  ansible.builtin.copy:\n    dest: /etc/modules-load.d/k8s.conf\n    content: "br_netfilter\\n"\n';

describe('edges', () => {
  it('a loop that cannot be evaluated fails the task in Ansible: its arguments are not credited, even ones that evaluate', async () => {
    const t = '- name: Load\n  community.general.modprobe:\n    name: "{{ netfilter }}"\n  loop: "{{ not_defined_list }}"\n';
    const w = await audit('', t + PERSIST, { [`${N}/defaults/main.yml`]: '---\nnetfilter: br_netfilter\n' });
    expect(w.br_netfilter.who).toBe('unknown');
    expect(w.br_netfilter.evidence.map((e) => e.does)).toEqual(['persists br_netfilter in /etc/modules-load.d/k8s.conf']);
  });

  it('one name with a value per loop item: Ansible sets it once per item, the last item last', async () => {
    const t = '- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "{{ item }}"\n  loop: ["0", "1"]\n';
    const w = await audit(t);
    expect(w.ip_forward.who).toBe('kubespray');
    expect(w.sysctl_keys.map((k) => [k.key, k.value])).toEqual([
      ['net.ipv4.ip_forward', '0'],
      ['net.ipv4.ip_forward', '1'],
    ]);
  });

  it("a missing half with no task for it is the operator's, whatever is unsure about the half that is there", async () => {
    const w = await audit(SWAPOFF + SWAPOFF.replace('Swap off', 'Swap off again') + '  when: maybe_swap\n');
    expect(w.swap.who).toBe('operator');
    expect(w.swap.reason).toBe('swap is turned off but no task masks swap.target or removes fstab swap entries, so it comes back at reboot');
    expect(w.warnings).toEqual([]);
  });

  it('the evidence shows a modprobe command without the blanks around it', async () => {
    // One blank before: ansible-core's split_args fails on two ("Unable to parse argument string").
    const w = await audit('', '- name: L\n  ansible.builtin.shell: " modprobe br_netfilter  "\n' + PERSIST);
    expect(w.br_netfilter.evidence.map((e) => e.does)).toEqual(['runs modprobe br_netfilter', 'persists br_netfilter in /etc/modules-load.d/k8s.conf']);
  });

  it('"{{ item.length }}" over strings: a Python str has no attribute length, so Jinja2 gives undefined', () => {
    expect(expandItem('{{ item.length }}', ['abc', 'de'])).toEqual([undefined, undefined]);
    expect(expandItem('{{ item.length }}', [{ length: 3 }])).toEqual([3]);
  });
});
