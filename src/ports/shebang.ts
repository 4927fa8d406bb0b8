// A process started from a "#!" script: the kernel (binfmt_script) runs the
// interpreter with argv [INTERPRETER, (ONE OPTIONAL ARG), SCRIPT, ARGS...],
// SCRIPT being the path the caller passed to execve. So a command line written
// as "SCRIPT ARGS" (in ExecStart=, a shell line) shows up in /proc with the
// interpreter in front; the script's own first line says which. Pure.
import { parseShebang as readShebang } from '../lex/shebang.js';

/** The interpreter words of a script's "#!" line: [path] or [path, arg]; null when there is none. */
export function parseShebang(head: string): string[] | null {
  // The kernel reads at most the first 256 bytes; a longer line is cut there (Linux 5.1+ refuses it; either way not ours to guess).
  const nl = head.indexOf('\n');
  if (nl < 0 || nl > 256) return null;
  // The line itself is read by the one binfmt_script reader (lex/shebang.ts).
  const s = readShebang(head.slice(0, nl));
  return s === null ? null : s.arg === null ? [s.interpreter] : [s.interpreter, s.arg];
}

/**
 * The command line the caller wrote ("SCRIPT ARGS"), given a process's argv
 * and the "#!" words of the file argv names as SCRIPT; null when argv is not
 * that script run through its interpreter. `#!/usr/bin/env NAME` ends as
 * NAME's own process, so its argv starts with NAME (env itself is gone).
 */
export function scriptCommand(argv: string[], script: string, shebang: string[]): string[] | null {
  const env = shebang.length === 2 && /(^|\/)env$/.test(shebang[0]!) && !shebang[1]!.startsWith('-') && !/\s/.test(shebang[1]!);
  for (const lead of env ? [shebang, [shebang[1]!]] : [shebang]) {
    if (argv.length > lead.length && lead.every((w, i) => argv[i] === w) && argv[lead.length] === script) return argv.slice(lead.length);
  }
  return null;
}

/** Where SCRIPT may sit in argv: after the interpreter, with or without its one argument. */
export function scriptCandidates(argv: string[]): string[] {
  return [argv[1], argv[2]].filter((a): a is string => a !== undefined && a.startsWith('/'));
}
