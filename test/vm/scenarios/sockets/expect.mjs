// Port holders beyond the lab: a socket-activated unit (PID 1 holds the
// socket) and an IPv6-only listener. Everything here waits for PortFree (#5);
// the exit-code checks also need the core CLI (#2).
import { eq, need, exitOf, bootsOf, holdersOn } from '../../lib/checks.mjs';

const SOCKET = 'legacy-etcd.socket';
const ACTIVATED = 'legacy-etcd.service';
const V6 = 'legacy-apiserver.service';

export const guest = {
  // Units, triggers and listeners only: booted in systemd-nspawn (lib/nspawn.mjs), not qemu.
  tier: 'nspawn',
  wait_ports: [2379, 6443],
  units: [SOCKET, ACTIVATED, V6],
  sysctl_keys: [],
  ansible: false,
};

function stateChecks(label, bootOf) {
  const snap = () => need(bootOf()?.snapshot, `${label} snapshot`);
  return [
    { name: `${label}: 2379 and 6443 free`, needs: [5], check: () => eq(snap().listeners.filter((l) => [2379, 6443].includes(l.port)).map((l) => l.line), []) },
    { name: `${label}: socket and its service inactive and disabled`, needs: [5], check: () => eq([snap().units[SOCKET], snap().units[ACTIVATED]], [{ active: 'inactive', enabled: 'disabled' }, { active: 'inactive', enabled: 'disabled' }]) },
    { name: `${label}: IPv6-only listener inactive and disabled`, needs: [5], check: () => eq(snap().units[V6], { active: 'inactive', enabled: 'disabled' }) },
  ];
}

export function checks(r) {
  const { b1, measured } = bootsOf(r);
  const holder = (port) => holdersOn(measured().holders, port);
  return [
    { name: 'planted: 2379 held by PID 1 (socket) at first boot', check: () => eq(holder(2379).some((h) => h.pid === 1), true, 'pid 1 among holders') },
    { name: 'planted: 6443 listening on IPv6 only at first boot', check: () => eq(measured().holders.filter((l) => l.port === 6443).map((l) => [l.address, l.holders[0]?.unit]), [['[::]', V6]]) },
    { name: 'planted: busy_ports [2379, 6443] at first boot', check: () => eq(measured().before.busy_ports, [2379, 6443]) },

    { name: 'plan before apply exits 2', needs: [2, 5], check: () => eq(exitOf(b1(), 'plan1'), 2) },
    { name: 'apply exits 0', needs: [2, 5], check: () => eq(exitOf(b1(), 'apply1'), 0) },
    { name: 'plan after apply exits 0', needs: [2, 5], check: () => eq(exitOf(b1(), 'plan2'), 0) },
    { name: 'plan after reboot exits 0', needs: [2, 5], check: () => eq(exitOf(need(r.boot2, 'boot2 results'), 'plan3'), 0) },

    { name: 'ports.json lists 2379 and 6443 under freed, lowest at top', needs: [5], check: () => {
      const p = need(b1().preflight.ports, 'preflight/ports.json');
      const freed = need(p.freed, 'ports.json freed');
      const byPort = Object.fromEntries(freed.map((f) => [f.port, f]));
      const v6pid = holder(6443)[0]?.pid;
      return eq(
        [p.port, Object.keys(byPort).map(Number).sort((a, b) => a - b), /^legacy-etcd\.(socket|service)$/.test(byPort[2379]?.unit ?? ''), byPort[6443]?.unit, byPort[6443]?.pid],
        [2379, [2379, 6443], true, V6, v6pid],
        '[top port, freed ports, 2379 unit is legacy-etcd.*, 6443 unit, 6443 pid]',
      );
    } },
    ...stateChecks('after apply', () => r.boot1),
    ...stateChecks('after reboot', () => r.boot2),
  ];
}
