// The grammar accepts what the real consumers accept (positive cases), keeps
// integers exact, and the host-dependent checks judge keys and owned files
// against a fixture root treated as live.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseDesiredState } from '../../src/reconcile/load.js';
import { hostInputIssues } from '../../src/reconcile/host-checks.js';
import { InputError } from '../../src/errors.js';
import { Host } from '../../src/host.js';
import { renderOwnedFile } from '../../src/sysctl/owned-file.js';
import type { SysctlFileSpec } from '../../src/resources/sysctl-file/spec.js';
import { buildTree } from '../helpers/tree.js';
import { nameProblem, ownedFileProblem, reportsDirProblem } from '../../src/grammar.js';
import { sysctlKeyProblem, sysctlStringValueProblem } from '../../src/resources/sysctl-file/grammar.js';
import { moduleNameProblem } from '../../src/resources/modules-load/grammar.js';

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
    const d = parse(
      'reports_dir: /r\nresources:\n  - type: SysctlFile\n    settings:\n      net.bridge.bridge-nf-call-iptables: 1\n      kernel.nope: 1\n      net.ipv4: 1\n',
    );
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

// ---------------------------------------------------------------------------
// The desired-state grammar, rule by rule, from what each value's consumer
// does with it: sysctl.d(5)'s key forms and comment characters, the kernel's
// module-name limit and modprobe's option parsing, the file names
// systemd-sysctl and systemd-modules-load read, and the directories the
// reports must never land in. Each refusal is checked with its message: the
// message is what the operator reads.
describe('sysctl keys', () => {
  it('accepts the forms sysctl.d reads, up to 255 characters', () => {
    for (const k of [
      'net.ipv4.ip_forward',
      'net/ipv4/conf/eth0.100/rp_filter',
      'net.ipv4.conf.eth0/100.rp_filter',
      'net.ipv4.conf.a:b@c+d%e-f.x',
      `k.${'a'.repeat(253)}`,
      'kernel',
    ]) {
      expect(sysctlKeyProblem(k), k).toBeNull();
    }
  });

  it('refuses what would not name one /proc/sys entry, saying why', () => {
    const cases: Array<[string, string]> = [
      ['', 'is empty; expected a key like net.ipv4.ip_forward'],
      [`k.${'a'.repeat(254)}`, 'is longer than 255 characters'],
      ['.net.ipv4', 'must not begin with a separator'],
      ['/net/ipv4', 'must not begin with a separator'],
      ['-net.ipv4.ip_forward', "must not begin with '-' (sysctl.d reads a leading '-' as \"ignore failure\")"],
      ['net..ip_forward', 'has an empty segment'],
      ['net.ipv4.', 'must not end with a separator'],
      ['net/ipv4/', 'must not end with a separator'],
      ['net/../ipv4', 'has a ".." segment; a key names one entry under /proc/sys'],
      ['net/./ipv4', 'has a "." segment; a key names one entry under /proc/sys'],
      // Dotted form: "/" inside a segment stands for ".", so "a./" names the entry ".".
      ['net.ipv4.conf./.rp_filter', 'has a "." segment; a key names one entry under /proc/sys'],
      ['net.ipv4.conf.*.rp_filter', 'has the character "*"; segments are letters, digits and _ : @ + % -'],
      ['net.ipv4.ip forward', 'has the character " "; segments are letters, digits and _ : @ + % -'],
      ['net.ipv4.ip_forward=1', 'has the character "="; segments are letters, digits and _ : @ + % -'],
    ];
    for (const [k, why] of cases) expect(sysctlKeyProblem(k), k).toBe(why);
  });
});

describe('sysctl string values', () => {
  it('accepts one line of printable text up to 4096 characters', () => {
    for (const v of ['1', '4096 87380 6291456', 'a'.repeat(4096), 'ü']) expect(sysctlStringValueProblem(v), v).toBeNull();
  });

  it('refuses what sysctl.d or the kernel would read differently', () => {
    const cases: Array<[string, string]> = [
      ['', 'must not be empty'],
      ['a'.repeat(4097), 'is longer than 4096 characters'],
      ['1\n2', 'contains the control character "\\n"; a value is one line of printable text'],
      ['1\u007f', 'contains the control character "\u007f"; a value is one line of printable text'],
      ['\u0000', 'contains the control character "\\u0000"; a value is one line of printable text'],
      ['1 # on', "must not contain '#' or ';' (comment characters in sysctl.d)"],
      ['1;2', "must not contain '#' or ';' (comment characters in sysctl.d)"],
      [' 1', 'must not begin or end with blanks (sysctl strips them)'],
      ['1 ', 'must not begin or end with blanks (sysctl strips them)'],
    ];
    for (const [v, why] of cases) expect(sysctlStringValueProblem(v), JSON.stringify(v)).toBe(why);
  });
});

