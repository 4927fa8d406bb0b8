// PortFree's entry in the desired state: its spec as the engine sees it after
// validation, and its branch of the JSON Schema (src/resources/schema.ts
// assembles schema/desired-state.schema.json from every provider's branch;
// shared pieces are `#/definitions/name`, `port` and `absPath`).
import type { BaseSpec } from '../../desired-state.js';

/** kubeadm's control-plane ports: etcd's client and peer, the API server, kubelet, controller-manager, scheduler. */
export const CONTROL_PLANE_PORTS = [2379, 2380, 6443, 10250, 10257, 10259] as const;

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
  /**
   * A holder that serves others (inetd, xinetd, a supervisor, a proxy with
   * other listeners): true stops and disables it as any holder, the plan
   * naming what else that ends; false (the default, also when absent) leaves
   * it to an operator line naming what to change instead.
   */
  stop_shared_holders?: boolean;
  /**
   * Docker containers (by name or an id prefix of 12 or more characters) apply
   * may stop for a port: docker update --restart=no, then docker stop; the
   * journal keeps the policy so --rollback restores it and starts them again.
   * A podman container started by one `podman generate systemd` unit: that
   * unit is stopped and disabled (never masked; --rollback starts it again).
   */
  stop_containers?: string[];
  /** How long a freed port must stay free, at most, before apply gives up. */
  timeout_seconds: number;
  /** Offline: units to disable in the image because they would grab a wanted port at boot. */
  disable_units: string[];
}

export const PORT_FREE_SCHEMA = {
  description:
    'No listener on these ports; the systemd unit whose own process held one (main process, started by its ExecStart=, or its .socket) is stopped and disabled. A unit that only spawned the holder is left to an operator.',
  type: 'object',
  additionalProperties: false,
  properties: {
    type: {
      const: 'PortFree',
    },
    name: {
      $ref: '#/definitions/name',
    },
    ports: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: {
        $ref: '#/definitions/port',
      },
      default: [2379, 2380, 6443, 10250, 10257, 10259],
    },
    protected_units: {
      description: 'Units never stopped, on top of the built-in list.',
      type: 'array',
      items: {
        type: 'string',
        pattern: '^[^/\\s\\u0000-\\u001f\\u007f]+$',
      },
      default: [],
    },
    stop_spawner_units: {
      description:
        "Units that only spawned a port's holder (cron.service for a cron job's listener) or are built-in spawners, stopped and disabled anyway. Exact service names.",
      type: 'array',
      uniqueItems: true,
      items: {
        type: 'string',
        pattern: '^[^/\\s*?]+\\.service$',
        'x-message': 'must be an exact service name (NAME.service, no patterns)',
      },
      default: [],
    },
    mask: {
      description:
        'Mask the units after disabling them: true always, false never, auto (the default) when another unit, link or trigger would still start them at boot.',
      enum: [true, false, 'auto'],
      default: 'auto',
    },
    stop_shared_holders: {
      description:
        'A unit holding a wanted port that also serves others (inetd or xinetd services, supervisor programs, other listening sockets, other processes): true stops and disables it anyway, the plan naming what else that ends; false (the default) leaves it running and names the line to change instead (for inetd, the inetd.conf line to comment out). protected_units still wins.',
      type: 'boolean',
      default: false,
    },
    stop_containers: {
      description:
        'Docker containers holding a wanted port that apply may stop, by name or by an id prefix of at least 12 hex digits: docker update --restart=no, then docker stop (the runtime itself is never stopped); --rollback restores the restart policy and starts them again. A podman container (by name or id prefix) started by exactly one unit podman generate systemd wrote: that unit is stopped and disabled (never masked), --rollback starts it again; a podman container with no unit or with a quadlet stays an operator line that says why. Absent or empty: such a port is an operator line naming the container and what to run.',
      type: 'array',
      items: { type: 'string', pattern: '^[a-zA-Z0-9][a-zA-Z0-9_.-]*$', maxLength: 128 },
      uniqueItems: true,
      default: [],
    },
    timeout_seconds: {
      description: 'Longest wait for a port to become free and stay free.',
      type: 'integer',
      minimum: 1,
      maximum: 3600,
      default: 30,
    },
    disable_units: {
      description: 'Units to disable regardless of sockets (offline images: units that would grab a port at boot).',
      type: 'array',
      items: {
        type: 'string',
        pattern: '^[^/\\s\\u0000-\\u001f\\u007f]+\\.(service|socket)$',
      },
      default: [],
    },
  },
} as const;
