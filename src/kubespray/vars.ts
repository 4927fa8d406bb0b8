// The variables a kubespray task sees, layered in Ansible's precedence order
// (lowest first) for the parts that decide our verdicts:
//   1. role defaults of the other roles in the play (kubespray_defaults, and
//      container-engine, download ... as playbooks/cluster.yml lists them)
//   2. the running role's dependencies' defaults, then its own defaults
//   3. inventory file vars of `all`, then of the host's other groups
//      (parents before children)
//   4. group_vars/all next to the inventory, then next to the playbook;
//      group_vars/<group> next to the inventory, then next to the playbook
//      (ansible-core's VARIABLE_PRECEDENCE; the documented list reads as if
//      group_vars/all came before the other groups' inventory vars, but
//      ansible-playbook says otherwise, see test/kubespray/vars.test.ts)
//   5. inventory file host vars, host_vars/<host> (inventory, then playbook)
//   6. facts (ansible_facts, ansible_X)
//   7. role vars (vars/main) of the play's roles, the running role's last
//   8. set_fact and register, as the task walk meets them
// Values are templated lazily when read, as Ansible does.
import type { KubesprayCheckout, VarDefinition } from './checkout.js';
import { lineOf, topLevelVars } from './checkout.js';
import { isMap, isSeq } from 'yaml';
import type { Inventory } from './inventory.js';
import { groupDepths, groupNames } from './inventory.js';
import { RuntimeValueError, templateValue } from '../ansible/jinja.js';
import type { Eval, Resolver } from '../ansible/jinja.js';

/** A variable whose value exists only at run time (register, set_fact from a runtime value). */
export interface RuntimeDefinition {
  name: string;
  runtime: true;
  file: string;
  line: number;
  how: string;
}

export type Definition = VarDefinition | RuntimeDefinition;

export interface HostContext {
  inventory: Inventory;
  /** Where the inventory file is, relative to the target root; group_vars/ and host_vars/ sit beside it. */
  inventoryDir: string;
  host: string;
}

/** Facts as Ansible names them without the ansible_ prefix (memtotal_mb, distribution, ...). */
export type FactMap = Record<string, unknown>;

export class VarContext {
  private readonly defs = new Map<string, Definition>();
  /** Definitions read while templating, for evidence. */
  readonly used: VarDefinition[] = [];
  /** set_fact tasks decided at run time that may replace a variable (shared with children). */
  runtimeOverrides: { name: string; note: string }[] = [];

  constructor(layers: Definition[] = []) {
    for (const d of layers) this.defs.set(d.name, d);
  }

  /** Names set by set_fact or register: Ansible's host-fact level (19), above block and task vars (16, 17). */
  private readonly facts = new Set<string>();

  /** A set_fact or register result: it outranks task and block vars from now on. */
  set(d: Definition): void {
    this.defs.set(d.name, d);
    this.facts.add(d.name);
  }

  get(name: string): Definition | undefined {
    return this.defs.get(name);
  }

  /** This context with the set_fact and register results of `other` on top (they are host-wide). */
  withFactsOf(other: VarContext): VarContext {
    const c = this.child([...other.facts].map((n) => other.defs.get(n)!));
    for (const f of other.facts) c.facts.add(f);
    c.runtimeOverrides = other.runtimeOverrides;
    return c;
  }

  /**
   * A copy for one task, sharing nothing mutable, with `extra` layered on top
   * (a loop item), or under set_fact/register results (`taskVars`: block and
   * task vars, which those outrank).
   */
  child(extra: Definition[] = [], o: { taskVars?: boolean } = {}): VarContext {
    const c = new VarContext([...this.defs.values(), ...(o.taskVars ? extra.filter((d) => !this.facts.has(d.name)) : extra)]);
    for (const f of this.facts) c.facts.add(f);
    c.runtimeOverrides = this.runtimeOverrides;
    return c;
  }

  readonly resolver: Resolver = (name) => {
    const d = this.defs.get(name);
    if (!d) return undefined;
    if ('runtime' in d) throw new RuntimeValueError({ name, origin: `${d.file}:${d.line} ${d.how}` });
    this.used.push(d);
    const r = templateValue(d.value, this.resolver);
    if (!r.ok) {
      if (r.runtime) throw new RuntimeValueError(r.runtime);
      throw new Error(`${name} (${d.file}:${d.line}): ${r.reason}`);
    }
    return { value: r.value };
  };

