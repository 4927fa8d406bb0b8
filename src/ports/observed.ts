// What PortFree observes: the listeners on wanted ports, who holds them, and
// (offline) the image's units that would take them at boot.
import type { BootStarter, UnreadBootSocket } from './boot-starters.js';
import type { Listener } from '../observe/listeners.js';
import type { CgroupPlacement } from '../systemd/cgroup.js';
import type { Ancestry, UnitFacts } from './identity.js';
import type { Crontabs } from './crontab.js';
import type { SupervisorPrograms } from './supervisor.js';
import type { ServiceCandidate } from './socket-units.js';
import type { SocketUnit } from '../systemd/socket-unit.js';
import type { UnitEnablement } from '../systemd/unit-links.js';
import type { Comeback } from './stays-free.js';
import type { UserAccount, UserRoute } from './user-manager.js';
import type { OtherSocket, UnitServes } from './served.js';
import type { ContainerHold } from '../containers/holder.js';

export interface PortHolder {
  pid: number;
  /** /proc/PID/comm; null when the process vanished or denied access. */
  comm: string | null;
  /** null when /proc/PID/cgroup could not be read. */
  placement: CgroupPlacement | null;
  /** The holder and its parents, read when it sits in a service (to tell whether the service is its own). */
  ancestry: Ancestry | null;
  /** Whether the main process of the holder's service holds the same listening socket; null when unknown or not read. */
  mainHoldsSocket: boolean | null;
  /**
   * The sockets on other ports (TCP listeners not wanted free, bound UDP
   * sockets) this process holds, by port: what else ends when its unit stops
   * (inetd serves many). Absent: not read.
   */
  otherSockets?: OtherSocket[];
}

/** A port whose listener systemd itself holds for a .socket unit. */
export interface SocketActivation {
  socket: string;
  /** The service the socket starts; null for Accept=yes (per-connection instances). */
  service: string | null;
  /** The service's MainPID before the stop, when it runs. */
  servicePid: number | null;
  /** How the socket unit was identified. */
  source: 'systemctl list-sockets' | 'unit files' | 'cgroup';
}

export interface BusyPort {
  port: number;
  listeners: Listener[];
  /** Distinct holders over all listeners, ascending PID. */
  holders: PortHolder[];
  activation: SocketActivation | null;
}

export interface LivePortsObserved {
  mode: 'live';
  busy: BusyPort[];
  /** The unit this program runs in (protected). */
  selfUnit: string | null;
  /** Processes whose fds could not be read; a missing holder may be among them. */
  unreadablePids: number;
  /** Manager and unit-file facts of every service a holder sits in. */
  units: Record<string, UnitFacts>;
  /** Crontabs, read when a holder sits in a cron daemon's unit. */
  crontabs: Crontabs | null;
  /** /etc/passwd user -> UID, read with the crontabs (a crontab names users, /proc gives UIDs). */
  uids: Record<string, number>;
  /** supervisord's programs, read when a holder sits in supervisord's unit. */
  supervisor: SupervisorPrograms | null;
  /** Per system service a holder sits in: what else stopping it ends (its configured services, other sockets, other processes); absent when not read. */
  serves?: Record<string, UnitServes>;
  /**
   * Per group of units a port's stop would disable together (key: the names
   * joined by a space): what would still start them at boot afterwards.
   * Absent when not read.
   */
  comeback?: Record<string, Comeback>;
  /** Per busy port and holder ("PORT:PID"): the container behind a holder that is a container's (src/containers/); absent when not read. */
  containers?: Record<string, ContainerHold>;
  /** Holders in a per-user manager, by "UID:unit": the account (null when /etc/passwd has no such UID) and the user manager's facts. */
  userUnits?: Record<string, UserUnitFacts>;
  /** Per unit a stop acts on: the .path/.timer/.socket units that trigger it (manager and unit files); absent when not read. */
  triggers?: Record<string, string[]>;
  /** Per unit a stop acts on: its own regular unit file at /etc/systemd/system/NAME, which a mask sets aside. */
  etcFiles?: Record<string, string>;
  /** For the wanted ports free now: the units something starts at boot that would take them (boot-starters.ts). */
  bootStarters?: BootStarter[];
  /** Why that search may have missed a unit (graphUnknown: a unit file or directory that could not be read); null when it is complete. */
  bootStartersUnknown?: string | null;
  /** Sockets started at boot whose ListenStream= port is not known here (a specifier not resolved); read with bootStarters. */
  unreadSockets?: UnreadBootSocket[];
}

export interface UserUnitFacts {
  uid: number;
  unit: string;
  account: UserAccount | null;
  /** How the manager was (and will be) asked. */
  route: UserRoute;
  facts: UnitFacts;
  /** What in that user's unit tree would start it again once disabled; null when the account is unknown. */
  comeback: Comeback | null;
}

export interface OfflineSocket {
  socket: SocketUnit;
  /** Wanted ports it listens on. */
  ports: number[];
  enablement: UnitEnablement;
  serviceEnablement: UnitEnablement | null;
}

export interface OfflineUnit {
  unit: string;
  /** A unit file with this name exists in the image. */
  exists: boolean;
  /** Target path of the winning fragment, when it exists. */
  fragment: string | null;
  enablement: UnitEnablement;
}

export interface OfflineCandidate {
  candidate: ServiceCandidate;
  enablement: UnitEnablement;
}

export interface OfflinePortsObserved {
  mode: 'offline';
  sockets: OfflineSocket[];
  disableUnits: OfflineUnit[];
  candidates: OfflineCandidate[];
  /** Per unit: its own regular unit file at /etc/systemd/system/NAME, where the mask link goes (set aside by a mask). */
  etcFiles: Record<string, string>;
  /** Per unit: what still starts it at boot once it (and its socket or service) is disabled. */
  comeback: Record<string, Comeback>;
  /** Per unit: what starts it at boot now (its own links included); absent when nothing does. */
  reachNow: Record<string, string>;
  /** Why the unit graph cannot tell what starts at boot, or null. */
  graphUnknown: string | null;
  /**
   * Instances of template sockets started at boot that would take a wanted
   * port (ListenStream=%i in foo@10250.socket): not disabled here, so their
   * ports' promise goes. Absent in plans stored before it was read.
   */
  instanceSockets?: BootStarter[];
  /** Sockets started at boot whose ListenStream= port is not known here (a specifier not resolved). */
  unreadSockets?: UnreadBootSocket[];
}

export type PortFreeObserved = LivePortsObserved | OfflinePortsObserved;
