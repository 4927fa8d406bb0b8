// Ansible INI inventory, parsed the way ansible-core's inventory/ini.py reads
// it: [group], [group:children], [group:vars], hosts with key=value vars and
// [a:b] ranges. Pure: the caller hands in the text.
import { HostError } from '../errors.js';

export interface InventoryHost {
  name: string;
  vars: Record<string, string>;
  /** Groups that list the host directly. */
  groups: string[];
}

export interface InventoryGroup {
  name: string;
  hosts: string[];
  children: string[];
  vars: Record<string, string>;
  /** 1-based line of the first [section] header for this group. */
  line: number;
}

export interface Inventory {
  hosts: Map<string, InventoryHost>;
  groups: Map<string, InventoryGroup>;
}

export class InventoryParseError extends HostError {
  constructor(file: string, line: number, message: string) {
    super(`${file}:${line}: ${message}`, file);
  }
}

const SECTION = /^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:[#;].*)?$/;

/** shlex.split(line, comments=True) for the subset INI host lines use. */
export function shlexSplit(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inToken = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && (line[i + 1] === '"' || line[i + 1] === '\\')) cur += line[++i];
      else cur += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inToken = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      inToken = true;
    } else if (c === '#' && !inToken) {
      break;
    } else if (/\s/.test(c)) {
      if (inToken) out.push(cur);
      cur = '';
      inToken = false;
    } else {
      cur += c;
      inToken = true;
    }
  }
  if (quote) throw new Error('No closing quotation');
  if (inToken) out.push(cur);
  return out;
}

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

export function parseIniInventory(text: string, file = 'inventory.ini'): Inventory {
  const inv: Inventory = { hosts: new Map(), groups: new Map() };
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
      g.vars[line.slice(0, eq).trim()] = unquote(line.slice(eq + 1).trim());
      return;
    }
    if (state === 'children') {
      const child = line.split(/\s+/)[0]!;
      if (!g.children.includes(child)) g.children.push(child);
      group(child, lineNo);
      return;
    }
    let tokens: string[];
    try {
      tokens = shlexSplit(line);
    } catch (e) {
      throw new InventoryParseError(file, lineNo, (e as Error).message);
    }
    if (tokens.length === 0) return;
    const vars: Record<string, string> = {};
    for (const t of tokens.slice(1)) {
      const eq = t.indexOf('=');
      if (eq <= 0) throw new InventoryParseError(file, lineNo, `expected key=value host variable assignment, got: ${t}`);
      vars[t.slice(0, eq)] = t.slice(eq + 1);
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
        h = { name, vars: {}, groups: [] };
        inv.hosts.set(name, h);
      }
      Object.assign(h.vars, vars);
      if (hp) h.vars.ansible_port = hp[2]!;
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

function unquote(v: string): string {
  const m = /^(["'])(.*)\1$/.exec(v);
  return m ? m[2]! : v;
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
