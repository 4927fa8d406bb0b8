// Who fixes what, as a person reads it: the messages a person reads (verdict reasons,
// evidence lines, warnings), the forms of each module's arguments Ansible
// accepts (cmd/argv, integer values, dest/path/name, every modules-load.d
// directory systemd reads), the order Ansible evaluates `when` items in, and
// what a set_fact or register does to later tasks. Each expectation is
// ansible-core's documented behaviour for the module, written out by hand
// over a two-role tree in kubespray's layout (set_fact's booleans are asked
// of ansible-playbook itself).
import { describe, expect, it } from 'vitest';
import { formatEvidence, runStatus, whoFixesJson } from '../../src/kubespray/who-fixes.js';
import type { Evidence, WhoFixes } from '../../src/kubespray/who-fixes.js';
import type { Condition } from '../../src/kubespray/tasks.js';
import { VarContext } from '../../src/kubespray/vars.js';
import { runLocalPlay } from '../helpers/ansible-localhost.js';
import { P, N, PM, NM, audit } from '../helpers/kubespray-fixture.js';

const SWAPOFF = '- name: Swap off\n  ansible.builtin.command: /sbin/swapoff -a\n';
const MASK = '- name: Mask swap\n  ansible.builtin.systemd_service:\n    name: swap.target\n    masked: true\n';
const MODPROBE = '- name: Load\n  community.general.modprobe:\n    name: br_netfilter\n    state: present\n';
const PERSIST = '- name: Persist\n  ansible.builtin.copy:\n    dest: /etc/modules-load.d/k8s.conf\n    content: "br_netfilter\\n"\n';
const FORWARD = '- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n';
const does = (w: WhoFixes, p: 'swap' | 'br_netfilter' | 'ip_forward' | 'port_10250') => w[p].evidence.map((e) => e.does);

describe('the reasons a person reads', () => {
  it('with nothing in either role: one reason per problem, saying what to do', async () => {
    const w = await audit('');
    expect(whoFixesJson(w)).toEqual({ swap: 'operator', br_netfilter: 'operator', ip_forward: 'operator', port_10250: 'operator', sysctl_file: null });
    expect([w.swap.reason, w.br_netfilter.reason, w.ip_forward.reason, w.port_10250.reason]).toEqual([
      'no task turns swap off (swapoff), masks swap.target or removes fstab swap entries: turn swap off and keep it off before the install',
      'no task loads br_netfilter or persists it in modules-load.d',
      'no task sets net.ipv4.ip_forward = 1 through the sysctl module',
      'no task stops or frees whatever listens on port 10250; kubeadm preflight only reports "Port 10250 is in use" and kubespray retries with Port-10250 ignored, so stop and disable the owning unit first',
    ]);
    expect([w.files, w.notes, w.warnings, w.sysctl_keys]).toEqual([[PM, NM], [], [], []]);
  });

  it('half of swap or of br_netfilter: the reason names the half that is missing', async () => {
    expect((await audit(MASK)).swap.reason).toBe('no task runs swapoff, so swap stays active during the install (kubelet refuses to start): run swapoff first');
    expect((await audit(SWAPOFF)).swap.reason).toBe(
      'swap is turned off but no task masks swap.target or removes fstab swap entries, so it comes back at reboot',
    );
    expect((await audit('', MODPROBE)).br_netfilter.reason).toBe('br_netfilter is loaded but no task persists it (modules-load.d), so it is gone after reboot');
    expect((await audit('', PERSIST)).br_netfilter.reason).toBe('br_netfilter is written to modules-load.d but no task loads it now');
  });

  it('a verdict kubespray owns has no reason, and its evidence is every task that helps, in walk order', async () => {
    const w = await audit(SWAPOFF + MASK, MODPROBE + PERSIST);
    expect(w.swap).toEqual({
      who: 'kubespray',
      evidence: [
        { file: PM, line: 2, name: 'Swap off', does: 'runs /sbin/swapoff -a', when: [], status: { runs: 'yes' } },
        { file: PM, line: 4, name: 'Mask swap', does: 'masks swap.target', when: [], status: { runs: 'yes' } },
      ],
    });
    expect(w.br_netfilter.evidence.map(formatEvidence)).toEqual([
      `${NM}:2 "Load": loads br_netfilter (modprobe)`,
      `${NM}:6 "Persist": persists br_netfilter in /etc/modules-load.d/k8s.conf`,
    ]);
  });
});

describe('evidence lines', () => {
  const c = (expr: unknown, rescue = false): Condition => ({ expr, file: 'f.yml', line: 3, level: 'task', ...(rescue ? { rescue } : {}) });
  const ev = (status: Evidence['status'], when: string[] = []): Evidence => ({ file: 'r/main.yml', line: 9, name: 'T', does: 'runs swapoff -a', when, status });

  it('one line each for runs, does not run, decided at run time, in a rescue, and unknown', () => {
    expect(formatEvidence(ev({ runs: 'yes' }))).toBe('r/main.yml:9 "T": runs swapoff -a');
    expect(formatEvidence(ev({ runs: 'no', because: c('a') }, ['a', 'b']))).toBe(
      'r/main.yml:9 "T": runs swapoff -a (when: a and b); does nothing on this host: f.yml:3 when: a is false',
    );
    expect(formatEvidence(ev({ runs: 'at run time', because: c('r.rc == 0'), on: 'r, registered' }))).toBe(
      'r/main.yml:9 "T": runs swapoff -a; decided at run time: f.yml:3 when: r.rc == 0 reads r, registered',
    );
    expect(formatEvidence(ev({ runs: 'at run time', because: c('the block failed', true), on: 'whether the block fails' }))).toBe(
      'r/main.yml:9 "T": runs swapoff -a; decided at run time: it is in the rescue section at f.yml:3 and runs only if the block failed',
    );
    expect(formatEvidence(ev({ runs: 'unknown', because: c('x'), reason: "'x' is undefined" }))).toBe(
      'r/main.yml:9 "T": runs swapoff -a; unknown whether it runs: f.yml:3 when: x: \'x\' is undefined',
    );
    expect(formatEvidence(ev({ runs: 'no', because: c('the block failed', true) }))).toBe(
      'r/main.yml:9 "T": runs swapoff -a; does nothing on this host: f.yml:3 rescue (runs only if the block failed) is false',
    );
  });
});

