// Sysctl files a boot unit applies from a setting in its own configuration:
// the unit's program runs `sysctl -p "$VAR"` where VAR comes from a shell
// file it sources, so the scan cannot see the file from the command line.
// Each writer is described by what its package ships (read from the package,
// not guessed): the unit, the configuration files it sources in order, the
// variable naming the sysctl file, and the variable that must say the
// program is on. A writer found is a `sysctl-load` hit like a script's
// `sysctl -p FILE`, so it is judged, resolved (conflict_policy: resolve)
// and withdrawn the same way (resources/boot-script-hook.ts).
//
// ufw 0.36.2 (Debian 12 and 13): ufw.service runs `/lib/ufw/ufw-init start
// quiet`, which sources /etc/ufw/ufw.conf and exits at once when ENABLED=no;
// otherwise ufw-init-functions sources /etc/default/ufw then
// /etc/ufw/ufw.conf and, in ufw_start when ENABLED is yes or YES, runs
// `sysctl -e -q -p $IPT_SYSCTL` when IPT_SYSCTL names a non-empty file
// (Debian ships IPT_SYSCTL=/etc/ufw/sysctl.conf, keys with "/").
import path from 'node:path';
import type { TargetFs } from '../host.js';
import type { ByteString } from '../bytes.js';
import { shellSimpleCommandsAt, shellTokens, type ShellToken } from '../lex/shell.js';
import { ShellVariables } from '../lex/shell-variables.js';

export interface SysctlFileWriter {
  unit: string;
  /** The program ExecStart= runs (its basename is checked, so a package's /usr/lib path is the same writer). */
  program: string;
  /** Shell files the program sources, in order: a later assignment wins. */
  config: string[];
  /** The variable naming the file, as the program passes it unquoted to sysctl -p. */
  fileVar: string;
  /** The variable that must hold one of `on` for the program to apply the file. */
  enabledVar: string;
  on: string[];
  /** The sysctl command line, for the plan's text. */
  command: string;
}

export const SYSCTL_FILE_WRITERS: SysctlFileWriter[] = [
  {
    unit: 'ufw.service',
    program: '/lib/ufw/ufw-init',
    config: ['/etc/default/ufw', '/etc/ufw/ufw.conf'],
    fileVar: 'IPT_SYSCTL',
    enabledVar: 'ENABLED',
    on: ['yes', 'YES'],
    command: 'sysctl -e -q -p',
  },
];

/** A variable as the sourced files leave it: its value and where, null when unset; `unknown` when the text does not fix it. */
export type ConfigValue = { value: string; file: string; line: number } | null | { unknown: string; file: string; line: number };

/**
 * The value of `name` after sourcing `files` in order, read with the shell
 * grammar (lex/shell.ts, lex/shell-variables.ts): the last file that assigns
 * it decides. A value the text alone does not fix is unknown.
 */
export function sourcedValue(files: Array<{ file: string; text: ByteString | null }>, name: string): ConfigValue {
  let out: ConfigValue = null;
  for (const { file, text } of files) {
    if (text === null) continue;
    const commands = shellSimpleCommandsAt(text, shellTokens(text));
    const tokens = commands.flatMap((c) =>
      c.words.length === 0 ? (c.assignments ?? []) : DECLARERS.has(c.words[0] ?? '') ? (c.wordTokens ?? []).filter((t) => t.assignment) : [],
    );
    const last = tokens.filter((t) => assignedName(text, t) === name).at(-1);
    if (last === undefined) continue;
    const line = text.slice(0, last.at).split('\n').length;
    const v = new ShellVariables(commands).value(name, text.length);
    out = v === null ? { unknown: `${name} is set at ${file}:${line} to a value the text alone does not fix`, file, line } : { value: v, file, line };
  }
  return out;
}

const DECLARERS = new Set(['export', 'readonly']);

/** The NAME of a NAME=value token: the raw text up to "=" (shell.ts judged it an assignment). */
function assignedName(text: string, t: ShellToken): string | null {
  return /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(text.slice(t.at, t.end))?.[1] ?? null;
}

export interface WriterFound {
  writer: SysctlFileWriter;
  /** The file it applies (absolute), where the variable is set. */
  file: string;
  at: { file: string; line: number };
}

/** Why a writer's setting cannot be judged, naming file and line. */
export interface WriterUnknown {
  writer: SysctlFileWriter;
  file: string;
  line: number;
  message: string;
}

/** Reads a writer's configuration: the file it applies at boot, nothing (off, unset, empty), or an unknown. */
export async function readWriter(host: TargetFs, w: SysctlFileWriter): Promise<WriterFound | WriterUnknown | null> {
  const files: Array<{ file: string; text: ByteString | null }> = [];
  for (const f of w.config) {
    try {
      files.push({ file: f, text: await host.readBytes(f) });
    } catch (e) {
      return { writer: w, file: f, line: 0, message: `${w.unit} sources ${f} at boot, which cannot be read (${(e as Error).message})` };
    }
  }
  const enabled = sourcedValue(files, w.enabledVar);
  if (enabled === null) return null;
  if ('unknown' in enabled) return { writer: w, file: enabled.file, line: enabled.line, message: `${w.unit}: ${enabled.unknown}` };
  if (!w.on.includes(enabled.value)) return null;
  const named = sourcedValue(files, w.fileVar);
  if (named === null) return null;
  if ('unknown' in named)
    return { writer: w, file: named.file, line: named.line, message: `${w.unit}: ${named.unknown}; it names the file ${w.command} applies at boot` };
  if (named.value === '') return null;
  // Unquoted in the program: a value with blanks or glob characters is split or expanded at run time.
  if (/[\s*?[]/.test(named.value) || !named.value.startsWith('/'))
    return {
      writer: w,
      file: named.file,
      line: named.line,
      message: `${w.unit}: ${w.fileVar}=${named.value} at ${named.file}:${named.line} is split, globbed or relative when ${w.command} $${w.fileVar} runs; which files it applies is not judged`,
    };
  return { writer: w, file: path.posix.normalize(named.value), at: { file: named.file, line: named.line } };
}
