// The one oracle: the plan's own promises. After apply (boot 1) and after the
// reboot (boot 2), any observed state that differs from a promise the plan
// made for that moment, and that no operator or unknown line took back, is a
// broken promise. Nothing here depends on the recipe.
import fs from 'node:fs';
import path from 'node:path';

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
  return { ports: listeningPorts(ss), sysctl: sysctlValues(sy) };
}

function differs(promise, seen) {
  if (promise.kind === 'port') {
    const holders = seen.ports.get(Number(promise.subject));
    return holders ? `port ${promise.subject} is listening (${holders.join('; ') || 'no process shown'})` : null;
  }
  if (promise.kind === 'sysctl') {
    const v = seen.sysctl[promise.subject];
    return v === promise.expect ? null : `${promise.subject} = ${v ?? 'unread'}`;
  }
  // swap and modules are not this tier's: the container must never touch them.
  return null;
}

/**
 * Judges one host's output directory. `listens`: ports the recipe said it
 * holds before the tool runs (a recipe that did not take is no test).
 */
export function judge(out, listens) {
  const problems = [];
  const broken = [];
  const before = observed(path.join(out, 'boot1/before'));
  if (before === null) return { broken, problems: ['boot 1 recorded nothing'], promises: [] };
  for (const p of listens) if (!before.ports.has(p)) problems.push(`the recipe did not take: nothing listens on ${p} before the tool runs`);
  const planText = read(path.join(out, 'boot1/plan.json'));
  let plan;
  try {
    plan = JSON.parse(planText ?? '');
  } catch {
    problems.push(`--plan --json printed no document (exit ${read(path.join(out, 'boot1/plan.rc'))?.trim()}): ${(read(path.join(out, 'boot1/plan.err')) ?? '').slice(-400)}`);
    return { broken, problems, promises: [] };
  }
  const promises = plan.promises ?? [];
  if (promises.length === 0) problems.push('the plan document has no promises');
  const planRc = Number(read(path.join(out, 'boot1/plan.rc')));
  const applyRc = Number(read(path.join(out, 'boot1/apply.rc')));
  // An apply that exits 1 must have said why: a failure, an operator line or a withdrawn promise.
  let apply = null;
  try {
    apply = JSON.parse(read(path.join(out, 'boot1/apply.json')) ?? '');
  } catch {
    problems.push(`--apply --json printed no document (exit ${applyRc}): ${(read(path.join(out, 'boot1/apply.err')) ?? '').slice(-400)}`);
  }
  const withdrawnAny = promises.some((p) => p.withdrawn_by.length > 0);
  if (withdrawnAny && planRc !== 2) problems.push(`promises are withdrawn but --plan exited ${planRc}`);
  // Apply observes again and says what holds from then on (promises_after, docs/output.md, "Promises"): a withdrawal
  // the apply removed (a unit running an unread script, masked by PortFree) is gone there, and its exit says so.
  const after = Array.isArray(apply?.promises_after) ? apply.promises_after : null;
  if ((after ?? promises).some((p) => p.withdrawn_by.length > 0) && applyRc === 0) problems.push('promises are withdrawn but --apply exited 0');
  // A failure is apply not doing what its plan said it would (the farm's desired state has no change that waits on an
  // operator's, so none is a blocked one): a defect even where a withdrawal keeps every promise honest.
  const failures = apply?.failures ?? [];
  for (const f of failures) problems.push(`apply failed: ${f.resource}: ${f.message}`);
  for (const [phase, dir, flag] of [['after apply', 'boot1/after-apply', 'after_apply'], ['at boot', 'boot2/at-boot', 'at_boot']]) {
    const seen = observed(path.join(out, dir));
    if (seen === null) {
      problems.push(`${phase}: nothing recorded`);
      continue;
    }
    // At boot, what apply promised last is checked: the plan after apply's list when it has one.
    for (const p of flag === 'at_boot' && after !== null ? after : promises) {
      if (!p[flag]) continue;
      const d = differs(p, seen);
      if (d !== null) broken.push({ promise: p.id, phase, observed: d });
    }
  }
  // `final`: what the tool ends with for the next boot (the plan apply observed afterwards, else the plan).
  return { broken, problems, promises, final: after ?? promises, planRc, applyRc, failures };
}
