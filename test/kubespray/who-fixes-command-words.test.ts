// How who-fixes reads a command task: shell and raw through /bin/sh's grammar
// (lex/shell.ts), command as one argv (ansible's run_command: shlex.split, no
// shell). The oracles: ansible's command module itself, run on localhost with
// echo (the operators reach echo as words), and /bin/sh for substitutions.
import { describe, expect, it } from 'vitest';
import { runLocalModule } from '../helpers/ansible-localhost.js';
import { audit } from '../helpers/kubespray-fixture.js';

const MASK = '- name: Mask swap\n  ansible.builtin.systemd_service:\n    name: swap.target\n    masked: true\n';

describe('command words', () => {
  it('the command module passes ; && | as words to one program: echo ... && swapoff -a runs no swapoff', async () => {
    const r = await runLocalModule('ansible.builtin.command', 'echo hi && swapoff -a');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('hi && swapoff -a');
    expect((await audit('- name: Cmd\n  ansible.builtin.command: echo hi && swapoff -a\n' + MASK)).swap.who).toBe('operator');
    expect((await audit('- name: Cmd\n  ansible.builtin.shell: echo hi && swapoff -a\n' + MASK)).swap.who).toBe('kubespray');
  });

  it('the command module runs no shell, so exec is no program there: exec {{ x }} fixes nothing; under shell it runs {{ x }}', async () => {
    const r = await runLocalModule('ansible.builtin.command', 'exec true');
    expect(r.stdout).toContain('FAILED');
    expect(r.stdout).toContain("No such file or directory: b'exec'");
    const command = await audit('- name: Cmd\n  ansible.builtin.command: exec {{ x }}\n');
    expect([command.swap.who, command.br_netfilter.who, command.port_10250.who]).toEqual(['operator', 'operator', 'operator']);
    const shell = await audit('- name: Cmd\n  ansible.builtin.shell: exec {{ x }}\n');
    expect([shell.swap.who, shell.br_netfilter.who, shell.port_10250.who]).toEqual(['unknown', 'unknown', 'unknown']);
  });

  it('a variable the script sets may name the program: S=/sbin/swapoff; $S -a turns swap off', async () => {
    expect((await audit('- name: Cmd\n  ansible.builtin.shell: "S=/sbin/swapoff; $S -a"\n' + MASK)).swap.who).toBe('kubespray');
  });

  it('[ and [[ are the test builtin, not a program that could be anything: a test around a template fixes nothing', async () => {
    for (const test of ["[ -n '{{ x }}' ] && true", "[[ -n '{{ x }}' ]] && true"]) {
      const w = await audit(`- name: Cmd\n  ansible.builtin.shell: ${JSON.stringify(test)}\n`);
      expect([w.swap.who, w.br_netfilter.who, w.port_10250.who], test).toEqual(['operator', 'operator', 'operator']);
    }
  });

  it('fuser frees a port only with -k among its options: a path holding "-k" is no option', async () => {
    const free = (c: string) => audit(`- name: Free\n  ansible.builtin.shell: ${JSON.stringify(c)}\n`);
    expect((await free('fuser -v 10250/tcp /opt/my-kube')).port_10250.who).toBe('operator');
    expect((await free('fuser -vk 10250/tcp')).port_10250.who).toBe('kubespray');
  });

  it('the command module fails on an open quote in cmd: (shlex: No closing quotation), so the task runs nothing', async () => {
    const r = await runLocalModule('ansible.builtin.command', JSON.stringify({ cmd: 'echo -a "x' }));
    expect(r.stdout).toContain('FAILED');
    expect(r.stdout).toContain('No closing quotation');
    const w = await audit('- name: Cmd\n  ansible.builtin.command:\n    cmd: swapoff -a "x\n' + MASK);
    expect(w.swap.who).toBe('operator');
    expect(w.swap.evidence.map((e) => e.name)).toEqual(['Mask swap']);
  });

  it('a backquoted substitution with spaces runs its commands: echo `swapoff -a; true`', async () => {
    expect((await audit('- name: Cmd\n  ansible.builtin.shell: "echo `swapoff -a; true` done"\n' + MASK)).swap.who).toBe('kubespray');
  });

  it("the shell's own variables are put in: P=10250; fuser -k $P/tcp frees the port", async () => {
    expect((await audit('- name: Free\n  ansible.builtin.shell: "P=10250; fuser -k $P/tcp"\n')).port_10250.who).toBe('kubespray');
  });
});
