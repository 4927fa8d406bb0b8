// Fixture roots for provider tests: a map of relative path -> content or symlink.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export type Tree = Record<string, string | { link: string }>;

export function buildTree(root: string, files: Tree): void {
  for (const [p, v] of Object.entries(files)) {
    const abs = path.join(root, p);
    mkdirSync(path.dirname(abs), { recursive: true });
    if (typeof v === 'string') writeFileSync(abs, v);
    else symlinkSync(v.link, abs);
  }
}
