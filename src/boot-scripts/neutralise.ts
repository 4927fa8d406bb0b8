// Commenting out boot-script lines the way fstab lines are commented out
// (src/swap/fstab.ts): a marker line above, "#" before each line of the
// statement, every other byte as it was. Pure.
import { splitLines } from '../swap/fstab.js';

export const SCRIPT_MARKER_PREFIX = '# k8s-host-reconcile: ';
const MARKER_SUFFIX = '; the next line was active';

/** The marker put above a commented-out statement; no date, so a second run writes the same bytes. */
export function scriptMarker(reason: string): string {
  return `${SCRIPT_MARKER_PREFIX}${reason}${MARKER_SUFFIX}`;
}

export function isScriptMarker(line: string): boolean {
  const l = line.replace(/\r$/, '');
  return l.startsWith(SCRIPT_MARKER_PREFIX) && l.endsWith(MARKER_SUFFIX);
}

export interface LineRange {
  first: number;
  last: number;
}

/** Comments out each range (1-based, inclusive): one marker line above it, "#" before each of its lines. */
export function commentOutRanges(text: string, ranges: LineRange[], marker: string): string {
  const starts = new Map<number, number>();
  for (const r of ranges) starts.set(r.first, Math.max(r.last, starts.get(r.first) ?? r.first));
  const lines = splitLines(text);
  const out: string[] = [];
  let until = 0;
  lines.forEach((raw, i) => {
    const n = i + 1;
    const last = starts.get(n);
    if (last !== undefined && n > until) {
      out.push(marker + (raw.endsWith('\r') ? '\r' : ''));
      until = last;
    }
    out.push(n <= until ? '#' + raw : raw);
  });
  return out.join('\n');
}

/**
 * How the lines of `before` sit in `now`, when `now` is `before` with some
 * statements commented out by this tool (another resource of the same run
 * wrote the file first): before line -> now line, and whether it is commented
 * out there. null when `now` differs in any other way.
 */
export function alignCommented(before: string, now: string): Map<number, { line: number; commented: boolean }> | null {
  const b = splitLines(before);
  const c = splitLines(now);
  const out = new Map<number, { line: number; commented: boolean }>();
  let j = 0;
  for (let i = 0; i < b.length; i++) {
    if (c[j] !== b[i] && c[j] !== undefined && isScriptMarker(c[j]!)) j++;
    if (c[j] === b[i]) out.set(i + 1, { line: j + 1, commented: false });
    else if (c[j] === '#' + b[i]) out.set(i + 1, { line: j + 1, commented: true });
    else return null;
    j++;
  }
  return j === c.length ? out : null;
}

/**
 * The ranges (lines of `before`) commented out in `now`, moved to `now`'s
 * numbering; ranges already commented out there are dropped. null when `now`
 * is not `before` plus this tool's comments.
 */
export function rangesIn(before: string, now: string, ranges: LineRange[]): LineRange[] | null {
  const map = alignCommented(before, now);
  if (map === null) return null;
  const out: LineRange[] = [];
  for (const r of ranges) {
    const f = map.get(r.first);
    const l = map.get(r.last);
    if (!f || !l) return null;
    if (f.commented) continue;
    out.push({ first: f.line, last: l.line });
  }
  return out;
}
