// A journal read back is untrusted input: an earlier run, a previous
// pipeline or a hostile image may have written any bytes there. Every record
// is checked against the shape the door writes (kind, paths, temp and backup
// names, hashes, modes) and against the places that run could have touched,
// before any of it decides what is removed or restored. Pure.
import path from 'node:path';
import { ReconcileError } from '../errors.js';
import {
  ASIDE_MARK,
  asideName,
  type AsideIdentity,
  type JournalRecord,
  type LinkDelta,
  type PriorEntry,
  type RuntimeStep,
  type UserOf,
} from './journal-records.js';

/** Where a journal lies, as target paths with their links resolved inside the root. */
export interface JournalPlace {
  /** The journal file itself: messages name it as `file:line:`. */
  file: string;
  /** The run's id, the name of its directory under runs/. */
  runId: string;
  /** The reports directory: the only place a report write may lie. */
  reportsDir: string;
  /** runs/ under it: no journaled host edit lies there (it holds the journals and backups). */
  runsDir: string;
}

/** A journal record that is not what the door writes: `file:line: message`. */
export class JournalError extends ReconcileError {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly detail: string,
  ) {
    super(`${file}:${line}: ${detail}; nothing was changed (move the run directory ${path.posix.dirname(file)} aside to go on without it)`);
  }
}

export interface CheckedJournal {
  records: JournalRecord[];
  /** The line each record came from (1-based). */
  lines: number[];
  /** The last line has no newline: the writer died mid-append. It is never read as a record. */
  torn: boolean;
  /** The end record's status; null: none (the run never finished, or the journal was cut). */
  end: 'ok' | 'failed' | 'interrupted' | null;
}

class Bad extends Error {}
const bad = (m: string): never => {
  throw new Bad(m);
};

/** Run ids are made by newRunJournal (digits, letters, '-'); tests name theirs alike. */
export const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9-]{0,127}$/;
const SHA256 = /^[0-9a-f]{64}$/;
// The door's temp name: `.<basename>.reconcile-<run id>-<hex>`, 8 hex digits
// (earlier versions took them from Math.random, which can give fewer).
const TMP_SUFFIX = /^-[0-9a-f]{1,8}$/;
// systemd's unit name grammar (unit_name_is_valid): no '/', no leading '-'
// (it would be an option to systemctl), a known suffix.
const UNIT = /^[A-Za-z0-9:_.\\@][A-Za-z0-9:_.\\@-]{0,250}\.(service|socket|target|device|mount|automount|swap|timer|path|slice|scope)$/;
const MODULE = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,55}$/;
// useradd's default NAME_REGEX, plus the '$' of machine accounts.
const USER = /^[a-z_][a-z0-9_-]{0,31}\$?$/;
const KERNEL_FS = ['/proc', '/sys', '/dev'];
const USER_KEYS = ['user', 'route', 'uid', 'gid'];

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The object's keys must be exactly `required` plus any of `optional`. */
function keys(o: Record<string, unknown>, what: string, required: string[], optional: string[] = []): void {
  for (const k of required) if (!(k in o)) bad(`${what} has no "${k}"`);
  for (const k of Object.keys(o)) if (!required.includes(k) && !optional.includes(k)) bad(`${what} has an unexpected key "${k}"`);
}

function str(v: unknown, what: string): string {
  if (typeof v !== 'string') bad(`${what} must be a string, not ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}`);
  const s = v as string;
  if (s.includes('\0')) bad(`${what} contains a NUL byte`);
  return s;
}

function int(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) bad(`${what} must be an integer from ${min} to ${max}, not ${JSON.stringify(v)}`);
  return v as number;
}

function bool(v: unknown, what: string): boolean {
  if (typeof v !== 'boolean') bad(`${what} must be true or false, not ${JSON.stringify(v)}`);
  return v as boolean;
}

