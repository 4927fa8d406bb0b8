// Finds the per-host documents under the directories given to `reconcile
// report` and reads them. A directory is a fetch directory when a directory
// directly under it holds reconcile.json (the layout the Ansible role fetches
// to: <fetch dir>/<inventory_hostname>/reconcile.json); then every entry in it
// is a host, and one it cannot read is listed as such (a link, a file, no
// reconcile.json, unreadable), never left out. Otherwise a directory holding
// reconcile.json is one host (the host is the directory's name). Nothing
// deeper is read: a reconcile.json at the top of a fetch directory, or one
// level too deep, is refused by name.
import { readdirSync, lstatSync, type Stats } from 'node:fs';
import path from 'node:path';
import { readRegular } from '../regular-file.js';
import { ReconcileError, describeFsError } from '../errors.js';
import { readHostDocument, type HostSummary } from './document.js';
import { REPORT_DOCUMENTS, RUN_DOCUMENTS } from '../reconcile/reports.js';
import { RUN_ID } from '../door/journal-check.js';

export const HOST_DOCUMENT = 'reconcile.json';
/** A document is a few hundred KiB at most; a bigger file is not one. */
const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024;

/** A problem with a directory given on the command line (no host to mark): named by file. */
export interface ReportIssue {
  file: string;
  field: string;
  message: string;
}

export function formatReportIssue(i: ReportIssue): string {
  return `${i.file}: ${i.field ? `${i.field}: ` : ''}${i.message}`;
}

/** The file system as the report reads it; tests replace a part (an EACCES as root). */
export interface FleetFs {
  readdir(dir: string): string[];
  lstat(p: string): Pick<Stats, 'isDirectory' | 'isFile' | 'isSymbolicLink' | 'isFIFO' | 'isSocket'>;
  /** A document's bytes: no link followed, no fifo waited on, a size cap. */
  readDocument(file: string): Uint8Array;
}

const NODE_FS: FleetFs = {
  readdir: (dir) => readdirSync(dir),
  lstat: (p) => lstatSync(p),
  // The fetched tree came from the hosts.
  readDocument: (file) => readRegular(file, file, { limit: MAX_DOCUMENT_BYTES }).bytes,
};

export interface LoadOptions {
  fs?: Partial<FleetFs>;
  /** Entries that are not hosts (the report's own outputs when -o is a fetch directory or inside one). */
  ignore?: (absolutePath: string, isDirectory: boolean) => boolean;
}

/** One input: a host's document to read, or what is wrong with the entry (a host the report lists as unusable). */
export interface FleetEntry {
  host: string;
  file: string;
  problem: string | null;
}

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function kindOf(s: ReturnType<FleetFs['lstat']>): string {
  return s.isSymbolicLink()
    ? 'a symbolic link'
    : s.isDirectory()
      ? 'a directory'
      : s.isFile()
        ? 'a regular file'
        : s.isFIFO()
          ? 'a fifo'
          : s.isSocket()
            ? 'a socket'
            : 'a device';
}

/** The entries under the given directories, or the problems with the directories themselves. */
export function findHostDocuments(dirs: string[], opts: LoadOptions = {}): { entries: FleetEntry[]; issues: ReportIssue[] } {
  const fs = { ...NODE_FS, ...opts.fs };
  const ignore = opts.ignore ?? (() => false);
  const lstat = (p: string) => {
    try {
      return fs.lstat(p);
    } catch (e) {
      return e as NodeJS.ErrnoException;
    }
  };
  const entries: FleetEntry[] = [];
  const issues: ReportIssue[] = [];
  for (const dir of dirs) {
    const st = lstat(dir);
    if (st instanceof Error || !st.isDirectory()) {
      const what =
        st instanceof Error
          ? st.code === 'ENOENT'
            ? 'no such directory'
            : describeFsError(st)
          : `${kindOf(st)}, not a directory (give the directory the documents were fetched to)`;
      issues.push({ file: dir, field: '', message: what });
      continue;
    }
    let names: string[];
    try {
      names = fs.readdir(dir).sort(byteOrder);
    } catch (e) {
      issues.push({ file: dir, field: '', message: describeFsError(e) });
      continue;
    }
    const own = path.join(dir, HOST_DOCUMENT);
    const children: FleetEntry[] = [];
    let hosts = 0;
    for (const name of names) {
      const at = path.join(dir, name);
      if (name === HOST_DOCUMENT) continue;
      const s = lstat(at);
      if (ignore(path.resolve(at), !(s instanceof Error) && s.isDirectory())) continue;
      const doc = path.join(at, HOST_DOCUMENT);
      let problem: string | null = null;
      if (s instanceof Error) problem = describeFsError(s);
      else if (s.isSymbolicLink()) problem = 'a symbolic link where a host directory should be (not followed)';
      else if (!s.isDirectory()) problem = `${kindOf(s)} where a host directory should be`;
      else {
        const d = lstat(doc);
        if (d instanceof Error && d.code === 'ENOENT') problem = `no ${HOST_DOCUMENT} in it${deeper(fs, at)}`;
        else if (d instanceof Error) problem = describeFsError(d);
        else hosts++;
      }
      children.push({ host: name, file: problem === null ? doc : at, problem });
    }
    const hasOwn = names.includes(HOST_DOCUMENT);
    if (hosts > 0) {
      // A fetch directory. Its own reconcile.json belongs to no host: refused, so it can never stand for the fleet.
      if (hasOwn)
        entries.push({
          host: path.basename(path.resolve(dir)),
          file: own,
          problem: `a ${HOST_DOCUMENT} beside host directories (a stray document: a host's is DIR/HOST/${HOST_DOCUMENT}); not read`,
        });
      entries.push(...children);
    } else if (hasOwn) entries.push({ host: path.basename(path.resolve(dir)), file: own, problem: null });
    else
      issues.push({
        file: dir,
        field: '',
        message: `no ${HOST_DOCUMENT} in it or in any directory directly under it${children.length > 0 ? ` (${children.length} entr${children.length === 1 ? 'y' : 'ies'}: ${children.map((c) => c.host).join(', ')})` : ''}`,
      });
  }
  const seen = new Map<string, string>();
  for (const e of entries) {
    const first = seen.get(e.host);
    if (first !== undefined) {
      if (e.problem === null) e.problem = `host ${JSON.stringify(e.host)} again (first in ${first}); not read`;
    } else seen.set(e.host, e.file);
  }
  return { entries, issues };
}

