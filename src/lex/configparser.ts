// Python's configparser.RawConfigParser reading a file (CPython 3.11,
// Lib/configparser.py RawConfigParser._read and _join_multiline_values),
// parameterised as its constructor is, for the programs whose own files are
// read with it (tuned's profiles, tuned-main.conf and recommend files: see
// src/boot-scripts/tuned.ts). Pure: text in, sections out, each option with
// the line it starts on.
//
// What _read does, line by line (a file opened in text mode: "\r\n" and "\r"
// are already "\n", and only "\n" ends a line):
// - an inline comment starts at a prefix found at column 0 or after a
//   whitespace character (str.isspace); a line whose stripped text starts
//   with a full-line comment prefix is all comment;
// - what is left, stripped, empty: with empty_lines_in_values a blank line
//   (no comment on it) is added to the value being read, else it ends it;
// - a line indented deeper than the option line it follows continues that
//   option's value (never a section header's);
// - otherwise "[...]" (SECTCRE: `\[(?P<header>.+)\]`, matched at the start,
//   the last "]" closing) opens a section (the default section's name opens
//   the defaults; a repeated name reopens it, an error only when strict);
// - before any section: MissingSectionHeaderError;
// - an option line: `(.*?)\s*(delimiter)\s*(.*)$` (or without a delimiter
//   when allow_no_value); the name rstripped and passed to optionxform; a
//   repeated name replaces the earlier value (an error only when strict);
//   a line that matches nothing is a ParsingError, raised once the file is
//   read (so is an empty option name).
// Values are the pieces joined with "\n", right-stripped.

/** str.isspace's characters (Unicode White_Space and the bidi classes B, S, WS), as CPython's _PyUnicode_IsWhitespace lists them. */
const PY_SPACE_CHARS =
  ' \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';
const PY_SPACE = new Set(PY_SPACE_CHARS);
/** Python re's \s on a str pattern (the characters str.isspace accepts), as a JS class body. */
const S = [...PY_SPACE_CHARS].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

const isSpace = (c: string | undefined): boolean => c !== undefined && PY_SPACE.has(c);

/** str.strip() with no argument. */
export function pyStrip(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isSpace(s[a])) a++;
  while (b > a && isSpace(s[b - 1])) b--;
  return s.slice(a, b);
}

function pyRstrip(s: string): string {
  let b = s.length;
  while (b > 0 && isSpace(s[b - 1])) b--;
  return s.slice(0, b);
}

export interface ConfigParserOptions {
  delimiters: readonly string[];
  commentPrefixes: readonly string[];
  inlineCommentPrefixes: readonly string[];
  strict: boolean;
  allowNoValue: boolean;
  emptyLinesInValues: boolean;
  defaultSection: string;
  /** optionxform: Python's default lower-cases; `str` keeps the name. */
  optionxform: (name: string) => string;
}

export const CONFIGPARSER_DEFAULTS: ConfigParserOptions = {
  delimiters: ['=', ':'],
  commentPrefixes: ['#', ';'],
  inlineCommentPrefixes: [],
  strict: true,
  allowNoValue: false,
  emptyLinesInValues: true,
  defaultSection: 'DEFAULT',
  optionxform: (n) => n.toLowerCase(),
};

export interface IniOption {
  /** null: a valueless option (allow_no_value). */
  value: string | null;
  /** The line the option's name is on (1-based). */
  line: number;
}

export type IniOptions = Map<string, IniOption>;

export interface IniFile {
  defaults: IniOptions;
  /** In the order they first appear; a reopened section keeps its place. */
  sections: Map<string, IniOptions>;
}

export type IniRead = { ok: IniFile } | { error: string; line: number };

