// What the plan and the reports directory learn about kubespray: facts.json,
// who-fixes.json, and findings (memory preflight, who must act, sysctl lines
// that would undo kubespray's values at boot or after sysctl --system). Never
// throws for a missing checkout or a failing fact source: those become findings.
import path from 'node:path';
import type { TargetFs, TargetHost } from '../host.js';
import type { Finding } from '../findings.js';
import type { DesiredFile, DesiredState } from '../desired-state.js';
import { gatherNativeFacts, systemDistroVersion, type ObservedFacts } from '../facts/native.js';
import { ansibleCoreFor, bundledDistroVersion } from '../facts/ansible-core.js';
import { BUNDLED_DISTRO_VERSION } from '../facts/distribution.js';
import { gatherAnsibleFacts } from '../facts/ansible.js';
import type { Facts } from '../facts/linux.js';
import type { SysctlTree } from '../sysctl/order.js';
import { orderingFindings } from './sysctl-order.js';
import { observeSysctlTree } from '../sysctl/observe.js';
import { LineCounter } from 'yaml';
import { parseAnsibleYaml } from '../ansible/yaml11.js';
import { HostError } from '../errors.js';
import { KubesprayCheckout, PREINSTALL_DEFAULTS, topLevelVars } from './checkout.js';
import { groupNames, parseInventory } from './inventory.js';
import type { MemoryAudit } from './preflight.js';
import type { FactMap, HostContext, VarContext, VarsReader } from './vars.js';
import type { WhoFixes, WhoFixesJson } from './who-fixes.js';

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
  /** The facts as gathered, with their extra (os_family...): src/acceptance judges them rather than reading the host again. */
  hostFacts?: Facts;
  /** The readable checkout as this node sees it, for src/acceptance's who-fixes. */
  node?: KubesprayNode;
}

/** A readable kubespray checkout and this node in it. */
export interface KubesprayNode {
  checkout: KubesprayCheckout;
  /** group_names of the node; null when the inventory could not place it (its own finding says why). */
  groups: string[] | null;
  /** kubespray's own memory assert stops on this host (its error finding is in the report). */
  memoryStops: boolean;
  /** The variables a task of `role` sees on this node (role defaults, inventory, facts, role vars). */
  vars(role: string): Promise<VarContext>;
  /** What the audits evaluate this node's roles with (another role's walk, such as reset's, uses the same). */
  audit: AuditOptions;
}

/** What the plan's providers observed, so the report reads none of it again. */
export interface PlanObservations {
  /** The sysctl.d tree (the SysctlFile provider's observation). */
  sysctlTree?: SysctlTree;
  /** Host readings the native facts use (SwapOff's MemTotal, ModulesLoad's kernel release). */
  facts?: ObservedFacts;
  /** The files the desired resources write whole (reconcile/host-reports.ts desiredFiles): the ordering audit counts them as written. */
  desiredFiles?: DesiredFile[];
}

/**
 * `seen`: what the plan observed, so the engine's run never reads it twice;
 * a caller without a plan lets the report read each once, when it is needed.
 */
