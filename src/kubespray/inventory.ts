// Ansible INI inventory, parsed the way ansible-core's inventory/ini.py reads
// it: [group], [group:children], [group:vars], hosts with key=value vars and
// [a:b] ranges. Pure: the caller hands in the text.
import { LineCounter, isMap } from 'yaml';
import { parseAnsibleYaml } from '../ansible/yaml11.js';
import { HostError } from '../errors.js';
import { shlexSplit } from '../lex/shlex.js';

export interface InventoryHost {
  name: string;
  vars: Record<string, unknown>;
  /** 1-based line where the host is first listed. */
  line?: number;
  /** Groups that list the host directly. */
  groups: string[];
}

export interface InventoryGroup {
  name: string;
  hosts: string[];
  children: string[];
  vars: Record<string, unknown>;
  /** 1-based line of the first [section] header for this group. */
  line: number;
}

export interface Inventory {
  hosts: Map<string, InventoryHost>;
  groups: Map<string, InventoryGroup>;
  /** The file it was read from, for evidence. */
  file?: string;
}

export class InventoryParseError extends HostError {
  constructor(file: string, line: number, message: string) {
    super(`${file}:${line}: ${message}`, file);
  }
}

const SECTION = /^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:[#;].*)?$/;

/** Expands ansible host ranges: web[01:03], db-[a:c], node[1:9:2]. */
export function expandHostPattern(pattern: string): string[] {
  const m = /^(.*?)\[([^\]:]+):([^\]:]+)(?::(\d+))?\](.*)$/.exec(pattern);
  if (!m) return [pattern];
  const [, head, beg, end, stepText, tail] = m as unknown as [string, string, string, string, string | undefined, string];
  const step = stepText ? Number(stepText) : 1;
  const out: string[] = [];
  if (/^\d+$/.test(beg) && /^\d+$/.test(end)) {
    const width = beg.length > 1 && beg.startsWith('0') ? beg.length : 0;
    for (let i = Number(beg); i <= Number(end); i += step) out.push(String(i).padStart(width, '0'));
  } else if (/^[a-z]$/i.test(beg) && /^[a-z]$/i.test(end)) {
    for (let c = beg.charCodeAt(0); c <= end.charCodeAt(0); c += step) out.push(String.fromCharCode(c));
  } else {
    throw new Error(`bad host range ${pattern}`);
  }
  return out.flatMap((mid) => expandHostPattern(head + mid + tail));
}

/** An inventory with Ansible's two implicit groups, and a way to get-or-create a group. */
function emptyInventory(file: string): { inv: Inventory; group: (name: string, line: number) => InventoryGroup } {
  const inv: Inventory = { hosts: new Map(), groups: new Map(), file };
  const group = (name: string, line: number): InventoryGroup => {
    let g = inv.groups.get(name);
    if (!g) {
      g = { name, hosts: [], children: [], vars: {}, line };
      inv.groups.set(name, g);
    }
    return g;
  };
  group('all', 0);
  group('ungrouped', 0);
  return { inv, group };
}

