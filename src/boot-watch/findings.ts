// After a watched boot: each promise the running host does not keep, with its
// writer named from the kernel's record (attribute.ts), as one finding of the
// plan (check BootWatch: unknown, so plan exits 2 and --first-boot's verify
// fails) and as boot-watch.json in the reports directory. Only on a running
// host whose /run holds this boot's record; nothing otherwise.
import type { Host } from '../host.js';
import type { Finding } from '../findings.js';
import type { BootObservation } from '../promises.js';
import { judgePromise } from '../resources/promise-judge.js';
import type { HostFacts } from '../resources/types.js';
import { attribute, unitOf, type Attribution, type Broken } from './attribute.js';
import { parseWatchLog, type WatchRecord } from './record.js';
import { WATCH_LOG } from './unit.js';

export const BOOT_WATCH_CHECK = 'BootWatch';

/** A promise as the plan made it (PlanPromise's fields the judge needs). */
export interface WatchedPromise {
  id: string;
  kind: string;
  subject: string;
  expect: string;
}

/** The running host as the plan observed it, in the promise judge's observation (the qemu suite's names). Pure. */
export function observationOf(f: HostFacts): BootObservation {
  const seen: Record<string, unknown> = {};
  if (f.sysctls) seen['sysctl'] = Object.fromEntries([...f.sysctls].filter(([, v]) => v !== null));
  if (f.swapTotalKb !== undefined) seen['swap'] = { areas: [], totalKb: f.swapTotalKb };
  if (f.modules) seen['modules'] = Object.fromEntries(f.modules);
  if (f.listeners) seen['ports'] = new Map(f.listeners.busy.map((p) => [p, [] as string[]]));
  return seen;
}

/** The promises the running host breaks, judged as the boot farm judges them. Pure. */
export function brokenPromises(promises: WatchedPromise[], seen: BootObservation): Broken[] {
  return promises.flatMap((p) => {
    const why = judgePromise(p, seen);
    if (why === null) return [];
    const values = seen['sysctl'] as Record<string, string> | undefined;
    const value = p.kind === 'sysctl' && values && Object.hasOwn(values, p.subject) ? values[p.subject] : undefined;
    return [{ id: p.id, kind: p.kind, subject: p.subject, seen: why, ...(value !== undefined ? { value } : {}) }];
  });
}

/** The findings and the report of a record against the broken promises. Pure. */
export function watchFindings(record: WatchRecord, broken: Broken[], source = WATCH_LOG): { findings: Finding[]; report: unknown } {
  const attributions = attribute(record, broken);
  const findings: Finding[] = attributions.map((a) => ({
    level: 'error',
    check: BOOT_WATCH_CHECK,
    unknown: true,
    message: `${a.broken.id} broken at boot: ${a.text}`,
    evidence: a.event ? [`${source}:${a.event.line}`] : [source],
  }));
  for (const p of record.problems)
    findings.push({
      level: 'warning',
      check: BOOT_WATCH_CHECK,
      message: `the boot watch's record has a line it cannot read: ${p.message}`,
      evidence: [`${source}:${p.line}`],
    });
  return { findings, report: reportOf(record, attributions) };
}

function reportOf(record: WatchRecord, attributions: Attribution[]): unknown {
  return {
    ready_s: record.readyNs === null ? null : record.readyNs / 1e9,
    events: record.events.length,
    broken: attributions.map((a) => ({
      promise: a.broken.id,
      seen: a.broken.seen,
      writer: a.event
        ? {
            at_s: a.event.ns / 1e9,
            unit: unitOf(a.event.who.cgroup),
            cgroup: a.event.who.cgroup,
            pid: a.event.who.pid,
            comm: a.event.who.comm,
            cmdline: a.event.who.argv,
            line: a.event.line,
          }
        : null,
      text: a.text,
    })),
  };
}

/** This boot's record on a running host, or null (none: this boot was not watched). */
export async function readWatchRecord(host: Host): Promise<WatchRecord | null> {
  if (!host.live) return null;
  const bytes = await host.readBytes(WATCH_LOG);
  return bytes === null ? null : parseWatchLog(bytes);
}
