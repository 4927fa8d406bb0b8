// What a SysctlFile spec may say (spec-checks.ts), asked directly: its
// values' grammar on the document as parsed, what it alone owns, and the keys
// the running kernel must know. The running kernel is a temp root treated as
// live whose /proc/sys holds the keys the test lays out, as procfs shows a
// key (a file) and a key's directory (net.ipv4).
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../../src/host.js';
import { sysctlFileClaims, sysctlFileGrammar, sysctlFileHostChecks } from '../../../src/resources/sysctl-file/spec-checks.js';
import type { SysctlFileSpec } from '../../../src/resources/sysctl-file/spec.js';
import type { Promised } from '../../../src/promises.js';
import { modulesLoadProvider } from '../../../src/resources/modules-load/provider.js';
import type { ModulesLoadSpec } from '../../../src/resources/modules-load/spec.js';
import { buildTree } from '../../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});
const spec = (settings: Record<string, number | string>): SysctlFileSpec =>
  ({ type: 'SysctlFile', file: '/etc/sysctl.d/k8s.conf', settings, conflict_policy: 'resolve' }) as SysctlFileSpec;
const kernel = (live = true) => {
  const root = mkdtempSync(path.join(tmpdir(), 'spec-checks-'));
  roots.push(root);
  buildTree(root, { 'proc/sys/net/ipv4/ip_forward': '0\n', 'proc/sys/net/ipv4/conf/eth0.100/rp_filter': '1\n', 'proc/sys/net/core/somaxconn': '4096\n' });
  return new Host({ root, live });
};
/** The promises a ModulesLoad resource of these modules makes, as the engine hands them over. */
const loads = (...modules: string[]): Promised[] => modulesLoadProvider.promised!({ type: 'ModulesLoad', modules } as ModulesLoadSpec);

describe('sysctlFileGrammar', () => {
  it('a good spec has no issue; numbers and integer strings are not judged as string values', () => {
    expect(
      sysctlFileGrammar({
        file: '/etc/sysctl.d/k8s.conf',
        settings: { 'net.ipv4.ip_forward': 1, 'kernel.pid_max': '-1', 'net.ipv4.tcp_rmem': '4096 87380 6291456' },
      }),
    ).toEqual([]);
  });

  it('each bad value is one issue at its key: the file, a key (at the key itself), a string value', () => {
    expect(sysctlFileGrammar({ file: '/etc/k8s.conf', settings: { 'net..x': 1, 'net.core.x': '1 # on' } })).toEqual([
      { at: ['file'], atKey: false, message: 'must be a file /etc/sysctl.d/NAME.conf' },
      { at: ['settings', 'net..x'], atKey: true, message: 'has an empty segment' },
      { at: ['settings', 'net.core.x'], atKey: false, message: "must not contain '#' or ';' (comment characters in sysctl.d)" },
    ]);
  });

  it('values of the wrong type are left to the schema', () => {
    expect(sysctlFileGrammar({ file: 7, settings: ['net.ipv4.ip_forward'] })).toEqual([]);
    expect(sysctlFileGrammar({})).toEqual([]);
  });
});

describe('sysctlFileClaims', () => {
  it('its file, then each key in the dotted form sysctl.d reads either way', () => {
    expect(sysctlFileClaims(spec({ 'net/ipv4/ip_forward': 1, 'net.ipv4.conf.eth0/100.rp_filter': 1 }))).toEqual([
      { kind: 'file', subject: '/etc/sysctl.d/k8s.conf', at: ['file'] },
      { kind: 'sysctl', subject: 'net.ipv4.ip_forward', at: ['settings', 'net/ipv4/ip_forward'], atKey: true },
      { kind: 'sysctl', subject: 'net.ipv4.conf.eth0/100.rp_filter', at: ['settings', 'net.ipv4.conf.eth0/100.rp_filter'], atKey: true },
    ]);
  });
});

describe('sysctlFileHostChecks', () => {
  it('keys of the running kernel pass, in either form, an interface name with a dot included', async () => {
    expect(
      await sysctlFileHostChecks(kernel(), spec({ 'net.ipv4.ip_forward': 1, 'net/core/somaxconn': 1, 'net.ipv4.conf.eth0/100.rp_filter': 1 }), {
        promised: [],
      }),
    ).toEqual([]);
  });

  it('a missing key, and a directory of keys, are named with their /proc/sys path', async () => {
    expect(await sysctlFileHostChecks(kernel(), spec({ 'kernel.nope': 1, 'net.ipv4': 1 }), { promised: [] })).toEqual([
      { at: ['settings', 'kernel.nope'], atKey: true, message: '/proc/sys/kernel/nope does not exist in the running kernel' },
      { at: ['settings', 'net.ipv4'], atKey: true, message: '/proc/sys/net/ipv4 is a directory of keys, not a key' },
    ]);
  });

  it('a net.bridge key missing until br_netfilter is loaded: named with the module, unless the desired state loads it', async () => {
    const s = spec({ 'net.bridge.bridge-nf-call-iptables': 1 });
    expect(await sysctlFileHostChecks(kernel(), s, { promised: [] })).toEqual([
      {
        at: ['settings', 'net.bridge.bridge-nf-call-iptables'],
        atKey: true,
        message:
          '/proc/sys/net/bridge/bridge-nf-call-iptables does not exist in the running kernel; it appears once br_netfilter is loaded: list br_netfilter in a ModulesLoad resource',
      },
    ]);
    expect(await sysctlFileHostChecks(kernel(), s, { promised: loads('br_netfilter') })).toEqual([]);
    // A ModulesLoad entry written br-netfilter loads the same module (the kernel keeps it as br_netfilter).
    expect(await sysctlFileHostChecks(kernel(), s, { promised: loads('br-netfilter') })).toEqual([]);
    expect(await sysctlFileHostChecks(kernel(), s, { promised: loads('overlay') })).toHaveLength(1);
  });

  it('offline nothing is judged: there is no running kernel', async () => {
    expect(await sysctlFileHostChecks(kernel(false), spec({ 'kernel.nope': 1 }), { promised: [] })).toEqual([]);
  });
});
