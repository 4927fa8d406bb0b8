// A shell script's variables, as far as the text alone fixes them: a word
// made of literal text and plain parameters ($NAME, ${NAME}) is put together
// when every assignment of each NAME in the script gives the same literal
// value (after the same resolution), one of them comes before the word, and
// no `.`, `source` or `eval` between the first of them and the word can have
// changed it. Anything else (a variable from the environment, a loop
// variable, `read`, a command substitution, a different value in another
// branch) stays known only at run time. An unquoted parameter whose value
// would be split into fields or globbed (spaces, tabs, newlines, * ? [) or
// vanish (empty) stays unknown too. Pure.
import type { ShellCommand, ShellToken, Word, WordPart } from './shell.js';

/** Builtins that assign the variables named by their NAME=value operands. */
const DECLARERS = new Set(['export', 'readonly', 'local', 'declare', 'typeset']);

interface Assignment {
  name: string;
  at: number;
  /** The value's token (the whole NAME=value word), or null when the value is known only at run time. */
  token: ShellToken | null;
}

/** The script's variables: what a word resolves to at an offset. */
export class ShellVariables {
  private readonly byName = new Map<string, Assignment[]>();
  private readonly barriers: number[] = [];
  private readonly memo = new Map<ShellToken, Word>();

  constructor(commands: ShellCommand[]) {
    const add = (name: string, at: number, token: ShellToken | null) => this.byName.set(name, [...(this.byName.get(name) ?? []), { name, at, token }]);
    const nameOf = (t: ShellToken) => /^[A-Za-z_][A-Za-z0-9_]*/.exec((t.word ?? '') || '')?.[0] ?? null;
    for (const c of commands) {
      const toks = c.wordTokens ?? [];
      if (c.words.length === 0) {
        for (const t of c.assignments ?? []) add(assignmentName(t), t.at, t);
        continue;
      }
      const prog = c.words[0];
      if (prog === null || prog === undefined) continue;
      if (DECLARERS.has(prog)) {
        for (const t of toks.slice(1)) {
          if (t.assignment) add(assignmentName(t), t.at, t);
          // `local NAME`: a fresh, empty variable in the function.
          else if (prog === 'local' && t.word !== null && /^[A-Za-z_][A-Za-z0-9_]*$/.test(t.word)) add(t.word, t.at, null);
        }
      } else if (prog === 'for' || prog === 'unset' || prog === 'read' || prog === 'getopts') {
        const operands = toks.slice(1).filter((t) => !(t.word ?? '').startsWith('-'));
        const names = prog === 'for' ? operands.slice(0, 1) : prog === 'getopts' ? operands.slice(1, 2) : operands;
        for (const t of names) {
          const n = nameOf(t);
          if (n !== null) add(n, t.at, null);
        }
      } else if (prog === '.' || prog === 'source' || prog === 'eval') {
        this.barriers.push(c.at);
      }
    }
  }

  /** The value of $name at offset `at`, or null when it is known only at run time. */
  value(name: string, at: number, depth = 0): string | null {
    const list = this.byName.get(name);
    if (!list || list.length === 0 || depth > 16) return null;
    const first = Math.min(...list.map((a) => a.at));
    if (first >= at || this.barriers.some((b) => b > first && b < at)) return null;
    let value: string | null = null;
    for (const a of list) {
      if (a.token === null) return null;
      const whole = this.word(a.token, a.at, depth + 1, true);
      if (whole === null) return null;
      const v = whole.slice(a.name.length + 1);
      if (value !== null && v !== value) return null;
      value = v;
    }
    return value;
  }

  /** A token's word with its variables put in, or null. `assignment`: no field splitting or globbing (a NAME=value word). */
  word(t: ShellToken, at: number = t.at, depth = 0, assignment = false): Word {
    if (t.word !== null) return t.word;
    if (!t.template) return null;
    if (depth === 0 && this.memo.has(t)) return this.memo.get(t)!;
    const out = this.put(t.template, at, depth, assignment);
    if (depth === 0) this.memo.set(t, out);
    return out;
  }

  private put(parts: WordPart[], at: number, depth: number, assignment: boolean): string | null {
    let s = '';
    for (const p of parts) {
      if (typeof p === 'string') {
        s += p;
        continue;
      }
      const v = this.value(p.name, at, depth);
      if (v === null) return null;
      if (!p.quoted && !assignment && (v === '' || /[\s*?[]/.test(v))) return null;
      s += v;
    }
    return s;
  }

  /** The word as a /proc/sys-style pattern: known pieces as they are, "*" for each unknown one; null when it has another expansion. */
  pattern(t: ShellToken, at: number): string | null {
    if (!t.template) return null;
    return t.template.map((p) => (typeof p === 'string' ? p : (this.value(p.name, at) ?? '*'))).join('');
  }
}

function assignmentName(t: ShellToken): string {
  // The raw text up to "=" is the name (shell.ts judged it so).
  return (
    /^[A-Za-z_][A-Za-z0-9_]*/.exec(t.word ?? '')?.[0] ??
    (t.template && typeof t.template[0] === 'string' ? (/^[A-Za-z_][A-Za-z0-9_]*/.exec(t.template[0])?.[0] ?? '') : '')
  );
}
