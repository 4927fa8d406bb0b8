// The rehearsal's layout (rehearsal.ts `layout`) as what the shell script
// inside the namespaces (rehearsal-script.ts) unpacks: one tar archive on its
// stdin, so every file's bytes, every name and every value reach it as file
// data, never as words a shell reads. Pure.
//
// The archive is GNU tar's format (ustar headers with the "ustar  " magic; a
// name or link target longer than 99 bytes goes in a "././@LongLink" record
// of type L or K before its header), which GNU tar and busybox tar unpack
// alike. Its members, under the tmpfs the script mounts on /tmp:
//   keys                the /proc/sys path of each key, one a line
//   t<T>/s<I>           trial T's copy of source I (a directory, or a file)
//   t<T>/start, seed    trial T's values: a path line, then its value line
//   t<T>/fstab          the binds of trial T's copies (for trial 0, after
//                       the overlays that make a missing directory appear)
//   o<I>/u, o<I>/w      the overlay of source I's nearest existing ancestor
import type { RehearsalLayout } from './rehearsal.js';
import { sysctlProcPath } from '../observe/sysctl-live.js';

type Member = { name: string; dir: true } | { name: string; content: Buffer } | { name: string; link: string };

const BLOCK = 512;

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

/** One 512-byte header (GNU format); the caller writes a long name or target first. */
function header(name: Buffer, type: string, size: number, link: Buffer, mode: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  name.copy(h, 0, 0, Math.min(name.length, 100));
  h.write(octal(mode, 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(size, 12), 124, 'latin1');
  h.write(octal(0, 12), 136, 'latin1');
  h.write(type, 156, 'latin1');
  link.copy(h, 157, 0, Math.min(link.length, 100));
  h.write('ustar  \0', 257, 'latin1');
  h.write('root', 265, 'latin1');
  h.write('root', 297, 'latin1');
  // The checksum is the byte sum with its own field read as eight spaces.
  h.fill(' ', 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'latin1');
  return h;
}

function padded(data: Buffer): Buffer[] {
  const rest = data.length % BLOCK;
  return rest === 0 ? [data] : [data, Buffer.alloc(BLOCK - rest)];
}

/** A "././@LongLink" record (type L: the next member's name, K: its link target), when the field cannot hold it. */
function longRecord(value: Buffer, type: 'L' | 'K'): Buffer[] {
  if (value.length < 100) return [];
  const data = Buffer.concat([value, Buffer.alloc(1)]);
  return [header(Buffer.from('././@LongLink', 'latin1'), type, data.length, Buffer.alloc(0), 0), ...padded(data)];
}

/** The archive of these members, in order, with the two zero blocks that end it. */
export function tarArchive(members: Member[]): Buffer {
  const out: Buffer[] = [];
  for (const m of members) {
    const name = Buffer.from('dir' in m ? `${m.name}/` : m.name, 'utf8');
    out.push(...longRecord(name, 'L'));
    if ('dir' in m) out.push(header(name, '5', 0, Buffer.alloc(0), 0o755));
    else if ('link' in m) {
      const link = Buffer.from(m.link, 'utf8');
      out.push(...longRecord(link, 'K'), header(name, '2', 0, link, 0o777));
    } else out.push(header(name, '0', m.content.length, Buffer.alloc(0), 0o644), ...padded(m.content));
  }
  out.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(out);
}

/**
 * A field of an fstab line as libmount reads it back (mnt_unmangle: a
 * backslash and three octal digits is that byte), so a path with a blank,
 * a tab or a backslash stays one field.
 */
export function fstabField(value: string): string {
  let out = '';
  for (const b of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9/._+,:=@-]/.test(c) ? c : `\\${b.toString(8).padStart(3, '0')}`;
  }
  return out;
}

const OVERLAY = 'k8s-host-reconcile-rehearsal';

