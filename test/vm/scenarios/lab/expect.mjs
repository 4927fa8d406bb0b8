// The lab: expectations after apply and after the reboot. `needs` lists the
// issues whose providers a check depends on (pending until they land).
import fs from 'node:fs';
import path from 'node:path';
import { eq, need, exitOf, countChanges, CP_PORTS, bootsOf, factsEqualAnsible } from '../../lib/checks.mjs';
import { kubesprayFixture } from '../../lib/vm.mjs';

const AGENT = 'monitoring-agent.service';
const UNRELATED = { 'vm.swappiness': '10', 'net.ipv4.conf.all.log_martians': '1' };
const SYSCTLS = ['net.ipv4.ip_forward', 'net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables'];

// What the stage inside the VM needs to know about this scenario.
export const guest = {
  wait_ports: [10250],
  units: [AGENT],
  sysctl_keys: Object.keys(UNRELATED),
  ansible: true,
};

function kubesprayMinimalMasterMb() {
  const f = path.join(kubesprayFixture(), 'roles/kubernetes/preinstall/defaults/main.yml');
  const m = /^minimal_master_memory_mb:\s*(\d+)/m.exec(fs.readFileSync(f, 'utf8'));
  if (!m) throw new Error(`no minimal_master_memory_mb in ${f}`);
  return Number(m[1]);
}

// who-fixes.json per fixture tree, read by hand from its roles (issue 44: field by field).
// kubespray-basic (test/fixtures): swap.yml removes fstab's swap entries (mount absent), masks
// swap.target and runs swapoff -a; the node role loads br_netfilter and templates it into
// modules-load.d; kernel/sysctl.yml sets ip_forward with the sysctl module (in a rescue: decided
// at run time, which counts as kubespray's); nothing frees 10250; sysctl_file is k8s_sysctl_file,
// "{{ k8s_sysctl_dir }}/90-fixture.conf" with k8s_sysctl_dir /etc/sysctl.d.
// kubespray (test/vm/fixtures): 0010-swapoff.yml comments out fstab's swap lines and runs
// swapoff -a; the node role loads br_netfilter and writes it to modules-load.d; 0080 sets
// ip_forward; nothing frees 10250; sysctl_file_path is /etc/sysctl.d/99-sysctl.conf.
const WHO_FIXES_BY_FIXTURE = {
  'kubespray-basic': {
    swap: 'kubespray',
    br_netfilter: 'kubespray',
    ip_forward: 'kubespray',
    port_10250: 'operator',
    sysctl_file: '/etc/sysctl.d/90-fixture.conf',
  },
  kubespray: { swap: 'kubespray', br_netfilter: 'kubespray', ip_forward: 'kubespray', port_10250: 'operator', sysctl_file: '/etc/sysctl.d/99-sysctl.conf' },
};

// Host state after the fix, checked once after apply and again after reboot.
function stateChecks(label, bootOf) {
  const snap = () => need(bootOf()?.snapshot, `${label} snapshot`);
  return [
    {
      name: `${label}: no swap (SwapTotal 0, /proc/swaps empty)`,
      needs: [2],
      check: () => eq({ total: snap().swap_total_kb, swaps: snap().proc_swaps }, { total: 0, swaps: [] }),
    },
    {
      name: `${label}: overlay and br_netfilter loaded`,
      needs: [2],
      check: () => eq([snap().modules.overlay.sys_module, snap().modules.br_netfilter.sys_module], [true, true], '[overlay, br_netfilter]'),
    },
    {
      name: `${label}: three sysctls are 1`,
      needs: [4],
      check: () =>
        eq(
          SYSCTLS.map((k) => snap().sysctls[k]),
          ['1', '1', '1'],
          SYSCTLS.join(','),
        ),
    },
    {
      name: `${label}: three sysctls are 1 after sysctl --system`,
      needs: [4],
      check: () =>
        eq(
          SYSCTLS.map((k) => need(bootOf().sysctlsAfterSystem, 'sysctl --system snapshot')[k]),
          ['1', '1', '1'],
          SYSCTLS.join(','),
        ),
    },
    {
      name: `${label}: unrelated planted keys kept`,
      needs: [4],
      check: () =>
        eq(
          Object.keys(UNRELATED).map((k) => [snap().sysctls[k], bootOf().sysctlsAfterSystem?.[k]]),
          Object.values(UNRELATED).map((v) => [v, v]),
          '[now, after sysctl --system]',
        ),
    },
    { name: `${label}: no control-plane port listening`, needs: [5], check: () => eq(snap().cp_ports_listening, []) },
    { name: `${label}: ${AGENT} inactive and disabled`, needs: [5], check: () => eq(snap().units[AGENT], { active: 'inactive', enabled: 'disabled' }) },
  ];
}

