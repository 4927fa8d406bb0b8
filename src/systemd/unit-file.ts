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

/** parseUnitText, and the line systemd's parser stops at: nothing after it is read. */
export function parseUnitFile(text: string, file: string): { directives: UnitDirective[]; errors: UnitSyntaxError[] } {
  const out: UnitDirective[] = [];
  const errors: UnitSyntaxError[] = [];
  const lines = text.split('\n');
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const start = i + 1;
    let line = lines[i]!.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    // A trailing backslash joins the next line (replaced by a space); comment
    // lines inside a continuation are skipped, as systemd does.
    while (line.endsWith('\\') && i + 1 < lines.length) {
      line = line.slice(0, -1);
      let next = lines[++i]!.trim();
      while ((next.startsWith('#') || next.startsWith(';')) && i + 1 < lines.length) next = lines[++i]!.trim();
      line = `${line} ${next}`;
    }
    if (line.startsWith('[')) {
      if (line.endsWith(']')) {
        section = line.slice(1, -1);
        continue;
      }
      errors.push({ file, line: start, message: `invalid section header '${line}'` });
      break;
    }
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    out.push({ section, key: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim(), file, line: start });
  }
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