function oneOf<T extends string>(v: unknown, what: string, values: readonly T[]): T {
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) bad(`${what} must be one of ${values.join(', ')}, not ${JSON.stringify(v)}`);
  return v as T;
}

const inside = (p: string, dir: string) => dir === '/' || p === dir || p.startsWith(dir + '/');

/** An absolute, normalised target path other than / and outside the kernel's file systems. */
function absolute(v: unknown, what: string): string {
  const p = str(v, what);
  if (!p.startsWith('/')) bad(`${what} ${JSON.stringify(p)} is not an absolute path`);
  if (p === '/') bad(`${what} is / itself`);
  if (path.posix.normalize(p) !== p || p.endsWith('/')) bad(`${what} ${JSON.stringify(p)} is not a normalised path (no '.', '..', '//' or trailing '/')`);
  if (p.length > 4096) bad(`${what} is longer than PATH_MAX (4096)`);
  return p;
}

/** The root the run acted on: / on a live host, else the image's directory. */
function rootPath(v: unknown): string {
  const r = str(v, 'root');
  return r === '/' ? r : absolute(r, 'root');
}

/**
 * A file or directory a run may have changed: never a kernel file system
 * (the door writes none; sysctls go through runtime steps) and never the
 * runs directory (journals and backups are not host files); a report lies in
 * the reports directory.
 */
function hostPath(v: unknown, what: string, place: JournalPlace, report = false): string {
  const p = absolute(v, what);
  for (const k of KERNEL_FS) if (inside(p, k)) bad(`${what} ${p} lies in ${k}, a kernel file system no run writes files in`);
  if (report) {
    if (!inside(p, place.reportsDir) || p === place.reportsDir) bad(`${what} ${p} is a report outside the reports directory ${place.reportsDir}`);
  } else if (inside(p, place.runsDir)) bad(`${what} ${p} lies in the runs directory ${place.runsDir}, which no run edits`);
  return p;
}

/** The temp name WriteDoor gives a write or link of `target` in this run. */
function tmpName(v: unknown, target: string, place: JournalPlace): string {
  const t = absolute(v, 'tmp');
  const prefix = path.posix.join(path.posix.dirname(target), `.${path.posix.basename(target)}.reconcile-${place.runId}`);
  if (!t.startsWith(prefix) || !TMP_SUFFIX.test(t.slice(prefix.length))) {
    bad(`tmp ${t} is not a temp name this run's door makes for ${target} (${prefix}-<hex>)`);
  }
  return t;
}

function backupName(v: unknown, target: string): string {
  const b = str(v, 'prior.backup');
  const want = path.posix.join('backup', target);
  if (b !== want) bad(`prior.backup ${JSON.stringify(b)} is not the backup name of ${target} (${want})`);
  return b;
}

function mode(v: unknown, what = 'mode'): number {
  return int(v, what, 0, 0o7777);
}
// uid_t and gid_t are 32 bits; (uid_t)-1 means "no change" to chown.
const id = (v: unknown, what: string) => int(v, what, 0, 0xfffffffe);

function prior(v: unknown, target: string): PriorEntry {
  if (!isObj(v)) return bad('prior must be an object');
  const entry = oneOf(v.entry, 'prior.entry', ['absent', 'file', 'symlink'] as const);
  if (entry === 'absent') {
    keys(v, 'prior', ['entry']);
    return { entry };
  }
  if (entry === 'symlink') {
    keys(v, 'prior', ['entry', 'link'], ['backup']);
    const link = str(v.link, 'prior.link');
    if (link === '') bad('prior.link is empty');
    return { entry, link, ...(v.backup !== undefined ? { backup: backupName(v.backup, target) } : {}) };
  }
  keys(v, 'prior', ['entry', 'backup', 'mode', 'uid', 'gid', 'sha256']);
  const sha = str(v.sha256, 'prior.sha256');
  if (!SHA256.test(sha)) bad(`prior.sha256 ${JSON.stringify(sha)} is not a sha256 in hex`);
  return {
    entry,
    backup: v.backup === null ? null : backupName(v.backup, target),
    mode: mode(v.mode, 'prior.mode'),
    uid: id(v.uid, 'prior.uid'),
    gid: id(v.gid, 'prior.gid'),
    sha256: sha,
  };
}

