// Kubespray's sysctl_file under the ordering engine: the files as they will be
// once the desired SysctlFile resources are written and kubespray's sysctl
// tasks have run, and the lines that would beat (or repeat) kubespray's
// values at boot or after sysctl --system. Pure: the tree is what the plan
// observed.
import path from 'node:path';
import type { Finding } from '../findings.js';
import type { DesiredFile } from '../desired-state.js';
import type { SysctlAssignmentByKubespray } from './who-fixes.js';
import { parseSysctlText, sameSysctlValue, sysctlLines } from '../sysctl/parse.js';
import {
  beatingAssignments,
  linesNaming,
  ownedFileProblem,
  SYSCTL_CONF,
  SYSCTL_DIRS,
  SYSCTL_MODELS,
  withEntry,
  withFile,
  withSysctlConf,
} from '../sysctl/order.js';
import type { AppliedAssignment, SysctlConfFile, SysctlModel, SysctlTree } from '../sysctl/order.js';
import { modelPhrase } from '../sysctl/conflicts.js';

/** Kubespray's sysctl_file on the host: its raw symlink text (null for no link) and where its bytes live. */
export interface KubesprayFile {
  path: string;
  link: string | null;
  realPath: string;
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
  owned: DesiredFile[],
): SysctlTree {
  let t = tree;
  for (const f of sysctlFiles(owned)) t = withFile(t, f.path, f.content, parseSysctlText(f.content, f.path).assignments);
  const entry = t.files.find((f) => f.path === kubesprayFile);
  const real = entry && !entry.masked ? entry.realPath : entry?.masked ? kubesprayFile : kubesprayRealPath;
  const base = entry && !entry.masked ? entry.content : t.sysctlConf?.realPath === real ? t.sysctlConf.content : '';
  let content = base;
  for (const k of kubesprayKeys(keys).values()) content = ansibleSysctlEdit(content, k.key, k.value ?? TEMPLATED);
  const rewrite = (f: SysctlConfFile): SysctlConfFile => ({ ...f, content, assignments: parseSysctlText(content, f.path).assignments });
  // Entry by entry, so that order.ts reads the result from the tree before it (withEntry, withSysctlConf).
  for (const f of t.files.filter((f) => !f.masked && f.realPath === real)) t = withEntry(t, rewrite(f));
  if (t.sysctlConf && t.sysctlConf.realPath === real) t = withSysctlConf(t, rewrite(t.sysctlConf));
  else if (!t.sysctlConf && real === SYSCTL_CONF)
    t = withSysctlConf(t, rewrite({ path: SYSCTL_CONF, masked: false, realPath: SYSCTL_CONF, content: '', assignments: [] }));
  if (!t.files.some((f) => f.path === kubesprayFile && !f.masked)) {
    t = withFile(t, kubesprayFile, content, parseSysctlText(content, kubesprayFile).assignments);
  }
  return t;
}

/**
 * Assignments that would beat (warning) or repeat (info) kubespray's value
 * for a key it sets, judged by the ordering engine under both programs that
 * read sysctl.d: systemd-sysctl at boot and procps `sysctl --system`. The
 * desired SysctlFile resources count with the content they will write.
 */
/** The desired files systemd-sysctl and procps read: those in a sysctl.d directory. */
function sysctlFiles(owned: DesiredFile[]): DesiredFile[] {
  return owned.filter((f) => (SYSCTL_DIRS as readonly string[]).includes(path.posix.dirname(f.path)));
}

