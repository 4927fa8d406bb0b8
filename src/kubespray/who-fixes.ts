// Who fixes each of the four problems: kubespray (a task in
// roles/kubernetes/preinstall or roles/kubernetes/node does the job on this
// host), the operator (no task does), or unknown (the audit cannot tell, and
// says which file, line and expression stopped it). Decided by each task's
// module, its templated arguments, its conditions evaluated as Ansible would
// (src/ansible/jinja.ts) and the data flowing into it from registered
// results; never by task names.
import path from 'node:path';
import { MODULES_LOAD_DIRS } from '../modprobe/modules-load-d.js';
import { shlexSplit } from '../lex/shlex.js';
import { shellSimpleCommandsAt, shellTokens, type Word } from '../lex/shell.js';
import { ShellVariables } from '../lex/shell-variables.js';
import { KubesprayCheckout } from './checkout.js';
import type { VarDefinition } from './checkout.js';
import { childNodes, evaluateCondition, evaluateExpression, isTemplate, parseExpression, templateValue } from '../ansible/jinja.js';
import type { Eval, ExprNode, Resolver } from '../ansible/jinja.js';
import { buildVarContext, VarContext } from './vars.js';
import type { BuildOptions, Definition, FactMap, HostContext, VarsReader } from './vars.js';
import { expandItem, walkRole } from './tasks.js';
import type { Condition, Task, TaskRef, WalkIssue } from './tasks.js';
// preflight.ts uses this module's runStatus/taskContext; both sides call each other only inside functions.

export const AUDITED_ROLES = ['kubernetes/preinstall', 'kubernetes/node'] as const;
export const PROBLEMS = ['swap', 'br_netfilter', 'ip_forward', 'port_10250'] as const;
export type Problem = (typeof PROBLEMS)[number];
export type Fixer = 'kubespray' | 'operator' | 'unknown';

/** Whether a task runs on this host, as far as the audit can tell. */
export type RunStatus =
  | { runs: 'yes' }
  | { runs: 'no'; because: Condition }
  | { runs: 'at run time'; because: Condition; on: string }
  | { runs: 'unknown'; because: Condition; reason: string };
/**
 * What an earlier task that ends the host (a failing assert) makes of every
 * later one in today's run. A verdict does not follow it: it answers what the
 * roles do once kubespray gets past its preflight, and the failing assert is
 * reported as a finding of its own (preflight.ts).
 */
export type StopStatus = Extract<RunStatus, { runs: 'no' } | { runs: 'unknown' }>;

export interface Evidence extends TaskRef {
  /** What the task does for the problem, e.g. "swapoff", "persist br_netfilter". */
  does: string;
  /** Conditions the task runs under (its own and inherited). */
  when: string[];
  /** Whether it runs once kubespray gets past its preflight asserts. */
  status: RunStatus;
  /** An earlier assert that fails on this host today and ends it before this task. */
  preflight?: StopStatus;
}

export interface Verdict {
  who: Fixer;
  evidence: Evidence[];
  /** Why a person has to act; set for "operator" and "unknown". */
  reason?: string;
}

export interface SysctlAssignmentByKubespray {
  key: string;
  /** null when the value is templated beyond what the audit can evaluate. */
  value: string | null;
  ref: TaskRef;
}

export interface SysctlFileVerdict {
  /** The default path kubespray's sysctl tasks write to. */
  path: string;
  /** The variable the tasks pass as sysctl_file, when they use one. */
  variable: string | null;
  /** Where the value comes from (file, line, variable), outermost first. */
  definedAt: { file: string; line: number; variable: string }[];
  /** The sysctl tasks that use it. */
  tasks: TaskRef[];
}

/** Something that decides a verdict and could not be judged: file, line and expression. */
export interface AuditWarning {
  file: string;
  line: number;
  expression: string;
  message: string;
}

export interface WhoFixes {
  swap: Verdict;
  br_netfilter: Verdict;
  ip_forward: Verdict;
  port_10250: Verdict;
  sysctl_file: SysctlFileVerdict | null;
  /** Why sysctl_file is null when no default could be found (where the audit looked); a template that fails is a warning instead. */
  sysctl_file_missing: string | null;
  /** Keys kubespray's sysctl tasks set, for the ordering check. */
  sysctl_keys: SysctlAssignmentByKubespray[];
  /** Task files read, relative to the checkout. */
  files: string[];
  /** Things a reader should know that decide nothing. */
  notes: string[];
  /** Things that decide a verdict and could not be judged (each makes a verdict unknown). */
  warnings: AuditWarning[];
}

/** who-fixes.json as the lab names it. */
export interface WhoFixesJson {
  swap: Fixer;
  br_netfilter: Fixer;
  ip_forward: Fixer;
  port_10250: Fixer;
  sysctl_file: string | null;
}

export function whoFixesJson(w: WhoFixes): WhoFixesJson {
  return {
    swap: w.swap.who,
    br_netfilter: w.br_netfilter.who,
    ip_forward: w.ip_forward.who,
    port_10250: w.port_10250.who,
    sysctl_file: w.sysctl_file?.path ?? null,
  };
}

function condText(c: Condition): string {
  if (c.rescue) return `${c.file}:${c.line} rescue (runs only if ${String(c.expr)})`;
  switch (c.keyword) {
    case undefined:
      return `${c.file}:${c.line} when: ${String(c.expr)}`;
    case 'tags':
      return `${c.file}:${c.line} tags: ${JSON.stringify(c.expr)} (kubespray runs untagged: Ansible skips a task tagged never unless it is also tagged always)`;
    case 'check_mode':
      return `${c.file}:${c.line} check_mode: ${JSON.stringify(c.expr)} (a module in check mode changes nothing)`;
    case 'meta':
      return c.unmodelled ? `${c.file}:${c.line} ${c.unmodelled}` : `${c.file}:${c.line} ${String(c.expr)}`;
    default:
      return `${c.file}:${c.line} ${String(c.expr)}`;
  }
}

/** How a condition that stops a task reads: a `when` is false, a keyword just says what it does. */
function stopText(c: Condition): string {
  return c.keyword ? condText(c) : `${condText(c)} is false`;
}

