// The desired state as the reconciler sees it after load + validate
// (defaults from the JSON Schema already filled in).
import type { InputIssue } from './errors.js';

export interface BaseSpec {
  type: string;
  /** Optional label; defaults to the type. */
  name?: string;
}

/** How a resource is named in plans, reports and messages. */
export function resourceName(spec: BaseSpec): string {
  return spec.name ?? spec.type;
}

export const CONTROL_PLANE_PORTS = [2379, 2380, 6443, 10250, 10257, 10259] as const;

export interface SwapOffSpec extends BaseSpec {
  type: 'SwapOff';
  /** Mask swap.target so no swap source can be pulled in at boot (kubespray does this too). */
  mask_swap_target: boolean;
  /** Delete swap files after swapoff. Off by default: the lab allows keeping them. */
  remove_swap_files: boolean;
  /** Comment out boot-script lines that turn swap on (rc.local, crontabs, if-up.d); absent = false: operator lines. */
  neutralise_scripts?: boolean;
}

export interface ModulesLoadSpec extends BaseSpec {
  type: 'ModulesLoad';
  /** modules-load.d file we own, one module per line. */
  file: string;
  modules: string[];
  /** Comment out boot-script lines that remove these modules (modprobe -r, rmmod); absent = false. */
  neutralise_scripts?: boolean;
}

export type SysctlConflictPolicy = 'resolve' | 'fail';

export interface SysctlFileSpec extends BaseSpec {
  type: 'SysctlFile';
  /** sysctl.d file we own. */
  file: string;
  /** key (dotted or slashed) -> value. */
  settings: Record<string, string | number>;
  /** resolve: comment out / override conflicting assignments; fail: report them and change nothing. */
  conflict_policy: SysctlConflictPolicy;
  /** Comment out boot-script lines that set a wanted key to another value (sysctl -w); absent = false. */
  neutralise_scripts?: boolean;
}

export interface PortFreeSpec extends BaseSpec {
  type: 'PortFree';
  ports: number[];
  /** Units never stopped, on top of the built-in list (PID 1, systemd-*, dbus, ssh, getty, ourselves, and the spawners). */
  protected_units: string[];
  /**
   * Spawners (units a holder sits in without being their main process or
   * started by their ExecStart=, or a built-in spawner such as cron.service)
   * that may be stopped and disabled for a port anyway, because a person said so.
   */
  stop_spawner_units: string[];
  /**
   * Mask the units after disabling them: true always, false never, 'auto'
   * (the default) when something else would still start them at boot.
   */
  mask: boolean | 'auto';
  /** How long a freed port must stay free, at most, before apply gives up. */
  timeout_seconds: number;
  /** Offline: units to disable in the image because they would grab a wanted port at boot. */
  disable_units: string[];
}

export type ResourceSpec = SwapOffSpec | ModulesLoadSpec | SysctlFileSpec | PortFreeSpec;

export interface KubesprayRef {
  /** Checkout directory, e.g. /opt/ks/kubespray. */
  dir: string;
  /** Inventory file, e.g. /root/ks/inventory/lab/inventory.ini. */
  inventory: string;
  /** This host's name in the inventory. */
  node: string;
}

export type ReportsMode = '0600' | '0640' | '0644';

/** apply: run --apply once at first boot; verify: run --plan and fail on pending work; off: install nothing. */
export type FirstBootMode = 'apply' | 'verify' | 'off';

export interface DesiredState {
  /** Where the document was read from (for messages). */
  source: string;
  /** Reports directory on the target, e.g. /root/ks/preflight. */
  reports_dir: string;
  /** Mode of the documents in reports_dir (the schema's default: "0600"); reports.ts reportModes. */
  reports_mode?: ReportsMode;
  kubespray?: KubesprayRef;
  facts: { source: 'native' | 'ansible' };
  /** Image mode: what the first boot does with the work only a running system can do. */
  first_boot: FirstBootMode;
  resources: ResourceSpec[];
  /**
   * Location of a key (JSON pointer segments) with an empty message, for
   * problems found only once the host is read. Set by load; not enumerable,
   * so the desired state stays plain data.
   */
  where?: (pointer: string[], atKey?: boolean) => InputIssue;
}
