// The desired state as the reconciler sees it after load + validate
// (defaults from the JSON Schema already filled in).
import type { InputIssue } from './errors.js';

export interface BaseSpec {
  type: string;
  /** Optional label; defaults to the type. */
  name?: string;
}

/** A file a desired resource writes whole, its content known from the spec alone (Provider.ownedFiles). */
export interface DesiredFile {
  path: string;
  content: string;
  /** The resource's name (resourceName). */
  resource: string;
}

/** How a resource is named in plans, reports and messages. */
export function resourceName(spec: BaseSpec): string {
  return spec.name ?? spec.type;
}

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
  /** Check names whose findings are accepted (src/findings.ts acceptFindings), as --accept NAME; in document order. */
  accept?: string[];
  /** Each a spec of a registered provider's type (src/resources/index.ts ResourceSpec), in document order. */
  resources: BaseSpec[];
  /**
   * Location of a key (JSON pointer segments) with an empty message, for
   * problems found only once the host is read. Set by load; not enumerable,
   * so the desired state stays plain data.
   */
  where?: (pointer: string[], atKey?: boolean) => InputIssue;
}