export function formatEvidence(e: Evidence): string {
  const when = e.when.length > 0 ? ` (when: ${e.when.join(' and ')})` : '';
  const s = e.status;
  const tail =
    s.runs === 'no'
      ? `; does nothing on this host: ${stopText(s.because)}`
      : s.runs === 'at run time'
        ? s.because.rescue
          ? `; decided at run time: it is in the rescue section at ${s.because.file}:${s.because.line} and runs only if ${String(s.because.expr)}`
          : `; decided at run time: ${condText(s.because)} reads ${s.on}`
        : s.runs === 'unknown'
          ? `; unknown whether it runs: ${condText(s.because)}: ${s.reason}`
          : '';
  return `${e.file}:${e.line} "${e.name}": ${e.does}${when}${tail}${s.runs !== 'no' && e.preflight ? preflightText(e.preflight) : ''}`;
}

/** The preflight a verdict's evidence assumes passed, and how it fares today. */
function preflightText(p: StopStatus): string {
  const today = p.runs === 'unknown' ? `${String(p.because.expr)}, unless ${p.reason}` : String(p.because.expr);
  return `; after the preflight passes (it fails today: ${today})`;
}

// ---- evaluating a task --------------------------------------------------------

/** A task with its arguments templated and whether it runs. */
export interface EvaluatedTask {
  task: Task;
  args: Record<string, unknown>;
  loop: unknown[] | null;
  /** Whether it runs once kubespray gets past its preflight asserts. */
  status: RunStatus;
  /** An earlier assert that fails on this host today and ends it before this task. */
  preflight?: StopStatus;
  /** Argument templates that could not be evaluated. */
  unresolved: { arg: string; expression: string; reason: string }[];
  ctx: VarContext;
}

/**
 * Whether the task runs in today's run, as ansible-playbook would run it on
 * this host: a failing assert before it ends the host first. (Its status is
 * what it does once the preflight passes, which the verdicts answer.)
 */
export function statusToday(e: Pick<EvaluatedTask, 'status' | 'preflight'>): RunStatus {
  return e.status.runs === 'no' || !e.preflight ? e.status : e.preflight;
}

/**
 * Block and task vars under set_fact/register results, the including tasks'
 * include params over them. Always a copy: the walk goes on setting facts in
 * `ctx`, and a task's arguments were templated when it ran, before them.
 */
export function taskContext(ctx: VarContext, t: Task): VarContext {
  const defs = (layers: Record<string, unknown>[]): Definition[] =>
    layers.flatMap((layer) => Object.entries(layer).map(([name, value]) => ({ name, value, file: t.ref.file, line: t.ref.line })));
  return ctx.child(defs(t.vars), { taskVars: true }).child(defs(t.params));
}

/** Ansible evaluates `when` items in order and skips at the first false; an error before that fails the task. */
export function runStatus(conditions: Condition[], ctx: VarContext): RunStatus {
  let pending: RunStatus | null = null;
  for (const c of conditions) {
    if (c.rescue) {
      pending ??= { runs: 'at run time', because: c, on: 'whether the block fails' };
      continue;
    }
    const r = evaluateGate(c, ctx);
    if (r.ok && !r.value) return { runs: 'no', because: c };
    if (r.ok) continue;
    if (!pending) pending = r.runtime ? { runs: 'at run time', because: c, on: r.reason } : { runs: 'unknown', because: c, reason: r.reason };
    else if (pending.runs === 'at run time' && !r.runtime) pending = { runs: 'unknown', because: c, reason: r.reason };
  }
  return pending ?? { runs: 'yes' };
}

/** Whether one condition lets the task run: a `when`, or a keyword the walk turned into a condition. */
function evaluateGate(c: Condition, ctx: VarContext): Eval<boolean> {
  // run_once runs the task for the first host of the batch: on an inventory of one host, that is this host.
  if (c.keyword === 'run_once') {
    const v = ctx.template(c.value);
    if (onlyHost(ctx) || (v.ok && ansibleBool(v.value) === false)) return { ok: true, value: true };
  }
  // delegate_to this very host (groups['kube_control_plane'][0] on a one-node lab) runs the task here.
  if (c.keyword === 'delegate_to') {
    const to = ctx.template(c.value);
    const me = ctx.template('{{ inventory_hostname }}');
    if (to.ok && me.ok && typeof to.value === 'string' && to.value === me.value) return { ok: true, value: true };
  }
  if (c.unmodelled) return { ok: false, reason: c.unmodelled };
  if (c.keyword === 'tags') {
    // Taggable.evaluate_tags with Ansible's defaults (run: all, skip: none); tags may be templates.
    const r = ctx.template(c.expr);
    if (!r.ok) return r;
    const tags = new Set((r.value as unknown[]).flat().map(String));
    return { ok: true, value: tags.has('always') || !tags.has('never') };
  }
  if (c.keyword === 'meta') {
    const st = runStatus(c.gate ?? [], ctx);
    if (st.runs === 'yes') return { ok: true, value: false };
    if (st.runs === 'no') return { ok: true, value: true };
    const why = st.runs === 'unknown' ? st.reason : st.on;
    return st.runs === 'at run time'
      ? {
          ok: false,
          reason: `whether ${String(c.expr).replace(/ ran$/, '')} ends the host is decided at run time: ${condText(st.because)} reads ${why}`,
          runtime: { name: 'meta', origin: `${c.file}:${c.line}` },
        }
      : { ok: false, reason: `whether ${String(c.expr).replace(/ ran$/, '')} ends the host cannot be evaluated: ${condText(st.because)}: ${why}` };
  }
  if (c.keyword === 'check_mode') {
    const r = ctx.template(c.expr);
    if (!r.ok) return r;
    const b = ansibleBool(r.value);
    return b === null ? { ok: false, reason: `check_mode ${JSON.stringify(r.value)} is not a boolean` } : { ok: true, value: !b };
  }
  return evaluateCondition(c.expr, ctx.resolver);
}

function onlyHost(ctx: VarContext): boolean {
  try {
    const g = ctx.resolver('groups')?.value as Record<string, unknown> | undefined;
    return Array.isArray(g?.all) && g.all.length === 1;
  } catch {
    return false;
  }
}

// The assert action lives here, beside the walk it can end (a failing assert ends the host; stopAfter).
export interface AssertVerdict {
  ref: TaskRef;
  that: string[];
  when: string[];
  status: RunStatus;
  /** skipped: it does not run here; pass/fail: every item evaluated; unknown: see reason. */
  result: 'skipped' | 'pass' | 'fail' | 'unknown';
  /** The first false item and the message Ansible prints. */
  failed?: { that: string; msg: string; values: string[] };
  /** What could not be evaluated (file, line, expression and why). */
  reason?: string;
  /** The memory comparison among its items, when it has one (its verdict also reads in memory terms). */
  memory: boolean;
}

