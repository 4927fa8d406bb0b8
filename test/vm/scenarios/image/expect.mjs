// Golden image (issue 7): the lab's faults planted in a fresh tree, converged on
// this machine with `--apply --root`, then booted once. The first boot must
// already be right; nothing is applied inside the VM.
import { eq, need, exitOf } from '../../lib/checks.mjs';

const AGENT = 'monitoring-agent.service';
const UNRELATED = { 'vm.swappiness': '10', 'net.ipv4.conf.all.log_martians': '1' };
const SYSCTLS = ['net.ipv4.ip_forward', 'net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables'];

export const guest = {
  flow: 'image',
  wait_ports: [10250],
  units: [AGENT],
  sysctl_keys: Object.keys(UNRELATED),
  ansible: false,
};

// Offline, a service whose ExecStart names 10250 is only a candidate: the
// image's desired state names the agent so the offline apply disables it.
export function desired(doc) {
  for (const r of doc.resources) {
    if (r.type === 'PortFree') r.disable_units = [...new Set([...(r.disable_units ?? []), AGENT])];
  }
  return doc;
}

// Runs on this machine after the faults are planted, before the image is built.
export function hostApply({ root, desired: file, reconcile }) {
  const apply = reconcile(['--apply', '--root', root, '-f', file]);
  const plan = reconcile(['--plan', '--root', root, '-f', file]);
  return { apply, plan };
}

export function checks(r) {
  const host = () => need(r.host, 'host-side --root results');
  const b1 = () => need(r.boot1, 'boot1 results');
  const snap = () => need(b1().snapshot, 'first boot snapshot');
  const hostExit = (name) => {
    const c = need(host()[name], `host ${name}`);
    return { ok: c.exit === 0, detail: `exit ${c.exit}${c.exit === 0 ? '' : `\n${c.stdout}\n${c.stderr}`.trimEnd()}` };
  };
  return [
    { name: 'host: --apply --root on the planted tree exits 0', needs: [2, 4, 5], check: () => hostExit('apply') },
    { name: 'host: --plan --root afterwards exits 0', needs: [2, 4, 5], check: () => hostExit('plan') },
    { name: 'first boot: no swap (SwapTotal 0, /proc/swaps empty)', needs: [2], check: () => eq({ total: snap().swap_total_kb, swaps: snap().proc_swaps }, { total: 0, swaps: [] }) },
    { name: 'first boot: overlay and br_netfilter loaded', needs: [2], check: () => eq([snap().modules.overlay.sys_module, snap().modules.br_netfilter.sys_module], [true, true], '[overlay, br_netfilter]') },
    { name: 'first boot: three sysctls are 1', needs: [4], check: () => eq(SYSCTLS.map((k) => snap().sysctls[k]), ['1', '1', '1'], SYSCTLS.join(',')) },
    { name: 'first boot: unrelated planted keys kept', needs: [4], check: () => eq(Object.keys(UNRELATED).map((k) => snap().sysctls[k]), Object.values(UNRELATED), Object.keys(UNRELATED).join(',')) },
    { name: 'first boot: no control-plane port listening', needs: [5], check: () => eq(snap().cp_ports_listening, []) },
    { name: `first boot: ${AGENT} not started and disabled`, needs: [5], check: () => eq(snap().units[AGENT], { active: 'inactive', enabled: 'disabled' }) },
    { name: 'first boot: --plan inside exits 0', needs: [2, 4, 5], check: () => eq(exitOf(b1(), 'plan1'), 0) },
  ];
}