/** A host directory without its document: the reconcile.json files one level deeper, named (never read). */
function deeper(fs: FleetFs, dir: string): string {
  let names: string[];
  try {
    names = fs.readdir(dir).sort(byteOrder);
  } catch (e) {
    return ` (${describeFsError(e)})`;
  }
  const nested = names
    .map((n) => path.join(n, HOST_DOCUMENT))
    .filter((rel) => {
      try {
        fs.lstat(path.join(dir, rel));
        return true;
      } catch {
        return false;
      }
    });
  return nested.length > 0 ? `; not read, one level too deep: ${nested.join(', ')}` : '';
}

/** A host the report lists as unusable: its entry and why. */
export function unusableHost(host: string, file: string, reason: string): HostSummary {
  const causes = [{ kind: 'unusable' as const, checks: [], text: reason, fix: null }];
  return {
    host,
    file,
    mode: 'none',
    verdict: 'unusable',
    changes: 0,
    operator: [],
    unknowns: [],
    errors: [reason],
    accepted: [],
    causes,
    change_details: [],
    documents: [],
  };
}

/** At most this many runs' documents are linked per host (the role fetches 20 by default). */
const MAX_LINKED_RUNS = 50;

/**
 * The fetched reports beside a host's reconcile.json that the page links to:
 * only the names the tool writes (reconcile/reports.ts) and run ids of its
 * grammar, each a regular file (lstat: a link is not followed, nor linked).
 * The host's listing says only which exist; no path is built from its text
 * beyond a run id that passed RUN_ID.
 */
export function hostDocuments(fs: Pick<FleetFs, 'readdir' | 'lstat'>, file: string): string[] {
  const reports = path.join(path.dirname(file), 'reports');
  const isFile = (p: string) => {
    try {
      return fs.lstat(p).isFile();
    } catch {
      return false;
    }
  };
  const out = [file, ...REPORT_DOCUMENTS.map((n) => path.join(reports, n)).filter(isFile)];
  let runs: string[];
  try {
    runs = fs.lstat(path.join(reports, 'runs')).isDirectory() ? fs.readdir(path.join(reports, 'runs')) : [];
  } catch {
    runs = [];
  }
  // Newest first: run ids start with their UTC time.
  const ids = runs
    .filter((id) => RUN_ID.test(id))
    .sort(byteOrder)
    .reverse()
    .slice(0, MAX_LINKED_RUNS);
  for (const id of ids) out.push(...RUN_DOCUMENTS.map((n) => path.join(reports, 'runs', id, n)).filter(isFile));
  return out;
}

/**
 * Reads and checks every document. A host whose entry or document is unusable
 * is a host with the verdict `unusable` and the reason; only a directory given
 * on the command line that is no fetch directory stops the report.
 */
export function loadFleet(dirs: string[], opts: LoadOptions = {}): { ok: true; hosts: HostSummary[] } | { ok: false; issues: ReportIssue[] } {
  const fs = { ...NODE_FS, ...opts.fs };
  const { entries, issues } = findHostDocuments(dirs, opts);
  if (issues.length > 0) return { ok: false, issues };
  const hosts: HostSummary[] = [];
  for (const { host, file, problem } of entries) {
    if (problem !== null) {
      hosts.push(unusableHost(host, file, problem));
      continue;
    }
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(fs.readDocument(file));
    } catch (e) {
      hosts.push(unusableHost(host, file, e instanceof TypeError ? 'not UTF-8 text' : e instanceof ReconcileError ? e.message : describeFsError(e)));
      continue;
    }
    const r = readHostDocument(text, host, file);
    hosts.push(
      r.ok
        ? { ...r.summary, documents: hostDocuments(fs, file) }
        : unusableHost(host, file, r.issue.field ? `${r.issue.field}: ${r.issue.message}` : r.issue.message),
    );
  }
  return { ok: true, hosts };
}
