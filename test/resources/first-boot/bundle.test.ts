// The running bundle (bundle.ts) is read only when it is a "#!" file, never a .ts source: its bytes
// are what the bake copies into an image, so they must be the file's exact bytes.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runningBundle } from '../../../src/resources/first-boot/bundle.js';

describe('runningBundle', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const file = (name: string, content: string | Buffer) => {
    const d = mkdtempSync(path.join(tmpdir(), 'bundle-'));
    dirs.push(d);
    writeFileSync(path.join(d, name), content);
    return pathToFileURL(path.join(d, name)).href;
  };

  it('a "#!" file is the bundle, its bytes exact', () => {
    const bytes = Buffer.from('#!/usr/bin/env node\n// \xff\n', 'latin1');
    const url = file('reconcile.mjs', bytes);
    const b = runningBundle(url);
    expect(b?.path).toBe(new URL(url).pathname);
    expect(Buffer.from(b!.bytes, 'latin1').equals(bytes)).toBe(true);
  });

  it('no bundle: a .ts source, a file without "#!", a missing file, a URL that is no file', () => {
    expect(runningBundle(file('spec.ts', '#!/x\n'))).toBeNull();
    expect(runningBundle(file('reconcile.mjs', 'import x;\n'))).toBeNull();
    expect(runningBundle(pathToFileURL('/nonexistent/reconcile.mjs').href)).toBeNull();
    expect(runningBundle('data:text/javascript,1')).toBeNull();
    expect(runningBundle()).toBeNull();
  });

  it('only the two bytes "#!" open a bundle: "#" alone, "!#" or an empty file do not', () => {
    expect(runningBundle(file('a.mjs', '# comment\n'))).toBeNull();
    expect(runningBundle(file('b.mjs', '!#/usr/bin/env node\n'))).toBeNull();
    expect(runningBundle(file('c.mjs', ''))).toBeNull();
    expect(runningBundle(file('d.mjs', '#!'))?.bytes).toBe('#!');
  });

  it('a directory named like a bundle is no bundle', () => {
    const d = mkdtempSync(path.join(tmpdir(), 'bundle-'));
    dirs.push(d);
    expect(runningBundle(pathToFileURL(d).href)).toBeNull();
  });
});