/** Ansible's assert action: each `that` item (a bare expression) in order; the first false one fails with fail_msg or msg. */
export function evaluateAssert(t: Task, base: VarContext, haveFacts: boolean): AssertVerdict {
  const ctx = taskContext(base, t);
  const that = (Array.isArray(t.args.that) ? t.args.that : [t.args.that]).map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
  const rawThat = Array.isArray(t.args.that) ? t.args.that : [t.args.that];
  const status = runStatus(t.conditions, ctx);
  const out: AssertVerdict = { ref: t.ref, that, when: t.when, status, result: 'unknown', memory: false };
  if (status.runs === 'no') return { ...out, result: 'skipped' };
  if (status.runs !== 'yes') {
    const why = status.runs === 'unknown' ? status.reason : status.on;
    return { ...out, reason: `whether it runs cannot be evaluated: ${status.because.file}:${status.because.line} ${String(status.because.expr)}: ${why}` };
  }
  // Over a loop each item is one assert (the loop variable set), and any failing item fails the task.
  let items: unknown[] | null = t.loop;
  if (!items && t.loopRaw !== undefined) {
    const l = ctx.template(t.loopRaw);
    if (!l.ok || !Array.isArray(l.value))
      return { ...out, reason: `${t.ref.file}:${t.ref.line} loop ${JSON.stringify(t.loopRaw)}: ${l.ok ? 'not a list' : l.reason}` };
    items = l.value;
  }
  const contexts = items ? items.map((item) => ctx.child([{ name: t.loopVar, value: item, file: t.ref.file, line: t.ref.line }])) : [ctx];
  for (const c of contexts) {
    for (let i = 0; i < rawThat.length; i++) {
      const r = evaluateCondition(rawThat[i], c.resolver);
      if (!r.ok) return { ...out, reason: `${t.ref.file}:${t.ref.line} ${that[i]}: ${haveFacts ? r.reason : `${r.reason} (no facts gathered)`}` };
      if (!r.value) {
        const rawMsg = t.args.fail_msg ?? t.args.msg;
        let msg = 'Assertion failed';
        if (rawMsg !== undefined) {
          const m = c.template(rawMsg);
          msg = m.ok ? (typeof m.value === 'string' ? m.value : JSON.stringify(m.value)) : String(rawMsg);
        }
        return { ...out, result: 'fail', failed: { that: that[i]!, msg, values: operandValues(that[i]!, c) } };
      }
    }
  }
  return { ...out, result: 'pass' };
}

/** The variables an expression reads and their values, so a person sees why it is false. */
function operandValues(expr: string, ctx: VarContext): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (n: ExprNode | null): void => {
    if (!n) return;
    const byConstant = n.typename === 'LookupVal' && (n.target as ExprNode).typename === 'Symbol' && (n.val as ExprNode).typename === 'Literal';
    if (n.typename === 'Symbol' || byConstant) {
      const text = n.typename === 'Symbol' ? String(n.value) : `${String((n.target as ExprNode).value)}[${JSON.stringify((n.val as ExprNode).value)}]`;
      if (seen.has(text) || ['true', 'false', 'none', 'True', 'False', 'None'].includes(text)) return;
      seen.add(text);
      const r = evaluateExpression(text, ctx.resolver);
      if (r.ok && (typeof r.value !== 'object' || r.value === null)) out.push(`${text} = ${JSON.stringify(r.value)}`);
      return;
    }
    for (const c of childNodes(n)) visit(c);
  };
  visit(parseExpression(expr));
  return out;
}

// Actions that run inside ansible-playbook the same way in check mode; every other module changes nothing in check mode.
const CHECK_MODE_SAFE = new Set(['set_fact', 'assert', 'debug', 'fail', 'group_by', 'add_host', 'include_vars', 'set_stats']);

function evaluateTask(t: Task, base: VarContext): EvaluatedTask {
  const ctx = taskContext(base, t);
  const status = runStatus(t.checkMode && !CHECK_MODE_SAFE.has(t.module) ? [...t.conditions, t.checkMode] : t.conditions, ctx);
  const unresolved: EvaluatedTask['unresolved'] = [];
  let loop = t.loop;
  if (!loop && t.loopRaw !== undefined) {
    const r = ctx.template(t.loopRaw);
    if (r.ok && Array.isArray(r.value)) loop = r.value;
    else unresolved.push({ arg: 'loop', expression: String(t.loopRaw), reason: r.ok ? 'not a list' : r.reason });
  }
  const args: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(t.args)) {
    // Over a loop each item templates the argument on its own (itemValues).
    if (!isTemplate(v) || loop || t.loopRaw !== undefined) {
      args[k] = v;
      continue;
    }
    const r = ctx.template(v);
    if (r.ok) args[k] = r.value;
    else {
      args[k] = v;
      unresolved.push({ arg: k, expression: String(v), reason: r.reason });
    }
  }
  return { task: t, args, loop, status, unresolved, ctx };
}

// ---- what a task does -------------------------------------------------------

const COMMAND_MODULES = new Set(['command', 'shell', 'raw']);
const SYSTEMD_MODULES = new Set(['systemd', 'systemd_service', 'service']);

function commandText(e: EvaluatedTask): string | null {
  if (!COMMAND_MODULES.has(e.task.module)) return null;
  const a = e.args;
  if (typeof a._raw_params === 'string') return a._raw_params;
  if (typeof a.cmd === 'string') return a.cmd;
  if (Array.isArray(a.argv)) return a.argv.map(String).join(' ');
  return null;
}

/**
 * The simple commands a task runs, each as its words (null: known only at run
 * time). shell and raw hand the text to /bin/sh, so it is read with the
 * shell's grammar (lex/shell.ts: operators, quoting, command substitutions,
 * variables the script itself sets); command execs it without a shell after
 * shlex.split (ansible's run_command), so it is one command and ; | && are words.
 */
function commandWords(cmd: string, module: string, depth = 0): Word[][] {
  if (module === 'command') {
    const split = shlexSplit(cmd);
    return split.error !== null || split.tokens.length === 0 ? [] : [split.tokens];
  }
  const tokens = shellTokens(cmd);
  // sh reads a command whole before it runs it; an open quote is read here as running nothing.
  if (tokens.some((t) => t.unterminated)) return [];
  const all = shellSimpleCommandsAt(cmd, tokens);
  const vars = new ShellVariables(all);
  const words = all
    .filter((c) => c.words.length > 0)
    .map((c) => {
      const w = (c.wordTokens ?? []).map((t) => vars.word(t, c.at));
      // "[" and "[[" look like globs to the tokenizer; as a command name they are the test builtin.
      return w[0] === null && (c.nameText === '[' || c.nameText === '[[') ? [c.nameText, ...w.slice(1)] : w;
    });
  // A backquoted substitution runs its own commands, wherever its word stands.
  const nested = depth < 4 ? tokens.flatMap((t) => (t.substitutions ?? []).flatMap((sub) => commandWords(sub, 'shell', depth + 1))) : [];
  return [...words, ...nested];
}

