import type { TargetFs } from '../host.js';

/** /proc/meminfo as a map of field -> value in kB (the unit the kernel prints). */
export function parseMeminfo(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z0-9_()]+):\s+(\d+)/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

export async function readMeminfo(host: TargetFs): Promise<Map<string, number>> {
  return parseMeminfo((await host.readKernel('/proc/meminfo')) ?? '');
}
