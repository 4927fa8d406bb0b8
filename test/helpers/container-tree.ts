// Fixture roots for the container readers: a temporary tree, removed after each test.
import { afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { buildTree, type Tree } from './tree.js';

const roots: string[] = [];
afterEach(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

export function treeHost(files: Tree): Host {
  const root = mkdtempSync(path.join(tmpdir(), 'containers-'));
  roots.push(root);
  buildTree(root, files);
  return new Host({ root });
}

export const idOf = (c: string) => c.repeat(64 / c.length);
