// Temp folders a test file makes and removes after each test, so a failing
// test leaves nothing behind for the next one to trip over.
import { afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Call at a test file's top level: the folders pushed to the list are removed after each test. */
export function removedAfterEach(): string[] {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return dirs;
}

/** Call at a test file's top level: a maker of fresh temp folders named `prefix…`, each removed after its test. */
export function tempDirsRemovedAfterEach(): (prefix: string) => string {
  const dirs = removedAfterEach();
  return (prefix: string): string => {
    const d = mkdtempSync(path.join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}
