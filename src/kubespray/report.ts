// What the plan and the reports directory learn about kubespray: facts.json,
// who-fixes.json, and findings (memory preflight, who must act, sysctl files
// that would undo kubespray's values at boot). Never throws for a missing
// checkout or a failing fact source: those become findings.
import path from 'node:path';
import type { Host } from '../host.js';
import type { DesiredState, SysctlFileSpec } from '../desired-state.js';
import { gatherNativeFacts } from '../facts/native.js';
import { gatherAnsibleFacts } from '../facts/ansible.js';
import type { Facts } from '../facts/linux.js';
import { parseSysctlText, sameSysctlValue } from '../sysctl/parse.js';
import type { SysctlAssignment } from '../sysctl/parse.js';
import { KubesprayCheckout } from './checkout.js';
import { groupNames, parseIniInventory } from './inventory.js';
import { PREINSTALL_DEFAULTS, checkMemory, memoryAsserts, minimalMasterMemoryMb } from './preflight.js';
import { PROBLEMS, auditWhoFixes, formatEvidence, whoFixesJson } from './who-fixes.js';
import type { SysctlAssignmentByKubespray, WhoFixes, WhoFixesJson } from './who-fixes.js';

export interface FactsJson extends Facts {
  /** From roles/kubernetes/preinstall/defaults/main.yml; absent when the checkout cannot be read. */
  minimal_master_memory_mb?: number;
}

export interface Finding {
  level: 'info' | 'warning' | 'error';
  message: string;
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
      facts = desired.facts.source === 'ansible' ? await gatherAnsibleFacts(host, ks!) : await gatherNativeFacts(host);
      report.facts = { ...facts };
    } catch (e) {
      findings.push({ level: 'error', message: `facts (${desired.facts.source}): ${(e as Error).message}` });
    }
  }
  if (!ks) {
    findings.push({ level: 'info', message: 'no kubespray section in desired-state: minimal_master_memory_mb and who-fixes.json left out' });
    return report;
  }

  // 2. The checkout
  const ck = new KubesprayCheckout(host, ks.dir);
  let minimal: Awaited<ReturnType<typeof minimalMasterMemoryMb>>;
  try {
    if (!(await ck.exists(PREINSTALL_DEFAULTS))) {
      findings.push({
        level: 'warning',
        message: `kubespray checkout ${ks.dir} is missing or incomplete (no ${PREINSTALL_DEFAULTS}): minimal_master_memory_mb and who-fixes.json left out`,
      });
      return report;
    }
    minimal = await minimalMasterMemoryMb(ck);
  } catch (e) {
    findings.push({
      level: 'warning',
      message: `kubespray checkout ${ks.dir} cannot be read (${(e as Error).message}): minimal_master_memory_mb and who-fixes.json left out`,
    });
    return report;
  }
  if (minimal) {
    if (report.facts) report.facts.minimal_master_memory_mb = minimal.value;
  } else {
    findings.push({ level: 'warning', message: `${PREINSTALL_DEFAULTS} defines no numeric minimal_master_memory_mb` });
  }

  // 3. Memory, the way 0040-verify-settings.yml asserts it
  if (facts) await memoryFindings(host, ck, ks, facts, findings);

  // 4. Who fixes what
  let audit: WhoFixes;
  try {
    audit = await auditWhoFixes(ck);
  } catch (e) {
    findings.push({ level: 'warning', message: `kubespray roles in ${ks.dir} cannot be read (${(e as Error).message}): who-fixes.json left out` });
    return report;
  }
  report.audit = audit;
  report.whoFixes = whoFixesJson(audit);
  for (const p of PROBLEMS) {
    const v = audit[p];
    findings.push({
      level: v.who === 'kubespray' ? 'info' : 'warning',
      message: v.who === 'kubespray' ? `${p}: kubespray fixes it` : `${p}: the operator must fix it: ${v.reason}`,
      evidence: v.evidence.map(formatEvidence),
    });
  }
  if (audit.sysctl_file) {
    findings.push({
      level: 'info',
      message: `sysctl_file: kubespray writes its sysctls to ${audit.sysctl_file.path}${audit.sysctl_file.variable ? ` (${audit.sysctl_file.variable})` : ''}`,
      evidence: audit.sysctl_file.definedAt.map((d) => `${d.file}:${d.line} ${d.variable}`),
    });
  } else {
    findings.push({ level: 'warning', message: 'sysctl_file: no sysctl task with a resolvable sysctl_file was found' });
  }
  for (const n of audit.notes) findings.push({ level: 'info', message: n });

  // 5. sysctl.d files that sort after kubespray's file
  if (audit.sysctl_file) {
    try {
      findings.push(...(await orderingFindings(host, audit.sysctl_file.path, audit.sysctl_keys, desired)));
    } catch (e) {
      findings.push({ level: 'warning', message: `sysctl ordering against kubespray not checked: ${(e as Error).message}` });
    }
  }
  return report;
}