/** Where the line's comment starts, as _read finds it, or null. */
function commentStart(line: string, o: ConfigParserOptions): number | null {
  let start = Infinity;
  let prefixes = new Map<string, number>(o.inlineCommentPrefixes.map((p) => [p, -1]));
  while (start === Infinity && prefixes.size > 0) {
    const next = new Map<string, number>();
    for (const [p, from] of prefixes) {
      const i = line.indexOf(p, from + 1);
      if (i === -1) continue;
      next.set(p, i);
      if (i === 0 || isSpace(line[i - 1])) start = Math.min(start, i);
    }
    prefixes = next;
  }
  if (o.commentPrefixes.some((p) => pyStrip(line).startsWith(p))) start = 0;
  return start === Infinity ? null : start;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Pure: the file as RawConfigParser.read_file leaves it, or the error it raises (the first line in error). */
export function readConfigParser(text: string, options: Partial<ConfigParserOptions> = {}): IniRead {
  const o = { ...CONFIGPARSER_DEFAULTS, ...options };
  const d = o.delimiters.map(escapeRe).join('|');
  // Python's `.` is anything but "\n" (JS's also stops at "\r", U+2028 and U+2029), its \s str.isspace's set.
  const optcre = new RegExp(o.allowNoValue ? `^([^\\n]*?)[${S}]*(?:(${d})[${S}]*([^\\n]*))?$` : `^([^\\n]*?)[${S}]*(${d})[${S}]*([^\\n]*)$`, 'u');
  const file: IniFile = { defaults: new Map(), sections: new Map() };
  const pieces = new Map<IniOption, string[]>();
  const added = new Set<string>();
  let cursect: IniOptions | null = null;
  let sectname: string | null = null;
  let optname: string | null = null;
  let indent = 0;
  let error: { error: string; line: number } | null = null;
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const [i, line] of lines.entries()) {
    const lineno = i + 1;
    const cs = commentStart(line, o);
    const value = pyStrip(cs === null ? line : line.slice(0, cs));
    if (value === '') {
      if (!o.emptyLinesInValues) indent = Infinity;
      else if (cs === null && cursect !== null && optname) {
        const opt = cursect.get(optname);
        if (opt && opt.value !== null) pieces.get(opt)!.push('');
      }
      continue;
    }
    let cur = 0;
    while (cur < line.length && isSpace(line[cur])) cur++;
    if (cur === line.length) cur = 0;
    if (cursect !== null && optname && cur > indent) {
      const opt = cursect.get(optname)!;
      // CPython appends to the valueless option's None and fails there.
      if (opt.value === null) return { error: "AttributeError: 'NoneType' object has no attribute 'append'", line: lineno };
      pieces.get(opt)!.push(value);
      continue;
    }
    indent = cur;
    const sect = /^\[([^\n]+)\]/u.exec(value);
    if (sect) {
      sectname = sect[1]!;
      if (file.sections.has(sectname)) {
        if (o.strict && added.has(sectname)) return { error: `DuplicateSectionError: section ${JSON.stringify(sectname)} already exists`, line: lineno };
        cursect = file.sections.get(sectname)!;
        added.add(sectname);
      } else if (sectname === o.defaultSection) cursect = file.defaults;
      else {
        cursect = new Map();
        file.sections.set(sectname, cursect);
        added.add(sectname);
      }
      optname = null;
      continue;
    }
    if (cursect === null) return { error: 'MissingSectionHeaderError: File contains no section headers', line: lineno };
    const m = optcre.exec(value);
    if (!m) {
      error ??= { error: `ParsingError: ${JSON.stringify(line)}`, line: lineno };
      continue;
    }
    if (!m[1]) error ??= { error: `ParsingError: ${JSON.stringify(line)} has no option name`, line: lineno };
    optname = o.optionxform(pyRstrip(m[1]!));
    const key = `${sectname}\0${optname}`;
    if (o.strict && added.has(key)) return { error: `DuplicateOptionError: option ${JSON.stringify(optname)} already exists`, line: lineno };
    added.add(key);
    const opt: IniOption = { value: m[2] === undefined ? null : '', line: lineno };
    if (opt.value !== null) pieces.set(opt, [pyStrip(m[3]!)]);
    // A repeated name is replaced where it stands (a dict keeps the first insertion's place).
    cursect.set(optname, opt);
  }
  if (error) return error;
  for (const opts of [file.defaults, ...file.sections.values()])
    for (const opt of opts.values()) if (opt.value !== null) opt.value = pyRstrip(pieces.get(opt)!.join('\n'));
  return { ok: file };
}

/** ConfigParser.options(section) with get(section, option, raw=True): the section's own, then the defaults it does not set. */
export function sectionOptions(file: IniFile, section: string): IniOptions {
  const out = new Map(file.sections.get(section) ?? []);
  for (const [k, v] of file.defaults) if (!out.has(k)) out.set(k, v);
  return out;
}