const program = (c: Word[]): string => path.posix.basename(c[0] ?? '');

/** Whether a word names port `port` as ss/lsof/fuser/netstat spell it: 10250, :10250, 10250/tcp, -i:10250, tcp:10250. */
function namesPort(word: Word, port: number): boolean {
  if (word === null) return false;
  const parts = word.split(/[:/=\s]+/).filter(Boolean);
  return parts.some((p) => p === String(port));
}

const PORT_TOOLS = new Set(['ss', 'lsof', 'fuser', 'netstat', 'systemctl']);

/** A command that frees `port`: fuser -k on it, or kill/pkill/systemctl stop fed by something that finds its owner. */
function freesPort(cmds: Word[][], port: number): boolean {
  const mentions = findsPortOwner(cmds, port);
  for (const c of cmds) {
    const p = program(c);
    // psmisc fuser(1): -k (alone or among short options) or its long form --kill.
    if (p === 'fuser' && c.some((w) => w === '--kill' || (w !== null && /^-[a-zA-Z]*k/.test(w))) && c.slice(1).some((w) => namesPort(w, port))) return true;
    if (mentions && ['kill', 'pkill', 'killall'].includes(p)) return true;
    if (mentions && p === 'systemctl' && c.slice(1).some((w) => w !== null && ['stop', 'disable', 'mask', 'kill'].includes(w))) return true;
  }
  return false;
}

/** A command that finds what holds `port` (its output names the process or unit). */
function findsPortOwner(cmds: Word[][], port: number): boolean {
  return cmds.some((c) => PORT_TOOLS.has(program(c)) && c.slice(1).some((w) => namesPort(w, port)));
}

// ansible-core's boolean() (module_utils/parsing/convert_bool.py): BOOLEANS_TRUE
// and BOOLEANS_FALSE, strings compared lower-cased and trimmed; of numbers
// only 1 and 0 are in them (any other fails a bool argument).
const ANSIBLE_TRUE: ReadonlySet<string> = new Set(['y', 'yes', 'on', '1', 'true', 't']);
const ANSIBLE_FALSE: ReadonlySet<string> = new Set(['n', 'no', 'off', '0', 'false', 'f']);

/** The boolean Ansible reads `v` as, or null when it is neither. */
function ansibleBool(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : null;
  if (typeof v !== 'string') return null;
  const s = v.trim().toLowerCase();
  return ANSIBLE_TRUE.has(s) ? true : ANSIBLE_FALSE.has(s) ? false : null;
}

const truthy = (v: unknown): boolean => ansibleBool(v) === true;
const falsy = (v: unknown): boolean => ansibleBool(v) === false;

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

/** Every value a module argument takes over the task's loop. */
function itemValues(e: EvaluatedTask, arg: string): unknown[] {
  const v = e.args[arg];
  if (!e.loop || !isTemplate(v)) return expandItem(v, e.loop);
  return e.loop.map((item) => {
    const r = e.ctx.child([{ name: e.task.loopVar, value: item, file: e.task.ref.file, line: e.task.ref.line }]).template(v);
    return r.ok ? r.value : undefined;
  });
}

function values(e: EvaluatedTask, arg: string): string[] {
  return itemValues(e, arg)
    .map(str)
    .filter((v): v is string => v !== undefined);
}

/**
 * The sysctl name and value ansible.posix.sysctl sets for each loop item: it
 * strips the name, and its _parse_value turns a boolean, or one of Ansible's
 * boolean words exactly as given (only lower-cased), into 1 or 0, and strips
 * any other text. A value it cannot evaluate stays as written.
 */
function sysctlPairs(e: EvaluatedTask): [string | undefined, string | undefined][] {
  const names = itemValues(e, 'name');
  const vals = itemValues(e, 'value');
  const n = Math.max(names.length, vals.length);
  return Array.from({ length: n }, (_, i) => [str(names[Math.min(i, names.length - 1)])?.trim(), sysctlValueOf(vals[Math.min(i, vals.length - 1)])]);
}

function sysctlValueOf(v: unknown): string | undefined {
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (isTemplate(v)) return v;
  const s = str(v);
  if (s === undefined) return undefined;
  const lower = s.toLowerCase();
  return ANSIBLE_TRUE.has(lower) ? '1' : ANSIBLE_FALSE.has(lower) ? '0' : s.trim();
}

function stateIsAbsent(e: EvaluatedTask): boolean {
  return str(e.args.state) === 'absent';
}

/**
 * Whether the task is known to leave the thing present: no state (these
 * modules default to present), or a state that evaluates, on every loop item,
 * to something other than absent. A state that cannot be evaluated could be
 * absent, so the task is not credited (couldFix names the expression).
 */
function statePresent(e: EvaluatedTask): boolean {
  if (e.args.state === undefined) return true;
  return itemValues(e, 'state').every((v) => {
    const s = str(v);
    return s !== undefined && !isTemplate(s) && s !== 'absent';
  });
}

function destOf(e: EvaluatedTask): string | undefined {
  return str(e.args.dest) ?? str(e.args.path) ?? str(e.args.name);
}

/** Reads a role template so a `template:` task can be judged by what it writes. */
type TemplateReader = (role: string, src: string) => Promise<string | null>;

interface TaskAction {
  problem: Problem;
  part: string;
  task: EvaluatedTask;
  does: string;
}

/** A registered result and the task that produced it. */
type Registered = Map<string, EvaluatedTask>;

