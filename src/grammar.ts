// The grammar of the values in desired-state.yaml that reach files, the
// kernel or a command line. The desired state comes from a pipeline and is
// not trusted: each rule here says what the value's real consumer accepts,
// and each function returns the reason a value is refused (null: accepted).
// Pure; the providers' grammar traits apply them, reconcile/load.ts locates.
// The rules of one resource's own values are in its folder (grammar.ts).
import path from 'node:path';

/** `name` is printed in plans and written in our files' header line: a plain label. */
export const NAME_MAX = 63;

export function nameProblem(name: string): string | null {
  if (name.length === 0 || name.length > NAME_MAX || !/^[A-Za-z0-9_.-]+$/.test(name)) {
    return `must be a plain label: 1 to ${NAME_MAX} of letters, digits, '_', '.' and '-'`;
  }
  return null;
}

/** The file a resource owns in a consumer's drop-in directory: DIR/NAME.conf; `reader`: the program that reads DIR, named when it would skip the file. */
export function ownedFileProblem(file: string, dir: string, reader: string): string | null {
  const want = `must be a file ${dir}/NAME.conf`;
  if (path.posix.dirname(file) !== dir) return want;
  const base = path.posix.basename(file);
  if (!base.endsWith('.conf') || base === '.conf') return want;
  if (base.startsWith('.')) return `names a hidden file, which ${reader} never reads`;
  const stem = base.slice(0, -'.conf'.length);
  if (!/^[A-Za-z0-9_.@+-]+$/.test(stem)) return `${want}, NAME of letters, digits and _ . @ + -`;
  return null;
}

/** Directories the reports (and the run journal with its backups) must never be written into. */
export const FORBIDDEN_REPORTS_DIRS = ['/', '/etc', '/proc', '/sys', '/dev', '/boot', '/usr'] as const;

export function reportsDirProblem(dir: string): string | null {
  if (!dir.startsWith('/') || dir.split('/').includes('..')) return "must be an absolute path without '..'";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(dir)) return 'must not contain control characters';
  const norm = path.posix.normalize(dir).replace(/(.)\/+$/, '$1');
  if ((FORBIDDEN_REPORTS_DIRS as readonly string[]).includes(norm)) {
    return `must not be ${norm}: the reports and the run journal would be written among the system's own files`;
  }
  for (const kernel of ['/proc', '/sys', '/dev']) {
    if (norm.startsWith(kernel + '/')) return `must not be under ${kernel}, a kernel file system`;
  }
  return null;
}
