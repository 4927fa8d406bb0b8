// The running kernel's release, as uname(2) reports it without a personality
// flag. ModulesLoad reads it (modules.dep, modules.builtin) and records it;
// facts take it from there, or read it here when no ModulesLoad was planned.
import type { TargetFs } from '../host.js';

/** Live only: /proc/sys/kernel/osrelease without its newline; null when the kernel has none. */
export async function readKernelRelease(host: TargetFs): Promise<string | null> {
  const text = ((await host.readKernel('/proc/sys/kernel/osrelease')) ?? '').trim();
  return text === '' ? null : text;
}