async function classify(e: EvaluatedTask, registered: Registered, readTemplate: TemplateReader): Promise<TaskAction[]> {
  const out: TaskAction[] = [];
  const t = e.task;
  const add = (problem: Problem, part: string, does: string) => out.push({ problem, part, task: e, does });
  const cmd = commandText(e);
  const words = cmd ? commandWords(cmd, t.module) : [];

  // swap
  if (words.some((c) => program(c) === 'swapoff')) add('swap', 'runtime', `runs ${cmd!.trim()}`);
  if (SYSTEMD_MODULES.has(t.module) && truthy(e.args.masked) && values(e, 'name').some((n) => n === 'swap.target')) {
    add('swap', 'persist', 'masks swap.target');
  }
  if (t.module === 'mount' && str(e.args.fstype) === 'swap' && stateIsAbsent(e)) {
    add('swap', 'persist', `removes swap entries from ${str(e.args.fstab) ?? '/etc/fstab'}`);
  }
  if ((t.module === 'lineinfile' || t.module === 'replace') && destOf(e) === '/etc/fstab') {
    const pattern = str(e.args.regexp) ?? str(e.args.line) ?? '';
    if (/swap/.test(pattern) && (t.module === 'replace' || stateIsAbsent(e))) add('swap', 'persist', 'removes swap lines from /etc/fstab');
  }
  if (words.some((c) => program(c) === 'sed' && c.includes('/etc/fstab') && c.some((w) => w?.includes('swap'))))
    add('swap', 'persist', 'edits swap lines out of /etc/fstab');

  // br_netfilter
  if (t.module === 'modprobe' && statePresent(e) && values(e, 'name').includes('br_netfilter')) {
    add('br_netfilter', 'runtime', 'loads br_netfilter (modprobe)');
    if (str(e.args.persistent) === 'present') add('br_netfilter', 'persist', 'persists br_netfilter (modprobe persistent: present)');
  }
  if (words.some((c) => program(c) === 'modprobe' && c.slice(1).includes('br_netfilter') && !c.includes('-r')))
    add('br_netfilter', 'runtime', `runs ${cmd!.trim()}`);
  const dest = destOf(e);
  if (dest && (MODULES_LOAD_DIRS.some((d) => dest.startsWith(`${d}/`)) || dest === '/etc/modules') && statePresent(e)) {
    let written: string | undefined;
    if (t.module === 'copy') written = values(e, 'content').join('\n');
    else if (t.module === 'lineinfile') written = values(e, 'line').join('\n');
    else if (t.module === 'blockinfile') written = str(e.args.block);
    else if (t.module === 'template' && typeof e.args.src === 'string') {
      const text = await readTemplate(t.role, e.args.src);
      if (text !== null) {
        const r = e.ctx.template(text);
        written = r.ok ? String(r.value) : text;
      }
    }
    if (written !== undefined && written.split(/\s+/).includes('br_netfilter')) add('br_netfilter', 'persist', `persists br_netfilter in ${dest}`);
  }

  // ip_forward
  if (t.module === 'sysctl' && statePresent(e)) {
    for (const [name, value] of sysctlPairs(e)) {
      if (name === 'net.ipv4.ip_forward' && value === '1') {
        add('ip_forward', 'runtime', `sets net.ipv4.ip_forward = 1 (sysctl module, file ${str(t.args.sysctl_file) ?? '/etc/sysctl.conf'})`);
      }
    }
  }

  // port_10250: a command that frees it, or a stop of the unit a registered result found there.
  if (cmd && freesPort(words, 10250)) add('port_10250', 'runtime', `runs ${cmd.trim()}`);
  const stops = SYSTEMD_MODULES.has(t.module) && (str(e.args.state) === 'stopped' || falsy(e.args.enabled) || truthy(e.args.masked));
  if (stops) {
    const producers = registeredInputs(t.args.name, registered);
    const finder = producers.find((p) => {
      const c = commandText(p);
      return c !== null && findsPortOwner(commandWords(c, p.task.module), 10250);
    });
    if (finder) {
      add(
        'port_10250',
        'runtime',
        `stops the unit ${finder.task.ref.file}:${finder.task.ref.line} "${finder.task.ref.name}" finds on port 10250 (${commandText(finder)!.trim()})`,
      );
    }
  }
  return out;
}

/** The registered results a templated argument reads, found by evaluating it with each result marked. */
function registeredInputs(arg: unknown, registered: Registered): EvaluatedTask[] {
  if (!isTemplate(arg)) return [];
  const out: EvaluatedTask[] = [];
  for (const [name, producer] of registered) {
    const probe = new VarContext([{ name, runtime: true, file: producer.task.ref.file, line: producer.task.ref.line, how: 'register' }]);
    const r = probe.template(arg);
    if (!r.ok && r.runtime?.name === name) out.push(producer);
  }
  return out;
}

// ---- verdicts ---------------------------------------------------------------

interface Rule {
  /** Parts that must all be present for kubespray to own the fix. */
  parts: string[];
  missing: (present: Set<string>) => string;
}

const RULES: Record<Problem, Rule> = {
  swap: {
    parts: ['runtime', 'persist'],
    missing: (p) =>
      p.size === 0
        ? 'no task turns swap off (swapoff), masks swap.target or removes fstab swap entries: turn swap off and keep it off before the install'
        : !p.has('runtime')
          ? 'no task runs swapoff, so swap stays active during the install (kubelet refuses to start): run swapoff first'
          : 'swap is turned off but no task masks swap.target or removes fstab swap entries, so it comes back at reboot',
  },
  br_netfilter: {
    parts: ['runtime', 'persist'],
    missing: (p) =>
      p.size === 0
        ? 'no task loads br_netfilter or persists it in modules-load.d'
        : !p.has('runtime')
          ? 'br_netfilter is written to modules-load.d but no task loads it now'
          : 'br_netfilter is loaded but no task persists it (modules-load.d), so it is gone after reboot',
  },
  ip_forward: {
    parts: ['runtime'],
    missing: () => 'no task sets net.ipv4.ip_forward = 1 through the sysctl module',
  },
  port_10250: {
    parts: ['runtime'],
    missing: () =>
      'no task stops or frees whatever listens on port 10250; kubeadm preflight only reports "Port 10250 is in use" and kubespray retries with Port-10250 ignored, so stop and disable the owning unit first',
  },
};

// Programs whose arguments decide whether a command fixes a problem; a command
// running anything else (cp, cat, ...) fixes nothing whatever its templated
// arguments turn out to be. Wrappers run another program and count for all.
const PROGRAMS: Record<Problem, string[]> = {
  swap: ['swapoff', 'sed', 'systemctl'],
  br_netfilter: ['modprobe', 'insmod', 'echo', 'printf', 'tee', 'cp', 'install', 'mv', 'ln'],
  ip_forward: [],
  port_10250: ['fuser', 'kill', 'pkill', 'killall', 'systemctl'],
};
// Not exec: the shell reader drops a leading exec (lex/shell.ts), and under the command module,
// which has no shell, exec is no program at all (the task fails: No such file or directory).
const WRAPPERS = ['sh', 'bash', 'dash', 'xargs', 'sudo', 'env', 'timeout', 'nohup', 'nsenter', 'chroot', 'eval'];

