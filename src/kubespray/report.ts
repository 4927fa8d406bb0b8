// What the plan and the reports directory learn about kubespray: facts.json,
// who-fixes.json, and findings (memory preflight, who must act, sysctl lines
// that would undo kubespray's values at boot or after sysctl --system). Never
// throws for a missing checkout or a failing fact source: those become findings.
import path from 'node:path';
import type { Host } from '../host.js';
import type { Finding } from '../findings.js';
import type { DesiredState, SysctlFileSpec } from '../desired-state.js';
import { gatherNativeFacts, systemDistroVersion } from '../facts/native.js';
import { ansibleCoreFor, bundledDistroVersion } from '../facts/ansible-core.js';
import { BUNDLED_DISTRO_VERSION } from '../facts/distribution.js';
import { gatherAnsibleFacts } from '../facts/ansible.js';
import type { Facts } from '../facts/linux.js';
import { parseSysctlText, sameSysctlValue, sysctlLines } from '../sysctl/parse.js';
import { applySequence, beatingAssignments, ownedFileProblem, SYSCTL_CONF, SYSCTL_MODELS, withFile } from '../sysctl/order.js';
import type { AppliedAssignment, SysctlConfFile, SysctlModel, SysctlTree } from '../sysctl/order.js';
import { observeSysctlTree } from '../sysctl/observe.js';
import { renderOwnedFile } from '../resources/sysctl-file.js';
import { resourceName } from '../resources/types.js';
import { LineCounter, parseDocument } from 'yaml';
import { HostError } from '../errors.js';
import { KubesprayCheckout, topLevelVars } from './checkout.js';
import { parseInventory } from './inventory.js';
import type { MemoryAudit } from './preflight.js';
import type { FactMap, HostContext, VarsReader } from './vars.js';
import type { SysctlAssignmentByKubespray, WhoFixes, WhoFixesJson } from './who-fixes.js';

export interface FactsJson extends Facts {
  /** As this host sees it (role defaults, inventory, group_vars); absent when it cannot be evaluated. */
  minimal_master_memory_mb?: number;
  /** How the facts were gathered: which ansible-core and which distro library were modelled. */
  evidence?: string[];
}


export interface KubesprayReport {
  facts?: FactsJson;
  whoFixes?: WhoFixesJson;
  /** The verdicts with their evidence, for the human plan and --json. */
  audit?: WhoFixes;
  findings: Finding[];
}

