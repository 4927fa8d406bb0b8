// OpenVPN's configuration, read as OpenVPN 2.6 (Debian 12's 2.6.x) reads it,
// for the commands it runs when a tunnel comes up at boot. From OpenVPN's
// source (src/openvpn/options.c and argv.c, tag v2.6.14):
// - read_config_file reads the file with fgets into a buffer of
//   OPTION_LINE_SIZE (256) + 1: a line of 256 bytes or more is refused
//   ("Maximum option line length"); a UTF-8 BOM on line 1 is skipped.
// - parse_line splits a line into at most MAX_PARMS (16) parameters:
//   blanks (isspace, and NUL) separate them; "#" or ";" where a parameter
//   would start ends the line; "double" quotes may hold blanks, '#' and ';',
//   and backslash escapes; 'single' quotes hold everything literally; a
//   closing quote ends the parameter. Outside single quotes "\" escapes the
//   next character, which must be "\", '"' or a blank, else the line is
//   refused ("Bad backslash"); an unclosed quote is refused too. Every
//   refusal is M_USAGE, which stops openvpn before it runs anything.
// - bypass_doubledash: an option may be written "--name" in the file too.
// - check_inline_file: a line that is the one parameter "<tag>" starts an
//   inline file that runs up to the first line whose text after leading
//   blanks starts with "</tag>" (missing: a fatal error).
// - parse_argv: on the command line each "--name" takes the words up to the
//   next word starting with "--".
// - add_option: `config FILE` reads FILE (relative to the current directory)
//   then and there, at most 10 levels deep; `cd DIR` chdir()s then and there,
//   so a later relative `config` or script resolves against it;
//   `script-security N` is atoi(N), the last one wins; `up`, `route-up`,
//   `ipchange` and `tls-verify` take one command string (a second parameter
//   is refused), the last one wins, and ipchange/tls-verify get their ","
//   turned into " " (string_substitute).
// - argv_parse_cmd splits the command string with parse_line itself (no
//   shell: a shell runs only when the command is `/bin/sh -c ...`); when
//   that yields nothing (a refused string) the whole string is argv[0].
// - openvpn_execve (run_command.c) runs argv[0] with execve(): no PATH
//   search, a relative name is relative to the current directory; it runs
//   nothing below script-security 2 (SSEC_SCRIPTS). set_user_script checks
//   at parse time that argv[0] is an executable file, else openvpn stops.
// Pure: the files are read through the reader the caller passes.
import path from 'node:path';
import type { ByteString } from '../bytes.js';

export const OPTION_LINE_SIZE = 256;
export const OPTION_PARM_SIZE = 256;
export const MAX_PARMS = 16;
/** read_config_file's max_recursive_levels. */
export const MAX_CONFIG_LEVELS = 10;
/** SSEC_SCRIPTS: the level from which openvpn runs user scripts. */
export const SSEC_SCRIPTS = 2;

export type ScriptOption = 'up' | 'route-up' | 'ipchange' | 'tls-verify';
export const SCRIPT_OPTIONS: readonly ScriptOption[] = ['up', 'route-up', 'ipchange', 'tls-verify'];

/** Where an option was given: a configuration file's line, or the unit's command line (file null). */
export interface OptionAt {
  file: string | null;
  line: number;
}

/** C's isspace in the C locale, and the NUL parse_line's space() adds. */
const space = (c: string): boolean => c === '\0' || c === ' ' || (c >= '\t' && c <= '\r');

type LineState = 'initial' | 'unquoted' | 'dquoted' | 'squoted';

/** parse_line: the parameters of one line (none for a blank or comment line), or why openvpn refuses it. */
export function parseLine(line: string, n: number = MAX_PARMS): string[] | { refused: string } {
  const out: string[] = [];
  let state: LineState = 'initial';
  let backslash = false;
  let parm = '';
  const s = line + '\0';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (!backslash && c === '\\' && state !== 'squoted') {
      backslash = true;
      continue;
    }
    let ch = '';
    let done = false;
    if (state === 'initial') {
      if (!space(c)) {
        if (c === ';' || c === '#') break;
        if (!backslash && c === '"') state = 'dquoted';
        else if (!backslash && c === "'") state = 'squoted';
        else [ch, state] = [c, 'unquoted'];
      }
    } else if (state === 'unquoted') {
      if (!backslash && space(c)) done = true;
      else ch = c;
    } else if (state === 'dquoted') {
      if (!backslash && c === '"') done = true;
      else ch = c;
    } else if (c === "'") done = true;
    else ch = c;
    if (done) {
      out.push(parm);
      [state, parm] = ['initial', ''];
    }
    if (backslash && ch !== '' && ch !== '\0' && !(ch === '\\' || ch === '"' || space(ch)))
      return { refused: `bad backslash ("\\${ch}"): only \\\\, \\" and a backslashed blank are escapes` };
    backslash = false;
    if (ch !== '' && ch !== '\0') {
      if (parm.length >= OPTION_PARM_SIZE) return { refused: `a parameter is longer than ${OPTION_PARM_SIZE} characters` };
      parm += ch;
    }
    if (out.length >= n) break;
    if (c === '\0') break;
  }
  if (state === 'dquoted') return { refused: 'no closing quotation (")' };
  if (state === 'squoted') return { refused: "no closing single quotation (')" };
  if (state !== 'initial') return { refused: 'the line ends inside a parameter (a backslash before its end)' };
  return out;
}

