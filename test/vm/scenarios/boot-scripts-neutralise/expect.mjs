// The boot-scripts faults with neutralise_scripts: true on SwapOff and
// SysctlFile (issue 17): apply comments out /etc/rc.local lines 3 and 4 and
// /etc/cron.d/swap-late line 2, each under the marker line, every other byte
// as planted, mode kept; apply exits 0, and after the reboot there is no
// swap and ip_forward is 1.
import { eq, need, exitOf, bootsOf } from '../../lib/checks.mjs';
import { RC, CRON, RC_LINES, CRON_LINES, strip, swapFiles, fileText } from '../boot-scripts/expect.mjs';

// The same guest as boot-scripts: the same planted files, the same units to report.
export { guest } from '../boot-scripts/expect.mjs';

export function desired(doc) {
  for (const r of doc.resources) if (r.type === 'SwapOff' || r.type === 'SysctlFile') r.neutralise_scripts = true;
  return doc;
}

// The marker format is the documented one (docs/boot-scripts.md).
const SWAP_MARK = '# k8s-host-reconcile: swap disabled for Kubernetes (kubelet needs swap off); the next line was active';
const SYSCTL_MARK = '# k8s-host-reconcile: this line would undo sysctl values Kubernetes needs; the next line was active';
const RC_AFTER = [RC_LINES[0], RC_LINES[1], SWAP_MARK, '#' + RC_LINES[2], SYSCTL_MARK, '#' + RC_LINES[3], RC_LINES[4]].join('\n') + '\n';
const CRON_AFTER = [CRON_LINES[0], SWAP_MARK, '#' + CRON_LINES[1]].join('\n') + '\n';

export function checks(r) {
  const { b1, b2 } = bootsOf(r);
  const out = (boot, name) => strip(need(boot.stdout(name), `${name} output`));
  const entry = (boot, f) => need(need(boot().filesAfter, 'saved files')[f], f);
  return [
    { name: 'planted: /swap-extra (rc.local) and /swap-cron (cron @reboot) active at first boot', check: () => eq(swapFiles(need(b1().measure, 'measure').snapshot), ['/swap-cron', '/swap-extra']) },
    { name: 'plan exits 2 and plans to comment out rc.local lines 3 and 4 and the cron line', needs: ['17b'], check: () => {
      const t = out(b1(), 'plan1');
      const want = [`comment out ${RC} line 3`, `comment out ${RC} line 4`, `comment out ${CRON} line 2`];
      const missing = want.filter((w) => !t.includes(w));
      return missing.length ? `plan lacks ${JSON.stringify(missing)}` : eq(exitOf(b1(), 'plan1'), 2);
    } },
    { name: 'apply exits 0 (converged and verified)', needs: ['17b'], check: () => eq(exitOf(b1(), 'apply1'), 0) },
    { name: 'second apply: nothing left (verified, no script change)', needs: ['17b'], check: () => {
      const doc = JSON.parse(need(b1().stdout('apply2'), 'apply2 output'));
      const left = doc.resources.flatMap((x) => x.changes.filter((c) => /^boot-script:/.test(c.id)).map((c) => c.id));
      return eq({ verified: doc.verified, left }, { verified: true, left: [] });
    } },
    { name: 'after apply: /etc/rc.local has exactly lines 3 and 4 commented out under the marker, mode 0755', needs: ['17b'], check: () => eq([fileText(b1().filesAfter, RC), entry(b1, RC).mode], [RC_AFTER, 0o755]) },
    { name: 'after apply: /etc/cron.d/swap-late has line 2 commented out under the marker, mode 0644', needs: ['17b'], check: () => eq([fileText(b1().filesAfter, CRON), entry(b1, CRON).mode], [CRON_AFTER, 0o644]) },
    { name: 'after apply: no swap', needs: [2], check: () => eq(need(b1().snapshot, 'snapshot').swap_total_kb, 0) },
    { name: 'after reboot: no swap (SwapTotal 0, /proc/swaps empty)', needs: ['17b'], check: () => eq({ total: need(b2().snapshot, 'boot2 snapshot').swap_total_kb, swaps: swapFiles(b2().snapshot) }, { total: 0, swaps: [] }) },
    { name: 'after reboot: ip_forward 1 (rc.local no longer turns it off)', needs: ['17b'], check: () => eq(need(b2().snapshot, 'boot2 snapshot').sysctls['net.ipv4.ip_forward'], '1') },
    { name: 'after reboot: rc-local.service still ran (the script stays valid)', needs: ['17b'], check: () => eq(need(b2().snapshot, 'boot2 snapshot').units['rc-local.service'].active, 'active') },
    { name: 'after reboot: the plan names no script line', needs: ['17b'], check: () => {
      const t = out(b2(), 'plan3');
      const hit = t.split('\n').find((l) => l.includes(RC) || l.includes(CRON));
      return hit ? `plan3 still names: ${hit.trim()}` : true;
    } },
  ];
}
