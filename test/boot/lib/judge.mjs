// The one oracle: the plan's own promises. After apply (boot 1) and after the
// reboot (boot 2), any observed state that differs from a promise the plan
// made for that moment, and that no operator or unknown line took back, is a
// broken promise. Nothing here depends on the recipe, nor on a kind of
// promise: each is judged as the provider that made it says
// (src/resources/promise-judge.ts, built into dist/ with the bundle).
import fs from 'node:fs';
import path from 'node:path';
import { judgePromise } from '../../../dist/promise-judge.mjs';

/** Listening TCP ports from `ss -ltnpH`. */
export function listeningPorts(ssText) {
  const ports = new Map();
  for (const line of ssText.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 4 || cols[0] !== 'LISTEN') continue;
    const local = cols[3];
    const port = Number(local.slice(local.lastIndexOf(':') + 1));
    if (Number.isInteger(port)) ports.set(port, [...(ports.get(port) ?? []), cols.slice(5).join(' ')]);
  }
  return ports;
}

export function sysctlValues(text) {
  const out = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1).trim();
  }
  return out;
}

/** Promised paths from paths.txt (steps.sh record_paths): path -> whether an entry is there. */
export function pathsThere(text) {
  const out = new Map();
  for (const line of text.split('\n')) {
    const i = line.lastIndexOf('=');
    if (i > 0) out.set(line.slice(0, i), line.slice(i + 1) === 'present');
  }
  return out;
}

/** Unit -> its ACTIVE column, from `systemctl list-units --all --no-legend --plain` (UNIT LOAD ACTIVE SUB DESCRIPTION). */
export function unitStates(text) {
  const out = new Map();
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length >= 4) out.set(cols[0], cols[2]);
  }
  return out;
}

function read(p) {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch {
    return null;
  }
}

function observed(dir) {
  const ss = read(path.join(dir, 'ss.txt'));
  const sy = read(path.join(dir, 'sysctl.txt'));
  if (ss === null || sy === null) return null;
  const paths = read(path.join(dir, 'paths.txt'));
  const units = read(path.join(dir, 'units.txt'));
  return {
    ports: listeningPorts(ss),
    sysctl: sysctlValues(sy),
    ...(paths !== null ? { paths: pathsThere(paths) } : {}),
    ...(units !== null ? { units: unitStates(units) } : {}),
  };
}

/**
 * The rule, over documents and observations already read: every promise of
 * the plan with `after_apply` must hold in `afterApply`, every one with
 * `at_boot` of the list apply observed afterwards (`promises_after`, else the
 * plan's) in `atBoot`. Withdrawn promises must show in the exit codes (plan
 * 2, apply not 0). `plan`/`apply`: the --json documents (null when none was
 * printed: a problem); an observation null: nothing recorded then. An
 * observation names what the tier saw: `ports` (port -> holders), `sysctl`
 * (key -> value), `units` (unit -> ACTIVE), `paths` (each path a plan
 * promised absent -> whether it is there) and, in a tier with a kernel of its own (the qemu suite),
 * `swap` ({ areas: /proc/swaps lines, totalKb }) and `modules` (name ->
 * loaded); a kind whose observation is absent is not judged. `judge`: one
 * promise against one observation (a test hands in its own registry's).
 */
