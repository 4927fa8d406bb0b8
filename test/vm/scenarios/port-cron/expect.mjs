// A listener started by a crontab line (issue 18): `@reboot root python3 -m
// http.server 2379` in /etc/cron.d/legacy-etcd. The holder sits in
// cron.service's cgroup but is not cron's main process nor started by its
// ExecStart=, so the plan names the crontab line for an operator, apply
// exits 1, and cron.service stays active and enabled, after the reboot too.
import { eq, need, exitOf, bootsOf, holdersOn } from '../../lib/checks.mjs';

const CRON = 'cron.service';
const PORT = 2379;
const FILE = '/etc/cron.d/legacy-etcd';
// plant.sh writes the @reboot entry on line 6 of the file.
const LINE = `${FILE}:6: @reboot root python3 -m http.server ${PORT}`;

export const guest = {
  // Units, triggers and listeners only: booted in systemd-nspawn (lib/nspawn.mjs), not qemu.
  tier: 'nspawn',
  wait_ports: [PORT],
  units: [CRON],
  sysctl_keys: [],
  ansible: false,
};

export function checks(r) {
  const { b1, b2, measured, text, planted } = bootsOf(r);
  // The operator line names the holder, the spawner and the crontab line.
  const namesLine = (bootOf, name, pidOf) => () => {
    const out = text(bootOf(), name).split('\n');
    const head = out.findIndex((l) => l.includes(`port ${PORT}`) && l.includes('operator action required'));
    if (head < 0) return `no operator line for port ${PORT}`;
    const reason = out[head + 1] ?? '';
    const missing = [`pid ${pidOf()}`, 'python3 -m http.server 2379', `not ${CRON}'s own process`, LINE].filter((s) => !reason.includes(s));
    return missing.length === 0 ? { ok: true, detail: reason.trim().slice(0, 400) } : `reason lacks ${JSON.stringify(missing)}: ${reason.trim()}`;
  };
  const neverStops = (bootOf, name) => () => {
    const hit = text(bootOf(), name).split('\n').find((l) => /stop(, disable and mask| and disable) cron\.service/.test(l) || l.includes(`systemctl stop ${CRON}`));
    return hit ? `a stop of ${CRON}: ${hit.trim()}` : true;
  };
  const cronUp = (label, bootOf) => ({ name: `${label}: ${CRON} active and enabled`, needs: [5], check: () => eq(need(bootOf().snapshot, `${label} snapshot`).units[CRON], { active: 'active', enabled: 'enabled' }) });
  return [
    { name: `planted: ${PORT} held by python3 in ${CRON} at first boot`, check: () => eq([planted(PORT).comm, planted(PORT).unit], ['python3', CRON], '[comm, unit]') },
    { name: `planted: ${CRON} active and enabled at first boot`, check: () => eq(measured().snapshot.units[CRON], { active: 'active', enabled: 'enabled' }) },

    { name: 'plan exits 2 (an operator is needed)', needs: [5], check: () => eq(exitOf(b1(), 'plan1'), 2) },
    { name: 'plan names the holder, cron.service as its spawner, and the crontab line', needs: [5], check: namesLine(b1, 'plan1', () => planted(PORT).pid) },
    { name: 'apply names the holder, cron.service as its spawner, and the crontab line', needs: [5], check: namesLine(b1, 'apply1', () => planted(PORT).pid) },
    { name: 'apply exits 1 (operator action required)', needs: [5], check: () => eq(exitOf(b1(), 'apply1'), 1) },
    { name: `neither plan nor apply stops ${CRON}`, needs: [5], check: () => {
      for (const n of ['plan1', 'apply1', 'plan2']) {
        const v = neverStops(b1, n)();
        if (v !== true) return `${n}: ${v}`;
      }
      return true;
    } },
    { name: 'apply --json: the port is an operator change on cron.service, nothing stopped', needs: [5], check: () => {
      const doc = JSON.parse(need(b1().stdout('apply2'), 'apply2 output'));
      const pf = need(doc.resources.find((x) => x.type === 'PortFree'), 'PortFree in apply --json');
      return eq(pf.changes.map((c) => [c.action, c.detail?.unit ?? null, c.operator?.includes(LINE) ?? false]), [['operator', CRON, true]], '[action, unit, names the line]');
    } },
    cronUp('after apply', b1),
    { name: `after apply: the same python3 still listens on ${PORT} (nothing stopped)`, needs: [5], check: () => eq(holdersOn(need(b1().snapshot, 'snapshot').listeners, PORT).map((h) => [h.pid, h.comm, h.unit]), [[planted(PORT).pid, 'python3', CRON]], '[pid, comm, unit]') },
    cronUp('after reboot', b2),
    { name: `after reboot: cron ran the @reboot line again (${PORT} held by python3 in ${CRON})`, needs: [5], check: () => eq(holdersOn(need(b2().snapshot, 'boot2 snapshot').listeners, PORT).map((h) => [h.comm, h.unit]), [['python3', CRON]], '[comm, unit]') },
    { name: 'after reboot: plan names the crontab line again', needs: [5], check: namesLine(b2, 'plan3', () => need(holdersOn(need(b2().snapshot, 'boot2 snapshot').listeners, PORT)[0], `holder of ${PORT} after reboot`).pid) },
  ];
}
