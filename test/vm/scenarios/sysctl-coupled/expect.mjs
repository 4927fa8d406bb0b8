// Coupled keys (issue 16): forwarding is turned off through
// net.ipv4.conf.all.forwarding, once in a file sorting after k8s.conf and once
// in a file that wins only at boot. The plan shows the rehearsed outcome (the
// VM's own systemd-sysctl and sysctl --system in a private namespace); after
// apply, `sysctl --system` and a reboot, ip_forward stays 1, and both lines are
// commented out under the tool's marker.
import { eq, need, exitOf, bootsOf } from '../../lib/checks.mjs';

const FILES = ['/etc/sysctl.d/zz-hardening.conf', '/etc/sysctl.d/50-no-route.conf'];
const MARKER = '# disabled by k8s-host-reconcile: conflicts with /etc/sysctl.d/k8s.conf';
const COMMENTED = {
  '/etc/sysctl.d/zz-hardening.conf': '# host hardening (previous admin)\nnet.ipv4.conf.all.send_redirects = 0\n' + `${MARKER}\n# net.ipv4.conf.all.forwarding = 0\n` + 'vm.swappiness = 10\n',
  '/etc/sysctl.d/50-no-route.conf': '# no routing on this host\n' + `${MARKER}\n# net.ipv4.conf.all.forwarding = 0\n`,
};

export const guest = {
  wait_ports: [],
  units: [],
  sysctl_keys: ['net.ipv4.conf.all.forwarding', 'vm.swappiness'],
  ansible: false,
  files: FILES,
};

// Only what the scenario is about: the modules (for the bridge keys) and the sysctls.
export function desired(doc) {
  doc.resources = doc.resources.filter((r) => r.type === 'ModulesLoad' || r.type === 'SysctlFile');
  return doc;
}

const text = (files, f) => {
  const e = need(files, 'saved files')[f];
  return e ? Buffer.from(e.base64, 'base64').toString('utf8') : null;
};

export function checks(r) {
  const { b1, b2 } = bootsOf(r);
  const out = (boot, name) => need(boot.stdout(name), `${name} output`);
  return [
    { name: 'planted: ip_forward 0 at first boot', check: () => eq(need(b1().measure, 'measure').before.ip_forward, 0) },
    { name: 'plan exits 2', needs: [4], check: () => eq(exitOf(b1(), 'plan1'), 2) },
    {
      name: 'plan names both coupled lines',
      needs: [4],
      check: () => {
        const p = out(b1(), 'plan1');
        const want = ['/etc/sysctl.d/zz-hardening.conf:3 sets net.ipv4.conf.all.forwarding', '/etc/sysctl.d/50-no-route.conf:2 sets net.ipv4.conf.all.forwarding'];
        const missing = want.filter((w) => !p.includes(w));
        return missing.length === 0 ? true : `plan lacks: ${missing.join('; ')}`;
      },
    },
    {
      name: 'plan shows the rehearsed outcome: ip_forward 1 at boot and after sysctl --system',
      needs: [4],
      check: () => {
        const p = out(b1(), 'plan1');
        if (!p.includes('rehearsal with the planned changes')) return `no rehearsal in the plan: ${p.split('\n').find((l) => l.includes('rehearsal')) ?? 'no rehearsal line'}`;
        return p.includes('net.ipv4.ip_forward: at boot 1, after sysctl --system 1') ? { ok: true, detail: p.split('\n').find((l) => l.includes('rehearsal with')).trim() } : 'rehearsed values differ';
      },
    },
    { name: 'apply exits 0', needs: [4], check: () => eq(exitOf(b1(), 'apply1'), 0) },
    { name: 'plan after apply exits 0', needs: [4], check: () => eq(exitOf(b1(), 'plan2'), 0) },
    { name: 'after apply and sysctl --system: ip_forward 1 (and conf.all.forwarding 1)', needs: [4], check: () => eq(['net.ipv4.ip_forward', 'net.ipv4.conf.all.forwarding'].map((k) => need(b1().sysctlsAfterSystem, 'sysctl --system')[k]), ['1', '1']) },
    ...['boot1', 'boot2'].map((label) => ({
      name: `${label === 'boot1' ? 'after apply' : 'after reboot'}: both coupled lines commented out with the marker, the rest kept`,
      needs: [4],
      check: () => eq(FILES.map((f) => text((label === 'boot1' ? b1() : b2()).filesAfter, f)), FILES.map((f) => COMMENTED[f])),
    })),
    { name: 'after reboot: ip_forward 1', needs: [4], check: () => eq(need(b2().snapshot, 'boot2 snapshot').sysctls['net.ipv4.ip_forward'], '1') },
    { name: 'after reboot and sysctl --system: ip_forward 1', needs: [4], check: () => eq(need(b2().sysctlsAfterSystem, 'boot2 sysctl --system')['net.ipv4.ip_forward'], '1') },
    { name: 'after reboot: unrelated vm.swappiness from the same file kept', needs: [4], check: () => eq([need(b2().snapshot, 'boot2 snapshot').sysctls['vm.swappiness'], b2().sysctlsAfterSystem?.['vm.swappiness']], ['10', '10']) },
    { name: 'plan after reboot exits 0', needs: [4], check: () => eq(exitOf(b2(), 'plan3'), 0) },
  ];
}
