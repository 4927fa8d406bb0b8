// Reading a kubespray checkout: YAML files with line numbers and the
// top-level variables of a vars file (src/kubespray/vars.ts layers them). The checkout is a target path read only
// through Host, so it works live and on an image (--root).
import path from 'node:path';
import { LineCounter, isAlias, isMap, isScalar, isSeq } from 'yaml';
import type { parseDocument } from 'yaml';
import { parseAnsibleYaml } from '../ansible/yaml11.js';
import type { Node } from 'yaml';
import type { TargetFs, Host } from '../host.js';
import { HostError } from '../errors.js';

/** The file a usable checkout has; checked before the audit (nunjucks, the role walker) is loaded. */
export const PREINSTALL_DEFAULTS = 'roles/kubernetes/preinstall/defaults/main.yml';

export interface YamlFile {
  /** Path relative to the checkout, e.g. roles/kubernetes/preinstall/tasks/main.yml. */
  rel: string;
  doc: ReturnType<typeof parseDocument>;
  lines: LineCounter;
}

export class KubesprayCheckout {
  private readonly cache = new Map<string, YamlFile | null>();

  constructor(
    private readonly host: TargetFs,
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
      const doc = parseAnsibleYaml(text, lines);
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

/**
 * A node's value as Ansible loads it: aliases resolved to their anchors
 * anywhere in the document and `<<` merge keys merged (PyYAML does both). A
 * node's own toJSON() knows neither, so it threw on `<<: *anchor` and kept a
 * `<<` key.
 */
export function valueOf(file: YamlFile, node: Node): unknown {
  return node.toJS(file.doc);
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
      value: node && (isScalar(node) || isSeq(node) || isMap(node) || isAlias(node)) ? valueOf(file, node) : null,
      file: file.rel,
      line: lineOf(file, pair.key as Node),
    });
  }
  return out;
}
