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

export const WATCH_UNIT = 'k8s-host-reconcile-boot-watch.service';
export const STOP_UNIT = 'k8s-host-reconcile-boot-watch-stop.service';
export const WATCH_UNIT_PATH = `${SYSTEMD_SYSTEM_ETC}/${WATCH_UNIT}`;
export const STOP_UNIT_PATH = `${SYSTEMD_SYSTEM_ETC}/${STOP_UNIT}`;
export const WATCH_WANTS = `${SYSTEMD_SYSTEM_ETC}/sysinit.target.wants/${WATCH_UNIT}`;
export const STOP_WANTS = `${SYSTEMD_SYSTEM_ETC}/multi-user.target.wants/${STOP_UNIT}`;
export const SCRIPT_PATH = '/usr/local/lib/k8s-host-reconcile/boot-watch.bt';
export const BPFTRACE = '/usr/bin/bpftrace';
/** The record of the boot being watched (tmpfs: it is this boot's only). */
export const RUN_DIR = '/run/k8s-host-reconcile';
export const WATCH_LOG = `${RUN_DIR}/boot-watch.log`;
/** The copy the stopper keeps once / is writable, for a person after later boots. */
export const KEPT_LOG = '/var/lib/k8s-host-reconcile/boot-watch.log';
export const WATCH_STAMP = '/var/lib/k8s-host-reconcile/boot-watch.done';
export const BTF = '/sys/kernel/btf/vmlinux';

/** How long ExecStartPost waits for the ready line (bpftrace under emulation took TODO s to attach). */
export const READY_WAIT_S = 240;
/** How long the watch goes on after multi-user.target was reached. */
export const GRACE_S = 30;

export function watchUnit(): string {
  const tries = READY_WAIT_S * 2;
  return [
    '# Installed by `reconcile apply --watch-next-boot` (k8s-host-reconcile): records, for one boot,',
    '# who writes the promised sysctls, turns swap on, removes a module or takes a control-plane port;',
    `# then removes itself. Record: ${WATCH_LOG} (a copy in ${KEPT_LOG}).`,
    '[Unit]',
    "Description=k8s-host-reconcile: watch this boot for writers of the plan's promises (once)",
    'Documentation=man:k8s-host-reconcile(1)',
    'DefaultDependencies=no',
    // tracefs for the syscall tracepoints; both mounts are early and static.
    'After=sys-kernel-tracing.mount sys-kernel-debug.mount',
    'Before=systemd-sysctl.service systemd-modules-load.service sysinit.target shutdown.target',
    'Conflicts=shutdown.target',
    `ConditionPathExists=!${WATCH_STAMP}`,
    '',
    '[Service]',
    'Type=simple',
    'RuntimeDirectory=k8s-host-reconcile',
    'RuntimeDirectoryPreserve=yes',
    `ExecStart=${BPFTRACE} -o ${WATCH_LOG} ${SCRIPT_PATH}`,
    // A bounded wait for BEGIN's line: no ready line, no claim that the boot was watched.
    `ExecStartPost=/bin/sh -c 'i=0; while [ $$i -lt ${tries} ]; do grep -q "^ready" ${WATCH_LOG} 2>/dev/null && exit 0; sleep 0.5; i=$$((i+1)); done; echo "bpftrace printed no ready line in ${READY_WAIT_S} s" >&2; exit 1'`,
    `ExecStopPost=/bin/sh -c 'mkdir -p /var/lib/k8s-host-reconcile && touch ${WATCH_STAMP}; rm -f ${WATCH_WANTS} ${STOP_WANTS}'`,
    `TimeoutStartSec=${READY_WAIT_S + 30}`,
    'StandardOutput=journal',
    'StandardError=journal',
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
