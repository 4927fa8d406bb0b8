// Load + validate desired-state.yaml. Every problem is located by
// file:line:column and the key's path; a bad file never reaches the host.
import { readFile } from 'node:fs/promises';
import { LineCounter, isMap, isSeq, isScalar, isPair, parseDocument } from 'yaml';
import type { Document, Node as YamlNode } from 'yaml';
import { InputError } from '../errors.js';
import type { InputIssue } from '../errors.js';
import type { DesiredState } from '../desired-state.js';
import { validateAgainstSchema } from './validate.js';

export async function loadDesiredState(file: string): Promise<DesiredState> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new InputError([{ file, line: 1, column: 1, path: '', message: `cannot read: ${(e as Error).message}` }]);
  }
  return parseDesiredState(text, file);
}

/** Pure: text -> DesiredState, or InputError listing every problem. */
export function parseDesiredState(text: string, file: string): DesiredState {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const syntax = [...doc.errors, ...doc.warnings];
  if (syntax.length > 0) {
    throw new InputError(
      syntax.map((e) => {
        const pos = lineCounter.linePos(e.pos[0]);
        return { file, line: pos.line, column: pos.col, path: '', message: firstLine(e.message) };
      }),
    );
  }
  const data: unknown = doc.toJS();
  const locate = locator(doc, lineCounter, file);
  const issues = validateAgainstSchema(data).map((v) => ({ ...locate(v.pointer, v.atKey), path: v.path, message: v.message }));
  if (issues.length === 0) issues.push(...semanticIssues(data as RawDesired, locate));
  if (issues.length > 0) throw new InputError(sortIssues(issues));
  const raw = data as RawDesired;
  return { ...(raw as Omit<DesiredState, 'source'>), source: file };
}

type RawDesired = Omit<DesiredState, 'source'>;

/** Rules a JSON Schema cannot say: one resource per type and file. */
function semanticIssues(d: RawDesired, locate: Locate): InputIssue[] {
  const out: InputIssue[] = [];
  const seen = new Map<string, number>();
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
  return issues.sort((a, b) => a.line - b.line || a.column - b.column || a.path.localeCompare(b.path));
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim();
}
