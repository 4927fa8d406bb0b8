// A control-plane port held outside any service (issue 5): a python listener
// on 10257 in a transient scope made by `systemd-run --scope`. The plan names
// it for an operator, apply exits 1 but still turns swap off, and nothing is
// killed: the same process still listens after apply.
import { eq, need, exitOf, bootsOf, holdersOn } from '../../lib/checks.mjs';

const SCOPE = 'manual-debug.scope';
const LAUNCHER = 'debug-launcher.service';
const PORT = 10257;
const SYSCTLS = ['net.ipv4.ip_forward', 'net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables'];

export const guest = {
  wait_ports: [PORT],
  units: [SCOPE, LAUNCHER],
  sysctl_keys: [],
  ansible: false,
};

export function checks(r) {
  const { b1, b2, measured, text, planted } = bootsOf(r);
  // The operator line: pid, process name, scope and the tag on one line.
  const namesHolder = (bootOf, name) => () => {
    const boot = bootOf();
    const h = planted(PORT);
    const line = text(boot, name).split('\n').find((l) => l.includes(`pid ${h.pid} (${h.comm})`) && l.includes(SCOPE));
    if (!line) return `no line naming pid ${h.pid} (${h.comm}) in ${SCOPE}`;
    return line.includes('operator action required') ? { ok: true, detail: line.trim() } : `"operator action required" missing from: ${line.trim()}`;
  };
  return [
    { name: `planted: ${PORT} held by python3 in ${SCOPE} at first boot`, check: () => eq([planted(PORT).comm, planted(PORT).unit, measured().before.busy_ports], ['python3', SCOPE, [PORT]], '[comm, unit, busy_ports]') },
    { name: 'planted: swap active at first boot', check: () => (measured().before.swap_total_kb > 0 ? { ok: true, detail: `${measured().before.swap_total_kb} kB` } : 'SwapTotal 0 at first boot') },

    { name: 'plan names the pid, process and scope, operator action required', needs: [5], check: namesHolder(b1, 'plan1') },
    { name: 'apply names the pid, process and scope, operator action required', needs: [5], check: namesHolder(b1, 'apply1') },
    { name: 'apply exits 1 (an operator is needed)', needs: [2, 5], check: () => eq(exitOf(b1(), 'apply1'), 1) },
    { name: 'after apply: no swap (SwapTotal 0, /proc/swaps empty)', needs: [2], check: () => eq({ total: need(b1().snapshot, 'snapshot').swap_total_kb, swaps: b1().snapshot.proc_swaps }, { total: 0, swaps: [] }) },
    { name: 'after apply: modules loaded and sysctls 1 (everything else converged)', needs: [2, 4], check: () => {
      const s = need(b1().snapshot, 'snapshot');
      return eq([s.modules.overlay.sys_module, s.modules.br_netfilter.sys_module, ...SYSCTLS.map((k) => s.sysctls[k])], [true, true, '1', '1', '1'], '[overlay, br_netfilter, sysctls]');
    } },
    { name: `after apply: the same process still listens on ${PORT} (nothing killed)`, needs: [5], check: () => eq(holdersOn(need(b1().snapshot, 'snapshot').listeners, PORT).map((h) => [h.pid, h.comm, h.unit]), [[planted(PORT).pid, planted(PORT).comm, SCOPE]], '[pid, comm, unit]') },
    { name: `after apply: ${SCOPE} still active, ${LAUNCHER} still enabled (nothing stopped or disabled)`, needs: [5], check: () => eq([b1().snapshot.units[SCOPE].active, b1().snapshot.units[LAUNCHER]], ['active', { active: 'active', enabled: 'enabled' }]) },
    { name: 'after reboot: no swap', needs: [2], check: () => eq({ total: need(b2().snapshot, 'boot2 snapshot').swap_total_kb, swaps: b2().snapshot.proc_swaps }, { total: 0, swaps: [] }) },
  ];
}
