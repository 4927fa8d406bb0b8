// SysctlFile: the wanted sysctls hold in the running kernel, at the next boot
// (systemd-sysctl) and after someone runs `sysctl --system` (procps). We own
// one sysctl.d file; any assignment that would beat it under either program
// is a conflict, resolved the way the policy says. See src/sysctl/order.ts
// for the two programs' rules.
import path from 'node:path';
import type { TargetHost, Host } from '../../host.js';
import { SYSCTL_FILE_SCHEMA, type SysctlFileSpec } from './spec.js';
import type { WriteDoor } from '../../door/door.js';
import type { Change, Provider } from '../types.js';
import { ReconcileError } from '../../errors.js';
import { normalizeSysctlKey, readLiveSysctl, sysctlProcPath } from '../../observe/sysctl-live.js';
import { modulePromise } from '../modules-load/promises.js';
import { SYSCTL_KIND, sysctlPromise } from './promises.js';
import { sameSysctlValue } from '../../sysctl/parse.js';
import { verdicts } from '../../sysctl/order.js';
import type { SysctlVerdict } from '../../sysctl/order.js';
import { observeSysctlTree } from '../../sysctl/observe.js';
import { moduleFor, renderOwnedFile, wantedSettings } from '../../sysctl/owned-file.js';
import type { SysctlFileObserved, SysctlOp } from './observed.js';
import { diff } from './diff.js';
import { rehearsalFailures, rehearsalNotes, rehearse } from './rehearse.js';
import { withBootScripts } from '../boot-script-hook.js';
import { sysctlConcern } from './boot-scripts.js';
import { moduleFact } from '../modules-load/provider.js';
import { notRegularWarning } from '../../systemd/conf-entry.js';
import { sysctlFileClaims, sysctlFileGrammar, sysctlFileHostChecks } from './spec-checks.js';

async function observe(host: TargetHost, spec: SysctlFileSpec): Promise<SysctlFileObserved> {
  const { tree, dirs, issues, skipped } = await observeSysctlTree(host);
  const link = await host.readLink(spec.file);
  const masked = link !== null && path.posix.normalize(link) === '/dev/null';
  const content = masked ? null : await host.readBytes(spec.file);
  const keys = [...wantedSettings(spec).keys()];
  let runtime: Record<string, string | null> | null = null;
  if (host.live) {
    runtime = {};
    for (const k of keys) runtime[k] = await readLiveSysctl(host, k);
  }
  const observed: SysctlFileObserved = {
    live: host.live,
    etcReal: await host.realTarget('/etc'),
    owned: { path: spec.file, content, link },
    tree,
    dirs,
    issues,
    skipped,
    verdicts: verdicts(tree, keys),
    runtime,
    rehearsal: null,
  };
  observed.rehearsal = await rehearse(host, spec, observed);
  return observed;
}

async function apply(host: Host, spec: SysctlFileSpec, changes: Change<SysctlOp>[], door: WriteDoor): Promise<void> {
  const ops = changes.map((c) => c.op);
  // 1. Our file.
  for (const c of changes) {
    const op = c.op;
    if (op.kind !== 'owned') continue;
    await door.writeFile({
      path: op.path,
      expect: op.replaceLink ? undefined : (c.file?.before ?? null),
      content: op.content,
      mode: 0o644,
      replaceLink: op.replaceLink,
    });
  }
  // 2. Conflicts. Each file must still be what the plan saw, or its line numbers mean nothing.
  for (const c of changes) {
    const op = c.op;
    if (op.kind !== 'resolve') continue;
    await door.writeFile({ path: op.target, expect: c.file?.before ?? null, content: op.content, mode: 0o644, replaceLink: op.replaceLink });
  }
  // 3. The running kernel, after ModulesLoad (`after` below) has loaded br_netfilter.
  for (const op of ops) {
    if (op.kind !== 'runtime') continue;
    const target = sysctlProcPath(op.key);
    if ((await readLiveSysctl(host, op.key)) === null) {
      const mod = moduleFor(op.key);
      throw new ReconcileError(
        `${op.key} does not exist in the running kernel (${target} is missing)` +
          (mod ? `: the ${mod} module must be loaded first (ModulesLoad, modprobe ${mod})` : ': check the key name against this kernel'),
      );
    }
    const before = await readLiveSysctl(host, op.key);
    await door.runtime({ step: 'sysctl', key: op.key, path: target, before, value: op.value }, () => host.writeKernel(target, op.value));
    const now = await readLiveSysctl(host, op.key);
    if (now === null || !sameSysctlValue(now, op.value)) {
      throw new ReconcileError(`the kernel did not keep ${op.key} = ${op.value} (it reads ${now ?? 'nothing'})`);
    }
  }
  // Verification is the engine's: it observes again after every provider has applied.
}