describe('the order Ansible evaluates when items in', () => {
  const ctx = new VarContext([
    { name: 'on', value: true, file: 'd.yml', line: 1 },
    { name: 'off', value: false, file: 'd.yml', line: 2 },
    { name: 'reg', runtime: true, file: 't.yml', line: 5, how: '(registered by "probe")' },
  ]);
  const c = (expr: unknown, rescue = false): Condition => ({ expr, file: 'f.yml', line: 1, level: 'task', ...(rescue ? { rescue } : {}) });

  it('the first false item skips the task, even after items that cannot be evaluated', () => {
    expect(runStatus([c('on'), c('off')], ctx)).toEqual({ runs: 'no', because: c('off') });
    expect(runStatus([c('undefined_x'), c('reg.rc == 0'), c('off')], ctx)).toEqual({ runs: 'no', because: c('off') });
    expect(runStatus([c('on'), c(true)], ctx)).toEqual({ runs: 'yes' });
    expect(runStatus([], ctx)).toEqual({ runs: 'yes' });
  });

  it("run_once runs here on an inventory of one host; when the inventory's groups cannot be read, which host it picks stays unknown", () => {
    const once: Condition = {
      expr: 'run_once: true',
      value: true,
      file: 'f.yml',
      line: 3,
      level: 'task',
      keyword: 'run_once',
      unmodelled: 'run_once is not modelled',
    };
    const inventory = (groups: Record<string, unknown>) => new VarContext([{ name: 'groups', value: groups, file: 'inv', line: 1 }]);
    expect(runStatus([once], inventory({ all: ['node1'] }))).toEqual({ runs: 'yes' });
    expect(runStatus([once], inventory({ all: ['node1', 'node2'] }))).toMatchObject({ runs: 'unknown', reason: 'run_once is not modelled' });
    // groups known only at run time: the resolver cannot give it, so it is not taken for one host.
    const later = new VarContext([{ name: 'groups', runtime: true, file: 't.yml', line: 2, how: '(registered by "probe")' }]);
    expect(runStatus([once], later)).toMatchObject({ runs: 'unknown', reason: 'run_once is not modelled' });
  });

  it('a registered result makes it a run-time decision; an undefined name after it makes it unknown, and not the other way round', () => {
    const rt = runStatus([c('reg.rc == 0')], ctx);
    expect(rt.runs).toBe('at run time');
    expect(rt.runs === 'at run time' && rt.because).toEqual(c('reg.rc == 0'));
    const u1 = runStatus([c('reg.rc == 0'), c('undefined_x')], ctx);
    expect(u1.runs === 'unknown' && [u1.because.expr, u1.reason]).toEqual(['undefined_x', "'undefined_x' is undefined"]);
    const u2 = runStatus([c('undefined_x'), c('reg.rc == 0')], ctx);
    expect(u2.runs === 'unknown' && u2.because.expr).toBe('undefined_x');
    const u3 = runStatus([c('undefined_x'), c('undefined_y')], ctx);
    expect(u3.runs === 'unknown' && u3.because.expr).toBe('undefined_x');
  });

  it('a rescue section is decided at run time unless a when before or after it is false', () => {
    expect(runStatus([c('on'), c('block failed', true)], ctx)).toEqual({
      runs: 'at run time',
      because: c('block failed', true),
      on: 'whether the block fails',
    });
    expect(runStatus([c('block failed', true), c('off')], ctx)).toEqual({ runs: 'no', because: c('off') });
    // The rescue comes first: a later registered read does not replace it.
    const r = runStatus([c('block failed', true), c('reg.rc == 0')], ctx);
    expect(r.runs === 'at run time' && r.because.rescue).toBe(true);
  });
});

describe('command forms', () => {
  it('command with cmd: or argv:, and shell/raw, run the program; a bare path to it counts', async () => {
    const cmd = '- name: Off\n  ansible.builtin.command:\n    cmd: /usr/sbin/swapoff --all\n';
    expect(does(await audit(cmd + MASK), 'swap')).toEqual(['runs /usr/sbin/swapoff --all', 'masks swap.target']);
    const argv = '- name: Off\n  ansible.builtin.command:\n    argv: [/sbin/swapoff, -a]\n';
    expect(does(await audit(argv + MASK), 'swap')).toEqual(['runs /sbin/swapoff -a', 'masks swap.target']);
    expect((await audit('- name: Off\n  ansible.builtin.raw: swapoff -a\n' + MASK)).swap.who).toBe('kubespray');
    expect((await audit('- name: Off\n  ansible.builtin.shell:\n    cmd: "  swapoff -a  "\n' + MASK)).swap.evidence[0]!.does).toBe('runs swapoff -a');
    // A module that is not a command runs nothing, whatever its text says.
    expect((await audit('- name: Say\n  ansible.builtin.debug:\n    msg: swapoff -a\n' + MASK)).swap.who).toBe('operator');
    // A free-form line with an open quote: ansible-core's split_args refuses the task
    // ("unbalanced jinja2 block or quotes"), so what runs is unknown, not "nothing".
    expect((await audit("- name: Odd\n  ansible.builtin.shell: swapoff -a 'oops\n" + MASK)).swap.who).toBe('unknown');
    // In the mapping form (cmd:) no parse_kv runs: the shell cannot split it and it is read as running nothing.
    expect((await audit("- name: Odd\n  ansible.builtin.shell:\n    cmd: swapoff -a 'oops\n" + MASK)).swap.who).toBe('operator');
  });

  it('each command after &, ( or a backquote counts on its own', async () => {
    for (const c of ['sleep 1 & swapoff -a', '(swapoff -a)', 'echo `swapoff -a`']) {
      expect((await audit(`- name: Cmd\n  ansible.builtin.shell: ${JSON.stringify(c)}\n` + MASK)).swap.who, c).toBe('kubespray');
    }
  });

  it('modprobe with br_netfilter loads it; modprobe of another module or modprobe -r does not', async () => {
    expect(does(await audit('', '- name: L\n  ansible.builtin.shell: modprobe -v br_netfilter && echo ok\n' + PERSIST), 'br_netfilter')[0]).toBe(
      'runs modprobe -v br_netfilter && echo ok',
    );
    expect((await audit('', '- name: L\n  ansible.builtin.shell: modprobe overlay; echo br_netfilter\n' + PERSIST)).br_netfilter.who).toBe('operator');
    expect((await audit('', '- name: L\n  ansible.builtin.command: modprobe\n' + PERSIST)).br_netfilter.who).toBe('operator');
  });
});

