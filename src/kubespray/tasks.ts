// Walks a role's task files the way Ansible would reach them: from
// tasks/main.yml through import_tasks/include_tasks (short and FQCN) and into
// block/rescue/always, producing a flat list of module calls, each with the
// file, line and name a person can check.
import path from 'node:path';
import { isMap, isSeq } from 'yaml';
import type { Node, YAMLMap } from 'yaml';
import { KubesprayCheckout, lineOf, valueOf } from './checkout.js';
import type { YamlFile } from './checkout.js';
import {
  BLOCK_KEYWORDS,
  HARMLESS_LOOP_CONTROL,
  KEYWORD_CLASSES,
  LOOP_CONTROL_KEYWORDS,
  META_ENDS,
  META_HARMLESS,
  VALID_INCLUDE_KEYWORDS,
  isVariableName,
} from '../ansible/keywords.js';
import { freeFormArgs, splitModuleString } from '../ansible/kv-args.js';
import { pyType } from '../ansible/jinja.js';

export interface TaskRef {
  /** Relative to the checkout. */
  file: string;
  line: number;
  name: string;
}

export interface Task {
  ref: TaskRef;
  role: string;
  /** Canonical short module name ("sysctl" for ansible.posix.sysctl). */
  module: string;
  /** The module key as written. */
  rawModule: string;
  /** Mapping arguments, or { _raw_params } for free-form ones (command: /sbin/swapoff -a). */
  args: Record<string, unknown>;
  /** Loop items when the loop is literal (loop / with_items), else null. */
  loop: unknown[] | null;
  /** The loop as written when it is not a literal list (a template, say). */
  loopRaw?: unknown;
  /** `when` conditions of the task and of every enclosing import/include/block. */
  when: string[];
  /** The same conditions with where each was written, outermost first. */
  conditions: Condition[];
  /** Keywords that matter for data flow and outcome. */
  register?: string;
  failedWhen?: unknown;
  changedWhen?: unknown;
  /** Task and enclosing block vars, innermost last. */
  vars: Record<string, unknown>[];
  /**
   * `vars:` of the dynamic includes (include_tasks, include_role, include) around
   * the task, outermost first: include params, which outrank set_fact and
   * register results (ansible-playbook shows it; import_role's and
   * import_tasks' vars are task vars, below them).
   */
  params: Record<string, unknown>[];
  /** The innermost check_mode written on the task, its blocks or imports (or an include's apply). */
  checkMode: Condition | null;
  /** loop_control.loop_var: the name each loop item gets (item by default). */
  loopVar: string;
  /** The role whose defaults and vars the task sees (include_role/import_role change it). */
  varsRole?: { role: string; defaultsFrom: string; varsFrom: string };
  /** The innermost ignore_errors written on the task, its blocks or imports (or an include's apply); null: none. */
  ignoreErrors: Condition | null;
  /**
   * The block section of a block with rescue or always encloses the task: a
   * failure there runs those sections instead of simply ending the host.
   */
  guarded?: TaskRef;
}

export interface Condition {
  /** As written: a string, a boolean, ... */
  expr: unknown;
  file: string;
  line: number;
  /** Which level it was written on. */
  level: 'task' | 'block' | 'import' | 'include';
  /** Not a `when`: the task is in a block's rescue section and runs only when the block fails. */
  rescue?: boolean;
  /**
   * Not a `when` but another keyword that decides whether the task runs:
   * `tags` (expr: the tags of the task and everything around it), `meta`
   * (an earlier meta end_* whose own conditions are `gate`), or a keyword the
   * audit does not model (`unmodelled` says why; the status is unknown).
   */
  keyword?: string;
  /** The keyword's value as written (run_once: true, delegate_to: "{{ ... }}"). */
  value?: unknown;
  gate?: Condition[];
  unmodelled?: string;
}

/** Templates an include's file name; null when it cannot be known. */
export type IncludeTemplater = (value: string, conditions: Condition[]) => { value: string } | { reason: string };

export interface WalkIssue {
  ref: TaskRef;
  message: string;
  /** An include that could not be followed: tasks may be missing from the walk. */
  unfollowed?: boolean;
  /**
   * ansible-core refuses the task when it loads it: the play (or, in a
   * dynamically included file, the host) stops there, so no verdict about
   * what kubespray does holds.
   */
  refused?: boolean;
}

export interface RoleTasks {
  role: string;
  tasks: Task[];
  /** Task files read, in walk order. */
  files: string[];
  issues: WalkIssue[];
}