/**
 * The engine's prediction per wanted key and model, plus the live value: what
 * `--json` shows, and what the VM suite compares with the kernel after a boot
 * and after `sysctl --system`.
 */
export function summarizeVerdicts(observed: SysctlFileObserved) {
  const verdictJson = (v: SysctlVerdict) => ({
    key: v.key,
    value: v.value,
    via: v.via,
    winner: v.winner ? `${v.winner.assignment.file}:${v.winner.assignment.line}` : null,
  });
  return {
    verdicts: { boot: observed.verdicts.boot.map(verdictJson), system: observed.verdicts.system.map(verdictJson) },
    runtime: observed.runtime,
  };
}

/** The key before.json records (the lab's ip_forward). */
const IP_FORWARD = 'net.ipv4.ip_forward';

const sysctlFileOwn: Provider<SysctlFileSpec, SysctlFileObserved, SysctlOp> = {
  type: 'SysctlFile',
  schema: SYSCTL_FILE_SCHEMA,
  after: ['ModulesLoad'],
  observe,
  diff,
  promised: (spec) =>
    Object.entries(spec.settings).map(([k, v]) => {
      const key = normalizeSysctlKey(k);
      // The key's /proc/sys entry exists only with its module: what takes the module back takes the key back.
      const mod = moduleFor(key);
      return { id: sysctlPromise(key), kind: 'sysctl', subject: key, expect: String(v), ...(mod ? { needs: [modulePromise(mod)] } : {}) };
    }),
  promiseKinds: { sysctl: SYSCTL_KIND },
  // before.json's ip_forward: the running kernel's value (0 when it lacks the key).
  beforeState: async (host, seen) => {
    const v = seen.sysctls?.has(IP_FORWARD) ? seen.sysctls.get(IP_FORWARD)! : await readLiveSysctl(host, IP_FORWARD);
    return { ip_forward: v === null ? 0 : Number(v) };
  },
  ownedFiles: (spec) => [{ path: spec.file, content: renderOwnedFile(spec) }],
  summarize: (_spec, observed) => ({ ...summarizeVerdicts(observed), rehearsal: observed.rehearsal }),
  notes: rehearsalNotes,
  // The rehearsal, run again over the written files, must show every key right under both programs.
  unconverged: (spec, observed) => rehearsalFailures(spec, observed.rehearsal),
  warnings: (_spec, o) => [
    ...o.skipped.map((k) =>
      k.notRegular
        ? notRegularWarning(k.path, k.notRegular, 'systemd-sysctl')
        : `${k.path} is skipped, as systemd-sysctl and sysctl --system skip it: ${k.why}`,
    ),
    ...o.issues.map((i) => `${i.file}:${i.line}: ${i.message}; both programs ignore this line`),
  ],
  // Only a write into the running kernel needs the key's module loaded now (a net.bridge key has no
  // /proc/sys entry without br_netfilter); the files and the other keys do not depend on it.
  needs: (_spec, change) => {
    const op = change.op as SysctlOp | { kind: string };
    const mod = op.kind === 'runtime' ? moduleFor((op as Extract<SysctlOp, { kind: 'runtime' }>).key) : null;
    return mod === null ? [] : [{ type: 'ModulesLoad', fact: moduleFact(mod) }];
  },
  // A write into the running kernel is for its key's value now; the files are for every key.
  changePromises: (_spec, change) => {
    const op = change.op as SysctlOp | { kind: string };
    return op.kind === 'runtime' ? [sysctlPromise(normalizeSysctlKey((op as Extract<SysctlOp, { kind: 'runtime' }>).key))] : null;
  },
  async apply(host, spec, changes, ctx) {
    await apply(host, spec, changes, ctx.door);
  },
  grammar: sysctlFileGrammar,
  claims: sysctlFileClaims,
  hostChecks: sysctlFileHostChecks,
  // The ordering audit reads the tree; before.json the live values (the first entry of a key counts).
  facts: (_spec, o) => {
    const sysctls = new Map<string, string | null>();
    for (const [k, v] of Object.entries(o.runtime ?? {})) if (!sysctls.has(normalizeSysctlKey(k))) sysctls.set(normalizeSysctlKey(k), v);
    return { sysctlTree: o.tree, sysctls };
  },
};

/** With the boot-script scan (issue 17): script lines that would undo this resource at boot. */
export const sysctlFileProvider = withBootScripts(sysctlFileOwn, sysctlConcern);