/** Whether a command whose text cannot be fully evaluated might still fix `problem`: judged by the programs it runs. */
function commandCouldFix(problem: Problem, e: EvaluatedTask): boolean {
  const raw = commandText({ ...e, args: e.task.args });
  if (raw === null) return true;
  // Render with every name that cannot be evaluated standing in as one opaque
  // word, then read the programs the shell would run.
  const lenient: Resolver = (name) => {
    try {
      return e.ctx.resolver(name) ?? { value: OPAQUE_VALUE };
    } catch {
      return { value: OPAQUE_VALUE };
    }
  };
  const r = templateValue(raw, lenient);
  if (!r.ok) return true;
  const cmds = commandWords(String(r.value), e.task.module);
  if (cmds.length === 0) return true;
  return cmds.some((c) => {
    // A program known only at run time could be any of them.
    if (c[0] === null || c[0]!.includes(OPAQUE)) return true;
    const name = program(c);
    return WRAPPERS.includes(name) || PROGRAMS[problem].includes(name);
  });
}
const OPAQUE = '\u0001unevaluated\u0001';
// The stand-in for a value known only at run time. Its members are unknown too
// (a registered result's stdout is whatever the command printed), so reading
// one gives the stand-in again, and it renders as the one opaque word.
const OPAQUE_VALUE: unknown = new Proxy(Object.create(null) as object, {
  get(_t, key) {
    if (key === Symbol.toPrimitive || key === 'toString' || key === 'valueOf') return () => OPAQUE;
    if (typeof key === 'symbol' || key === 'then' || key === 'toJSON') return undefined;
    return OPAQUE_VALUE;
  },
  has: (_t, key) => typeof key === 'string',
});

/** Arguments that, when they cannot be evaluated, could hide a fix for a problem. */
function couldFix(problem: Problem, e: EvaluatedTask): { arg: string; expression: string; reason: string } | undefined {
  if (e.status.runs === 'no') return undefined;
  const m = e.task.module;
  const relevant: string[] = [];
  if (COMMAND_MODULES.has(m) && commandCouldFix(problem, e)) relevant.push('_raw_params', 'cmd', 'argv');
  if (problem === 'swap' && (SYSTEMD_MODULES.has(m) || m === 'mount')) relevant.push('name', 'fstype', 'state', 'masked');
  if (problem === 'br_netfilter' && (m === 'modprobe' || ['copy', 'template', 'lineinfile', 'blockinfile'].includes(m)))
    relevant.push('name', 'dest', 'path', 'content', 'line', 'block', 'src', 'state');
  if (problem === 'ip_forward' && m === 'sysctl') relevant.push('name', 'value', 'state', 'loop');
  if (problem === 'port_10250' && SYSTEMD_MODULES.has(m)) relevant.push('state', 'enabled', 'masked');
  return e.unresolved.find((u) => relevant.includes(u.arg) || (u.arg === 'loop' && relevant.length > 0));
}

function verdict(problem: Problem, found: TaskAction[], unfollowed: WalkIssue[], warnings: AuditWarning[], all: EvaluatedTask[]): Verdict {
  const mine = found.filter((f) => f.problem === problem);
  const evidence = mine.map((f) => ({
    ...f.task.task.ref,
    does: f.does,
    when: f.task.task.when,
    status: f.task.status,
    ...(f.task.preflight ? { preflight: f.task.preflight } : {}),
  }));
  // A task ansible-core refuses stops the play (or the host, in a dynamic include) before or around any fix.
  const refused = unfollowed.filter((i) => i.refused);
  if (refused.length > 0) {
    for (const i of refused) warnings.push({ file: i.ref.file, line: i.ref.line, expression: i.ref.name, message: `${problem}: ${i.message}` });
    const r = refused[0]!;
    return { who: 'unknown', evidence, reason: `${r.ref.file}:${r.ref.line} "${r.ref.name}": ${r.message}; ansible-playbook stops there` };
  }
  const present = new Set(mine.filter((f) => f.task.status.runs === 'yes' || f.task.status.runs === 'at run time').map((f) => f.part));
  const rule = RULES[problem];
  if (rule.parts.every((p) => present.has(p))) return { who: 'kubespray', evidence };
  const missing = rule.parts.filter((p) => !present.has(p));
  const unsure = mine.filter((f) => missing.includes(f.part) && f.task.status.runs === 'unknown');
  if (unsure.length > 0) {
    for (const u of unsure) {
      const s = u.task.status as Extract<RunStatus, { runs: 'unknown' }>;
      warnings.push({
        file: s.because.file,
        line: s.because.line,
        expression: String(s.because.expr),
        message: `${problem}: whether ${u.task.task.ref.file}:${u.task.task.ref.line} "${u.task.task.ref.name}" runs cannot be evaluated: ${s.reason}`,
      });
    }
    const s = unsure[0]!.task.status as Extract<RunStatus, { runs: 'unknown' }>;
    return { who: 'unknown', evidence, reason: `the condition ${condText(s.because)} cannot be evaluated (${s.reason})` };
  }
  const hidden = all.map((e) => ({ e, u: couldFix(problem, e) })).filter((x) => x.u);
  if (hidden.length > 0) {
    for (const { e, u } of hidden) {
      warnings.push({
        file: e.task.ref.file,
        line: e.task.ref.line,
        expression: u!.expression,
        message: `${problem}: ${e.task.ref.file}:${e.task.ref.line} "${e.task.ref.name}" (${e.task.rawModule}) ${u!.arg} ${u!.expression} cannot be evaluated: ${u!.reason}`,
      });
    }
    const { e, u } = hidden[0]!;
    return {
      who: 'unknown',
      evidence,
      reason: `${e.task.ref.file}:${e.task.ref.line} "${e.task.ref.name}": ${u!.arg} ${u!.expression} cannot be evaluated (${u!.reason}), and it could fix it`,
    };
  }
  if (unfollowed.length > 0) {
    const u = unfollowed[0]!;
    for (const i of unfollowed)
      warnings.push({ file: i.ref.file, line: i.ref.line, expression: i.ref.name, message: `${problem}: ${i.message}, and a task in it could fix it` });
    return { who: 'unknown', evidence, reason: `${u.ref.file}:${u.ref.line} "${u.ref.name}": ${u.message}; the tasks it includes were not read` };
  }
  return { who: 'operator', evidence, reason: rule.missing(present) };
}

// ---- sysctl file ------------------------------------------------------------

function sysctlKeys(tasks: EvaluatedTask[]): SysctlAssignmentByKubespray[] {
  const out: SysctlAssignmentByKubespray[] = [];
  for (const e of tasks) {
    if (e.task.module !== 'sysctl' || stateIsAbsent(e) || e.status.runs === 'no') continue;
    for (const [key, value] of sysctlPairs(e)) {
      if (typeof key !== 'string' || isTemplate(key)) continue;
      out.push({ key, value: value !== undefined && !isTemplate(value) ? value : null, ref: e.task.ref });
    }
  }
  return out;
}

