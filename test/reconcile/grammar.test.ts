// The desired state's values through the loader: what the real consumers
// accept (positive cases), integers kept exact, a file or key claimed twice,
// and the schema's messages. Each grammar's own rules are in its module's test
// file (test/grammar.test.ts, test/resources/sysctl-file/grammar.test.ts,
// test/resources/modules-load/grammar.test.ts), the host-dependent checks in
// test/reconcile/host-checks.test.ts.
import { describe, expect, it } from 'vitest';
import { parseDesiredState } from '../../src/reconcile/load.js';
import { InputError } from '../../src/errors.js';
import { renderOwnedFile } from '../../src/sysctl/owned-file.js';
import type { SysctlFileSpec } from '../../src/resources/sysctl-file/spec.js';

const F = 'd.yaml';
const doc = (settings: string, extra = '') =>
  `reports_dir: /var/lib/r\nresources:\n  - type: ModulesLoad\n    modules: [overlay, br_netfilter]\n  - type: SysctlFile\n${extra}    settings:\n${settings}`;

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
    const text =
      doc('      net.ipv4.ip_forward: 1\n', '    file: /etc/sysctl.d/a.conf\n') +
      '  - type: SysctlFile\n    name: b\n    file: /etc/sysctl.d/b.conf\n    settings:\n      net/ipv4/ip_forward: 0\n';
    let err: InputError | null = null;
    try {
      parse(text);
    } catch (e) {
      err = e as InputError;
    }
    expect(err).toBeInstanceOf(InputError);
    expect(err!.message).toBe(
      `${F}:13:7 resources[2].settings["net/ipv4/ip_forward"]: sets net.ipv4.ip_forward, which resources[1].settings["net.ipv4.ip_forward"] (${F}:8:7) sets too; one key has one value`,
    );
  });
});

describe('schema messages through the loader', () => {
  function problems(text: string): string[] {
    try {
      parseDesiredState(text, 'd.yaml');
    } catch (e) {
      if (e instanceof InputError) return e.message.split('\n');
      throw e;
    }
    return [];
  }

  it('names the key path with indexes, quoting a key that is no identifier', () => {
    const out = problems('reports_dir: /var/lib/r\nresources:\n  - type: SysctlFile\n    settings:\n      net.ipv4.ip_forward: [1]\n');
    expect(out.join('\n')).toContain('resources[0].settings["net.ipv4.ip_forward"]');
  });

  it('an unknown key lists the allowed ones', () => {
    const out = problems('reports_dir: /var/lib/r\nresources: []\nextra: 1\n');
    expect(out.join('\n')).toMatch(/extra: unknown key \(allowed: [a-z_, ]*reports_dir[a-z_, ]*resources/);
  });

  it('a missing key is named', () => {
    expect(problems('resources: []\n').join('\n')).toContain('missing required key "reports_dir"');
  });

  it('an empty document says what it expects', () => {
    expect(problems('').join('\n')).toContain('the document is empty; expected a mapping with reports_dir and resources');
  });

  it('one message per key, in the words of the schema: choices, types with their article, either-or, custom messages', () => {
    expect(problems('reports_dir: /r\nfacts:\n  source: python\nresources: []\n')).toEqual(['d.yaml:3:11 facts.source: must be one of "native", "ansible"']);
    expect(problems('reports_dir: /r\nresources:\n  - type: SysctlFile\n    settings:\n      net.ipv4.ip_forward: [1]\n')).toEqual([
      'd.yaml:5:28 resources[0].settings["net.ipv4.ip_forward"]: must be an integer or a string',
    ]);
    expect(problems('reports_dir: /r\nresources:\n  - type: PortFree\n    ports: [0, "x"]\n')).toEqual([
      'd.yaml:4:13 resources[0].ports[0]: must be an integer 1..65535',
      'd.yaml:4:16 resources[0].ports[1]: must be an integer 1..65535',
    ]);
    expect(problems('reports_dir: 5\nresources: {}\n')).toEqual([
      "d.yaml:1:14 reports_dir: must be an absolute path without '..', and not a system directory",
      'd.yaml:2:12 resources: must be an array',
    ]);
    expect(problems('reports_dir: /r\nfacts: 1\nfirst_boot: 1\nresources: []\n')).toEqual([
      'd.yaml:2:8 facts: must be an object',
      'd.yaml:3:13 first_boot: must be one of "apply", "verify", "off"',
    ]);
    expect(problems('reports_dir: /r\nresources:\n  - type: Nope\n')).toEqual([
      'd.yaml:3:11 resources[0].type: must be one of "SwapOff", "SysctlFile", "ModulesLoad", "PortFree", "PreviousCluster"',
    ]);
  });
});
