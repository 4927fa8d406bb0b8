// Swap from boot-time scripts, left to an operator (issue 17, the default
// neutralise_scripts: false): /etc/rc.local:3 `swapon /swap-extra`,
// /etc/rc.local:4 `sysctl -w net.ipv4.ip_forward=0`, /etc/cron.d/swap-late:2
// `@reboot root /sbin/swapon /swap-cron`. The plan and apply name each
// file:line as an operator line, apply exits 1, the scripts stay
// byte-identical, and after the reboot the swap is back as the plan said.
import { eq, need, exitOf, bootsOf } from '../../lib/checks.mjs';

export const RC = '/etc/rc.local';
export const CRON = '/etc/cron.d/swap-late';
// plant.sh: the lines as written, by number.
export const RC_LINES = ['#!/bin/sh -e', '# Left by the previous admin: extra swap for the build jobs.', 'swapon /swap-extra', 'sysctl -w net.ipv4.ip_forward=0', 'exit 0'];
export const CRON_LINES = ['# Left by the previous admin.', '@reboot root /sbin/swapon /swap-cron'];
export const PLANTED = { [RC]: RC_LINES.join('\n') + '\n', [CRON]: CRON_LINES.join('\n') + '\n' };

export const guest = {
  wait_ports: [],
  units: ['rc-local.service', 'cron.service'],
  sysctl_keys: [],
  ansible: false,
  files: [RC, CRON],
};

export const strip = (s) => s.replace(/\x1b\[[0-9;]*m/g, '');
export const swapFiles = (snap) => snap.proc_swaps.map((l) => l.split(/\s+/)[0]).sort();
export const fileText = (files, f) => {
  const e = need(files, 'saved files')[f];
  return e ? Buffer.from(e.base64, 'base64').toString('latin1') : null;
};

/** The operator line (the "!" line and its reason) for file:line, or why there is none. */
function operatorLine(out, where, words) {
  const lines = strip(out).split('\n');
  const i = lines.findIndex((l) => l.includes(`${where} `) && l.includes('operator action required'));
  if (i < 0) return `no operator line naming ${where}`;
  const both = `${lines[i]} ${lines[i + 1] ?? ''}`;
  const missing = words.filter((w) => !both.includes(w));
  return missing.length === 0 ? { ok: true, detail: lines[i].trim().slice(0, 300) } : `the line for ${where} lacks ${JSON.stringify(missing)}: ${both.trim()}`;
}

export function checks(r) {
  const { b1, b2 } = bootsOf(r);
  const out = (boot, name) => need(boot.stdout(name), `${name} output`);
  const named = (boot, name) => [
    [`${RC}:3`, ['turns swap on', 'swapon /swap-extra', 'rc-local.service']],
    [`${RC}:4`, ['net.ipv4.ip_forward = 0', 'rc-local.service']],
    [`${CRON}:2`, ['turns swap on', '/sbin/swapon /swap-cron', '@reboot', 'as root']],
  ].map(([where, words]) => ({
    name: `${name}: an operator line names ${where}`,
    needs: ['17b'],
    check: () => operatorLine(out(boot(), name), where, words),
  }));
  return [
    { name: 'planted: /swap-extra (rc.local) and /swap-cron (cron @reboot) active at first boot', check: () => eq(swapFiles(need(b1().measure, 'measure').snapshot), ['/swap-cron', '/swap-extra']) },
    { name: 'planted: ip_forward 0 at first boot (rc.local ran after systemd-sysctl)', check: () => eq(need(b1().measure, 'measure').before.ip_forward, 0) },
    { name: 'plan exits 2', needs: ['17b'], check: () => eq(exitOf(b1(), 'plan1'), 2) },
    ...named(b1, 'plan1'),
    ...named(b1, 'apply1'),
    { name: 'apply exits 1 (a swap source remains for an operator)', needs: ['17b'], check: () => eq(exitOf(b1(), 'apply1'), 1) },
    { name: 'apply --json: verified false, the three script lines are operator changes', needs: ['17b'], check: () => {
      const doc = JSON.parse(out(b1(), 'apply2'));
      const ops = doc.resources.flatMap((x) => x.changes.filter((c) => c.action === 'operator' && /^boot-script:/.test(c.id)).map((c) => c.id)).sort();
      return eq({ verified: doc.verified, ops }, { verified: false, ops: [`boot-script:${CRON}:2`, `boot-script:${RC}:3`, `boot-script:${RC}:4`] });
    } },
    { name: 'after apply: no swap (swapoff ran)', needs: [2], check: () => eq(need(b1().snapshot, 'snapshot').swap_total_kb, 0) },
    { name: 'after apply: both scripts byte-identical', needs: ['17b'], check: () => eq([fileText(b1().filesAfter, RC), fileText(b1().filesAfter, CRON)], [PLANTED[RC], PLANTED[CRON]]) },
    { name: 'after reboot: the scripts turned swap on again, as the plan said', needs: ['17b'], check: () => eq(swapFiles(need(b2().snapshot, 'boot2 snapshot')), ['/swap-cron', '/swap-extra']) },
    { name: 'after reboot: rc.local set ip_forward 0 again, as the plan said', needs: ['17b'], check: () => eq(need(b2().snapshot, 'boot2 snapshot').sysctls['net.ipv4.ip_forward'], '0') },
    ...named(b2, 'plan3'),
  ];
}
