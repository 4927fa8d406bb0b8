// kubespray's memory preflight (roles/kubernetes/preinstall/tasks/
// 0040-verify-settings.yml), read from the checkout and evaluated against
// the facts before anyone spends an hour on the install:
//   - name: Stop if memory is too small for control plane nodes
//     assert: { that: ansible_memtotal_mb >= minimal_master_memory_mb }
//     when: [not ignore_assert_errors, ('kube_control_plane' in group_names)]
import { KubesprayCheckout, VarScope, kubesprayDefaults, roleDefaults, topLevelVars } from './checkout.js';
import type { VarDefinition } from './checkout.js';
import { walkRole } from './tasks.js';
import type { TaskRef } from './tasks.js';

export const PREINSTALL_DEFAULTS = 'roles/kubernetes/preinstall/defaults/main.yml';
export const VERIFY_SETTINGS = 'roles/kubernetes/preinstall/tasks/0040-verify-settings.yml';

export interface MemoryAssert {
  ref: TaskRef;
  /** The group the assert is limited to by `'<group>' in group_names`. */
  group: string;
  /** The variable compared with ansible_memtotal_mb, e.g. minimal_master_memory_mb. */
  variable: string;
  /** Its default, when it resolves to a number. */
  minimum: number | null;
  when: string[];
}

/** minimal_master_memory_mb as defined in the preinstall defaults (parsed with yaml, never grepped). */
export async function minimalMasterMemoryMb(ck: KubesprayCheckout): Promise<{ value: number; def: VarDefinition } | null> {
  const f = await ck.yaml(PREINSTALL_DEFAULTS);
  if (!f) return null;
  const def = topLevelVars(f).find((d) => d.name === 'minimal_master_memory_mb');
  if (!def) return null;
  const scope = new VarScope([...(await kubesprayDefaults(ck)), ...topLevelVars(f)]);
  const v = scope.resolve(def.value)?.value;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isFinite(n) ? { value: n, def } : null;
}

/** Every `assert: that: ansible_memtotal_mb >= VAR` limited to a group, found by walking the preinstall role. */
export async function memoryAsserts(ck: KubesprayCheckout): Promise<MemoryAssert[]> {
  const role = await walkRole(ck, 'kubernetes/preinstall');
  const scope = new VarScope([...(await roleDefaults(ck, 'kubernetes/preinstall')), ...(await kubesprayDefaults(ck))]);
  const out: MemoryAssert[] = [];
  for (const t of role.tasks) {
    if (t.module !== 'assert') continue;
    const that = Array.isArray(t.args.that) ? t.args.that : [t.args.that];
    for (const cond of that) {
      const m = /^\s*ansible_memtotal_mb\s*>=\s*([A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(String(cond));
      if (!m) continue;
      const group = t.when.map((w) => /^\(?\s*['"]([^'"]+)['"]\s+in\s+group_names\s*\)?$/.exec(w.trim())?.[1]).find(Boolean);
      if (!group) continue;
      const r = scope.resolve(`{{ ${m[1]} }}`)?.value;
      const n = typeof r === 'number' ? r : typeof r === 'string' && /^\d+$/.test(r) ? Number(r) : null;
      out.push({ ref: t.ref, group, variable: m[1]!, minimum: n, when: t.when });
    }
  }
  return out;
}

export interface MemoryVerdict {
  assert: MemoryAssert;
  applies: boolean;
  passes: boolean | null;
}

/** Pure: which asserts apply to a host in `groups` and whether its memory passes them. */
export function checkMemory(asserts: MemoryAssert[], groups: string[], memtotalMb: number): MemoryVerdict[] {
  return asserts.map((a) => {
    const applies = groups.includes(a.group);
    return { assert: a, applies, passes: applies && a.minimum !== null ? memtotalMb >= a.minimum : null };
  });
}
