// "The first directory wins a file name": how systemd (conf_files_list),
// libkmod and zram-generator merge a search path of configuration
// directories, and the order they read the winners in: the bytes of the
// names (strcmp), never the locale ("10-y" before "10_x", "Z" before "a").
import path from 'node:path';
import type { Dirent } from 'node:fs';
import type { TargetFs } from '../host.js';

/**
 * strcmp over UTF-8 bytes, as systemd and libkmod sort file names. Encoding
 * both names for every comparison made sorting 10,000 names the costliest part
 * of a large sysctl.d tree; UTF-8 keeps code point order, so below U+D800 the
 * first differing UTF-16 unit decides the same way (and equal units before it
 * encode to equal bytes). Surrogates and what sorts above them are left to the
 * encoder, which also turns a lone surrogate into U+FFFD.
 */
export function byteOrder(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 && y < 0xd800) return x < y ? -1 : 1;
    return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
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
