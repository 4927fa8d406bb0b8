// Does kubespray's reset.yml clear what a former node left behind? reset.yml
// runs roles/reset (playbooks/reset.yml), whose `file: state=absent` tasks
// delete paths given as loop items and templates ({{ kube_config_dir }},
// {{ etcd_data_dir }}, …). Each piece of evidence is answered from those
// tasks as evaluated for this node (src/kubespray/who-fixes.ts's walk and
// variable context): cleared, with the task that removes it or an ancestor;
// not cleared by any task read; or unknown, with the file, line and
// expression that could not be evaluated. Never by task names.
import path from 'node:path';
import type { KubesprayCheckout } from './checkout.js';
import { canonicalModule } from './tasks.js';
import type { TaskRef } from './tasks.js';
import { isTemplate } from '../ansible/jinja.js';
import { evaluateAuditedRoles, formatEvidence, type AuditOptions, type AuditWarning, type EvaluatedTask, type RunStatus } from './who-fixes.js';

export const RESET_ROLE = 'reset';

export type ResetAnswer =
  | { clears: true; by: TaskRef & { removes: string; status: RunStatus; text: string } }
  | { clears: false; read: string[] }
  | { clears: 'unknown'; warning: AuditWarning };

export interface ResetAudit {
  /** Evidence path -> the answer. */
  answers: Map<string, ResetAnswer>;
  /** Task files of the reset role read, relative to the checkout. */
  files: string[];
}

interface Removal {
  task: EvaluatedTask;
  /** A path the task removes, or null with why an item could not be evaluated. */
  path: string | null;
  expression: string;
  reason?: string;
}

/** What one item of a file task templates to, with the loop variable bound. */
function itemPaths(e: EvaluatedTask): Removal[] {
  const raw = e.args.path ?? e.args.dest ?? e.args.name;
  const items = e.loop ?? [undefined];
  return items.map((item) => {
    const ctx = item === undefined ? e.ctx : e.ctx.child([{ name: e.task.loopVar, value: item, file: e.task.ref.file, line: e.task.ref.line }]);
    const expression = e.loop ? `${String(raw)} (item ${JSON.stringify(item)})` : String(raw);
    const r = isTemplate(raw) ? ctx.template(raw) : { ok: true as const, value: raw };
    if (!r.ok) return { task: e, path: null, expression, reason: r.reason };
    const v = isTemplate(r.value) ? ctx.template(r.value) : { ok: true as const, value: r.value };
    if (!v.ok) return { task: e, path: null, expression: String(r.value), reason: v.reason };
    return typeof v.value === 'string' && v.value.startsWith('/')
      ? { task: e, path: path.posix.normalize(v.value).replace(/(.)\/$/, '$1'), expression }
      : { task: e, path: null, expression, reason: `${JSON.stringify(v.value)} is not an absolute path` };
  });
}

/** The file tasks that remove things: state absent, known on every item (a templated state could be anything). */
function removals(evaluated: EvaluatedTask[]): { found: Removal[]; unsure: Removal[] } {
  const found: Removal[] = [];
  const unsure: Removal[] = [];
  for (const e of evaluated) {
    if (canonicalModule(e.task.module) !== 'file' || e.status.runs === 'no') continue;
    const state = e.args.state;
    if (isTemplate(state)) {
      unsure.push({ task: e, path: null, expression: String(state), reason: 'its state is templated' });
      continue;
    }
    if (state !== 'absent') continue;
    for (const r of itemPaths(e)) (r.path === null ? unsure : found).push(r);
  }
  return { found, unsure };
}

const covers = (removed: string, p: string) => p === removed || p.startsWith(removed === '/' ? '/' : `${removed}/`);

/** Kernel objects (an interface under /sys/class/net) are removed by commands, which this audit does not read for reset. */
const NOT_A_FILE = ['/sys/', '/proc/'];

function answerFor(p: string, found: Removal[], unsure: Removal[], files: string[]): ResetAnswer {
  if (NOT_A_FILE.some((d) => p.startsWith(d)))
    return {
      clears: 'unknown',
      warning: {
        file: `roles/${RESET_ROLE}/tasks/main.yml`,
        line: 0,
        expression: p,
        message: `${p} is no file: whether reset.yml's commands remove it is not judged`,
      },
    };
  const hit = found.find((r) => covers(r.path!, p));
  if (hit) {
    const t = hit.task.task.ref;
    const text = formatEvidence({ ...t, does: `removes ${hit.path}`, when: [], status: hit.task.status });
    return { clears: true, by: { ...t, removes: hit.path!, status: hit.task.status, text } };
  }
  const u = unsure[0];
  if (u) {
    const t = u.task.task.ref;
    return {
      clears: 'unknown',
      warning: { file: t.file, line: t.line, expression: u.expression, message: `whether ${t.file.split('/tasks/')[0]} removes ${p} is unknown: ${u.reason}` },
    };
  }
  return { clears: false, read: files };
}

/**
 * Answers, for each path, whether `roles` (reset.yml's reset role by default; cluster.yml's audited roles to ask
 * whether the install clears it) remove it on this node. Throws only when the checkout cannot be read at all.
 */
export async function auditReset(
  ck: KubesprayCheckout,
  paths: readonly string[],
  opts: AuditOptions = {},
  roles: readonly string[] = [RESET_ROLE],
): Promise<ResetAudit> {
  const { evaluated, files } = await evaluateAuditedRoles(ck, opts, roles);
  const { found, unsure } = removals(evaluated);
  return { answers: new Map(paths.map((p) => [p, answerFor(p, found, unsure, files)])), files };
}