/** argv_parse_cmd: the argv openvpn execs for a script's command string. */
export function argvParseCmd(command: string): string[] {
  const p = parseLine(command, MAX_PARMS);
  return Array.isArray(p) && p.length > 0 ? p : [command];
}

/** fgets' pieces of a file: each physical line with its number (the "\n" kept, as fgets keeps it). */
function physicalLines(text: string): Array<{ text: string; line: number }> {
  const pieces = text.split('\n');
  const out = pieces.map((t, i) => ({ text: i < pieces.length - 1 ? t + '\n' : t, line: i + 1 }));
  return out.at(-1)?.text === '' ? out.slice(0, -1) : out;
}

/** A script option as openvpn keeps it: the command string and where it was set. */
export interface OpenvpnScript {
  option: ScriptOption;
  command: string;
  at: OptionAt;
  /** The current directory when the option was read (set_user_script checks argv[0] there). */
  cwd: string;
}

/** What openvpn's options leave for its scripts. */
export interface OpenvpnOptions {
  /** The last of each script option. */
  scripts: OpenvpnScript[];
  scriptSecurity: { level: number; at: OptionAt } | null;
  /** The directory the scripts run in: the last `cd`, else "/" under --daemon (daemon(3) chdirs), else the unit's. */
  runDir: string;
  chroot: string | null;
  /** Configuration files read, in order. */
  read: string[];
}

/** The files openvpn reads and execs, as the caller finds them. */
export interface ConfigReader {
  /** A file's bytes, or null when it does not exist; a read that fails throws. */
  read(file: string): Promise<ByteString | null>;
  /** check_file_access(CHKACC_FILE, X_OK): a regular file (links followed) root may execute. */
  executable(file: string): Promise<boolean>;
}

export type OpenvpnRead = { options: OpenvpnOptions } | { refused: string; at: OptionAt } | { unknown: string; at: OptionAt };

/** C's atoi: leading blanks, a sign, digits. */
function atoi(s: string): number {
  const m = /^[ \t\n\v\f\r]*([+-]?\d+)/.exec(s);
  return m ? parseInt(m[1]!, 10) : 0;
}

interface ReadState {
  cwd: string;
  cdDir: string | null;
  daemon: boolean;
  chroot: string | null;
  scripts: Map<ScriptOption, OpenvpnScript>;
  scriptSecurity: { level: number; at: OptionAt } | null;
  read: string[];
  /** Files being read, outermost first: one reached again is an include loop. */
  stack: string[];
  reader: ConfigReader;
}

type Stop = { refused: string; at: OptionAt } | { unknown: string; at: OptionAt } | null;

/** add_option for the options that decide which scripts run and where; every other option is left to openvpn. */
async function addOption(st: ReadState, p: string[], at: OptionAt): Promise<Stop> {
  const [name, a1] = p;
  const one = a1 !== undefined && p.length === 2;
  if (name === 'config' && one) {
    if (a1 === 'stdin') return { unknown: 'config stdin: openvpn reads its standard input, which this scan cannot see', at };
    return readConfigFile(st, path.posix.resolve(st.cwd, a1), at);
  }
  if (name === 'cd' && one) [st.cwd, st.cdDir] = [path.posix.resolve(st.cwd, a1), path.posix.resolve(st.cwd, a1)];
  else if (name === 'script-security' && one) st.scriptSecurity = { level: atoi(a1), at };
  else if (name === 'daemon' && p.length <= 2) st.daemon = true;
  else if (name === 'chroot' && one) st.chroot = a1;
  else if (SCRIPT_OPTIONS.includes(name as ScriptOption) && a1 !== undefined) {
    if (p.length > 2) return { refused: `--${name} takes one parameter (quote the command)`, at };
    const option = name as ScriptOption;
    const command = option === 'ipchange' || option === 'tls-verify' ? a1.split(',').join(' ') : a1;
    // set_user_script -> check_cmd_access, for every script option as it is read (one later overriding it does not help).
    const prog = path.posix.resolve(st.cwd, argvParseCmd(command)[0]!);
    if (st.chroot === null && !(await st.reader.executable(prog)))
      return { refused: `--${option} script fails with '${command}': ${prog} is no executable file`, at };
    st.scripts.set(option, { option, command, at, cwd: st.cwd });
  }
  return null;
}