export function orderingFindings(tree: SysctlTree, kubespray: KubesprayFile, keys: SysctlAssignmentByKubespray[], owned: DesiredFile[]): Finding[] {
  const findings: Finding[] = [];
  const { path: kubesprayFile, link } = kubespray;
  const masked = link !== null && path.posix.normalize(link) === '/dev/null';
  const prospective = treeAfterKubespray(tree, kubesprayFile, kubespray.realPath, keys, owned);
  const ours = prospective.files.find((f) => f.path === kubesprayFile)!;

  const problems = new Map<string, SysctlModel[]>();
  for (const model of SYSCTL_MODELS) {
    const p = ownedFileProblem(prospective, kubesprayFile, model);
    if (p) problems.set(p, [...(problems.get(p) ?? []), model]);
  }
  for (const [p, models] of problems) {
    findings.push({ level: 'warning', message: `${modelPhrase(models)} kubespray's sysctl_file would not be read: ${p}` });
  }

  const ownerByPath = new Map(sysctlFiles(owned).map((f) => [f.path, f.resource]));
  const where = (ap: AppliedAssignment): string => {
    const at = ap.tail ? `${ap.source.path}:${ap.assignment.line}` : `${ap.source.realPath}:${ap.assignment.line}`;
    const readAs = !ap.tail && ap.source.realPath !== ap.source.path ? ` (read as ${ap.source.path})` : '';
    const owner = ap.tail ? undefined : ownerByPath.get(ap.source.path);
    return `${at}${readAs}${owner !== undefined ? ` (desired ${owner})` : ''}`;
  };
  const o: OrderingContext = {
    prospective,
    kubesprayFile,
    ours,
    where,
    reason: (ap) => (ap.tail ? 'is applied last by sysctl --system' : `sorts after ${kubesprayFile}`),
  };
  for (const k of kubesprayKeys(keys).values()) {
    findings.push(...beatenFindings(o, k));
    // Info: later lines from other files that set kubespray's own value.
    if (k.value !== null) findings.push(...sameValueFindings(o, k, k.value));
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

/** What the per-key judgements share: the tree after kubespray writes, its file, and how a line is named. */
interface OrderingContext {
  prospective: SysctlTree;
  kubesprayFile: string;
  ours: SysctlTree['files'][number];
  where: (ap: AppliedAssignment) => string;
  reason: (ap: AppliedAssignment) => string;
}

const assignmentId = (ap: AppliedAssignment): string => `${ap.source.path}\0${ap.tail}\0${ap.assignment.line}`;

function evidenceLine(o: OrderingContext, k: SysctlAssignmentByKubespray, ap: AppliedAssignment): string {
  const sets = ap.assignment.value === null ? `-${ap.assignment.rawKey} cancels ${k.key}` : `sets ${k.key} = ${ap.assignment.value}`;
  return `${o.where(ap)} ${sets}; kubespray sets ${k.value ?? '(templated)'} at ${k.ref.file}:${k.ref.line} "${k.ref.name}"`;
}

/** Warnings: the line that ends up setting the key, per model, with every line that beats kubespray's. */
function beatenFindings(o: OrderingContext, k: SysctlAssignmentByKubespray): Finding[] {
  const ksValue = k.value ?? '(templated)';
  const beaten = new Map<string, { winner: AppliedAssignment; models: SysctlModel[]; hits: AppliedAssignment[] }>();
  for (const model of SYSCTL_MODELS) {
    const hits = beatingAssignments(o.prospective, o.kubesprayFile, k.key, k.value ?? TEMPLATED, model).map((b) => b.applied);
    const winner = hits[hits.length - 1];
    if (!winner) continue;
    const g = beaten.get(assignmentId(winner)) ?? { winner, models: [], hits: [] };
    g.models.push(model);
    for (const h of hits) if (!g.hits.some((x) => assignmentId(x) === assignmentId(h))) g.hits.push(h);
    beaten.set(assignmentId(winner), g);
  }
  return [...beaten.values()].map(({ winner, models, hits }) => {
    const w = winner.assignment;
    return {
      level: 'warning',
      message:
        w.value === null
          ? `${modelPhrase(models)} ${k.key} would keep the kernel's value, not kubespray's ${ksValue}: ${o.where(winner)} (-${w.rawKey}) ${o.reason(winner)} and cancels it`
          : `${modelPhrase(models)} ${k.key} would be ${w.value}, not kubespray's ${ksValue}: ${o.where(winner)} ${o.reason(winner)}`,
      evidence: hits.map((h) => evidenceLine(o, k, h)),
    };
  });
}

/** Info: lines read after kubespray's, from other files, that set its own value. */
function sameValueFindings(o: OrderingContext, k: SysctlAssignmentByKubespray, value: string): Finding[] {
  const same = new Map<string, { ap: AppliedAssignment; models: SysctlModel[] }>();
  for (const model of SYSCTL_MODELS) {
    // Only the lines naming the key (none a glob) are visited, not the whole sequence.
    const named = linesNaming(o.prospective, model, k.key);
    const at = named.findIndex((ap) => ap.source.path === o.kubesprayFile && !ap.tail);
    if (at < 0) continue;
    for (const ap of named.slice(at + 1)) {
      const a = ap.assignment;
      if (a.excludeOnly || ap.source.realPath === o.ours.realPath || !sameSysctlValue(a.value, value)) continue;
      const g = same.get(assignmentId(ap)) ?? { ap, models: [] };
      g.models.push(model);
      same.set(assignmentId(ap), g);
    }
  }
  return [...same.values()].map(({ ap, models }) => ({
    level: 'info',
    message: `${modelPhrase(models)} ${k.key} stays kubespray's ${value}: ${o.where(ap)} ${o.reason(ap)} but sets the same value`,
    evidence: [evidenceLine(o, k, ap)],
  }));
}
