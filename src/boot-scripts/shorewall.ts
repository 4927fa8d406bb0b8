// Shorewall's IP_FORWARDING, read as Shorewall 5.2 (Debian 12's 5.2.8)
// reads shorewall.conf, since its start writes the setting into
// /proc/sys/net/ipv4/ip_forward after systemd-sysctl has run:
// - Shorewall/Config.pm process_shorewall_conf reads each line with
//   read_a_line(STRIP_COMMENTS | SUPPRESS_WHITESPACE | CHECK_GUNK): `?IF`
//   and the other compiler directives are evaluated (this reader does not:
//   a file with one is unknown), a line ending in "\" continues on the next,
//   "#" to the end of the line is a comment, blank lines are skipped; no
//   INCLUDE and no embedded scripts in this file. Each remaining line must be
//   NAME=VALUE (else shorewall refuses to start); VALUE has $variables
//   expanded unless it is all in single quotes, and a value ending in a
//   double-quoted string is that string. A later line wins.
// - check_trivalue('IP_FORWARDING', 'on'): lower-cased, yes/on is on, no/off
//   is off, keep leaves the kernel's value, an empty or missing value is the
//   default on; anything else stops shorewall with an error.
// - Proc.pm setup_forwarding emits `echo 1 > /proc/sys/net/ipv4/ip_forward`
//   for on and `echo 0 > …` for off into the firewall script `shorewall
//   start` compiles and runs.
import type { ByteString } from '../bytes.js';

export const SHOREWALL_CONF = '/etc/shorewall/shorewall.conf';
export const SHOREWALL_UNIT = 'shorewall.service';

/** One NAME=VALUE line of shorewall.conf, as Config.pm keeps it, with the physical line it starts on. */
export interface ShorewallSetting {
  value: string;
  line: number;
  /** The value has $variables Shorewall expands (from its params file and the environment), which this reader does not. */
  expands: boolean;
}

export type ShorewallConf = { settings: Map<string, ShorewallSetting> } | { unknown: string; line: number };

const DIRECTIVE = /^\s*\?(?:IF|ELSE|ELSIF|ENDIF|SET|RESET|FORMAT|COMMENT|ERROR|WARNING|INFO|REQUIRE)/i;
const SETTING = /^\s*([a-zA-Z]\w*)=(.*)$/;

/** Logical lines of shorewall.conf: continuations joined, comments and blanks dropped, each with its first line number. */
function logicalLines(text: string): Array<{ text: string; line: number }> | { unknown: string; line: number } {
  const out: Array<{ text: string; line: number }> = [];
  let current = '';
  let first = 0;
  const physical = text.split('\n');
  if (physical.at(-1) === '') physical.pop();
  for (const [i, raw] of physical.entries()) {
    if (DIRECTIVE.test(raw)) return { unknown: `${raw.trim()} is a Shorewall compiler directive, which this reader does not evaluate`, line: i + 1 };
    if (first === 0) first = i + 1;
    const piece = /\\\s*#.*$/.test(raw) ? raw.replace(/\s*#.*$/, '') : raw;
    current += piece;
    if (current.endsWith('\\')) {
      current = current.slice(0, -1);
      continue;
    }
    const stripped = current.replace(/\s*#.*$/, '').replace(/\s*$/, '');
    if (stripped.trim() !== '') out.push({ text: stripped, line: first });
    current = '';
    first = 0;
  }
  return out;
}

/** Pure: the settings shorewall.conf leaves, or why they cannot be judged. */
export function readShorewallConf(text: ByteString): ShorewallConf {
  const lines = logicalLines(text);
  if (!Array.isArray(lines)) return lines;
  const settings = new Map<string, ShorewallSetting>();
  for (const { text: l, line } of lines) {
    // Config.pm tests `$options && CHECK_GUNK`, so every line of the file is checked, after its comment is gone.
    if (/[^\t\n\v\f\r\x20-\x7e]/.test(l)) return { unknown: 'the line holds bytes Shorewall refuses ("Non-ASCII gunk in file")', line };
    const m = SETTING.exec(l);
    if (!m) return { unknown: `"${l.trim()}" is no NAME=VALUE line: shorewall refuses to start ("Unrecognized shorewall.conf entry")`, line };
    const [, name, raw] = m as unknown as [string, string, string];
    const dq = /"([^"]*)"$/.exec(raw);
    settings.set(name, { value: dq ? dq[1]! : raw, line, expands: !/^'.*'$/.test(raw) && raw.includes('$') });
  }
  return { settings };
}

export type Forwarding = { writes: '1' | '0' | null; line: number | null } | { unknown: string; line: number };

/** Pure: what shorewall's start writes to net.ipv4.ip_forward (null: keep), with the line that decides (null: the default). */
export function ipForwarding(conf: ShorewallConf): Forwarding {
  if ('unknown' in conf) return conf;
  const s = conf.settings.get('IP_FORWARDING');
  if (s?.expands) return { unknown: `IP_FORWARDING=${s.value} expands variables, which this reader does not evaluate`, line: s.line };
  const v = (s?.value ?? '').toLowerCase();
  const line = s?.line ?? null;
  if (v === '' || v === 'yes' || v === 'on') return { writes: '1', line };
  if (v === 'no' || v === 'off') return { writes: '0', line };
  if (v === 'keep') return { writes: null, line };
  return { unknown: `IP_FORWARDING=${s!.value} is none of On, Off, Keep: shorewall refuses to start ("Invalid value")`, line: s!.line };
}