describe('module names', () => {
  it('the kernel keeps 55 characters; modprobe reads a leading "-" as an option; kmod cuts at "."', () => {
    expect(moduleNameProblem('m'.repeat(55))).toBeNull();
    expect(moduleNameProblem('nf-conntrack')).toBeNull();
    expect(moduleNameProblem('m'.repeat(56))).toBe("is longer than 55 characters, the kernel's limit for a module name");
    expect(moduleNameProblem('-r')).toBe("must not begin with '-' (modprobe would read it as an option)");
    expect(moduleNameProblem('overlay.ko')).toBe("must be a module name (letters, digits, '_' and '-')");
    expect(moduleNameProblem('')).toBe("must be a module name (letters, digits, '_' and '-')");
  });
});

describe('resource names', () => {
  it('a plain label of 1 to 63 characters', () => {
    expect(nameProblem('a'.repeat(63))).toBeNull();
    expect(nameProblem('k8s_v1.2-x')).toBeNull();
    const why = "must be a plain label: 1 to 63 of letters, digits, '_', '.' and '-'";
    for (const n of ['', 'a'.repeat(64), 'a b', 'a/b', 'ä']) expect(nameProblem(n), n).toBe(why);
  });
});

describe('owned files', () => {
  it('DIR/NAME.conf, not hidden, the name of plain characters', () => {
    expect(ownedFileProblem('/etc/sysctl.d/50-k8s.conf', '/etc/sysctl.d', 'systemd-sysctl')).toBeNull();
    expect(ownedFileProblem('/etc/modules-load.d/k8s@a+b.conf', '/etc/modules-load.d', 'systemd-modules-load')).toBeNull();
    const want = 'must be a file /etc/sysctl.d/NAME.conf';
    for (const f of ['/etc/sysctl.d/sub/k8s.conf', '/etc/k8s.conf', '/etc/sysctl.d/k8s', '/etc/sysctl.d/.conf', '/etc/sysctl.d/k8s.conf.d']) {
      expect(ownedFileProblem(f, '/etc/sysctl.d', 'systemd-sysctl'), f).toBe(want);
    }
    expect(ownedFileProblem('/etc/sysctl.d/.k8s.conf', '/etc/sysctl.d', 'systemd-sysctl')).toBe('names a hidden file, which systemd-sysctl never reads');
    expect(ownedFileProblem('/etc/modules-load.d/.k8s.conf', '/etc/modules-load.d', 'systemd-modules-load')).toBe(
      'names a hidden file, which systemd-modules-load never reads',
    );
    expect(ownedFileProblem('/etc/sysctl.d/k 8s.conf', '/etc/sysctl.d', 'systemd-sysctl')).toBe(`${want}, NAME of letters, digits and _ . @ + -`);
  });
});

describe('reports_dir', () => {
  it('an absolute path outside the system and kernel directories', () => {
    for (const d of ['/var/lib/k8s-reconcile', '/etc/k8s-reports', '/usr/local/var/r', '/procx', '/root/r/']) expect(reportsDirProblem(d), d).toBeNull();
    expect(reportsDirProblem('var/r')).toBe("must be an absolute path without '..'");
    expect(reportsDirProblem('/var/../etc')).toBe("must be an absolute path without '..'");
    expect(reportsDirProblem('/var/r\n')).toBe('must not contain control characters');
    for (const [d, n] of [
      ['/etc', '/etc'],
      ['/etc/', '/etc'],
      ['/usr//', '/usr'],
      ['/', '/'],
      ['//', '/'],
      ['/boot/.', '/boot'],
    ]) {
      expect(reportsDirProblem(d!), d).toBe(`must not be ${n}: the reports and the run journal would be written among the system's own files`);
    }
    expect(reportsDirProblem('/proc/self')).toBe('must not be under /proc, a kernel file system');
    expect(reportsDirProblem('/sys/fs/x')).toBe('must not be under /sys, a kernel file system');
    expect(reportsDirProblem('/dev/shm/r')).toBe('must not be under /dev, a kernel file system');
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
