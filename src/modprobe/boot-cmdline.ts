// The kernel command line of the next boot, from the files the boot loader's
// tools build it from. Reads only.
//
// - GRUB (grub-mkconfig, Debian's grub2-common): it sources /etc/default/grub,
//   then every /etc/default/grub.d/*.cfg in glob order, as shell; the default
//   entry's command line is "$GRUB_CMDLINE_LINUX $GRUB_CMDLINE_LINUX_DEFAULT"
//   (10_linux). The files are read with the project's shell tokenizer; an
//   assignment is evaluated when its value is literal or expands variables
//   the same files assigned, anything else that may set those two variables
//   is unknown, naming file and line.
// - kernel-install (systemd-boot, UKIs): /etc/kernel/cmdline, the whole file.
// What the boot loader really boots (grub.cfg generated before an edit, another
// loader) is not read: the operator line says to regenerate it.
import path from 'node:path';
import type { TargetFs } from '../host.js';
import { byteOrder } from '../systemd/conf-dirs.js';
import { shellTokens, type ShellToken } from '../lex/shell.js';

export const GRUB_DEFAULT = '/etc/default/grub';
export const GRUB_DEFAULT_D = '/etc/default/grub.d';
export const KERNEL_CMDLINE = '/etc/kernel/cmdline';
export const GRUB_VARS = ['GRUB_CMDLINE_LINUX', 'GRUB_CMDLINE_LINUX_DEFAULT'] as const;

/** Where a piece of a boot command line is set. */
export interface CmdlinePiece {
  file: string;
  line: number;
  /** The shell variable (GRUB), or null for /etc/kernel/cmdline. */
  variable: string | null;
  text: string;
}

/** One boot loader's command line for the default entry. */
export interface BootCmdline {
  loader: 'grub' | 'kernel-install';
  /** The whole command line. */
  text: string;
  /** Where each part comes from (the last assignment of each GRUB variable). */
  pieces: CmdlinePiece[];
}

export interface CmdlineUnknown {
  file: string;
  line: number;
  message: string;
}

export interface BootCmdlines {
  cmdlines: BootCmdline[];
  /** The files looked at, for an operator line that says what was searched. */
  searched: string[];
  unknown: CmdlineUnknown[];
}

const COMPOUND_OPEN = new Set(['if', 'case', 'for', 'while', 'until', '{', 'function']);
const COMPOUND_CLOSE = new Set(['fi', 'esac', 'done', '}']);
/** Builtins that may set or hide a variable in ways an assignment scan cannot follow. */
const OPAQUE = new Set(['.', 'source', 'eval', 'read', 'unset', 'readonly', 'local', 'declare', 'typeset', 'set', 'getopts', 'mapfile']);

/**
 * The value of one assignment word's raw text after "NAME=": quotes removed,
 * $NAME and ${NAME} expanded from `vars` (an unset one is empty, as sh has
 * it). null when it holds anything else ($(...), `...`, ${X:-y}, globs).
 */
export function expandValue(raw: string, vars: ReadonlyMap<string, string>): string | null {
  let out = '';
  let i = 0;
  let dq = false;
  const name = (from: number): { name: string; end: number } | null => {
    if (raw[from] === '{') {
      const close = raw.indexOf('}', from);
      const n = close < 0 ? '' : raw.slice(from + 1, close);
      return /^[A-Za-z_][A-Za-z0-9_]*$/.test(n) ? { name: n, end: close + 1 } : null;
    }
    let e = from;
    while (e < raw.length && /[A-Za-z0-9_]/.test(raw[e]!)) e++;
    const n = raw.slice(from, e);
    return /^[A-Za-z_]/.test(n) ? { name: n, end: e } : null;
  };
  while (i < raw.length) {
    const c = raw[i]!;
    if (c === '"') {
      dq = !dq;
      i++;
    } else if (c === "'" && !dq) {
      const end = raw.indexOf("'", i + 1);
      if (end < 0) return null;
      out += raw.slice(i + 1, end);
      i = end + 1;
    } else if (c === '\\') {
      const n = raw[i + 1];
      if (n === undefined) return null;
      if (dq && !'$`"\\\n'.includes(n)) out += c;
      if (n !== '\n') out += n;
      i += 2;
    } else if (c === '$') {
      const v = name(i + 1);
      if (v === null) return null;
      out += vars.get(v.name) ?? '';
      i = v.end;
    } else if (c === '`' || (!dq && '*?[~'.includes(c))) {
      return null;
    } else {
      out += c;
      i++;
    }
  }
  return dq ? null : out;
}

interface ShellVars {
  values: Map<string, string>;
  /** Where each variable was last set. */
  setAt: Map<string, { file: string; line: number }>;
  /** A variable whose value is unknown from this point on. */
  unknownAt: Map<string, CmdlineUnknown>;
}

