// The bench's floor for a large sysctl.d tree: what any plan of it pays before
// it judges a key. Lists the sysctl.d directories under ROOT and reads each
// *.conf entry with the calls the tool makes for it (open, fstat, read, close),
// its text split into lines, and nothing more; kept until the end, as the
// plan keeps them. node scripts/bench/read-floor.mjs ROOT
import { closeSync, fstatSync, openSync, readSync, readdirSync } from 'node:fs';
import path from 'node:path';

const root = process.argv[2];
if (!root) throw new Error('usage: read-floor.mjs ROOT');
// src/sysctl/order.ts's SYSCTL_DIRS (this plain script cannot import it), less /lib/sysctl.d: on a merged-/usr
// root it is usr/lib/sysctl.d again, which the tool reads once.
const dirs = ['etc/sysctl.d', 'run/sysctl.d', 'usr/local/lib/sysctl.d', 'usr/lib/sysctl.d'];
const kept = [];
for (const dir of dirs) {
  let entries;
  try {
    entries = readdirSync(path.join(root, dir), { withFileTypes: true });
  } catch {
    continue;
  }
  for (const e of entries) {
    if (!e.name.endsWith('.conf')) continue;
    const fd = openSync(path.join(root, dir, e.name), 'r');
    try {
      const st = fstatSync(fd);
      const buf = Buffer.alloc(st.size);
      readSync(fd, buf, 0, st.size, 0);
      kept.push(buf.toString('utf8').split('\n'));
    } finally {
      closeSync(fd);
    }
  }
}
process.stdout.write(`${kept.length} files\n`);
