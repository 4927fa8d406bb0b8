// The two units `apply --watch-next-boot` installs, read by systemd itself:
// systemctl --root enable puts their [Install] links where the watch's
// ExecStopPost later removes them, and systemd's loader (systemd --test, the
// oracle in test/helpers/systemd-oracle.ts) loads both, orders the watch
// before the sysctl and module loaders and starts both in the boot
// transaction; the shell lines are read by /bin/sh after systemd's "$$" unescape.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { lstatSync, rmSync } from 'node:fs';
import path from 'node:path';
import { CMDLINE_MAX } from '../../src/boot-watch/script.js';
import {
  GRACE_S,
  READY_WAIT_S,
  STOP_UNIT,
  STOP_UNIT_PATH,
  STOP_WANTS,
  WATCH_LOG,
  WATCH_STAMP,
  WATCH_UNIT,
  WATCH_UNIT_PATH,
  WATCH_WANTS,
  stopUnit,
  watchUnit,
} from '../../src/boot-watch/unit.js';
import { ETC, LIB, oracle, systemctlRoot, unitTree } from '../helpers/systemd-oracle.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
const rel = (p: string) => p.slice(1);
const UNITS = {
  [rel(WATCH_UNIT_PATH)]: watchUnit(),
  [rel(STOP_UNIT_PATH)]: stopUnit(),
  // The units the watch orders itself against, so systemd loads them as units of the tree.
  [`${LIB}/systemd-sysctl.service`]: '[Unit]\nDefaultDependencies=no\n[Service]\nType=oneshot\nExecStart=/bin/true\n',
  [`${LIB}/systemd-modules-load.service`]: '[Unit]\nDefaultDependencies=no\n[Service]\nType=oneshot\nExecStart=/bin/true\n',
};

describe('the watch and stop units, as systemd reads them', () => {
  it('systemctl --root enable creates exactly the two wants links the watch removes when it stops', async () => {
    const root = unitTree(roots, 'boot-watch-enable-', UNITS);
    const r = await systemctlRoot(root, 'enable', WATCH_UNIT, STOP_UNIT);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const link of [WATCH_WANTS, STOP_WANTS]) expect(lstatSync(path.join(root, link)).isSymbolicLink(), link).toBe(true);
    expect(r.stderr.match(/Created symlink/g)).toHaveLength(2);
    expect(watchUnit()).toContain(`rm -f ${WATCH_WANTS} ${STOP_WANTS}'`);
  });

  it('systemd loads both, starts both at boot, and orders the watch before systemd-sysctl and systemd-modules-load', async () => {
    const root = unitTree(roots, 'boot-watch-oracle-', {
      ...UNITS,
      // Relative links, as systemctl enable would place them (the oracle resolves absolute links on this machine).
      [`${ETC}/sysinit.target.wants/${WATCH_UNIT}`]: { link: `../${WATCH_UNIT}` },
      [`${ETC}/multi-user.target.wants/${STOP_UNIT}`]: { link: `../${STOP_UNIT}` },
    });
    const o = await oracle(root);
    const watch = o.units.get(WATCH_UNIT)!;
    const stop = o.units.get(STOP_UNIT)!;
    expect([watch.load, stop.load]).toEqual(['loaded', 'loaded']);
    expect(o.jobs.has(WATCH_UNIT)).toBe(true);
    expect(o.jobs.has(STOP_UNIT)).toBe(true);
    expect(watch.deps.get('Before')).toEqual(expect.arrayContaining(['systemd-sysctl.service', 'systemd-modules-load.service', 'sysinit.target']));
    expect(stop.deps.get('After')).toEqual(expect.arrayContaining(['multi-user.target']));
    // Once done, the stamp keeps both from running again.
    expect(watch.lines).toContain(`ConditionPathExists: !${WATCH_STAMP} untested`);
    // bpftrace's string length is the script's command-line cap.
    expect(watch.lines).toContain(`Environment: BPFTRACE_STRLEN=${CMDLINE_MAX}`);
    expect(stop.lines).toContain(`ConditionPathExists: !${WATCH_STAMP} untested`);
  });

  it("the shell lines are valid sh once systemd turns $$ into $, and the waits are the module's figures", () => {
    const shells = [...watchUnit().matchAll(/\/bin\/sh -c '([^']*)'/g), ...stopUnit().matchAll(/\/bin\/sh -c '([^']*)'/g)].map((m) =>
      m[1]!.replace(/\$\$/g, '$'),
    );
    expect(shells).toHaveLength(3);
    for (const s of shells) {
      const r = spawnSync('/bin/sh', ['-n', '-c', s], { encoding: 'utf8' });
      expect(r.status, `${s}: ${r.stderr}`).toBe(0);
    }
    expect(shells[0]).toBe(`until grep -q "^ready" ${WATCH_LOG}; do kill -0 "$MAINPID" || exit 1; sleep 0.5; done`);
    expect(watchUnit()).toContain(`ExecStartPost=/usr/bin/timeout ${READY_WAIT_S} `);
    expect(watchUnit()).toContain(`TimeoutStartSec=${READY_WAIT_S + 30}\n`);
    expect(stopUnit()).toContain(`ExecStart=/bin/sleep ${GRACE_S}\n`);
  });
});
