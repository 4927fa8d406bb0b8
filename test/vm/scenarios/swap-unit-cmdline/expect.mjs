// Issue 26 on a booted host: a .swap unit under local-fs.target.wants (vendor,
// /lib) and one pulled in by Wants= of an enabled service (/etc, no
// [Install]); br_netfilter blocked by module_blacklist= on the kernel command
// line and in /etc/default/grub. Expected, from what systemd and the kernel do:
// - swap: masking swap.target stops neither unit, so the plan disables or
//   masks what reaches each one; the vendor unit is masked, the admin's unit
//   (its file in /etc) is an operator line naming the file; no swap after
//   apply, and after the reboot only /swap-dep, which the plan said an operator
//   must handle, is back; the next plan names it, never a bare swapoff.
// - the boot farm's rule (lib/promises.mjs), its catalogue entries
//   swap-unit-wanted-by-local-fs and kernel-cmdline-module-blacklist: every
//   promise of plan0json holds after apply, every one of apply2's
//   promises_after after the reboot; the grub and /proc/cmdline lines take
//   back br_netfilter and the bridge keys, which need it, and nothing else.
// - br_netfilter: the kernel refuses it while the command line has the entry,
//   so the plan promises no modprobe and names /etc/default/grub:6; overlay,
//   ip_forward = 1 and k8s.conf are applied all the same; the bridge keys are
//   not (their /proc/sys entries exist only with br_netfilter).
import { eq, need, exitOf, bootsOf } from '../../lib/checks.mjs';
import { promiseChecks, promiseVerdict } from '../../lib/promises.mjs';

const VENDOR = 'swap\\x2dvendor.swap';
const DEP = 'swap\\x2ddep.swap';
const GRUB_LINE = '/etc/default/grub:6';

export const guest = {
  // Measured, for the suite's longest-first order (run.mjs qemuCost): 834-889 s beside another VM, where lab (cost 9) took 458 s.
  cost: 17,
  wait_ports: [],
  units: [VENDOR, DEP, 'build-cache.service', 'swap.target'],
  sysctl_keys: [],
  ansible: false,
  verdicts: true,
  kernel_args: ['module_blacklist=br_netfilter'],
};

// The documents the farm's rule reads: the plan before anything ran, and the second apply's (the stage's only --apply --json).
const JUDGED = { plan: 'plan0json', apply: 'apply2' };
const swapFiles = (snap) => snap.proc_swaps.map((l) => l.split(/\s+/)[0]).sort();
const planDoc = (boot, name) => JSON.parse(need(boot.stdout(name), `${name} output`));
const changesOf = (doc, type) => need(doc.resources.find((x) => x.type === type), `${type} in the plan`).changes;
const ids = (doc, type) => changesOf(doc, type).map((c) => c.id);

