// systemd's ExecStart*= command lines (systemd.service(5) "Command lines";
// load-fragment.c config_parse_exec): prefixes @ - : + ! !!, then words split
// at whitespace, with single and double quotes and C escapes; $VAR / ${VAR}
// and %-specifiers are expanded by the manager at start time, so such a word
// is unknown here. Pure.
import type { Word } from '../lex/shell.js';
import { effectiveList, type UnitDirective } from './unit-file.js';

export interface ExecCommand {
  /** The prefix characters, e.g. "-" or "+@". */
  prefixes: string;
  /** The executable: the first word (with "@", argv[0] is the second). */
  path: Word;
  /** argv as the started process sees it. */
  argv: Word[];
}

const C_ESCAPES: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', s: ' ', '\\': '\\', '"': '"', "'": "'" };

/** Parses one ExecStart*= value. Null for an empty value (a reset). */
export function parseExecLine(value: string): ExecCommand | null {
  let i = 0;
  const v = value.trim();
  let prefixes = '';
  while (i < v.length && '@-:+!'.includes(v[i]!)) prefixes += v[i++];
  const noEnv = prefixes.includes(':');
  const words: Word[] = [];
  while (i < v.length) {
    while (i < v.length && /\s/.test(v[i]!)) i++;
    if (i >= v.length) break;
    let word = '';
    let unknown = false;
    let quote: '"' | "'" | null = null;
    for (; i < v.length; i++) {
      const ch = v[i]!;
      if (quote === null && /\s/.test(ch)) break;
      if (quote === null && (ch === '"' || ch === "'")) {
        quote = ch;
        continue;
      }
      if (quote !== null && ch === quote) {
        quote = null;
        continue;
      }
      if (ch === '\\' && i + 1 < v.length) {
        const n = v[++i]!;
        if (n in C_ESCAPES) word += C_ESCAPES[n];
        else if (n === 'x' && /^[0-9a-fA-F]{2}$/.test(v.slice(i + 1, i + 3))) {
          word += String.fromCharCode(parseInt(v.slice(i + 1, i + 3), 16));
          i += 2;
        } else word += n;
        continue;
      }
      if (ch === '%') {
        if (v[i + 1] === '%') {
          word += '%';
          i++;
        } else unknown = true; // a specifier (%n, %i, ...)
        continue;
      }
      word += ch;
    }
    // The manager expands ${NAME} anywhere in a word and $NAME only as a whole
    // word (systemd.service(5) "Command lines"); "$$" is a literal "$". A "$"
    // inside a word otherwise reaches the program as written (a sh -c script's own variables).
    if (!noEnv) {
      if (/^\$[A-Za-z_][A-Za-z0-9_]*$/.test(word) || /(^|[^$])(\$\$)*\$\{/.test(word)) unknown = true;
      else word = word.replace(/\$\$/g, '$');
    }
    words.push(unknown ? null : word);
  }
  if (words.length === 0) return null;
  const argv = prefixes.includes('@') ? words.slice(1) : words;
  return { prefixes, path: words[0] ?? null, argv };
}

/** The effective commands of an Exec*= list (an empty assignment resets it), each with its directive; null for a value that is no command. */
export function execCommandsOf(directives: UnitDirective[], key: string): { directive: UnitDirective; command: ExecCommand | null }[] {
  return effectiveList(directives, 'Service', key).map((directive) => ({ directive, command: parseExecLine(directive.value) }));
}