export function judgePromises({ plan, planRc, apply, applyRc, afterApply, atBoot, judge = judgePromise }) {
  const problems = [];
  const broken = [];
  const promises = plan?.promises ?? [];
  if (promises.length === 0) problems.push('the plan document has no promises');
  const withdrawnAny = promises.some((p) => p.withdrawn_by.length > 0);
  if (withdrawnAny && planRc !== 2) problems.push(`promises are withdrawn but --plan exited ${planRc}`);
  // Apply observes again and says what holds from then on (promises_after, docs/output.md, "Promises"): a withdrawal
  // the apply removed (a unit running an unread script, masked by PortFree) is gone there, and its exit says so.
  const after = Array.isArray(apply?.promises_after) ? apply.promises_after : null;
  if ((after ?? promises).some((p) => p.withdrawn_by.length > 0) && applyRc === 0) problems.push('promises are withdrawn but --apply exited 0');
  for (const [phase, seen, flag] of [
    ['after apply', afterApply, 'after_apply'],
    ['at boot', atBoot, 'at_boot'],
  ]) {
    if (seen === null) {
      problems.push(`${phase}: nothing recorded`);
      continue;
    }
    // At boot, what apply promised last is checked: the plan after apply's list when it has one.
    for (const p of flag === 'at_boot' && after !== null ? after : promises) {
      if (!p[flag]) continue;
      const d = judge(p, seen);
      if (d !== null) broken.push({ promise: p.id, phase, observed: d });
    }
  }
  // `final`: what the tool ends with for the next boot (the plan apply observed afterwards, else the plan).
  return { broken, problems, promises, final: after ?? promises, failures: apply?.failures ?? [] };
}

/**
 * Judges one host's output directory. `listens`: ports the recipe said it
 * holds before the tool runs (a recipe that did not take is no test);
 * `entries`: the recipe's, for their `finding` (findingProblems) and `says`
 * (saysProblems, with `parts`: the recipe's entries and their ports).
 */
export function judge(out, listens, entries = [], parts = []) {
  const before = observed(path.join(out, 'boot1/before'));
  if (before === null) return { broken: [], problems: ['boot 1 recorded nothing'], promises: [] };
  const took = listens.filter((p) => !before.ports.has(p)).map((p) => `the recipe did not take: nothing listens on ${p} before the tool runs`);
  let plan;
  try {
    plan = JSON.parse(read(path.join(out, 'boot1/plan.json')) ?? '');
  } catch {
    const why = `--plan --json printed no document (exit ${read(path.join(out, 'boot1/plan.rc'))?.trim()}): ${(read(path.join(out, 'boot1/plan.err')) ?? '').slice(-400)}`;
    return { broken: [], problems: [...took, why], promises: [] };
  }
  const planRc = Number(read(path.join(out, 'boot1/plan.rc')));
  const applyRc = Number(read(path.join(out, 'boot1/apply.rc')));
  // An apply that exits 1 must have said why: a failure, an operator line or a withdrawn promise.
  let apply = null;
  let noApply = [];
  try {
    apply = JSON.parse(read(path.join(out, 'boot1/apply.json')) ?? '');
  } catch {
    noApply = [`--apply --json printed no document (exit ${applyRc}): ${(read(path.join(out, 'boot1/apply.err')) ?? '').slice(-400)}`];
  }
  const v = judgePromises({
    plan,
    planRc,
    apply,
    applyRc,
    afterApply: observed(path.join(out, 'boot1/after-apply')),
    atBoot: observed(path.join(out, 'boot2/at-boot')),
  });
  // A failure is apply not doing what its plan said it would (the farm's desired state has no change that waits on an
  // operator's, so none is a blocked one): a defect even where a withdrawal keeps every promise honest.
  const failed = v.failures.map((f) => `apply failed: ${f.resource}: ${f.message}`);
  return {
    ...v,
    problems: [
      ...took,
      ...noApply,
      ...v.problems,
      ...failed,
      ...findingProblems(entries, plan),
      ...saysProblems(entries, parts, plan),
      ...runsProblems(entries, out),
      ...probeProblems(entries, out),
      ...rollbackProblems(entries, out, listens),
    ],
    planRc,
    applyRc,
  };
}

/**
 * An entry's `finding`: the plan must name its check as failing (`named`: a
 * finding by that check, or `NAME (` in the "not judged here" line, where a
 * failing check goes without a checkout), or must not mention it at all.
 */
export function findingProblems(entries, plan) {
  const out = [];
  const findings = plan?.findings ?? [];
  for (const e of entries) {
    if (!e.finding) continue;
    const { check, named } = e.finding;
    const fails = findings.some((f) => f.check === check || (f.check === undefined && f.message.includes(`${check} (`)));
    const mentioned = findings.some((f) => f.check === check || f.message.includes(check));
    if (named && !fails) out.push(`${e.id}: the plan does not name ${check} as failing`);
    if (!named && mentioned)
      out.push(`${e.id}: the plan mentions ${check}: ${findings.find((f) => f.check === check || f.message.includes(check)).message.slice(0, 300)}`);
  }
  return out;
}

