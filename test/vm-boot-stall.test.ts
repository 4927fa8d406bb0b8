// The VM harness's boot watch (test/vm/lib/vm.mjs), driven by a stand-in
// qemu-system-x86_64 on PATH that prints what a guest's console would and
// writes to the disk image as a boot does: a kernel that never starts the
// stage is a BootStall, tried once more from the image as built; any other
// failure, or a second stall, is the scenario's.
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const VM_LIB = path.resolve('test/vm/lib/vm.mjs');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// Each boot N (1, 2, ... counted in the work dir) follows the script's line N:
// 'stall' prints the soft lockup a CI run printed and sleeps; 'panic' prints a
// panic; 'ok' announces two stage boots with a reboot between, then powers off.
// Every boot appends its number to the image, as a guest writes its disk.
const FAKE_QEMU = `#!/bin/bash
set -e
img=""
for a in "$@"; do case "$a" in file=*) img="\${a#file=}"; img="\${img%%,*}";; esac; done
n=$(( $(cat "$FAKE_DIR/boots" 2>/dev/null || echo 0) + 1 )); echo $n > "$FAKE_DIR/boots"
echo "boot $n" >> "$img"
grep -- 'cryptomgr.notests' <<<"$*" > /dev/null && echo cmdline-ok > "$FAKE_DIR/cmdline"
case "$(sed -n "\${n}p" "$FAKE_DIR/script")" in
  stall) echo '[   28.700998] watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [cryptomgr_test:51]'; exec sleep 30;;
  stall2) echo '[stage] boot 1: measuring'; echo '[   40.1] reboot: Restarting system'; exec sleep 30;;
  panic) echo '[    2.0] Kernel panic - not syncing: VFS: Unable to mount root fs'; exec sleep 30;;
  ok) echo '[stage] boot 1: measuring'; echo '[   40.1] reboot: Restarting system'; echo '[stage] boot 2: measuring'; echo '[   80.2] reboot: Power down';;
esac
`;

function harness(script: string[]) {
  const d = mkdtempSync(path.join(tmpdir(), 'vm-stall-'));
  dirs.push(d);
  const bin = path.join(d, 'bin');
  execFileSync('mkdir', ['-p', bin, path.join(d, 'disks')]);
  writeFileSync(path.join(bin, 'qemu-system-x86_64'), FAKE_QEMU);
  chmodSync(path.join(bin, 'qemu-system-x86_64'), 0o755);
  writeFileSync(path.join(d, 'script'), script.join('\n') + '\n');
  writeFileSync(path.join(d, 'disk.img'), 'as built\n');
  return d;
}

// Runs bootOnceMore in its own node, so the deadline is read from the environment as the suite reads it.
function bootIn(d: string): { ok: boolean; result?: { boots: number }; error?: string; kind?: string; stderr: string } {
  const program = `
    const { bootOnceMore, BootStall } = await import(${JSON.stringify(VM_LIB)});
    const d = ${JSON.stringify(d)};
    try {
      const r = await bootOnceMore({ name: 'fake', disk: { img: d + '/disk.img', kernel: d + '/vmlinuz', initrd: d + '/initrd' }, disks: d + '/disks', consoleLog: d + '/console.log', kernelArgs: [] });
      console.log(JSON.stringify({ ok: true, result: r }));
    } catch (e) {
      console.log(JSON.stringify({ ok: false, error: e.message, kind: e instanceof BootStall ? 'stall' : e.constructor.name }));
    }`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', program], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${path.join(d, 'bin')}:${process.env.PATH}`, FAKE_DIR: d, VMTEST_STAGE_DEADLINE_S: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { ...JSON.parse(out.trim().split('\n').pop()!), stderr: '' };
}

const lines = (f: string) => readFileSync(f, 'utf8').trim().split('\n');

describe('a VM boot whose kernel never starts the stage', () => {
  it('is booted once more from the image as built, and the second boot counts', () => {
    const d = harness(['stall', 'ok']);
    const r = bootIn(d);
    expect(r).toMatchObject({ ok: true, result: { boots: 2 } });
    // The second boot started from the built image: the stalled boot's write is gone.
    expect(lines(path.join(d, 'disk.img'))).toEqual(['as built', 'boot 2']);
    expect(readFileSync(path.join(d, 'console.log.stalled'), 'utf8')).toContain('soft lockup');
    expect(readFileSync(path.join(d, 'cmdline'), 'utf8')).toContain('cmdline-ok');
  });

  it('after a reboot too: a second boot that never reaches the stage is a stall naming boot 2', () => {
    const d = harness(['stall2', 'stall2']);
    const r = bootIn(d);
    expect(r.ok).toBe(false);
    expect(r.kind).toBe('stall');
    expect(r.error).toContain('did not start the stage of boot 2 within 1 s');
    expect(lines(path.join(d, 'boots'))).toEqual(['2']);
  });

  it('fails the scenario when it stalls twice', () => {
    const d = harness(['stall', 'stall', 'ok']);
    const r = bootIn(d);
    expect(r).toMatchObject({ ok: false, kind: 'stall' });
    expect(r.error).toContain('boot 1 within 1 s');
    expect(lines(path.join(d, 'boots'))).toEqual(['2']);
  });

  it("does not retry a guest that failed after or without a stall (a panic is the scenario's failure)", () => {
    const d = harness(['panic', 'ok']);
    const r = bootIn(d);
    expect(r).toMatchObject({ ok: false, kind: 'BootError' });
    expect(r.error).toContain('Kernel panic');
    expect(lines(path.join(d, 'boots'))).toEqual(['1']);
    // No copy of the built image is left behind.
    expect(execFileSync('ls', [d], { encoding: 'utf8' })).not.toContain('.built');
  });
});
