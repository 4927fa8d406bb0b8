// This machine's own swap, modules and sysctls, read before and after a farm
// run: the containers share its kernel and must leave all of it as it was.
import fs from 'node:fs';

const SYSCTLS = [
  'net/ipv4/ip_forward', 'net/ipv4/conf/all/forwarding', 'net/ipv6/conf/all/forwarding', 'net/ipv4/tcp_syncookies',
  'net/core/somaxconn', 'net/ipv4/tcp_fin_timeout', 'vm/swappiness', 'vm/overcommit_memory', 'vm/max_map_count', 'kernel/pid_max',
];

function read(p) {
  try {
    return fs.readFileSync(p, 'utf8');
  } catch (e) {
    return `unreadable: ${e.code}`;
  }
}

export function hostState() {
  let modules;
  try {
    modules = fs.readdirSync('/sys/module').sort();
  } catch (e) {
    modules = [`unreadable: ${e.code}`];
  }
  return {
    swaps: read('/proc/swaps'),
    procModules: read('/proc/modules'),
    modules,
    sysctls: Object.fromEntries(SYSCTLS.map((k) => [k.replace(/\//g, '.'), read(`/proc/sys/${k}`).trim()])),
  };
}

/** What differs between two readings, one line each. */
export function stateDiff(a, b) {
  const out = [];
  if (a.swaps !== b.swaps) out.push(`/proc/swaps changed:\n${a.swaps}---\n${b.swaps}`);
  if (a.procModules !== b.procModules) out.push('/proc/modules changed');
  const added = b.modules.filter((m) => !a.modules.includes(m));
  const removed = a.modules.filter((m) => !b.modules.includes(m));
  if (added.length + removed.length > 0) out.push(`/sys/module: added ${added.join(' ') || '-'}, removed ${removed.join(' ') || '-'}`);
  for (const k of Object.keys(a.sysctls)) if (a.sysctls[k] !== b.sysctls[k]) out.push(`${k}: ${a.sysctls[k]} -> ${b.sysctls[k]}`);
  return out;
}