/**
 * An entry's `says({ port })`: words the boot-1 plan's lines about its port
 * (a change's summary or operator text) must hold, such as what stopping a
 * holder that serves others would end.
 */
export function saysProblems(entries, parts, plan) {
  const out = [];
  const lines = (plan?.resources ?? []).flatMap((r) => r.changes ?? []).map((c) => `${c.summary} ${c.operator ?? ''}`);
  for (const e of entries) {
    if (!e.says) continue;
    const port = parts.find((p) => p.id === e.id)?.port;
    const mine = lines.filter((l) => port === undefined || l.includes(`port ${port} `));
    for (const w of e.says({ port })) if (!mine.some((l) => l.includes(w))) out.push(`${e.id}: no plan line about port ${port} says ${JSON.stringify(w)}`);
  }
  return out;
}

// The phases an entry's `runs` and `probes` are judged in, and where each is recorded (lib/steps.sh).
const PHASES = { 'after-apply': 'boot1/after-apply', 'at-boot': 'boot2/at-boot', 'after-rollback': 'rollback/after-rollback' };

/** Units `systemctl list-units --all --plain` shows active, from one phase's units.txt; null when not recorded. */
function activeUnits(dir) {
  const text = read(path.join(dir, 'units.txt'));
  if (text === null) return null;
  const active = new Set();
  for (const line of text.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length >= 3 && cols[2] === 'active') active.add(cols[0]);
  }
  return active;
}

/**
 * An entry's `runs`: units that must still be active after apply and after the
 * reboot (a container runtime the plan stops one container of is never stopped itself).
 */
export function runsProblems(entries, out) {
  const problems = [];
  for (const e of entries) {
    for (const phase of e.runs ? ['after-apply', 'at-boot'] : []) {
      const active = activeUnits(path.join(out, PHASES[phase]));
      if (active === null) problems.push(`${e.id}: ${phase}: no units recorded`);
      else for (const u of e.runs) if (!active.has(u)) problems.push(`${e.id}: ${phase}: ${u} is not active`);
    }
  }
  return problems;
}

/**
 * An entry's `probes`: { NAME: { PHASE: text } }: what its /farm/probes.d/NAME
 * (a file of its recipe) must print in each phase, trimmed.
 */
export function probeProblems(entries, out) {
  const problems = [];
  for (const e of entries) {
    for (const [name, want] of Object.entries(e.probes ?? {})) {
      for (const [phase, text] of Object.entries(want)) {
        const got = read(path.join(out, PHASES[phase], `probe-${name}.txt`));
        if (got === null) problems.push(`${e.id}: ${phase}: probe ${name} recorded nothing`);
        else if (got.trim() !== text)
          problems.push(`${e.id}: ${phase}: probe ${name} printed ${JSON.stringify(got.trim().slice(0, 200))}, not ${JSON.stringify(text)}`);
      }
    }
  }
  return problems;
}

/**
 * Entries with `rollback: true`: the third boot's --rollback of boot 1's apply
 * exits 0 and every port the recipe listened on before the tool ran listens again.
 */
export function rollbackProblems(entries, out, listens) {
  if (!entries.some((e) => e.rollback === true)) return [];
  const rc = read(path.join(out, 'rollback/rollback.rc'))?.trim();
  if (rc === undefined) return ['rollback: nothing recorded'];
  const problems = rc === '0' ? [] : [`--rollback exited ${rc}: ${(read(path.join(out, 'rollback/rollback.err')) ?? '').slice(-400)}`];
  const seen = observed(path.join(out, PHASES['after-rollback']));
  if (seen === null) return [...problems, 'after rollback: nothing recorded'];
  for (const p of listens) if (!seen.ports.has(p)) problems.push(`after rollback: nothing listens on ${p} again`);
  return problems;
}