// Playbook keywords of a task (ansible-core's Task/Base/Conditional/Taggable/...
// attributes): anything else on a task is the module.
const TASK_KEYWORDS = new Set([
  'action',
  'any_errors_fatal',
  'args',
  'async',
  'become',
  'become_exe',
  'become_flags',
  'become_method',
  'become_user',
  'changed_when',
  'check_mode',
  'collections',
  'connection',
  'debugger',
  'delay',
  'delegate_facts',
  'delegate_to',
  'diff',
  'environment',
  'failed_when',
  'ignore_errors',
  'ignore_unreachable',
  'local_action',
  'loop',
  'loop_control',
  'module_defaults',
  'name',
  'no_log',
  'notify',
  'poll',
  'port',
  'register',
  'remote_user',
  'retries',
  'run_once',
  'tags',
  'throttle',
  'timeout',
  'until',
  'vars',
  'when',
  'listen',
  'block',
  'rescue',
  'always',
]);

// Collections whose modules we recognise by their short name. Other FQCNs are
// kept whole so a same-named third-party module is never mistaken for a builtin.
const KNOWN_COLLECTIONS = ['ansible.builtin.', 'ansible.legacy.', 'ansible.posix.', 'community.general.system.', 'community.general.'];

export function canonicalModule(raw: string): string {
  for (const prefix of KNOWN_COLLECTIONS) if (raw.startsWith(prefix)) return raw.slice(prefix.length);
  return raw;
}

const INCLUDE_MODULES = new Set(['include_tasks', 'import_tasks', 'include']);
const ROLE_MODULES = new Set(['include_role', 'import_role']);

const isMapping = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function asConditions(when: unknown): unknown[] {
  if (when === undefined || when === null) return [];
  if (Array.isArray(when)) return when;
  return [when];
}

function literalLoop(task: Record<string, unknown>): unknown[] | null {
  for (const key of ['loop', 'with_items', 'with_list']) {
    const v = task[key];
    if (Array.isArray(v)) return v;
  }
  return null;
}

/** Splits a task mapping into module, args and keywords. */
function moduleOf(task: Record<string, unknown>): ModuleCall | null {
  let raw: string | undefined;
  let value: unknown;
  for (const [k, v] of Object.entries(task)) {
    if (TASK_KEYWORDS.has(k) || k.startsWith('with_')) continue;
    raw = k;
    value = v;
    break;
  }
  if (task.action !== undefined || task.local_action !== undefined) {
    // ansible-core refuses a task that also names a module key ("conflicting action statements").
    if (raw !== undefined) return null;
    const a = task.action ?? task.local_action;
    if (typeof a === 'string') {
      const split = splitModuleString(a);
      raw = split.module;
      value = split.args;
    } else if (a && typeof a === 'object') {
      const { module, ...others } = a as Record<string, unknown>;
      if (typeof module === 'string') {
        // action: { module: 'sysctl name=x', value: 1 }: the words after the module are key=value too.
        const split = splitModuleString(module);
        raw = split.module;
        value = { ...others, ...freeFormArgs(split.module, split.args) };
      }
    }
  }
  if (raw === undefined) return null;
  let args: Record<string, unknown> = {};
  if (value && typeof value === 'object' && !Array.isArray(value)) args = { ...(value as Record<string, unknown>) };
  // key=value words are named arguments (parse_kv); command/shell/raw/script keep the rest as _raw_params.
  else if (typeof value === 'string') args = freeFormArgs(raw, value);
  if (task.args && typeof task.args === 'object') args = { ...(task.args as Record<string, unknown>), ...args };
  return { raw, args };
}

export async function walkRole(ck: KubesprayCheckout, role: string, templateInclude?: IncludeTemplater): Promise<RoleTasks> {
  const w: RoleWalk = {
    ck,
    tasksDir: `roles/${role}/tasks`,
    templateInclude,
    result: { role, tasks: [], files: [], issues: [] },
    active: [],
    currentRole: role,
    varsRole: undefined,
    ends: [],
    roleEnds: [],
  };
  await walkFile(w, `${w.tasksDir}/main.yml`, { conds: [], vars: [], params: [], tags: [], checkMode: null, keywords: [], ignoreErrors: null }, null);
  return w.result;
}

/** One role's walk: what it has found so far, and where in the role (and the roles it includes) it is. */
interface RoleWalk {
  ck: KubesprayCheckout;
  tasksDir: string;
  templateInclude: IncludeTemplater | undefined;
  result: RoleTasks;
  /** The task files being walked, outermost first: including one of them again is a loop. */
  active: string[];
  // The role a task belongs to (templates resolve in it); changes inside include_role.
  currentRole: string;
  varsRole: Task['varsRole'];
  // meta end_host/end_play/end_batch met so far: a later task runs only if none of them ran.
  ends: Condition[];
  // meta end_role met in the current role.
  roleEnds: Condition[];
}

