// Pure fact algorithms. Expected values were produced by running
// ansible-core 2.14's own LinuxHardware.get_cpu_facts / distro on the same
// inputs, so these pin the port to ansible's behaviour, quirks included.
import { describe, expect, it } from 'vitest';
import { memtotalMb, parseRouteGet, processorVcpus } from '../../src/facts/linux.js';
import { parseMeminfo } from '../../src/observe/meminfo.js';

function x86(sockets: number, cores: number, threads: number, flags = 'fpu vme'): string {
  const out: string[] = [];
  let n = 0;
  for (let s = 0; s < sockets; s++)
    for (let c = 0; c < cores; c++)
      for (let t = 0; t < threads; t++)
        out.push(
          `processor\t: ${n++}\nvendor_id\t: GenuineIntel\nmodel name\t: Intel Xeon\nphysical id\t: ${s}\nsiblings\t: ${cores * threads}\ncore id\t\t: ${c}\ncpu cores\t: ${cores}\nflags\t\t: ${flags}\n`,
        );
  return out.join('\n');
}

const X86 = { architecture: 'x86_64', xen: false };

describe('memtotal_mb', () => {
  it('is MemTotal kB integer-divided by 1024', () => {
    const memTotal = (text: string) => memtotalMb(parseMeminfo(text).get('MemTotal') ?? null);
    expect(memTotal('MemTotal:        2047996 kB\nMemFree:  1 kB\n')).toBe(1999);
    expect(memTotal('MemTotal:        1048575 kB\n')).toBe(1023);
    expect(memTotal('MemFree: 5 kB\n')).toBeNull();
  });
});

describe('processor_vcpus', () => {
  it('multiplies threads per core, sockets and cores', () => {
    expect(processorVcpus(x86(2, 2, 2), X86)).toBe(8);
    expect(processorVcpus(x86(1, 4, 1), X86)).toBe(4);
  });
  it('falls back to the processor count without physical id', () => {
    const cpu = [0, 1, 2].map((i) => `processor\t: ${i}\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu\n`).join('\n');
    expect(processorVcpus(cpu, X86)).toBe(3);
    // Xen paravirt (no vme flag) counts processors the same way
    expect(processorVcpus(cpu, { architecture: 'x86_64', xen: true })).toBe(3);
  });
  it('counts "processor" lines on ARM', () => {
    const cpu = [0, 1, 2, 3].map((i) => `processor\t: ${i}\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n`).join('\n');
    expect(processorVcpus(cpu, { architecture: 'aarch64', xen: false })).toBe(4);
  });
  it('keeps the int-0 versus "0" key quirk (cpu cores before any physical id)', () => {
    const cpu = [0, 1]
      .map((i) => `processor\t: ${i}\nvendor_id\t: GenuineIntel\nmodel name\t: X\ncpu cores\t: 2\nsiblings\t: 2\ncore id\t\t: ${i}\n`)
      .join('\n');
    expect(processorVcpus(cpu, X86)).toBe(2);
  });
  it('is not set on s390x', () => {
    expect(processorVcpus(x86(1, 1, 1), { architecture: 's390x', xen: false })).toBeNull();
  });
});

describe('default_ipv4', () => {
  it('takes src/dev/via from `ip -4 route get 8.8.8.8`', () => {
    expect(parseRouteGet('8.8.8.8 via 192.0.2.1 dev eth0 src 192.0.2.10 uid 0 \n    cache \n')).toEqual({
      interface: 'eth0',
      address: '192.0.2.10',
      gateway: '192.0.2.1',
    });
    expect(parseRouteGet('8.8.8.8 dev dummy0 src 192.0.2.2 uid 0\n')).toEqual({ interface: 'dummy0', address: '192.0.2.2' });
    expect(parseRouteGet('RTNETLINK answers: Network is unreachable\n')).toEqual({});
    expect(parseRouteGet('')).toEqual({});
  });
});