/** read_config_file: each line's options in turn, inline <tag> blocks skipped. */
async function readConfigFile(st: ReadState, file: string, from: OptionAt): Promise<Stop> {
  if (st.stack.includes(file)) return { unknown: `config ${file}: an include loop (${[...st.stack, file].join(' -> ')})`, at: from };
  if (st.stack.length >= MAX_CONFIG_LEVELS) return { unknown: `config ${file}: included more than ${MAX_CONFIG_LEVELS} levels deep`, at: from };
  let text: ByteString | null;
  try {
    text = await st.reader.read(file);
  } catch (e) {
    return { unknown: `config ${file} cannot be read (${(e as Error).message})`, at: from };
  }
  if (text === null) return { refused: `config ${file} does not exist ("Error opening configuration file")`, at: from };
  st.read.push(file);
  st.stack.push(file);
  const lines = physicalLines(text);
  for (let i = 0; i < lines.length; i++) {
    const { text: raw, line } = lines[i]!;
    const at = { file, line };
    if (raw.length >= OPTION_LINE_SIZE) return { refused: `the line is ${OPTION_LINE_SIZE} characters or longer`, at };
    const p = parseLine(line === 1 && raw.startsWith('\xef\xbb\xbf') ? raw.slice(3) : raw, MAX_PARMS);
    if (!Array.isArray(p)) return { ...p, at };
    if (p.length === 0) continue;
    if (p[0]!.length >= 3 && p[0]!.startsWith('--')) p[0] = p[0]!.slice(2);
    if (p.length === 1 && p[0]!.startsWith('<') && p[0]!.endsWith('>')) {
      const close = `</${p[0]!.slice(1, -1)}>`;
      const end = lines.findIndex((l, k) => k > i && l.text.replace(/^[ \t\n\v\f\r]+/, '').startsWith(close));
      if (end < 0) return { refused: `inline ${p[0]} has no ${close} ("Endtag missing")`, at };
      i = end;
      continue;
    }
    const stop = await addOption(st, p, at);
    if (stop) return stop;
  }
  st.stack.pop();
  return null;
}

/** parse_argv: the unit's words after the program, each "--name" with the words up to the next "--". */
function commandLineOptions(argv: string[]): string[][] | { refused: string } {
  if (argv.length === 1 && !argv[0]!.startsWith('--')) return [['config', argv[0]!]];
  const out: string[][] = [];
  for (let i = 0; i < argv.length;) {
    if (!argv[i]!.startsWith('--')) return { refused: `"${argv[i]!}" on the command line does not start with "--"` };
    const p = [argv[i]!.slice(2)];
    for (i++; i < argv.length && p.length < MAX_PARMS && !argv[i]!.startsWith('--'); i++) p.push(argv[i]!);
    out.push(p);
  }
  return out;
}

/**
 * The options openvpn is left with after its command line (the unit's
 * ExecStart= words after the program, specifiers resolved) and the
 * configuration files it reads, starting in `workingDirectory`.
 */
export async function readOpenvpnOptions(argv: string[], workingDirectory: string, reader: ConfigReader): Promise<OpenvpnRead> {
  const st: ReadState = {
    cwd: workingDirectory,
    cdDir: null,
    daemon: false,
    chroot: null,
    scripts: new Map(),
    scriptSecurity: null,
    read: [],
    stack: [],
    reader,
  };
  const opts = commandLineOptions(argv);
  const cmdline: OptionAt = { file: null, line: 0 };
  if (!Array.isArray(opts)) return { ...opts, at: cmdline };
  for (const p of opts) {
    const stop = await addOption(st, p, cmdline);
    if (stop) return stop;
  }
  const runDir = st.cdDir ?? (st.daemon ? '/' : workingDirectory);
  const scripts = SCRIPT_OPTIONS.flatMap((o) => (st.scripts.has(o) ? [st.scripts.get(o)!] : []));
  return { options: { scripts, scriptSecurity: st.scriptSecurity, runDir, chroot: st.chroot, read: st.read } };
}
