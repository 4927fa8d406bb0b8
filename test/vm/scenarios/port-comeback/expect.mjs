// Port holders that another unit starts at boot (issue 17): metrics-agent on
// 10250 is also wanted by monitoring.target's `Wants=` (line 3 of
// /etc/systemd/system/monitoring.target), and report-server on 10257 is
// started by an enabled timer. With the default mask: auto the plan names
// the target's path, and apply stops, disables and masks metrics-agent; the
// timer is report-server's trigger, so (issue 26) it is stopped and disabled
// first, with the service, and then nothing starts the service again: no
// mask. After the reboot the target is still enabled, the timer disabled, and
// both ports stay free.
import { eq, need, exitOf, bootsOf, holdersOn } from '../../lib/checks.mjs';

const AGENT = 'metrics-agent.service';
const REPORT = 'report-server.service';
const TIMER = 'report-server.timer';
const TARGET = 'monitoring.target';
// The sentences PortFree writes, with the file and line plant.sh wrote.
const AGENT_PATH = `${AGENT} is still wanted by ${TARGET} (Wants= at /etc/systemd/system/${TARGET}:3), which is enabled`;
const REPORT_TRIGGER = `${TIMER} triggers ${REPORT}, so it goes first: stop and disable ${TIMER} and ${REPORT}`;

export const guest = {
  // Units, triggers and listeners only: booted in systemd-nspawn (lib/nspawn.mjs), not qemu.
  tier: 'nspawn',
  wait_ports: [10250, 10257],
  units: [AGENT, REPORT, TIMER, TARGET],
  sysctl_keys: [],
  ansible: false,
};

export function checks(r) {
  const { b1, b2, measured, text } = bootsOf(r);
  const holderOf = (listeners, port) => holdersOn(listeners, port)[0];
  const names = (bootOf, name, sentence) => () => {
    const line = text(bootOf(), name).split('\n').find((l) => l.includes(sentence));
    return line ? { ok: true, detail: line.trim().slice(0, 400) } : `no line in ${name} contains ${JSON.stringify(sentence)}`;
  };
  const units = (label, bootOf) => () => {
    const u = need(bootOf().snapshot, `${label} snapshot`).units;
    return eq([u[AGENT], u[REPORT], u[TIMER], u[TARGET].enabled], [{ active: 'inactive', enabled: 'masked' }, { active: 'inactive', enabled: 'static' }, { active: 'inactive', enabled: 'disabled' }, 'enabled'], `[${AGENT}, ${REPORT}, ${TIMER}, ${TARGET} enabled]`);
  };
  const free = (label, bootOf) => () => eq(need(bootOf().snapshot, `${label} snapshot`).cp_ports_listening, []);
  return [
    { name: `planted: 10250 held by python3 in ${AGENT}, 10257 by python3 in ${REPORT} (started by ${TIMER})`, check: () => eq([10250, 10257].map((p) => [holderOf(measured().holders, p)?.comm, holderOf(measured().holders, p)?.unit]), [['python3', AGENT], ['python3', REPORT]], '[comm, unit] per port') },
    { name: `planted: ${TARGET} and ${TIMER} enabled at first boot`, check: () => eq([measured().snapshot.units[TARGET].enabled, measured().snapshot.units[TIMER].enabled], ['enabled', 'enabled']) },

    { name: 'plan exits 2', needs: [5], check: () => eq(exitOf(b1(), 'plan1'), 2) },
    { name: `plan names ${TARGET}'s Wants= line as what would start ${AGENT} again`, needs: [5], check: names(b1, 'plan1', AGENT_PATH) },
    { name: `plan names ${TIMER} as ${REPORT}'s trigger, stopped and disabled first`, needs: [5], check: names(b1, 'plan1', REPORT_TRIGGER) },
    { name: `plan says stop, disable and mask for ${AGENT}`, needs: [5], check: names(b1, 'plan1', `stop, disable and mask ${AGENT}`) },
    { name: 'apply exits 0', needs: [5], check: () => eq(exitOf(b1(), 'apply1'), 0) },
    { name: 'plan after apply exits 0', needs: [5], check: () => eq(exitOf(b1(), 'plan2'), 0) },
    { name: 'ports.json lists 10250 and 10257 with their units and pre-stop pids', needs: [5], check: () => {
      const p = need(b1().preflight.ports, 'preflight/ports.json');
      return eq(p.freed.map((f) => [f.port, f.unit, f.pid]), [[10250, AGENT, holderOf(measured().holders, 10250).pid], [10257, REPORT, holderOf(measured().holders, 10257).pid]]);
    } },
    { name: 'after apply: no control-plane port listening', needs: [5], check: free('after apply', b1) },
    { name: `after apply: ${AGENT} masked, ${REPORT} and ${TIMER} inactive, ${TIMER} disabled; ${TARGET} left enabled`, needs: [5], check: units('after apply', b1) },
    { name: 'after reboot: no control-plane port listening', needs: [5], check: free('after reboot', b2) },
    { name: `after reboot: the same: ${AGENT} masked, ${TIMER} disabled, nothing started; ${TARGET} still enabled`, needs: [5], check: units('after reboot', b2) },
    { name: 'after reboot: plan exits 0', needs: [5], check: () => eq(exitOf(b2(), 'plan3'), 0) },
  ];
}
