// Which OpenVPN instances start at boot on Debian, and with which command
// line, read from the units Debian 12's openvpn 2.6 package ships:
// - openvpn@NAME.service: `openvpn --daemon ovpn-%i --status ... --cd
//   /etc/openvpn --config /etc/openvpn/%i.conf ...`, WorkingDirectory=/etc/openvpn;
// - openvpn-server@NAME.service: `--config %i.conf` in WorkingDirectory=/etc/openvpn/server;
// - openvpn-client@NAME.service: `--config %i.conf` in WorkingDirectory=/etc/openvpn/client.
// An instance starts at boot when it is enabled (a .wants link), and also
// through the package's /lib/systemd/system-generators/openvpn-generator:
// while openvpn.service starts at boot (its postinst enables it), the
// generator links openvpn@NAME.service into openvpn.service.wants for each
// NAME in /etc/default/openvpn's AUTOSTART, or for every /etc/openvpn/*.conf
// when AUTOSTART is "all" (its default) or empty; "none" links nothing.
import path from 'node:path';
import type { TargetFs } from '../host.js';
import type { ByteString } from '../bytes.js';
import type { UnitFile } from '../systemd/socket-unit.js';
import { parseExecLine } from '../systemd/exec-command.js';
import { effectiveList, type UnitDirective } from '../systemd/unit-file.js';
import { sourcedValue } from './sysctl-file-writers.js';

export const OPENVPN_TEMPLATES = ['openvpn', 'openvpn-server', 'openvpn-client'];
export const OPENVPN_GENERATOR = ['/lib/systemd/system-generators/openvpn-generator', '/usr/lib/systemd/system-generators/openvpn-generator'];
export const OPENVPN_DEFAULTS = '/etc/default/openvpn';
export const OPENVPN_CONFIG_DIR = '/etc/openvpn';

export interface OpenvpnInstance {
  unit: string;
  template: string;
  instance: string;
  why: string;
}

export interface UnitUnknown {
  file: string;
  line: number;
  message: string;
}

/** The instance of an openvpn template unit name, or null. */
export function openvpnInstanceOf(unit: string): { template: string; instance: string } | null {
  const m = /^(openvpn(?:-server|-client)?)@(.+)\.service$/.exec(unit);
  return m ? { template: m[1]!, instance: m[2]! } : null;
}

/** What openvpn-generator links, from /etc/default/openvpn (null: absent) and the names in /etc/openvpn. */
export function generatorNames(defaults: ByteString | null, confNames: string[]): string[] | UnitUnknown {
  const v = sourcedValue([{ file: OPENVPN_DEFAULTS, text: defaults }], 'AUTOSTART');
  if (v !== null && 'unknown' in v) return { file: v.file, line: v.line, message: `openvpn-generator reads AUTOSTART: ${v.unknown}` };
  const autostart = v === null ? 'all' : v.value;
  if (autostart === 'none') return [];
  // `ls *.conf` in a backquote: names split on blanks, dot-files not matched; NAME=${CONFIG%%.conf}.
  const all = confNames.filter((n) => n.endsWith('.conf') && !n.startsWith('.') && !/[\s]/.test(n)).map((n) => n.slice(0, -'.conf'.length));
  if (autostart === 'all' || autostart === '') return all.sort();
  // `for NAME in $AUTOSTART`, linked when $CONFIG_DIR/$NAME.conf exists.
  return autostart.split(/[ \t\n]+/).filter((n) => n !== '' && confNames.includes(`${n}.conf`));
}

/** The instances of the three templates that start at boot: enabled ones, then the generator's. */
export async function openvpnBootInstances(host: TargetFs, enabled: Map<string, string>): Promise<{ instances: OpenvpnInstance[]; unknown: UnitUnknown[] }> {
  const instances: OpenvpnInstance[] = [];
  for (const [unit, why] of enabled) {
    const m = openvpnInstanceOf(unit);
    if (m) instances.push({ unit, ...m, why });
  }
  const unknown: UnitUnknown[] = [];
  const parent = enabled.get('openvpn.service');
  let generator = false;
  for (const g of OPENVPN_GENERATOR) if ((await host.lstat(g)) !== null) generator = true;
  if (parent === undefined || !generator) return { instances, unknown };
  let names: string[] | UnitUnknown;
  try {
    const conf = ((await host.readDir(OPENVPN_CONFIG_DIR)) ?? []).map((e) => e.name);
    names = generatorNames(await host.readBytes(OPENVPN_DEFAULTS), conf);
  } catch (e) {
    names = { file: OPENVPN_DEFAULTS, line: 0, message: `openvpn-generator's inputs cannot be read (${(e as Error).message})` };
  }
  if (!Array.isArray(names)) return { instances, unknown: [names] };
  for (const instance of names) {
    const unit = `openvpn@${instance}.service`;
    if (!instances.some((i) => i.unit === unit))
      instances.push({
        unit,
        template: 'openvpn',
        instance,
        why: `openvpn-generator links it into openvpn.service.wants (${OPENVPN_DEFAULTS} AUTOSTART), and openvpn.service: ${parent}`,
      });
  }
  return { instances, unknown };
}

/** systemd's unit_name_unescape for %I: "-" is "/", "\xNN" the byte; null for anything else escaped. */
function unescapeInstance(s: string): string | null {
  if (s.includes('\\') && !/^(?:[^\\]|\\x[0-9a-fA-F]{2})*$/.test(s)) return null;
  return s.replace(/-/g, '/').replace(/\\x([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** A value with the specifiers these units use resolved (%i, %I, %t, %%); null when it holds another one. */
export function resolveSpecifiers(value: string, instance: string): string | null {
  const unescaped = unescapeInstance(instance);
  let bad = false;
  const out = value.replace(/%(.)/g, (all, c: string) => {
    if (c === '%') return '%';
    if (c === 'i') return instance;
    if (c === 'I' && unescaped !== null) return unescaped;
    if (c === 't') return '/run';
    bad = true;
    return all;
  });
  return bad ? null : out;
}

export interface OpenvpnCommand {
  /** The words after the program. */
  argv: string[];
  workingDirectory: string;
  directive: UnitDirective;
}

/** The unit's ExecStart= that runs openvpn, with its words and working directory; null when none runs openvpn; or why it cannot be read. */
export function openvpnCommandOf(u: UnitFile, instance: string): OpenvpnCommand | UnitUnknown | null {
  for (const d of effectiveList(u.directives, 'Service', 'ExecStart')) {
    const value = resolveSpecifiers(d.value, instance);
    const cmd = value === null ? null : parseExecLine(value);
    if (value !== null && (cmd === null || cmd.path === null || path.posix.basename(cmd.path) !== 'openvpn')) continue;
    const words = cmd?.argv.slice(1) ?? [];
    if (cmd === null || words.some((w) => w === null))
      return { file: d.file, line: d.line, message: `${u.name}: ExecStart=${d.value} holds a word known only when the unit starts` };
    const wd = effectiveList(u.directives, 'Service', 'WorkingDirectory').at(-1);
    const dir = wd === undefined ? '/' : resolveSpecifiers(wd.value.replace(/^-/, ''), instance);
    if (dir === null || !dir.startsWith('/'))
      return { file: wd!.file, line: wd!.line, message: `${u.name}: WorkingDirectory=${wd!.value} is not a directory this scan resolves` };
    return { argv: words as string[], workingDirectory: dir, directive: d };
  }
  return null;
}
