// The bench's profiles: `node --cpu-prof` of a run of the bundle, with each
// sample's self time put on the source module it came from (through the
// bundle's source map) or on what V8/node itself was doing (compiling the
// bundle, garbage collection, idle while a child process runs).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { bundleOptions } from '../bundle.mjs';

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Source-map "mappings" -> per generated line, sorted [column, sourceIndex, sourceLine] triples. */
function decodeMappings(mappings) {
  const lines = [];
  let src = 0;
  let srcLine = 0;
  for (const line of mappings.split(';')) {
    const segs = [];
    let col = 0;
    for (const seg of line.split(',')) {
      if (!seg) continue;
      const vals = [];
      let v = 0;
      let shift = 0;
      for (const ch of seg) {
        const d = B64.indexOf(ch);
        v += (d & 31) << shift;
        if (d & 32) shift += 5;
        else {
          vals.push(v & 1 ? -(v >>> 1) : v >>> 1);
          v = 0;
          shift = 0;
        }
      }
      col += vals[0];
      if (vals.length > 1) {
        src += vals[1];
        srcLine += vals[2];
        segs.push([col, src, srcLine]);
      }
    }
    lines.push(segs);
  }
  return lines;
}

function moduleName(source) {
  const s = source.replace(/^(\.\.\/)+/, '');
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(s);
  if (nm) return nm[1];
  if (s.startsWith('desired-state-validator:')) return 'generated desired-state validator';
  return s.replace(/^.*?\bsrc\//, 'src/');
}

/**
 * A twin of dist/reconcile.mjs with a source map, in dir; unminified (and
 * so a little slower to compile) when the profile is to name functions.
 */
export async function profilingBundle(dir, { minify = true } = {}) {
  const out = path.join(dir, minify ? 'reconcile.mjs' : 'reconcile-named.mjs');
  await build({ ...bundleOptions(out), sourcemap: 'external', minify, keepNames: true });
  const map = JSON.parse(readFileSync(`${out}.map`, 'utf8'));
  return { file: out, sources: map.sources, lines: decodeMappings(map.mappings), bytes: readFileSync(out).length };
}

/** Self time (ms) by module or activity for `node BUNDLE ...args`, median over runs by total. */
export function profile(bundle, args, { runs = 3, cwd } = {}) {
  const results = [];
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(path.join(path.dirname(bundle.file), 'prof-'));
    spawnSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '100', bundle.file, ...args], { cwd, stdio: 'ignore' });
    const f = readdirSync(dir).find((x) => x.endsWith('.cpuprofile'));
    if (!f) throw new Error(`no profile written for ${args.join(' ')}`);
    const p = JSON.parse(readFileSync(path.join(dir, f), 'utf8'));
    const self = new Map();
    p.samples.forEach((s, k) => self.set(s, (self.get(s) ?? 0) + (p.timeDeltas[k] ?? 0)));
    const by = new Map();
    const frames = new Map();
    for (const n of p.nodes) {
      const t = self.get(n.id) ?? 0;
      if (!t) continue;
      const { url, functionName, lineNumber, columnNumber } = n.callFrame;
      let key;
      let frame;
      if (url.endsWith(bundle.file)) {
        const segs = bundle.lines[lineNumber] ?? [];
        let src = null;
        let srcLine = null;
        for (const [c, s, l] of segs) {
          if (c <= columnNumber) {
            src = s;
            srcLine = l;
          } else break;
        }
        frame =
          src === null
            ? `${functionName || '(anonymous)'} (esbuild prelude)`
            : `${functionName || '(anonymous)'} ${moduleName(bundle.sources[src])}:${srcLine + 1}`;
        // Unmapped is esbuild's own prelude: __esm/__commonJS start each module on first use, and V8 compiles
        // a module's code lazily then, which the profile puts on the caller.
        key = src === null ? "esbuild's module initialisation (__esm/__commonJS: compiles each module on first use)" : moduleName(bundle.sources[src]);
      } else if (functionName === 'compileSourceTextModule') key = 'V8: parse and compile the bundle (compileSourceTextModule)';
      else if (functionName === '(idle)') key = '(idle: waiting for child processes and I/O)';
      else if (functionName.startsWith('(')) key = functionName;
      else key = `node's own code (${url ? url.split('/').slice(0, 2).join('/') : functionName})`;
      by.set(key, (by.get(key) ?? 0) + t / 1000);
      frame ??= url ? `${functionName || '(anonymous)'} ${url.replace(/^.*\/node_modules\//, '').replace(/^node:/, 'node:')}:${lineNumber + 1}` : functionName;
      frames.set(frame, (frames.get(frame) ?? 0) + t / 1000);
    }
    results.push({ totalMs: (p.endTime - p.startTime) / 1000, by, frames });
  }
  results.sort((a, b) => a.totalMs - b.totalMs);
  return results[Math.floor(results.length / 2)];
}

/** The top entries as markdown list lines. */
export function topEntries(prof, n = 8) {
  return [...prof.by]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, ms]) => `  - ${ms.toFixed(1)} ms ${k}`);
}

/** The top frames (function and source line, self time) as markdown list lines. */
export function topFrames(prof, n = 10) {
  return [...prof.frames]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, ms]) => `  - ${ms.toFixed(1)} ms \`${k}\``);
}
