// The running kernel's sysctl values, read from /proc/sys. Shared by the
// before-state and the SysctlFile provider.
import type { TargetFs } from '../host.js';

/**
 * /proc/sys path for a key written with "." or "/" separators. sysctl.d(5):
 * if the first separator is a slash, the rest are kept as they are; if it is
 * a dot, dots and slashes are interchanged ("net.ipv4.conf.eth0/100.rp_filter").
 */
export function sysctlProcPath(key: string): string {
  const k = key.trim().replace(/^\/+/, '');
  const firstSep = k.search(/[./]/);
  if (firstSep < 0 || k[firstSep] === '/') return '/proc/sys/' + k;
  return '/proc/sys/' + k.replace(/[./]/g, (c) => (c === '.' ? '/' : '.'));
}

/** Canonical dotted key for a key written either way. */
export function normalizeSysctlKey(key: string): string {
  // Without a slash or surrounding space the key is already canonical (the
  // common case, once per line of every sysctl.d file): both swaps undo each other.
  if (!key.includes('/') && key === key.trim()) return key;
  return sysctlProcPath(key)
    .slice('/proc/sys/'.length)
    .replace(/[./]/g, (c) => (c === '/' ? '.' : '/'));
}

/** The live value with whitespace collapsed, or null when the key does not exist in this kernel. */
export async function readLiveSysctl(host: TargetFs, key: string): Promise<string | null> {
  const raw = await host.readKernel(sysctlProcPath(key));
  return raw === null ? null : raw.trim().replace(/\s+/g, ' ');
}