export function parseIniInventory(text: string, file = 'inventory.ini'): Inventory {
  const { inv, group } = emptyInventory(file);
  let current = 'ungrouped';
  let state: 'hosts' | 'children' | 'vars' = 'hosts';
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, idx) => {
    const lineNo = idx + 1;
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) return;
    if (line.startsWith('[')) {
      const m = SECTION.exec(line);
      if (!m) throw new InventoryParseError(file, lineNo, `invalid section header ${line}`);
      current = m[1]!;
      const s = m[2] ?? 'hosts';
      if (s !== 'hosts' && s !== 'children' && s !== 'vars') {
        throw new InventoryParseError(file, lineNo, `section [${line.slice(1, -1)}] has unknown type: ${s}`);
      }
      state = s;
      group(current, lineNo);
      return;
    }
    const g = group(current, lineNo);
    if (state === 'vars') {
      const eq = line.indexOf('=');
      if (eq <= 0) throw new InventoryParseError(file, lineNo, `expected key=value in [${current}:vars], got ${line}`);
      g.vars[line.slice(0, eq).trim()] = iniValue(line.slice(eq + 1).trim());
      return;
    }
    if (state === 'children') {
      const child = line.split(/\s+/)[0]!;
      if (!g.children.includes(child)) g.children.push(child);
      group(child, lineNo);
      return;
    }
    // ini.py _parse_host_definition: shlex_split(line, comments=True); its ValueError is the line's error.
    const split = shlexSplit(line, { comments: true });
    if (split.error !== null) throw new InventoryParseError(file, lineNo, split.error);
    const tokens = split.tokens;
    if (tokens.length === 0) return;
    const vars: Record<string, unknown> = {};
    for (const t of tokens.slice(1)) {
      const eq = t.indexOf('=');
      if (eq <= 0) throw new InventoryParseError(file, lineNo, `expected key=value host variable assignment, got: ${t}`);
      vars[t.slice(0, eq)] = iniValue(t.slice(eq + 1));
    }
    let names: string[];
    try {
      names = expandHostPattern(tokens[0]!);
    } catch (e) {
      throw new InventoryParseError(file, lineNo, (e as Error).message);
    }
    for (const full of names) {
      // "host:port" is a host with ansible_port, unless it is an IPv6 address.
      const hp = /^([^:]+):(\d+)$/.exec(full);
      const name = hp ? hp[1]! : full;
      let h = inv.hosts.get(name);
      if (!h) {
        h = { name, vars: {}, groups: [], line: lineNo };
        inv.hosts.set(name, h);
      }
      Object.assign(h.vars, vars);
      if (hp) h.vars.ansible_port = Number(hp[2]!);
      if (!h.groups.includes(current)) h.groups.push(current);
      if (!g.hosts.includes(name)) g.hosts.push(name);
    }
  });
  // ansible-core: a host that ended up in a named group leaves "ungrouped".
  const ungrouped = inv.groups.get('ungrouped')!;
  ungrouped.hosts = ungrouped.hosts.filter((h) => inv.hosts.get(h)!.groups.length === 1);
  for (const h of inv.hosts.values()) {
    if (h.groups.length > 1) h.groups = h.groups.filter((x) => x !== 'ungrouped');
  }
  return inv;
}

/**
 * ini.py's _parse_value: a Python literal (number, True/False/None, quoted
 * string) becomes that value, anything else stays the string.
 */