describe('swap persistence forms', () => {
  it('mount: the fstab it names is in the evidence; state absent of another fstype or without fstype removes no swap', async () => {
    const m = (extra: string) => `- name: Fstab\n  ansible.posix.mount:\n    name: none\n    fstype: swap\n    state: absent\n${extra}`;
    expect(does(await audit(SWAPOFF + m('    fstab: /mnt/etc/fstab\n')), 'swap')).toEqual([
      'runs /sbin/swapoff -a',
      'removes swap entries from /mnt/etc/fstab',
    ]);
    expect((await audit(SWAPOFF + m('').replace('ansible.posix.mount', 'acme.tools.mount'))).swap.who).toBe('operator');
    expect((await audit(SWAPOFF + m('').replace('    fstype: swap\n', ''))).swap.who).toBe('operator');
  });

  it('lineinfile on /etc/fstab by dest, path or name; the line: pattern counts when there is no regexp', async () => {
    for (const key of ['dest', 'path', 'name']) {
      const t = `- name: Fstab\n  ansible.builtin.lineinfile:\n    ${key}: /etc/fstab\n    regexp: swap\n    state: absent\n`;
      expect((await audit(SWAPOFF + t)).swap.who, key).toBe('kubespray');
    }
    const byLine = '- name: Fstab\n  ansible.builtin.lineinfile:\n    path: /etc/fstab\n    line: /swapfile none swap sw 0 0\n    state: absent\n';
    expect(does(await audit(SWAPOFF + byLine), 'swap')).toEqual(['runs /sbin/swapoff -a', 'removes swap lines from /etc/fstab']);
    // A line that is not about swap removes none.
    expect((await audit(SWAPOFF + byLine.replace('/swapfile none swap sw 0 0', 'tmpfs /tmp tmpfs defaults 0 0'))).swap.who).toBe('operator');
    // Neither a pattern nor a line: nothing about swap.
    expect((await audit(SWAPOFF + '- name: Fstab\n  ansible.builtin.lineinfile:\n    path: /etc/fstab\n    state: absent\n')).swap.who).toBe('operator');
    expect((await audit(SWAPOFF + '- name: Fstab\n  ansible.builtin.replace:\n    path: /etc/fstab\n    regexp: swap\n    replace: "#"\n')).swap.who).toBe(
      'kubespray',
    );
    expect((await audit(SWAPOFF + '- name: Fstab\n  ansible.builtin.copy:\n    dest: /etc/fstab\n    content: "# no swap\\n"\n')).swap.who).toBe('operator');
  });

  it('sed must edit /etc/fstab itself and name swap in its script', async () => {
    expect(does(await audit(SWAPOFF + "- name: S\n  ansible.builtin.shell: sed -i '/swap/d' /etc/fstab\n"), 'swap')).toEqual([
      'runs /sbin/swapoff -a',
      'edits swap lines out of /etc/fstab',
    ]);
    expect((await audit(SWAPOFF + "- name: S\n  ansible.builtin.shell: sed -i '/boot/d' /etc/fstab\n")).swap.who).toBe('operator');
    expect((await audit(SWAPOFF + '- name: S\n  ansible.builtin.shell: grep swap /etc/fstab\n')).swap.who).toBe('operator');
  });

  it('the mask is read over a loop of unit names, and a masked: given as a number counts as Ansible reads it', async () => {
    const loop = '- name: Mask\n  ansible.builtin.systemd:\n    name: "{{ item }}"\n    masked: 1\n  loop: [tmp.mount, swap.target]\n';
    expect(does(await audit(SWAPOFF + loop), 'swap')).toEqual(['runs /sbin/swapoff -a', 'masks swap.target']);
    expect((await audit(SWAPOFF + loop.replace('masked: 1', 'masked: 0'))).swap.who).toBe('operator');
    expect((await audit(SWAPOFF + MASK.replace('ansible.builtin.systemd_service', 'ansible.builtin.service'))).swap.who).toBe('kubespray');
    expect((await audit(SWAPOFF + MASK.replace('masked: true', 'masked: "  yes "'))).swap.who).toBe('kubespray');
    expect((await audit(SWAPOFF + MASK.replace('masked: true', 'masked: [true]'))).swap.who).toBe('operator');
  });
});