interface Scope {
  conds: Condition[];
  vars: Record<string, unknown>[];
  params: Record<string, unknown>[];
  /** Tags of the task and everything around it: Ansible extends a task's tags with its parents'. */
  tags: { expr: unknown; file: string; line: number }[];
  checkMode: Condition | null;
  /** Keywords on the task or around it that the audit does not model. */
  keywords: Condition[];
  ignoreErrors: Condition | null;
  guarded?: TaskRef;
}

/** A module and its arguments, as moduleOf splits them out of a task. */
interface ModuleCall {
  raw: string;
  args: Record<string, unknown>;
}

/** A task or block mapping as written: its file, its YAML node (for lines) and its value. */
interface TaskAt {
  file: YamlFile;
  node: YAMLMap;
  task: Record<string, unknown>;
  ref: TaskRef;
}

/** A task with a module, in the scope its own keywords make. */
interface ModuleTask extends TaskAt {
  mod: ModuleCall;
  /** Canonical short name of mod.raw. */
  module: string;
  loop: unknown[] | null;
  scope: Scope;
  /** gates(scope): everything that decides whether the task runs. */
  conditions: Condition[];
}

async function walkFile(w: RoleWalk, rel: string, when: Scope, from: TaskRef | null): Promise<void> {
  if (w.active.includes(rel)) {
    if (from) w.result.issues.push({ ref: from, message: `include loop through ${rel}; not followed again` });
    return;
  }
  let file: YamlFile | null;
  try {
    file = await w.ck.yaml(rel);
  } catch (e) {
    w.result.issues.push({ ref: from ?? { file: rel, line: 0, name: '' }, message: (e as Error).message, unfollowed: true });
    return;
  }
  if (!file) {
    w.result.issues.push({ ref: from ?? { file: rel, line: 0, name: '' }, message: `task file ${rel} does not exist`, unfollowed: true });
    return;
  }
  w.result.files.push(rel);
  w.active.push(rel);
  const root = file.doc.contents;
  if (isSeq(root)) await walkList(w, file, root.items as Node[], when);
  w.active.pop();
}

async function walkList(w: RoleWalk, file: YamlFile, items: Node[], when: Scope): Promise<void> {
  for (const node of items) {
    if (!isMap(node)) continue;
    await walkTask(w, file, node as YAMLMap, when);
  }
}

/** Everything that decides whether a task at this point runs, outermost first. */
function gates(w: RoleWalk, scope: Scope): Condition[] {
  const last = scope.tags[scope.tags.length - 1];
  const tags: Condition[] = last ? [{ expr: scope.tags.map((t) => t.expr), file: last.file, line: last.line, level: 'task', keyword: 'tags' }] : [];
  return [...w.ends, ...w.roleEnds, ...tags, ...scope.keywords, ...scope.conds];
}

async function walkTask(w: RoleWalk, file: YamlFile, node: YAMLMap, inherited: Scope): Promise<void> {
  const read = readTask(w, file, node);
  if (read === null) return;
  const { task } = read;
  const ref: TaskRef = { file: file.rel, line: lineOf(file, node), name: typeof task.name === 'string' ? task.name : '' };
  // Block.is_block: any of the three sections makes the mapping a block.
  const isBlock = 'block' in task || 'rescue' in task || 'always' in task;
  const checked = moduleOrRefusal(task, isBlock);
  if ('refusal' in checked) {
    w.result.issues.push({ ref, message: `ansible-core refuses this task: ${checked.refusal}`, unfollowed: true, refused: true });
    return;
  }
  const t: TaskAt = { file, node, task, ref };
  const module = checked.mod ? canonicalModule(checked.mod.raw) : '';
  const scope = taskScope(t, levelOf(isBlock, module), module, inherited);
  if (isBlock) return walkBlock(w, t, scope);
  // refusalOf turned away a task without a module.
  const mt: ModuleTask = { ...t, mod: checked.mod!, module, loop: literalLoop(task), scope, conditions: gates(w, scope) };
  if (module === 'meta') return recordMeta(w, mt);
  if (ROLE_MODULES.has(module)) return walkRoleInclude(w, mt);
  if (INCLUDE_MODULES.has(module)) return walkTaskInclude(w, mt);
  pushTask(w, mt);
}

/** The task's value; null (and an issue) when ansible-core could not load it either. */
function readTask(w: RoleWalk, file: YamlFile, node: YAMLMap): { task: Record<string, unknown> } | null {
  try {
    return { task: valueOf(file, node) as Record<string, unknown> };
  } catch (e) {
    // A merge of a non-mapping: ansible-core's loader fails too. (The one other failure, more than the yaml
    // package's alias limit, is a resource attack ansible-core would load; no verdict holds either way.)
    w.result.issues.push({
      ref: { file: file.rel, line: lineOf(file, node), name: '' },
      message: `the task cannot be read: ${(e as Error).message}`,
      unfollowed: true,
      refused: true,
    });
    return null;
  }
}

