// supervisord's program configuration (supervisord.conf(5)): an INI file
// whose [program:NAME] sections give the `command=` supervisord starts
// (split like Python's shlex.split, then exec'd without a shell), and whose
// [include] `files=` globs name more files, relative to the including file.
// Parsing is pure; loadSupervisorPrograms reads through Host.
import path from 'node:path';
import type { TargetFs, Host } from '../host.js';
import type { Word } from '../lex/shell.js';
import { shlexSplit } from '../lex/shlex.js';

export interface SupervisorProgram {
  name: string;
  /** The command= value as written. */
  command: string;
  /** The words supervisord execs; null words hold %(...)s expansions. Null when the quoting is broken. */
  argv: Word[] | null;
  file: string;
  line: number;
}

interface IniValue {
  section: string;
  key: string;
  value: string;
  line: number;
}

/** supervisor's INI dialect: [section], key = value or key: value, ; and # comments (also inline after a blank), indented continuation lines. */
function parseIni(text: string): IniValue[] {
  const out: IniValue[] = [];
  let section = '';
  let last: IniValue | null = null;
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n]!.replace(/\r$/, '');
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith(';') || trimmed.startsWith('#')) {
      if (trimmed === '') last = null;
      continue;
    }
    const stripped = stripInlineComment(raw);
    if (/^\s/.test(raw) && last !== null) {
      last.value = `${last.value}\n${stripped.trim()}`;
      continue;
    }
    if (trimmed.startsWith('[') && trimmed.endsWith(']')) {
      section = trimmed.slice(1, -1).trim();
      last = null;
      continue;
    }
    const eq = [stripped.indexOf('='), stripped.indexOf(':')].filter((x) => x > 0).sort((a, b) => a - b)[0];
    if (eq === undefined) continue;
    last = { section, key: stripped.slice(0, eq).trim().toLowerCase(), value: stripped.slice(eq + 1).trim(), line: n + 1 };
    out.push(last);
  }
  return out;
}

/** An inline comment starts at " ;" or " #" (a comment character after whitespace). */
function stripInlineComment(line: string): string {
  for (let i = 1; i < line.length; i++) {
    if ((line[i] === ';' || line[i] === '#') && /\s/.test(line[i - 1]!)) return line.slice(0, i);
  }
  return line;
}

/** Programs and include globs of one supervisord config file. Pure. */
export function parseSupervisorConf(text: string, file: string): { programs: SupervisorProgram[]; includes: string[] } {
  const programs: SupervisorProgram[] = [];
  const includes: string[] = [];
  for (const v of parseIni(text)) {
    if (v.section === 'include' && v.key === 'files') {
      for (const g of v.value.split(/\s+/).filter(Boolean)) includes.push(path.posix.resolve(path.posix.dirname(file), g));
    }
    const m = /^program:(.+)$/.exec(v.section);
    if (m && v.key === 'command') {
      // options.py get_execv_args: shlex.split(command); its ValueError makes the program unstartable.
      const split = shlexSplit(v.value);
      const words = split.error === null ? split.tokens : null;
      // %(program_name)s and friends are expanded by supervisord at start time.
      const argv = words === null ? null : words.map((w) => (w.includes('%(') ? null : w));
      programs.push({ name: m[1]!.trim(), command: v.value, argv, file, line: v.line });
    }
  }
  return { programs, includes };
}

/** Where supervisord looks for its configuration (Debian's path first). */
export const SUPERVISOR_CONFS = ['/etc/supervisor/supervisord.conf', '/etc/supervisord.conf'];

export interface SupervisorPrograms {
  programs: SupervisorProgram[];
  read: string[];
  unreadable: string[];
}

function globPart(pattern: string): RegExp {
  const esc = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '[^/]*')
    .replace(/\?/g, '[^/]');
  return new RegExp(`^${esc}$`);
}

/** The programs of the first supervisord config that exists, its includes followed (the last path element may be a glob). */
export async function loadSupervisorPrograms(host: TargetFs): Promise<SupervisorPrograms> {
  const out: SupervisorPrograms = { programs: [], read: [], unreadable: [] };
  const seen = new Set<string>();
  const readConf = async (file: string): Promise<boolean> => {
    if (seen.has(file)) return true;
    seen.add(file);
    let text: string | null;
    try {
      text = await host.readFile(file);
    } catch {
      out.unreadable.push(file);
      return true;
    }
    if (text === null) return false;
    out.read.push(file);
    const conf = parseSupervisorConf(text, file);
    out.programs.push(...conf.programs);
    for (const inc of conf.includes) {
      const dir = path.posix.dirname(inc);
      const re = globPart(path.posix.basename(inc));
      let entries;
      try {
        entries = (await host.readDir(dir)) ?? [];
      } catch {
        out.unreadable.push(dir);
        continue;
      }
      for (const e of entries) if (re.test(e.name) && !e.isDirectory()) await readConf(path.posix.join(dir, e.name));
    }
    return true;
  };
  for (const f of SUPERVISOR_CONFS) if (await readConf(f)) break;
  return out;
}