describe('br_netfilter persistence forms', () => {
  it('every modules-load.d directory systemd reads, and /etc/modules; not a file beside them', async () => {
    for (const dir of ['/etc/modules-load.d', '/run/modules-load.d', '/usr/local/lib/modules-load.d', '/usr/lib/modules-load.d', '/lib/modules-load.d']) {
      const w = await audit('', MODPROBE + PERSIST.replace('/etc/modules-load.d', dir));
      expect(w.br_netfilter.who, dir).toBe('kubespray');
    }
    expect(does(await audit('', MODPROBE + PERSIST.replace('/etc/modules-load.d/k8s.conf', '/etc/modules')), 'br_netfilter')[1]).toBe(
      'persists br_netfilter in /etc/modules',
    );
    expect((await audit('', MODPROBE + PERSIST.replace('/etc/modules-load.d/k8s.conf', '/etc/modules-load.d.conf'))).br_netfilter.who).toBe('operator');
    expect((await audit('', MODPROBE + PERSIST.replace('/etc/modules-load.d/k8s.conf', '/etc/modules.bak'))).br_netfilter.who).toBe('operator');
    expect((await audit('', MODPROBE + PERSIST + '    state: absent\n')).br_netfilter.who).toBe('operator');
  });

  it('copy content over a loop, lineinfile lines over a loop: any item that is the name persists it', async () => {
    const copy =
      '- name: P\n  ansible.builtin.copy:\n    dest: "/etc/modules-load.d/{{ item }}.conf"\n    content: "{{ item }}"\n  loop: [overlay, br_netfilter]\n';
    // One file per module, /etc/modules-load.d/br_netfilter.conf holding its name.
    expect(does(await audit('', MODPROBE + copy), 'br_netfilter')[1]).toBe('persists br_netfilter in /etc/modules-load.d/{{ item }}.conf');
    const line = '- name: P\n  ansible.builtin.lineinfile:\n    path: /etc/modules-load.d/k8s.conf\n    line: "{{ item }}"\n  loop: [overlay, br_netfilter]\n';
    expect(does(await audit('', MODPROBE + line), 'br_netfilter')).toEqual([
      'loads br_netfilter (modprobe)',
      'persists br_netfilter in /etc/modules-load.d/k8s.conf',
    ]);
    expect((await audit('', MODPROBE + line.replace(', br_netfilter', ''))).br_netfilter.who).toBe('operator');
    const copyLoop = '- name: P\n  ansible.builtin.copy:\n    dest: /etc/modules-load.d/k8s.conf\n    content: "{{ item }}"\n  loop: [overlay, br_netfilter]\n';
    expect((await audit('', MODPROBE + copyLoop)).br_netfilter.who).toBe('kubespray');
  });

  it('a template is judged by what it renders with the role vars; an absolute or missing src renders nothing we read', async () => {
    const tpl = (src: string) => `- name: P\n  ansible.builtin.template:\n    src: ${src}\n    dest: /etc/modules-load.d/k8s.conf\n`;
    const defaults = { [`${N}/defaults/main.yml`]: '---\nk8s_modules: [overlay, br_netfilter]\n' };
    expect(
      (await audit('', MODPROBE + tpl('m.j2'), { ...defaults, [`${N}/templates/m.j2`]: '{% for m in k8s_modules %}{{ m }}\n{% endfor %}' })).br_netfilter.who,
    ).toBe('kubespray');
    // A template that cannot be rendered is read as written: the name in it still shows.
    expect((await audit('', MODPROBE + tpl('m.j2'), { [`${N}/templates/m.j2`]: '# {{ undefined_thing }}\nbr_netfilter\n' })).br_netfilter.who).toBe(
      'kubespray',
    );
    expect((await audit('', MODPROBE + tpl('m.j2'), { [`${N}/templates/m.j2`]: '{{ undefined_thing }}\n' })).br_netfilter.who).toBe('operator');
    expect((await audit('', MODPROBE + tpl('/etc/k8s/m.j2'), { [`${N}/templates/etc/k8s/m.j2`]: 'br_netfilter\n' })).br_netfilter.who).toBe('operator');
    expect((await audit('', MODPROBE + tpl('gone.j2'))).br_netfilter.who).toBe('operator');
  });

  it('blockinfile persists what its block says; modprobe with state absent or of other modules loads nothing', async () => {
    const block = '- name: P\n  ansible.builtin.blockinfile:\n    path: /etc/modules-load.d/k8s.conf\n    block: overlay\n';
    expect((await audit('', MODPROBE + block)).br_netfilter.who).toBe('operator');
    expect((await audit('', MODPROBE.replace('name: br_netfilter', 'name: overlay') + PERSIST)).br_netfilter.who).toBe('operator');
    // persistent: present of a module that is unloaded persists nothing either.
    const gone = MODPROBE.replace('state: present', 'state: absent') + '    persistent: present\n';
    expect((await audit('', gone)).br_netfilter.evidence).toEqual([]);
  });
});

describe('ip_forward forms', () => {
  it('a value of 1 as an integer or with blanks sets it; the file the task names is in the evidence', async () => {
    const t = (value: string, extra = '') => `- name: F\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: ${value}\n${extra}`;
    expect(does(await audit(t('1', '    sysctl_file: /etc/sysctl.d/99-k8s.conf\n')), 'ip_forward')).toEqual([
      'sets net.ipv4.ip_forward = 1 (sysctl module, file /etc/sysctl.d/99-k8s.conf)',
    ]);
    expect((await audit(t('" 1 "'))).ip_forward.who).toBe('kubespray');
    expect((await audit(t('10'))).ip_forward.who).toBe('operator');
    expect((await audit('- name: F\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n')).ip_forward.who).toBe('operator');
    expect((await audit(FORWARD.replace('net.ipv4.ip_forward', 'net.ipv6.conf.all.forwarding'))).ip_forward.who).toBe('operator');
  });

  it('the keys kubespray sets: a templated key is left out, a templated value is null, a removed key is not set', async () => {
    const w = await audit(
      [
        '- name: K',
        '  ansible.posix.sysctl:',
        '    name: "{{ item.k }}"',
        '    value: "{{ item.v }}"',
        '  loop:',
        '    - { k: net.ipv4.ip_forward, v: 1 }',
        '    - { k: vm.swappiness }',
        '- name: Templated key',
        '  ansible.posix.sysctl:',
        '    name: "{{ other_key }}"',
        '    value: 1',
        '- name: Templated value',
        '  ansible.posix.sysctl:',
        '    name: kernel.panic',
        '    value: "{{ panic_secs }}"',
        '- name: Gone',
        '  ansible.posix.sysctl:',
        '    name: net.ipv4.tcp_syncookies',
        '    state: absent',
        '',
      ].join('\n'),
    );
    expect(w.sysctl_keys.map((k) => [k.key, k.value, k.ref.line])).toEqual([
      ['net.ipv4.ip_forward', '1', 2],
      ['vm.swappiness', null, 2],
      ['kernel.panic', null, 13],
    ]);
  });
});