export function iniValue(v: string): unknown {
  const m = /^(["'])(.*)\1$/.exec(v);
  if (m) return m[2]!;
  if (/^[+-]?\d+$/.test(v)) return Number(v);
  if (/^[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?$/.test(v)) return Number(v);
  if (v === 'True') return true;
  if (v === 'False') return false;
  if (v === 'None') return null;
  return v;
}

/** Depth of each group below `all` (children sort after parents when vars are merged). */
export function groupDepths(inv: Inventory): Map<string, number> {
  const parents = new Map<string, string[]>();
  for (const g of inv.groups.values()) for (const c of g.children) parents.set(c, [...(parents.get(c) ?? []), g.name]);
  const depth = new Map<string, number>();
  const of = (g: string, seen: string[]): number => {
    if (depth.has(g)) return depth.get(g)!;
    if (g === 'all') return 0;
    const ps = (parents.get(g) ?? []).filter((p) => !seen.includes(p));
    const d = ps.length === 0 ? 1 : 1 + Math.max(...ps.map((p) => of(p, [...seen, g])));
    depth.set(g, d);
    return d;
  };
  for (const g of inv.groups.keys()) of(g, []);
  return depth;
}

/**
 * A YAML inventory (hosts.yaml) the way ansible-core's yaml inventory plugin
 * reads it: groups with hosts, vars and children, nested to any depth, host
 * ranges in host names.
 */
export function parseYamlInventory(data: unknown, file = 'hosts.yaml', lineOfKey: (path: string[]) => number = () => 0): Inventory {
  const { inv, group } = emptyInventory(file);
  const walk = (name: string, body: unknown, at: string[]): void => {
    const g = group(name, lineOfKey(at));
    if (body === null || body === undefined) return;
    if (typeof body !== 'object' || Array.isArray(body)) throw new InventoryParseError(file, lineOfKey(at), `group ${name} must be a mapping`);
    const b = body as Record<string, unknown>;
    for (const k of Object.keys(b)) {
      if (!['hosts', 'vars', 'children'].includes(k)) throw new InventoryParseError(file, lineOfKey([...at, k]), `group ${name} has an unknown key ${k}`);
    }
    if (b.vars && typeof b.vars === 'object') Object.assign(g.vars, b.vars);
    if (b.hosts && typeof b.hosts === 'object') {
      for (const [pattern, hv] of Object.entries(b.hosts as Record<string, unknown>)) {
        let names: string[];
        try {
          names = expandHostPattern(pattern);
        } catch (e) {
          throw new InventoryParseError(file, lineOfKey([...at, 'hosts', pattern]), (e as Error).message);
        }
        for (const full of names) {
          const hp = /^([^:]+):(\d+)$/.exec(full);
          const hname = hp ? hp[1]! : full;
          let h = inv.hosts.get(hname);
          if (!h) {
            h = { name: hname, vars: {}, groups: [], line: lineOfKey([...at, 'hosts', pattern]) };
            inv.hosts.set(hname, h);
          }
          if (hv && typeof hv === 'object') Object.assign(h.vars, hv);
          if (hp) h.vars.ansible_port = Number(hp[2]!);
          if (!h.groups.includes(name)) h.groups.push(name);
          if (!g.hosts.includes(hname)) g.hosts.push(hname);
        }
      }
    }
    if (b.children && typeof b.children === 'object') {
      for (const [child, cb] of Object.entries(b.children as Record<string, unknown>)) {
        if (!g.children.includes(child)) g.children.push(child);
        walk(child, cb, [...at, 'children', child]);
      }
    }
  };
  if (data && typeof data === 'object') for (const [name, body] of Object.entries(data as Record<string, unknown>)) walk(name, body, [name]);
  // Hosts in no group but all are "ungrouped", as with INI.
  for (const h of inv.hosts.values()) {
    const named = h.groups.filter((g) => g !== 'all' && g !== 'ungrouped');
    if (named.length === 0 && !h.groups.includes('ungrouped')) {
      h.groups.push('ungrouped');
      inv.groups.get('ungrouped')!.hosts.push(h.name);
    }
  }
  return inv;
}

/**
 * group_names as Ansible computes it for a host: every group that contains
 * it directly or through :children, without "all", sorted (a host listed in
 * no section is in "ungrouped", as `ansible -m debug -a var=group_names` shows).
 */
export function groupNames(inv: Inventory, host: string): string[] {
  const h = inv.hosts.get(host);
  if (!h) return [];
  const parents = new Map<string, string[]>();
  for (const g of inv.groups.values()) {
    for (const c of g.children) parents.set(c, [...(parents.get(c) ?? []), g.name]);
  }
  const seen = new Set<string>();
  const stack = [...h.groups];
  while (stack.length > 0) {
    const g = stack.pop()!;
    if (seen.has(g)) continue;
    seen.add(g);
    stack.push(...(parents.get(g) ?? []));
  }
  seen.delete('all');
  return [...seen].sort();
}

/**
 * An inventory file as ansible-core picks its plugin: YAML when the text
 * parses to a mapping of groups (hosts.yaml), INI otherwise.
 */
export function parseInventory(text: string, file: string): Inventory {
  const lines = new LineCounter();
  const doc = /\.(ya?ml|json)$/.test(file) || !/^\s*\[/m.test(text) ? parseAnsibleYaml(text, lines) : null;
  if (doc && doc.errors.length === 0 && isMap(doc.contents)) {
    const lineOfKey = (p: string[]): number => {
      const n = doc.getIn(p, true) as { range?: [number] } | undefined;
      const start = n?.range?.[0];
      return start === undefined ? 0 : lines.linePos(start).line;
    };
    return parseYamlInventory(doc.toJSON(), file, lineOfKey);
  }
  if (doc && /\.(ya?ml)$/.test(file) && doc.errors.length > 0)
    throw new InventoryParseError(file, lines.linePos(doc.errors[0]!.pos[0]).line, doc.errors[0]!.message.split('\n')[0]!);
  return parseIniInventory(text, file);
}
