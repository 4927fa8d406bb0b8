// The first-boot unit and where the bake puts things in the image. Pure.
//
// "Once" is a stamp file plus the unit removing its own .wants link, not
// ConditionFirstBoot=: that condition is true only while /etc/machine-id is
// missing, empty or "uninitialized", and golden images often ship a fixed
// one (the VM suite does), so the unit would silently never run. The stamp
// is written only when the first-boot run succeeded, so a failed first boot
// stays visible (the unit failed, still enabled) and runs again at the next
// boot, after an operator fixed the cause.
import { SYSTEMD_SYSTEM_ETC } from '../../systemd/unit-dirs.js';
import { PACKAGED_DESIRED_STATE } from '../../version.js';

export const FIRST_BOOT_UNIT = 'k8s-host-reconcile-first-boot.service';
export const UNIT_PATH = `${SYSTEMD_SYSTEM_ETC}/${FIRST_BOOT_UNIT}`;
export const WANTS_LINK = `${SYSTEMD_SYSTEM_ETC}/multi-user.target.wants/${FIRST_BOOT_UNIT}`;
/** The desired state the first boot reads (a byte-exact copy of the bake's): the package's conffile, so a packaged image's first boot and its later runs read one file. */
export const IMAGE_DESIRED = PACKAGED_DESIRED_STATE;
/** Where the bake copies the running bundle when the image has no /usr/bin/k8s-host-reconcile. */
export const IMAGE_BUNDLE = '/usr/local/lib/k8s-host-reconcile/reconcile.mjs';
/** The Debian package's program (not /usr/bin/reconcile: too generic a name for /usr/bin). */
export const PACKAGED_PROGRAM = '/usr/bin/k8s-host-reconcile';
export const STAMP = '/var/lib/k8s-host-reconcile/first-boot.done';
/** The first-boot run's own report, in reports_dir. */
export const FIRST_BOOT_REPORT = 'first-boot.json';

/** Units that must not start before the host is converged (Before= on an absent unit is harmless). */
export const RUNTIMES = ['containerd.service', 'docker.service', 'crio.service', 'cri-docker.service', 'kubelet.service'];

export interface UnitOptions {
  /** The program and its arguments before --first-boot. */
  exec: string[];
  /** Candidate units the bake found: started first, so the run can wait for them to bind. */
  after: string[];
  /** Longest the whole run may take before systemd stops it. */
  timeoutSec: number;
}

/** systemd's quoting for ExecStart= words (no specifiers, no variables). */
function execWord(w: string): string {
  const escaped = w.replace(/\\/g, '\\\\').replace(/%/g, '%%').replace(/\$/g, '$$$$');
  return /[\s"']/.test(escaped) ? `"${escaped.replace(/"/g, '\\"')}"` : escaped;
}

export function firstBootUnit(o: UnitOptions): string {
  const after = ['local-fs.target', 'systemd-modules-load.service', 'systemd-sysctl.service', 'network.target', ...o.after];
  return [
    '# Installed by `reconcile --apply --root` (k8s-host-reconcile): converges this host',
    '# once, live, at its first boot, then disables itself. Result: journalctl -u',
    `# ${FIRST_BOOT_UNIT} and first-boot.json in the reports directory.`,
    '[Unit]',
    'Description=k8s-host-reconcile: converge the host at its first boot',
    'Documentation=man:k8s-host-reconcile(1)',
    `After=${after.join(' ')}`,
    `Before=${RUNTIMES.join(' ')}`,
    `ConditionPathExists=!${STAMP}`,
    '',
    '[Service]',
    'Type=oneshot',
    'RemainAfterExit=yes',
    `ExecStart=${[...o.exec, '--first-boot', '-f', IMAGE_DESIRED].map(execWord).join(' ')}`,
    `TimeoutStartSec=${o.timeoutSec}`,
    'StandardOutput=journal',
    'StandardError=journal',
    'SyslogIdentifier=k8s-host-reconcile',
    'Environment=NO_COLOR=1',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}
