import { describe, expect, it } from 'vitest';
import { parseSysctlLine, parseSysctlText, sameSysctlValue, sysctlLines } from '../../src/sysctl/parse.js';
import { pick, random } from '../helpers/random.js';

describe('parseSysctlText (sysctl.d(5) syntax)', () => {
  it('reads assignments with whitespace around "=" and keeps file:line', () => {
    const text = ['# comment', '', 'net.ipv4.ip_forward=1', '  kernel.pid_max   =   4194304  ', '\tvm.swappiness\t=\t10\t'].join('\n');
    const p = parseSysctlText(text, '/etc/sysctl.d/a.conf');
    expect(p.issues).toEqual([]);
    expect(p.assignments.map((a) => [a.key, a.value, a.line])).toEqual([
      ['net.ipv4.ip_forward', '1', 3],
      ['kernel.pid_max', '4194304', 4],
      ['vm.swappiness', '10', 5],
    ]);
    expect(p.assignments.every((a) => a.file === '/etc/sysctl.d/a.conf')).toBe(true);
  });

  it("treats '#' and ';' lines as comments, with leading whitespace too, but has no trailing comments", () => {
    const p = parseSysctlText(['; net.ipv4.ip_forward = 0', '   # net.ipv4.ip_forward = 0', '  ;x=1', 'kernel.x = 1 # not a comment'].join('\n'), 'f');
    expect(p.assignments).toHaveLength(1);
    expect(p.assignments[0]!.value).toBe('1 # not a comment');
    expect(p.assignments[0]!.line).toBe(4);
  });

  it("understands the '-' prefix: ignore failure with '=', exclude-only without", () => {
    const p = parseSysctlText(['-net.bridge.bridge-nf-call-iptables = 1', '-net.ipv4.conf.eth0.rp_filter', 'net.ipv4.conf.*.rp_filter = 2'].join('\n'), 'f');
    const [a, b, c] = p.assignments;
    expect(a).toMatchObject({
      key: 'net.bridge.bridge-nf-call-iptables',
      rawKey: 'net.bridge.bridge-nf-call-iptables',
      value: '1',
      ignoreFailure: true,
      excludeOnly: false,
    });
    expect(b).toMatchObject({ key: 'net.ipv4.conf.eth0.rp_filter', value: null, ignoreFailure: false, excludeOnly: true, isGlob: false });
    expect(c).toMatchObject({ key: 'net.ipv4.conf.*.rp_filter', isGlob: true, excludeOnly: false, ignoreFailure: false });
  });

  it('canonicalises keys written with slashes, keeping dots inside a slash-separated name', () => {
    const p = parseSysctlText(['net/ipv4/ip_forward = 1', 'net/ipv4/conf/eth0.100/rp_filter = 0', 'net.ipv4.conf.eth0/100.rp_filter = 0'].join('\n'), 'f');
    expect(p.assignments.map((a) => a.key)).toEqual(['net.ipv4.ip_forward', 'net.ipv4.conf.eth0/100.rp_filter', 'net.ipv4.conf.eth0/100.rp_filter']);
    expect(p.assignments[0]!.rawKey).toBe('net/ipv4/ip_forward');
  });

  it('reports lines that are not assignments, and CRLF files parse cleanly', () => {
    const p = parseSysctlText('net.ipv4.ip_forward\r\nvm.swappiness = 1\r\n = 3\r\n', '/etc/sysctl.conf');
    expect(p.issues.map((i) => [i.line, i.message])).toEqual([
      [1, 'not an assignment (no "=")'],
      [3, 'empty key'],
    ]);
    expect(p.assignments).toHaveLength(1);
    expect(p.assignments[0]).toMatchObject({ key: 'vm.swappiness', value: '1', line: 2 });
  });

  it('compares values the way the kernel prints them', () => {
    expect(sameSysctlValue('4096\t87380   6291456', '4096 87380 6291456')).toBe(true);
    expect(sameSysctlValue('1', '0')).toBe(false);
    expect(sameSysctlValue(null, '1')).toBe(false);
  });
});

// The rehearsal reads a file line by line (sysctlLines, parseSysctlLine) and
// names lines by number; the engine reads the whole text at once. Both must
// see the same lines under the same numbers, whatever the line ends.
describe('parseSysctlText and parseSysctlLine over sysctlLines', () => {
  it('agree on 500 generated texts: the same assignments and issues, at the same line numbers', () => {
    const r = random(0x5c7);
    const pieces = ['a.b = 1', ' -x.y', 'net/ipv4/ip_forward=1', '# c', '; c', '', ' ', '=', 'k =', '-', '.', 'k.*.v = 2', 'a = b # c', '\r', 'v\rw = 3'];
    const ends = ['\n', '\n', '\n\n', '\r\n', ''];
    let lines = 0;
    for (let n = 0; n < 500; n++) {
      let text = '';
      const count = Math.floor(r() * 6);
      for (let i = 0; i < count; i++) text += pick(r, pieces) + pick(r, ends);
      const byLine = { assignments: [] as unknown[], issues: [] as unknown[] };
      sysctlLines(text).forEach((raw, i) => {
        const got = parseSysctlLine(raw, 'f.conf', i + 1);
        if (got && 'assignment' in got) byLine.assignments.push(got.assignment);
        else if (got) byLine.issues.push(got.issue);
      });
      lines += sysctlLines(text).length;
      expect(parseSysctlText(text, 'f.conf'), JSON.stringify(text)).toEqual({ file: 'f.conf', ...byLine });
    }
    // The texts are not all empty: there were lines to compare.
    expect(lines).toBeGreaterThan(1000);
  });
});
