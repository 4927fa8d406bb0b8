// A tree's exact state: every entry's type, bytes, mode, owner and link
// target, to prove a run (or a rollback) changed only what it says.
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';

export type Snapshot = Record<string, string>;

export function snapshot(root: string, skip: (rel: string) => boolean = () => false): Snapshot {
  const out: Snapshot = {};
  const walk = (rel: string) => {
    const abs = path.join(root, rel);
    const st = lstatSync(abs);
    const meta = `${(st.mode & 0o7777).toString(8)} ${st.uid}:${st.gid}`;
    if (st.isSymbolicLink()) out[rel] = `link -> ${readlinkSync(abs)}`;
    else if (st.isDirectory()) {
      if (rel !== '') out[rel] = `dir ${meta}`;
      for (const n of readdirSync(abs).sort()) {
        const child = rel === '' ? n : `${rel}/${n}`;
        if (!skip(child)) walk(child);
      }
    } else if (!st.isFile())
      out[rel] = `special ${meta} ${st.mode >> 12} ${st.rdev}`; // a fifo or device: never read
    else out[rel] = `file ${meta} ${createHash('sha256').update(readFileSync(abs)).digest('hex').slice(0, 16)}`;
  };
  walk('');
  return out;
}