export async function kubesprayReport(host: TargetHost, desired: DesiredState, seen: PlanObservations = {}): Promise<KubesprayReport> {
  const findings: Finding[] = [];
  const report: KubesprayReport = { findings };
  const ks = desired.kubespray;
  // 1. Facts
  const facts = await gatherFacts(host, desired, seen, report);
  if (facts) report.hostFacts = facts;
  if (!ks) {
    findings.push({ level: 'info', message: 'no kubespray section in desired-state: minimal_master_memory_mb and who-fixes.json left out' });
    return report;
  }
  // 2. The checkout, and this host as kubespray's inventory describes it
  const ck = new KubesprayCheckout(host, ks.dir);
  if (!(await checkoutReadable(ck, desired.source, findings))) return report;
  // The audit (Jinja through nunjucks, the role walker) loads only when there is a checkout to audit.
  const hostCtx = await inventoryContext(host, ks, findings);
  if (hostCtx) await legacyGroupFindings(ck, hostCtx, ks.node, findings);
  const opts: AuditOptions = { facts: facts ? factMap(facts) : undefined, host: hostCtx ?? undefined, reader: targetVarsReader(host) };
  // One variable context per role, built once: src/acceptance asks the same roles for several variables per check.
  const contexts = new Map<string, Promise<VarContext>>();
  const varsOf = (role: string): Promise<VarContext> => {
    let ctx = contexts.get(role);
    if (!ctx) contexts.set(role, (ctx = import('./vars.js').then((m) => m.buildVarContext({ ck, role, ...opts }))));
    return ctx;
  };
  report.node = {
    checkout: ck,
    groups: hostCtx ? groupNames(hostCtx.inventory, hostCtx.host) : null,
    memoryStops: false,
    vars: varsOf,
    audit: opts,
  };
  // 3. Memory, the way the preinstall role asserts it
  await memorySection(ck, opts, { node: ks.node, facts, hostCtx }, report);
  // 4. Who fixes what
  const audit = await whoFixesSection(ck, ks.dir, opts, report);
  // 5. sysctl lines that would beat kubespray's file (src/sysctl/order.ts decides)
  if (audit?.sysctl_file) {
    const sysctlTree = async (): Promise<SysctlTree> => seen.sysctlTree ?? (await observeSysctlTree(host)).tree;
    await orderingSection(host, seen.desiredFiles ?? [], audit, sysctlTree, findings);
  }
  return report;
}

type AuditOptions = { facts: FactMap | undefined; host: HostContext | undefined; reader: VarsReader };

/** facts.json as the desired state's source gathers it; an error finding when it cannot. */
async function gatherFacts(host: TargetHost, desired: DesiredState, seen: PlanObservations, report: KubesprayReport): Promise<Facts | undefined> {
  const ks = desired.kubespray;
  if (!host.live) {
    report.findings.push({ level: 'info', message: `facts not gathered: offline (--root ${host.root}) there is no running kernel to read` });
    return undefined;
  }
  if (desired.facts.source === 'ansible' && !ks) {
    report.findings.push({ level: 'error', message: 'facts.source is ansible but desired-state has no kubespray section (dir, inventory, node)' });
    return undefined;
  }
  try {
    if (desired.facts.source === 'ansible') {
      const facts = await gatherAnsibleFacts(host, ks!);
      report.facts = { ...sixFields(facts), evidence: ['facts.source ansible: ansible -m setup'] };
      return facts;
    }
    const core = await ansibleCoreFor(host, ks?.dir);
    const system = await systemDistroVersion(host);
    const bundled = core.version ? bundledDistroVersion(core.version) : BUNDLED_DISTRO_VERSION;
    const facts = await gatherNativeFacts(host, { bundledDistroVersion: bundled }, seen.facts);
    const distro =
      system !== null
        ? `distro ${system} (the target's system python3-distro, which ansible imports first)`
        : `distro ${bundled} (bundled in ansible-core${core.version ? ` ${core.version}` : ''}; the target has no python3-distro)`;
    report.facts = {
      ...sixFields(facts),
      evidence: [
        core.version ? `ansible-core ${core.version} (from ${core.from})` : `ansible-core unknown (${core.from}): modelled as 2.14`,
        `distribution_version by ${distro}`,
      ],
    };
    return facts;
  } catch (e) {
    report.findings.push({ level: 'error', message: `facts (${desired.facts.source}): ${(e as Error).message}` });
    return undefined;
  }
}

/**
 * Whether the checkout can be audited at all. No directory there is the usual first run (the repository's
 * desired state names the lab's paths): one info line naming the three keys to edit. A directory that is not a
 * kubespray checkout, or one that cannot be read, is a warning naming what is missing.
 */