export async function kubesprayReport(host: Host, desired: DesiredState): Promise<KubesprayReport> {
  const findings: Finding[] = [];
  const report: KubesprayReport = { findings };
  const ks = desired.kubespray;

  // 1. Facts
  let facts: Facts | undefined;
  if (!host.live) {
    findings.push({ level: 'info', message: `facts not gathered: offline (--root ${host.root}) there is no running kernel to read` });
  } else if (desired.facts.source === 'ansible' && !ks) {
    findings.push({ level: 'error', message: 'facts.source is ansible but desired-state has no kubespray section (dir, inventory, node)' });
  } else {
    try {
      if (desired.facts.source === 'ansible') {
        facts = await gatherAnsibleFacts(host, ks!);
        report.facts = { ...facts, evidence: ['facts.source ansible: ansible -m setup'] };
      } else {
        const core = await ansibleCoreFor(host, ks?.dir);
        const system = await systemDistroVersion(host);
        const bundled = core.version ? bundledDistroVersion(core.version) : BUNDLED_DISTRO_VERSION;
        facts = await gatherNativeFacts(host, { bundledDistroVersion: bundled });
        const distro = system !== null ? `distro ${system} (the target's system python3-distro, which ansible imports first)` : `distro ${bundled} (bundled in ansible-core${core.version ? ` ${core.version}` : ''}; the target has no python3-distro)`;
        report.facts = {
          ...facts,
          evidence: [core.version ? `ansible-core ${core.version} (from ${core.from})` : `ansible-core unknown (${core.from}): modelled as 2.14`, `distribution_version by ${distro}`],
        };
      }
    } catch (e) {
      findings.push({ level: 'error', message: `facts (${desired.facts.source}): ${(e as Error).message}` });
    }
  }
  if (!ks) {
    findings.push({ level: 'info', message: 'no kubespray section in desired-state: minimal_master_memory_mb and who-fixes.json left out' });
    return report;
  }
  // The audit (Jinja through nunjucks, the role walker) loads only when a checkout is configured.
  const [{ PREINSTALL_DEFAULTS, auditMemory }, { PROBLEMS, auditWhoFixes, formatEvidence, whoFixesJson }] = await Promise.all([import('./preflight.js'), import('./who-fixes.js')]);

  // 2. The checkout, and this host as kubespray's inventory describes it
  const ck = new KubesprayCheckout(host, ks.dir);
  try {
    if (!(await ck.exists(PREINSTALL_DEFAULTS))) {
      findings.push({
        level: 'warning',
        message: `kubespray checkout ${ks.dir} is missing or incomplete (no ${PREINSTALL_DEFAULTS}): minimal_master_memory_mb and who-fixes.json left out`,
      });
      return report;
    }
    await ck.yaml(PREINSTALL_DEFAULTS);
  } catch (e) {
    findings.push({
      level: 'warning',
      message: `kubespray checkout ${ks.dir} cannot be read (${(e as Error).message}): minimal_master_memory_mb and who-fixes.json left out`,
    });
    return report;
  }
  const hostCtx = await inventoryContext(host, ks, findings);
  const opts = { facts: facts ? factMap(facts) : undefined, host: hostCtx ?? undefined, reader: targetVarsReader(host) };

  // 3. Memory, the way the preinstall role asserts it
  let memory: MemoryAudit | undefined;
  try {
    memory = await auditMemory(ck, opts);
  } catch (e) {
    findings.push({ level: 'warning', unknown: true, message: `kubespray's memory asserts cannot be read: ${(e as Error).message}` });
  }
  if (memory) {
    if (memory.minimalMasterMemoryMb) {
      if (report.facts) report.facts.minimal_master_memory_mb = memory.minimalMasterMemoryMb.value;
    } else {
      findings.push({ level: 'warning', unknown: true, message: `minimal_master_memory_mb cannot be evaluated for this host: ${memory.minimalReason}` });
    }
    if (facts && hostCtx) memoryFindings(memory, ks.node, facts, findings);
  }

  // 4. Who fixes what
  let audit: WhoFixes;
  try {
    audit = await auditWhoFixes(ck, opts);
  } catch (e) {
    findings.push({ level: 'warning', unknown: true, message: `kubespray roles in ${ks.dir} cannot be read (${(e as Error).message}): who-fixes.json left out` });
    return report;
  }
  report.audit = audit;
  report.whoFixes = whoFixesJson(audit);
  for (const p of PROBLEMS) {
    const v = audit[p];
    findings.push({
      level: v.who === 'kubespray' ? 'info' : 'warning',
      message:
        v.who === 'kubespray'
          ? `${p}: kubespray fixes it`
          : v.who === 'unknown'
            ? `${p}: unknown whether kubespray fixes it: ${v.reason}`
            : `${p}: the operator must fix it: ${v.reason}`,
      evidence: v.evidence.map(formatEvidence),
      ...(v.who === 'unknown' ? { unknown: true } : {}),
    });
  }
  for (const w of audit.warnings) {
    findings.push({ level: 'warning', unknown: true, message: w.message, evidence: [`${w.file}:${w.line} ${w.expression}`] });
  }
  if (audit.sysctl_file) {
    findings.push({
      level: 'info',
      message: `sysctl_file: kubespray writes its sysctls to ${audit.sysctl_file.path}${audit.sysctl_file.variable ? ` (${audit.sysctl_file.variable})` : ''}`,
      evidence: audit.sysctl_file.definedAt.map((d) => `${d.file}:${d.line} ${d.variable}`),
    });
  } else if (!audit.warnings.some((w) => w.message.startsWith('sysctl_file:'))) {
    findings.push({ level: 'warning', unknown: true, message: 'sysctl_file: no sysctl task with a resolvable sysctl_file was found' });
  }
  for (const n of audit.notes) findings.push({ level: 'info', message: n });

  // 5. sysctl lines that would beat kubespray's file (src/sysctl/order.ts decides)
  if (audit.sysctl_file) {
    try {
      findings.push(...(await orderingFindings(host, audit.sysctl_file.path, audit.sysctl_keys, desired)));
    } catch (e) {
      findings.push({ level: 'warning', message: `sysctl ordering against kubespray not checked: ${(e as Error).message}` });
    }
  }
  return report;
}

/** Facts under the names Ansible gives them (without the ansible_ prefix). */
export function factMap(f: Facts): FactMap {
  const major = f.distribution_version.split('.')[0];
  return {
    memtotal_mb: f.memtotal_mb,
    processor_vcpus: f.processor_vcpus,
    distribution: f.distribution,
    distribution_version: f.distribution_version,
    distribution_major_version: major,
    kernel: f.kernel,
    ...(f.default_ipv4 !== null ? { default_ipv4: { address: f.default_ipv4 } } : {}),
  };
}

