// Load + validate desired-state.yaml. Every problem is located by
// file:line:column and the key's path; a bad file never reaches the host.
import path from 'node:path';
import { LineCounter, isMap, isSeq, isScalar, isPair, parseDocument, visit } from 'yaml';
import type { Document, Node as YamlNode } from 'yaml';
import { InputError } from '../errors.js';
import { FileTooLargeError, NotRegularFileError, readRegular } from '../regular-file.js';
import type { InputIssue } from '../errors.js';
import type { DesiredState } from '../desired-state.js';
import { humanPath, validateAgainstSchema } from './validate.js';
import { PACKAGED_DESIRED_STATE } from '../version.js';
import { nameProblem, reportsDirProblem } from '../grammar.js';
import { checkNameProblem } from '../findings.js';
import { PROVIDERS, type ProviderRegistry } from '../resources/index.js';
import type { Claim } from '../resources/types.js';
import { byteOrder } from '../systemd/conf-dirs.js';

/** Larger documents are refused before parsing: a desired state is a page of YAML, not data. */
export const MAX_DESIRED_STATE_BYTES = 1024 * 1024;
/** Aliases expanded while building the document; an alias bomb stops here instead of eating memory. */
export const MAX_YAML_ALIASES = 100;

export async function loadDesiredState(file: string): Promise<DesiredState> {
  return parseDesiredState(readDesiredStateFile(file).toString('utf8'), file);
}

/**
 * The desired-state file's bytes (regular-file.ts: a fifo or /dev/zero is
 * refused, never waited on or read without end). The operator's own path on
 * the build machine, so a link to it is followed.
 */
export function readDesiredStateFile(file: string): Buffer {
  try {
    return readRegular(file, file, { follow: true, limit: MAX_DESIRED_STATE_BYTES }).bytes;
  } catch (e) {
    if (e instanceof NotRegularFileError) {
      throw new InputError([
        {
          file,
          line: 1,
          column: 1,
          path: '',
          message: `is ${e.kind === 'directory' ? 'a directory' : `not a regular file (a ${e.kind})`}; give a desired-state YAML file`,
        },
      ]);
    }
    if (e instanceof FileTooLargeError) throw new InputError([tooLarge(file)]);
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new InputError([{ file, line: 1, column: 1, path: '', message: missingMessage(file) }]);
    throw new InputError([{ file, line: 1, column: 1, path: '', message: `cannot read: ${(e as Error).message}` }]);
  }
}

/** A missing file is most often the default looked up in the wrong directory: say where, and how to name one. */
function missingMessage(file: string): string {
  const where = path.isAbsolute(file) ? '' : ` (looked for in ${process.cwd()})`;
  return `no such file${where}; name the desired state with -f FILE (the package installs one at ${PACKAGED_DESIRED_STATE})`;
}

function tooLarge(file: string): InputIssue {
  return { file, line: 1, column: 1, path: '', message: `is larger than ${MAX_DESIRED_STATE_BYTES} bytes (1 MiB); a desired state is refused beyond that` };
}