/** The task's module (null for a block), or why ansible-core refuses the task. */
function moduleOrRefusal(task: Record<string, unknown>, isBlock: boolean): { mod: ModuleCall | null } | { refusal: string } {
  let mod: ModuleCall | null = null;
  let refusal: string | null = null;
  try {
    mod = isBlock ? null : moduleOf(task);
  } catch (e) {
    // An unbalanced quote or {{ in key=value arguments: kv-args words it as ansible-core does.
    refusal = (e as Error).message;
  }
  refusal ??= refusalOf(task, isBlock, mod);
  return refusal === null ? { mod } : { refusal };
}

/** The level a task's own keywords are written on. */
function levelOf(isBlock: boolean, module: string): Condition['level'] {
  if (isBlock) return 'block';
  if (module === 'import_tasks' || module === 'import_role') return 'import';
  return INCLUDE_MODULES.has(module) || ROLE_MODULES.has(module) ? 'include' : 'task';
}

/** The line of one of the task's keys, or of the task when the key is not written. */
function keyLine(t: TaskAt, key: string): number {
  return lineOf(t.file, (t.node.get(key, true) as Node | undefined) ?? t.node);
}

/** The scope inside the task: the one around it with the task's own keywords added. */
function taskScope(t: TaskAt, level: Condition['level'], module: string, inherited: Scope): Scope {
  const { file, node, task } = t;
  const at = (key: string): number => keyLine(t, key);
  const whenNode = node.get('when', true) as Node | undefined;
  const own = asConditions(task.when).map((expr) => ({ expr, file: file.rel, line: lineOf(file, whenNode ?? node), level }));
  const taskVars = varsLayers(task.vars);
  const dynamic = module === 'include_tasks' || module === 'include_role' || module === 'include';
  return {
    conds: [...inherited.conds, ...own],
    vars: dynamic ? inherited.vars : [...inherited.vars, ...taskVars],
    params: dynamic ? [...inherited.params, ...taskVars] : inherited.params,
    tags: [...inherited.tags, ...ownTags(task.tags, file.rel, at('tags'))],
    // include_tasks/include_role refuse check_mode (refusalOf), so this is a task's, a block's or an import's.
    checkMode: 'check_mode' in task ? { expr: task.check_mode, file: file.rel, line: at('check_mode'), level, keyword: 'check_mode' } : inherited.checkMode,
    keywords: [...inherited.keywords, ...unmodelledKeywords(task, level, file.rel, at)],
    // An include's own ignore_errors is about the include; its tasks get one only through apply.
    ignoreErrors:
      'ignore_errors' in task && !dynamic
        ? { expr: task.ignore_errors, file: file.rel, line: at('ignore_errors'), level, keyword: 'ignore_errors' }
        : inherited.ignoreErrors,
    ...(inherited.guarded ? { guarded: inherited.guarded } : {}),
  };
}

async function walkBlock(w: RoleWalk, t: TaskAt, scope: Scope): Promise<void> {
  const { file, node, ref } = t;
  for (const section of ['block', 'rescue', 'always']) {
    const child = node.get(section, true) as Node | undefined;
    if (!isSeq(child)) continue;
    const handled = section === 'block' && (isSeq(node.get('rescue', true)) || isSeq(node.get('always', true)));
    const inner: Scope =
      section === 'rescue'
        ? {
            ...scope,
            conds: [
              ...scope.conds,
              { expr: `a task of the block at ${file.rel}:${ref.line} failed`, file: file.rel, line: lineOf(file, child), level: 'block', rescue: true },
            ],
          }
        : handled
          ? { ...scope, guarded: ref }
          : scope;
    await walkList(w, file, child.items as Node[], inner);
  }
}

/** A meta task: an end_* gates every later task (end_role those of the current role); other actions are harmless or unknown. */
function recordMeta(w: RoleWalk, mt: ModuleTask): void {
  const { file, ref, mod } = mt;
  // Not trimmed: parse_kv keeps trailing blanks and _execute_meta compares the text as it is.
  const action = typeof mod.args._raw_params === 'string' ? mod.args._raw_params : '';
  const gate: Condition = {
    expr: `meta: ${action} at ${file.rel}:${ref.line} ran`,
    file: file.rel,
    line: ref.line,
    level: 'task',
    keyword: 'meta',
    gate: mt.conditions,
  };
  if (action === 'end_role') w.roleEnds = [...w.roleEnds, gate];
  else if (META_ENDS.has(action)) w.ends = [...w.ends, gate];
  else if (!META_HARMLESS.has(action))
    // Blanks around the action are shown quoted: they are why ansible-core does not know it.
    w.ends = [
      ...w.ends,
      {
        ...gate,
        unmodelled: `meta: ${action ? (action.trim() === action ? action : JSON.stringify(action)) : JSON.stringify(mod.args)} is not modelled; what runs after it is unknown`,
      },
    ];
}

