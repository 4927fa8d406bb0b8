// One unit-file parser (systemd.syntax(7)) for every reader of unit files:
// the unit loader, socket activation, swap units, unit links, the rehearsal.
// Pure.

export interface UnitDirective {
  section: string;
  key: string;
  value: string;
  /** Target path of the file the line is in (fragment or drop-in). */
  file: string;
  /** 1-based line of the directive's first physical line. */
  line: number;
}

/**
 * A line at which systemd's config parser stops with an error (conf-parser.c):
 * a unit whose fragment has one fails to load; of a drop-in, what came before
 * the line still applies.
 */
export interface UnitSyntaxError {
  file: string;
  line: number;
  message: string;
}

/** Parses unit-file text (systemd.syntax(7)): sections, comments, backslash continuations. */
export function parseUnitText(text: string, file: string): UnitDirective[] {
  return parseUnitFile(text, file).directives;
}

/** systemd's WHITESPACE, the only characters it strips around lines, keys and values (not a vertical tab, a form feed or a no-break space). */
const WHITESPACE = ' \t\n\r';

function strip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && WHITESPACE.includes(s[a]!)) a++;
  while (b > a && WHITESPACE.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}

/** Whether a line ends in a backslash that escapes nothing else: a continuation (an even run of backslashes is not one). */
function continues(line: string): boolean {
  let escaped = false;
  for (const ch of line) escaped = escaped ? false : ch === '\\';
  return escaped;
}

/**
 * parseUnitText, and the line systemd's parser stops at: nothing after it is
 * read. As conf-parser.c config_parse() reads: lines end at "\n", "\r\n",
 * "\r" or NUL (read_line); a line whose first non-blank character is "#" or
 * ";" is a comment, also inside a continuation; a trailing backslash becomes
 * a space and the next line is appended as it is, leading blanks included.
 */
export function parseUnitFile(text: string, file: string): { directives: UnitDirective[]; errors: UnitSyntaxError[] } {
  const out: UnitDirective[] = [];
  const errors: UnitSyntaxError[] = [];
  const lines = text.replace(/^\ufeff/, '').split(/\r\n|\r|\n|\0/);
  let section = '';
  let continuation: string | null = null;
  let start = 0;
  /** One logical line; false when systemd's parser stops at it. */
  const take = (joined: string): boolean => {
    const line = strip(joined);
    if (line === '') return true;
    if (line.startsWith('[')) {
      if (line.endsWith(']')) {
        section = line.slice(1, -1);
        return true;
      }
      errors.push({ file, line: start, message: `invalid section header '${line}'` });
      return false;
    }
    const eq = line.indexOf('=');
    if (eq > 0) out.push({ section, key: strip(line.slice(0, eq)), value: strip(line.slice(eq + 1)), file, line: start });
    return true;
  };
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const first = strip(raw)[0];
    if (first === '#' || first === ';') continue;
    if (continuation === null) start = i + 1;
    const joined: string = continuation === null ? raw : continuation + raw;
    if (continues(joined)) {
      continuation = `${joined.slice(0, -1)} `;
      continue;
    }
    continuation = null;
    if (!take(joined)) return { directives: out, errors };
  }
  // A continuation the file ends in is read as it stands.
  if (continuation !== null) take(continuation);
  return { directives: out, errors };
}

/**
 * The effective values of a list-valued setting (ListenStream=, ExecStart=,
 * Environment=) across fragment and drop-ins in order: an empty assignment
 * resets the list, as in systemd.
 */
export function effectiveList(directives: UnitDirective[], section: string, key: string): UnitDirective[] {
  let out: UnitDirective[] = [];
  for (const d of directives) {
    if (d.section !== section || d.key !== key) continue;
    if (d.value === '') out = [];
    else out.push(d);
  }
  return out;
}

/** The last assignment of a single-valued setting, or null. */
export function effectiveValue(directives: UnitDirective[], section: string, key: string): string | null {
  let v: string | null = null;
  for (const d of directives) if (d.section === section && d.key === key) v = d.value === '' ? null : d.value;
  return v;
}

const BOOLEAN_TRUE = new Set(['1', 'yes', 'y', 'true', 't', 'on']);
const BOOLEAN_FALSE = new Set(['0', 'no', 'n', 'false', 'f', 'off']);

/** systemd's parse_boolean(): its six words each way, any case; null for anything else (also ''). */
export function parseUnitBoolean(value: string): boolean | null {
  const v = value.toLowerCase();
  return BOOLEAN_TRUE.has(v) ? true : BOOLEAN_FALSE.has(v) ? false : null;
}

/**
 * The last assignment of a single-valued setting that its parser takes. For
 * settings such as Accept= (a boolean) or a socket's Service= (a .service
 * name) systemd logs "ignoring" for a value it refuses, the empty one too, and
 * the earlier value stays: unlike effectiveValue's reset.
 */
export function lastAccepted(directives: UnitDirective[], section: string, key: string, accepts: (value: string) => boolean): UnitDirective | null {
  let last: UnitDirective | null = null;
  for (const d of directives) if (d.section === section && d.key === key && accepts(d.value)) last = d;
  return last;
}

/** A boolean setting such as Accept=: the last value parse_boolean takes (one it refuses is ignored), or null when none. */
export function effectiveBoolean(directives: UnitDirective[], section: string, key: string): boolean | null {
  const at = lastAccepted(directives, section, key, (v) => parseUnitBoolean(v) !== null);
  return at === null ? null : parseUnitBoolean(at.value);
}
