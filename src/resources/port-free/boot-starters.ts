// A wanted port free on the running host while a unit that starts at boot
// would take it (ports/boot-starters.ts): the port's promise for the next boot
// is taken back by an unknown that names the unit, the line and what starts
// it. Only a run can tell whether a candidate really binds the port; the
// operator stops and disables it, or lists it in protected_units when it does
// not. Behind a timer, path or socket it can start at any moment, so the
// promise goes from apply on. Pure.
import type { PortFreeSpec } from '../../desired-state.js';
import type { LivePortsObserved } from '../../ports/observed.js';
import type { BootStarter } from '../../ports/boot-starters.js';
import { protectionOf } from '../../ports/protection.js';
import { portPromise, type ProviderUnknown } from '../../promises.js';

function what(s: BootStarter): string {
  const at = `${s.evidence.key}= at ${s.evidence.file}:${s.evidence.line}`;
  return s.kind === 'socket'
    ? `${s.unit} would listen on it (${at}: ${s.evidence.value})`
    : `${s.unit} may listen on it (${at} names ${s.port}; whether it binds the port is known only once it runs)`;
}

export function bootStarterUnknowns(spec: PortFreeSpec, o: LivePortsObserved): ProviderUnknown[] {
  return (o.bootStarters ?? [])
    .filter((s) => protectionOf(s.unit, spec, o.selfUnit) === null)
    .map((s) => ({
      message:
        `port ${s.port} is free now, but ${what(s)}, and ${s.reach}${s.triggered ? '; a trigger can start it at any moment, not only at boot' : ''}: ` +
        `stop and disable ${s.unit} (systemctl disable --now ${s.unit}, and its trigger) if it takes the port` +
        (s.kind === 'candidate' ? `, or list it in protected_units if it does not` : ''),
      withdraws: [{ promise: portPromise(s.port), from: s.triggered ? 'apply' : 'boot' }],
    }));
}
