// Finds the per-host documents under the directories given to `reconcile
// report` and reads them. A directory is one host when it holds
// reconcile.json (the host is the directory's name), else each subdirectory
// holding one is a host: the layout the Ansible role fetches to
// (<fetch dir>/<inventory_hostname>/reconcile.json).
import { readdirSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { readRegular } from '../regular-file.js';
import { ReconcileError, describeFsError } from '../errors.js';
import { readHostDocument, type HostSummary } from './document.js';

export const HOST_DOCUMENT = 'reconcile.json';
/** A document is a few hundred KiB at most; a bigger file is not one. */
const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024;

/** One problem, named by file and (when there is one) field. */
export interface ReportIssue {
  file: string;
  field: string;
  message: string;
}

export function formatReportIssue(i: ReportIssue): string {
  return `${i.file}: ${i.field ? `${i.field}: ` : ''}${i.message}`;
}

function isDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}
function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** The host documents under the given directories: [host, file] pairs, or the problems finding them. */
export function findHostDocuments(dirs: string[]): { found: Array<{ host: string; file: string }>; issues: ReportIssue[] } {
  const found: Array<{ host: string; file: string }> = [];
  const issues: ReportIssue[] = [];
  for (const dir of dirs) {
    if (!isDir(dir)) {
      issues.push({ file: dir, field: '', message: exists(dir) ? 'not a directory (give the directory the documents were fetched to)' : 'no such directory' });
      continue;
    }
    const own = path.join(dir, HOST_DOCUMENT);
    if (exists(own)) {
      found.push({ host: path.basename(path.resolve(dir)), file: own });
      continue;
    }
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch (e) {
      issues.push({ file: dir, field: '', message: describeFsError(e) });
      continue;
    }
    const before = found.length;
    for (const name of names) {
      const doc = path.join(dir, name, HOST_DOCUMENT);
      if (isDir(path.join(dir, name)) && exists(doc)) found.push({ host: name, file: doc });
    }
    if (found.length === before) issues.push({ file: dir, field: '', message: `no ${HOST_DOCUMENT} in it or in any directory directly under it` });
  }
  const seen = new Map<string, string>();
  for (const f of found) {
    const first = seen.get(f.host);
    if (first !== undefined) issues.push({ file: f.file, field: '', message: `host ${JSON.stringify(f.host)} again (first in ${first})` });
    else seen.set(f.host, f.file);
  }
  return { found, issues };
}

/** Reads and checks every document; any problem anywhere means no summaries (a partial fleet report would mislead). */
export function loadFleet(dirs: string[]): { ok: true; hosts: HostSummary[] } | { ok: false; issues: ReportIssue[] } {
  const { found, issues } = findHostDocuments(dirs);
  const hosts: HostSummary[] = [];
  for (const { host, file } of found) {
    let text: string;
    try {
      // No link followed, no fifo waited on, a size cap: the fetched tree came from the hosts.
      text = new TextDecoder('utf-8', { fatal: true }).decode(readRegular(file, file, { limit: MAX_DOCUMENT_BYTES }).bytes);
    } catch (e) {
      const message = e instanceof TypeError ? 'not UTF-8 text' : e instanceof ReconcileError ? e.message : describeFsError(e);
      issues.push({ file, field: '', message });
      continue;
    }
    const r = readHostDocument(text, host, file);
    if (r.ok) hosts.push(r.summary);
    else issues.push({ file, ...r.issue });
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, hosts };
}