async function checkoutReadable(ck: KubesprayCheckout, source: string, findings: Finding[]): Promise<boolean> {
  const leftOut = 'minimal_master_memory_mb, who-fixes.json and who fixes each kubeadm check left out';
  try {
    if (!(await ck.exists(''))) {
      findings.push({
        level: 'info',
        message:
          `no kubespray checkout at ${ck.dir}: ${leftOut}; to judge them, set kubespray.dir, kubespray.inventory and kubespray.node ` +
          `in ${source} to your kubespray checkout, its inventory file and this host's name in it`,
      });
      return false;
    }
    if (!(await ck.exists(PREINSTALL_DEFAULTS))) {
      findings.push({
        level: 'warning',
        message: `kubespray checkout ${ck.dir} (kubespray.dir in ${source}) is incomplete (no ${PREINSTALL_DEFAULTS}): ${leftOut}`,
      });
      return false;
    }
    await ck.yaml(PREINSTALL_DEFAULTS);
    return true;
  } catch (e) {
    findings.push({
      level: 'warning',
      message: `kubespray checkout ${ck.dir} (kubespray.dir in ${source}) cannot be read (${(e as Error).message}): ${leftOut}`,
    });
    return false;
  }
}

/** Old releases move kube-master hosts into kube_control_plane (and the like) before any role runs. */
async function legacyGroupFindings(ck: KubesprayCheckout, hostCtx: HostContext, node: string, findings: Finding[]): Promise<void> {
  const { LEGACY_GROUPS_FILES, applyLegacyGroups } = await import('./legacy-groups.js');
  const legacy = await applyLegacyGroups(ck, hostCtx.inventory).catch((e: Error) => ({
    file: LEGACY_GROUPS_FILES.join(' or '),
    added: [],
    unknown: [{ file: LEGACY_GROUPS_FILES[0]!, line: 0, reason: e.message }],
  }));
  for (const a of legacy.added.filter((x) => x.host === node)) {
    findings.push({ level: 'info', message: `${legacy.file}:${a.line} group_by adds ${node} to ${a.group} (it is in ${a.from}) before kubespray's roles run` });
  }
  for (const u of legacy.unknown) {
    findings.push({
      level: 'warning',
      unknown: true,
      message: `${u.file}:${u.line}: the groups kubespray gives ${node} at run time cannot be told: ${u.reason}`,
      evidence: [`${u.file}:${u.line}`],
    });
  }
}

/** minimal_master_memory_mb for facts.json, and the preflight's own findings (its asserts). */
async function memorySection(
  ck: KubesprayCheckout,
  opts: AuditOptions,
  on: { node: string; facts: Facts | undefined; hostCtx: HostContext | null },
  report: KubesprayReport,
): Promise<void> {
  const { auditMemory } = await import('./preflight.js');
  let memory: MemoryAudit;
  try {
    memory = await auditMemory(ck, opts);
  } catch (e) {
    report.findings.push({ level: 'warning', unknown: true, message: `kubespray's memory asserts cannot be read: ${(e as Error).message}` });
    return;
  }
  if (memory.minimalMasterMemoryMb) {
    if (report.facts) report.facts.minimal_master_memory_mb = memory.minimalMasterMemoryMb.value;
  } else {
    report.findings.push({ level: 'warning', unknown: true, message: `minimal_master_memory_mb cannot be evaluated for this host: ${memory.minimalReason}` });
  }
  if (on.facts && on.hostCtx) report.findings.push(...preflightFindings(memory, on.node, on.facts));
  if (report.node && on.facts && on.hostCtx) report.node.memoryStops = memory.verdicts.some((v) => v.status.runs === 'yes' && v.passes === false);
}

/** who-fixes.json and one finding per problem, with the audit's warnings and notes. */
async function whoFixesSection(ck: KubesprayCheckout, dir: string, opts: AuditOptions, report: KubesprayReport): Promise<WhoFixes | null> {
  const { PROBLEMS, auditWhoFixes, formatEvidence, whoFixesJson } = await import('./who-fixes.js');
  const findings = report.findings;
  let audit: WhoFixes;
  try {
    audit = await auditWhoFixes(ck, opts);
  } catch (e) {
    findings.push({ level: 'warning', unknown: true, message: `kubespray roles in ${dir} cannot be read (${(e as Error).message}): who-fixes.json left out` });
    return null;
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
  } else if (audit.sysctl_file_missing) {
    findings.push({ level: 'warning', unknown: true, message: audit.sysctl_file_missing });
  }
  for (const n of audit.notes) findings.push({ level: 'info', message: n });
  return audit;
}

