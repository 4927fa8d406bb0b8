// ansible's own facts for the node: `ansible -i INVENTORY NODE -m setup`
// run from the kubespray checkout, and its ad-hoc output ("node1 | SUCCESS =>
// {json}", the minimal callback's form) read for the six fields. The outputs
// are written as ansible prints them; the run itself is answered by a fake
// runner that records what was asked.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Host, type CommandRunner } from '../../src/host.js';
import { gatherAnsibleFacts, parseSetupOutput } from '../../src/facts/ansible.js';
import { tree } from '../helpers/installed-tree.js';

type Call = { cmd: string; args: string[]; cwd?: string };

function fakeRunner(calls: Call[], answers: Record<string, { exitCode: number; stdout: string; stderr?: string }>, envs: unknown[] = []): CommandRunner {
  return async (cmd, args, opts) => {
    calls.push({ cmd, args, cwd: opts.cwd });
    envs.push(opts.env);
    const a = answers[[cmd, ...args].join(' ')] ?? { exitCode: 127, stdout: '' };
    return { command: [cmd, ...args].join(' '), exitCode: a.exitCode, stdout: a.stdout, stderr: a.stderr ?? '' };
  };
}

const FACTS =
  '"ansible_memtotal_mb": 1966, "ansible_processor_vcpus": 2, "ansible_distribution": "Debian", "ansible_distribution_version": "12", "ansible_kernel": "6.1.0-31-cloud-amd64"';

describe('ansible -m setup output', () => {
  it('takes the six fields from ansible_facts after "node | SUCCESS => "', () => {
    const out = `[WARNING]: something\nnode1 | SUCCESS => {\n    "ansible_facts": {\n        "ansible_default_ipv4": {"address": "192.0.2.10", "interface": "eth0"},\n        "ansible_distribution": "Debian",\n        "ansible_distribution_version": "12",\n        "ansible_kernel": "6.1.0-31-cloud-amd64",\n        "ansible_memtotal_mb": 1967,\n        "ansible_processor_vcpus": 2,\n        "ansible_hostname": "x{y}"\n    },\n    "changed": false\n}\n`;
    expect(parseSetupOutput(out, 'node1')).toEqual({
      memtotal_mb: 1967,
      processor_vcpus: 2,
      distribution: 'Debian',
      distribution_version: '12',
      kernel: '6.1.0-31-cloud-amd64',
      default_ipv4: '192.0.2.10',
      // All of ansible_facts, without the prefix, for the audit's conditions.
      extra: {
        default_ipv4: { address: '192.0.2.10', interface: 'eth0' },
        distribution: 'Debian',
        distribution_version: '12',
        kernel: '6.1.0-31-cloud-amd64',
        memtotal_mb: 1967,
        processor_vcpus: 2,
        hostname: 'x{y}',
      },
    });
  });
  it('reports an unreachable node with its message', () => {
    const out = 'node1 | UNREACHABLE! => {\n    "changed": false,\n    "msg": "Failed to connect",\n    "unreachable": true\n}\n';
    expect(() => parseSetupOutput(out, 'node1')).toThrow(/UNREACHABLE! Failed to connect/);
    expect(() => parseSetupOutput('nothing', 'node1')).toThrow(/no "node1 \| SUCCESS => " line/);
  });
});

describe('ansible -m setup output: what else it may say', () => {
  it('CHANGED is a success too; no default route gives a null default_ipv4', () => {
    const f = parseSetupOutput(`node1 | CHANGED => {"ansible_facts": {${FACTS}}}\n`, 'node1');
    expect([f.memtotal_mb, f.default_ipv4]).toEqual([1966, null]);
  });
  it("another node's line is not this node's: the node name is matched whole, its dots literally", () => {
    const out = `node10 | SUCCESS => {"ansible_facts": {${FACTS}}}\nnodeX1 | SUCCESS => {}\n`;
    expect(() => parseSetupOutput(out, 'node1')).toThrow(/no "node1 \| SUCCESS => " line/);
    expect(() => parseSetupOutput('n1x2 | SUCCESS => {}\n', 'n1.2')).toThrow(/no "n1\.2 \| SUCCESS => " line/);
  });
  it('a brace inside a string does not end the document; text after it is ignored', () => {
    const out = `node1 | SUCCESS => {"ansible_facts": {${FACTS}, "ansible_motd": "}\\"{"}}\nPLAY RECAP {\n`;
    expect(parseSetupOutput(out, 'node1').extra?.motd).toBe('}"{');
  });
  it('FAILED!, a document that is not JSON, no ansible_facts, a field missing or of the wrong type: errors naming it', () => {
    expect(() => parseSetupOutput('node1 | FAILED! => {"msg": "python not found\\n"}\n', 'node1')).toThrow(
      'ansible -m setup on node1: FAILED! python not found',
    );
    expect(() => parseSetupOutput('node1 | SUCCESS => {"ansible_facts": \n', 'node1')).toThrow(/the setup output for node1 is not JSON/);
    expect(() => parseSetupOutput('node1 | SUCCESS => {"changed": false}\n', 'node1')).toThrow('the setup output for node1 has no ansible_facts');
    const noKernel = FACTS.replace(', "ansible_kernel": "6.1.0-31-cloud-amd64"', '');
    expect(() => parseSetupOutput(`node1 | SUCCESS => {"ansible_facts": {${noKernel}}}`, 'node1')).toThrow(
      'ansible_facts.ansible_kernel is missing or not a string',
    );
    const cpusText = FACTS.replace('"ansible_processor_vcpus": 2', '"ansible_processor_vcpus": "2"');
    expect(() => parseSetupOutput(`node1 | SUCCESS => {"ansible_facts": {${cpusText}}}`, 'node1')).toThrow(
      'ansible_facts.ansible_processor_vcpus is missing or not a number',
    );
  });
});

