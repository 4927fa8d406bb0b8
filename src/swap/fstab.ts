// /etc/fstab, parsed without losing a byte: every line keeps its raw text
// and number, so commenting out swap lines leaves all other bytes as they were.
// Read the way libmount reads it (mnt_table_parse_stream and
// mnt_parse_table_line, checked against findmnt --fstab -F in the tests):
// - one "\r" before the "\n" is dropped, nothing else (a "\v" stays in the field);
// - a line that is empty, or whose first character after spaces and tabs is
//   "#", is skipped; a "#" anywhere else is an ordinary character;
// - fields are separated by runs of spaces and tabs only;
// - source, target and type are required (3 fields); options, freq and
//   passno are optional; text after the 6th field is ignored;
// - freq and passno must be decimal integers or the line is a parse error;
// - every text field is unmangled: a backslash and three octal digits
//   ("\040") stand for one character; nothing else is an escape.
// Lines libmount refuses are "malformed": it ignores them, and so do we (swapon -a too).

export type FstabDeviceKind = 'path' | 'uuid' | 'label' | 'partuuid' | 'partlabel' | 'other';

export interface FstabDevice {
  kind: FstabDeviceKind;
  /** The value after the tag (UUID=…) or the decoded path; quotes removed. */
  value: string;
}

export interface FstabEntry {
  /** 1-based line number in the file. */
  line: number;
  /** The line exactly as written, without its "\n" (a CRLF file keeps its "\r"). */
  raw: string;
  /** First field as written, e.g. "UUID=1234-abcd" or "/swap\040file". */
  spec: string;
  device: FstabDevice;
  mountPoint: string;
  type: string;
  options: string[];
  freq: number;
  passno: number;
  /** Number of fields libmount reads on the line: 3 to 6. */
  fieldCount: number;
  /** Words after the 6th field, which libmount ignores (often a "# comment"). */
  trailing?: string;
}

/** A non-comment line libmount refuses ("parse error ... ignored"): fewer than 3 fields, a bad freq or passno. */
export interface FstabMalformedLine {
  line: number;
  raw: string;
  reason: string;
}

export interface Fstab {
  entries: FstabEntry[];
  malformed: FstabMalformedLine[];
}

/** Physical lines with their line-ending text, so the file can be rebuilt byte for byte. */
export function splitLines(text: string): string[] {
  // "a\nb" -> ["a", "b"]; "a\nb\n" -> ["a", "b", ""]: the empty last element
  // stands for the final newline, and join("\n") restores the exact bytes.
  return text.split('\n');
}

/** libmount's unmangle: a backslash and three octal digits stand for one character. */
export function unmangle(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8) & 0xff));
}

function unquote(v: string): string {
  return v.length >= 2 && ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) ? v.slice(1, -1) : v;
}

/** The tags libmount resolves through libblkid (mnt_valid_tagname), case as written. */
const TAGS: Record<string, FstabDeviceKind> = { UUID: 'uuid', LABEL: 'label', PARTUUID: 'partuuid', PARTLABEL: 'partlabel' };

export function parseFstabDevice(spec: string): FstabDevice {
  const eq = spec.indexOf('=');
  const kind = eq > 0 ? TAGS[spec.slice(0, eq)] : undefined;
  if (kind) return { kind, value: unmangle(unquote(spec.slice(eq + 1))) };
  const value = unmangle(spec);
  return { kind: value.startsWith('/') ? 'path' : 'other', value };
}

/** The line as libmount sees it: one "\r" before the newline removed. */
function lineBody(raw: string): string {
  return raw.endsWith('\r') ? raw.slice(0, -1) : raw;
}

/** True for lines libmount skips: empty, or spaces/tabs then "#" or nothing. */
export function isCommentOrBlank(raw: string): boolean {
  const s = lineBody(raw).replace(/^[ \t]+/, '');
  return s === '' || s.startsWith('#');
}

/**
 * libmount's next_s32: strtol base 10 into a long, stored in an int. A value
 * outside a long comes back clamped with ERANGE set (`outOfRange`).
 */
function s32(field: string): { value: number; outOfRange: boolean } | null {
  if (!/^[+-]?[0-9]+$/.test(field)) return null;
  let v = BigInt(field);
  const max = (1n << 63n) - 1n;
  const outOfRange = v > max || v < -max - 1n;
  if (v > max) v = max;
  if (v < -max - 1n) v = -max - 1n;
  return { value: Number(BigInt.asIntN(32, v)), outOfRange };
}

