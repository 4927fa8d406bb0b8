// The boot watch as the qemu tier's oracle for attribution (issue 48): a
// boot-time writer no catalogue knows (plant.sh: zz-nic-offload-tune.service,
// a Python one-liner writing 0 to /proc/sys/net/ipv4/ip_forward after
// systemd-sysctl) breaks the plan's promise at the reboot. Boot 1 applies with
// --watch-next-boot; boot 2's plan names the writer from the kernel's record
// (the tracer's log), and the record, read here with the bundle's own parser's
// rules written out by hand, says the same: that unit, its command, value 0.
import { eq, need, bootsOf, exitOf } from '../../lib/checks.mjs';
import { promiseVerdict } from '../../lib/promises.mjs';

export const WRITER_UNIT = 'zz-nic-offload-tune.service';
export const WRITER_ARGV = ['/usr/bin/python3', '-c', "open('/proc/sys/net/ipv4/ip_forward', 'w').write('0')"];
const LOG = '/run/k8s-host-reconcile-boot-watch.log';
const KEPT = '/var/lib/k8s-host-reconcile/boot-watch.log';
const STAMP = '/var/lib/k8s-host-reconcile/boot-watch.done';
const WATCH = 'k8s-host-reconcile-boot-watch.service';
const WANTS = [
  '/etc/systemd/system/sysinit.target.wants/k8s-host-reconcile-boot-watch.service',
  '/etc/systemd/system/multi-user.target.wants/k8s-host-reconcile-boot-watch-stop.service',
];

export const guest = {
  wait_ports: [],
  units: [WATCH, 'k8s-host-reconcile-boot-watch-stop.service', WRITER_UNIT],
  sysctl_keys: [],
  ansible: false,
  json: true,
  packages: ['bpftrace'],
  apply_args: ['--watch-next-boot'],
  files: [LOG, KEPT, STAMP, ...WANTS],
};

const fileText = (files, f) => {
  const e = need(files, 'saved files')[f];
  return e ? Buffer.from(e.base64, 'base64').toString('latin1') : null;
};

/**
 * The record's ip_forward writes, read from the tracer's format as
 * docs/boot-watch.md gives it: an event line (kind, ns, pid, ppid, netns, comm,
 * cmdline length, cmdline, key number, value; %r fields \xNN-escaped), then
 * "cgroup PID NAME".
 */
function ipForwardWrites(log) {
  const un = (s) => s.replace(/\\x([0-9a-f]{2})/gi, (_m, h) => String.fromCharCode(parseInt(h, 16)));
  const lines = log.split('\n').map((l) => l.split('\t'));
  return lines.flatMap((f, i) => {
    if (f[0] !== 'sysctl' || f[8] !== '1') return [];
    const next = lines[i + 1] ?? [];
    const cgroup = next[0] === 'cgroup' && next[1] === f[2] ? next.slice(2).join('\t') : null;
    const argv = un(f[7]).split('\0');
    if (argv.at(-1) === '') argv.pop();
    return [{ argv, value: un(f[9]).trim(), cgroup }];
  });
}

export function checks(r) {
  const { b1, b2 } = bootsOf(r);
  const plan3 = () => JSON.parse(need(b2().stdout('plan3json'), 'plan3json output'));
  const watchFindings = () => plan3().findings.filter((f) => f.check === 'BootWatch');
  const record = () => need(fileText(b2().filesAfter, LOG), `${LOG} after the reboot`);
  return [
    { name: 'apply --watch-next-boot exits 0 (bpftrace and BTF are there)', needs: [48], check: () => eq(exitOf(b1(), 'apply1json'), 0) },
    {
      name: 'apply: the plan promised ip_forward 1 at the next boot (the writer is unknown to the catalogue)',
      needs: [48],
      check: () => {
        const p = JSON.parse(need(b1().stdout('apply1json'), 'apply1json')).promises_after.find((x) => x.id === 'sysctl:net.ipv4.ip_forward');
        return eq([p?.at_boot, p?.withdrawn_by.length], [true, 0]);
      },
    },
    { name: 'after apply: no record yet (the watch starts at the next boot)', needs: [48], check: () => eq(fileText(b1().filesAfter, LOG), null) },
    {
      name: 'after the reboot: ip_forward is 0 (the promise broke)',
      needs: [48],
      check: () => eq(need(b2().snapshot, 'boot2 snapshot').sysctls['net.ipv4.ip_forward'], '0'),
    },
    {
      name: "the kernel's record: the last host write of ip_forward is 0 by the planted unit's Python",
      needs: [48],
      check: () => {
        const w = ipForwardWrites(record()).at(-1);
        return eq(w && [w.value, w.cgroup, w.argv], ['0', WRITER_UNIT, WRITER_ARGV]);
      },
    },
    {
      name: "boot 2's plan names the writer from the record: unit, command and value",
      needs: [48],
      check: () => {
        const f = watchFindings().find((x) => x.message.includes('net.ipv4.ip_forward set to 0'));
        if (!f) return `no BootWatch finding naming ip_forward set to 0: ${JSON.stringify(watchFindings())}`;
        const words = [`by ${WRITER_UNIT}:`, WRITER_ARGV.join(' ')];
        const missing = words.filter((w) => !f.message.includes(w));
        return missing.length === 0 ? { ok: true, detail: f.message } : `the finding lacks ${JSON.stringify(missing)}: ${f.message}`;
      },
    },
    { name: "boot 2's plan exits 2 (a broken promise is an unknown the plan stands on)", needs: [48], check: () => eq(exitOf(b2(), 'plan3json'), 2) },
    {
      name: "the farm's judge over the same run: ip_forward is the promise broken at boot",
      needs: [48],
      check: () =>
        eq(
          promiseVerdict(r)
            .broken.filter((x) => x.phase === 'at boot')
            .map((x) => x.promise),
          ['sysctl:net.ipv4.ip_forward'],
        ),
    },
    {
      name: 'the watch removed itself: its stamp is there and both .wants links are gone',
      needs: [48],
      check: () => eq([fileText(b2().filesAfter, STAMP) !== null, ...WANTS.map((w) => fileText(b2().filesAfter, w))], [true, null, null]),
    },
    { name: 'the stopper kept a copy of the record', needs: [48], check: () => eq(fileText(b2().filesAfter, KEPT) === record(), true) },
  ];
}
