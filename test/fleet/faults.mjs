// What a fleet host can carry, and the verdict each implies, from what the
// thing is (systemd, cron, rc.local, the desired state's conflict_policy),
// never from the tool's output:
//   fix      the tool can make the promise hold itself (plan: changes; apply: ready)
//   operator a person must decide: the tool names the line and leaves it
//   unknown  the tool cannot read what runs (a Python program): it must say so
// The desired state of the fleet (fleetDesired) has no SwapOff or ModulesLoad:
// the containers share this machine's kernel (test/boot/README.md).
import { containerDesired } from '../boot/lib/desired.mjs';

// Every fleet host starts with net.ipv4.ip_forward = 0 (a fresh network
// namespace's value) and no /etc/sysctl.d/k8s.conf: even a stock host has work (fix).
export const FAULTS = {
  stock: { implies: 'fix', files: () => ({}) },
  // A router guide's sysctl.d file: conflict_policy resolve lets the tool override it.
  'sysctl-d-zero': { implies: 'fix', files: () => ({ '/etc/sysctl.d/60-router.conf': 'net.ipv4.ip_forward = 0\n' }) },
  // /etc/sysctl.conf edited by hand: systemd-sysctl reads it last (99-sysctl.conf link); resolve again.
  'sysctl-conf-zero': { implies: 'fix', files: () => ({ '/etc/sysctl.conf': 'net.ipv4.ip_forward=0\n' }) },
  // An enabled unit holding a control-plane port: a unit the tool may stop and mask.
  'port-unit': {
    implies: 'fix',
    port: 6443,
    files: (port) => ({
      '/etc/systemd/system/legacy-api.service': `[Unit]\nDescription=legacy API\n\n[Service]\nExecStart=/usr/bin/systemd-socket-activate -l ${port} /bin/cat\n\n[Install]\nWantedBy=multi-user.target\n`,
      '/etc/systemd/system/multi-user.target.wants/legacy-api.service': { link: '/etc/systemd/system/legacy-api.service' },
    }),
  },
  // A port holder started by cron @reboot: it lives in cron.service; only a person can say what replaces it.
  'cron-reboot-port': {
    implies: 'operator',
    port: 10250,
    files: (port) => ({ '/etc/cron.d/legacy-agent': `@reboot root /usr/bin/systemd-socket-activate -l ${port} /bin/cat\n` }),
  },
  // rc.local's sysctl -w undoes the wanted value at every boot; the tool does not edit an admin's script unasked.
  'rc-local-sysctl': {
    implies: 'operator',
    files: () => ({ '/etc/rc.local': { content: '#!/bin/sh\nsysctl -w net.ipv4.ip_forward=0\nexit 0\n', mode: 0o755 } }),
  },
  // rc.local runs a Python program at boot: what it writes cannot be read from shell.
  'rc-local-python': {
    implies: 'unknown',
    files: () => ({
      '/etc/rc.local': { content: '#!/bin/sh\n/usr/local/sbin/net-tune\nexit 0\n', mode: 0o755 },
      '/usr/local/sbin/net-tune': { content: '#!/usr/bin/python3\nopen("/proc/sys/net/ipv4/ip_forward", "w").write("0\\n")\n', mode: 0o755 },
    }),
  },
};

/** 20 hosts: every fault alone, then pairs that do not write one path twice (rc.local once per host). */
export const RECIPES = [
  ['stock'], ['sysctl-d-zero'], ['sysctl-conf-zero'], ['port-unit'], ['cron-reboot-port'], ['rc-local-sysctl'], ['rc-local-python'],
  ['stock'], ['port-unit', 'sysctl-d-zero'], ['port-unit', 'sysctl-conf-zero'], ['port-unit', 'rc-local-sysctl'],
  ['cron-reboot-port', 'sysctl-d-zero'], ['cron-reboot-port', 'rc-local-python'], ['port-unit', 'rc-local-python'],
  ['sysctl-d-zero', 'sysctl-conf-zero'], ['cron-reboot-port', 'port-unit'], ['sysctl-conf-zero', 'rc-local-sysctl'],
  ['sysctl-d-zero', 'rc-local-python'], ['stock'], ['port-unit', 'sysctl-d-zero', 'sysctl-conf-zero'],
];

const ORDER = ['failed', 'operator', 'unknown', 'changes', 'ready'];
const worst = (vs) => vs.sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b))[0];

/** The verdict a recipe implies for a plan and for an apply (the report's order: worst first). */
export function expectedVerdict(recipe, mode) {
  return worst(recipe.map((id) => {
    const i = FAULTS[id].implies;
    if (i === 'fix') return mode === 'plan' ? 'changes' : 'ready';
    return i;
  }));
}

/** The files of a recipe; ports given to port faults in order, so two holders never share one. */
export function recipeFiles(recipe) {
  const files = {};
  const ports = [6443, 10250, 2379, 2380, 10257, 10259];
  let next = 0;
  for (const id of recipe) {
    const f = FAULTS[id];
    Object.assign(files, f.files(f.port === undefined ? undefined : ports[next++]));
  }
  return files;
}

export const FLEET_DESIRED = containerDesired('/var/lib/k8s-host-reconcile/reports');