describe('the sysctl file', () => {
  it('is the file of the ip_forward task, even when more tasks use another; with no ip_forward task, the most used', async () => {
    const t = (name: string, file: string) => `- name: ${name}\n  ansible.posix.sysctl:\n    name: ${name}\n    value: "1"\n    sysctl_file: ${file}\n`;
    const w = await audit(t('kernel.a', '/etc/sysctl.d/a.conf') + t('kernel.b', '/etc/sysctl.d/a.conf') + t('net.ipv4.ip_forward', '/etc/sysctl.d/f.conf'));
    expect(w.sysctl_file).toEqual({
      path: '/etc/sysctl.d/f.conf',
      variable: null,
      definedAt: [],
      tasks: [{ file: PM, line: 12, name: 'net.ipv4.ip_forward' }],
    });
    const most = await audit(t('kernel.a', '/etc/sysctl.d/b.conf') + t('kernel.b', '/etc/sysctl.d/a.conf') + t('kernel.c', '/etc/sysctl.d/a.conf'));
    expect(most.sysctl_file?.path).toBe('/etc/sysctl.d/a.conf');
    expect(most.sysctl_file?.tasks.map((x) => x.name)).toEqual(['kernel.b', 'kernel.c']);
    // A task that removes its key writes no file; one that does not run on this host still names the default (issue 44).
    const none = await audit(
      t('kernel.a', '/etc/sysctl.d/a.conf').replace('    value: "1"\n', '    state: absent\n') + t('kernel.b', '/etc/b.conf') + '  when: false\n',
    );
    expect(none.sysctl_file?.path).toBe('/etc/b.conf');
    expect(none.sysctl_file?.tasks.map((x) => x.name)).toEqual(['kernel.b']);
    // Of two ip_forward tasks, one per OS family, the one that runs on this host names the file.
    const perOs = await audit(
      t('net.ipv4.ip_forward', '/etc/sysctl.d/other-os.conf') + '  when: false\n' + t('net.ipv4.ip_forward', '/etc/sysctl.d/this-os.conf'),
    );
    expect(perOs.sysctl_file?.path).toBe('/etc/sysctl.d/this-os.conf');
  });

  it('a sysctl_file that renders to something not a path is unknown, with a warning', async () => {
    const w = await audit(FORWARD + '    sysctl_file: "{{ files }}"\n', '', { [`${P}/defaults/main.yml`]: '---\nfiles: [a, b]\n' });
    expect(w.sysctl_file).toBeNull();
    expect(w.warnings).toEqual([
      { file: PM, line: 2, expression: '{{ files }}', message: 'sysctl_file: {{ files }} cannot be evaluated: it is ["a","b"], not a path' },
    ]);
  });

  it('a set_fact decided at run time that may replace the variable is a note', async () => {
    const w = await audit(
      '- name: Probe\n  ansible.builtin.command: cat /etc/os-release\n  register: os\n- name: Maybe\n  ansible.builtin.set_fact:\n    my_file: /etc/sysctl.d/other.conf\n  when: os.rc == 0\n' +
        FORWARD +
        '    sysctl_file: "{{ my_file }}"\n',
      '',
      { [`${P}/defaults/main.yml`]: '---\nmy_file: /etc/sysctl.d/k8s.conf\n' },
    );
    expect(w.sysctl_file?.path).toBe('/etc/sysctl.d/k8s.conf');
    expect(w.notes).toEqual([`${PM}:5 "Maybe" sets my_file at run time to "/etc/sysctl.d/other.conf"`]);
  });
});

