// The file SysctlFile owns and the edits it makes to other sysctl.d files.
// Whether a commented-out line is still applied is asked of procps' sysctl
// itself: `sysctl -p FILE` run in a network namespace of our own (unshare -rn),
// over net.* keys only, which belong to that namespace, so this machine's
// values are never written. The rest is worked by hand.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { commentOutLines, disabledMarker, moduleFor, overrideHeader, renderOwnedFile, TOOL_NAME, wantedSettings } from '../../src/sysctl/owned-file.js';

const work = mkdtempSync(path.join(tmpdir(), 'owned-file-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The keys procps' sysctl sets from `text`, in a new network namespace (net.* keys only). */
function procpsNames(text: string): string[] {
  if (!/^(\s*(#.*)?\n|\s*net\.[^\n]*\n)*$/.test(text)) throw new Error('only net.* keys: they alone stay inside the namespace');
  const file = path.join(work, 'x.conf');
  writeFileSync(file, text);
  const r = spawnSync('unshare', ['-rn', 'sysctl', '-p', file], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' = ')[0]!);
}

describe('the owned file', () => {
  it('has a header naming the resource and one canonical "key = value" line per setting, in order', () => {
    const spec = { type: 'SysctlFile', name: 'k8s', settings: { 'net/ipv4/ip_forward': 1, 'net.bridge.bridge-nf-call-iptables': '1' } };
    expect(renderOwnedFile(spec)).toBe(
      `# Managed by ${TOOL_NAME} (k8s); edits here are overwritten.\nnet.ipv4.ip_forward = 1\nnet.bridge.bridge-nf-call-iptables = 1\n`,
    );
    expect([...wantedSettings({ settings: { 'net.ipv4.conf.eth0/100.rp_filter': 2 } })]).toEqual([['net.ipv4.conf.eth0/100.rp_filter', '2']]);
  });
});

describe('commentOutLines', () => {
  const marker = disabledMarker('/etc/sysctl.d/90-k8s.conf');
  it('puts each chosen line under a marker, keeping every other byte, CRLF and a missing final newline included', () => {
    const text = 'a = 1\r\nnet.ipv4.ip_forward = 0\r\nb = 2';
    expect(commentOutLines(text, [2], marker)).toBe(`a = 1\r\n${marker}\r\n# net.ipv4.ip_forward = 0\r\nb = 2`);
    expect(commentOutLines('x = 1', [1], marker)).toBe(`${marker}\n# x = 1`);
    expect(commentOutLines('x = 1\n', [], marker)).toBe('x = 1\n');
  });
  it('procps no longer reads the commented keys, and still reads the others', () => {
    const text = 'net.ipv4.conf.default.rp_filter = 2\nnet.ipv4.ip_forward = 1\nnet.ipv4.conf.all.rp_filter = 2\n';
    expect(procpsNames(text)).toEqual(['net.ipv4.conf.default.rp_filter', 'net.ipv4.ip_forward', 'net.ipv4.conf.all.rp_filter']);
    expect(procpsNames(commentOutLines(text, [2], marker))).toEqual(['net.ipv4.conf.default.rp_filter', 'net.ipv4.conf.all.rp_filter']);
  });
  it('names the owned file in the marker', () => {
    expect(marker).toBe(`# disabled by ${TOOL_NAME}: conflicts with /etc/sysctl.d/90-k8s.conf`);
  });
});

describe('overrideHeader and moduleFor', () => {
  it('names the vendor entry, and its real path when it is a link', () => {
    const plain = { path: '/usr/lib/sysctl.d/50-x.conf', realPath: '/usr/lib/sysctl.d/50-x.conf', masked: false, content: '', assignments: [] };
    expect(overrideHeader(plain).split('\n')[0]).toBe(`# Copy of /usr/lib/sysctl.d/50-x.conf made by ${TOOL_NAME}:`);
    expect(overrideHeader({ ...plain, realPath: '/etc/sysctl.conf' }).split('\n')[0]).toBe(
      `# Copy of /usr/lib/sysctl.d/50-x.conf (/etc/sysctl.conf) made by ${TOOL_NAME}:`,
    );
    expect(overrideHeader(plain).endsWith('\n')).toBe(true);
  });
  it('the module that creates a key', () => {
    expect(moduleFor('net.bridge.bridge-nf-call-ip6tables')).toBe('br_netfilter');
    expect(moduleFor('net.netfilter.nf_conntrack_max')).toBe('nf_conntrack');
    expect(moduleFor('net.nf_conntrack_max')).toBe('nf_conntrack');
    expect(moduleFor('net.ipv6.conf.all.forwarding')).toBe('ipv6');
    expect(moduleFor('net.ipv4.ip_forward')).toBeNull();
  });
});
