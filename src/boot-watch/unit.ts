// The boot watch's two units and where they go. Pure.
//
// The watcher starts before systemd-modules-load and systemd-sysctl
// (DefaultDependencies=no, in sysinit.target.wants) and is "started" only
// once bpftrace printed its ready line: ExecStartPost polls for it, bounded,
// so what is ordered after it runs only once the probes are attached. The
// stopper, after multi-user.target and a grace period, stops it and keeps a
// copy of the record beside the journal's. "Once" is a stamp plus the units
// removing their own .wants links (ExecStopPost, which runs whether bpftrace
// started or failed), as the first-boot unit does: the boot after runs neither.
import { SYSTEMD_SYSTEM_ETC } from '../systemd/unit-dirs.js';
import { CMDLINE_MAX } from './script.js';

export const WATCH_UNIT = 'k8s-host-reconcile-boot-watch.service';
export const STOP_UNIT = 'k8s-host-reconcile-boot-watch-stop.service';
export const WATCH_UNIT_PATH = `${SYSTEMD_SYSTEM_ETC}/${WATCH_UNIT}`;
export const STOP_UNIT_PATH = `${SYSTEMD_SYSTEM_ETC}/${STOP_UNIT}`;
export const WATCH_WANTS = `${SYSTEMD_SYSTEM_ETC}/sysinit.target.wants/${WATCH_UNIT}`;
export const STOP_WANTS = `${SYSTEMD_SYSTEM_ETC}/multi-user.target.wants/${STOP_UNIT}`;
export const SCRIPT_PATH = '/usr/local/lib/k8s-host-reconcile/boot-watch.bt';
export const BPFTRACE = '/usr/bin/bpftrace';
/**
 * The record of the boot being watched (tmpfs: it is this boot's only). In /run itself: systemd opens
 * StandardOutput=file: before the service's directories exist, and /run is there from the start.
 */
export const WATCH_LOG = '/run/k8s-host-reconcile-boot-watch.log';
/** The copy the stopper keeps once / is writable, for a person after later boots. */
export const KEPT_LOG = '/var/lib/k8s-host-reconcile/boot-watch.log';
export const WATCH_STAMP = '/var/lib/k8s-host-reconcile/boot-watch.done';
export const BTF = '/sys/kernel/btf/vmlinux';

/**
 * How long ExecStartPost waits for the ready line. Measured: bpftrace 0.17 attached its 9 probes 56 s after
 * it started in the qemu VM under software emulation on a loaded machine (78 s after boot); natively, seconds.
 */
export const READY_WAIT_S = 240;
/** How long the watch goes on after multi-user.target was reached. */
export const GRACE_S = 30;

export function watchUnit(): string {
  return [
    '# Installed by `reconcile apply --watch-next-boot` (k8s-host-reconcile): records, for one boot,',
    '# who writes the promised sysctls, turns swap on, removes a module or takes a control-plane port;',
    `# then removes itself. Record: ${WATCH_LOG} (a copy in ${KEPT_LOG}).`,
    '[Unit]',
    "Description=k8s-host-reconcile: watch this boot for writers of the plan's promises (once)",
    'Documentation=man:k8s-host-reconcile(1)',
    'DefaultDependencies=no',
    // tracefs for the syscall tracepoints; / writable for ExecStopPost's stamp even when bpftrace fails early.
    'After=sys-kernel-tracing.mount sys-kernel-debug.mount systemd-remount-fs.service',
    'Before=systemd-sysctl.service systemd-modules-load.service sysinit.target shutdown.target',
    'Conflicts=shutdown.target',
    `ConditionPathExists=!${WATCH_STAMP}`,
    '',
    '[Service]',
    'Type=simple',
    // -B line: bpftrace's output is block-buffered otherwise, and the ready line would reach the file only at exit (measured).
    // bpftrace caps every buf() at BPFTRACE_STRLEN (64 by default): the cmdline's buffer needs CMDLINE_MAX.
    `Environment=BPFTRACE_STRLEN=${CMDLINE_MAX}`,
    `ExecStart=${BPFTRACE} -B line ${SCRIPT_PATH}`,
    `StandardOutput=file:${WATCH_LOG}`,
    'StandardError=journal',
    // A bounded wait for BEGIN's line: no ready line, no claim that the boot was watched.
    // It ends as soon as bpftrace does: measured, a program bpftrace refused left the wait running its 240 s.
    `ExecStartPost=/usr/bin/timeout ${READY_WAIT_S} /bin/sh -c 'until grep -q "^ready" ${WATCH_LOG}; do kill -0 "$$MAINPID" || exit 1; sleep 0.5; done'`,
    `ExecStopPost=/bin/sh -c 'mkdir -p /var/lib/k8s-host-reconcile && touch ${WATCH_STAMP}; rm -f ${WATCH_WANTS} ${STOP_WANTS}'`,
    `TimeoutStartSec=${READY_WAIT_S + 30}`,
    '',
    '[Install]',
    'WantedBy=sysinit.target',
    '',
  ].join('\n');
}

export function stopUnit(): string {
  return [
    `# Installed with ${WATCH_UNIT}: ends the watch ${GRACE_S} s after multi-user.target and keeps its record.`,
    '[Unit]',
    'Description=k8s-host-reconcile: end the boot watch',
    'After=multi-user.target',
    `ConditionPathExists=!${WATCH_STAMP}`,
    '',
    '[Service]',
    'Type=oneshot',
    `ExecStart=/bin/sleep ${GRACE_S}`,
    `ExecStart=/bin/systemctl stop ${WATCH_UNIT}`,
    `ExecStart=/bin/sh -c 'mkdir -p /var/lib/k8s-host-reconcile && cp ${WATCH_LOG} ${KEPT_LOG}'`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}
