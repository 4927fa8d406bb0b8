// The catalogue: every way a used server holds a port or sets a sysctl at
// boot that this tier boots for real, what our acceptance checks must name or not (acceptance.mjs), plus the swap and module entries the
// qemu tier runs. Each entry carries `wild`: where it is seen in the wild.
import units from './units.mjs';
import holders from './holders.mjs';
import sysctl from './sysctl.mjs';
import qemu from './qemu.mjs';
import acceptance from './acceptance.mjs';
import docker from './docker.mjs';
import podman from './podman.mjs';

export const NSPAWN = [...units, ...holders, ...sysctl, ...acceptance, ...docker, ...podman].map((e) => ({ tier: 'nspawn', ...e }));
export const QEMU = qemu;
export const CATALOGUE = [...NSPAWN, ...QEMU];

export function byId(id) {
  const e = CATALOGUE.find((x) => x.id === id);
  if (!e) throw new Error(`no catalogue entry ${id}`);
  return e;
}

// `kept: true`: a program can make this entry's promise hold with no person
// deciding (a unit to stop, disable or mask; a sysctl.d line to override), so
// the plan must keep the promise, not hand it to an operator or an unknown.
// Entries without it (cron, supervisor, at, rc.local and other scripts) are
// left to a person by design: the operator line names them.