async function memoryFindings(
  host: Host,
  ck: KubesprayCheckout,
  ks: NonNullable<DesiredState['kubespray']>,
  facts: Facts,
  findings: Finding[],
): Promise<void> {
  let groups: string[];
  try {
    const text = await host.readFile(ks.inventory);
    if (text === null) {
      findings.push({ level: 'warning', message: `inventory ${ks.inventory} does not exist: kubespray's memory preflight not checked` });
      return;
    }
    const inv = parseIniInventory(text, ks.inventory);
    if (!inv.hosts.has(ks.node)) {
      findings.push({ level: 'warning', message: `${ks.node} is not a host in ${ks.inventory}: kubespray's memory preflight not checked` });
      return;
    }
    groups = groupNames(inv, ks.node);
  } catch (e) {
    findings.push({ level: 'warning', message: `inventory ${ks.inventory}: ${(e as Error).message}` });
    return;
  }
  let asserts;
  try {
    asserts = await memoryAsserts(ck);
  } catch (e) {
    findings.push({ level: 'warning', message: `kubespray's memory asserts cannot be read: ${(e as Error).message}` });
    return;
  }
  if (asserts.length === 0) {
    findings.push({ level: 'info', message: 'no "ansible_memtotal_mb >= ..." assert found in roles/kubernetes/preinstall' });
    return;
  }
  for (const v of checkMemory(asserts, groups, facts.memtotal_mb)) {
    const a = v.assert;
    const where = [`${a.ref.file}:${a.ref.line} "${a.ref.name}" asserts ansible_memtotal_mb >= ${a.variable} (when: ${a.when.join(' and ')})`];
    if (!v.applies) continue;
    if (v.passes === null) {
      findings.push({ level: 'warning', message: `${a.variable} has no numeric default; memory preflight for ${a.group} not checked`, evidence: where });
    } else if (!v.passes) {
      findings.push({
        level: 'error',
        message: `kubespray will stop at "${a.ref.name}": ${ks.node} is in ${a.group} and ansible_memtotal_mb ${facts.memtotal_mb} < ${a.variable} ${a.minimum}; add memory or move the node out of ${a.group} before running kubespray`,
        evidence: where,
      });
    } else {
      findings.push({
        level: 'info',
        message: `memory preflight "${a.ref.name}" passes: ansible_memtotal_mb ${facts.memtotal_mb} >= ${a.variable} ${a.minimum} (${ks.node} in ${a.group})`,
        evidence: where,
      });
    }
  }
}

const SYSCTL_DIRS = ['/etc/sysctl.d', '/run/sysctl.d', '/usr/local/lib/sysctl.d', '/usr/lib/sysctl.d', '/lib/sysctl.d'];

function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * Files whose name sorts after kubespray's sysctl file and that set a key
 * kubespray sets: at boot systemd-sysctl applies them later, so their value
 * wins. This is a by-name comparison (the first directory wins a basename,
 * then names sort bytewise); the desired SysctlFile resources are counted
 * with the settings they will write.
 */
export async function orderingFindings(
  host: Host,
  kubesprayFile: string,
  keys: SysctlAssignmentByKubespray[],
  desired: DesiredState,
): Promise<Finding[]> {
  const findings: Finding[] = [];
  const ksName = path.posix.basename(kubesprayFile);
  const byName = new Map<string, string>();
  for (const dir of SYSCTL_DIRS) {
    for (const e of (await host.readDir(dir)) ?? []) {
      if (e.name.endsWith('.conf') && !e.name.startsWith('.') && !byName.has(e.name)) byName.set(e.name, `${dir}/${e.name}`);
    }
  }
  const owned = desired.resources.filter((r): r is SysctlFileSpec => r.type === 'SysctlFile');
  for (const spec of owned) {
    const name = path.posix.basename(spec.file);
    if (!byName.has(name) || byName.get(name) === spec.file) byName.set(name, spec.file);
  }
  const wanted = new Map<string, SysctlAssignmentByKubespray>();
  for (const k of keys) if (!wanted.has(k.key)) wanted.set(k.key, k);

  for (const [name, file] of [...byName.entries()].sort((a, b) => byteCompare(a[0], b[0]))) {
    if (byteCompare(name, ksName) <= 0) continue;
    const spec = owned.find((s) => s.file === file);
    let assignments: SysctlAssignment[];
    if (spec) {
      const text = Object.entries(spec.settings).map(([k, v]) => `${k} = ${v}`).join('\n');
      assignments = parseSysctlText(text, file).assignments;
    } else {
      assignments = parseSysctlText((await host.readFile(file)) ?? '', file).assignments;
    }
    const conflicts: string[] = [];
    const same: string[] = [];
    for (const a of assignments) {
      const k = wanted.get(a.key);
      if (!k || a.value === null || a.isGlob) continue;
      const line = `${spec ? `${file} (desired ${spec.name ?? spec.type})` : `${a.file}:${a.line}`} sets ${a.key} = ${a.value}; kubespray sets ${k.value ?? '(templated)'} at ${k.ref.file}:${k.ref.line} "${k.ref.name}"`;
      if (k.value !== null && sameSysctlValue(a.value, k.value)) same.push(line);
      else conflicts.push(line);
    }
    if (conflicts.length > 0) {
      findings.push({
        level: 'warning',
        message: `${file} sorts after kubespray's ${ksName} and sets a key kubespray sets to another value: at boot it wins and kubespray's value is lost`,
        evidence: conflicts,
      });
    }
    if (same.length > 0) {
      findings.push({
        level: 'info',
        message: `${file} sorts after kubespray's ${ksName} but sets the same values kubespray sets`,
        evidence: same,
      });
    }
  }
  const link = await host.readLink(kubesprayFile);
  if (link !== null) {
    findings.push({
      level: 'info',
      message: `${kubesprayFile} is a symlink to ${link}: kubespray writes the link's target, which still ranks as ${ksName} at boot`,
    });
  }
  return findings;
}
