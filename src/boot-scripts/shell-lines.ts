// A shell script read line by line for the boot-script scan: each simple
// command with its actions (commands.ts), the physical lines of the
// statement it belongs to, and whether commenting out those lines leaves a
// script that still runs the rest. Pure. The grammar is src/lex/: shell.ts
// (tokens, simple commands), shell-statements.ts (statements, here-documents)
// and shell-variables.ts (what a word's variables resolve to).
//
// Commenting out every physical line of a statement at the top level
// removes exactly it. Inside a compound command (if/while/for/case, `{ }`,
// `( )`, a function body) an emptied body is a syntax error in sh, so those
// are never commented out: a person decides.
import { shellSimpleCommandsAt, shellTokens, type Word } from '../lex/shell.js';
import { blankHeredocs, statements } from '../lex/shell-statements.js';
import { ShellVariables } from '../lex/shell-variables.js';
import { commandActions, printedText, type CommandIo, type ResolvedRedirect, type ScriptAction } from './commands.js';

export interface ScriptCommand {
  words: Word[];
  actions: ScriptAction[];
  /** 1-based line where the command starts. */
  line: number;
  /** The physical lines of its statement: what commenting it out touches. */
  first: number;
  last: number;
  /** true when commenting out first..last is safe; otherwise the reason it is not. */
  neutralisable: true | string;
}

/** Every simple command with its words resolved, for following the programs it runs into their files (scan.ts). */
export interface ScriptProgram {
  words: Word[];
  line: number;
}

export interface ScriptProblem {
  line: number;
  message: string;
}

/** 1-based line of an offset. */
function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/** "$0" as a command name: the script running itself again. */
const SELF = new Set(['$0', '"$0"', '${0}', '"${0}"']);

/**
 * Reads a shell script (byte string) for commands that touch swap, sysctls or modules.
 * `file`: the text is a script file run by its path, so `$0` names that file: a command
 * that runs `$0` runs this same script again (init scripts' `restart) $0 stop; $0 start`),
 * whose every line is read here already, so it adds nothing to judge.
 */
export function readShellScript(source: string, depth = 0, file = false): { commands: ScriptCommand[]; problems: ScriptProblem[]; programs: ScriptProgram[] } {
  const text = blankHeredocs(source);
  const tokens = shellTokens(text);
  const lineOf = lineIndex(text);
  const problems: ScriptProblem[] = [];
  const cut = tokens.find((t) => t.unterminated);
  if (cut) problems.push({ line: lineOf(cut.at), message: 'an unterminated quote starts here; the rest of the script cannot be read' });
  const heredocs = tokens.filter((t) => t.redirect !== undefined && /^<<-?$/.test(t.redirect));
  const stmts = statements(tokens);
  const commands: ScriptCommand[] = [];
  const programs: ScriptProgram[] = [];
  const all = shellSimpleCommandsAt(text, tokens);
  const vars = new ShellVariables(all);
  const resolved = all.map((c) => (c.wordTokens ?? []).map((t) => vars.word(t, c.at)));
  all.forEach((c, i) => {
    if (c.words.length === 0) return;
    // "[" and "[[" (test) look like globs to the tokenizer, which makes them unknown; as a command name they are the test builtin.
    if (c.words[0] === null && (c.nameText === '[' || c.nameText === '[[')) return;
    if (file && c.words[0] === null && SELF.has(c.nameText ?? '')) return;
    const words = resolved[i]!;
    programs.push({ words, line: lineOf(c.at) });
    const io: CommandIo = {
      redirects: (c.redirects ?? []).map((r): ResolvedRedirect => ({
        op: r.op,
        fd: r.fd,
        target: r.target ? vars.word(r.target, c.at) : null,
        prefix: r.target?.prefix ?? '',
        pattern: r.target ? vars.pattern(r.target, c.at) : null,
      })),
    };
    if (c.pipeIn) {
      const prev = all[i - 1];
      // Its output goes down the pipe unless the previous command sent it elsewhere.
      const redirected = (prev?.redirects ?? []).some((r) => r.fd === 1 && r.op.startsWith('>'));
      io.stdin = !prev || prev.words.length === 0 ? null : redirected ? '' : printedText(resolved[i - 1]!, undefined);
    }
    const actions = commandActions(words, io, nestedReader(depth + 1));
    if (actions.length === 0) return;
    const st = stmts.find((s) => s.at <= c.at && c.at < s.end) ?? { at: c.at, end: c.end, depth: 0, compound: false };
    const first = lineOf(st.at);
    const last = lineOf(Math.max(st.at, st.end - 1));
    let neutralisable: true | string = true;
    if (st.depth > 0 || st.compound)
      neutralisable = `line ${first} is part of a compound command (if, while, for, case, { }, ( ) or a function); commenting it out could leave an empty body, which sh refuses`;
    else if (heredocs.some((h) => st.at <= h.at && h.at < st.end))
      neutralisable = `line ${first} starts a here-document; commenting it out would turn the document's lines into commands`;
    else if (cut && cut.at <= st.end) neutralisable = `an unterminated quote at line ${lineOf(cut.at)}`;
    commands.push({ words, actions, line: lineOf(c.at), first, last, neutralisable });
  });
  return { commands, problems, programs };
}

/** The reader `sh -c SCRIPT` gets: the same grammar, a fresh set of variables (the script is a new shell), nesting bounded. */
function nestedReader(depth: number): (script: string) => ScriptAction[] {
  return (script) => {
    if (depth > 4) return [{ kind: 'unknown', what: 'program', why: 'sh -c nested too deeply to read' }];
    const r = readShellScript(script, depth);
    return [
      ...r.problems.map((p): ScriptAction => ({ kind: 'unknown', what: 'program', why: `sh -c script: ${p.message}` })),
      ...r.commands.flatMap((c) => c.actions),
    ];
  };
}

/** The actions of a command line run without a shell around it (a unit's ExecStart=): `sh -c` in it is read as a script. */
export function execActions(words: Word[]): ScriptAction[] {
  return commandActions(words, {}, nestedReader(1));
}
