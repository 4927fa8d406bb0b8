// The work of a plan grows with the number of sysctl.d files by the same
// amount per file, whether the tree holds 1,000 files or 10,000: counted,
// not timed. The host is a used server (test/helpers/used-server.ts) with the
// repository's default desired-state.yaml; what is counted:
// - file system calls (node:fs, the way every read of the target goes), and
// - walks over each sysctl.d file's parsed lines (the sysctl engine's unit of
//   work: every question about the tree walks some of them).
// A plan that rereads or re-derives the whole tree for every key, program or
// resolution round shows here as more walks per file; one that lists a file
// twice, or asks readlink of a file its directory listing already showed to
// be regular, as more calls per file.
import { afterAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { usedServerTree } from '../helpers/used-server.js';

const counted = vi.hoisted(() => ({ fs: new Map<string, number>(), walks: 0, on: false }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const names = [
    'readlinkSync',
    'openSync',
    'readSync',
    'fstatSync',
    'lstatSync',
    'statSync',
    'readdirSync',
    'closeSync',
    'readFileSync',
    'realpathSync',
    'existsSync',
  ] as const;
  const wrapped: Record<string, unknown> = {};
  for (const n of names) {
    const f = fs[n] as (...a: unknown[]) => unknown;
    wrapped[n] = (...a: unknown[]) => {
      if (counted.on) counted.fs.set(n, (counted.fs.get(n) ?? 0) + 1);
      return f(...a);
    };
  }
  return { ...fs, ...wrapped, default: { ...fs, ...wrapped } };
});

/** Array methods and iteration that visit a file's lines. */
const WALKS = new Set<PropertyKey>([
  Symbol.iterator,
  'filter',
  'map',
  'forEach',
  'find',
  'findIndex',
  'findLast',
  'some',
  'every',
  'reduce',
  'flatMap',
  'slice',
  'indexOf',
  'includes',
  'entries',
  'values',
]);

vi.mock('../../src/sysctl/parse.js', async (importOriginal) => {
  const parse = await importOriginal<typeof import('../../src/sysctl/parse.js')>();
  return {
    ...parse,
    parseSysctlText: (text: string, file: string) => {
      const r = parse.parseSysctlText(text, file);
      const assignments = new Proxy(r.assignments, {
        get(target, prop, receiver) {
          if (counted.on && WALKS.has(prop)) counted.walks++;
          return Reflect.get(target, prop, receiver);
        },
      });
      return { ...r, assignments };
    },
  };
});

const { runReconcile } = await import('../../src/reconcile/run.js');

const temps: string[] = [];
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** One `--plan --root` of the default desired state on a used server with n sysctl.d files: what it did. */
async function planCounts(n: number): Promise<{ fs: number; byCall: Record<string, number>; walks: number; out: string }> {
  const root = mkdtempSync(path.join(tmpdir(), `scale-${n}-`));
  temps.push(root);
  usedServerTree(root, n);
  counted.fs.clear();
  counted.walks = 0;
  let out = '';
  counted.on = true;
  try {
    await runReconcile(
      { mode: 'plan', file: path.resolve('desired-state.yaml'), root, json: false },
      {
        stdout: { write: (s: string) => (out += s) },
        stderr: { write: () => true },
        env: {},
      },
    );
  } finally {
    counted.on = false;
  }
  const byCall = Object.fromEntries(counted.fs);
  return { fs: [...counted.fs.values()].reduce((a, b) => a + b, 0), byCall, walks: counted.walks, out };
}

describe('a plan on a large sysctl.d tree', () => {
  it('does the same work per file at 1,000 and at 10,000 files', async () => {
    const small = await planCounts(1000);
    const large = await planCounts(10_000);
    // Both plans judged the trees (the hardening file beats our k8s.conf).
    for (const p of [small, large]) expect(p.out).toContain('zz-hardening.conf:2 sorts after /etc/sysctl.d/k8s.conf');

    // The tree generator writes n files plus one vendor/admin pair per 97, so
    // about 1.02 n files; the rest of the host (units, fstab, kubespray) is the same.
    const files = (n: number) => n + 2 * Math.ceil((n - 5) / 97);
    const extra = files(10_000) - files(1000);
    const perFile = (a: number, b: number) => (b - a) / extra;
    const fsPerFile = perFile(small.fs, large.fs);
    const walksPerFile = perFile(small.walks, large.walks);
    const report = { small: small.byCall, large: large.byCall, fsPerFile, walksPerFile, walksSmall: small.walks, walksLarge: large.walks };

    // Reading a regular file is open, fstat, read, close: four calls, and nothing
    // else per listed entry (the listing itself is one call per directory).
    expect(fsPerFile, JSON.stringify(report)).toBeLessThanOrEqual(4);
    for (const call of ['readlinkSync', 'lstatSync', 'statSync', 'readdirSync']) {
      expect(((large.byCall[call] ?? 0) - (small.byCall[call] ?? 0)) / extra, `${call} ${JSON.stringify(report)}`).toBe(0);
    }
    // The engine judges three trees (as observed, as planned, as kubespray will
    // leave it) under two programs (boot and sysctl --system); the files they
    // share are read into the engine's order once: one walk a file, two at most,
    // the same at any size (before: 53, re-derived per key, program and round).
    expect(walksPerFile, JSON.stringify(report)).toBeLessThanOrEqual(2);
    // Linear: the 1,000-file tree's own average already covers the larger tree's extra files.
    expect(large.walks / files(10_000)).toBeLessThanOrEqual(small.walks / files(1000));
    expect(large.fs / files(10_000)).toBeLessThanOrEqual(small.fs / files(1000));
  }, 300_000);
});