  /** Templates a value; records which definitions it used. */
  template(value: unknown): Eval<unknown> & { trail: VarDefinition[] } {
    const before = this.used.length;
    const r = templateValue(value, this.resolver);
    return { ...r, trail: this.used.slice(before) };
  }
}

// ---- loading the layers ------------------------------------------------------

/** vars files Ansible loads for a name in a vars dir: main.yml, main.yaml, main.json, or main/ in name order. */
async function varsDirFiles(ck: KubesprayCheckout, dir: string, name: string): Promise<string[]> {
  const out: string[] = [];
  for (const ext of ['', '.yml', '.yaml', '.json']) {
    const rel = `${dir}/${name}${ext}`;
    // Only whether a file is there: a file that does not parse is read (and refused, naming it) by varsFrom, never
    // taken for an absent one, which would leave its variables silently undefined. A directory does not read as text.
    if ((await ck.readText(rel).catch(() => null)) !== null && !(await isDir(ck, rel))) out.push(rel);
  }
  for (const f of await ck.list(`${dir}/${name}`)) if (/\.(ya?ml|json)$/.test(f) || !f.includes('.')) out.push(`${dir}/${name}/${f}`);
  return out;
}

async function isDir(ck: KubesprayCheckout, rel: string): Promise<boolean> {
  return (await ck.list(rel)).length > 0;
}

async function varsFrom(ck: KubesprayCheckout, rels: string[]): Promise<VarDefinition[]> {
  const out: VarDefinition[] = [];
  for (const rel of rels) {
    const f = await ck.yaml(rel);
    if (f) out.push(...topLevelVars(f));
  }
  return out;
}

export async function roleDefaultsOf(ck: KubesprayCheckout, role: string, from = 'main'): Promise<VarDefinition[]> {
  return varsFrom(ck, await varsDirFiles(ck, `roles/${role}/defaults`, from));
}

export async function roleVarsOf(ck: KubesprayCheckout, role: string, from = 'main'): Promise<VarDefinition[]> {
  return varsFrom(ck, await varsDirFiles(ck, `roles/${role}/vars`, from));
}

/** The running role's dependencies from meta/main.yml, depth first (their defaults load before the role's own). */
export async function roleDependencies(ck: KubesprayCheckout, role: string, seen: string[] = []): Promise<string[]> {
  const f = (await ck.yaml(`roles/${role}/meta/main.yml`)) ?? (await ck.yaml(`roles/${role}/meta/main.yaml`));
  if (!f) return [];
  const deps = (f.doc.toJSON() as { dependencies?: unknown } | null)?.dependencies;
  const out: string[] = [];
  for (const d of Array.isArray(deps) ? deps : []) {
    const name =
      typeof d === 'string' ? d : d && typeof d === 'object' ? ((d as Record<string, unknown>).role ?? (d as Record<string, unknown>).name) : undefined;
    if (typeof name !== 'string' || seen.includes(name) || name.includes('{{')) continue;
    if (!(await ck.exists(`roles/${name}`))) continue;
    out.push(...(await roleDependencies(ck, name, [...seen, role])), name);
  }
  return out;
}

/** The roles kubespray's play runs before the audited one; kubespray_defaults (or kubespray-defaults on old trees). */
export async function sharedDefaultsRole(ck: KubesprayCheckout): Promise<string | null> {
  for (const r of ['kubespray_defaults', 'kubespray-defaults']) if (await ck.exists(`roles/${r}`)) return r;
  return null;
}

/**
 * The roles of kubespray's play that runs `role` (playbooks/cluster.yml, or
 * cluster.yml on old trees), in play order: Ansible shows a task every play
 * role's defaults (Play.get_roles(), each with its dependencies), the running
 * role's on top. Null when no such play is found.
 */
export async function playRolesOf(ck: KubesprayCheckout, role: string): Promise<string[] | null> {
  for (const rel of ['playbooks/cluster.yml', 'cluster.yml']) {
    const f = await ck.yaml(rel).catch(() => null);
    const plays = f?.doc.toJSON() as unknown;
    if (!Array.isArray(plays)) continue;
    for (const play of plays) {
      const roles = play && typeof play === 'object' ? (play as Record<string, unknown>).roles : undefined;
      if (!Array.isArray(roles)) continue;
      const names = roles.map((r) =>
        typeof r === 'string' ? r : r && typeof r === 'object' ? ((r as Record<string, unknown>).role ?? (r as Record<string, unknown>).name) : undefined,
      );
      if (names.includes(role)) return names.filter((n): n is string => typeof n === 'string');
    }
  }
  return null;
}