// include_tasks/include_role `apply:` puts its keywords on every included task, as a block around them.
function applyScope(mt: ModuleTask, into: Scope): Scope {
  const { file, node, mod } = mt;
  const a = mod.args.apply;
  if (!isMapping(a)) return into;
  // The line of the apply: mapping, under the module key or under args:.
  const applyNode = [node.get(mod.raw, true), node.get('args', true)]
    .map((n) => (isMap(n) ? (n.get('apply', true) as Node | undefined) : undefined))
    .find((n) => n !== undefined);
  const line = applyNode ? lineOf(file, applyNode) : keyLine(mt, mod.raw);
  return {
    conds: [...into.conds, ...asConditions(a.when).map((expr) => ({ expr, file: file.rel, line, level: 'block' as const }))],
    vars: [...into.vars, ...varsLayers(a.vars)],
    params: into.params,
    tags: [...into.tags, ...ownTags(a.tags, file.rel, line)],
    checkMode: 'check_mode' in a ? { expr: a.check_mode, file: file.rel, line, level: 'block', keyword: 'check_mode' } : into.checkMode,
    keywords: [...into.keywords, ...unmodelledKeywords(a, 'block', file.rel, () => line)],
    ignoreErrors: 'ignore_errors' in a ? { expr: a.ignore_errors, file: file.rel, line, level: 'block', keyword: 'ignore_errors' } : into.ignoreErrors,
    ...(into.guarded ? { guarded: into.guarded } : {}),
  };
}

/** include_role/import_role: the role's task file, walked in place with the including task's conditions. */
async function walkRoleInclude(w: RoleWalk, mt: ModuleTask): Promise<void> {
  const { mod, ref, scope } = mt;
  const name = mod.args.name ?? mod.args.role;
  const from = mod.args.tasks_from ?? 'main';
  const fromOk = (v: unknown) => v === undefined || (typeof v === 'string' && !v.includes('{{'));
  if (
    typeof name !== 'string' ||
    typeof from !== 'string' ||
    name.includes('{{') ||
    from.includes('{{') ||
    !fromOk(mod.args.vars_from) ||
    !fromOk(mod.args.defaults_from)
  ) {
    w.result.issues.push({ ref, message: `${mod.raw} of a templated role (${String(name)}); not followed`, unfollowed: true });
    return;
  }
  // Ansible takes the base name of *_from and looks in the role's tasks/, vars/, defaults/.
  const base = `roles/${name}/tasks/${path.posix.basename(from)}`;
  const rel = /\.ya?ml$/.test(from) ? base : (await w.ck.exists(`${base}.yml`)) ? `${base}.yml` : `${base}.yaml`;
  const saved = { currentRole: w.currentRole, varsRole: w.varsRole, roleEnds: w.roleEnds };
  w.currentRole = name;
  w.varsRole = {
    role: name,
    defaultsFrom: path.posix.basename(String(mod.args.defaults_from ?? 'main')),
    varsFrom: path.posix.basename(String(mod.args.vars_from ?? 'main')),
  };
  w.roleEnds = [];
  // The outer role's end_role stops the include too; the included role's own start empty.
  await walkFile(w, rel, applyScope(mt, { ...scope, conds: [...saved.roleEnds, ...scope.conds] }), ref);
  Object.assign(w, saved);
}

/** include_tasks/import_tasks/include: each file it names (one per loop item), walked in place. */
async function walkTaskInclude(w: RoleWalk, mt: ModuleTask): Promise<void> {
  const { file, mod, ref, loop, conditions, scope } = mt;
  const target = typeof mod.args._raw_params === 'string' ? mod.args._raw_params : mod.args.file;
  let targets = typeof target === 'string' ? expandItem(target, loop) : [];
  const { templateInclude } = w;
  if (templateInclude && targets.length > 0 && targets.every((t) => typeof t === 'string')) {
    const done = targets.map((t) => ((t as string).includes('{{') ? templateInclude(t as string, conditions) : { value: t as string }));
    const bad = done.find((d): d is { reason: string } => 'reason' in d);
    if (bad) {
      w.result.issues.push({ ref, message: `${mod.raw} ${String(target)} cannot be evaluated (${bad.reason}); not followed`, unfollowed: true });
      return;
    }
    targets = done.map((d) => (d as { value: string }).value);
  }
  if (targets.length === 0 || targets.some((t) => typeof t !== 'string' || t.includes('{{'))) {
    w.result.issues.push({ ref, message: `${mod.raw} with a templated file (${String(target)}); not followed`, unfollowed: true });
    return;
  }
  for (const t of targets as string[]) {
    const rel = await resolveInclude(w.ck, file.rel, w.tasksDir, t.trim());
    await walkFile(w, rel, applyScope(mt, scope), ref);
  }
}

