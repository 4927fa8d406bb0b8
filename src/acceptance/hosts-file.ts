// /etc/hosts as Go's resolver reads it (net/hosts.go): text from "#" on is a
// comment; a line is an address and its names, split on blanks; a line whose
// first field is no IP address is skipped; names compare case-insensitively,
// without a trailing dot. Pure.
import { isIP } from 'node:net';

/** Go's parseLiteralIP: an IPv6 address may carry a zone ("fe80::1%eth0"). */
const isAddress = (field: string): boolean => isIP(field.split('%')[0]!) !== 0;

const canonical = (name: string): string => (name.endsWith('.') ? name.slice(0, -1) : name).toLowerCase();

/** The 1-based line of /etc/hosts that gives `name` an address, or null. */
export function hostsFileLine(text: string, name: string): number | null {
  const want = canonical(name);
  const lines = text.split('\n');
  for (const [i, raw] of lines.entries()) {
    const hash = raw.indexOf('#');
    const fields = (hash < 0 ? raw : raw.slice(0, hash)).split(/[ \t\r]+/).filter((f) => f !== '');
    if (fields.length < 2 || !isAddress(fields[0]!)) continue;
    if (fields.slice(1).some((f) => canonical(f) === want)) return i + 1;
  }
  return null;
}
