// The "#!" line of a file as Linux's binfmt_script reads it, and what kind of
// program the file is. Pure.
//
// binfmt_script: after "#!", blanks (space, tab) are skipped; the interpreter
// runs up to the next blank or the end of the line; whatever follows, with
// blanks trimmed at both ends, is one optional argument (never split).
// `#!/usr/bin/env NAME` looks NAME up in PATH: the interpreter is NAME.

export interface Shebang {
  interpreter: string;
  /** The one optional argument, as one string; null when there is none. */
  arg: string | null;
}

const BLANK = (c: string | undefined): boolean => c === ' ' || c === '\t';

/** The interpreter and argument of a "#!" line, or null when the line is none (or names no interpreter). */
export function parseShebang(firstLine: string): Shebang | null {
  if (!firstLine.startsWith('#!')) return null;
  // A carriage return is no blank to binfmt_script: "#!/bin/sh\r" names "/bin/sh\r" (the "bad interpreter" of a CRLF file).
  const line = firstLine.replace(/\n$/, '');
  let i = 2;
  while (BLANK(line[i])) i++;
  let j = i;
  while (j < line.length && !BLANK(line[j])) j++;
  if (j === i) return null;
  let rest = line.slice(j);
  let a = 0;
  while (BLANK(rest[a])) a++;
  let b = rest.length;
  while (b > a && BLANK(rest[b - 1])) b--;
  rest = rest.slice(a, b);
  return { interpreter: line.slice(i, j), arg: rest === '' ? null : rest };
}

function basename(p: string): string {
  const k = p.lastIndexOf('/');
  return k < 0 ? p : p.slice(k + 1);
}

/** The POSIX shells whose scripts the shell reader reads (shell-lines.ts). */
const POSIX_SHELLS = new Set(['sh', 'dash', 'bash']);

export type ProgramKind = { kind: 'elf' } | { kind: 'shell'; interpreter: string } | { kind: 'script'; interpreter: string } | { kind: 'no-shebang' };

/** What a file is from its first bytes: an ELF binary, a POSIX shell script, a script in another language, or text without "#!". */
export function programKind(head: Buffer): ProgramKind {
  if (head.length >= 4 && head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46) return { kind: 'elf' };
  const nl = head.indexOf(0x0a);
  const first = head.subarray(0, nl < 0 ? head.length : nl).toString('latin1');
  const sb = parseShebang(first);
  if (sb === null) return { kind: 'no-shebang' };
  let prog = sb.interpreter;
  if (basename(prog) === 'env') {
    // env's one argument (binfmt does not split it): a plain name is the program; "-S ..." and the like are not read here.
    if (sb.arg === null || sb.arg.startsWith('-') || /[\s=]/.test(sb.arg)) return { kind: 'script', interpreter: `${sb.interpreter} ${sb.arg ?? ''}`.trim() };
    prog = sb.arg;
  }
  return POSIX_SHELLS.has(basename(prog)) ? { kind: 'shell', interpreter: prog } : { kind: 'script', interpreter: prog };
}
