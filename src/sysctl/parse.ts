// sysctl.d(5) syntax, as systemd-sysctl (v252, Debian 12) and procps
// sysctl 4.0.2 read it:
// - each line is stripped of surrounding whitespace; empty lines and lines
//   whose first character is '#' or ';' are comments (no trailing comments:
//   "a = 1 # x" sets the value "1 # x");
// - "key = value": the first '=' splits, whitespace around both sides goes;
// - "-key = value": failure to set the key is not an error;
// - "-key" alone: exclude the key from glob matches (systemd also drops an
//   explicit earlier assignment of that exact key, see order.ts);
// - keys use '.' or '/' separators; a key containing '*', '?' or '[' is a glob.
import { normalizeSysctlKey } from '../observe/sysctl-live.js';

export interface SysctlAssignment {
  /** Canonical dotted key (normalizeSysctlKey), the identity both tools compare. */
  key: string;
  /** The key as written, without the '-' prefix. */
  rawKey: string;
  /** null for an exclude-only line ("-key"). */
  value: string | null;
  /** Path the line was read through, e.g. /etc/sysctl.d/99-sysctl.conf. */
  file: string;
  /** 1-based. */
  line: number;
  /** '-' prefix: a missing key or a refused write is not an error. */
  ignoreFailure: boolean;
  isGlob: boolean;
  /** "-key" without '=': only excludes the key from globs. */
  excludeOnly: boolean;
}

export interface SysctlParseIssue {
  file: string;
  line: number;
  text: string;
  message: string;
}

export interface ParsedSysctlFile {
  file: string;
  assignments: SysctlAssignment[];
  /** Lines both tools skip with a warning; kept so a plan can mention them. */
  issues: SysctlParseIssue[];
}

const GLOB_CHARS = /[*?[]/;

/** The whitespace systemd's strstrip removes: space, tab, newline, carriage return. */
function isStripped(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** systemd's strstrip: around lines, keys and values. */
function strip(s: string): string {
  const ws = isStripped;
  let a = 0;
  let b = s.length;
  while (a < b && ws(s.charCodeAt(a))) a++;
  while (b > a && ws(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

export function isSysctlGlob(key: string): boolean {
  return GLOB_CHARS.test(key);
}

/** Splits text into lines the way fgets/read_line see them (a final newline ends the last line). */
export function sysctlLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Classifies one line; null for blank lines and comments. */
export function parseSysctlLine(raw: string, file: string, line: number): { assignment: SysctlAssignment } | { issue: SysctlParseIssue } | null {
  const out: ParsedSysctlFile = { file, assignments: [], issues: [] };
  readLine(raw, file, line, out);
  const assignment = out.assignments[0];
  if (assignment) return { assignment };
  const issue = out.issues[0];
  return issue ? { issue } : null;
}

/** One line into `out`: an assignment, an issue, or nothing for a blank line or a comment. */
function readLine(raw: string, file: string, line: number, out: ParsedSysctlFile): void {
  const p = strip(raw);
  if (p === '' || p[0] === '#' || p[0] === ';') return;
  const eq = p.indexOf('=');
  let left: string;
  let value: string | null;
  let ignoreFailure = false;
  let excludeOnly = false;
  if (eq >= 0) {
    left = p.slice(0, eq);
    value = strip(p.slice(eq + 1));
    if (left.startsWith('-')) {
      ignoreFailure = true;
      left = left.slice(1);
    }
  } else if (p.startsWith('-')) {
    left = p.slice(1);
    value = null;
    excludeOnly = true;
  } else {
    out.issues.push({ file, line, text: raw, message: 'not an assignment (no "=")' });
    return;
  }
  const rawKey = strip(left);
  if (rawKey === '' || /^[./]+$/.test(rawKey)) {
    out.issues.push({ file, line, text: raw, message: 'empty key' });
    return;
  }
  out.assignments.push({
    key: normalizeSysctlKey(rawKey),
    rawKey,
    value,
    file,
    line,
    ignoreFailure,
    isGlob: isSysctlGlob(rawKey),
    excludeOnly,
  });
}

export function parseSysctlText(text: string, file: string): ParsedSysctlFile {
  const out: ParsedSysctlFile = { file, assignments: [], issues: [] };
  // The lines of sysctlLines, read in place: a final newline ends the last line.
  let line = 0;
  for (let start = 0; start < text.length;) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    readLine(text.slice(start, end), file, ++line, out);
    start = end + 1;
  }
  return out;
}

/** Values compare the way the kernel reads them back: runs of whitespace are one space. */
export function sameSysctlValue(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  return a.trim().replace(/\s+/g, ' ') === b.trim().replace(/\s+/g, ' ');
}