/** The `environment:` of kubespray's play that runs `role`, where it is written (file:line of the play); null without such a play. */
export async function playEnvironmentOf(ck: KubesprayCheckout, role: string): Promise<{ value: unknown; where: string } | null> {
  for (const rel of ['playbooks/cluster.yml', 'cluster.yml']) {
    const f = await ck.yaml(rel).catch(() => null);
    if (!f || !isSeq(f.doc.contents)) continue;
    for (const node of f.doc.contents.items) {
      if (!isMap(node)) continue;
      const play = node.toJSON() as Record<string, unknown>;
      const roles = Array.isArray(play.roles) ? play.roles : [];
      const names = roles.map((r) =>
        typeof r === 'string' ? r : r && typeof r === 'object' ? ((r as Record<string, unknown>).role ?? (r as Record<string, unknown>).name) : undefined,
      );
      if (names.includes(role)) return { value: play.environment, where: `${rel}:${lineOf(f, node)}` };
    }
  }
  return null;
}

/** Every var of a group_vars/<name> or host_vars/<name> entry: a file (with or without extension) or a directory of files. */
async function inventoryVarsFiles(read: VarsReader, dir: string, name: string): Promise<VarDefinition[]> {
  const out: VarDefinition[] = [];
  for (const ext of ['', '.yml', '.yaml', '.json']) out.push(...(await read.file(`${dir}/${name}${ext}`)));
  for (const f of (await read.list(`${dir}/${name}`)).sort()) {
    if (/\.(ya?ml|json)$/.test(f) || !f.includes('.')) out.push(...(await read.file(`${dir}/${name}/${f}`)));
  }
  return out;
}

/** Reads YAML vars files by absolute target path (inventory dirs live outside the checkout). */
export interface VarsReader {
  file(abs: string): Promise<VarDefinition[]>;
  list(abs: string): Promise<string[]>;
}

function inventoryVars(vars: Record<string, unknown>, file: string, line: number): VarDefinition[] {
  return Object.entries(vars).map(([name, value]) => ({ name, value, file, line }));
}

export interface BuildOptions {
  ck: KubesprayCheckout;
  /** The audited role, e.g. kubernetes/preinstall. */
  role: string;
  /**
   * A role the audited one pulls in with include_role/import_role: its tasks
   * see its own defaults (defaults_from) and vars (vars_from) over the
   * including role's (ansible-core Role.get_default_vars and get_vars with the
   * including role in the dependency chain).
   */
  included?: { role: string; defaultsFrom: string; varsFrom: string };
  facts?: FactMap;
  host?: HostContext;
  reader?: VarsReader;
}

/** All layers for a task of `role`, lowest precedence first. */
export async function buildVarContext(o: BuildOptions): Promise<VarContext> {
  const { ck, role } = o;
  const layers: Definition[] = [];
  const shared = await sharedDefaultsRole(ck);
  const deps = await roleDependencies(ck, role);
  const fromPlay = await playRolesOf(ck, role);
  const playRoles = fromPlay ?? [...(shared && shared !== role ? [shared] : []), role];
  // 1-2: the play roles' defaults (each after its dependencies'), then the running role's dependencies and its own.
  for (const r of playRoles.filter((r) => r !== role)) {
    if (r.includes('{{') || !(await ck.exists(`roles/${r}`))) continue;
    for (const d of await roleDependencies(ck, r)) layers.push(...(await roleDefaultsOf(ck, d)));
    layers.push(...(await roleDefaultsOf(ck, r)));
  }
  for (const r of deps) layers.push(...(await roleDefaultsOf(ck, r)));
  layers.push(...(await roleDefaultsOf(ck, role)));
  const inc = o.included;
  const incDeps = inc ? await roleDependencies(ck, inc.role) : [];
  if (inc) {
    // The included role's dependencies, then its parent's own defaults, then its own.
    for (const r of incDeps) layers.push(...(await roleDefaultsOf(ck, r)));
    layers.push(...(await roleDefaultsOf(ck, role)));
    layers.push(...(await roleDefaultsOf(ck, inc.role, inc.defaultsFrom)));
  }
  const running = inc?.role ?? role;

  // 3-5: inventory
  const magic: Definition[] = [];
  if (o.host) layers.push(...(await inventoryLayers(o.host, ck, o.reader, magic)));
  // 6: facts under every name Ansible gives them
  if (o.facts) {
    magic.push({ name: 'ansible_facts', value: o.facts, file: '(facts)', line: 0 });
    for (const [k, v] of Object.entries(o.facts)) magic.push({ name: `ansible_${k}`, value: v, file: '(facts)', line: 0 });
  }
  magic.push(
    { name: 'ansible_check_mode', value: false, file: '(ansible)', line: 0 },
    // Ansible's placeholder for an omitted module argument.
    { name: 'omit', value: '__omit_place_holder__', file: '(ansible)', line: 0 },
    { name: 'playbook_dir', value: ck.dir, file: '(ansible)', line: 0 },
    { name: 'role_path', value: `${ck.dir}/roles/${running}`, file: '(ansible)', line: 0 },
    { name: 'role_name', value: running, file: '(ansible)', line: 0 },
  );
  if (o.host) magic.push({ name: 'inventory_dir', value: o.host.inventoryDir, file: '(inventory)', line: 0 });
  layers.push(...magic);
  // 7: role vars (every play role's, as private_role_vars is off by default)
  for (const r of playRoles.filter((r) => r !== role)) {
    if (r.includes('{{') || !(await ck.exists(`roles/${r}`))) continue;
    for (const d of await roleDependencies(ck, r)) layers.push(...(await roleVarsOf(ck, d)));
    layers.push(...(await roleVarsOf(ck, r)));
  }
  for (const r of deps) layers.push(...(await roleVarsOf(ck, r)));
  layers.push(...(await roleVarsOf(ck, role)));
  if (inc) {
    for (const r of incDeps) layers.push(...(await roleVarsOf(ck, r)));
    layers.push(...(await roleVarsOf(ck, inc.role, inc.varsFrom)));
  }
  return new VarContext(layers);
}

