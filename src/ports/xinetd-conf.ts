// xinetd's configuration as xinetd.conf(5) gives it: blocks "service NAME"
// or "defaults" followed by "{" ... "}" (each on a line of its own), one
// attribute per line ("attr = v v", the first one kept; "attr += v", "attr -= v"), '#' lines are
// comments; "includefile FILE" and "includedir DIR" (a directory's files in
// name order, skipping names that contain '.' or end in '~') read more.
// Pure: loading the files is served.ts's.

/** One service block, with what decides whether and where it listens. */
export interface XinetdService {
  name: string;
  file: string;
  /** The "service NAME" line (1-based), and the block's closing brace. */
  line: number;
  endLine: number;
  /** Attribute -> its values after = / += / -= in order. */
  attrs: Record<string, string[]>;
  /** The line of "disable = ..." inside the block, or null when there is none. */
  disableLine: number | null;
}

export interface XinetdInclude {
  kind: 'includefile' | 'includedir';
  path: string;
  file: string;
  line: number;
}

export interface XinetdConf {
  services: XinetdService[];
  /** The defaults block's attributes (disabled =, enabled =). */
  defaults: Record<string, string[]>;
  includes: XinetdInclude[];
  /** Lines xinetd would refuse, each naming file:line. */
  problems: string[];
}

function assign(attrs: Record<string, string[]>, line: string): boolean {
  const m = /^([A-Za-z_]+)\s*(\+=|-=|=)\s*(.*)$/.exec(line);
  if (!m) return false;
  const values = m[3]!.split(/[ \t]+/).filter((v) => v !== '');
  const key = m[1]!;
  // xinetd keeps an attribute's first "=" and warns "attribute already set" for a later one.
  if (m[2] === '=') attrs[key] ??= values;
  else if (m[2] === '+=') attrs[key] = [...(attrs[key] ?? []), ...values];
  else attrs[key] = (attrs[key] ?? []).filter((v) => !values.includes(v));
  return true;
}

interface Open {
  name: string | null;
  line: number;
  braced: boolean;
  attrs: Record<string, string[]>;
  disableLine: number | null;
}

/** The blocks and include lines of one file. */
export function parseXinetdConf(text: string, file: string): XinetdConf {
  const out: XinetdConf = { services: [], defaults: {}, includes: [], problems: [] };
  let open: Open | null = null;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (open === null) {
      const head = /^(service)\s+(\S+)$|^(defaults)$|^(includefile|includedir)\s+(\S+)$/.exec(line);
      if (head?.[4]) out.includes.push({ kind: head[4] as XinetdInclude['kind'], path: head[5]!, file, line: n });
      else if (head) open = { name: head[2] ?? null, line: n, braced: false, attrs: {}, disableLine: null };
      else out.problems.push(`${file}:${n}: xinetd expects "service NAME", "defaults" or an include here, not ${JSON.stringify(line)}`);
      continue;
    }
    if (!open.braced) {
      if (line === '{') open.braced = true;
      else {
        out.problems.push(`${file}:${n}: expected "{" after ${file}:${open.line}`);
        open = null;
      }
      continue;
    }
    if (line === '}') {
      if (open.name === null) out.defaults = open.attrs;
      else out.services.push({ name: open.name, file, line: open.line, endLine: n, attrs: open.attrs, disableLine: open.disableLine });
      open = null;
      continue;
    }
    if (!assign(open.attrs, line)) out.problems.push(`${file}:${n}: not an attribute line: ${JSON.stringify(line)}`);
    else if (/^disable\s*=/.test(line)) open.disableLine ??= n;
  }
  if (open !== null) out.problems.push(`${file}:${open.line}: the block is never closed with "}"`);
  return out;
}

/** Whether a file in an includedir is read: xinetd skips names with a '.' or a trailing '~'. */
export function readInIncludedir(name: string): boolean {
  return !name.includes('.') && !name.endsWith('~');
}

/** The block's id (id = ..., else its name), what "disabled =" in defaults names. */
export function serviceId(s: XinetdService): string {
  return s.attrs.id?.[0] ?? s.name;
}

/** Whether xinetd leaves the service off: disable = yes, or defaults' disabled = lists it (or enabled = does not). */
export function isDisabled(s: XinetdService, defaults: Record<string, string[]>): boolean {
  if (s.attrs.disable?.[0] === 'yes') return true;
  const id = serviceId(s);
  if (defaults.disabled?.includes(id)) return true;
  return defaults.enabled !== undefined && !defaults.enabled.includes(id) && !defaults.enabled.includes(s.name);
}

/** The transport: protocol =, else what socket_type implies (stream: tcp, dgram: udp). */
export function xinetdTransport(s: XinetdService): 'tcp' | 'udp' | null {
  const p = s.attrs.protocol?.[0];
  if (p === 'tcp' || p === 'udp') return p;
  if (p !== undefined) return null;
  const t = s.attrs.socket_type?.[0];
  return t === 'stream' ? 'tcp' : t === 'dgram' ? 'udp' : null;
}