export function checks(r) {
  const { b1, b2, measured, text } = bootsOf(r);
  const snap1 = () => need(b1().snapshot, 'boot1 snapshot');
  const snap2 = () => need(b2().snapshot, 'boot2 snapshot');
  return [
    { name: 'planted: both swap files active at first boot, swap.target not masked', check: () => eq([swapFiles(measured().snapshot), measured().snapshot.swap_target], [['/swap-dep', '/swap-vendor'], 'static']) },
    { name: 'planted: br_netfilter refused by the kernel (module_blacklist=), ip_forward 0', check: () => eq([measured().before.br_netfilter, measured().before.ip_forward], [false, 0]) },
    { name: 'plan: the vendor unit is masked, naming local-fs.target', needs: [2], check: () => {
      const c = changesOf(planDoc(b1(), 'plan0json'), 'SwapOff').find((x) => x.id === `mask-unit:${VENDOR}`);
      return c && c.action === 'mask' && c.summary.includes('local-fs.target') ? { ok: true, detail: c.summary.slice(0, 200) } : `no mask change naming local-fs.target: ${JSON.stringify(ids(planDoc(b1(), 'plan0json'), 'SwapOff'))}`;
    } },
    { name: 'plan: the admin unit pulled in by Wants= is an operator line naming its file and the Wants= line', needs: [2], check: () => {
      const c = changesOf(planDoc(b1(), 'plan0json'), 'SwapOff').find((x) => x.id === `mask-unit:${DEP}`);
      return c && c.action === 'operator' && c.operator.includes(`/etc/systemd/system/${DEP}`) && c.summary.includes('Wants= at /etc/systemd/system/build-cache.service:3') ? true : `got ${JSON.stringify(c)}`;
    } },
    { name: 'plan: br_netfilter blocked, naming /etc/default/grub:6, and no modprobe br_netfilter promised', needs: [2], check: () => {
      const cs = changesOf(planDoc(b1(), 'plan0json'), 'ModulesLoad');
      const boot = cs.find((c) => c.id === 'cmdline-boot:grub:kernel:br_netfilter');
      const now = cs.find((c) => c.id === 'cmdline-now:kernel:br_netfilter');
      const ok = boot?.action === 'operator' && boot.operator.includes(GRUB_LINE) && boot.operator.includes('update-grub') && now?.action === 'operator' && !cs.some((c) => c.id === 'modprobe:br_netfilter');
      return ok ? true : `got ${JSON.stringify(cs.map((c) => [c.id, c.action, c.operator]))}`;
    } },
    { name: 'apply exits 1 (operator lines stand)', needs: [2], check: () => eq(exitOf(b1(), 'apply1'), 1) },
    ...promiseChecks(r, JUDGED),
    { name: 'promises: the command line takes back br_netfilter and the bridge keys from apply, and keeps overlay and ip_forward', needs: [2, 4], check: () => {
      const by = (id) => [...new Set(promiseVerdict(r, JUDGED).promises.find((p) => p.id === id)?.withdrawn_by.map((w) => `${w.line}:${w.from}`) ?? [])].sort();
      const ids = ['module:overlay', 'module:br_netfilter', 'sysctl:net.ipv4.ip_forward', 'sysctl:net.bridge.bridge-nf-call-iptables', 'sysctl:net.bridge.bridge-nf-call-ip6tables'];
      const cmdline = ['cmdline-boot:grub:kernel:br_netfilter:boot', 'cmdline-now:kernel:br_netfilter:apply'];
      return eq(ids.map((id) => [id, by(id)]), [['module:overlay', []], ['module:br_netfilter', cmdline], ['sysctl:net.ipv4.ip_forward', []], ['sysctl:net.bridge.bridge-nf-call-iptables', cmdline], ['sysctl:net.bridge.bridge-nf-call-ip6tables', cmdline]]);
    } },
    // The bridge writes apply withheld are failures in promises_after; ip_forward, written, is not taken back with them.
    { name: "promises: apply's promises_after keeps overlay and ip_forward for the next boot", needs: [2, 4], check: () => {
      const after = promiseVerdict(r, JUDGED).final;
      const kept = (id) => after.find((p) => p.id === id)?.at_boot;
      return eq([kept('module:overlay'), kept('sysctl:net.ipv4.ip_forward')], [true, true]);
    } },
    { name: 'apply: the summary counts what happened and does not claim everything else converged', needs: [2], check: () => {
      const out = text(b1(), 'apply1');
      const line = out.split('\n').find((l) => l.startsWith('Apply incomplete:'));
      return line && !out.includes('everything else was converged') && / \d+ failed or not applied/.test(line) && / \d+ for an operator/.test(line) ? { ok: true, detail: line } : `summary: ${line}; converged claim: ${out.includes('everything else was converged')}`;
    } },
    { name: 'after apply: no swap', needs: [2], check: () => eq([snap1().swap_total_kb, snap1().proc_swaps], [0, []]) },
    { name: 'after apply: the vendor swap unit masked, swap.target masked', needs: [2], check: () => eq([snap1().units[VENDOR].enabled, snap1().swap_target], ['masked', 'masked']) },
    { name: 'after apply: overlay loaded, br_netfilter not (the kernel refuses it)', needs: [2], check: () => eq([snap1().modules.overlay.sys_module, snap1().modules.br_netfilter.sys_module], [true, false]) },
    { name: 'after apply: ip_forward 1 now and after sysctl --system (not held back by br_netfilter)', needs: [4], check: () => eq([snap1().sysctls['net.ipv4.ip_forward'], need(b1().sysctlsAfterSystem, 'sysctl --system')['net.ipv4.ip_forward']], ['1', '1']) },
    { name: 'after reboot: the vendor swap stays off; only /swap-dep (the operator line) is back', needs: [2], check: () => eq(swapFiles(snap2()), ['/swap-dep']) },
    { name: 'after reboot: ip_forward 1, overlay loaded, br_netfilter still refused', needs: [4], check: () => eq([snap2().sysctls['net.ipv4.ip_forward'], snap2().modules.overlay.sys_module, snap2().modules.br_netfilter.sys_module], ['1', true, false]) },
    { name: 'after reboot: the plan names the swap source and the grub line, and proposes no bare swapoff', needs: [2], check: () => {
      const doc = planDoc(b2(), 'plan3json');
      const swap = changesOf(doc, 'SwapOff');
      const mods = changesOf(doc, 'ModulesLoad');
      const dep = swap.find((c) => c.id === `mask-unit:${DEP}` && c.action === 'operator');
      const grub = mods.find((c) => c.id === 'cmdline-boot:grub:kernel:br_netfilter' && c.operator.includes(GRUB_LINE));
      const untraced = swap.filter((c) => c.id.startsWith('origin:'));
      return dep && grub && untraced.length === 0 ? true : `swap ${JSON.stringify(swap.map((c) => [c.id, c.action]))}, modules ${JSON.stringify(mods.map((c) => c.id))}`;
    } },
  ];
}