export function parseFstab(text: string): Fstab {
  const entries: FstabEntry[] = [];
  const malformed: FstabMalformedLine[] = [];
  splitLines(text).forEach((raw, i) => {
    if (isCommentOrBlank(raw)) return;
    const line = i + 1;
    const body = lineBody(raw);
    if (body.includes('\u0000')) {
      malformed.push({ line, raw, reason: 'contains a NUL byte' });
      return;
    }
    const fields = body.split(/[ \t]+/).filter((f) => f !== '');
    if (fields.length < 3) {
      malformed.push({ line, raw, reason: `${fields.length} field${fields.length === 1 ? '' : 's'}; libmount wants at least 3 (source, target, type)` });
      return;
    }
    const [spec, mountPoint, type, options, freqText, passnoText] = fields as [string, string, string, string?, string?, string?];
    const freqN = freqText === undefined ? { value: 0, outOfRange: false } : s32(freqText);
    const passnoN = passnoText === undefined ? { value: 0, outOfRange: false } : s32(passnoText);
    if (freqN === null || passnoN === null) {
      malformed.push({
        line,
        raw,
        reason: `${freqN === null ? `freq ${JSON.stringify(freqText)}` : `passno ${JSON.stringify(passnoText)}`} is not a decimal integer`,
      });
      return;
    }
    // libmount fails a field's ERANGE only when more text follows it
    // (tab_parse.c: "s && *s && rc"); a last field keeps its clamped value.
    const freqRange = freqN.outOfRange && passnoText !== undefined;
    if (freqRange || (passnoN.outOfRange && fields.length > 6)) {
      const [which, text] = freqRange ? ['freq', freqText] : ['passno', passnoText];
      malformed.push({ line, raw, reason: `${which} ${JSON.stringify(text)} is outside a long (strtol's ERANGE) and more fields follow it` });
      return;
    }
    const freq = freqN.value;
    const passno = passnoN.value;
    entries.push({
      line,
      raw,
      spec,
      device: parseFstabDevice(spec),
      mountPoint: unmangle(mountPoint),
      type: unmangle(type),
      options: options === undefined ? [] : unmangle(options).split(','),
      freq,
      passno,
      fieldCount: Math.min(fields.length, 6),
      trailing: fields.length > 6 ? fields.slice(6).join(' ') : undefined,
    });
  });
  return { entries, malformed };
}

export function swapEntries(fstab: Fstab): FstabEntry[] {
  return fstab.entries.filter((e) => e.type === 'swap');
}

/**
 * The marker put on its own line above each line we comment out. It carries
 * no date, so a second run produces the same bytes (and has nothing to do:
 * the swap line is a comment by then).
 */
export const FSTAB_MARKER = '# k8s-host-reconcile: swap disabled for Kubernetes (kubelet needs swap off); the next line was active';

/**
 * Comments out the given lines ("#" prepended, marker line above); every other
 * byte stays identical, including a missing final newline and CRLF endings.
 */
export function commentOutLines(text: string, lineNumbers: number[], marker: string = FSTAB_MARKER): string {
  const wanted = new Set(lineNumbers);
  const lines = splitLines(text);
  const out: string[] = [];
  lines.forEach((raw, i) => {
    if (!wanted.has(i + 1) || isCommentOrBlank(raw)) {
      out.push(raw);
      return;
    }
    const cr = raw.endsWith('\r') ? '\r' : '';
    out.push(marker + cr, '#' + raw);
  });
  return out.join('\n');
}

/**
 * Lines we commented out earlier (marker line, then "#" + the original), parsed
 * back into entries. Lets remove_swap_files still find a swap file on a later run.
 */
export function disabledByUs(text: string, marker: string = FSTAB_MARKER): FstabEntry[] {
  const lines = splitLines(text);
  const out: FstabEntry[] = [];
  for (let i = 0; i + 1 < lines.length; i++) {
    if (lines[i]!.replace(/\r$/, '') !== marker) continue;
    const next = lines[i + 1]!;
    if (!next.startsWith('#')) continue;
    const parsed = parseFstab(next.slice(1)).entries[0];
    if (parsed && parsed.type === 'swap') out.push({ ...parsed, line: i + 2, raw: next });
  }
  return out;
}