/**
 * The default file kubespray writes its sysctls to: what the sysctl tasks
 * pass as sysctl_file, templated with the defaults and this inventory's
 * variables, whether or not a task would run on this host (the lab asks for
 * the default, not for what today's run reaches). With no sysctl task naming
 * one, sysctl_file_path itself as the preinstall role sees it.
 */
async function sysctlFile(
  tasks: EvaluatedTask[],
  fallback: () => Promise<VarContext>,
  notes: string[],
  warnings: AuditWarning[],
  missing: string[],
): Promise<SysctlFileVerdict | null> {
  const sysctlTasks = tasks.filter((e) => e.task.module === 'sysctl' && !stateIsAbsent(e));
  if (sysctlTasks.length === 0) return sysctlFilePathDefault(await fallback(), missing);
  // The file the ip_forward task writes is the one that matters most; else the most used. Tasks that
  // run on this host come first (a role with one task per OS family writes this host's file); only
  // when none runs do the others name the default.
  const rawOf = (e: EvaluatedTask) => str(e.task.args.sysctl_file) ?? '/etc/sysctl.conf';
  const running = sysctlTasks.filter((e) => e.status.runs !== 'no');
  const pool = running.length > 0 ? running : sysctlTasks;
  const ipf = pool.find((e) => sysctlPairs(e).some(([n]) => n === 'net.ipv4.ip_forward'));
  const counts = new Map<string, number>();
  for (const e of pool) counts.set(rawOf(e), (counts.get(rawOf(e)) ?? 0) + 1);
  const chosen = ipf ?? pool.find((e) => rawOf(e) === [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0])!;
  const raw = rawOf(chosen);
  const users = sysctlTasks.filter((e) => rawOf(e) === raw).map((e) => e.task.ref);
  const r = chosen.ctx.template(raw);
  if (!r.ok || typeof r.value !== 'string') {
    const reason = r.ok ? `it is ${JSON.stringify(r.value)}, not a path` : r.reason;
    warnings.push({ file: chosen.task.ref.file, line: chosen.task.ref.line, expression: raw, message: `sysctl_file: ${raw} cannot be evaluated: ${reason}` });
    return null;
  }
  const variable = r.trail[0]?.name ?? null;
  for (const n of chosen.ctx.runtimeOverrides ?? []) if (n.name === variable) notes.push(n.note);
  return {
    path: r.value,
    variable,
    definedAt: r.trail.map((d: VarDefinition) => ({ file: d.file, line: d.line, variable: d.name })),
    tasks: users,
  };
}

const SYSCTL_FILE_VARIABLE = 'sysctl_file_path';

function sysctlFilePathDefault(ctx: VarContext, missing: string[]): SysctlFileVerdict | null {
  const r = ctx.template(`{{ ${SYSCTL_FILE_VARIABLE} }}`);
  if (r.ok && typeof r.value === 'string' && r.value !== '') {
    return { path: r.value, variable: SYSCTL_FILE_VARIABLE, definedAt: r.trail.map((d) => ({ file: d.file, line: d.line, variable: d.name })), tasks: [] };
  }
  const roles = AUDITED_ROLES.map((r) => `roles/${r}/tasks`).join(' and ');
  missing.push(
    `sysctl_file: no default found: no sysctl task in ${roles} names a sysctl_file, and ${SYSCTL_FILE_VARIABLE} ${
      r.ok ? `is ${JSON.stringify(r.value)}, not a path,` : `cannot be evaluated (${r.reason})`
    } in the defaults and vars roles/${AUDITED_ROLES[0]} sees (kubespray_defaults', its dependencies', its own) and this inventory's variables`,
  );
  return null;
}

// ---- the walk ------------------------------------------------------------------

export interface AuditOptions {
  facts?: FactMap;
  host?: HostContext;
  reader?: VarsReader;
  /**
   * What a task that runs registers on this host, when the caller has read
   * it (a stat of a path it looked at); undefined leaves the register a
   * run-time value, as without it.
   */
  registers?: (e: EvaluatedTask) => unknown;
}

/** Every task of the audited roles in walk order, its templated arguments and whether it runs on this host. */
export async function evaluateAuditedRoles(ck: KubesprayCheckout, opts: AuditOptions = {}, roles: readonly string[] = AUDITED_ROLES) {
  const evaluated: EvaluatedTask[] = [];
  const issues: WalkIssue[] = [];
  const files: string[] = [];
  const notes: string[] = [];
  const registered: Registered = new Map();
  let previous: VarContext | null = null;
  let stop: StopStatus | null = null;
  for (const role of roles) {
    const built = await buildVarContext({ ck, role, ...opts });
    // set_fact and register results are host facts: they stay for the later plays' roles.
    const ctx: VarContext = previous ? built.withFactsOf(previous) : built;
    previous = ctx;
    const r = await walkRole(ck, role, (value, conditions) => {
      const status = runStatus(conditions, ctx);
      if (status.runs === 'no') return { reason: `not included: ${condText(status.because)} is false` };
      const t = ctx.template(value);
      return t.ok && typeof t.value === 'string' ? { value: t.value } : { reason: t.ok ? 'not a file name' : t.reason };
    });
    // Includes skipped because their condition is false are notes, not gaps.
    for (const i of r.issues) {
      if (i.message.includes('not included: ')) notes.push(`${i.ref.file}:${i.ref.line} "${i.ref.name}": ${i.message}`);
      else issues.push(i);
    }
    files.push(...r.files);
    const scoped = includedRoleContexts({ ck, role, ...opts }, ctx);
    for (const t of r.tasks) {
      const tctx = await scoped(t);
      const e = evaluateTask(t, tctx);
      // After a failing assert the host runs nothing more today, in this play or the next; the
      // verdicts answer what the roles do once the preflight passes, so the stop is only recorded.
      if (stop) e.preflight = stop;
      else if (t.module === 'assert' && e.status.runs === 'yes') stop = stopAfter(t, evaluateAssert(t, tctx, opts.facts !== undefined), taskContext(tctx, t));
      evaluated.push(e);
      if (t.module === 'set_fact' && e.status.runs !== 'no') setFacts(e, ctx);
      if (t.register && e.status.runs !== 'no') {
        const seen = e.status.runs === 'yes' ? opts.registers?.(e) : undefined;
        if (seen !== undefined) ctx.set({ name: t.register, value: seen, file: t.ref.file, line: t.ref.line });
        else ctx.set({ name: t.register, runtime: true, file: t.ref.file, line: t.ref.line, how: `(registered by "${t.ref.name}")` });
        registered.set(t.register, e);
      }
    }
  }
  return { evaluated, issues, files, notes, registered };
}

