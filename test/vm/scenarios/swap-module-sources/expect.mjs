// The boot farm's qemu-tier catalogue entries that no other scenario boots
// (test/boot/catalogue/qemu.mjs names this scenario for each), on one VM,
// with the default desired state, judged by the farm's one rule
// (lib/promises.mjs over test/boot/lib/judge.mjs): every promise of
// `--plan --json` holds after `--apply --json`, and every promise of its
// `promises_after` holds after the reboot, unless a line took it back.
//
// Swap, six sources at once: fstab by UUID= (vdb1), LABEL= (vdb2) and
// PARTUUID= (vdb3) on a second disk, an admin's .swap unit enabled for
// swap.target (/swapfile2), Debian's systemd-zram-generator (/dev/zram0) and
// Debian's dphys-swapfile (/var/swap, its service runs swapon itself). They
// share one promise, swap:off, and a program can remove each of them (comment
// out fstab, disable the unit and the service, mask swap.target): none may
// take swap:off back, so one VM judges them all; /proc/swaps names the source
// of any swap left.
//
// br_netfilter, three blockers: `blacklist` and `install ... /bin/false` in
// /etc/modprobe.d, and rc.local's `modprobe -r br_netfilter`. The plan
// comments out the two modprobe.d lines (a program can) and leaves the
// rc.local line to a person (it is their script; neutralise_scripts is off by
// default), which takes module:br_netfilter back from the next boot on. So
// after apply the module promise is judged (the `install` line would make
// apply's modprobe run /bin/false), and at boot it is not: there the
// modprobe.d lines are judged per mechanism instead, by what systemd-modules-load
// logged at boot 2 and by `modprobe -n -v -b` (kmod with the blacklist
// applied, as systemd-modules-load loads). Splitting the rc.local line into a
// VM of its own would judge the same thing for minutes more of CI.
import fs from 'node:fs';
import path from 'node:path';
import { eq, need, bootsOf } from '../../lib/checks.mjs';
import { promiseChecks, promiseVerdict, withdrawals } from '../../lib/promises.mjs';

export const guest = {
  // Measured, for the suite's longest-first order (run.mjs qemuCost): 588-633 s alone at load 5-8, where lab (cost 9) took 458 s: an extra disk, two packages and eight mechanisms.
  cost: 12,
  wait_ports: [],
  units: ['rc-local.service', 'dphys-swapfile.service', 'swapfile2.swap', 'dev-zram0.swap', 'systemd-modules-load.service'],
  sysctl_keys: [],
  ansible: false,
  json: true,
  packages: ['dphys-swapfile', 'systemd-zram-generator'],
  // Dry runs (-n): what modprobe, and what systemd-modules-load (the blacklist applied: -b), would do; nothing is loaded.
  probes: [
    { name: 'modprobe', cmd: 'modprobe', args: ['-n', '-v', 'br_netfilter'] },
    { name: 'modprobe-blacklist', cmd: 'modprobe', args: ['-n', '-v', '-b', 'br_netfilter'] },
  ],
};

// Each swap source, by catalogue entry, and what /proc/swaps calls it.
const SWAP_SOURCES = [
  ['fstab-swap-uuid', '/dev/vdb1', 'UUID=5e1f0c2a-7b3d-4c59-9a61-0d2f4e8b1c07 in /etc/fstab'],
  ['fstab-swap-label-or-partuuid', '/dev/vdb2', 'LABEL=oldswap in /etc/fstab'],
  ['fstab-swap-label-or-partuuid', '/dev/vdb3', 'PARTUUID=c0ffee01-03 in /etc/fstab'],
  ['swap-unit-swap-target', '/swapfile2', 'swapfile2.swap, enabled for swap.target'],
  ['zram-generator', '/dev/zram0', 'systemd-zram-generator'],
  ['service-helper-swapon', '/var/swap', 'dphys-swapfile.service'],
];
const RC_LINE = 'boot-script:/etc/rc.local:3';

const swapFiles = (snap) => snap.proc_swaps.map((l) => l.split(/\s+/)[0]).sort();
const probe = (snap, name) => need(need(snap.probes, 'probes')[name], `probe ${name}`);
const journal = (boot) => fs.readFileSync(path.join(boot.dir, 'journal.txt'), 'utf8');

