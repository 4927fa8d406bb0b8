// Every keyword ansible-core 2.14 accepts on a task or block (Task.fattributes,
// Block.fattributes, Handler's listen, and local_action/with_* that
// ModuleArgsParser reads), and what the walk does with each. A keyword that
// changes whether or how a task acts on this host is either modelled or turns
// the task's status into `unknown`, naming the file, line and keyword.
//
//   modelled   action args local_action loop loop_with with_* loop_control.loop_var name
//              register vars when tags check_mode block rescue always apply (include_*)
//   harmless   any_errors_fatal async poll become become_exe become_flags become_method
//              become_user changed_when debugger delay diff environment failed_when
//              ignore_errors ignore_unreachable no_log notify listen port remote_user
//              retries until throttle timeout delegate_facts
//   unknown    collections (a short module name may then resolve to another collection),
//              connection (`local` runs the module on the controller), delegate_to (runs
//              it on another host), module_defaults (arguments the task does not show),
//              run_once (runs for the first host of the batch only), loop_control other
//              than loop_var/label/index_var/pause/extended
//
// "Harmless" means: the task still runs on this host with the arguments it
// shows; whether it then fails is not something the audit decides for any task.

export type KeywordClass = 'modelled' | 'harmless' | 'unknown';

export const KEYWORD_CLASSES: Readonly<Record<string, { class: KeywordClass; why: string }>> = {
  action: { class: 'modelled', why: 'the module' },
  args: { class: 'modelled', why: 'module arguments' },
  local_action: { class: 'modelled', why: 'the module' },
  loop: { class: 'modelled', why: 'loop items' },
  loop_with: { class: 'modelled', why: 'with_* loop items' },
  loop_control: { class: 'modelled', why: 'loop_var names the item' },
  name: { class: 'modelled', why: 'evidence' },
  register: { class: 'modelled', why: 'a value known at run time' },
  vars: { class: 'modelled', why: 'task and block vars' },
  when: { class: 'modelled', why: 'conditions' },
  tags: { class: 'modelled', why: 'kubespray runs untagged: a task tagged never (and not always) is skipped' },
  check_mode: { class: 'modelled', why: 'a module in check mode changes nothing' },
  block: { class: 'modelled', why: 'block' },
  rescue: { class: 'modelled', why: 'runs only when the block fails' },
  always: { class: 'modelled', why: 'block' },
  any_errors_fatal: { class: 'harmless', why: 'only what happens after a failure' },
  async: { class: 'harmless', why: 'the module still runs' },
  poll: { class: 'harmless', why: 'the module still runs' },
  become: { class: 'harmless', why: 'privilege, not what the module does' },
  become_exe: { class: 'harmless', why: 'privilege' },
  become_flags: { class: 'harmless', why: 'privilege' },
  become_method: { class: 'harmless', why: 'privilege' },
  become_user: { class: 'harmless', why: 'privilege' },
  changed_when: { class: 'harmless', why: 'only the reported status' },
  debugger: { class: 'harmless', why: 'interactive only' },
  delay: { class: 'harmless', why: 'retry timing' },
  diff: { class: 'harmless', why: 'output only' },
  environment: { class: 'harmless', why: 'environment of the module process' },
  failed_when: { class: 'harmless', why: 'only the reported status' },
  ignore_errors: { class: 'harmless', why: 'only what happens after a failure' },
  ignore_unreachable: { class: 'harmless', why: 'only what happens after a failure' },
  no_log: { class: 'harmless', why: 'output only' },
  notify: { class: 'harmless', why: 'handlers are not walked' },
  listen: { class: 'harmless', why: 'handlers are not walked' },
  port: { class: 'harmless', why: 'connection detail' },
  remote_user: { class: 'harmless', why: 'connection detail' },
  retries: { class: 'harmless', why: 'retry count' },
  until: { class: 'harmless', why: 'retry condition' },
  throttle: { class: 'harmless', why: 'concurrency' },
  timeout: { class: 'harmless', why: 'the module still runs' },
  delegate_facts: { class: 'harmless', why: 'only with delegate_to' },
  collections: { class: 'unknown', why: 'a short module name may resolve to another collection' },
  connection: { class: 'unknown', why: 'the module may run somewhere else than on this host' },
  delegate_to: { class: 'unknown', why: 'the module runs on another host' },
  module_defaults: { class: 'unknown', why: 'the module gets arguments the task does not show' },
  run_once: { class: 'unknown', why: 'the task runs for the first host of the batch only' },
};

/** Keywords include_tasks/include_role accept (ansible-core TaskInclude.VALID_INCLUDE_KEYWORDS); others make ansible-playbook refuse the play. */
export const VALID_INCLUDE_KEYWORDS: ReadonlySet<string> = new Set([
  'action',
  'args',
  'collections',
  'debugger',
  'ignore_errors',
  'loop',
  'loop_control',
  'loop_with',
  'name',
  'no_log',
  'register',
  'run_once',
  'tags',
  'timeout',
  'vars',
  'when',
]);

/** What a block mapping may hold (ansible-core 2.14 Block's attributes); any other key makes ansible-core refuse the play. */
export const BLOCK_KEYWORDS: ReadonlySet<string> = new Set([
  'always',
  'any_errors_fatal',
  'become',
  'become_exe',
  'become_flags',
  'become_method',
  'become_user',
  'block',
  'check_mode',
  'collections',
  'connection',
  'debugger',
  'delegate_facts',
  'delegate_to',
  'diff',
  'environment',
  'ignore_errors',
  'ignore_unreachable',
  'module_defaults',
  'name',
  'no_log',
  'notify',
  'port',
  'remote_user',
  'rescue',
  'run_once',
  'tags',
  'throttle',
  'timeout',
  'vars',
  'when',
]);

/** loop_control keys that do not change which item a module gets. */
export const HARMLESS_LOOP_CONTROL: ReadonlySet<string> = new Set(['label', 'pause', 'index_var', 'extended', 'extended_allitems', 'loop_var']);
/**
 * What loop_control may hold (LoopControl's attributes): any other key makes ansible-core refuse the play.
 * break_when came with ansible-core 2.18 (2.14 refuses it); it is taken here, and is not modelled.
 */
export const LOOP_CONTROL_KEYWORDS: ReadonlySet<string> = new Set([...HARMLESS_LOOP_CONTROL, 'break_when']);

/** meta actions: end_* stop later tasks, the rest do not change what later tasks do on this host. */
export const META_ENDS: ReadonlySet<string> = new Set(['end_host', 'end_play', 'end_batch', 'end_role']);
export const META_HARMLESS: ReadonlySet<string> = new Set(['noop', 'flush_handlers', 'refresh_inventory', 'clear_host_errors', 'reset_connection']);

// Python 3.11's keyword.kwlist: ansible-core's isidentifier refuses these as variable names.
const PYTHON_KEYWORDS: ReadonlySet<string> = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
);

/** ansible.utils.vars.isidentifier: an ASCII Python identifier that is not a keyword. */
export function isVariableName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !PYTHON_KEYWORDS.has(name);
}
