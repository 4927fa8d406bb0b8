// Rollback on a booted host: the lab's faults -> apply -> --rollback -> reboot.
// After the reboot the host is as the previous admin left it: fstab and the
// baseline sysctl file byte-identical, the agent enabled and listening on
// 10250, swap on, and --plan pending the same changes as before the apply.
import { eq, need, exitOf, bootsOf } from '../../lib/checks.mjs';

const AGENT = 'monitoring-agent.service';
const FILES = ['/etc/fstab', '/etc/sysctl.d/security-baseline.conf'];

export const guest = {
  wait_ports: [10250],
  units: [AGENT],
  sysctl_keys: [],
  ansible: false,
  rollback: true,
  files: FILES,
};

const changeIds = (planJson) => JSON.parse(planJson).resources.map((r) => [r.name, r.changes.filter((c) => !c.operator).map((c) => c.id).sort()]);

export function checks(r) {
  const { b1, b2 } = bootsOf(r);
  const applied = () => need(b1().snapshotApplied, 'snapshot after apply');
  return [
    { name: 'apply converged (exit 0) before the rollback', needs: [2, 4, 5], check: () => eq(exitOf(b1(), 'apply1'), 0) },
    { name: 'after apply: swap off, 10250 free, agent disabled', needs: [2, 5], check: () => eq([applied().swap_total_kb, applied().cp_ports_listening, applied().units[AGENT].enabled], [0, [], 'disabled'], '[swap, ports, agent]') },
    { name: 'rollback --plan previews steps (exit 2)', needs: [10], check: () => eq(exitOf(b1(), 'rollback-plan'), 2) },
    { name: 'rollback exits 0', needs: [10], check: () => (exitOf(b1(), 'rollback1') === 0 ? true : `exit ${exitOf(b1(), 'rollback1')}: ${b1().stdout('rollback1')}`) },
    { name: 'a second rollback does nothing and says so', needs: [10], check: () => eq([exitOf(b1(), 'rollback2'), /already rolled back/.test(b1().stdout('rollback2') ?? '')], [0, true], '[exit, says so]') },
    { name: 'rollback says the modules stay loaded', needs: [10], check: () => (/overlay stays loaded/.test(b1().stdout('rollback1') ?? '') && /br_netfilter stays loaded/.test(b1().stdout('rollback1') ?? '') ? true : b1().stdout('rollback1')) },
    ...FILES.map((f) => ({ name: `after rollback: ${f} byte-identical, same owner and mode`, needs: [10], check: () => eq(need(b1().filesAfter, 'files after rollback')[f], need(b1().filesBefore, 'files before')[f]) })),
    { name: 'after rollback: agent enabled and listening on 10250, swap on', needs: [10], check: () => eq([b1().snapshot.units[AGENT], b1().snapshot.cp_ports_listening, b1().snapshot.swap_total_kb > 0], [{ active: 'active', enabled: 'enabled' }, [10250], true], '[agent, ports, swap]') },
    { name: 'after rollback: ip_forward back to 0', needs: [10], check: () => eq(b1().snapshot.sysctls['net.ipv4.ip_forward'], '0') },
    ...FILES.map((f) => ({ name: `after reboot: ${f} byte-identical to the original`, needs: [10], check: () => eq(need(b2().filesAfter, 'files at boot 2')[f], need(b1().filesBefore, 'files before')[f]) })),
    { name: 'after reboot: agent enabled and listening on 10250', needs: [10], check: () => eq([b2().snapshot.units[AGENT], b2().snapshot.cp_ports_listening], [{ active: 'active', enabled: 'enabled' }, [10250]], '[agent, ports]') },
    { name: 'after reboot: swap on', needs: [10], check: () => (b2().snapshot.swap_total_kb > 0 ? { ok: true, detail: `${b2().snapshot.swap_total_kb} kB` } : 'SwapTotal 0') },
    { name: 'after reboot: --plan pends the same changes as before the apply', needs: [10], check: () => eq([exitOf(b2(), 'plan3json'), changeIds(b2().stdout('plan3json'))], [2, changeIds(need(b1().stdout('plan1json'), 'plan before apply'))], '[exit, changes]') },
  ];
}