/** A task that runs a module: one more entry in the walk's flat list. */
function pushTask(w: RoleWalk, mt: ModuleTask): void {
  const { task, ref, module, mod, loop, conditions, scope } = mt;
  const loopControl = isMapping(task.loop_control) ? task.loop_control : {};
  w.result.tasks.push({
    ref,
    role: w.currentRole,
    module,
    rawModule: mod.raw,
    args: mod.args,
    loop,
    loopRaw: loop ? undefined : (task.loop ?? task.with_items ?? task.with_list),
    when: conditions.filter((c) => !c.rescue && !c.keyword).map((c) => String(c.expr)),
    conditions,
    register: typeof task.register === 'string' ? task.register : undefined,
    failedWhen: task.failed_when,
    changedWhen: task.changed_when,
    vars: scope.vars,
    params: scope.params,
    checkMode: scope.checkMode,
    ignoreErrors: scope.ignoreErrors,
    ...(scope.guarded ? { guarded: scope.guarded } : {}),
    loopVar: typeof loopControl.loop_var === 'string' ? loopControl.loop_var : 'item',
    ...(w.varsRole ? { varsRole: w.varsRole } : {}),
  });
}

function ownTags(tags: unknown, file: string, line: number): Scope['tags'] {
  // Taggable._load_tags: a string is a comma-separated list, a list is taken item by item (refusalOf turns away the rest).
  const items = Array.isArray(tags) ? tags : typeof tags === 'string' ? tags.split(',').map((t) => t.trim()) : [];
  return items.map((expr) => ({ expr, file, line }));
}

/**
 * vars: as ansible-core's _load_vars reads them: a mapping, or a list of
 * mappings merged in order (later names win); null is none. refusalOf turns
 * away any other shape before the walk reads them.
 */
function varsLayers(v: unknown): Record<string, unknown>[] {
  if (isMapping(v)) return [v];
  return Array.isArray(v) ? v.filter(isMapping) : [];
}

/**
 * Why ansible-core refuses a task or block mapping as it loads it (Block,
 * Taggable, LoopControl and TaskInclude checks), in its words, or null. The
 * walk leaves the task out and says so; who-fixes then keeps no verdict.
 */
function refusalOf(task: Record<string, unknown>, isBlock: boolean, mod: ModuleCall | null): string | null {
  const modules = moduleKeys(task);
  const shape = isBlock ? blockShapeRefusal(task) : actionRefusal(task, mod, modules);
  if (shape !== null) return shape;
  const module = mod ? canonicalModule(mod.raw) : '';
  if (module === 'include_tasks' || module === 'include_role') {
    // TaskInclude.preprocess_data: besides the module key (and with_*, which become loop), only its keywords.
    const stray = Object.keys(task).find((k) => k !== mod!.raw && !k.startsWith('with_') && !VALID_INCLUDE_KEYWORDS.has(k));
    if (stray !== undefined) return `'${stray}' is not a valid attribute for a ${module === 'include_role' ? 'IncludeRole' : 'TaskInclude'}`;
  }
  // A block reaches here with Block's keys only (all of them a Task's too, or block/rescue/always).
  // ModuleArgsParser takes one module. A second key that is no keyword is another module or a typo
  // (`whne:`); which, depends on the collections where kubespray runs, but ansible-core refuses the task either way.
  const [a, b] = modules;
  if (b !== undefined)
    return `${a} and ${b} are no task keywords and only one can be the module: ansible-core refuses the task ("conflicting action statements" when both are modules, "not a valid attribute for a Task" when one is misspelt)`;
  const loops = loopKeys(task);
  // Task._preprocess_with_loop: a with_* after a loop or another with_* is a second loop (one whose lookup
  // does not exist is refused as an attribute instead: refused either way). A loop after a with_* is
  // loaded, and the with_* wins at run time.
  const second = loops.slice(1).find((k) => k.startsWith('with_'));
  if (second !== undefined) return `duplicate loop in task: ${second.slice('with_'.length)}`;
  if (isMapping(task.loop_control)) {
    const stray = Object.keys(task.loop_control).find((k) => !LOOP_CONTROL_KEYWORDS.has(k));
    if (stray !== undefined) return `'${stray}' is not a valid attribute for a LoopControl`;
  }
  // helpers.load_list_of_tasks: an import is read once, as the play loads, so it cannot loop.
  if ((module === 'import_tasks' || module === 'import_role') && loops.length > 0)
    return `You cannot use loops on '${module}' statements. You should use '${module.replace('import_', 'include_')}' instead.`;
  const options = mod ? includeOptionsRefusal(module, mod) : null;
  if (options !== null) return options;
  if ('vars' in task) {
    const vars = varsRefusal(task.vars, isBlock, module);
    if (vars !== null) return vars;
  }
  if ('tags' in task && !Array.isArray(task.tags) && typeof task.tags !== 'string') return 'tags must be specified as a list';
  if ('loop_control' in task && !isMapping(task.loop_control))
    return 'the `loop_control` value must be specified as a dictionary and cannot be a variable itself (though it can contain variables)';
  const args = INCLUDE_MODULES.has(module) || ROLE_MODULES.has(module) ? mod!.args : {};
  return 'apply' in args ? applyRefusal(module, args.apply) : null;
}