/**
 * Layers 3-5, inventory variables in ansible-core's VARIABLE_PRECEDENCE
 * (all_inventory, groups_inventory, all_plugins_inventory, all_plugins_play,
 * groups_plugins_inventory, groups_plugins_play; checked against
 * ansible-playbook), lowest first; the magic variables the inventory gives
 * (inventory_hostname, group_names, groups) go to `magic`.
 */
async function inventoryLayers(hc: HostContext, ck: KubesprayCheckout, reader: VarsReader | undefined, magic: Definition[]): Promise<Definition[]> {
  const out: Definition[] = [];
  const { inventory, host, inventoryDir } = hc;
  const groups = groupNames(inventory, host);
  const depth = groupDepths(inventory);
  // ansible-core sort_groups: (depth, priority, name), names compared as Python compares str (code points, not locale).
  const ordered = ['all', ...groups.filter((g) => g !== 'all').sort((a, b) => (depth.get(a) ?? 0) - (depth.get(b) ?? 0) || (a < b ? -1 : a > b ? 1 : 0))];
  const dirs = [inventoryDir, ck.dir];
  const invVars = (g: string) => inventoryVars(inventory.groups.get(g)?.vars ?? {}, inventory.file ?? 'inventory', inventory.groups.get(g)?.line ?? 0);
  out.push(...invVars('all'));
  for (const g of ordered.slice(1)) out.push(...invVars(g));
  if (reader) for (const d of dirs) out.push(...(await inventoryVarsFiles(reader, `${d}/group_vars`, 'all')));
  if (reader) for (const d of dirs) for (const g of ordered.slice(1)) out.push(...(await inventoryVarsFiles(reader, `${d}/group_vars`, g)));
  const h = inventory.hosts.get(host);
  out.push(...inventoryVars(h?.vars ?? {}, inventory.file ?? 'inventory', h?.line ?? 0));
  if (reader) for (const d of dirs) out.push(...(await inventoryVarsFiles(reader, `${d}/host_vars`, host)));
  const groupMap: Record<string, string[]> = {};
  for (const g of inventory.groups.keys()) groupMap[g] = [...inventory.hosts.keys()].filter((n) => g === 'all' || groupNames(inventory, n).includes(g));
  magic.push(
    { name: 'inventory_hostname', value: host, file: '(inventory)', line: 0 },
    { name: 'inventory_hostname_short', value: host.split('.')[0], file: '(inventory)', line: 0 },
    { name: 'group_names', value: groups, file: '(inventory)', line: 0 },
    { name: 'groups', value: groupMap, file: '(inventory)', line: 0 },
  );
  return out;
}

/** A reader over the target through a checkout's host. */
export function hostVarsReader(
  readText: (abs: string) => Promise<string | null>,
  readDir: (abs: string) => Promise<string[]>,
  parse: (text: string, file: string) => VarDefinition[],
): VarsReader {
  return {
    async file(abs) {
      const t = await readText(abs);
      return t === null ? [] : parse(t, abs);
    },
    list: readDir,
  };
}
