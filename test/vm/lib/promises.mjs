// The boot farm's one oracle (test/boot/lib/judge.mjs, judgePromises) over a
// VM scenario's results: the plan's promises after apply, apply's
// promises_after after the reboot. Only the reading differs: the stage's
// snapshots (guest/stage.mjs) instead of the farm's ss and sysctl files, and
// here the kernel is the VM's own, so swap and modules are judged too.
import { judgePromises } from '../../boot/lib/judge.mjs';
import { need } from './checks.mjs';

/** A stage snapshot as the judge reads a host: listeners, sysctls, /proc/swaps and SwapTotal, /sys/module. */
export function observation(snap) {
  if (!snap) return null;
  const ports = new Map();
  for (const l of snap.listeners ?? []) {
    ports.set(l.port, [...(ports.get(l.port) ?? []), ...l.holders.map((h) => `${h.comm} pid ${h.pid}${h.unit ? ` (${h.unit})` : ''}`)]);
  }
  const sysctl = Object.fromEntries(Object.entries(snap.sysctls ?? {}).filter(([, v]) => v !== null));
  const modules = Object.fromEntries(Object.entries(snap.modules ?? {}).map(([m, s]) => [m, s.sys_module]));
  return { ports, sysctl, swap: { areas: snap.proc_swaps ?? [], totalKb: snap.swap_total_kb }, modules };
}

/** A boot's --json plan document by its run's name, or null. */
export const planDoc = (boot, name) => (boot ? doc(boot, name) : null);

function doc(boot, name) {
  const text = boot.stdout(name);
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * The judge's verdict for a two-boot scenario: boot 1's `--plan --json` and
 * `--apply --json` (by default the `json: true` stage's plan1json and
 * apply1json; a `verdicts: true` scenario has plan0json and apply2, its second
 * apply), its snapshot after apply, and boot 2's.
 */
export function promiseVerdict(r, { plan: planName = 'plan1json', apply: applyName = 'apply1json' } = {}) {
  const b1 = need(r.boot1, 'boot1 results');
  const b2 = need(r.boot2, 'boot2 results');
  const plan = doc(b1, planName);
  const apply = doc(b1, applyName);
  const v = judgePromises({
    plan,
    planRc: b1.commands[planName]?.exit,
    apply,
    applyRc: b1.commands[applyName]?.exit,
    afterApply: observation(b1.snapshot),
    atBoot: observation(b2.snapshot),
  });
  const problems = [...(plan === null ? ['--plan --json printed no document'] : []), ...(apply === null ? ['--apply --json printed no document'] : []), ...v.problems];
  return { ...v, problems, plan, apply };
}

/** The rule as check lines: after apply, at boot, and the exit codes of withdrawn promises. */
export function promiseChecks(r, names) {
  let v;
  const verdict = () => (v ??= promiseVerdict(r, names));
  // The writer of a promise broken at boot, from the kernel's record when the boot was watched
  // (apply --watch-next-boot): boot 2's plan names it in a BootWatch finding, not the catalogue.
  const writer = (p) => {
    const f = (planDoc(r.boot2, 'plan3json')?.findings ?? []).find((x) => x.check === 'BootWatch' && x.message.startsWith(`${p.promise} broken at boot: `));
    return f ? `; the kernel's record: ${f.message.slice(`${p.promise} broken at boot: `.length)}` : '';
  };
  const line = (p) => `${p.promise} (${p.observed}${p.phase === 'at boot' ? writer(p) : ''})`;
  const held = (phase, from) => () => {
    const b = verdict().broken.filter((x) => x.phase === phase);
    const judged = (phase === 'after apply' ? verdict().promises : verdict().final).filter((p) => p[phase === 'after apply' ? 'after_apply' : 'at_boot']);
    return b.length === 0 ? { ok: true, detail: `${judged.map((p) => p.id).join(', ')} (${from})` } : `broken promise: ${b.map(line).join('; ')}`;
  };
  return [
    { name: "promises: every promise of the plan holds after apply (unless an operator, unknown or failure line took it back)", needs: [2, 4, 5], check: held('after apply', "the plan's promises") },
    { name: "promises: every promise of apply's promises_after holds after the reboot", needs: [2, 4, 5], check: held('at boot', "apply's promises_after") },
    { name: 'promises: both documents printed; withdrawn promises show in the exit codes (plan 2, apply not 0)', needs: [2], check: () => (verdict().problems.length === 0 ? true : verdict().problems.join('; ')) },
  ];
}

/** Who took a promise back, as "by:line" strings, in the plan (before apply) or apply's promises_after. */
export function withdrawals(list, id) {
  const p = (list ?? []).find((x) => x.id === id);
  return p ? p.withdrawn_by.map((w) => `${w.by}:${w.line}`) : null;
}