/** Block's own checks: its keys, and sections that are lists, with tasks in the block when rescue or always has some. */
function blockShapeRefusal(task: Record<string, unknown>): string | null {
  const stray = Object.keys(task).find((k) => !BLOCK_KEYWORDS.has(k));
  if (stray !== undefined) return `'${stray}' is not a valid attribute for a Block`;
  for (const [section, what] of [
    ['block', 'a block'],
    ['rescue', 'rescue.'],
    ['always', 'always'],
  ] as const)
    if (section in task && !Array.isArray(task[section])) return `A malformed block was encountered while loading ${what}`;
  // Block._validate_rescue/_validate_always: tasks to rescue or follow need tasks in the block.
  if (!(task.block as unknown[] | undefined)?.length)
    for (const section of ['rescue', 'always'])
      if ((task[section] as unknown[] | undefined)?.length) return `'${section}' keyword cannot be used without 'block'`;
  return null;
}

/** ModuleArgsParser's checks of a task's action: its type, action with local_action, args, and a module at all. */
function actionRefusal(task: Record<string, unknown>, mod: ModuleCall | null, modules: string[]): string | null {
  for (const k of ['action', 'local_action'])
    if (k in task && typeof task[k] !== 'string' && !isMapping(task[k])) return `unexpected parameter type in action: <class '${pyType(task[k])}'>`;
  if ('action' in task && 'local_action' in task) return 'action and local_action are mutually exclusive';
  const args = argsRefusal(task.args);
  if (args !== null) return args;
  if (mod === null && modules.length < 2) return 'no module/action detected in task.';
  return null;
}

/** FieldAttributeBase._load_vars, in the words of the class that loads the mapping. */
function varsRefusal(v: unknown, isBlock: boolean, module: string): string | null {
  const cls = isBlock ? 'Block' : module === 'include_role' || module === 'import_role' ? 'IncludeRole' : INCLUDE_MODULES.has(module) ? 'TaskInclude' : 'Task';
  if (v !== null && !isMapping(v) && !(Array.isArray(v) && v.every(isMapping)))
    return `Vars in a ${cls} must be specified as a dictionary, or a list of dictionaries`;
  const bad = varsLayers(v)
    .flatMap((layer) => Object.keys(layer))
    .find((name) => !isVariableName(name));
  if (bad !== undefined) return `Invalid variable name in vars specified for ${cls}: '${bad}' is not a valid variable name`;
  return null;
}

/** TaskInclude/IncludeRole: only the dynamic includes take apply, and only as a mapping. */
function applyRefusal(module: string, apply: unknown): string | null {
  if (module !== 'include_tasks' && module !== 'include_role') return `Invalid options for ${module}: apply`;
  if (!isMapping(apply)) return `Expected a dict for apply but got <class '${pyType(apply)}'> instead`;
  // TaskInclude.build_parent_block loads apply as a Block (of no tasks) when the include runs;
  // a refusal there ends ansible-playbook (ERROR!) at the include, with none of its tasks run.
  const asBlock = refusalOf({ ...apply, block: [] }, true, null);
  if (asBlock !== null) return `${asBlock} (in apply, loaded as a Block when the include runs)`;
  return null;
}

/** ModuleArgsParser._normalize_parameters: `args:` is a mapping, or a template giving one at run time; empty is none. */
function argsRefusal(v: unknown): string | null {
  if (!v || isMapping(v)) return null;
  if (typeof v !== 'string') return 'Complex args must be a dictionary or variable string ("{{var}}").';
  // Templar.is_template: a variable, a block or a comment opens (jinja.ts isTemplate leaves out the comment).
  if (['{{', '{%', '{#'].some((open) => v.includes(open))) return null;
  return "Complex args containing variables cannot use bare variables (without Jinja2 delimiters), and must use the full variable style ('{{var_name}}')";
}

// Attributes a task may carry besides those the walk reads (TASK_KEYWORDS): ansible-core's internal names.
const INTERNAL_TASK_ATTRIBUTES: ReadonlySet<string> = new Set(['async_val', 'loop_with']);