function units(v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0) return bad('action.units must be a non-empty list of unit names');
  return v.map((u, i) => {
    const s = str(u, `action.units[${i}]`);
    if (!UNIT.test(s)) bad(`action.units[${i}] ${JSON.stringify(s)} is not a unit name`);
    return s;
  });
}

/** Whose manager a unit step went to; route 'private': asked as UID:GID on the user manager's own socket. */
function user(o: Record<string, unknown>): UserOf {
  if (o.user === undefined) {
    if (o.route !== undefined || o.uid !== undefined || o.gid !== undefined) bad('action.route, uid and gid need action.user');
    return {};
  }
  const u = str(o.user, 'action.user');
  if (!USER.test(u)) bad(`action.user ${JSON.stringify(u)} is not a user name`);
  if (o.route === undefined) {
    if (o.uid !== undefined || o.gid !== undefined) bad('action.uid and gid belong to route "private"');
    return { user: u };
  }
  oneOf(o.route, 'action.route', ['private'] as const);
  // Never root's: the private route runs systemctl as that user.
  return { user: u, route: 'private', uid: int(o.uid, 'action.uid', 1, 0xfffffffe), gid: int(o.gid, 'action.gid', 0, 0xfffffffe) };
}

function runtimeStep(v: unknown): RuntimeStep {
  if (!isObj(v)) return bad('action must be an object');
  const step = oneOf(v.step, 'action.step', [
    'sysctl',
    'swapoff',
    'swapon',
    'modprobe',
    'unit-stop',
    'unit-start',
    'unit-kill',
    'unit-disable',
    'unit-mask',
    'daemon-reload',
    'container-stop',
    'container-start',
  ] as const);
  switch (step) {
    case 'sysctl': {
      keys(v, 'action', ['step', 'key', 'path', 'before', 'value']);
      const key = str(v.key, 'action.key');
      const p = absolute(v.path, 'action.path');
      if (!p.startsWith('/proc/sys/')) bad(`action.path ${p} is not under /proc/sys`);
      const before = v.before === null ? null : str(v.before, 'action.before');
      return { step, key, path: p, before, value: str(v.value, 'action.value') };
    }
    case 'swapoff':
    case 'swapon':
      keys(v, 'action', ['step', 'device']);
      // An argument to swapon: an absolute path, never an option.
      return { step, device: absolute(v.device, 'action.device') };
    case 'modprobe': {
      keys(v, 'action', ['step', 'module']);
      const m = str(v.module, 'action.module');
      if (!MODULE.test(m)) bad(`action.module ${JSON.stringify(m)} is not a module name`);
      return { step, module: m };
    }
    case 'container-stop':
    case 'container-start': {
      keys(v, 'action', ['step', 'runtime', 'id', 'restart']);
      const runtime = oneOf(v.runtime, 'action.runtime', ['docker'] as const);
      // An argument to docker: a full container id, never an option.
      const id = str(v.id, 'action.id');
      if (!/^[0-9a-f]{64}$/.test(id)) bad(`action.id ${JSON.stringify(id)} is not a container id`);
      return { step, runtime, id, restart: oneOf(v.restart, 'action.restart', ['no', 'always', 'unless-stopped', 'on-failure'] as const) };
    }
    case 'daemon-reload':
      keys(v, 'action', ['step'], USER_KEYS);
      return { step, ...user(v) };
    default:
      keys(v, 'action', ['step', 'units'], USER_KEYS);
      return { step, units: units(v.units), ...user(v) };
  }
}

