// A cgroup of its own for every container a test boots.
//
// systemd-nspawn --keep-unit --register=no makes the cgroup of the process
// that starts it the container's cgroup root. Containers started side by side
// from one test process would all get the same root: each container's systemd
// then puts its units in the same directories (system.slice/NAME.service),
// sees the other containers' processes in them as pid 0 (cgroup.procs cannot
// name a task of another PID namespace), and a stop of NAME.service in one
// container kills NAME.service's processes in all of them. The fleet test
// found it: five hosts with a legacy-api.service each saw each other's holder.
import fs from 'node:fs';
import path from 'node:path';

let next = 0;

/** The cgroup2 mount point and this process's cgroup in it, from the kernel's own files. */
function cgroup2Here() {
  const mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n');
  // mountinfo(5): "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER"
  const v2 = mounts.map((l) => l.split(' ')).find((f) => f[f.indexOf('-') + 1] === 'cgroup2');
  if (!v2) throw new Error('no cgroup2 hierarchy is mounted (/proc/self/mountinfo): a container cannot get a cgroup of its own');
  const own = fs
    .readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('0::'));
  if (own === undefined) throw new Error('this process has no cgroup2 path (/proc/self/cgroup has no "0::" line)');
  // A mount of a subtree (ROOT other than "/") shows this process's path relative to that ROOT only when they agree.
  const root = v2[3];
  const mine = own.slice(3);
  const rel = root === '/' ? mine : mine.startsWith(root) ? mine.slice(root.length) : null;
  if (rel === null) throw new Error(`this process's cgroup ${mine} is outside the mounted cgroup2 subtree ${root}`);
  return path.join(v2[4].replace(/\\040/g, ' '), rel);
}

/** Removes a cgroup tree, deepest first; a directory still holding a process stays (rmdir says EBUSY). */
function removeTree(dir) {
  let entries = [];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) if (e.isDirectory()) removeTree(path.join(dir, e.name));
  try {
    fs.rmdirSync(dir);
  } catch {
    // busy or gone: nothing to do
  }
}

/**
 * A fresh cgroup below this process's own, named after `name`. `wrap(cmd, args)` gives the command that moves
 * itself into it and then execs cmd (same pid: a caller that looks for the container's leader by the child's pid
 * still finds it); `dispose()` removes the tree once the container has exited.
 */
export function ownCgroup(name) {
  const dir = path.join(cgroup2Here(), `k8s-host-reconcile-test-${process.pid}-${next++}-${name.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 60)}`);
  fs.mkdirSync(dir);
  return {
    dir,
    wrap: (cmd, args) => ['/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', path.join(dir, 'cgroup.procs'), cmd, ...args]],
    dispose: () => removeTree(dir),
  };
}
