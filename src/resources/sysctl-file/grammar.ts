// The grammar of SysctlFile's own values: the keys and the string values it
// writes into a sysctl.d file and /proc/sys. Pure; each returns the reason a
// value is refused (null: accepted).

/**
 * Characters of one sysctl key segment: kernel table names use
 * [A-Za-z0-9_-] (plus ':' and '@' in a few), and interface names in
 * net.*.conf.IFNAME may hold more (dev_valid_name() refuses only '/', ':'
 * and blanks); '+' and '%' are the other ones seen there. Glob characters,
 * '=', '#', ';', quotes and backslashes are excluded: they mean something to
 * sysctl.d's parser.
 */
const SEGMENT_CHAR = /^[A-Za-z0-9_:@+%-]$/;

/**
 * sysctl.d(5): the first separator decides the form. "a.b.c" is dotted and
 * a "/" inside a segment stands for a "." of the name (eth0/100 is
 * eth0.100); "a/b/c" is slashed and "." is a plain character.
 */
export function sysctlKeyProblem(key: string): string | null {
  if (key.length === 0) return 'is empty; expected a key like net.ipv4.ip_forward';
  if (key.length > 255) return 'is longer than 255 characters';
  if (key.startsWith('.') || key.startsWith('/')) return 'must not begin with a separator';
  if (key.startsWith('-')) return "must not begin with '-' (sysctl.d reads a leading '-' as \"ignore failure\")";
  const first = key.search(/[./]/);
  const sep = first < 0 || key[first] === '.' ? '.' : '/';
  const other = sep === '.' ? '/' : '.';
  const segments = key.split(sep);
  for (const [i, seg] of segments.entries()) {
    if (seg === '') return i === segments.length - 1 ? 'must not end with a separator' : 'has an empty segment';
    // The entry name the kernel sees must not be "." or "..".
    const entry = sep === '.' ? seg.split('/').join('.') : seg;
    if (entry === '.' || entry === '..') return `has a "${entry}" segment; a key names one entry under /proc/sys`;
    for (const ch of seg) {
      if (ch === other) continue;
      if (!SEGMENT_CHAR.test(ch)) return `has the character ${JSON.stringify(ch)}; segments are letters, digits and _ : @ + % -`;
    }
  }
  return null;
}

/**
 * A value is written as `key = value` into a sysctl.d file and into
 * /proc/sys. Control characters would end the line, add one, or be written
 * raw into the kernel; "#" and ";" start comments; blanks at either end are
 * stripped by both sysctl programs, so the value read back would differ.
 */
export function sysctlStringValueProblem(value: string): string | null {
  if (value.length === 0) return 'must not be empty';
  if (value.length > 4096) return 'is longer than 4096 characters';
  // eslint-disable-next-line no-control-regex
  const ctl = /[\u0000-\u001f\u007f]/.exec(value);
  if (ctl) return `contains the control character ${JSON.stringify(ctl[0])}; a value is one line of printable text`;
  if (/[#;]/.test(value)) return "must not contain '#' or ';' (comment characters in sysctl.d)";
  if (value !== value.trim()) return 'must not begin or end with blanks (sysctl strips them)';
  return null;
}