/** YAML vars files (group_vars, host_vars) on the target, with line numbers. */
export function targetVarsReader(host: Host): VarsReader {
  return {
    async file(abs) {
      const text = await host.readFile(abs).catch(() => null);
      if (text === null) return [];
      const lines = new LineCounter();
      const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false });
      if (doc.errors.length > 0) throw new HostError(`${abs}: ${doc.errors[0]!.message.split('\n')[0]}`, abs);
      return topLevelVars({ rel: abs, doc, lines });
    },
    async list(abs) {
      const entries = await host.readDir(abs).catch(() => null);
      return (entries ?? []).filter((e) => !e.isDirectory()).map((e) => e.name);
    },
  };
}

/** The inventory (INI or YAML) and this host in it; null with a warning when it cannot be used. */
async function inventoryContext(host: Host, ks: NonNullable<DesiredState['kubespray']>, findings: Finding[]): Promise<HostContext | null> {
  try {
    const text = await host.readFile(ks.inventory);
    if (text === null) {
      findings.push({ level: 'warning', unknown: true, message: `inventory ${ks.inventory} does not exist: kubespray's memory preflight not checked` });
      return null;
    }
    const inv = parseInventory(text, ks.inventory);
    if (!inv.hosts.has(ks.node)) {
      findings.push({ level: 'warning', unknown: true, message: `${ks.node} is not a host in ${ks.inventory}: kubespray's memory preflight not checked` });
      return null;
    }
    return { inventory: inv, inventoryDir: path.posix.dirname(ks.inventory), host: ks.node };
  } catch (e) {
    findings.push({ level: 'warning', unknown: true, message: `inventory ${ks.inventory}: ${(e as Error).message}` });
    return null;
  }
}

function memoryFindings(memory: MemoryAudit, node: string, facts: Facts, findings: Finding[]): void {
  if (memory.verdicts.length === 0) {
    findings.push({
      level: 'warning',
      unknown: true,
      message: `no memory assert (memtotal_mb compared with a minimum) found in roles/kubernetes/preinstall (read: ${memory.files.join(', ')}): kubespray's memory preflight not checked`,
      ...(memory.gaps.length > 0 ? { evidence: memory.gaps } : {}),
    });
    return;
  }
  for (const v of memory.verdicts) {
    const a = v.assert;
    const where = [`${a.ref.file}:${a.ref.line} "${a.ref.name}" asserts ${a.that} (when: ${a.when.join(' and ')})`];
    const inGroup = a.group ? ` (${node} in ${a.group})` : '';
    const s = v.status;
    if (s.runs === 'no') continue;
    if (s.runs !== 'yes') {
      findings.push({
        level: 'warning',
        unknown: true,
        message: `memory preflight "${a.ref.name}": whether it applies to ${node} cannot be evaluated: ${s.because.file}:${s.because.line} when: ${String(s.because.expr)}: ${s.runs === 'unknown' ? s.reason : s.on}`,
        evidence: where,
      });
    } else if (a.minimum === null || v.passes === null) {
      findings.push({
        level: 'warning',
        unknown: true,
        message: `memory preflight "${a.ref.name}" not checked: ${a.ref.file}:${a.ref.line} ${a.that}: ${a.minimumReason ?? v.reason}`,
        evidence: where,
      });
    } else if (!v.passes) {
      findings.push({
        level: 'error',
        message: `kubespray will stop at "${a.ref.name}": ${node} is in ${a.group ?? 'the asserted group'} and ${a.fact} ${facts.memtotal_mb} < ${a.variable} ${a.minimum}; add memory or move the node out of ${a.group ?? 'that group'} before running kubespray`,
        evidence: where,
      });
    } else {
      findings.push({
        level: 'info',
        message: `memory preflight "${a.ref.name}" passes: ${a.fact} ${facts.memtotal_mb} >= ${a.variable} ${a.minimum}${inGroup}`,
        evidence: where,
      });
    }
  }
}

/**
 * What ansible.posix.sysctl leaves in sysctl_file after setting key=value
 * (read_sysctl_file + fix_lines): every line is stripped, each "k=v" line is
 * rewritten as "k=v" and only the first line of a key is kept, the key's line
 * takes the new value, and a key not yet there is appended. Comments, blank
 * lines and lines without '=' stay.
 */
