// "The first directory wins a file name": how systemd (conf_files_list),
// libkmod and zram-generator merge a search path of configuration
// directories, and the order they read the winners in: the bytes of the
// names (strcmp), never the locale ("10-y" before "10_x", "Z" before "a").
import path from 'node:path';
import type { Dirent } from 'node:fs';
import type { TargetFs } from '../host.js';

/**
 * The code point UTF-8 encodes for the unit at `i`: a surrogate pair's code
 * point at its high half, U+FFFD for a lone surrogate (as the encoder writes
 * it). The low half of a pair also reads as U+FFFD, which is harmless: a
 * comparison only gets there when the high halves before it were equal pairs.
 */
function encodedCodePointAt(s: string, i: number): number {
  const c = s.codePointAt(i)!;
  return c >= 0xd800 && c <= 0xdfff ? 0xfffd : c;
}

/**
 * strcmp over UTF-8 bytes, as systemd and libkmod sort file names. UTF-8
 * keeps code point order, so the first differing code point decides as the
 * first differing byte would, and a name that is a prefix of the other sorts
 * first. Encoding both names for every comparison made sorting 10,000 names
 * the costliest part of a large sysctl.d tree, so no name is encoded here.
 */
export function byteOrder(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = encodedCodePointAt(a, i) - encodedCodePointAt(b, i);
    if (d !== 0) return Math.sign(d);
  }
  return Math.sign(a.length - b.length);
}

/**
 * The entries that win their name. `entries` come in precedence order
 * (highest directory first); the first entry of each name wins, and the
 * winners come back sorted by name in byte order: the order they are read.
 */
export function firstDirWins<T>(entries: Iterable<T>, nameOf: (e: T) => string): T[] {
  const byName = new Map<string, T>();
  for (const e of entries) {
    const name = nameOf(e);
    if (!byName.has(name)) byName.set(name, e);
  }
  return [...byName.entries()].sort(([a], [b]) => byteOrder(a, b)).map(([, e]) => e);
}

/** One entry of a configuration directory. */
export interface ConfDirEntry {
  dir: string;
  name: string;
  path: string;
  entry: Dirent;
}

/** Every entry of `dirs`, directory by directory in the given order (missing directories add nothing). */
export async function listConfDirs(host: TargetFs, dirs: readonly string[]): Promise<ConfDirEntry[]> {
  const out: ConfDirEntry[] = [];
  for (const dir of dirs) {
    for (const entry of (await host.readDir(dir)) ?? []) out.push({ dir, name: entry.name, path: path.posix.join(dir, entry.name), entry });
  }
  return out;
}
