// /proc/swaps: the swap areas active now. The kernel prints the file name with
// spaces, tabs, newlines and backslashes as octal escapes (seq_file's
// mangle_path), then type, size and used in KiB, and priority.
import { unmangle } from './fstab.js';

export interface ActiveSwap {
  /** Device or file, decoded ("/dev/zram0", "/swapfile"). */
  filename: string;
  type: 'partition' | 'file' | string;
  sizeKb: number;
  usedKb: number;
  priority: number;
}

export function parseProcSwaps(text: string): ActiveSwap[] {
  const out: ActiveSwap[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/[ \t]+/);
    if (f.length < 5) continue;
    const [type, size, used, prio] = f.slice(-4) as [string, string, string, string];
    out.push({
      filename: unmangle(f.slice(0, -4).join(' ')),
      type,
      sizeKb: Number(size),
      usedKb: Number(used),
      priority: Number(prio),
    });
  }
  return out;
}