/** sysctl lines that would beat kubespray's file at boot or after sysctl --system. */
async function orderingSection(
  host: TargetHost,
  owned: DesiredFile[],
  audit: WhoFixes,
  sysctlTree: () => Promise<SysctlTree>,
  findings: Finding[],
): Promise<void> {
  try {
    const file = audit.sysctl_file!.path;
    const kubespray = { path: file, link: await host.readLink(file), realPath: await host.realTarget(file) };
    findings.push(...orderingFindings(await sysctlTree(), kubespray, audit.sysctl_keys, owned));
  } catch (e) {
    findings.push({ level: 'warning', message: `sysctl ordering against kubespray not checked: ${(e as Error).message}` });
  }
}

/** facts.json's fields: the extra facts feed only the audit. */
function sixFields(f: Facts): Facts {
  const { extra, ...six } = f;
  void extra;
  return six;
}

/**
 * Facts under the names Ansible gives them (without the ansible_ prefix).
 * distribution_major_version is what the source gave (setup, or natively where
 * certain: src/facts/distribution.ts), never re-derived here.
 */
export function factMap(f: Facts): FactMap {
  return {
    ...(f.extra ?? {}),
    memtotal_mb: f.memtotal_mb,
    processor_vcpus: f.processor_vcpus,
    distribution: f.distribution,
    distribution_version: f.distribution_version,
    kernel: f.kernel,
    ...(f.default_ipv4 !== null ? { default_ipv4: { address: f.default_ipv4 } } : {}),
  };
}

/** YAML vars files (group_vars, host_vars) on the target, with line numbers. */
export function targetVarsReader(host: TargetFs): VarsReader {
  return {
    async file(abs) {
      const text = await host.readFile(abs).catch(() => null);
      if (text === null) return [];
      const lines = new LineCounter();
      const doc = parseAnsibleYaml(text, lines);
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
async function inventoryContext(host: TargetFs, ks: NonNullable<DesiredState['kubespray']>, findings: Finding[]): Promise<HostContext | null> {
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

/** The preflight's findings: a failing assert is an error that stops kubespray (`stops`), one not judged is unknown. */
export function preflightFindings(memory: MemoryAudit, node: string, facts: Facts): Finding[] {
  const findings: Finding[] = [];
  memoryFindings(memory, node, facts, findings);
  assertFindings(memory, findings);
  return findings;
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
        stops: true,
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
 * Every other assert of the preflight: a failing one stops kubespray on this
 * host (an error the plan's exit code carries), one that cannot be evaluated
 * is unknown, and the passing ones are one line.
 */
function assertFindings(memory: MemoryAudit, findings: Finding[]): void {
  const passed: string[] = [];
  for (const a of memory.asserts) {
    const where = `${a.ref.file}:${a.ref.line} "${a.ref.name}"`;
    // The memory comparison's own verdict already says it in memory terms.
    const memoryItems = new Set(memory.verdicts.filter((v) => v.assert.ref.file === a.ref.file && v.assert.ref.line === a.ref.line).map((v) => v.assert.that));
    if (a.result === 'pass') passed.push(where);
    else if (a.result === 'fail' && !memoryItems.has(a.failed!.that)) {
      findings.push({
        level: 'error',
        stops: true,
        message: `kubespray's preflight will stop at ${where}: ${a.failed!.that} is false: ${a.failed!.msg}`,
        evidence: [
          `${a.ref.file}:${a.ref.line} assert that: ${a.that.join(' ; ')}${a.when.length > 0 ? ` (when: ${a.when.join(' and ')})` : ''}`,
          ...a.failed!.values,
        ],
      });
    } else if (a.result === 'unknown' && !a.memory) {
      findings.push({
        level: 'warning',
        unknown: true,
        message: `preflight assert ${where} cannot be judged: ${a.reason}`,
        evidence: [`${a.ref.file}:${a.ref.line} assert that: ${a.that.join(' ; ')}`],
      });
    }
  }
  if (passed.length > 0)
    findings.push({
      level: 'info',
      message: `${passed.length} preflight assert${passed.length === 1 ? '' : 's'} of kubespray pass on this host`,
      evidence: passed,
    });
}