/** Evaluates the assignments of one sourced file into `vars`. */
function readShellFile(file: string, text: string, vars: ShellVars, wanted: ReadonlySet<string>): void {
  const lineOf = (offset: number) => text.slice(0, offset).split('\n').length;
  const tokens = shellTokens(text);
  let depth = 0;
  let atCommand = true;
  let exported = false;
  const markUnknown = (line: number, message: string) => {
    for (const v of wanted) vars.unknownAt.set(v, { file, line, message });
  };
  for (let i = 0; i < tokens.length; i++) {
    const t: ShellToken = tokens[i]!;
    if (t.unterminated) {
      markUnknown(lineOf(t.at), 'an unterminated quote starts here; the rest of the file cannot be read');
      return;
    }
    if (t.op !== null && t.op !== 'redirect') {
      if (t.op === '(') depth++;
      if (t.op === ')') depth = Math.max(0, depth - 1);
      atCommand = true;
      exported = false;
      continue;
    }
    if (t.op === 'redirect') {
      i++; // its target word
      continue;
    }
    const raw = text.slice(t.at, t.end);
    if (atCommand && t.plain && COMPOUND_OPEN.has(raw)) {
      depth++;
      continue;
    }
    if (atCommand && t.plain && COMPOUND_CLOSE.has(raw)) {
      depth = Math.max(0, depth - 1);
      continue;
    }
    if (atCommand && t.plain && ['then', 'do', 'else', 'elif', 'in', '!'].includes(raw)) continue;
    if ((atCommand || exported) && t.assignment) {
      const eq = raw.indexOf('=');
      const nameText = raw.slice(0, eq);
      if (!wanted.has(nameText)) continue;
      const line = lineOf(t.at);
      if (depth > 0) {
        vars.unknownAt.set(nameText, {
          file,
          line,
          message: `${nameText} is set inside a compound command (if, case, a loop, { } or ( )), which this scan does not run`,
        });
        continue;
      }
      const value = expandValue(raw.slice(eq + 1), vars.values);
      if (value === null) {
        vars.unknownAt.set(nameText, { file, line, message: `${nameText}'s value \`${raw.slice(eq + 1)}\` is not a literal or a variable set in these files` });
        continue;
      }
      vars.values.set(nameText, value);
      vars.setAt.set(nameText, { file, line });
      vars.unknownAt.delete(nameText);
      continue;
    }
    if (atCommand) {
      atCommand = false;
      if (t.word === 'export') {
        exported = true;
        atCommand = false;
        continue;
      }
      if (t.word === null || OPAQUE.has(t.word)) markUnknown(lineOf(t.at), `\`${raw}\` may set ${[...wanted].join(' or ')} in a way this scan cannot follow`);
    }
  }
}

/** The command lines the boot loaders' tools would build for the next boot. */
export async function readBootCmdlines(host: TargetFs): Promise<BootCmdlines> {
  const searched: string[] = [];
  const unknown: CmdlineUnknown[] = [];
  const cmdlines: BootCmdline[] = [];

  const grubFiles: string[] = [GRUB_DEFAULT];
  const dropIns = ((await host.readDir(GRUB_DEFAULT_D)) ?? [])
    .map((e) => e.name)
    .filter((n) => n.endsWith('.cfg'))
    .sort(byteOrder);
  grubFiles.push(...dropIns.map((n) => path.posix.join(GRUB_DEFAULT_D, n)));
  const vars: ShellVars = { values: new Map(), setAt: new Map(), unknownAt: new Map() };
  const wanted = new Set<string>(GRUB_VARS);
  let anyGrub = false;
  for (const f of grubFiles) {
    searched.push(f);
    const text = await host.readFile(f);
    if (text === null) continue;
    anyGrub = true;
    readShellFile(f, text, vars, wanted);
  }
  if (dropIns.length === 0) searched.push(`${GRUB_DEFAULT_D}/*.cfg`);
  if (anyGrub) {
    for (const v of GRUB_VARS) {
      const u = vars.unknownAt.get(v);
      if (u) unknown.push(u);
    }
    const pieces: CmdlinePiece[] = GRUB_VARS.flatMap((v) => {
      const at = vars.setAt.get(v);
      return at ? [{ file: at.file, line: at.line, variable: v, text: vars.values.get(v)! }] : [];
    });
    cmdlines.push({ loader: 'grub', text: GRUB_VARS.map((v) => vars.values.get(v) ?? '').join(' '), pieces });
  }

  searched.push(KERNEL_CMDLINE);
  const kc = await host.readFile(KERNEL_CMDLINE);
  if (kc !== null) {
    const pieces = kc.split('\n').flatMap((text, i) => (text.trim() === '' ? [] : [{ file: KERNEL_CMDLINE, line: i + 1, variable: null, text }]));
    cmdlines.push({ loader: 'kernel-install', text: kc.replace(/\n/g, ' '), pieces });
  }
  return { cmdlines, searched, unknown };
}

/** The piece of `cmdline` that holds `word` (the last one: later words win). */
export function pieceOf(cmdline: BootCmdline, word: string): CmdlinePiece | null {
  let found: CmdlinePiece | null = null;
  for (const p of cmdline.pieces) if (p.text.includes(word)) found = p;
  return found;
}