export function ansibleSysctlEdit(content: string, key: string, value: string): string {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const t of sysctlLines(content).map((l) => l.trim())) {
    if (t === '' || t.startsWith('#') || t.startsWith(';') || !t.includes('=')) {
      out.push(t);
      continue;
    }
    const eq = t.indexOf('=');
    const k = t.slice(0, eq).trim();
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(k === key ? `${key}=${value}` : `${k}=${t.slice(eq + 1).trim()}`);
  }
  if (!seen.has(key)) out.push(`${key}=${value}`);
  return out.map((l) => l + '\n').join('');
}

/** Stands in for a value kubespray templates from variables we do not resolve; equal to no literal value. */
const TEMPLATED = '{{ templated by kubespray }}';

/** Kubespray's sysctl assignments, the first task per key. */
function kubesprayKeys(keys: SysctlAssignmentByKubespray[]): Map<string, SysctlAssignmentByKubespray> {
  const wanted = new Map<string, SysctlAssignmentByKubespray>();
  for (const k of keys) if (!wanted.has(k.key)) wanted.set(k.key, k);
  return wanted;
}

/**
 * The sysctl files as they will be once the desired SysctlFile resources are
 * written and kubespray's sysctl tasks have run. ansible.posix.sysctl writes
 * to the realpath of sysctl_file (since its PR #206, 2021; the older builtin
 * module replaced the link with a file), so every entry sharing those bytes
 * changes: on Debian /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf, which
 * procps also reads last as /etc/sysctl.conf. A mask at kubespray's path is
 * counted as replaced by a regular file.
 */
export function treeAfterKubespray(
  tree: SysctlTree,
  kubesprayFile: string,
  kubesprayRealPath: string,
  keys: SysctlAssignmentByKubespray[],
  owned: SysctlFileSpec[],
): SysctlTree {
  let t = tree;
  for (const spec of owned) {
    const text = renderOwnedFile(spec);
    t = withFile(t, spec.file, text, parseSysctlText(text, spec.file).assignments);
  }
  const entry = t.files.find((f) => f.path === kubesprayFile);
  const real = entry && !entry.masked ? entry.realPath : entry?.masked ? kubesprayFile : kubesprayRealPath;
  const base = entry && !entry.masked ? entry.content : t.sysctlConf?.realPath === real ? t.sysctlConf.content : '';
  let content = base;
  for (const k of kubesprayKeys(keys).values()) content = ansibleSysctlEdit(content, k.key, k.value ?? TEMPLATED);
  const rewrite = (f: SysctlConfFile): SysctlConfFile => ({ ...f, content, assignments: parseSysctlText(content, f.path).assignments });
  const files = t.files.map((f) => (!f.masked && f.realPath === real ? rewrite(f) : f));
  let sysctlConf = t.sysctlConf;
  if (sysctlConf && sysctlConf.realPath === real) sysctlConf = rewrite(sysctlConf);
  else if (!sysctlConf && real === SYSCTL_CONF) sysctlConf = rewrite({ path: SYSCTL_CONF, masked: false, realPath: SYSCTL_CONF, content: '', assignments: [] });
  t = { files, sysctlConf };
  if (!files.some((f) => f.path === kubesprayFile && !f.masked)) {
    t = withFile(t, kubesprayFile, content, parseSysctlText(content, kubesprayFile).assignments);
  }
  return t;
}

function modelPhrase(models: SysctlModel[]): string {
  const boot = models.includes('boot');
  const system = models.includes('system');
  return boot && system ? 'at next boot and after sysctl --system' : boot ? 'at next boot' : 'after sysctl --system';
}

/**
 * Assignments that would beat (warning) or repeat (info) kubespray's value
 * for a key it sets, judged by the ordering engine under both programs that
 * read sysctl.d: systemd-sysctl at boot and procps `sysctl --system`. The
 * desired SysctlFile resources count with the content they will write.
 */
