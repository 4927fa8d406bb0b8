// deb822 stanzas (deb822(5)) as dpkg reads its status file (lib/dpkg/parse.c):
// stanzas separated by one or more empty lines (a line of only spaces or
// tabs is not one: it starts with a blank, so dpkg takes it as a
// continuation, warning "blank line in value of field"), a field `Name: value` whose name runs to the first
// colon and is compared case-insensitively, and continuation lines that start
// with a space or a tab. A line that is none of these is an error with its
// line number: dpkg refuses such a file rather than guess. Pure.

export interface Stanza {
  /** Field names lowercased -> the value: the first line's text after the colon and each continuation line after a newline, trimmed at both ends. */
  fields: Map<string, string>;
  /** 1-based line of the stanza's first field. */
  line: number;
}

export type Deb822 = { ok: true; stanzas: Stanza[] } | { ok: false; line: number; reason: string };

export function parseDeb822(text: string): Deb822 {
  const stanzas: Stanza[] = [];
  let current: Stanza | null = null;
  let last: string | null = null;
  const lines = text.split('\n');
  // A final newline ends the last line; it starts none.
  if (lines.at(-1) === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') {
      current = null;
      last = null;
      continue;
    }
    if (line[0] === ' ' || line[0] === '\t') {
      if (current === null || last === null) return { ok: false, line: i + 1, reason: 'a continuation line outside a field' };
      current.fields.set(last, `${current.fields.get(last)!}\n${line.slice(1)}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) return { ok: false, line: i + 1, reason: colon === 0 ? 'a field with an empty name' : 'a line that is no field (no colon)' };
    const name = line.slice(0, colon).toLowerCase();
    if (current === null) {
      current = { fields: new Map(), line: i + 1 };
      stanzas.push(current);
    }
    if (current.fields.has(name)) return { ok: false, line: i + 1, reason: `a duplicate field ${line.slice(0, colon)}` };
    current.fields.set(name, line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, ''));
    last = name;
  }
  // dpkg trims the end of a whole value: blank continuation lines after it go too.
  for (const st of stanzas) for (const [k, v] of st.fields) st.fields.set(k, v.replace(/[ \t\n]+$/, ''));
  return { ok: true, stanzas };
}

/** dpkg's package states (dpkg-query(1)) in which a package's files are on the disk, wholly or partly. */
const FILES_PRESENT = new Set(['installed', 'half-configured', 'unpacked', 'half-installed', 'triggers-awaited', 'triggers-pending']);

/**
 * The packages of a dpkg status file whose files are (at least partly) on
 * the disk, by name, with their Status and the stanza's line.
 */
export function installedPackages(stanzas: Stanza[]): Map<string, { status: string; line: number }> {
  const out = new Map<string, { status: string; line: number }>();
  for (const s of stanzas) {
    const name = s.fields.get('package');
    const status = s.fields.get('status');
    if (name === undefined || status === undefined) continue;
    const state = status.split(/[ \t]+/)[2];
    if (state !== undefined && FILES_PRESENT.has(state)) out.set(name, { status, line: s.line });
  }
  return out;
}