/**
 * What a judged assert leaves for the host's later tasks: Ansible ends the
 * host at a failing one (its first false `that`) unless ignore_errors holds;
 * inside a block with rescue or always those sections decide what runs next,
 * which is not modelled (unknown). A passing or unjudged assert: null (an
 * unjudged one is itself a loud unknown; the walk goes on as if it passed,
 * as it does for every module it assumes succeeds).
 */
export function stopAfter(t: Task, v: AssertVerdict, ctx: VarContext): StopStatus | null {
  if (v.result !== 'fail') return null;
  const because: Condition = {
    expr: `the assert at ${t.ref.file}:${t.ref.line}${t.ref.name ? ` "${t.ref.name}"` : ''} fails (${v.failed!.that}), which ends the host`,
    file: t.ref.file,
    line: t.ref.line,
    level: 'task',
    keyword: 'assert',
  };
  if (t.ignoreErrors) {
    const r = ctx.template(t.ignoreErrors.expr);
    const b = r.ok ? ansibleBool(r.value) : null;
    if (b === true) return null;
    if (b === null)
      return {
        runs: 'unknown',
        because,
        reason: `ignore_errors at ${t.ignoreErrors.file}:${t.ignoreErrors.line}: ${r.ok ? `${JSON.stringify(r.value)} is not a boolean` : r.reason}`,
      };
  }
  if (t.guarded)
    return {
      runs: 'unknown',
      because,
      reason: `the block at ${t.guarded.file}:${t.guarded.line} has rescue or always sections, which decide what runs after it (not modelled)`,
    };
  return { runs: 'no', because };
}

/** Audits the checkout's preinstall and node roles. Throws only when the checkout cannot be read at all. */
export async function auditWhoFixes(ck: KubesprayCheckout, opts: AuditOptions = {}): Promise<WhoFixes> {
  const { evaluated, issues, files, notes, registered } = await evaluateAuditedRoles(ck, opts);
  const warnings: AuditWarning[] = [];
  notes.push(...issues.filter((i) => !i.unfollowed).map((i) => `${i.ref.file}:${i.ref.line} "${i.ref.name}": ${i.message}`));
  const unfollowed = issues.filter((i) => i.unfollowed);
  const readTemplate: TemplateReader = async (role, src) => {
    const rel = src.startsWith('/') ? null : path.posix.join('roles', role, 'templates', src);
    return rel ? ck.readText(rel) : null;
  };
  const found: TaskAction[] = [];
  const sysctlMissing: string[] = [];
  for (const e of evaluated) found.push(...(await classify(e, registeredBefore(e, evaluated, registered), readTemplate)));
  const result: WhoFixes = {
    swap: verdict('swap', found, unfollowed, warnings, evaluated),
    br_netfilter: verdict('br_netfilter', found, unfollowed, warnings, evaluated),
    ip_forward: verdict('ip_forward', found, unfollowed, warnings, evaluated),
    port_10250: verdict('port_10250', found, unfollowed, warnings, evaluated),
    sysctl_file: await sysctlFile(evaluated, () => buildVarContext({ ck, role: AUDITED_ROLES[0], ...opts }), notes, warnings, sysctlMissing),
    sysctl_file_missing: sysctlMissing[0] ?? null,
    sysctl_keys: sysctlKeys(evaluated),
    files,
    notes: [...unfollowed.map((i) => `${i.ref.file}:${i.ref.line} "${i.ref.name}": ${i.message}`), ...notes],
    warnings: dedupe(warnings),
  };
  return result;
}

/**
 * The context a task sees: its role's, or for a task of a role pulled in by
 * include_role/import_role, that role's defaults and vars (built once per
 * role and *_from) with the set_fact and register results so far on top.
 */
export function includedRoleContexts(o: BuildOptions, ctx: VarContext): (t: Task) => Promise<VarContext> {
  const built = new Map<string, Promise<VarContext>>();
  return async (t) => {
    if (!t.varsRole) return ctx;
    const key = JSON.stringify(t.varsRole);
    if (!built.has(key)) built.set(key, buildVarContext({ ...o, included: t.varsRole }));
    return (await built.get(key)!).withFactsOf(ctx);
  };
}

function dedupe(ws: AuditWarning[]): AuditWarning[] {
  const seen = new Set<string>();
  return ws.filter((w) => (seen.has(w.message) ? false : (seen.add(w.message), true)));
}

/** Results registered by tasks before `e` in walk order. */
function registeredBefore(e: EvaluatedTask, all: EvaluatedTask[], registered: Registered): Registered {
  const at = all.indexOf(e);
  const out: Registered = new Map();
  for (const [name, p] of registered) if (all.indexOf(p) < at) out.set(name, p);
  return out;
}

/**
 * ansible-core's set_fact action (2.14, jinja2_native off, as kubespray runs
 * it): a templated value that is a string "true", "false", "yes" or "no", in
 * any case and not trimmed, becomes a boolean.
 */
export function setFactValue(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const l = v.toLowerCase();
  return l === 'true' || l === 'yes' ? true : l === 'false' || l === 'no' ? false : v;
}

/**
 * set_fact with values the audit can evaluate replaces the variable for later
 * tasks. A value only known at run time replaces it when the task surely
 * runs; when the task itself is decided at run time the earlier value stays
 * and a note says what may replace it.
 */
function setFacts(e: EvaluatedTask, ctx: VarContext): void {
  for (const [name, raw] of Object.entries(e.task.args)) {
    if (name === 'cacheable' || name === '_raw_params') continue;
    const r = e.ctx.template(raw);
    const note = `${e.task.ref.file}:${e.task.ref.line} "${e.task.ref.name}" sets ${name} at run time to ${JSON.stringify(raw)}`;
    if (e.status.runs === 'yes' && r.ok) {
      ctx.set({ name, value: setFactValue(r.value), file: e.task.ref.file, line: e.task.ref.line });
    } else if (e.status.runs === 'yes') {
      // Reading it later is then unknown, and that warning names this task.
      ctx.set({ name, runtime: true, file: e.task.ref.file, line: e.task.ref.line, how: `(set_fact "${e.task.ref.name}")` });
    } else {
      ctx.runtimeOverrides.push({ name, note });
    }
  }
}

export { KubesprayCheckout };
