// The grammar accepts what the real consumers accept (positive cases), keeps
// integers exact, and the host-dependent checks judge keys and owned files
// against a fixture root treated as live.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseDesiredState } from '../src/reconcile/load.js';
import { hostInputIssues } from '../src/reconcile/host-checks.js';
import { InputError } from '../src/errors.js';
import { Host } from '../src/host.js';
import { renderOwnedFile } from '../src/sysctl/owned-file.js';
import type { SysctlFileSpec } from '../src/desired-state.js';
import { buildTree } from './helpers/tree.js';

const F = 'd.yaml';
const doc = (settings: string, extra = '') => `reports_dir: /var/lib/r\nresources:\n  - type: ModulesLoad\n    modules: [overlay, br_netfilter]\n  - type: SysctlFile\n${extra}    settings:\n${settings}`;

function parse(text: string) {
  return parseDesiredState(text, F);
}

describe('grammar: what is accepted', () => {
  it('keys in dotted and slashed form, with interface names', () => {
    for (const key of [
      'net.ipv4.ip_forward',
      'net/ipv4/ip_forward',
      'net.ipv4.conf.eth0/100.rp_filter',
      'net/ipv4/conf/eth0.100/rp_filter',
      'net.ipv4.conf.br-lan.forwarding',
      'net.ipv6.conf.wg0.disable_ipv6',
      'net.ipv4.conf.veth+x.forwarding',
      'fs.inotify.max_user_watches',
      'kernel.sched_domain.cpu0.domain0.flags',
      'net.bridge.bridge-nf-call-iptables',
      'abi.vsyscall32',
      'net.ipv4.neigh.default.gc_thresh1',
      'dev.cdrom.autoclose',
      'net.ipv4.conf.eth@1.arp_ignore',
    ]) {
      expect(() => parse(doc(`      ${key}: 1\n`)), key).not.toThrow();
    }
  });

  it('string values with inner blanks and other printable text', () => {
    for (const v of ['"32768 60999"', '"4096 87380 6291456"', 'cubic', '"|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h"', '"-1"', 'überall']) {
      expect(() => parse(doc(`      kernel.x: ${v}\n`)), v).not.toThrow();
    }
  });

  it('names, module names and files at their limits', () => {
    expect(() => parse(doc('      kernel.x: 1\n', `    name: ${'a'.repeat(63)}\n    file: /etc/sysctl.d/50-k8s_host.v2@x+y.conf\n`))).not.toThrow();
    expect(() => parse(`reports_dir: /r\nresources:\n  - type: ModulesLoad\n    modules: [${'m'.repeat(55)}, nf-conntrack, 8021q]\n`)).not.toThrow();
    expect(() => parse('reports_dir: /etc/k8s-reports\nresources: []\n')).not.toThrow();
    expect(() => parse('reports_dir: /usr/local/var/r\nresources: []\n')).not.toThrow();
  });
});

describe('grammar: integers stay exact', () => {
  const cases: Array<[string, string]> = [
    ['18446744073692774399', '18446744073692774399'],
    ['1000000000000000000000', '1000000000000000000000'],
    ['-9223372036854775808', '-9223372036854775808'],
    ['9007199254740993', '9007199254740993'],
    ['1', '1'],
    ['0x7fffffffffffffff', '9223372036854775807'],
    ['0o17', '15'],
  ];
  for (const [yaml, text] of cases) {
    it(`${yaml} is written as ${text}`, () => {
      const d = parse(doc(`      kernel.shmmax: ${yaml}\n`));
      const spec = d.resources[1] as SysctlFileSpec;
      expect(String(spec.settings['kernel.shmmax'])).toBe(text);
      expect(renderOwnedFile(spec)).toContain(`\nkernel.shmmax = ${text}\n`);
    });
  }
});

describe('grammar: locations of the same file or key twice name both places', () => {
  it('gives line and column of both', () => {
    const text = doc('      net.ipv4.ip_forward: 1\n', '    file: /etc/sysctl.d/a.conf\n') + '  - type: SysctlFile\n    name: b\n    file: /etc/sysctl.d/b.conf\n    settings:\n      net/ipv4/ip_forward: 0\n';
    let err: InputError | null = null;
    try {
      parse(text);
    } catch (e) {
      err = e as InputError;
    }
    expect(err).toBeInstanceOf(InputError);
    expect(err!.message).toBe(`${F}:13:7 resources[2].settings["net/ipv4/ip_forward"]: sets net.ipv4.ip_forward, which resources[1].settings["net.ipv4.ip_forward"] (${F}:8:7) sets too; one key has one value`);
  });
});

describe('host checks on a fixture root treated as live', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'host-checks-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  buildTree(root, {
    'proc/sys/net/ipv4/ip_forward': '0\n',
    'proc/sys/kernel/shmmax': '1\n',
    'proc/sys/net/ipv4/conf/eth0.100/rp_filter': '1\n',
  });
  const host = new Host({ root, live: true });

  it('bridge keys are accepted before br_netfilter is loaded when a ModulesLoad resource loads it', async () => {
    const d = parse(doc('      net.bridge.bridge-nf-call-iptables: 1\n      net.ipv4.ip_forward: 1\n      net.ipv4.conf.eth0/100.rp_filter: 1\n'));
    expect(await hostInputIssues(host, d)).toEqual([]);
  });

  it('without that module the missing key is an error naming it and the module', async () => {
    const d = parse('reports_dir: /r\nresources:\n  - type: SysctlFile\n    settings:\n      net.bridge.bridge-nf-call-iptables: 1\n      kernel.nope: 1\n      net.ipv4: 1\n');
    const issues = await hostInputIssues(host, d);
    expect(issues.map((i) => `${i.line}:${i.column} ${i.path}: ${i.message}`)).toEqual([
      '5:7 resources[0].settings["net.bridge.bridge-nf-call-iptables"]: /proc/sys/net/bridge/bridge-nf-call-iptables does not exist in the running kernel; it appears once br_netfilter is loaded: list br_netfilter in a ModulesLoad resource',
      '6:7 resources[0].settings["kernel.nope"]: /proc/sys/kernel/nope does not exist in the running kernel',
      '7:7 resources[0].settings["net.ipv4"]: /proc/sys/net/ipv4 is a directory of keys, not a key',
    ]);
  });

  it('offline the keys are not judged (no running kernel)', async () => {
    const d = parse('reports_dir: /r\nresources:\n  - type: SysctlFile\n    settings:\n      kernel.nope: 1\n');
    expect(await hostInputIssues(new Host({ root }), d)).toEqual([]);
  });
});
