// The boot watch's bpftrace program, read as text (no bpftrace here: the qemu
// suite runs it on Debian 12's kernel). Pinned: the probes it attaches, the
// six kubeadm control-plane ports (2379, 2380, 6443, 10250, 10257, 10259:
// kubeadm's preflight Port-* checks) in each port probe's condition, the
// dentry names compared byte by byte (their ASCII codes worked out by hand),
// that every printf has as many arguments as conversions, and that a line
// printed from each printf's own format with hand-chosen values is read back by
// the record's parser as those values.
import { describe, expect, it } from 'vitest';
import { CMDLINE_MAX, watchScript } from '../../src/boot-watch/script.js';
import { parseWatchLog } from '../../src/boot-watch/record.js';

const SCRIPT = watchScript();

/** The probe headers: lines that open a block on the next line. */
const probes = (s: string) => {
  const lines = s.split('\n');
  return lines.filter((l, i) => lines[i + 1] === '{' && l !== '');
};

/** Each printf's format and its arguments, split at the top-level commas (bpftrace's call syntax). */
function printfs(s: string): { fmt: string; args: string[] }[] {
  const out: { fmt: string; args: string[] }[] = [];
  let i = 0;
  while ((i = s.indexOf('printf("', i)) >= 0) {
    let j = i + 8;
    let fmt = '';
    while (s[j] !== '"') {
      if (s[j] === '\\') {
        fmt += s[j]! + s[j + 1]!;
        j += 2;
      } else fmt += s[j++];
    }
    const args: string[] = [];
    let depth = 0;
    let cur = '';
    for (j++; depth > 0 || s[j] !== ')'; j++) {
      const c = s[j]!;
      if (c === '(') depth++;
      if (c === ')') depth--;
      if (c === ',' && depth === 0) {
        if (cur.trim()) args.push(cur.trim());
        cur = '';
      } else cur += c;
    }
    if (cur.trim()) args.push(cur.trim());
    out.push({ fmt, args });
    i = j;
  }
  return out;
}
const conversions = (fmt: string) => fmt.match(/%(llu|lu|u|d|r|s|x)/g) ?? [];

/** A format filled with values, one per conversion (as bpftrace would print them), its \t and \n made real. */
const fill = (fmt: string, values: (string | number)[]) => {
  let k = 0;
  return fmt
    .replace(/%(llu|lu|u|d|r|s|x)/g, () => String(values[k++]))
    .replace(/\\t/g, '\t')
    .replace(/\\n/g, '\n');
};