/** Pure: text -> DesiredState, or InputError listing every problem. */
export function parseDesiredState(text: string, file: string, registry: ProviderRegistry = PROVIDERS): DesiredState {
  if (Buffer.byteLength(text, 'utf8') > MAX_DESIRED_STATE_BYTES) throw new InputError([tooLarge(file)]);
  const lineCounter = new LineCounter();
  // Integers as BigInt: a sysctl value such as 18446744073692774399 must reach the file exactly.
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, intAsBigInt: true });
  const syntax = [...doc.errors, ...doc.warnings];
  if (syntax.length > 0) {
    throw new InputError(
      syntax.map((e) => {
        const pos = lineCounter.linePos(e.pos[0]);
        return { file, line: pos.line, column: pos.col, path: '', message: firstLine(e.message) };
      }),
    );
  }
  const locate = locator(doc, lineCounter, file);
  let js: unknown;
  try {
    js = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (e) {
    // yaml throws a ReferenceError for excessive aliases; anything it throws here is about the input.
    const alias = firstAlias(doc);
    const pos = lineCounter.linePos(alias?.range?.[0] ?? 0);
    const why = /alias/i.test((e as Error).message)
      ? `uses aliases that expand to more than ${MAX_YAML_ALIASES} nodes; refused as a resource-exhaustion risk`
      : `cannot be read as data: ${firstLine((e as Error).message)}`;
    throw new InputError([{ file, line: pos.line, column: pos.col, path: '', message: why }]);
  }
  const { data, issues: numberIssues } = exactNumbers(js);
  const grammar = [...numberIssues, ...grammarIssues(data, registry)].map((g) => ({
    ...locate(g.pointer, g.atKey),
    path: humanPath(g.pointer),
    message: g.message,
  }));
  // Before the schema fills defaults: the keys each resource wrote itself (for locations).
  const explicit: Array<Set<string>> =
    isObj(data) && Array.isArray(data.resources) ? data.resources.map((r: unknown) => new Set(isObj(r) ? Object.keys(r) : [])) : [];
  const grammarPaths = new Set(grammar.map((g) => g.path));
  const schemaIssues = validateAgainstSchema(data)
    .map((v) => ({ ...locate(v.pointer, v.atKey), path: v.path, message: v.message }))
    // The grammar's reason is the more precise one for the same key.
    .filter((i) => !grammarPaths.has(i.path));
  const issues = [...grammar, ...schemaIssues];
  if (issues.length === 0) issues.push(...semanticIssues(data as RawDesired, locate, explicit, registry));
  if (issues.length > 0) throw new InputError(sortIssues(issues));
  const raw = data as RawDesired;
  const where = (pointer: string[], atKey = false): InputIssue => ({ ...locate(pointer, atKey), path: humanPath(pointer), message: '' });
  const out: DesiredState = { ...(raw as Omit<DesiredState, 'source'>), source: file };
  // Not enumerable: the desired state stays plain data for JSON output.
  Object.defineProperty(out, 'where', { value: where, enumerable: false });
  return out;
}

type RawDesired = Omit<DesiredState, 'source'>;

interface RawIssue {
  pointer: string[];
  atKey: boolean;
  message: string;
}

function firstAlias(doc: Document): YamlNode | null {
  let found: YamlNode | null = null;
  visit(doc, {
    Alias(_, node) {
      found = node as YamlNode;
      return visit.BREAK;
    },
  });
  return found;
}

/**
 * BigInts from the YAML integers become plain numbers everywhere except in
 * sysctl settings, where they become their exact decimal text (never a JS
 * number, which would round 18446744073692774399 and print 1e+21). A float
 * in settings is refused: YAML reads 1e21 or 1.0 as a float, not the digits.
 */
