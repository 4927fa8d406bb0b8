// The kernel's sysctl couplings, with the kernel as the oracle: in a fresh
// network namespace of our own (unshare -rn; net.* keys belong to it, so this
// machine's values are never written) one key is written and every
// forwarding and accept_redirects key is read before and after. What
// couplingOf / followerValue predict must be what the kernel did.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { couplingOf, followerValue, keysAffecting, sameKernelValue, SYSCTL_COUPLINGS } from '../../src/sysctl/couplings.js';

const SCRIPT = `
dump() { for f in /proc/sys/net/ipv4/ip_forward /proc/sys/net/ipv4/conf/*/forwarding /proc/sys/net/ipv4/conf/*/accept_redirects /proc/sys/net/ipv6/conf/*/forwarding; do k=\${f#/proc/sys/}; printf '%s %s\\n' "$(echo "$k" | tr / .)" "$(cat "$f")"; done; }
dump; echo ---; echo "$2" > "/proc/sys/$(echo "$1" | tr . /)"; dump
`;

/** Every watched key's value before and after writing `value` to `key`, in a new network namespace. */
function kernel(key: string, value: string): { before: Map<string, string>; after: Map<string, string> } {
  if (!key.startsWith('net.')) throw new Error('only net.* keys stay inside the namespace');
  const r = spawnSync('unshare', ['-rn', 'sh', '-c', SCRIPT, 'sh', key, value], { encoding: 'utf8', timeout: 10_000 });
  expect(r.status, r.stderr).toBe(0);
  const [a, b] = r.stdout.split('---\n');
  const read = (t: string) =>
    new Map(
      t
        .trim()
        .split('\n')
        .map((l) => l.split(' ') as [string, string]),
    );
  return { before: read(a!), after: read(b!) };
}

/** What the module says the write leaves in each watched key. */
function predicted(before: Map<string, string>, key: string, value: string): Map<string, string> {
  const c = couplingOf(key);
  const changes = c !== null && !sameKernelValue(before.get(c.same[0]!)!, value);
  return new Map(
    [...before].map(([k, v]) => {
      if (k === key || (c !== null && c.same.includes(k))) return [k, value];
      const f = changes ? followerValue(c!, k, value) : null;
      return [k, f ?? v];
    }),
  );
}

describe('couplings against the kernel', () => {
  for (const [key, value] of [
    ['net.ipv4.ip_forward', '1'],
    ['net.ipv4.conf.all.forwarding', '1'],
    ['net.ipv4.ip_forward', '0'],
    ['net.ipv6.conf.all.forwarding', '1'],
    ['net.ipv4.conf.default.forwarding', '1'],
    ['net.ipv4.conf.lo.forwarding', '1'],
  ] as const) {
    it(`${key} = ${value}`, () => {
      const { before, after } = kernel(key, value);
      expect(before.size).toBeGreaterThanOrEqual(8);
      expect(after).toEqual(predicted(before, key, value));
    });
  }

  it("each group's kernel default is what a fresh namespace holds", () => {
    const { before } = kernel('net.ipv4.conf.lo.forwarding', '0');
    for (const c of SYSCTL_COUPLINGS) for (const k of c.same) expect(before.get(k), k).toBe(c.kernelDefault);
  });
});

describe('keysAffecting and sameKernelValue', () => {
  it('a device key is changed by writes to itself and to the group it follows', () => {
    expect(keysAffecting('net.ipv4.conf.lo.forwarding').sort()).toEqual(['net.ipv4.conf.all.forwarding', 'net.ipv4.conf.lo.forwarding', 'net.ipv4.ip_forward']);
    expect(keysAffecting('net.ipv4.ip_forward').sort()).toEqual(['net.ipv4.conf.all.forwarding', 'net.ipv4.ip_forward']);
    expect(keysAffecting('vm.swappiness')).toEqual(['vm.swappiness']);
    // conf.* is one path element: a deeper key is no device's forwarding.
    expect(keysAffecting('net.ipv4.conf.eth0.x.forwarding')).toEqual(['net.ipv4.conf.eth0.x.forwarding']);
  });
  it('integers compare as numbers, other text as sysctl values', () => {
    expect(sameKernelValue('01', '1')).toBe(true);
    expect(sameKernelValue(' 1 ', '1')).toBe(true);
    expect(sameKernelValue('1', '2')).toBe(false);
    expect(sameKernelValue('4096 87380', '4096\t87380')).toBe(true);
  });
});
