// SysctlFile's promise kind (promises.ts): one promise per key, worded
// "KEY = VALUE", judged against the values a tier read from /proc/sys.
import { describe, expect, it } from 'vitest';
import { SYSCTL_KIND, sysctlPromise } from '../../../src/resources/sysctl-file/promises.js';
import type { Promised } from '../../../src/promises.js';

const p: Promised = { id: sysctlPromise('net.ipv4.ip_forward'), kind: 'sysctl', subject: 'net.ipv4.ip_forward', expect: '1' };

describe('the sysctl promise', () => {
  it('is named and worded by its key and value', () => {
    expect(sysctlPromise('net.ipv4.ip_forward')).toBe('sysctl:net.ipv4.ip_forward');
    expect(SYSCTL_KIND.describe(p)).toBe('net.ipv4.ip_forward = 1');
  });

  it('holds when the key reads the wanted value; another value or an unread key breaks it', () => {
    expect(SYSCTL_KIND.judge(p, { sysctl: { 'net.ipv4.ip_forward': '1' } })).toBeNull();
    expect(SYSCTL_KIND.judge(p, { sysctl: { 'net.ipv4.ip_forward': '0' } })).toBe('net.ipv4.ip_forward = 0');
    expect(SYSCTL_KIND.judge(p, { sysctl: { 'net.ipv6.conf.all.forwarding': '1' } })).toBe('net.ipv4.ip_forward = unread');
  });

  it("a key named like an object's own property is read as a key, not inherited", () => {
    const q: Promised = { ...p, subject: 'constructor', expect: '1' };
    expect(SYSCTL_KIND.judge(q, { sysctl: {} })).toBe('constructor = unread');
  });

  it('no sysctl observation: nothing to judge', () => {
    expect(SYSCTL_KIND.judge(p, {})).toBeNull();
  });
});