describe('how a keyword that gates a task reads in its evidence', () => {
  // Each fixture writes "---" on line 1; FORWARD takes four lines.
  const ev = async (pre: string) => (await audit(pre)).ip_forward.evidence.map(formatEvidence);
  const at = (line: number) => `${PM}:${line}`;
  const FWD = (line: number) => `${at(line)} "Forward": sets net.ipv4.ip_forward = 1 (sysctl module, file /etc/sysctl.conf)`;

  it('tags never and check_mode: true say what they do; a template in them that cannot be evaluated says why', async () => {
    expect(await ev(FORWARD + '  tags: [never]\n')).toEqual([
      `${FWD(2)}; does nothing on this host: ${at(6)} tags: ["never"] (kubespray runs untagged: Ansible skips a task tagged never unless it is also tagged always)`,
    ]);
    expect(await ev(FORWARD + '  check_mode: true\n')).toEqual([
      `${FWD(2)}; does nothing on this host: ${at(6)} check_mode: true (a module in check mode changes nothing)`,
    ]);
    expect(await ev(FORWARD + '  tags: "{{ t }}"\n')).toEqual([
      `${FWD(2)}; unknown whether it runs: ${at(6)} tags: ["{{ t }}"] (kubespray runs untagged: Ansible skips a task tagged never unless it is also tagged always): 't' is undefined`,
    ]);
    expect(await ev(FORWARD + '  check_mode: maybe\n')).toEqual([
      `${FWD(2)}; unknown whether it runs: ${at(6)} check_mode: "maybe" (a module in check mode changes nothing): check_mode "maybe" is not a boolean`,
    ]);
  });

  it('run_once: false runs the task on every host, this one included; run_once: true on an inventory not known to be one host is unknown', async () => {
    expect((await audit(FORWARD + '  run_once: false\n')).ip_forward.who).toBe('kubespray');
    expect((await audit(FORWARD + '  run_once: "{{ 1 == 2 }}"\n')).ip_forward.who).toBe('kubespray');
    const once = await audit(FORWARD + '  run_once: true\n');
    expect(once.ip_forward.who).toBe('unknown');
    expect(once.ip_forward.reason).toContain(`${at(6)} `);
  });

  it('a meta end before the task: the one that ran, one not modelled, one decided at run time, one that cannot be evaluated', async () => {
    expect(await ev('- meta: end_host\n' + FORWARD)).toEqual([`${FWD(3)}; does nothing on this host: ${at(2)} meta: end_host at ${at(2)} ran`]);
    expect(await ev('- meta: clear_facts\n' + FORWARD)).toEqual([
      `${FWD(3)}; unknown whether it runs: ${at(2)} meta: clear_facts is not modelled; what runs after it is unknown: meta: clear_facts is not modelled; what runs after it is unknown`,
    ]);
    expect(await ev('- name: Probe\n  command: probe\n  register: p\n- meta: end_host\n  when: p.rc == 0\n' + FORWARD)).toEqual([
      `${FWD(7)}; decided at run time: ${at(5)} meta: end_host at ${at(5)} ran reads whether meta: end_host at ${at(5)} ends the host is decided at run time: ${at(6)} when: p.rc == 0 reads p is only known at run time (${at(2)} (registered by "Probe"))`,
    ]);
    expect(await ev('- meta: end_host\n  when: x | no_such_filter\n' + FORWARD)).toEqual([
      `${FWD(4)}; unknown whether it runs: ${at(2)} meta: end_host at ${at(2)} ran: whether meta: end_host at ${at(2)} ends the host cannot be evaluated: ${at(3)} when: x | no_such_filter: filter not found: no_such_filter`,
    ]);
  });
});

describe('set_fact and register', () => {
  it('a set_fact that surely runs replaces the variable; one with a run-time value makes later reads run-time too', async () => {
    const w = await audit(
      '- name: Fact\n  ansible.builtin.set_fact:\n    forward: "{{ 1 + 0 }}"\n    cacheable: true\n' + FORWARD.replace('value: "1"', 'value: "{{ forward }}"'),
    );
    expect(w.ip_forward.who).toBe('kubespray');
    const rt = await audit(
      '- name: Probe\n  ansible.builtin.command: sysctl -n net.ipv4.ip_forward\n  register: probe\n- name: Fact\n  ansible.builtin.set_fact:\n    do_it: "{{ probe.stdout == \'0\' }}"\n' +
        FORWARD +
        '  when: do_it\n',
    );
    expect(rt.ip_forward.who).toBe('kubespray');
    expect(rt.ip_forward.evidence[0]!.status.runs).toBe('at run time');
  });

  it('set_fact turns the strings true, false, yes and no, in any case, into booleans, as ansible-playbook does; others stay strings', async () => {
    const values = ['YES', 'yes', 'No', 'True', 'on', ' yes', '1'];
    const facts = Object.fromEntries(values.map((v, i) => [`v${i}`, v]));
    const tasks = await runLocalPlay([
      {
        hosts: 'localhost',
        gather_facts: false,
        tasks: [{ set_fact: facts }, { debug: { msg: `{{ [${values.map((_, i) => `v${i}`).join(', ')}] | map('type_debug') | list }}` } }],
      },
    ]);
    const types = tasks[1]!.hosts.localhost!.msg as string[];
    expect(types).toContain('bool');
    expect(types).toContain('str');
    for (const [i, v] of values.entries()) {
      const w = await audit(
        `- name: Fact\n  ansible.builtin.set_fact:\n    flag: ${JSON.stringify(v)}\n` + FORWARD + '  when: flag == true or flag == false\n',
      );
      expect(w.ip_forward.who, JSON.stringify(v)).toBe(types[i] === 'bool' ? 'kubespray' : 'operator');
    }
  }, 60_000);

  it('under check_mode: true, set_fact still sets and assert still fails, as ansible-playbook shows; a module changes nothing', async () => {
    const tasks = await runLocalPlay([
      {
        hosts: 'localhost',
        gather_facts: false,
        tasks: [
          { set_fact: { go: true }, check_mode: true },
          { debug: { msg: '{{ go | default(false) }}' } },
          { assert: { that: '1 == 2' }, check_mode: true, ignore_errors: true, register: 'checked' },
          { debug: { msg: '{{ checked.failed }}' } },
        ],
      },
    ]);
    expect(tasks[1]!.hosts.localhost!.msg).toBe(true);
    expect(tasks[3]!.hosts.localhost!.msg).toBe(true);
    const fact = await audit('- name: Fact\n  ansible.builtin.set_fact:\n    go: true\n  check_mode: true\n' + FORWARD + '  when: go\n', '', {
      [`${P}/defaults/main.yml`]: '---\ngo: false\n',
    });
    expect(fact.ip_forward.who).toBe('kubespray');
    // The failing assert ends the host today; the verdict answers what the roles do once it passes (issue 44).
    const check = await audit('- name: Check\n  ansible.builtin.assert:\n    that: 1 == 2\n  check_mode: true\n' + FORWARD);
    expect(check.ip_forward.who).toBe('kubespray');
    expect(check.ip_forward.evidence[0]!.status.runs).toBe('yes');
    expect(check.ip_forward.evidence[0]!.preflight?.runs).toBe('no');
    // The sysctl module itself under check_mode: true changes nothing.
    expect((await audit(FORWARD + '  check_mode: true\n')).ip_forward.who).toBe('operator');
  }, 60_000);

  it('a set_fact after a task does not reach back into it: its sysctl_file is the value when it ran', async () => {
    const w = await audit(
      FORWARD + '    sysctl_file: "{{ ks_file }}"\n- name: Later\n  ansible.builtin.set_fact:\n    ks_file: /etc/sysctl.d/00-later.conf\n',
      '',
      { [`${P}/defaults/main.yml`]: '---\nks_file: /etc/sysctl.d/99-first.conf\n' },
    );
    expect(w.sysctl_file).toMatchObject({
      path: '/etc/sysctl.d/99-first.conf',
      variable: 'ks_file',
      definedAt: [{ file: `${P}/defaults/main.yml`, line: 2, variable: 'ks_file' }],
    });
  });

  it('a set_fact that does not run changes nothing; a registered result of a task that does not run is not there', async () => {
    const w = await audit('- name: Fact\n  ansible.builtin.set_fact:\n    go: false\n  when: false\n' + FORWARD + '  when: go\n', '', {
      [`${P}/defaults/main.yml`]: '---\ngo: true\n',
    });
    expect(w.ip_forward.who).toBe('kubespray');
    const reg = await audit(
      "- name: Find\n  ansible.builtin.shell: ss -Hltnp 'sport = :10250'\n  register: holder\n  when: false\n",
      '- name: Stop\n  ansible.builtin.systemd_service:\n    name: "{{ holder.stdout }}"\n    state: stopped\n',
    );
    expect(reg.port_10250.who).not.toBe('kubespray');
  });
});