export function checks(r) {
  const { b1, b2, measured } = bootsOf(r);
  const first = () => measured().snapshot;
  const snap2 = () => need(b2().snapshot, 'boot2 snapshot');
  const v = () => promiseVerdict(r);
  return [
    // The recipe took: each mechanism acted before the tool ran.
    ...SWAP_SOURCES.map(([entry, file, how]) => ({
      name: `planted ${entry}: ${file} (${how}) is swap at first boot`,
      check: () => (swapFiles(first()).includes(file) ? true : `active: ${swapFiles(first()).join(', ') || 'none'}`),
    })),
    { name: 'planted modprobe-d-install-false: modprobe br_netfilter would run /bin/false instead', check: () => {
      const p = probe(first(), 'modprobe');
      const line = p.stdout.split('\n').map((l) => l.trim()).find((l) => l.startsWith('install '));
      return line === 'install /bin/false' ? { ok: true, detail: `modprobe -n -v: ${line}` } : `modprobe -n -v: exit ${p.exit}, ${JSON.stringify(p.stdout + p.stderr)}`;
    } },
    { name: 'planted modprobe-d-blacklist: with the blacklist applied (systemd-modules-load) nothing would load; br_netfilter not loaded', check: () => {
      const p = probe(first(), 'modprobe-blacklist');
      return eq([p.exit, p.stdout.trim(), first().modules.br_netfilter.sys_module], [0, '', false]);
    } },
    { name: 'planted rc-local-modprobe-r: rc-local.service ran /etc/rc.local at first boot', check: () => eq(first().units['rc-local.service'].active, 'active') },

    // The one rule.
    ...promiseChecks(r),

    // Kept: a program can remove every source here but rc.local's line, so only that line may take anything back.
    { name: 'kept: swap:off is taken back by nothing, in the plan or in promises_after (a program removes all six sources)', needs: [2], check: () =>
      eq([withdrawals(v().promises, 'swap:off'), withdrawals(v().final, 'swap:off')], [[], []]) },
    { name: 'kept: the only line taking a promise back is rc.local:3 (the modprobe.d lines are commented out, not left to a person)', needs: [2], check: () => {
      const by = [...new Set([...v().promises, ...v().final].flatMap((p) => p.withdrawn_by.map((w) => `${w.by}:${w.line}`)))];
      const mod = withdrawals(v().promises, 'module:br_netfilter');
      return by.every((w) => w === `operator:${RC_LINE}`) && mod?.includes(`operator:${RC_LINE}`) ? { ok: true, detail: by.join(', ') } : `withdrawn by: ${by.join(', ') || 'nothing'}`;
    } },
    // br_netfilter takes its net.bridge keys with it when rc.local removes it (found here: they were promised at boot).
    { name: 'the rc.local line takes back module:br_netfilter and both net.bridge keys from the next boot on, nothing from apply', needs: [2, 4], check: () => {
      const ids = ['module:br_netfilter', 'sysctl:net.bridge.bridge-nf-call-iptables', 'sysctl:net.bridge.bridge-nf-call-ip6tables'];
      const got = ids.map((id) => {
        const p = v().promises.find((x) => x.id === id);
        // ModulesLoad's line, and SysctlFile's own for the bridge keys (the same rc.local line, read by each resource).
        return [id, p?.after_apply, p?.at_boot, [...new Set(p?.withdrawn_by.map((w) => `${w.line} from ${w.from}`))]];
      });
      return eq(got, ids.map((id) => [id, true, false, [`${RC_LINE} from boot`]]));
    } },
    { name: 'the rc.local line is an operator line that says what to do', needs: ['17b'], check: () => {
      const c = need(v().plan, 'plan').resources.flatMap((x) => x.changes).find((c) => c.id === RC_LINE);
      return c?.action === 'operator' && /remove or comment out/.test(c.operator ?? '') ? { ok: true, detail: c.operator } : `got ${JSON.stringify(c)}`;
    } },
    { name: 'plan: both modprobe.d lines are commented out by the plan', needs: [2], check: () => {
      const ids = need(v().plan, 'plan').resources.find((x) => x.type === 'ModulesLoad').changes.map((c) => c.id);
      return eq(ids.filter((id) => id.startsWith('modprobe.d:')).sort(), ['modprobe.d:/etc/modprobe.d/bridge-hardening.conf', 'modprobe.d:/etc/modprobe.d/cis-disable-modules.conf']);
    } },

    // Per mechanism, where rc.local's withdrawal hides module:br_netfilter at boot.
    { name: 'after reboot: systemd-modules-load inserted br_netfilter (neither modprobe.d line stops it now)', needs: [2], check: () => {
      const lines = journal(b2()).split('\n').filter((l) => /systemd-modules-load/.test(l) && /br_netfilter/.test(l));
      return lines.some((l) => l.includes("Inserted module 'br_netfilter'")) ? true : `systemd-modules-load on br_netfilter: ${JSON.stringify(lines)}`;
    } },
    { name: 'after reboot: with the blacklist applied, modprobe would insert br_netfilter', needs: [2], check: () => {
      const p = probe(snap2(), 'modprobe-blacklist');
      return /insmod \S*br_netfilter\.ko/.test(p.stdout) ? true : `modprobe -n -v -b: exit ${p.exit}, ${JSON.stringify(p.stdout + p.stderr)}`;
    } },
    { name: 'after reboot: br_netfilter is gone again (rc.local:3 removed it), as the plan said', needs: [2], check: () => eq(snap2().modules.br_netfilter.sys_module, false) },
    { name: 'after reboot: no swap from any of the six sources', needs: [2], check: () => eq(swapFiles(snap2()), []) },
  ];
}
