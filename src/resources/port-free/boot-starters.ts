// A wanted port free on the running host while a unit that starts at boot
// would take it (ports/boot-starters.ts): the port's promise for the next boot
// is taken back by an unknown that names the unit, the line and what starts
// it. Only a run can tell whether a candidate really binds the port; the
// operator stops and disables it, or lists it in protected_units when it does
// not. Behind a timer, path or socket it can start at any moment, so the
// promise goes from apply on. When part of the unit graph could not be read,
// the search may have missed such a unit: every free port's next-boot promise
// goes, naming what was not read. Pure.
import type { PortFreeSpec } from './spec.js';
import type { LivePortsObserved, OfflinePortsObserved } from '../../ports/observed.js';
import type { BootStarter, UnreadBootSocket } from '../../ports/boot-starters.js';
import { protectionOf } from '../../ports/protection.js';
import { splitInstance } from '../../systemd/unit-loader.js';
import type { ProviderUnknown, Withdrawal } from '../../promises.js';
import { portPromise } from './promises.js';

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
  found.push(...unreadSocketUnknowns(spec, free, o.unreadSockets ?? [], o.selfUnit));
  if (!o.bootStartersUnknown || free.length === 0) return found;
  return [
    ...found,
    {
      message: `port${free.length === 1 ? '' : 's'} ${free.join(', ')} ${free.length === 1 ? 'is' : 'are'} free now, but whether a unit started at boot would take ${free.length === 1 ? 'it' : 'them'} is unknown: ${o.bootStartersUnknown}`,
      withdraws: free.map((p): Withdrawal => ({ promise: portPromise(p), from: 'boot' })),
    },
  ];
}

const portList = (ports: number[]): string => `port${ports.length === 1 ? '' : 's'} ${ports.join(', ')}`;

/**
 * A socket started at boot whose ListenStream= port this reader cannot tell
 * (socket-unit.ts listenPortOf: %H, a letter systemd has no specifier for)
 * may take any of `ports`: their promise goes, naming the line.
 */
export function unreadSocketUnknowns(spec: PortFreeSpec, ports: number[], unread: UnreadBootSocket[], selfUnit: string | null): ProviderUnknown[] {
  if (ports.length === 0) return [];
  return unread
    .filter((u) => protectionOf(u.unit, spec, selfUnit) === null)
    .map((u) => {
      const d = u.listen.directive;
      return {
        message:
          `whether ${u.unit} would take ${portList(ports)} is unknown: ListenStream=${d.value} at ${d.file}:${d.line} holds the specifier ${u.listen.specifier}, ` +
          `which is not resolved here (it is the running host's, or one systemd does not know, and then it ignores the line); ${u.reach}` +
          `${u.triggered ? '; a trigger can start it at any moment, not only at boot' : ''}: ` +
          `read the line, then stop and disable ${u.unit} if it takes one of them, or list it in protected_units if it does not`,
        withdraws: ports.map((p): Withdrawal => ({ promise: portPromise(p), from: u.triggered ? 'apply' : 'boot' })),
      };
    });
}

/**
 * Offline, the image's units that would take a wanted port at boot and that
 * the plan does not disable: an instance of a template socket (its port is
 * its instance name's), and a socket whose port is not known here.
 */
export function offlineBootUnknowns(spec: PortFreeSpec, o: OfflinePortsObserved): ProviderUnknown[] {
  // A socket or unit the plan disables already has its own lines (a template socket, a unit in disable_units).
  const handled = new Set([...o.sockets.map((s) => s.socket.name), ...(spec.disable_units ?? [])]);
  const instances = (o.instanceSockets ?? [])
    .filter((s) => protectionOf(s.unit, spec, null) === null && !handled.has(s.unit) && !handled.has(splitInstance(s.unit).template ?? s.unit))
    .map((s) => ({
      message:
        `port ${s.port}: ${what(s)}, and ${s.reach}; it is an instance of a template socket, which this plan does not disable: ` +
        `disable it in the image (systemctl --root=IMAGE disable ${s.unit}) or list it in protected_units if it may keep the port`,
      withdraws: [{ promise: portPromise(s.port), from: 'boot' as const }],
    }));
  return [...instances, ...unreadSocketUnknowns(spec, spec.ports, o.unreadSockets ?? [], null)];
}
