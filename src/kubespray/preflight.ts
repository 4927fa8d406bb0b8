// kubespray's memory preflight, read from the checkout and evaluated for
// this host before anyone spends an hour on the install. Every release so
// far has it in roles/kubernetes/preinstall/tasks/00x0-verify-settings.yml:
//   - name: Stop if memory is too small for control plane nodes
//     assert: { that: ansible_facts['memtotal_mb'] >= minimal_master_memory_mb }
//     when: [not ignore_assert_errors, ('kube_control_plane' in group_names)]
// (older: `ansible_memtotal_mb`, `inventory_hostname in groups['kube_control_plane']`).
// The assert is found by reading `that` with the Jinja grammar: a comparison
// with the memtotal_mb fact under any of its names. Its `when` and `that`
// are evaluated with the host's facts and inventory, never pattern-matched.
import type { KubesprayCheckout } from './checkout.js';
import { childNodes, evaluateCondition, evaluateExpression, parseExpression } from './jinja.js';
import type { ExprNode } from './jinja.js';
import { buildVarContext } from './vars.js';
import type { FactMap, HostContext, VarsReader } from './vars.js';
import { runStatus } from './who-fixes.js';
import type { RunStatus } from './who-fixes.js';
import { walkRole } from './tasks.js';
import type { TaskRef } from './tasks.js';

export const PREINSTALL_DEFAULTS = 'roles/kubernetes/preinstall/defaults/main.yml';
export const PREINSTALL_ROLE = 'kubernetes/preinstall';

export interface MemoryAssert {
  ref: TaskRef;
  /** The `that` item as written. */
  that: string;
  /** The fact as written in it: ansible_memtotal_mb, ansible_facts['memtotal_mb'], ... */
  fact: string;
  /** What it is compared with, as written when it is a variable or a number. */
  variable: string;
  /** Its value for this host; null when it cannot be evaluated (reason says why). */
  minimum: number | null;
  minimumReason?: string;
  /** The group a membership test in `when` names, for messages. */
  group: string | null;
  when: string[];
}

export interface MemoryVerdict {
  assert: MemoryAssert;
  /** Whether the assert runs on this host. */
  status: RunStatus;
  /** true/false when it runs and `that` evaluates; null otherwise. */
  passes: boolean | null;
  /** Why `that` could not be evaluated. */
  reason?: string;
}

const isSym = (n: ExprNode | undefined, name?: string): boolean => n?.typename === 'Symbol' && (name === undefined || n.value === name);
const isLit = (n: ExprNode | undefined): boolean => n?.typename === 'Literal';

/** The memtotal_mb fact under any Ansible name, through filters such as |int; the name as written, or null. */
function memFact(n: ExprNode | undefined): string | null {
  if (!n) return null;
  if (isSym(n, 'ansible_memtotal_mb')) return 'ansible_memtotal_mb';
  if (n.typename === 'LookupVal' && isSym(n.target as ExprNode, 'ansible_facts') && isLit(n.val as ExprNode) && (n.val as ExprNode).value === 'memtotal_mb') {
    return "ansible_facts['memtotal_mb']";
  }
  if (n.typename === 'Filter') return memFact(((n.args as ExprNode).children as ExprNode[])[0]);
  return null;
}

function operandText(n: ExprNode): string | null {
  if (isSym(n)) return String(n.value);
  if (isLit(n) && typeof n.value === 'number') return String(n.value);
  if (n.typename === 'Filter') {
    const inner = operandText(((n.args as ExprNode).children as ExprNode[])[0]!);
    return inner === null ? null : `${inner} | ${String((n.name as ExprNode).value)}`;
  }
  return null;
}

/** `fact >= X` (or `X <= fact`) somewhere in a `that` item. */
function findComparison(n: ExprNode | null): { fact: string; other: ExprNode } | null {
  if (!n) return null;
  if (n.typename === 'Compare') {
    const ops = n.ops as { type: string; expr: ExprNode }[];
    if (ops.length === 1) {
      const left = n.expr as ExprNode;
      const right = ops[0]!.expr;
      const op = ops[0]!.type;
      const lf = memFact(left);
      if (lf && (op === '>=' || op === '>')) return { fact: lf, other: right };
      const rf = memFact(right);
      if (rf && (op === '<=' || op === '<')) return { fact: rf, other: left };
    }
  }
  for (const c of childNodes(n)) {
    const hit = findComparison(c);
    if (hit) return hit;
  }
  return null;
}

