// Crontabs, read with cron's grammar (crontab(5), Debian's cron): comment and
// blank lines, NAME=VALUE environment lines, and entries of five time fields
// or one @keyword, then (system crontabs only) a user, then the command.
// Parsing is pure; loadCrontabs reads the files through Host.
import path from 'node:path';
import type { TargetFs, Host } from '../host.js';

export interface CronEntry {
  /** Target path of the crontab. */
  file: string;
  /** 1-based line number. */
  line: number;
  /** "@reboot", or the five time fields joined by one space. */
  schedule: string;
  /** The user field of a system crontab; for a user crontab, its owner (the file name). */
  user: string;
  /** The command text as written. */
  command: string;
  /**
   * What cron hands to `SHELL -c`: the command up to its first unescaped
   * "%", with "\%" unescaped (the rest becomes the job's stdin).
   */
  shellCommand: string;
  /** The line as written, without surrounding whitespace. */
  text: string;
}

export interface CrontabProblem {
  file: string;
  line: number;
  message: string;
}

export const CRON_KEYWORDS = new Set(['@reboot', '@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** A time field: numbers, ranges, steps, lists, "*", and month/day names. */
function validTimeField(f: string): boolean {
  return f.length > 0 && [...f].every((c) => /[0-9A-Za-z*,/-]/.test(c));
}

/** cron's % rule: the first unescaped % ends the command; "\%" is a literal %. */
export function cronShellCommand(command: string): string {
  let out = '';
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === '\\' && command[i + 1] === '%') {
      out += '%';
      i++;
      continue;
    }
    if (c === '%') break;
    out += c;
  }
  return out;
}

/** Splits off the next whitespace-delimited field; null at the end of the line. */
function nextField(s: string, from: number): { field: string; end: number } | null {
  let i = from;
  while (i < s.length && (s[i] === ' ' || s[i] === '\t')) i++;
  if (i >= s.length) return null;
  const start = i;
  while (i < s.length && s[i] !== ' ' && s[i] !== '\t') i++;
  return { field: s.slice(start, i), end: i };
}

/** cron's environment-line test: a name (up to "=" or blank), optional blanks, then "=". */
function isEnvLine(s: string): boolean {
  let i = 0;
  while (i < s.length && s[i] !== '=' && s[i] !== ' ' && s[i] !== '\t') i++;
  if (i === 0) return false;
  while (i < s.length && (s[i] === ' ' || s[i] === '\t')) i++;
  return s[i] === '=';
}

/**
 * Parses a crontab. `owner` is null for a system crontab (/etc/crontab,
 * /etc/cron.d/*), whose entries carry a user field; for a user crontab it is
 * the user the entries run as.
 */
export function parseCrontab(text: string, file: string, owner: string | null): { entries: CronEntry[]; problems: CrontabProblem[] } {
  const entries: CronEntry[] = [];
  const problems: CrontabProblem[] = [];
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n]!.replace(/\r$/, '');
    const s = raw.replace(/^[ \t]+/, '');
    if (s === '' || s.startsWith('#')) continue;
    if (isEnvLine(s)) continue;
    const line = n + 1;
    let pos = 0;
    const times: string[] = [];
    const first = nextField(s, pos)!;
    if (first.field.startsWith('@')) {
      if (!CRON_KEYWORDS.has(first.field.toLowerCase())) {
        problems.push({ file, line, message: `unknown schedule keyword ${first.field}` });
        continue;
      }
      times.push(first.field.toLowerCase());
      pos = first.end;
    } else {
      let bad = false;
      for (let k = 0; k < 5; k++) {
        const f = nextField(s, pos);
        if (f === null || !validTimeField(f.field)) {
          bad = true;
          break;
        }
        times.push(f.field);
        pos = f.end;
      }
      if (bad) {
        problems.push({ file, line, message: 'not a cron entry: five time fields or an @keyword expected' });
        continue;
      }
    }
    let user = owner;
    if (owner === null) {
      const u = nextField(s, pos);
      if (u === null) {
        problems.push({ file, line, message: 'no user field (a system crontab names the user before the command)' });
        continue;
      }
      user = u.field;
      pos = u.end;
    }
    const command = s.slice(pos).replace(/^[ \t]+/, '');
    if (command === '') {
      problems.push({ file, line, message: 'no command' });
      continue;
    }
    entries.push({ file, line, schedule: times.join(' '), user: user!, command, shellCommand: cronShellCommand(command), text: raw.trim() });
  }
  return { entries, problems };
}

/** run-parts(8) names, the only files Debian's cron reads in /etc/cron.d. */
export function cronDName(name: string): boolean {
  return /^[A-Za-z0-9_-]+$/.test(name);
}

export interface Crontabs {
  entries: CronEntry[];
  problems: CrontabProblem[];
  /** Files and directories that exist but could not be read (e.g. permissions). */
  unreadable: string[];
  /** Files read, for the message when nothing matches. */
  read: string[];
}

/** System crontabs (with a user field) and per-user crontabs (named by their owner). */
export async function loadCrontabs(host: TargetFs): Promise<Crontabs> {
  const out: Crontabs = { entries: [], problems: [], unreadable: [], read: [] };
  const readOne = async (file: string, owner: string | null) => {
    let text: string | null;
    try {
      text = await host.readFile(file);
    } catch {
      out.unreadable.push(file);
      return;
    }
    if (text === null) return;
    out.read.push(file);
    const r = parseCrontab(text, file, owner);
    out.entries.push(...r.entries);
    out.problems.push(...r.problems);
  };
  const list = async (dir: string) => {
    try {
      return (await host.readDir(dir)) ?? [];
    } catch {
      out.unreadable.push(dir);
      return [];
    }
  };
  await readOne('/etc/crontab', null);
  for (const e of await list('/etc/cron.d')) {
    if ((e.isFile() || e.isSymbolicLink()) && cronDName(e.name)) await readOne(path.posix.join('/etc/cron.d', e.name), null);
  }
  // Debian: /var/spool/cron/crontabs/USER; cronie: /var/spool/cron/USER.
  for (const dir of ['/var/spool/cron/crontabs', '/var/spool/cron']) {
    for (const e of await list(dir)) {
      if (e.isFile() && !e.name.startsWith('.') && !e.name.startsWith('tmp.')) await readOne(path.posix.join(dir, e.name), e.name);
    }
  }
  return out;
}

/** /etc/passwd: user name -> UID. Pure. */
export function parsePasswd(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const f = line.split(':');
    const uid = Number(f[2]);
    if (f[0] && Number.isInteger(uid)) out.set(f[0], uid);
  }
  return out;
}
