// The audit's language asked of ansible-core itself: test/helpers/ansible-language.py,
// run with the Python ansible runs on, answers YAML loads, Templar renders and
// parse_kv splits; and the two sides' values in one JSON shape.
import path from 'node:path';
import { execa } from 'execa';
import { ansiblePython } from './ansible-python.js';

export type Answer = { ok: true; value: unknown } | { ok: false; error: string };
export type Request =
  { op: 'yaml'; text: string } | { op: 'template'; text: string; vars?: Record<string, unknown> } | { op: 'kv'; text: string; check_raw?: boolean };

export async function ask(reqs: Request[]): Promise<Answer[]> {
  const r = await execa(ansiblePython(), [path.resolve('test/helpers/ansible-language.py')], { input: JSON.stringify(reqs) });
  return JSON.parse(r.stdout) as Answer[];
}

/** Our value in the oracle's JSON shape: floats as {float: repr} (only for non-integers: JS has one number type). */
export function shape(v: unknown): unknown {
  if (typeof v === 'number' && !Number.isInteger(v)) return { float: Number.isNaN(v) ? 'nan' : !Number.isFinite(v) ? (v > 0 ? 'inf' : '-inf') : String(v) };
  if (Array.isArray(v)) return v.map(shape);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)]));
  return v;
}
/** The oracle's floats that are whole numbers (1000.0) read as our numbers. */
export function unfloat(v: unknown): unknown {
  if (v && typeof v === 'object' && !Array.isArray(v) && 'float' in v && Object.keys(v).length === 1) {
    const n = Number((v as { float: string }).float);
    return Number.isInteger(n) ? n : v;
  }
  if (Array.isArray(v)) return v.map(unfloat);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unfloat(x)]));
  return v;
}
