// Live hosts over fixture roots, for the observe readers: each call builds a
// fresh root under one temp folder, removed after the file's tests.
import { afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { buildTree, type Tree } from './tree.js';

export interface LiveFixtureHosts {
  /** A live host over a fresh fixture root holding `files`. */
  live: (files: Tree) => Host;
  /** The temp folder the roots are made in (an empty root for an image host). */
  work: string;
}

/** Call at a test file's top level; the folder is removed after the file's tests. */
export function liveFixtureHosts(prefix = 'observe-'): LiveFixtureHosts {
  const work = mkdtempSync(path.join(tmpdir(), prefix));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const live = (files: Tree): Host => {
    const root = mkdtempSync(path.join(work, 'root-'));
    buildTree(root, files);
    return new Host({ root, live: true });
  };
  return { live, work };
}