function linkDelta(v: unknown, place: JournalPlace): LinkDelta {
  if (!isObj(v)) return bad('result must be an object');
  keys(v, 'result', ['removed', 'added']);
  const list = (l: unknown, what: string) => {
    if (!Array.isArray(l)) return bad(`result.${what} must be a list`);
    return l.map((e, i) => {
      if (!isObj(e)) return bad(`result.${what}[${i}] must be an object`);
      keys(e, `result.${what}[${i}]`, ['path', 'link']);
      return { path: hostPath(e.path, `result.${what}[${i}].path`, place), link: str(e.link, `result.${what}[${i}].link`) };
    });
  };
  return { removed: list(v.removed, 'removed'), added: list(v.added, 'added') };
}

type Stamp = Pick<JournalRecord, 'seq' | 'at'>;
type RecordOf<K extends JournalRecord['kind']> = Extract<JournalRecord, { kind: K }>;
const BASE_KEYS = ['seq', 'at', 'kind'];

/** A begin record: this run's own id, and a rollback_of only on a rollback. */
function beginRecord(v: Record<string, unknown>, stamp: Stamp, place: JournalPlace): RecordOf<'begin'> {
  const kind = 'begin';
  keys(v, 'begin', [...BASE_KEYS, 'mode', 'run', 'pid', 'root', 'live', 'tool'], ['rollback_of']);
  const m = oneOf(v.mode, 'mode', ['apply', 'rollback'] as const);
  const run = str(v.run, 'run');
  if (run !== place.runId) bad(`run ${JSON.stringify(run)} is not this run's id ${place.runId} (its directory's name)`);
  const of = v.rollback_of === undefined ? undefined : str(v.rollback_of, 'rollback_of');
  if (of !== undefined && (m !== 'rollback' || !RUN_ID.test(of))) bad(`rollback_of ${JSON.stringify(of)} is not the id of a run this rollback undid`);
  return {
    ...stamp,
    kind,
    mode: m,
    run,
    pid: int(v.pid, 'pid', 1, 2 ** 22),
    root: rootPath(v.root),
    live: bool(v.live, 'live'),
    tool: str(v.tool, 'tool'),
    ...(of !== undefined ? { rollback_of: of } : {}),
  };
}

/** A write record: its path (a report only in the reports directory), prior entry and this run's temp name. */
function writeRecord(v: Record<string, unknown>, stamp: Stamp, place: JournalPlace): RecordOf<'write'> {
  const kind = 'write';
  keys(v, 'write', [...BASE_KEYS, 'path', 'prior', 'mode', 'uid', 'gid', 'sha256', 'tmp', 'report']);
  const report = bool(v.report, 'report');
  const p = hostPath(v.path, 'path', place, report);
  const sha = str(v.sha256, 'sha256');
  if (!SHA256.test(sha)) bad(`sha256 ${JSON.stringify(sha)} is not a sha256 in hex`);
  return {
    ...stamp,
    kind,
    path: p,
    prior: prior(v.prior, p),
    mode: mode(v.mode),
    uid: id(v.uid, 'uid'),
    gid: id(v.gid, 'gid'),
    sha256: sha,
    tmp: tmpName(v.tmp, p, place),
    report,
  };
}

const DECIMAL = /^(0|[1-9][0-9]{0,19})$/;
const ASIDE_KEYS = ['entry', 'bytes', 'files', 'dev', 'ino'];

/** What a move aside measured: the entry's kind, size, file count and identity (64-bit numbers as decimal strings). */
function asideIdentity(v: Record<string, unknown>): AsideIdentity {
  const entry = oneOf(v.entry, 'entry', ['file', 'dir'] as const);
  const dec = (x: unknown, what: string) => {
    const s = str(x, what);
    if (!DECIMAL.test(s) || BigInt(s) > 0xffffffffffffffffn) bad(`${what} ${JSON.stringify(s)} is not a 64-bit number in decimal`);
    return s;
  };
  const files = int(v.files, 'files', 0, Number.MAX_SAFE_INTEGER);
  if (entry === 'file' && files !== 1) bad(`a file set aside counts ${files} files, not 1`);
  return { entry, bytes: int(v.bytes, 'bytes', 0, Number.MAX_SAFE_INTEGER), files, dev: dec(v.dev, 'dev'), ino: dec(v.ino, 'ino') };
}

