// Parsers of what `systemctl` prints: list-sockets lines, show properties,
// and the timespan syntax of its time properties. Pure.
import { listenStreamPort } from './socket-unit.js';

/** A socket `systemctl list-sockets` lists; `type` is its TYPE column under --show-types (Stream, Datagram, ...), else null. */
export interface ListedSocket {
  listen: string;
  type: string | null;
  port: number | null;
  unit: string;
  activates: string[];
}

/**
 * `systemctl list-sockets` lines: LISTEN UNIT ACTIVATES..., or with --show-types LISTEN TYPE UNIT ACTIVATES...
 * (TYPE is socket_port_type_to_string's word: Stream, Datagram, SequentialPacket, FIFO, ...). Pure.
 */
export function parseListSockets(text: string): ListedSocket[] {
  const out: ListedSocket[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    const at = f[1]?.endsWith('.socket') ? 1 : f[2]?.endsWith('.socket') ? 2 : -1;
    if (at < 0) continue;
    out.push({
      listen: f[0]!,
      type: at === 2 ? f[1]! : null,
      port: listenStreamPort(f[0]!),
      unit: f[at]!,
      activates: f
        .slice(at + 1)
        .flatMap((a) => a.split(','))
        .filter((a) => a.endsWith('.service')),
    });
  }
  return out;
}

// systemd's time-util.c extract_multiplier table, in its order: the first
// suffix the text starts with wins ("months" before "ms" before "m").
const TIMESPAN_UNITS_MS: ReadonlyArray<readonly [string, number]> = [
  ['seconds', 1000],
  ['second', 1000],
  ['sec', 1000],
  ['s', 1000],
  ['minutes', 60_000],
  ['minute', 60_000],
  ['min', 60_000],
  ['months', 2_629_800_000],
  ['month', 2_629_800_000],
  ['M', 2_629_800_000],
  ['msec', 1],
  ['ms', 1],
  ['m', 60_000],
  ['hours', 3_600_000],
  ['hour', 3_600_000],
  ['hr', 3_600_000],
  ['h', 3_600_000],
  ['days', 86_400_000],
  ['day', 86_400_000],
  ['d', 86_400_000],
  ['weeks', 604_800_000],
  ['week', 604_800_000],
  ['w', 604_800_000],
  ['years', 31_557_600_000],
  ['year', 31_557_600_000],
  ['y', 31_557_600_000],
  ['usec', 0.001],
  ['us', 0.001],
  ['\u03bcs', 0.001],
  ['\u00b5s', 0.001],
];

const isBlank = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/**
 * A systemd timespan (RestartUSec= as `systemctl show` prints it: "100ms",
 * "1min 30s", "2w 3d") in ms, read as systemd's parse_sec does: numbers with
 * optional decimals, each followed by an optional unit (seconds when none),
 * summed. Null for "infinity" and for what systemd refuses.
 */
export function parseTimespanMs(text: string): number | null {
  let p = 0;
  const skipBlanks = () => {
    while (isBlank(text[p])) p++;
  };
  skipBlanks();
  if (text.startsWith('infinity', p)) return null;
  let total = 0;
  let something = false;
  for (;;) {
    skipBlanks();
    if (p >= text.length) return something ? Math.round(total) : null;
    const start = p;
    while (isDigit(text[p])) p++;
    const intEnd = p;
    if (text[p] === '.') {
      p++;
      while (isDigit(text[p])) p++;
    } else if (intEnd === start) return null;
    const number = Number(`0${text.slice(start, intEnd)}.${text.slice(intEnd + 1, p)}0`);
    let q = p;
    while (isBlank(text[q])) q++;
    const unit = TIMESPAN_UNITS_MS.find(([suffix]) => text.startsWith(suffix, q));
    // No unit and more text straight after the number ("12.34.56") is refused; "5 5" is two numbers.
    if (!unit && q === p && q < text.length) return null;
    p = unit ? q + unit[0].length : q;
    total += number * (unit ? unit[1] : 1000);
    something = true;
  }
}

/** `systemctl show -p A -p B UNIT` output: one KEY=VALUE per line. Pure. */
export function parseShowProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out.set(line.slice(0, eq), line.slice(eq + 1).trim());
  }
  return out;
}