describe('watchScript', () => {
  it('attaches the ready line, the sysctl write, swapon and delete_module enter and exit, the two binds and TCP listen', () => {
    expect(probes(SCRIPT)).toEqual([
      'BEGIN',
      'kfunc:vmlinux:proc_sys_write',
      'tracepoint:syscalls:sys_enter_swapon',
      'tracepoint:syscalls:sys_exit_swapon',
      'tracepoint:syscalls:sys_enter_delete_module',
      'tracepoint:syscalls:sys_exit_delete_module',
      'kfunc:vmlinux:inet_bind',
      'kfunc:vmlinux:inet6_bind',
      'kfunc:vmlinux:inet_csk_listen_start',
    ]);
  });
  it("each port probe's condition names exactly kubeadm's six control-plane ports", () => {
    const conds = [...SCRIPT.matchAll(/if \((\$port == [^)]*)\)/g)].map((m) => m[1]!);
    expect(conds).toHaveLength(3);
    for (const c of conds) expect(c).toBe('$port == 2379 || $port == 2380 || $port == 6443 || $port == 10250 || $port == 10257 || $port == 10259');
  });
  it('the sysctl files are told by name and parent name, byte by byte: ip_forward under ipv4 is key 1', () => {
    // "ipv4": i=105 p=112 v=118 4=52; "ip_forward" is 10 bytes, starting i=105 p=112 _=95.
    const first = SCRIPT.split('\n').find((l) => l.includes('$k = 1;'))!;
    expect(first).toContain('$d->d_parent->d_name.len == 4 && *($d->d_parent->d_name.name + 0) == 105 && *($d->d_parent->d_name.name + 1) == 112');
    expect(first).toContain('*($d->d_parent->d_name.name + 2) == 118 && *($d->d_parent->d_name.name + 3) == 52)');
    expect(first).toContain('$d->d_name.len == 10 && *($d->d_name.name + 0) == 105 && *($d->d_name.name + 1) == 112 && *($d->d_name.name + 2) == 95');
    // bridge-nf-call-iptables (23 bytes) is 2, bridge-nf-call-ip6tables (24 bytes) is 3; "bridge" is 6 bytes.
    expect(SCRIPT.split('\n').find((l) => l.includes('$k = 2;'))).toMatch(/\$d->d_name\.len == 23 .*\$d->d_parent->d_name\.len == 6 /);
    expect(SCRIPT.split('\n').find((l) => l.includes('$k = 3;'))).toMatch(/\$d->d_name\.len == 24 .*\$d->d_parent->d_name\.len == 6 /);
    expect(SCRIPT).not.toContain('$k = 4;');
  });
  it(`the cmdline is read up to ${CMDLINE_MAX} bytes (bpftrace's default 64-byte string would cut it)`, () => {
    expect(CMDLINE_MAX).toBeGreaterThan(64);
    expect(SCRIPT.match(/if \(\$alen > (\d+)\) \{ \$alen = (\d+); \}/g)).toHaveLength(6);
    expect(SCRIPT).toContain(`if ($alen > ${CMDLINE_MAX}) { $alen = ${CMDLINE_MAX}; }`);
  });
  it('every printf has one argument per conversion, and prints one line', () => {
    const all = printfs(SCRIPT);
    expect(all.length).toBe(1 + 2 + 3 + 3 + 2 + 2 + 2);
    for (const p of all) {
      expect(p.args.length, p.fmt).toBe(conversions(p.fmt).length);
      expect(p.fmt.endsWith('\\n'), p.fmt).toBe(true);
      expect(p.fmt.slice(0, -2), p.fmt).not.toContain('\\n');
    }
  });
  it("lines printed from the program's own formats are read back by the record's parser as the values put in", () => {
    const fmt = (kind: string) => printfs(SCRIPT).find((p) => p.fmt.startsWith(`${kind}\\t`))!.fmt;
    const cgroup = fmt('cgroup');
    // pid 412, ppid 1, netns 4026531840, comm "sysctl", a 22-byte cmdline "sysctl\0-w\0...": %r prints NUL as \x00.
    const who = [412, 1, 4026531840, 'sysctl', 13, 'sysctl\\x00-p\\x00x'];
    const text = [
      fill(fmt('ready'), [1000, 4026531840]),
      fill(fmt('sysctl'), [2000, ...who, 1, '0\\x0a']),
      fill(cgroup, [412, 'systemd-sysctl.service']),
      fill(fmt('listen'), [3000, 700, 1, 4026531840, 'etcd', 4, 'etcd', 6443]),
      fill(cgroup, [700, 'etcd.service']),
    ].join('');
    const r = parseWatchLog(text);
    expect(r.problems).toEqual([]);
    expect([r.readyNs, r.hostNetns]).toEqual([1000, 4026531840]);
    expect(r.events).toHaveLength(2);
    expect(r.events[0]).toMatchObject({
      kind: 'sysctl',
      key: 'net.ipv4.ip_forward',
      value: '0', // the writer's trailing newline is not part of the value (echo 0 > ip_forward)
      ns: 2000,
      who: { pid: 412, ppid: 1, netns: 4026531840, comm: 'sysctl', cgroup: 'systemd-sysctl.service', argv: ['sysctl', '-p', 'x'] },
    });
    expect(r.events[1]).toMatchObject({ kind: 'listen', port: 6443, who: { comm: 'etcd', cgroup: 'etcd.service' } });
  });
});
