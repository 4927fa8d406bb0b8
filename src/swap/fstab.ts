// /etc/fstab, parsed without losing a byte: every line keeps its raw text
// and number, so commenting out swap lines leaves all other bytes as they were.
// Syntax per fstab(5) and libmount: fields split by spaces or tabs, blanks
// then "#" is a comment, fields 5 and 6 (freq, passno) are optional, and
// spaces inside a field are written as octal escapes ("\040").

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
  /** Number of fields on the line: 4, 5 or 6. */
  fieldCount: number;
}

/** A non-comment line that is not a valid entry (fewer than 4 or more than 6 fields). */
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

/** libmount's unmangle: "\040" etc. are octal escapes for space, tab, newline and backslash. */
export function unmangle(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

function unquote(v: string): string {
  return v.length >= 2 && ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'")))
    ? v.slice(1, -1)
    : v;
}

export function parseFstabDevice(spec: string): FstabDevice {
  const tag = /^(UUID|LABEL|PARTUUID|PARTLABEL)=(.*)$/i.exec(spec);
  if (tag) {
    const kind = tag[1]!.toLowerCase() as FstabDeviceKind;
    return { kind, value: unmangle(unquote(tag[2]!)) };
  }
  const value = unmangle(spec);
  return { kind: value.startsWith('/') ? 'path' : 'other', value };
}

/** True for lines libmount skips: empty, blank, or blanks then "#". */
export function isCommentOrBlank(raw: string): boolean {
  const t = raw.trim();
  return t === '' || t.startsWith('#');
}

export function parseFstab(text: string): Fstab {
  const entries: FstabEntry[] = [];
  const malformed: FstabMalformedLine[] = [];
  splitLines(text).forEach((raw, i) => {
    if (isCommentOrBlank(raw)) return;
    const fields = raw.trim().split(/[ \t]+/);
    const line = i + 1;
    if (fields.length < 4 || fields.length > 6) {
      malformed.push({ line, raw, reason: `${fields.length} fields; fstab(5) wants 4 to 6` });
      return;
    }
    const [spec, mountPoint, type, options, freq, passno] = fields as [string, string, string, string, string?, string?];
    entries.push({
      line,
      raw,
      spec,
      device: parseFstabDevice(spec),
      mountPoint: unmangle(mountPoint),
      type,
      options: options.split(','),
      freq: freq === undefined ? 0 : Number(freq) || 0,
      passno: passno === undefined ? 0 : Number(passno) || 0,
      fieldCount: fields.length,
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
