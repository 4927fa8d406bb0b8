// Who fixes each of the four problems: kubespray (a task in
// roles/kubernetes/preinstall or roles/kubernetes/node does the job) or the
// operator (no task does). Decided by what the tasks do, never by their names,
// and every verdict carries the tasks that justify it.
import path from 'node:path';
import { MODULES_LOAD_DIRS } from '../resources/modules-load.js';
import { KubesprayCheckout, VarScope, kubesprayDefaults, roleDefaults } from './checkout.js';
import type { VarDefinition } from './checkout.js';
import { expandItem, walkRole } from './tasks.js';
import type { Task, TaskRef, WalkIssue } from './tasks.js';

export const AUDITED_ROLES = ['kubernetes/preinstall', 'kubernetes/node'] as const;
export const PROBLEMS = ['swap', 'br_netfilter', 'ip_forward', 'port_10250'] as const;
export type Problem = (typeof PROBLEMS)[number];
export type Fixer = 'kubespray' | 'operator';

export interface Evidence extends TaskRef {
  /** What the task does for the problem, e.g. "swapoff", "persist br_netfilter". */
  does: string;
  /** Conditions the task runs under (its own and inherited). */
  when: string[];
}

export interface Verdict {
  who: Fixer;
  evidence: Evidence[];
  /** Why a person has to act; set for "operator". */
  reason?: string;
}

export interface SysctlAssignmentByKubespray {
  key: string;
  /** null when the value is templated beyond simple variables. */
  value: string | null;
  ref: TaskRef;
}

export interface SysctlFileVerdict {
  /** The default path kubespray's sysctl tasks write to. */
  path: string;
  /** The variable the tasks pass as sysctl_file, when they use one. */
  variable: string | null;
  /** Where the default is defined (file, line, variable), outermost first. */
  definedAt: { file: string; line: number; variable: string }[];
  /** The sysctl tasks that use it. */
  tasks: TaskRef[];
}