describe('port 10250 forms', () => {
  const shell = (c: string) => `- name: Cmd\n  ansible.builtin.shell: ${JSON.stringify(c)}\n`;

  it('each way a command frees it, and the evidence line', async () => {
    for (const c of [
      'fuser -mk 10250/tcp',
      'killall -9 $(ss -ltnp sport = :10250)',
      'systemctl disable --now $(fuser 10250/tcp)',
      'systemctl mask $(lsof -t -i:10250)',
      'kill -9 $(fuser 10250/tcp 2>/dev/null)',
    ]) {
      expect((await audit('', shell(c))).port_10250.who, c).toBe('kubespray');
    }
    expect(does(await audit('', shell('fuser -k 10250/tcp')), 'port_10250')).toEqual(['runs fuser -k 10250/tcp']);
    for (const c of [
      'fuser -v 10250/tcp',
      'fuser -k',
      'kill $(cat /run/x.pid) ; ss -ltn',
      'systemctl restart $(lsof -t -i:10250)',
      'systemctl stop $(cat /run/unit)',
      'kill $(grep 10250 /etc/services)',
    ]) {
      expect((await audit('', shell(c))).port_10250.who, c).toBe('operator');
    }
  });

  it('a stop, a disable or a mask of the unit a registered lookup found; the evidence names the lookup', async () => {
    const find = "- name: Find\n  ansible.builtin.shell: ss -Hltnp 'sport = :10250'\n  register: holder\n";
    const unit = (how: string) => `- name: Stop\n  ansible.builtin.service:\n    name: "{{ holder.stdout }}"\n    ${how}\n`;
    const w = await audit('', find + unit('masked: yes'));
    expect(does(w, 'port_10250')).toEqual([`stops the unit ${NM}:2 "Find" finds on port 10250 (ss -Hltnp 'sport = :10250')`]);
    expect((await audit('', find + unit('enabled: true'))).port_10250.who).toBe('operator');
    // A registered command that looks elsewhere finds nothing on the port.
    expect((await audit('', find.replace(':10250', ':22') + unit('state: stopped'))).port_10250.who).toBe('operator');
    // A registered result of a module that is no command finds no unit.
    const stat = '- name: Find\n  ansible.builtin.stat:\n    path: /run/10250\n  register: holder\n';
    expect((await audit('', stat + unit('state: stopped'))).port_10250.who).toBe('operator');
    // The name must read the lookup's result, not just any template.
    expect(
      (await audit('', find + unit('state: stopped').replace('holder.stdout', 'other_unit'), { [`${N}/defaults/main.yml`]: '---\nother_unit: x.service\n' }))
        .port_10250.who,
    ).toBe('operator');
  });
});

