// Keys the kernel couples: writing one changes another. Found by experiment
// in a fresh network namespace (write one key, read every key of
// /proc/sys/net/ipv4 and /proc/sys/net/ipv6 before and after; kernel 6.18),
// then matched with the kernel sources named below. docs/sysctl-couplings.md
// holds the table; test/sysctl/rehearsal.test.ts repeats each experiment.
//
// Both kinds only matter because the programs write keys one after another:
// the last write to ANY key of a coupled group decides, not the last line
// naming the key.
import { sameSysctlValue } from './parse.js';

export interface SysctlCoupling {
  /** One kernel variable under several names: a write to any of them sets all. */
  same: string[];
  /**
   * Keys the kernel sets as a side effect when a write CHANGES the group's
   * value (writing the value it already holds does nothing). `conf.*`
   * patterns stand for every network device's entry.
   */
  follows: Array<{ key: string; value: (written: string) => string }>;
  /** The group's value in a fresh network namespace and at boot. */
  kernelDefault: string;
  /** Why, in the kernel's words. */
  kernel: string;
}

const same = (v: string) => v;
/** inet_forward_change(): all.accept_redirects = !on. */
const inverse = (v: string) => (Number(v) === 0 ? '1' : '0');

export const SYSCTL_COUPLINGS: readonly SysctlCoupling[] = [
  {
    same: ['net.ipv4.ip_forward', 'net.ipv4.conf.all.forwarding'],
    follows: [
      { key: 'net.ipv4.conf.default.forwarding', value: same },
      { key: 'net.ipv4.conf.*.forwarding', value: same },
      { key: 'net.ipv4.conf.all.accept_redirects', value: inverse },
    ],
    kernelDefault: '0',
    kernel:
      'net/ipv4/devinet.c: ip_forward and conf/all/forwarding are the same devconf field; when the value changes, ' +
      "devinet_sysctl_forward() calls inet_forward_change(), which sets conf/default/forwarding and every device's " +
      'conf/<dev>/forwarding to it and conf/all/accept_redirects to its negation',
  },
  {
    same: ['net.ipv6.conf.all.forwarding'],
    follows: [
      { key: 'net.ipv6.conf.default.forwarding', value: same },
      { key: 'net.ipv6.conf.*.forwarding', value: same },
    ],
    kernelDefault: '0',
    kernel:
      'net/ipv6/addrconf.c: when conf/all/forwarding changes, addrconf_fixup_forwarding() sets conf/default/forwarding ' +
      "and calls addrconf_forward_change() for every device's conf/<dev>/forwarding",
  },
];

/** Matches a follower pattern ("conf.*" = one path element) against a canonical dotted key. */
function patternMatches(pattern: string, key: string): boolean {
  const p = pattern.split('.');
  const k = key.split('.');
  return p.length === k.length && p.every((part, i) => part === '*' || part === k[i]);
}

export function couplingOf(key: string): SysctlCoupling | null {
  return SYSCTL_COUPLINGS.find((c) => c.same.includes(key)) ?? null;
}

/** The value a write of `written` to the group gives `key` as a side effect, or null when it does not touch it. */
export function followerValue(c: SysctlCoupling, key: string, written: string): string | null {
  if (c.same.includes(key)) return null;
  const f = c.follows.find((x) => patternMatches(x.key, key));
  return f ? f.value(written) : null;
}

/** Every key whose writes can change `key`: itself, its aliases, and the groups it follows. */
export function keysAffecting(key: string): string[] {
  const out = new Set<string>([key]);
  for (const c of SYSCTL_COUPLINGS) {
    if (c.same.includes(key) || followerValue(c, key, '1') !== null) c.same.forEach((k) => out.add(k));
  }
  return [...out];
}

/** The kernel's comparison for the integer keys couplings are about; text otherwise. */
export function sameKernelValue(a: string, b: string): boolean {
  const ia = /^\s*-?\d+\s*$/.test(a) ? Number(a) : NaN;
  const ib = /^\s*-?\d+\s*$/.test(b) ? Number(b) : NaN;
  if (!Number.isNaN(ia) && !Number.isNaN(ib)) return ia === ib;
  return sameSysctlValue(a, b);
}