/** The group in `'g' in group_names` or `inventory_hostname in groups['g']` (any form), for messages. */
function groupOf(n: ExprNode | null): string | null {
  if (!n) return null;
  if (n.typename === 'In') {
    const l = n.left as ExprNode;
    const r = n.right as ExprNode;
    if (isLit(l) && isSym(r, 'group_names')) return String(l.value);
    if (isSym(l, 'inventory_hostname') && r.typename === 'LookupVal' && isSym(r.target as ExprNode, 'groups') && isLit(r.val as ExprNode)) return String((r.val as ExprNode).value);
    if (isSym(l, 'inventory_hostname') && r.typename === 'FunCall') {
      const callee = r.name as ExprNode;
      const arg = ((r.args as ExprNode).children as ExprNode[])[0];
      if (callee.typename === 'LookupVal' && isSym(callee.target as ExprNode, 'groups') && isLit(arg)) return String(arg!.value);
    }
  }
  for (const c of childNodes(n)) {
    const g = groupOf(c);
    if (g) return g;
  }
  return null;
}

export interface PreflightOptions {
  facts?: FactMap;
  host?: HostContext;
  reader?: VarsReader;
}

export interface MemoryAudit {
  verdicts: MemoryVerdict[];
  /** minimal_master_memory_mb as this host will see it; null when it cannot be evaluated. */
  minimalMasterMemoryMb: { value: number; file: string; line: number } | null;
  minimalReason?: string;
  /** Files of the preinstall role read. */
  files: string[];
  /** Task files that could not be read or includes that could not be followed (an assert may be in them). */
  gaps: string[];
}

function asNumber(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^\s*\d+\s*$/.test(v)) return Number(v);
  return null;
}

/** Every memory assert of the preinstall role, evaluated for this host (facts and inventory when given). */
export async function auditMemory(ck: KubesprayCheckout, o: PreflightOptions = {}): Promise<MemoryAudit> {
  const ctx = await buildVarContext({ ck, role: PREINSTALL_ROLE, ...o });
  const role = await walkRole(ck, PREINSTALL_ROLE, (value, conditions) => {
    const st = runStatus(conditions, ctx);
    if (st.runs === 'no') return { reason: 'not included' };
    const t = ctx.template(value);
    return t.ok && typeof t.value === 'string' ? { value: t.value } : { reason: t.ok ? 'not a file name' : t.reason };
  });
  const verdicts: MemoryVerdict[] = [];
  for (const t of role.tasks) {
    if (t.module !== 'assert') continue;
    const that = Array.isArray(t.args.that) ? t.args.that : [t.args.that];
    for (const cond of that) {
      const hit = findComparison(parseExpression(String(cond)));
      if (!hit) continue;
      const variable = operandText(hit.other) ?? String(cond);
      let minimum: number | null = null;
      let minimumReason: string | undefined;
      if (isLit(hit.other)) minimum = asNumber(hit.other.value);
      else if (operandText(hit.other) !== null) {
        const r = evaluateExpression(operandText(hit.other)!, ctx.resolver);
        minimum = r.ok ? asNumber(r.value) : null;
        if (!r.ok) minimumReason = r.reason;
        else if (minimum === null) minimumReason = `${variable} is ${JSON.stringify(r.value)}, not a number`;
      } else minimumReason = `the right side of ${String(cond)} is not a variable or a number`;
      const group = t.conditions.map((c) => groupOf(parseExpression(String(c.expr)))).find((g) => g !== null) ?? null;
      const a: MemoryAssert = { ref: t.ref, that: String(cond), fact: hit.fact, variable, minimum, minimumReason, group, when: t.when };
      const status = runStatus(t.conditions, ctx);
      let passes: boolean | null = null;
      let reason: string | undefined;
      if (status.runs === 'yes') {
        if (o.facts) {
          const r = evaluateCondition(cond, ctx.resolver);
          if (r.ok) passes = r.value;
          else reason = r.reason;
        } else reason = 'no facts';
      }
      verdicts.push({ assert: a, status, passes, reason });
    }
  }
  let minimalMasterMemoryMb: MemoryAudit['minimalMasterMemoryMb'] = null;
  let minimalReason: string | undefined;
  const r = ctx.template('{{ minimal_master_memory_mb }}');
  const n = r.ok ? asNumber(r.value) : null;
  const def = r.trail[0];
  if (n !== null && def) minimalMasterMemoryMb = { value: n, file: def.file, line: def.line };
  else minimalReason = r.ok ? `minimal_master_memory_mb is ${JSON.stringify(r.value)}, not a number` : r.reason;
  const gaps = role.issues.filter((i) => i.unfollowed || i.message.includes(': ')).map((i) => `${i.ref.file}:${i.ref.line} ${i.message}`);
  return { verdicts, minimalMasterMemoryMb, minimalReason, files: role.files, gaps };
}