export function checks(r) {
  const { b1, measured } = bootsOf(r);
  const agentHolder = () => {
    const l = measured().holders.find((h) => h.port === 10250);
    return need(l?.holders?.[0], 'holder of 10250 at first boot');
  };
  const facts = () => need(b1().preflight.facts, 'preflight/facts.json');
  const ansible = () => need(b1().ansible?.ansible_facts, 'ansible -m setup facts');
  return [
    // The reproduction itself: these hold before any provider exists.
    {
      name: 'planted: swap active at first boot',
      check: () => (measured().before.swap_total_kb > 0 ? { ok: true, detail: `${measured().before.swap_total_kb} kB` } : 'SwapTotal 0 at first boot'),
    },
    {
      name: 'planted: agent listening on 10250 at first boot',
      check: () => eq([agentHolder().unit, measured().before.busy_ports], [AGENT, [10250]], '[unit, busy_ports]'),
    },
    {
      name: 'planted: ip_forward 0, br_netfilter not loaded at first boot',
      check: () =>
        eq(
          [measured().before.ip_forward, measured().before.br_netfilter, measured().snapshot.modules.overlay.sys_module],
          [0, false, false],
          '[ip_forward, br_netfilter, overlay]',
        ),
    },
    {
      name: 'planted: unrelated keys set at first boot',
      check: () =>
        eq(
          Object.keys(UNRELATED).map((k) => measured().snapshot.sysctls[k]),
          Object.values(UNRELATED),
        ),
    },

    // The CLI's exit codes across the run.
    { name: 'plan before apply exits 2', needs: [2], check: () => eq(exitOf(b1(), 'plan1'), 2) },
    { name: 'apply exits 0', needs: [2], check: () => eq(exitOf(b1(), 'apply1'), 0) },
    { name: 'plan after apply exits 0', needs: [2], check: () => eq(exitOf(b1(), 'plan2'), 0) },
    {
      name: 'second apply exits 0 with no changes',
      needs: [2],
      check: () => {
        const doc = JSON.parse(need(b1().stdout('apply2'), 'apply2 output'));
        return eq([exitOf(b1(), 'apply2'), countChanges(doc)], [0, 0], '[exit, changes]');
      },
    },
    { name: 'plan after reboot exits 0', needs: [2], check: () => eq(exitOf(need(r.boot2, 'boot2 results'), 'plan3'), 0) },

    // The conflict explained in one sentence (SysctlFile's wording): plant.sh
    // writes `net.ipv4.ip_forward = 0` on line 2 of security-baseline.conf,
    // which sorts after k8s.conf under systemd-sysctl and sysctl --system alike.
    {
      name: 'plan before apply explains the ip_forward conflict in one sentence',
      needs: [4],
      check: () => {
        const text = need(b1().stdout('plan1'), 'plan1 output').replace(/\x1b\[[0-9;]*m/g, '');
        const sentence =
          'at next boot and after sysctl --system net.ipv4.ip_forward would be 0: /etc/sysctl.d/security-baseline.conf:2 sorts after /etc/sysctl.d/k8s.conf';
        const line = text.split('\n').find((l) => l.includes('net.ipv4.ip_forward would be'));
        return line?.includes(sentence)
          ? { ok: true, detail: line.trim() }
          : `expected a line containing "${sentence}", got ${JSON.stringify(line?.trim() ?? null)}`;
      },
    },

    // Reports.
    {
      name: 'before.json equals the first-boot measurement',
      needs: [2],
      check: () => eq(need(b1().preflight.before, 'preflight/before.json'), measured().before),
    },
    { name: 'before.json not overwritten after reboot', needs: [2], check: () => eq(need(r.boot2?.preflight.before, 'boot2 before.json'), measured().before) },
    {
      name: 'ports.json names the agent port, unit and pre-stop pid',
      needs: [5],
      check: () => {
        const p = need(b1().preflight.ports, 'preflight/ports.json');
        return eq({ port: p.port, unit: p.unit, pid: p.pid }, { port: 10250, unit: AGENT, pid: agentHolder().pid });
      },
    },
    { name: 'facts.json equals ansible -m setup in the same VM', needs: [6], check: () => factsEqualAnsible(facts(), ansible()) },
    { name: 'facts.json minimal_master_memory_mb from kubespray', needs: [6], check: () => eq(facts().minimal_master_memory_mb, kubesprayMinimalMasterMb()) },
    {
      name: "who-fixes.json: the roles' five answers, field by field",
      needs: [6],
      check: () => {
        const w = need(b1().preflight['who-fixes'], 'preflight/who-fixes.json');
        const fixture = path.basename(kubesprayFixture());
        const expected = WHO_FIXES_BY_FIXTURE[fixture];
        if (!expected) return `no hand-read who-fixes.json for the fixture ${fixture}: add it to WHO_FIXES_BY_FIXTURE`;
        return eq(w, expected, fixture);
      },
    },

    ...stateChecks('after apply', () => r.boot1),
    ...stateChecks('after reboot', () => r.boot2),
  ];
}

export { CP_PORTS };