describe('what cannot be evaluated, by problem', () => {
  it('a modprobe name that cannot be evaluated makes br_netfilter unknown, with a warning naming task, argument and expression', async () => {
    const w = await audit('', '- name: Load\n  community.general.modprobe:\n    name: "{{ netfilter_mod }}"\n' + PERSIST);
    expect(w.br_netfilter.who).toBe('unknown');
    expect(w.br_netfilter.reason).toBe(`${NM}:2 "Load": name {{ netfilter_mod }} cannot be evaluated ('netfilter_mod' is undefined), and it could fix it`);
    expect(w.warnings).toEqual([
      {
        file: NM,
        line: 2,
        expression: '{{ netfilter_mod }}',
        message: `br_netfilter: ${NM}:2 "Load" (community.general.modprobe) name {{ netfilter_mod }} cannot be evaluated: 'netfilter_mod' is undefined`,
      },
    ]);
    // The same argument decides nothing for the other problems.
    expect([w.swap.who, w.ip_forward.who, w.port_10250.who]).toEqual(['operator', 'operator', 'operator']);
  });

  it('a sysctl value, a mount fstype and a unit state that cannot be evaluated each make their own problem unknown', async () => {
    const ipf = await audit(FORWARD.replace('value: "1"', 'value: "{{ fwd }}"'));
    expect([ipf.ip_forward.who, ipf.swap.who, ipf.br_netfilter.who]).toEqual(['unknown', 'operator', 'operator']);
    const mount = await audit(SWAPOFF + '- name: M\n  ansible.posix.mount:\n    name: none\n    fstype: "{{ fs }}"\n    state: absent\n');
    expect([mount.swap.who, mount.ip_forward.who]).toEqual(['unknown', 'operator']);
    const unit = await audit('', '- name: U\n  ansible.builtin.systemd_service:\n    name: x.service\n    state: "{{ st }}"\n');
    expect([unit.port_10250.who, unit.swap.who, unit.br_netfilter.who]).toEqual(['unknown', 'unknown', 'operator']);
    const copy = await audit('', MODPROBE + '- name: C\n  ansible.builtin.copy:\n    dest: "{{ where }}"\n    content: br_netfilter\n');
    expect(copy.br_netfilter.who).toBe('unknown');
  });

  it('a loop that cannot be evaluated hides what the task would do; in a task that does not run it hides nothing', async () => {
    const t = '- name: L\n  community.general.modprobe:\n    name: "{{ item }}"\n  loop: "{{ mods }}"\n';
    const w = await audit('', t + PERSIST);
    expect(w.br_netfilter.who).toBe('unknown');
    expect(w.warnings.map((x) => x.message)).toEqual([
      `br_netfilter: ${NM}:2 "L" (community.general.modprobe) loop {{ mods }} cannot be evaluated: 'mods' is undefined`,
    ]);
    expect((await audit('', t + '  when: false\n' + PERSIST)).br_netfilter.who).toBe('operator');
    const notList = await audit('', t + PERSIST, { [`${N}/defaults/main.yml`]: '---\nmods: br_netfilter\n' });
    expect(notList.warnings.map((x) => x.message)).toEqual([
      `br_netfilter: ${NM}:2 "L" (community.general.modprobe) loop {{ mods }} cannot be evaluated: not a list`,
    ]);
    const ok = await audit('', t + PERSIST, { [`${N}/defaults/main.yml`]: '---\nmods: [overlay, br_netfilter]\n' });
    expect(ok.br_netfilter.who).toBe('kubespray');
  });

  it('a fixing task whose when cannot be evaluated: unknown, naming the condition; each such task is warned about once', async () => {
    const w = await audit(SWAPOFF + '  when: maybe_swap\n' + MASK + '  when: maybe_swap\n');
    expect(w.swap.who).toBe('unknown');
    expect(w.swap.reason).toBe(`the condition ${PM}:4 when: maybe_swap cannot be evaluated ('maybe_swap' is undefined)`);
    expect(w.warnings).toEqual([
      { file: PM, line: 4, expression: 'maybe_swap', message: `swap: whether ${PM}:2 "Swap off" runs cannot be evaluated: 'maybe_swap' is undefined` },
      { file: PM, line: 9, expression: 'maybe_swap', message: `swap: whether ${PM}:5 "Mask swap" runs cannot be evaluated: 'maybe_swap' is undefined` },
    ]);
    // Only the missing half is unsure: swapoff surely runs, the mask is unknown.
    const half = await audit(SWAPOFF + MASK + '  when: maybe_swap\n');
    expect(half.swap.who).toBe('unknown');
    expect(half.warnings.map((x) => x.line)).toEqual([8]);
    // Unsure about a half that is present anyway: kubespray.
    const both = await audit(SWAPOFF + SWAPOFF + '  when: maybe_swap\n' + MASK);
    expect(both.swap.who).toBe('kubespray');
    expect(both.warnings).toEqual([]);
  });

  it('an unfollowed include warns once per problem it could hide, naming the include', async () => {
    const w = await audit('- name: Extra\n  include_tasks: "{{ extra_file }}"\n');
    expect(w.warnings.map((x) => x.message)).toEqual(
      ['swap', 'br_netfilter', 'ip_forward', 'port_10250'].map(
        (p) => `${p}: include_tasks {{ extra_file }} cannot be evaluated ('extra_file' is undefined); not followed, and a task in it could fix it`,
      ),
    );
    expect(w.warnings.every((x) => x.file === PM && x.line === 2 && x.expression === 'Extra')).toBe(true);
    const msg = "include_tasks {{ extra_file }} cannot be evaluated ('extra_file' is undefined); not followed";
    expect(w.notes).toEqual([`${PM}:2 "Extra": ${msg}`]);
    expect(w.port_10250.reason).toBe(`${PM}:2 "Extra": ${msg}; the tasks it includes were not read`);
  });

  it('an include loop is a note, and decides nothing', async () => {
    const w = await audit(SWAPOFF + MASK + '- name: Again\n  include_tasks: main.yml\n');
    expect(w.swap.who).toBe('kubespray');
    expect(w.notes).toEqual([`${PM}:8 "Again": include loop through ${PM}; not followed again`]);
    expect(w.warnings).toEqual([]);
  });

  it('an include whose file name renders to a list is not followed, and says so', async () => {
    const w = await audit('- name: Inc\n  include_tasks: "{{ inc }}"\n', '', { [`${P}/defaults/main.yml`]: '---\ninc: [a.yml]\n' });
    expect(w.notes).toEqual([`${PM}:2 "Inc": include_tasks {{ inc }} cannot be evaluated (not a file name); not followed`]);
    const named = await audit('- name: Inc\n  include_tasks: "{{ inc }}"\n', '', {
      [`${P}/defaults/main.yml`]: '---\ninc: more.yml\n',
      [`${P}/tasks/more.yml`]: SWAPOFF + MASK,
    });
    expect(named.swap.who).toBe('kubespray');
    expect(named.files).toEqual([PM, `${P}/tasks/more.yml`, NM]);
  });
});
