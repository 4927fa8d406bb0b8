// The grammar of the values in desired-state.yaml that reach files, the
// kernel or a command line. The desired state comes from a pipeline and is
// not trusted: each rule here says what the value's real consumer accepts,
// and each function returns the reason a value is refused (null: accepted).
// Pure; the providers' grammar traits apply them, reconcile/load.ts locates.
import path from 'node:path';
import { canonicalModuleName } from './observe/modules.js';

/** `name` is printed in plans and written in our files' header line: a plain label. */
export const NAME_MAX = 63;

export function nameProblem(name: string): string | null {
  if (name.length === 0 || name.length > NAME_MAX || !/^[A-Za-z0-9_.-]+$/.test(name)) {
    return `must be a plain label: 1 to ${NAME_MAX} of letters, digits, '_', '.' and '-'`;
  }
  return null;
}

/**
 * Characters of one sysctl key segment: kernel table names use
 * [A-Za-z0-9_-] (plus ':' and '@' in a few), and interface names in
 * net.*.conf.IFNAME may hold more (dev_valid_name() refuses only '/', ':'
 * and blanks); '+' and '%' are the other ones seen there. Glob characters,
 * '=', '#', ';', quotes and backslashes are excluded: they mean something to
 * sysctl.d's parser.
 */
const SEGMENT_CHAR = /^[A-Za-z0-9_:@+%-]$/;

/**
 * sysctl.d(5): the first separator decides the form. "a.b.c" is dotted and
 * a "/" inside a segment stands for a "." of the name (eth0/100 is
 * eth0.100); "a/b/c" is slashed and "." is a plain character.
 */
export function sysctlKeyProblem(key: string): string | null {
  if (key.length === 0) return 'is empty; expected a key like net.ipv4.ip_forward';
  if (key.length > 255) return 'is longer than 255 characters';
  if (key.startsWith('.') || key.startsWith('/')) return 'must not begin with a separator';
  if (key.startsWith('-')) return "must not begin with '-' (sysctl.d reads a leading '-' as \"ignore failure\")";
  const first = key.search(/[./]/);
  const sep = first < 0 || key[first] === '.' ? '.' : '/';
  const other = sep === '.' ? '/' : '.';
  const segments = key.split(sep);
  for (const [i, seg] of segments.entries()) {
    if (seg === '') return i === segments.length - 1 ? 'must not end with a separator' : 'has an empty segment';
    // The entry name the kernel sees must not be "." or "..".
    const entry = sep === '.' ? seg.split('/').join('.') : seg;
    if (entry === '.' || entry === '..') return `has a "${entry}" segment; a key names one entry under /proc/sys`;
    for (const ch of seg) {
      if (ch === other) continue;
      if (!SEGMENT_CHAR.test(ch)) return `has the character ${JSON.stringify(ch)}; segments are letters, digits and _ : @ + % -`;
    }
  }
  return null;
}

/**
 * A value is written as `key = value` into a sysctl.d file and into
 * /proc/sys. Control characters would end the line, add one, or be written
 * raw into the kernel; "#" and ";" start comments; blanks at either end are
 * stripped by both sysctl programs, so the value read back would differ.
 */
export function sysctlStringValueProblem(value: string): string | null {
  if (value.length === 0) return 'must not be empty';
  if (value.length > 4096) return 'is longer than 4096 characters';
  // eslint-disable-next-line no-control-regex
  const ctl = /[\u0000-\u001f\u007f]/.exec(value);
  if (ctl) return `contains the control character ${JSON.stringify(ctl[0])}; a value is one line of printable text`;
  if (/[#;]/.test(value)) return "must not contain '#' or ';' (comment characters in sysctl.d)";
  if (value !== value.trim()) return 'must not begin or end with blanks (sysctl strips them)';
  return null;
}

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

export { canonicalModuleName };

/** The file a resource owns in a consumer's drop-in directory: DIR/NAME.conf. */
export function ownedFileProblem(file: string, dir: '/etc/sysctl.d' | '/etc/modules-load.d'): string | null {
  const want = `must be a file ${dir}/NAME.conf`;
  if (path.posix.dirname(file) !== dir) return want;
  const base = path.posix.basename(file);
  if (!base.endsWith('.conf') || base === '.conf') return want;
  if (base.startsWith('.')) return `names a hidden file, which ${dir === '/etc/sysctl.d' ? 'systemd-sysctl' : 'systemd-modules-load'} never reads`;
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