describe('ansible facts path', () => {
  it('runs `ansible -i <inventory> <node> -m setup` from the kubespray directory', async () => {
    const root = await tree({ 'opt/ks/kubespray/ansible.cfg': '' });
    const calls: Call[] = [];
    const setup = `node1 | SUCCESS => {\n "ansible_facts": {"ansible_memtotal_mb": 1966, "ansible_processor_vcpus": 2, "ansible_distribution": "Debian", "ansible_distribution_version": "12", "ansible_kernel": "6.1.0-31-cloud-amd64", "ansible_default_ipv4": {"address": "192.0.2.10"}}\n}\n`;
    const host = new Host({
      root,
      live: true,
      runner: fakeRunner(calls, { 'ansible -i /root/ks/inventory/lab/inventory.ini node1 -m setup': { exitCode: 0, stdout: setup } }),
    });
    const f = await gatherAnsibleFacts(host, { dir: '/opt/ks/kubespray', inventory: '/root/ks/inventory/lab/inventory.ini', node: 'node1' });
    expect(f.memtotal_mb).toBe(1966);
    expect(calls).toEqual([
      { cmd: 'ansible', args: ['-i', '/root/ks/inventory/lab/inventory.ini', 'node1', '-m', 'setup'], cwd: path.join(root, 'opt/ks/kubespray') },
    ]);
  });
});

describe('ansible facts path: how it runs and fails', () => {
  const opts = { dir: '/opt/ks/kubespray', inventory: '/root/ks/inventory/lab/inventory.ini', node: 'node1' };
  const CMD = 'ansible -i /root/ks/inventory/lab/inventory.ini node1 -m setup';
  it('without colour or callback plugins, so the output is the plain ad-hoc form', async () => {
    const root = await tree({ 'opt/ks/kubespray/ansible.cfg': '' });
    const envs: unknown[] = [];
    const host = new Host({
      root,
      live: true,
      runner: fakeRunner([], { [CMD]: { exitCode: 0, stdout: `node1 | SUCCESS => {"ansible_facts": {${FACTS}}}` } }, envs),
    });
    await gatherAnsibleFacts(host, opts);
    expect(envs[0]).toMatchObject({ ANSIBLE_LOAD_CALLBACK_PLUGINS: '0', ANSIBLE_NOCOLOR: '1', ANSIBLE_FORCE_COLOR: '0' });
  });
  it("refuses offline: an image's facts are not this machine's", async () => {
    const root = await tree({ 'opt/ks/kubespray/ansible.cfg': '' });
    const calls: Call[] = [];
    await expect(gatherAnsibleFacts(new Host({ root, live: false, runner: fakeRunner(calls, {}) }), opts)).rejects.toThrow();
    expect(calls).toEqual([]);
  });
  it("a failed run: the command, the directory, the exit code, the reason and stderr's last lines", async () => {
    const root = await tree({ 'opt/ks/kubespray/ansible.cfg': '' });
    const stderr = 'line 1\nline 2\nline 3\n[ERROR]: Could not match supplied host pattern\n';
    const host = new Host({ root, live: true, runner: fakeRunner([], { [CMD]: { exitCode: 1, stdout: '', stderr } }) });
    await expect(gatherAnsibleFacts(host, opts)).rejects.toThrow(
      `${CMD} (in /opt/ks/kubespray) exited 1: no "node1 | SUCCESS => " line in the output of ansible -m setup: line 2 | line 3 | [ERROR]: Could not match supplied host pattern`,
    );
  });
});