/** A move aside: `to` is exactly this run's set-aside name for `path`. */
function asideRecord(v: Record<string, unknown>, stamp: Stamp, place: JournalPlace): RecordOf<'aside'> {
  keys(v, 'aside', [...BASE_KEYS, 'path', 'to', ...ASIDE_KEYS]);
  const p = hostPath(v.path, 'path', place);
  const to = absolute(v.to, 'to');
  if (to !== asideName(p, place.runId)) bad(`to ${to} is not the name this run sets ${p} aside to (${asideName(p, place.runId)})`);
  return { ...stamp, kind: 'aside', path: p, to, ...asideIdentity(v) };
}

/** A rollback's move back: `from` is the set-aside name of `path` some run made. */
function unasideRecord(v: Record<string, unknown>, stamp: Stamp, place: JournalPlace): RecordOf<'unaside'> {
  keys(v, 'unaside', [...BASE_KEYS, 'path', 'from', ...ASIDE_KEYS]);
  const p = hostPath(v.path, 'path', place);
  const from = absolute(v.from, 'from');
  const prefix = `${p}${ASIDE_MARK}`;
  if (!from.startsWith(prefix) || !RUN_ID.test(from.slice(prefix.length))) bad(`from ${from} is not a name a run sets ${p} aside to (${prefix}<run id>)`);
  return { ...stamp, kind: 'unaside', path: p, from, ...asideIdentity(v) };
}

/** One parsed line as the record it claims to be, or Bad. */
function record(v: unknown, place: JournalPlace): JournalRecord {
  if (!isObj(v)) return bad('a record must be a JSON object');
  const seq = int(v.seq, 'seq', 1, Number.MAX_SAFE_INTEGER);
  const at = str(v.at, 'at');
  const stamp = { seq, at };
  const kind = oneOf(v.kind, 'kind', [
    'begin',
    'mkdir',
    'write',
    'remove',
    'link',
    'rmdir',
    'aside',
    'unaside',
    'later',
    'runtime',
    'done',
    'failed',
    'end',
  ] as const);
  switch (kind) {
    case 'aside':
      return asideRecord(v, stamp, place);
    case 'unaside':
      return unasideRecord(v, stamp, place);
    case 'begin':
      return beginRecord(v, stamp, place);
    case 'mkdir':
      keys(v, 'mkdir', [...BASE_KEYS, 'path', 'mode']);
      return { ...stamp, kind, path: hostPath(v.path, 'path', place), mode: mode(v.mode) };
    case 'rmdir':
      keys(v, 'rmdir', [...BASE_KEYS, 'path', 'mode', 'uid', 'gid']);
      return { ...stamp, kind, path: hostPath(v.path, 'path', place), mode: mode(v.mode), uid: id(v.uid, 'uid'), gid: id(v.gid, 'gid') };
    case 'write':
      return writeRecord(v, stamp, place);
    case 'link': {
      keys(v, 'link', [...BASE_KEYS, 'path', 'link', 'prior', 'tmp']);
      const p = hostPath(v.path, 'path', place);
      const link = str(v.link, 'link');
      if (link === '') bad('link is empty');
      return { ...stamp, kind, path: p, link, prior: prior(v.prior, p), tmp: tmpName(v.tmp, p, place) };
    }
    case 'remove': {
      keys(v, 'remove', [...BASE_KEYS, 'path', 'prior']);
      const p = hostPath(v.path, 'path', place);
      const pr = prior(v.prior, p);
      // The door journals a remove only of something that is there.
      if (pr.entry === 'absent') bad(`a remove of ${p} whose prior entry is absent`);
      return { ...stamp, kind, path: p, prior: pr };
    }
    case 'later': {
      keys(v, 'later', [...BASE_KEYS, 'path', 'by', 'prior']);
      const p = hostPath(v.path, 'path', place);
      return { ...stamp, kind, path: p, by: str(v.by, 'by'), prior: prior(v.prior, p) };
    }
    case 'runtime':
      keys(v, 'runtime', [...BASE_KEYS, 'action']);
      return { ...stamp, kind, action: runtimeStep(v.action) };
    case 'done':
      keys(v, 'done', [...BASE_KEYS, 'of'], ['result']);
      return { ...stamp, kind, of: int(v.of, 'of', 1, seq - 1), ...(v.result !== undefined ? { result: linkDelta(v.result, place) } : {}) };
    case 'failed':
      keys(v, 'failed', [...BASE_KEYS, 'of', 'error']);
      return { ...stamp, kind, of: int(v.of, 'of', 1, seq - 1), error: str(v.error, 'error') };
    case 'end':
      keys(v, 'end', [...BASE_KEYS, 'status'], ['note']);
      return {
        ...stamp,
        kind,
        status: oneOf(v.status, 'status', ['ok', 'failed', 'interrupted'] as const),
        ...(v.note !== undefined ? { note: str(v.note, 'note') } : {}),
      };
  }
}