function exactNumbers(js: unknown): { data: unknown; issues: RawIssue[] } {
  const issues: RawIssue[] = [];
  const walk = (v: unknown, ptr: string[]): unknown => {
    const inSettings = ptr.length === 4 && ptr[0] === 'resources' && ptr[2] === 'settings';
    if (typeof v === 'bigint') return inSettings ? v.toString() : Number(v);
    if (typeof v === 'number' && inSettings) {
      issues.push({
        pointer: ptr,
        atKey: false,
        message: 'must be an integer written in digits, or a quoted string (YAML reads this as a floating-point number)',
      });
      return v;
    }
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...ptr, String(i)]));
    if (v !== null && typeof v === 'object') {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) o[k] = walk(x, [...ptr, k]);
      return o;
    }
    return v;
  };
  return { data: walk(js, []), issues };
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The grammar of each value (grammar.ts; a resource's from its provider), on the document as parsed: shapes are the schema's job. */
function grammarIssues(data: unknown, registry: ProviderRegistry): RawIssue[] {
  const out: RawIssue[] = [];
  if (!isObj(data)) return out;
  const add = (pointer: string[], message: string | null, atKey = false) => {
    if (message) out.push({ pointer, atKey, message });
  };
  if (typeof data.reports_dir === 'string') add(['reports_dir'], reportsDirProblem(data.reports_dir));
  if (Array.isArray(data.accept)) data.accept.forEach((n: unknown, i: number) => typeof n === 'string' && add(['accept', String(i)], checkNameProblem(n)));
  if (!Array.isArray(data.resources)) return out;
  data.resources.forEach((r: unknown, i: number) => {
    if (!isObj(r)) return;
    const at = (...p: string[]) => ['resources', String(i), ...p];
    if (typeof r.name === 'string') add(at('name'), nameProblem(r.name));
    const provider = typeof r.type === 'string' && Object.hasOwn(registry, r.type) ? registry[r.type] : undefined;
    for (const issue of provider?.grammar?.(r) ?? []) add(at(...issue.at), issue.message, issue.atKey);
  });
  return out;
}

/** How a second claim of the same thing is told, by kind. */
const CLAIM_RULE: Record<Claim['kind'], { verb: string; rule: string }> = {
  file: { verb: 'manages', rule: 'one file has one owner' },
  sysctl: { verb: 'sets', rule: 'one key has one value' },
};

/**
 * Rules a JSON Schema cannot say: one resource per type and name, and
 * nothing a provider claims (a file, a sysctl key) claimed twice (each
 * problem names both places).
 */
function semanticIssues(d: RawDesired, locate: Locate, explicit: Array<Set<string>>, registry: ProviderRegistry): InputIssue[] {
  const out: InputIssue[] = [];
  const seen = new Map<string, number>();
  const pos = (p: string[], atKey = false) => {
    const l = locate(p, atKey);
    return `${l.file}:${l.line}:${l.column}`;
  };
  d.resources.forEach((r, i) => {
    const key = `${r.type}:${'file' in r ? r.file : ''}:${r.name ?? ''}`;
    const first = seen.get(key);
    if (first !== undefined) {
      out.push({
        ...locate(['resources', String(i)], false),
        path: `resources[${i}]`,
        message: `duplicates resources[${first}] (same type${'file' in r ? ' and file' : ''}); give one of them a distinct name or merge them`,
      });
    } else seen.set(key, i);
  });
  // The same file from two resources: each run would rewrite the other's content, and nothing converges.
  const claimed = new Map<string, { pointer: string[]; atKey: boolean }>();
  d.resources.forEach((r, i) => {
    // A resource already reported as a duplicate above is not reported twice.
    if (![...seen.values()].includes(i)) return;
    for (const c of registry[r.type]?.claims?.(r) ?? []) {
      const subject = c.kind === 'file' ? path.posix.normalize(c.subject) : c.subject;
      // A file the schema filled in is told at the resource itself (a default key, at its own place).
      const pointer = c.kind === 'file' && c.at.length > 0 && !explicit[i]?.has(c.at[0]!) ? ['resources', String(i)] : ['resources', String(i), ...c.at];
      const atKey = c.atKey ?? false;
      const before = claimed.get(`${c.kind}\0${subject}`);
      const { verb, rule } = CLAIM_RULE[c.kind];
      if (before) {
        out.push({
          ...locate(pointer, atKey),
          path: humanPath(pointer),
          message: `${verb} ${subject}, which ${humanPath(before.pointer)} (${pos(before.pointer, before.atKey)}) ${verb} too; ${rule}`,
        });
      } else claimed.set(`${c.kind}\0${subject}`, { pointer, atKey });
    }
  });
  return out;
}

type Locate = (pointer: string[], atKey: boolean) => { file: string; line: number; column: number };

/** Maps a JSON pointer (as segments) to the YAML node's position; falls back to the nearest ancestor. */
function locator(doc: Document, lc: LineCounter, file: string): Locate {
  return (pointer, atKey) => {
    let node: unknown = doc.contents;
    let best: YamlNode | null = (doc.contents as YamlNode | null) ?? null;
    for (let i = 0; i < pointer.length; i++) {
      const seg = pointer[i]!;
      const last = i === pointer.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === seg);
        if (!pair) break;
        if (last && atKey && isScalar(pair.key)) {
          best = pair.key;
          break;
        }
        node = pair.value;
        if (node && (node as YamlNode).range) best = node as YamlNode;
        else if (isScalar(pair.key)) best = pair.key;
      } else if (isSeq(node)) {
        const item = node.items[Number(seg)];
        if (!item) break;
        node = item;
        if ((item as YamlNode).range) best = item as YamlNode;
      } else break;
    }
    const offset = best?.range?.[0] ?? 0;
    const pos = lc.linePos(offset);
    return { file, line: pos.line, column: pos.col };
  };
}

function sortIssues(issues: InputIssue[]): InputIssue[] {
  return issues.sort((a, b) => a.line - b.line || a.column - b.column || byteOrder(a.path, b.path));
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim();
}
