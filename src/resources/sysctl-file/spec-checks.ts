// What a SysctlFile spec may say: its values' grammar (on the document as
// parsed), what it alone owns (its file, each key), and the keys the running
// kernel must know. The engine asks these through the provider's traits.
import type { TargetFs } from '../../host.js';
import type { SysctlFileSpec } from './spec.js';
import type { Claim, SpecIssue } from '../types.js';
import type { Promised } from '../../promises.js';
import { ownedFileProblem } from '../../grammar.js';
import { sysctlKeyProblem, sysctlStringValueProblem } from './grammar.js';
import { normalizeSysctlKey, sysctlProcPath } from '../../observe/sysctl-live.js';
import { canonicalModuleName } from '../../observe/modules.js';
import { moduleFor } from '../../sysctl/owned-file.js';

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export function sysctlFileGrammar(raw: Record<string, unknown>): SpecIssue[] {
  const out: SpecIssue[] = [];
  const add = (at: string[], message: string | null, atKey = false) => {
    if (message) out.push({ at, atKey, message });
  };
  if (typeof raw.file === 'string') add(['file'], ownedFileProblem(raw.file, '/etc/sysctl.d', 'systemd-sysctl'));
  if (isObj(raw.settings)) {
    for (const [k, v] of Object.entries(raw.settings)) {
      add(['settings', k], sysctlKeyProblem(k), true);
      if (typeof v === 'string' && !/^-?\d+$/.test(v)) add(['settings', k], sysctlStringValueProblem(v));
    }
  }
  return out;
}

/** Its file, then each key it sets (canonical). */
export function sysctlFileClaims(spec: SysctlFileSpec): Claim[] {
  return [
    { kind: 'file', subject: spec.file, at: ['file'] },
    ...Object.keys(spec.settings).map((k): Claim => ({ kind: 'sysctl', subject: normalizeSysctlKey(k), at: ['settings', k], atKey: true })),
  ];
}

/** Live only: each key must be a key of the running kernel, or appear once a module the desired state loads is loaded. */
export async function sysctlFileHostChecks(host: TargetFs, spec: SysctlFileSpec, ctx: { promised: Promised[] }): Promise<SpecIssue[]> {
  if (!host.live) return [];
  const loaded = new Set(ctx.promised.filter((p) => p.kind === 'module').map((p) => p.subject));
  const out: SpecIssue[] = [];
  for (const key of Object.keys(spec.settings)) {
    const proc = sysctlProcPath(key);
    const st = await host.lstat(proc);
    const at = ['settings', key];
    if (st?.isDirectory()) {
      out.push({ at, atKey: true, message: `${proc} is a directory of keys, not a key` });
    } else if (st === null) {
      const mod = moduleFor(normalizeSysctlKey(key));
      if (mod && loaded.has(canonicalModuleName(mod))) continue; // appears once the ModulesLoad resource loads it
      out.push({
        at,
        atKey: true,
        message: `${proc} does not exist in the running kernel${mod ? `; it appears once ${mod} is loaded: list ${mod} in a ModulesLoad resource` : ''}`,
      });
    }
  }
  return out;
}
