// /etc/network/interfaces as ifupdown 0.8 reads it (interfaces(5), checked
// against `ifquery -i FILE` in test/boot-scripts/interfaces.test.ts). Pure:
// one file's text in, its stanzas out; following `source` and
// `source-directory` is the caller's (scan.ts reads through the root).
//
// Lines: a line whose first non-blank character is "#" is a comment (and
// never continues); otherwise a line ending in "\" goes on with the next
// physical line (the "\" dropped, the next line appended as it is); blanks
// at both ends are trimmed. There are no end-of-line comments. A line's
// first word is its keyword; inside an `iface` stanza any keyword that
// opens no stanza is an option of it, its value the rest of the line.

export interface InterfaceOption {
  key: string;
  value: string;
  /** The physical lines the option spans (1-based, inclusive). */
  first: number;
  last: number;
}

export interface IfaceStanza {
  name: string;
  family: string;
  method: string;
  /** `inherits NAME`: the options of that stanza come first. */
  inherits: string | null;
  line: number;
  options: InterfaceOption[];
}

export type InterfacesEntry =
  | { kind: 'iface'; stanza: IfaceStanza }
  /** auto / allow-auto / allow-CLASS NAME...: names, or patterns ("/regex/...") that ifupdown matches at run time. */
  | { kind: 'allow'; cls: string; names: string[]; line: number }
  | { kind: 'mapping'; line: number }
  | { kind: 'rename'; line: number }
  | { kind: 'source'; pattern: string; directory: boolean; line: number };

/** Keywords that open a stanza (or are one line of their own). */
const STANZAS = new Set(['iface', 'mapping', 'auto', 'source', 'source-directory', 'rename', 'no-auto-down', 'no-scripts']);

function words(s: string): string[] {
  return s.split(/[ \t]+/).filter((w) => w !== '');
}

/** The logical lines of a file: text and the physical lines it spans. */
function logicalLines(text: string): Array<{ text: string; first: number; last: number }> {
  const phys = text.split('\n');
  const out: Array<{ text: string; first: number; last: number }> = [];
  for (let i = 0; i < phys.length; i++) {
    const first = i + 1;
    let line = phys[i]!;
    if (/^[ \t]*#/.test(line)) continue;
    while (line.endsWith('\\') && i + 1 < phys.length) {
      line = line.slice(0, -1) + phys[++i]!;
    }
    const t = line.trim();
    if (t !== '') out.push({ text: t, first, last: i + 1 });
  }
  return out;
}

/** The entries of one interfaces(5) file, in order. */
export function readInterfaces(text: string): InterfacesEntry[] {
  const out: InterfacesEntry[] = [];
  let current: IfaceStanza | null = null;
  for (const l of logicalLines(text)) {
    const sp = l.text.search(/[ \t]/);
    const key = sp < 0 ? l.text : l.text.slice(0, sp);
    const rest = sp < 0 ? '' : l.text.slice(sp).trim();
    if (STANZAS.has(key) || key.startsWith('allow-')) {
      current = null;
      const w = words(rest);
      if (key === 'iface') {
        const inh = w.indexOf('inherits');
        current = { name: w[0] ?? '', family: w[1] ?? '', method: w[2] ?? '', inherits: inh >= 0 ? (w[inh + 1] ?? null) : null, line: l.first, options: [] };
        out.push({ kind: 'iface', stanza: current });
      } else if (key === 'auto' || key.startsWith('allow-')) {
        out.push({ kind: 'allow', cls: key === 'auto' ? 'auto' : key.slice('allow-'.length), names: w, line: l.first });
      } else if (key === 'mapping') out.push({ kind: 'mapping', line: l.first });
      else if (key === 'rename') out.push({ kind: 'rename', line: l.first });
      else if (key === 'source' || key === 'source-directory')
        out.push({ kind: 'source', pattern: rest, directory: key === 'source-directory', line: l.first });
      continue;
    }
    // An option outside an iface stanza (mapping's script/map, or a misplaced line): nothing ifupdown runs at boot as a command.
    if (current !== null) current.options.push({ key, value: rest, first: l.first, last: l.last });
  }
  return out;
}

/** The options whose values ifupdown runs through /bin/sh when it brings an interface up (interfaces(5): "up" and "post-up" are one). */
export const UP_OPTIONS = new Set(['pre-up', 'up', 'post-up']);

/** A file name `source-directory` reads (interfaces(5): ^[a-zA-Z0-9_-]+$). */
export function sourceDirectoryName(name: string): boolean {
  return /^[a-zA-Z0-9_-]+$/.test(name);
}

/** Whether a pattern word is one shell glob wordexp(3) expands ("*", "?", "[...]"), and whether it has what wordexp does besides (variables, quotes, command substitution): those are read as unknown. */
export function globKind(pattern: string): 'plain' | 'glob' | 'unknown' {
  if (/[$`'"\\{}~;&|<>()]/.test(pattern) || /[ \t]/.test(pattern)) return 'unknown';
  return /[*?[]/.test(pattern) ? 'glob' : 'plain';
}

/** fnmatch(3) of one path component, as glob(3) does it: a leading "." only matched by a literal ".". */
export function matchComponent(pattern: string, name: string): boolean {
  if (name.startsWith('.') && !pattern.startsWith('.')) return false;
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) {
        re += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const neg = body.startsWith('!') || body.startsWith('^');
      if (neg) body = body.slice(1);
      re += `[${neg ? '^' : ''}${body.replace(/[\\\]]/g, '\\$&')}]`;
      i = end;
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(re + '$').test(name);
}