/** The keys ModuleArgsParser could take for the module, in order: action's module first, then every key that is no keyword. */
function moduleKeys(task: Record<string, unknown>): string[] {
  const out: string[] = [];
  const a = task.action ?? task.local_action;
  if (typeof a === 'string') out.push(splitModuleString(a).module);
  else if (isMapping(a) && typeof a.module === 'string') out.push(splitModuleString(a.module).module);
  for (const k of Object.keys(task)) if (!TASK_KEYWORDS.has(k) && !INTERNAL_TASK_ATTRIBUTES.has(k) && !k.startsWith('with_')) out.push(k);
  return out;
}

/** The keys that give a task a loop, in the order written: loop (unless null) and each with_*. */
function loopKeys(task: Record<string, unknown>): string[] {
  return Object.entries(task)
    .filter(([k, v]) => (k === 'loop' && v !== null) || k.startsWith('with_'))
    .map(([k]) => k);
}

// IncludeRole.VALID_ARGS and TaskInclude.VALID_ARGS (ansible-core 2.14; tasks.scope.test.ts asks the installed one).
const ROLE_ARGS: ReadonlySet<string> = new Set([
  'name',
  'role',
  'tasks_from',
  'vars_from',
  'defaults_from',
  'handlers_from',
  'apply',
  'public',
  'allow_duplicates',
  'rolespec_validate',
]);
const TASKS_ARGS: ReadonlySet<string> = new Set(['file', '_raw_params', 'apply']);

/** IncludeRole.load and TaskInclude.check_options: the arguments an include or import takes, named as the task writes its action. */
function includeOptionsRefusal(module: string, mod: ModuleCall): string | null {
  const names = Object.keys(mod.args);
  if (ROLE_MODULES.has(module)) {
    if ((mod.args.name ?? mod.args.role ?? null) === null) return `'name' is a required field for ${mod.raw}.`;
    if (module === 'import_role' && 'public' in mod.args) return `Invalid options for ${mod.raw}: public`;
    const bad = names.filter((k) => !ROLE_ARGS.has(k));
    if (bad.length > 0) return `Invalid options for ${mod.raw}: ${bad.join(',')}`;
  }
  if (module === 'include_tasks' || module === 'import_tasks') {
    const bad = names.filter((k) => !TASKS_ARGS.has(k));
    if (bad.length > 0) return `Invalid options for ${mod.raw}: ${bad.join(',')}`;
    if (!mod.args._raw_params && !mod.args.file) return `No file specified for ${mod.raw}`;
  }
  return null;
}

/** Conditions for the keywords of one task or block that decide how it runs and are not modelled. */
function unmodelledKeywords(task: Record<string, unknown>, level: Condition['level'], file: string, at: (key: string) => number): Condition[] {
  const out: Condition[] = [];
  for (const [k, v] of Object.entries(task)) {
    // refusalOf has seen to it that loop_control is a mapping.
    if (k === 'loop_control') {
      for (const lk of Object.keys(v as Record<string, unknown>)) {
        if (!HARMLESS_LOOP_CONTROL.has(lk))
          out.push({ expr: `loop_control.${lk}`, file, line: at(k), level, keyword: k, unmodelled: `loop_control.${lk} is not modelled` });
      }
      continue;
    }
    // args from a template: the module's arguments are known only at run time.
    if (k === 'args' && typeof v === 'string' && v !== '') {
      out.push({
        expr: `args: ${JSON.stringify(v)}`,
        value: v,
        file,
        line: at(k),
        level,
        keyword: k,
        unmodelled: 'args from a template is not modelled: the module gets its arguments at run time',
      });
      continue;
    }
    const c = KEYWORD_CLASSES[k];
    if (c?.class === 'unknown')
      out.push({ expr: `${k}: ${JSON.stringify(v)}`, value: v, file, line: at(k), level, keyword: k, unmodelled: `${k} is not modelled: ${c.why}` });
  }
  return out;
}

/** Ansible looks for a relative include next to the including file first, then in the role's tasks/. */
async function resolveInclude(ck: KubesprayCheckout, fromRel: string, tasksDir: string, target: string): Promise<string> {
  const candidates = [path.posix.join(path.posix.dirname(fromRel), target), path.posix.join(tasksDir, target)];
  for (const c of candidates) if (await ck.exists(c)) return path.posix.normalize(c);
  return path.posix.normalize(candidates[1]!);
}

/**
 * Values of `value` over a literal loop: "{{ item }}" and "{{ item.key }}"
 * take each item; anything else is the value itself.
 */
export function expandItem(value: unknown, loop: unknown[] | null): unknown[] {
  if (typeof value !== 'string') return [value];
  const m = /^\s*\{\{\s*item(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[['"]([^'"]+)['"]\])?\s*\}\}\s*$/.exec(value);
  if (!m) return [value];
  if (!loop) return [value];
  const key = m[1] ?? m[2];
  return loop.map((it) => (key === undefined ? it : it && typeof it === 'object' ? (it as Record<string, unknown>)[key] : undefined));
}
