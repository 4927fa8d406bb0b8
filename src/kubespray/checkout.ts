// Reading a kubespray checkout: YAML files with line numbers, role defaults,
// and simple {{ var }} resolution. The checkout is a target path read only
// through Host, so it works live and on an image (--root).
import path from 'node:path';
import { LineCounter, isMap, isScalar, isSeq, parseDocument } from 'yaml';
import type { Node } from 'yaml';
import type { Host } from '../host.js';
import { HostError } from '../errors.js';

export interface YamlFile {
  /** Path relative to the checkout, e.g. roles/kubernetes/preinstall/tasks/main.yml. */
  rel: string;
  doc: ReturnType<typeof parseDocument>;
  lines: LineCounter;
}

export class KubesprayCheckout {
  private readonly cache = new Map<string, YamlFile | null>();

  constructor(
    private readonly host: Host,
    /** Target path of the checkout, e.g. /opt/ks/kubespray. */
    readonly dir: string,
  ) {}

  target(rel: string): string {
    return path.posix.join(this.dir, rel);
  }

  async exists(rel: string): Promise<boolean> {
    return this.host.exists(this.target(rel));
  }

  async readText(rel: string): Promise<string | null> {
    return this.host.readFile(this.target(rel));
  }

  /** Sorted file names of a directory in the checkout; [] when it is missing. */
  async list(rel: string): Promise<string[]> {
    const entries = await this.host.readDir(this.target(rel));
    return (entries ?? []).filter((e) => !e.isDirectory()).map((e) => e.name);
  }

  /** A YAML file with its line counter; null when missing. Syntax errors are HostErrors naming the file. */
  async yaml(rel: string): Promise<YamlFile | null> {
    const norm = path.posix.normalize(rel);
    if (this.cache.has(norm)) return this.cache.get(norm)!;
    const text = await this.readText(norm);
    let file: YamlFile | null = null;
    if (text !== null) {
      const lines = new LineCounter();
      const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false });
      if (doc.errors.length > 0) {
        throw new HostError(`${this.target(norm)}: ${doc.errors[0]!.message.split('\n')[0]}`, this.target(norm));
      }
      file = { rel: norm, doc, lines };
    }
    this.cache.set(norm, file);
    return file;
  }
}

/** 1-based line where a YAML node starts. */
export function lineOf(file: YamlFile, node: Node | null | undefined): number {
  const start = node?.range?.[0];
  return start === undefined ? 0 : file.lines.linePos(start).line;
}

export interface VarDefinition {
  name: string;
  value: unknown;
  file: string;
  line: number;
}

/** Top-level scalars/lists of a defaults file, with their lines. */
export function topLevelVars(file: YamlFile): VarDefinition[] {
  const out: VarDefinition[] = [];
  const root = file.doc.contents;
  if (!isMap(root)) return out;
  for (const pair of root.items) {
    if (!isScalar(pair.key)) continue;
    const node = pair.value as Node | null;
    out.push({
      name: String(pair.key.value),
      value: node && (isScalar(node) || isSeq(node) || isMap(node)) ? node.toJSON() : null,
      file: file.rel,
      line: lineOf(file, pair.key as Node),
    });
  }
  return out;
}

/**
 * Role defaults in the order Ansible would load them: defaults/main.yml, or
 * every file of defaults/main/ in name order.
 */
export async function roleDefaults(ck: KubesprayCheckout, role: string): Promise<VarDefinition[]> {
  const out: VarDefinition[] = [];
  for (const rel of [`roles/${role}/defaults/main.yml`, `roles/${role}/defaults/main.yaml`]) {
    const f = await ck.yaml(rel);
    if (f) out.push(...topLevelVars(f));
  }
  for (const name of await ck.list(`roles/${role}/defaults/main`)) {
    if (!/\.ya?ml$/.test(name)) continue;
    const f = await ck.yaml(`roles/${role}/defaults/main/${name}`);
    if (f) out.push(...topLevelVars(f));
  }
  return out;
}

/** The defaults kubespray shares across roles: roles/kubespray_defaults (newer) or roles/kubespray-defaults (older). */
export async function kubesprayDefaults(ck: KubesprayCheckout): Promise<VarDefinition[]> {
  const a = await roleDefaults(ck, 'kubespray_defaults');
  return a.length > 0 ? a : roleDefaults(ck, 'kubespray-defaults');
}

/** Variable scope: later definitions win, like later-loaded defaults. */
export class VarScope {
  private readonly vars = new Map<string, VarDefinition>();
  constructor(defs: VarDefinition[] = []) {
    for (const d of defs) this.vars.set(d.name, d);
  }
  get(name: string): VarDefinition | undefined {
    return this.vars.get(name);
  }
  /**
   * Resolves a value whose templates are only plain {{ var }} references
   * (no filters, no expressions), following chains. Returns undefined when
   * anything is not that simple, rather than guessing.
   */
  resolve(value: unknown, trail: VarDefinition[] = [], depth = 0): { value: unknown; trail: VarDefinition[] } | undefined {
    if (depth > 10) return undefined;
    if (typeof value !== 'string' || !value.includes('{{')) return { value, trail };
    const whole = /^\s*\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$/.exec(value);
    if (whole) {
      const d = this.vars.get(whole[1]!);
      if (!d) return undefined;
      return this.resolve(d.value, [...trail, d], depth + 1);
    }
    let ok = true;
    const newTrail = [...trail];
    const text = value.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_m, expr: string) => {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(expr)) {
        ok = false;
        return '';
      }
      const d = this.vars.get(expr);
      const r = d ? this.resolve(d.value, [], depth + 1) : undefined;
      if (!d || !r || (typeof r.value !== 'string' && typeof r.value !== 'number')) {
        ok = false;
        return '';
      }
      newTrail.push(d, ...r.trail);
      return String(r.value);
    });
    return ok ? { value: text, trail: newTrail } : undefined;
  }
}