export interface WhoFixes {
  swap: Verdict;
  br_netfilter: Verdict;
  ip_forward: Verdict;
  port_10250: Verdict;
  sysctl_file: SysctlFileVerdict | null;
  /** Keys kubespray's sysctl tasks set, for the ordering check. */
  sysctl_keys: SysctlAssignmentByKubespray[];
  /** Task files read, relative to the checkout. */
  files: string[];
  /** Includes that could not be followed and other things a reader should know. */
  notes: string[];
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

export function formatEvidence(e: Evidence): string {
  const when = e.when.length > 0 ? ` (when: ${e.when.join(' and ')})` : '';
  return `${e.file}:${e.line} "${e.name}": ${e.does}${when}`;
}

// ---- what a task does -------------------------------------------------------

const COMMAND_MODULES = new Set(['command', 'shell', 'raw']);
const SYSTEMD_MODULES = new Set(['systemd', 'systemd_service', 'service']);

function commandText(t: Task): string | null {
  if (!COMMAND_MODULES.has(t.module)) return null;
  const a = t.args;
  if (typeof a._raw_params === 'string') return a._raw_params;
  if (typeof a.cmd === 'string') return a.cmd;
  if (Array.isArray(a.argv)) return a.argv.map(String).join(' ');
  return null;
}

function truthy(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  return typeof v === 'string' && /^(yes|true|on|1)$/i.test(v.trim());
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

/** Every value a module argument takes, expanding "{{ item }}" over a literal loop. */
function values(t: Task, arg: string): string[] {
  return expandItem(t.args[arg], t.loop)
    .map(str)
    .filter((v): v is string => v !== undefined);
}

/** Pairs of (name, value) arguments, expanded together over the loop. */
function pairs(t: Task, a: string, b: string): [string | undefined, string | undefined][] {
  const xs = expandItem(t.args[a], t.loop);
  const ys = expandItem(t.args[b], t.loop);
  const n = Math.max(xs.length, ys.length);
  return Array.from({ length: n }, (_, i) => [str(xs[Math.min(i, xs.length - 1)]), str(ys[Math.min(i, ys.length - 1)])]);
}

function stateIsAbsent(t: Task): boolean {
  return str(t.args.state) === 'absent';
}

function destOf(t: Task): string | undefined {
  return str(t.args.dest) ?? str(t.args.path) ?? str(t.args.name);
}


/** Reads a role template so a `template:` task can be judged by what it writes. */
type TemplateReader = (role: string, src: string) => Promise<string | null>;

/** One thing a task does towards fixing a problem. */
interface TaskAction {
  problem: Problem;
  part: string;
  task: Task;
  does: string;
}

async function classify(t: Task, scope: VarScope, readTemplate: TemplateReader): Promise<TaskAction[]> {
  const out: TaskAction[] = [];
  const add = (problem: Problem, part: string, does: string) => out.push({ problem, part, task: t, does });
  const cmd = commandText(t);

  // swap
  if (cmd && /(^|[\s/;&|(])swapoff(\s|$)/.test(cmd)) add('swap', 'runtime', `runs ${cmd.trim()}`);
  if (SYSTEMD_MODULES.has(t.module) && truthy(t.args.masked) && values(t, 'name').some((n) => n === 'swap.target')) {
    add('swap', 'persist', 'masks swap.target');
  }
  if (t.module === 'mount' && str(t.args.fstype) === 'swap' && stateIsAbsent(t)) {
    add('swap', 'persist', `removes swap entries from ${str(t.args.fstab) ?? '/etc/fstab'}`);
  }
  if ((t.module === 'lineinfile' || t.module === 'replace') && destOf(t) === '/etc/fstab') {
    const pattern = str(t.args.regexp) ?? str(t.args.line) ?? '';
    if (/swap/.test(pattern) && (t.module === 'replace' || stateIsAbsent(t))) add('swap', 'persist', 'removes swap lines from /etc/fstab');
  }
  if (cmd && /\/etc\/fstab/.test(cmd) && /swap/.test(cmd) && /\bsed\b/.test(cmd)) add('swap', 'persist', 'edits swap lines out of /etc/fstab');

  // br_netfilter
  if (t.module === 'modprobe' && !stateIsAbsent(t) && values(t, 'name').includes('br_netfilter')) {
    add('br_netfilter', 'runtime', 'loads br_netfilter (modprobe)');
    if (str(t.args.persistent) === 'present') add('br_netfilter', 'persist', 'persists br_netfilter (modprobe persistent: present)');
  }
  if (cmd && /\bmodprobe\s+(?:-\S+\s+)*br_netfilter\b/.test(cmd)) add('br_netfilter', 'runtime', `runs ${cmd.trim()}`);
  const dest = destOf(t);
  if (dest && (MODULES_LOAD_DIRS.some((d) => dest.startsWith(`${d}/`)) || dest === '/etc/modules') && !stateIsAbsent(t)) {
    let written: string | undefined;
    if (t.module === 'copy') written = values(t, 'content').join('\n');
    else if (t.module === 'lineinfile') written = values(t, 'line').join('\n');
    else if (t.module === 'blockinfile') written = str(t.args.block);
    else if (t.module === 'template' && typeof t.args.src === 'string') written = (await readTemplate(t.role, t.args.src)) ?? undefined;
    if (written !== undefined && /(^|\s)br_netfilter(\s|$)/m.test(written)) add('br_netfilter', 'persist', `persists br_netfilter in ${dest}`);
  }

  // ip_forward
  if (t.module === 'sysctl' && !stateIsAbsent(t)) {
    for (const [name, value] of pairs(t, 'name', 'value')) {
      if (name === 'net.ipv4.ip_forward' && value !== undefined && value.trim() === '1') {
        add('ip_forward', 'runtime', `sets net.ipv4.ip_forward = 1 (sysctl module, file ${str(t.args.sysctl_file) ?? '/etc/sysctl.conf'})`);
      }
    }
  }

  // port_10250: something that stops or kills whatever listens there.
  const resolvedCmd = cmd ? (scope.resolve(cmd)?.value as string | undefined) ?? cmd : null;
  if (resolvedCmd && /\b10250\b/.test(resolvedCmd) && /\bfuser\b[^|;&]*\s-\w*k|\bkill\b|\bpkill\b|\bkillall\b|\bsystemctl\s+(?:\S+\s+)*(stop|disable|mask)\b/.test(resolvedCmd)) {
    add('port_10250', 'runtime', `runs ${resolvedCmd.trim()}`);
  }
  if (SYSTEMD_MODULES.has(t.module) && str(t.args.state) === 'stopped') {
    const text = JSON.stringify([t.ref.name, t.args, t.when, t.loop]);
    if (/\b10250\b/.test(text)) add('port_10250', 'runtime', `stops ${values(t, 'name').join(', ') || 'a unit'} holding port 10250`);
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

function verdict(problem: Problem, found: TaskAction[]): Verdict {
  const mine = found.filter((f) => f.problem === problem);
  const evidence = mine.map((f) => ({ ...f.task.ref, does: f.does, when: f.task.when }));
  const present = new Set(mine.map((f) => f.part));
  const rule = RULES[problem];
  if (rule.parts.every((p) => present.has(p))) return { who: 'kubespray', evidence };
  return { who: 'operator', evidence, reason: rule.missing(present) };
}

// ---- sysctl file ------------------------------------------------------------

function sysctlKeys(tasks: Task[], scope: VarScope): SysctlAssignmentByKubespray[] {
  const out: SysctlAssignmentByKubespray[] = [];
  for (const t of tasks) {
    if (t.module !== 'sysctl' || stateIsAbsent(t)) continue;
    for (const [name, value] of pairs(t, 'name', 'value')) {
      const key = name === undefined ? undefined : (scope.resolve(name)?.value as string | undefined);
      if (typeof key !== 'string' || key.includes('{{')) continue;
      const v = value === undefined ? undefined : scope.resolve(value)?.value;
      out.push({ key, value: typeof v === 'string' || typeof v === 'number' ? String(v) : null, ref: t.ref });
    }
  }
  return out;
}

function sysctlFile(tasks: Task[], scope: VarScope, notes: string[]): SysctlFileVerdict | null {
  const sysctlTasks = tasks.filter((t) => t.module === 'sysctl' && !stateIsAbsent(t));
  if (sysctlTasks.length === 0) return null;
  // The file the ip_forward task writes is the one that matters most; else the most used.
  const ipf = sysctlTasks.find((t) => pairs(t, 'name', 'value').some(([n]) => n === 'net.ipv4.ip_forward'));
  const counts = new Map<string, number>();
  for (const t of sysctlTasks) {
    const f = str(t.args.sysctl_file) ?? '/etc/sysctl.conf';
    counts.set(f, (counts.get(f) ?? 0) + 1);
  }
  const raw = (ipf && (str(ipf.args.sysctl_file) ?? '/etc/sysctl.conf')) ?? [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
  const users = sysctlTasks.filter((t) => (str(t.args.sysctl_file) ?? '/etc/sysctl.conf') === raw).map((t) => t.ref);
  const variable = /^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$/.exec(raw)?.[1] ?? null;
  const r = scope.resolve(raw);
  if (!r || typeof r.value !== 'string') {
    notes.push(`sysctl tasks write to ${raw}, which is not a plain default; sysctl_file left out`);
    return null;
  }
  // kubespray may repoint the variable at run time (e.g. to a symlink's target); say so.
  if (variable) {
    for (const t of tasks) {
      if (t.module === 'set_fact' && variable in t.args) {
        notes.push(`${t.ref.file}:${t.ref.line} "${t.ref.name}" sets ${variable} at run time to ${JSON.stringify(t.args[variable])}`);
      }
    }
  }
  return {
    path: r.value,
    variable,
    definedAt: r.trail.map((d) => ({ file: d.file, line: d.line, variable: d.name })),
    tasks: users,
  };
}

// ---- entry point ------------------------------------------------------------

/** Audits the checkout's preinstall and node roles. Throws only when the checkout cannot be read at all. */
export async function auditWhoFixes(ck: KubesprayCheckout): Promise<WhoFixes> {
  const tasks: Task[] = [];
  const issues: WalkIssue[] = [];
  const files: string[] = [];
  const roleDefs: VarDefinition[] = [];
  for (const role of AUDITED_ROLES) {
    const r = await walkRole(ck, role);
    tasks.push(...r.tasks);
    issues.push(...r.issues);
    files.push(...r.files);
    roleDefs.push(...(await roleDefaults(ck, role)));
  }
  const shared = await kubesprayDefaults(ck);
  // kubespray_defaults is the documented home of shared defaults; role defaults fill the gaps.
  const scope = new VarScope([...roleDefs, ...shared]);
  const notes = issues.map((i) => `${i.ref.file}:${i.ref.line} "${i.ref.name}": ${i.message}`);
  for (const d of roleDefs) {
    const s = shared.find((x) => x.name === d.name);
    if (s && JSON.stringify(s.value) !== JSON.stringify(d.value) && d.name === 'sysctl_file_path') {
      notes.push(`${d.file}:${d.line} sets ${d.name} to ${JSON.stringify(d.value)} but ${s.file}:${s.line} sets ${JSON.stringify(s.value)}`);
    }
  }
  const readTemplate: TemplateReader = async (role, src) => {
    const rel = src.startsWith('/') ? null : path.posix.join('roles', role, 'templates', src);
    return rel ? ck.readText(rel) : null;
  };
  const found: TaskAction[] = [];
  for (const t of tasks) found.push(...(await classify(t, scope, readTemplate)));
  return {
    swap: verdict('swap', found),
    br_netfilter: verdict('br_netfilter', found),
    ip_forward: verdict('ip_forward', found),
    port_10250: verdict('port_10250', found),
    sysctl_file: sysctlFile(tasks, scope, notes),
    sysctl_keys: sysctlKeys(tasks, scope),
    files,
    notes,
  };
}

export { KubesprayCheckout };
