// os-release as /bin/sh reads it with `. FILE`: lines of NAME=WORD, WORD
// quoted or not. Only the part of the shell grammar that needs no evaluation
// is accepted (literal text, '…', "…" without $ or `, backslash escapes);
// anything else (an expansion, a command, a line continuation) is refused,
// so that the caller runs the real program instead of guessing.

export type ShAssignments = { ok: true; vars: Map<string, string> } | { ok: false; line: number; reason: string };

const BLANK = ' \t';
// Unquoted, these start an expansion or end a simple command; tilde expands in an assignment.
const SPECIAL = '|&;<>()$`~';

export function parseShAssignments(text: string): ShAssignments {
  const vars = new Map<string, string>();
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    const fail = (reason: string): ShAssignments => ({ ok: false, line: n + 1, reason });
    let i = 0;
    while (i < line.length && BLANK.includes(line[i]!)) i++;
    if (i === line.length || line[i] === '#') continue;
    const start = i;
    while (i < line.length && /[A-Za-z0-9_]/.test(line[i]!)) i++;
    const name = line.slice(start, i);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || line[i] !== '=') return fail('not a NAME=value assignment');
    i++;
    let value = '';
    for (;;) {
      if (i >= line.length) break;
      const c = line[i]!;
      if (BLANK.includes(c)) break;
      if (c === "'") {
        const end = line.indexOf("'", i + 1);
        if (end < 0) return fail('a quote runs past the end of the line');
        value += line.slice(i + 1, end);
        i = end + 1;
      } else if (c === '"') {
        i++;
        for (;;) {
          if (i >= line.length) return fail('a quote runs past the end of the line');
          const d = line[i]!;
          if (d === '"') {
            i++;
            break;
          }
          if (d === '$' || d === '`') return fail('an expansion inside double quotes');
          if (d === '\\') {
            const e = line[i + 1];
            if (e === undefined) return fail('a line continuation');
            // In double quotes a backslash escapes only $ ` " and \ (POSIX 2.2.3).
            value += '$`"\\'.includes(e) ? e : `\\${e}`;
            i += 2;
            continue;
          }
          value += d;
          i++;
        }
      } else if (c === '\\') {
        const e = line[i + 1];
        if (e === undefined) return fail('a line continuation');
        value += e;
        i += 2;
      } else if (SPECIAL.includes(c)) {
        return fail(`an unquoted ${c}`);
      } else {
        value += c;
        i++;
      }
    }
    while (i < line.length && BLANK.includes(line[i]!)) i++;
    if (i < line.length && line[i] !== '#') return fail('more than one word on the line (a command)');
    vars.set(name, value);
  }
  return { ok: true, vars };
}
