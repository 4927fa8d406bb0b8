// Lines that would beat the owned sysctl.d file under either program, each
// with one sentence a person can act on. Pure.
import { SYSCTL_MODELS, beatingAssignments, lineKey } from './order.js';
import type { AppliedAssignment, SysctlConfFile, SysctlModel, SysctlTree } from './order.js';
import { couplingOf, followerValue } from './couplings.js';

/** One line that would beat ours, with every program under which it does. */
export interface SysctlConflict {
  key: string;
  wanted: string;
  /** The line's value; null for a "-key" line that cancels ours at boot. */
  value: string | null;
  /** Path the line is read through, and its line number there. */
  file: string;
  line: number;
  /** The file whose bytes hold the line. */
  realPath: string;
  models: SysctlModel[];
  explanation: string;
}

/** What a coupled write makes the key: the written value, or its kernel-derived follower value. */
function couplingValue(key: string, through: string, written: string): string {
  const c = couplingOf(through);
  return (c && followerValue(c, key, written)) ?? written;
}

/** "at next boot", "after sysctl --system", or both. */
export function modelPhrase(models: SysctlModel[]): string {
  const boot = models.includes('boot');
  const system = models.includes('system');
  return boot && system ? 'at next boot and after sysctl --system' : boot ? 'at next boot' : 'after sysctl --system';
}

function where(ap: AppliedAssignment): string {
  const at = `${ap.source.realPath}:${ap.assignment.line}`;
  return ap.source.realPath !== ap.source.path && !ap.tail ? `${at} (read as ${ap.source.path})` : at;
}

/** One sentence a person can act on. */
function explain(ownedPath: string, key: string, hits: Array<{ model: SysctlModel; applied: AppliedAssignment; through?: string }>): string {
  const models = SYSCTL_MODELS.filter((m) => hits.some((h) => h.model === m));
  const first = hits[0]!.applied;
  const through = hits.find((h) => h.through)?.through;
  const reasons = [
    ...new Set(hits.map((h) => (h.applied.tail ? 'is applied last by sysctl --system' : through ? 'is written later' : `sorts after ${ownedPath}`))),
  ];
  if (through) {
    return `${modelPhrase(models)} ${key} would be ${first.assignment.value === null ? "the kernel's value" : couplingValue(key, through, first.assignment.value)}: ${where(first)} sets ${through}, which the kernel couples with ${key}, and ${reasons.join(' and ')}`;
  }
  if (first.assignment.value === null) {
    return `${modelPhrase(models)} ${key} would keep the kernel's value: ${where(first)} (-${first.assignment.rawKey}) ${reasons.join(' and ')} and cancels it`;
  }
  return `${modelPhrase(models)} ${key} would be ${first.assignment.value}: ${where(first)} ${reasons.join(' and ')}`;
}

/** Every line that would beat the owned file, once the owned file holds the wanted settings. */
export function findConflicts(prospective: SysctlTree, ownedPath: string, wanted: Map<string, string>): Array<SysctlConflict & { source: SysctlConfFile }> {
  const grouped = new Map<string, { key: string; wanted: string; hits: Array<{ model: SysctlModel; applied: AppliedAssignment; through?: string }> }>();
  // Per program, until nothing new turns up: at boot a repeated value keeps
  // its first slot, so a later duplicate of a beaten line only shows once
  // that line is gone.
  // Each round reads the tree without the lines found so far (as once they are commented out).
  for (const model of SYSCTL_MODELS) {
    const gone = new Set<string>();
    for (let round = 0; round < 8; round++) {
      const found: string[] = [];
      for (const [key, value] of wanted) {
        for (const b of beatingAssignments(prospective, ownedPath, key, value, model, gone)) {
          const id = `${b.applied.source.realPath}\0${b.applied.assignment.line}\0${key}`;
          const g = grouped.get(id) ?? { key, wanted: value, hits: [] };
          g.hits.push({ model, applied: b.applied, ...(b.through ? { through: b.through } : {}) });
          grouped.set(id, g);
          found.push(lineKey(b.applied));
        }
      }
      if (found.length === 0) break;
      for (const f of found) gone.add(f);
    }
  }
  return [...grouped.values()].map(({ key, wanted: w, hits }) => {
    // Prefer the sysctl.d entry over procps' trailing /etc/sysctl.conf pass for naming the file.
    const rep = hits.find((h) => !h.applied.tail)?.applied ?? hits[0]!.applied;
    return {
      key,
      wanted: w,
      value: rep.assignment.value,
      file: rep.source.path,
      line: rep.assignment.line,
      realPath: rep.source.realPath,
      models: SYSCTL_MODELS.filter((m) => hits.some((h) => h.model === m)),
      explanation: explain(ownedPath, key, [{ model: hits[0]!.model, applied: rep, ...(hits[0]!.through ? { through: hits[0]!.through } : {}) }, ...hits]),
      source: rep.source,
    };
  });
}