export async function orderingFindings(
  host: Host,
  kubesprayFile: string,
  keys: SysctlAssignmentByKubespray[],
  desired: DesiredState,
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const owned = desired.resources.filter((r): r is SysctlFileSpec => r.type === 'SysctlFile');
  const { tree } = await observeSysctlTree(host);
  const link = await host.readLink(kubesprayFile);
  const masked = link !== null && path.posix.normalize(link) === '/dev/null';
  const prospective = treeAfterKubespray(tree, kubesprayFile, await host.realTarget(kubesprayFile), keys, owned);
  const ours = prospective.files.find((f) => f.path === kubesprayFile)!;

  const problems = new Map<string, SysctlModel[]>();
  for (const model of SYSCTL_MODELS) {
    const p = ownedFileProblem(prospective, kubesprayFile, model);
    if (p) problems.set(p, [...(problems.get(p) ?? []), model]);
  }
  for (const [p, models] of problems) {
    findings.push({ level: 'warning', message: `${modelPhrase(models)} kubespray's sysctl_file would not be read: ${p}` });
  }

  const specByPath = new Map(owned.map((s) => [s.file, s]));
  const where = (ap: AppliedAssignment): string => {
    const at = ap.tail ? `${ap.source.path}:${ap.assignment.line}` : `${ap.source.realPath}:${ap.assignment.line}`;
    const readAs = !ap.tail && ap.source.realPath !== ap.source.path ? ` (read as ${ap.source.path})` : '';
    const spec = ap.tail ? undefined : specByPath.get(ap.source.path);
    return `${at}${readAs}${spec ? ` (desired ${resourceName(spec)})` : ''}`;
  };
  const reason = (ap: AppliedAssignment): string => (ap.tail ? 'is applied last by sysctl --system' : `sorts after ${kubesprayFile}`);
  const id = (ap: AppliedAssignment): string => `${ap.source.path}\0${ap.tail}\0${ap.assignment.line}`;

  for (const k of kubesprayKeys(keys).values()) {
    const ksValue = k.value ?? '(templated)';
    const evidenceLine = (ap: AppliedAssignment): string =>
      `${where(ap)} ${ap.assignment.value === null ? `-${ap.assignment.rawKey} cancels ${k.key}` : `sets ${k.key} = ${ap.assignment.value}`}; kubespray sets ${ksValue} at ${k.ref.file}:${k.ref.line} "${k.ref.name}"`;

    // Warnings: the line that ends up setting the key, per model, with every line that beats kubespray's.
    const beaten = new Map<string, { winner: AppliedAssignment; models: SysctlModel[]; hits: AppliedAssignment[] }>();
    for (const model of SYSCTL_MODELS) {
      const hits = beatingAssignments(prospective, kubesprayFile, k.key, k.value ?? TEMPLATED, model).map((b) => b.applied);
      const winner = hits[hits.length - 1];
      if (!winner) continue;
      const g = beaten.get(id(winner)) ?? { winner, models: [], hits: [] };
      g.models.push(model);
      for (const h of hits) if (!g.hits.some((x) => id(x) === id(h))) g.hits.push(h);
      beaten.set(id(winner), g);
    }
    for (const { winner, models, hits } of beaten.values()) {
      const w = winner.assignment;
      findings.push({
        level: 'warning',
        message:
          w.value === null
            ? `${modelPhrase(models)} ${k.key} would keep the kernel's value, not kubespray's ${ksValue}: ${where(winner)} (-${w.rawKey}) ${reason(winner)} and cancels it`
            : `${modelPhrase(models)} ${k.key} would be ${w.value}, not kubespray's ${ksValue}: ${where(winner)} ${reason(winner)}`,
        evidence: hits.map(evidenceLine),
      });
    }

    // Info: later lines from other files that set kubespray's own value.
    if (k.value === null) continue;
    const same = new Map<string, { ap: AppliedAssignment; models: SysctlModel[] }>();
    for (const model of SYSCTL_MODELS) {
      const seq = applySequence(prospective, model);
      const at = seq.findIndex((ap) => ap.source.path === kubesprayFile && !ap.tail && ap.assignment.key === k.key && !ap.assignment.isGlob);
      if (at < 0) continue;
      for (const ap of seq.slice(at + 1)) {
        const a = ap.assignment;
        if (a.key !== k.key || a.isGlob || a.excludeOnly || ap.source.realPath === ours.realPath || !sameSysctlValue(a.value, k.value)) continue;
        const g = same.get(id(ap)) ?? { ap, models: [] };
        g.models.push(model);
        same.set(id(ap), g);
      }
    }
    for (const { ap, models } of same.values()) {
      findings.push({
        level: 'info',
        message: `${modelPhrase(models)} ${k.key} stays kubespray's ${k.value}: ${where(ap)} ${reason(ap)} but sets the same value`,
        evidence: [evidenceLine(ap)],
      });
    }
  }

  if (masked) {
    findings.push({ level: 'info', message: `${kubesprayFile} is a symlink to /dev/null (a mask): counted as replaced by kubespray's file` });
  } else if (link !== null) {
    findings.push({
      level: 'info',
      message:
        `${kubesprayFile} is a symlink to ${link}: kubespray writes ${ours.realPath}, which still ranks as ${path.posix.basename(kubesprayFile)} at boot` +
        (ours.realPath === SYSCTL_CONF ? ` and which sysctl --system also applies last as ${SYSCTL_CONF}` : ''),
    });
  }
  return findings;
}
