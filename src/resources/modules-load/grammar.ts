// The grammar of ModulesLoad's own values: module names as kmod and the
// kernel take them. Pure; null: accepted.

/**
 * Module names as kmod and the kernel take them: the kernel's MODULE_NAME_LEN
 * is 56 with the NUL, kmod's modname_normalize() cuts a name at the first
 * ".", and modprobe reads an argument starting with "-" as an option.
 */
export const MODULE_NAME_MAX = 55;

export function moduleNameProblem(name: string): string | null {
  if (name.startsWith('-')) return "must not begin with '-' (modprobe would read it as an option)";
  if (!/^[A-Za-z0-9_-]+$/.test(name)) return "must be a module name (letters, digits, '_' and '-')";
  if (name.length > MODULE_NAME_MAX) return `is longer than ${MODULE_NAME_MAX} characters, the kernel's limit for a module name`;
  return null;
}
