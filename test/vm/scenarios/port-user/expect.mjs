// A lingering user's service holds 6443 (issue 17). Root stops, disables
// and, because alice's dev-stack.target still wants it, masks it through her
// manager (`systemctl --user -M alice@`). After the reboot her manager runs
// again (she lingers) and 6443 stays free.
import { eq, need, exitOf, bootsOf } from '../../lib/checks.mjs';

const PORT = 6443;
const UNIT = 'api-server.service';
const MANAGER = 'user@1000.service';
const CONF = '/home/alice/.config/systemd/user';
const MASK = `${CONF}/${UNIT}`;
const LINK = `${CONF}/default.target.wants/${UNIT}`;
const PATH = `${UNIT} is still wanted by dev-stack.target (Wants= at ${CONF}/dev-stack.target:3), which is enabled`;
const LINGER = "alice lingers (/var/lib/systemd/linger/alice exists), so alice's manager (user@1000.service) starts at boot";

export const guest = {
  // Units, triggers and listeners only: booted in systemd-nspawn (lib/nspawn.mjs), not qemu.
  tier: 'nspawn',
  wait_ports: [PORT],
  units: [MANAGER],
  sysctl_keys: [],
  ansible: false,
  files: [MASK, LINK],
  // logind (linger) needs the system bus; `systemctl --user -M alice@` needs her session bus.
  packages: ['dbus', 'dbus-user-session', 'libpam-systemd'],
};

export function checks(r) {
  const { b1, b2, measured, text, planted } = bootsOf(r);
  const holder = () => planted(PORT);
  const line = (bootOf, name, parts) => () => {
    const l = text(bootOf(), name).split('\n').find((x) => x.includes(`port ${PORT}`));
    if (!l) return `no line for port ${PORT} in ${name}`;
    const missing = parts.filter((p) => !l.includes(p));
    return missing.length === 0 ? { ok: true, detail: l.trim().slice(0, 500) } : `line lacks ${JSON.stringify(missing)}: ${l.trim()}`;
  };
  const masked = (label, file) => () => {
    const f = need(file(), `${label} files-after.json`);
    return eq([f[MASK] && { size: f[MASK].base64.length, mode: f[MASK].mode.toString(8) }, f[LINK]], [{ size: 0, mode: '666' }, null], `[${MASK} (read through: /dev/null), ${LINK}]`);
  };
  return [
    { name: `planted: ${PORT} held by python3 in alice's ${UNIT} at first boot`, check: () => eq([holder().comm, holder().unit], ['python3', UNIT], '[comm, innermost cgroup unit]') },
    { name: `planted: ${MANAGER} active at first boot (alice lingers)`, check: () => eq(measured().snapshot.units[MANAGER].active, 'active') },
    { name: 'plan exits 2', needs: [5], check: () => eq(exitOf(b1(), 'plan1'), 2) },
    { name: `plan: stop, disable and mask ${UNIT} through alice's manager, naming dev-stack.target's Wants= line and the linger`, needs: [5], check: line(b1, 'plan1', [`user unit ${UNIT} of ${MANAGER}`, `stop, disable and mask ${UNIT} through systemctl --user -M alice@`, PATH, LINGER]) },
    { name: 'apply exits 0', needs: [5], check: () => eq(exitOf(b1(), 'apply1'), 0) },
    { name: 'plan after apply exits 0', needs: [5], check: () => eq(exitOf(b1(), 'plan2'), 0) },
    { name: 'ports.json names the port, the user unit, alice and the pre-stop pid', needs: [5], check: () => {
      const p = need(b1().preflight.ports, 'preflight/ports.json');
      return eq({ port: p.port, unit: p.unit, user: p.user, pid: p.pid }, { port: PORT, unit: UNIT, user: 'alice', pid: holder().pid });
    } },
    { name: `after apply: ${PORT} free`, needs: [5], check: () => eq(need(b1().snapshot, 'snapshot').cp_ports_listening, []) },
    { name: `after apply: ${MASK} is the mask link, her enable link gone`, needs: [5], check: masked('after apply', () => b1().filesAfter) },
    { name: `after reboot: ${MANAGER} active again (linger), ${PORT} still free`, needs: [5], check: () => eq([need(b2().snapshot, 'boot2 snapshot').units[MANAGER].active, b2().snapshot.cp_ports_listening], ['active', []]) },
    { name: `after reboot: still masked`, needs: [5], check: masked('after reboot', () => b2().filesAfter) },
    { name: 'after reboot: plan exits 0', needs: [5], check: () => eq(exitOf(b2(), 'plan3'), 0) },
  ];
}
