// Parsers of what `systemctl` prints: list-sockets lines, show properties,
// and the timespan syntax of its time properties. Pure.
import { listenStreamPort } from '../ports/socket-units.js';

/** `systemctl list-sockets` lines: LISTEN UNIT ACTIVATES... Pure. */
export function parseListSockets(text: string): { listen: string; port: number | null; unit: string; activates: string[] }[] {
  const out: { listen: string; port: number | null; unit: string; activates: string[] }[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 2 || !f[1]!.endsWith('.socket')) continue;
    out.push({
      listen: f[0]!,
      port: listenStreamPort(f[0]!),
      unit: f[1]!,
      activates: f.slice(2).flatMap((a) => a.split(',')).filter((a) => a.endsWith('.service')),
    });
  }
  return out;
}

/** The systemd timespan syntax of RestartUSec= ("100ms", "5s", "1min 30s") in ms; null when unparsable. */
export function parseTimespanMs(text: string): number | null {
  const t = text.trim();
  if (t === '' || t === 'infinity') return null;
  const units: Record<string, number> = {
    us: 0.001, usec: 0.001, µs: 0.001,
    ms: 1, msec: 1,
    s: 1000, sec: 1000, second: 1000, seconds: 1000,
    m: 60_000, min: 60_000, minute: 60_000, minutes: 60_000,
    h: 3_600_000, hr: 3_600_000, hour: 3_600_000, hours: 3_600_000,
    d: 86_400_000, day: 86_400_000, days: 86_400_000,
  };
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000; // bare number = seconds
  let total = 0;
  const re = /(\d+(?:\.\d+)?)\s*([a-zµ]+)/gy;
  const compact = t.replace(/\s+/g, ' ');
  let pos = 0;
  while (pos < compact.length) {
    if (compact[pos] === ' ') {
      pos++;
      continue;
    }
    re.lastIndex = pos;
    const m = re.exec(compact);
    if (!m) return null;
    const factor = units[m[2]!];
    if (factor === undefined) return null;
    total += Number(m[1]) * factor;
    pos = re.lastIndex;
  }
  return Math.round(total);
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