/**
 * A journal's text, every complete line checked as a record and against the
 * ones before it (begin first, seq counting up by one, done/failed of an
 * action not yet settled, nothing after end). Throws JournalError.
 */
export function checkJournal(text: string, place: JournalPlace): CheckedJournal {
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  const records: JournalRecord[] = [];
  const at: number[] = [];
  const open = new Set<number>(); // actions with no outcome yet
  const actions = new Set<number>();
  let end: CheckedJournal['end'] = null;
  for (const [i, l] of lines.entries()) {
    const line = i + 1;
    if (l === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(l);
    } catch {
      throw new JournalError(place.file, line, 'not a JSON record');
    }
    let r: JournalRecord;
    try {
      r = record(parsed, place);
      const prev = records.at(-1);
      if (prev === undefined && r.kind !== 'begin') bad(`the first record is ${r.kind}, not begin`);
      if (prev !== undefined && r.kind === 'begin') bad('a second begin record');
      if (prev !== undefined && r.seq !== prev.seq + 1) bad(`seq ${r.seq} does not follow seq ${prev.seq}`);
      if (end !== null) bad(`a record after the end record`);
      const first = records[0];
      if (r.kind === 'aside' && first?.kind === 'begin' && first.mode !== 'apply') bad('a move aside in a rollback run (a rollback only moves back)');
      if (r.kind === 'unaside' && first?.kind === 'begin' && first.mode !== 'rollback') bad('a move back in a run that is not a rollback');
      if (r.kind === 'done' || r.kind === 'failed') {
        if (!actions.has(r.of)) bad(`${r.kind} of record ${r.of}, which is not an action`);
        if (!open.has(r.of)) bad(`a second outcome of record ${r.of}`);
        open.delete(r.of);
        if (r.kind === 'done' && r.result) {
          const seqOf = r.of;
          const of = records.find((x) => x.seq === seqOf);
          if (of?.kind !== 'runtime' || (of.action.step !== 'unit-disable' && of.action.step !== 'unit-mask'))
            bad(`a link result for record ${r.of}, which is not a unit-disable or unit-mask`);
        }
      } else if (r.kind === 'end') end = r.status;
      else if (r.kind !== 'begin') {
        actions.add(r.seq);
        open.add(r.seq);
      }
    } catch (e) {
      if (e instanceof Bad) throw new JournalError(place.file, line, e.message);
      throw e;
    }
    records.push(r);
    at.push(line);
  }
  return { records, lines: at, torn: last !== '', end };
}