function fstab(lay: RehearsalLayout, t: number): string {
  const lines: string[] = [];
  if (t === 0)
    lay.sources.forEach((s, i) => {
      if (!s.create) return;
      const a = s.create.ancestor;
      lines.push(`${OVERLAY} ${fstabField(a)} overlay ${fstabField(`lowerdir=${a},upperdir=/tmp/o${i}/u,workdir=/tmp/o${i}/w`)} 0 0`);
    });
  // util-linux mount applies ro to a bind by remounting it (since 2.27); X-mount.mkdir makes the missing directory in its overlay.
  lay.sources.forEach((s, i) => lines.push(`/tmp/t${t}/s${i} ${fstabField(s.path)} none bind,ro${s.create ? ',X-mount.mkdir' : ''} 0 0`));
  return lines.map((l) => `${l}\n`).join('');
}

/** Lines of path, value for each pair; a key the run does not read, or a newline in a value, is refused. */
function values(pairs: Array<[string, string]>, keys: string[], what: string): string | { reason: string } {
  let out = '';
  for (const [key, value] of pairs) {
    if (!keys.includes(key)) return { reason: `the rehearsal was given a ${what} for ${key}, a key it does not read` };
    if (/[\n\0]/.test(value) || /[\n\0]/.test(key)) return { reason: `the ${what} of ${key} holds a newline or NUL; it cannot be written as one value` };
    out += `${sysctlProcPath(key)}\n${value}\n`;
  }
  return out;
}

function trialMembers(lay: RehearsalLayout, keys: string[], t: number): Member[] | { reason: string } {
  const trial = lay.trials[t]!;
  const start = values(trial.start, keys, 'start value');
  const seed = values(trial.seed, keys, 'seed');
  if (typeof start !== 'string') return start;
  if (typeof seed !== 'string') return seed;
  const out: Member[] = [{ name: `t${t}`, dir: true }];
  for (const [i, s] of lay.sources.entries()) {
    const want = trial.sources[i]!;
    const at = `t${t}/s${i}`;
    if (s.kind === 'file') {
      out.push({ name: at, content: Buffer.from('content' in want ? want.content : '', 'base64') });
      continue;
    }
    out.push({ name: at, dir: true });
    for (const e of 'entries' in want ? want.entries : []) {
      if (e.name === '' || e.name.includes('/') || e.name.includes('\0') || e.name === '.' || e.name === '..')
        return { reason: `the rehearsal cannot lay out a file named ${JSON.stringify(e.name)}` };
      out.push('link' in e ? { name: `${at}/${e.name}`, link: e.link } : { name: `${at}/${e.name}`, content: Buffer.from(e.content, 'base64') });
    }
  }
  const text = (name: string, s: string): Member => ({ name: `t${t}/${name}`, content: Buffer.from(s, 'utf8') });
  out.push(text('start', start), text('seed', seed), text('fstab', fstab(lay, t)));
  return out;
}

/**
 * The archive for a layout, and the tmpfs size it needs (each file and
 * directory takes at least a page there; twice that, and never under 16 MiB).
 */
export function rehearsalArchive(lay: RehearsalLayout, keys: string[]): { archive: Buffer; tmpfsBytes: number } | { reason: string } {
  if (keys.some((k) => /[\n\0]/.test(k))) return { reason: 'a key holds a newline or NUL' };
  const members: Member[] = [{ name: 'keys', content: Buffer.from(keys.map((k) => `${sysctlProcPath(k)}\n`).join(''), 'utf8') }];
  lay.sources.forEach((s, i) => {
    if (s.create) members.push({ name: `o${i}`, dir: true }, { name: `o${i}/u`, dir: true }, { name: `o${i}/w`, dir: true });
  });
  for (let t = 0; t < lay.trials.length; t++) {
    const m = trialMembers(lay, keys, t);
    if (!Array.isArray(m)) return m;
    members.push(...m);
  }
  const PAGE = 4096;
  let bytes = 0;
  for (const m of members) bytes += PAGE + ('content' in m ? Math.ceil(m.content.length / PAGE) * PAGE : 0);
  return { archive: tarArchive(members), tmpfsBytes: Math.max(16 * 1024 * 1024, 2 * bytes) };
}
