// SysctlFile's value grammar (sysctl-file/grammar.ts), rule by rule, from what
// each value's consumer does with it: sysctl.d(5)'s key forms and comment
// characters, and what the kernel reads of a string value. Each refusal is
// checked with its message: the message is what the operator reads.
import { describe, expect, it } from 'vitest';
import { sysctlKeyProblem, sysctlStringValueProblem } from '../../../src/resources/sysctl-file/grammar.js';

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
