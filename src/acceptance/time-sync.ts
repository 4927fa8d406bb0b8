// TimeSync: not a kubeadm check, what breaks after the install. Without a
// time client a node's clock drifts: etcd's leader leases and raft
// heartbeats assume clocks that agree, and certificates (kubeadm's, the
// kubelet's rotated ones) are refused as "not yet valid" or expired by the
// other nodes. kubespray installs and configures one only with ntp_enabled
// (false by default). A warning: the install goes on.
//
// A container is not warned: CLOCK_REALTIME is not namespaced, so its clock
// is the host kernel's, set by whatever syncs the host; a client inside could
// not set it (systemd-timesyncd.service has ConditionVirtualization=!container
// for that reason).
import type { Checker } from './checker.js';
import { pass } from './checker.js';

/** The units of the NTP clients Debian ships (chrony, systemd-timesyncd, ntpsec, ntp before bookworm, openntpd). */
export const TIME_SYNC_UNITS = ['chrony.service', 'systemd-timesyncd.service', 'ntpsec.service', 'ntp.service', 'openntpd.service'];

export const timeSyncCheck: Checker = {
  name: 'TimeSync',
  runsOn: 'every node',
  breaksLater: 'etcd and certificate checks between nodes need clocks that agree',
  source: "kubespray roles/kubernetes/preinstall/tasks/0081-ntp-configurations.yml (run only when ntp_enabled); etcd's docs (clock drift between members)",
  check(f) {
    if (!f.timeSync.known) return { skipped: f.timeSync.reason };
    const t = f.timeSync.value;
    if (t.container !== null || t.clients.some((c) => c.runs)) return pass();
    const seen = t.clients.map((c) => `${c.unit}: ${c.how}`);
    return {
      warnings: [
        `no time synchronisation: none of ${TIME_SYNC_UNITS.join(', ')} runs or starts at boot${seen.length > 0 ? ` (${seen.join('; ')})` : ' (none is installed)'}`,
      ],
      errors: [],
    };
  },
};
