// A wanted port free on the running host while a unit that starts at boot
// would take it (ports/boot-starters.ts): the port's promise for the next boot
// is taken back by an unknown that names the unit, the line and what starts
// it. Only a run can tell whether a candidate really binds the port; the
// operator stops and disables it, or lists it in protected_units when it does
// not. Behind a timer, path or socket it can start at any moment, so the
// promise goes from apply on. When part of the unit graph could not be read,
// the search may have missed such a unit: every free port's next-boot promise
// goes, naming what was not read. Pure.
import type { PortFreeSpec } from '../../desired-state.js';
import type { LivePortsObserved } from '../../ports/observed.js';
import type { BootStarter } from '../../ports/boot-starters.js';
import { protectionOf } from '../../ports/protection.js';
import { portPromise, type ProviderUnknown, type Withdrawal } from '../../promises.js';

function what(s: BootStarter): string {
  const at = `${s.evidence.key}= at ${s.evidence.file}:${s.evidence.line}`;
  return s.kind === 'socket'
    ? `${s.unit} would listen on it (${at}: ${s.evidence.value})`
    : `${s.unit} may listen on it (${at} names ${s.port}; whether it binds the port is known only once it runs)`;
}

export function bootStarterUnknowns(spec: PortFreeSpec, o: LivePortsObserved): ProviderUnknown[] {
  const found: ProviderUnknown[] = (o.bootStarters ?? [])
    .filter((s) => protectionOf(s.unit, spec, o.selfUnit) === null)
    .map((s) => ({
      message:
        `port ${s.port} is free now, but ${what(s)}, and ${s.reach}${s.triggered ? '; a trigger can start it at any moment, not only at boot' : ''}: ` +
        `stop and disable ${s.unit} (systemctl disable --now ${s.unit}, and its trigger) if it takes the port` +
        (s.kind === 'candidate' ? `, or list it in protected_units if it does not` : ''),
      withdraws: [{ promise: portPromise(s.port), from: s.triggered ? 'apply' : 'boot' }],
    }));
  // The search read the unit graph; where part of it could not be read, a unit there that takes a free port is
  // not seen, so the free ports' promise for the next boot goes (the operator reads the files named, then plans again).
  const busy = new Set(o.busy.map((b) => b.port));
  const free = spec.ports.filter((p) => !busy.has(p));
  if (!o.bootStartersUnknown || free.length === 0) return found;
  return [
    ...found,
    {
      message: `port${free.length === 1 ? '' : 's'} ${free.join(', ')} ${free.length === 1 ? 'is' : 'are'} free now, but whether a unit started at boot would take ${free.length === 1 ? 'it' : 'them'} is unknown: ${o.bootStartersUnknown}`,
      withdraws: free.map((p): Withdrawal => ({ promise: portPromise(p), from: 'boot' })),
    },
  ];
}
