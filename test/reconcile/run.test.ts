// The bundle's run-level safety: --root checks, the lock, errors at the edge,
// and SIGKILL at every journal step of an apply on a lab-like image.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildLabImage, toolOwned } from '../helpers/lab-image.js';
import { snapshot, type Snapshot } from '../helpers/snapshot.js';
import { parseJournal } from '../../src/door/journal.js';

const BUNDLE = path.resolve('dist/reconcile.mjs');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) {
    spawnSync('umount', ['-l', d]); // tmpfs roots of the ENOSPC case, if still mounted
    rmSync(d, { recursive: true, force: true });
  }
});
const temp = (p = 'safety-') => {
  const d = mkdtempSync(path.join(tmpdir(), p));
  dirs.push(d);
  return d;
};

function reconcile(args: string[], env: Record<string, string> = {}) {
  // A hang is killed after 60 s and shows as a null exit code.
  const r = spawnSync(process.execPath, [BUNDLE, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', ...env }, timeout: 60_000 });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

function lab() {
  const root = temp('safety-lab-');
  const desired = buildLabImage(root);
  return { root, desired };
}

describe('--root must name an existing directory other than /', () => {
  const desired = path.resolve('desired-state.yaml');
  it.each([
    ['empty', () => '', /--root is empty/],
    ['missing', () => path.join(temp(), 'no-such-image'), /does not exist; it is never created/],
    [
      'a file',
      () => {
        const f = path.join(temp(), 'img');
        writeFileSync(f, '');
        return f;
      },
      /is not a directory/,
    ],
    [
      'a link to /',
      () => {
        const l = path.join(temp(), 'slash');
        symlinkSync('/', l);
        return l;
      },
      /resolves to \/, the build machine itself/,
    ],
    ['/ itself', () => '/', /resolves to \//],
  ])('%s: exit 1, one line, nothing created', (_what, make, message) => {
    const root = make();
    const before = root && existsSync(root);
    for (const mode of ['--plan', '--apply']) {
      const r = reconcile([mode, '-f', desired, '--root', root]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
    if (root) expect(existsSync(root)).toBe(before);
  });

  it('with --json the refusal is a JSON document', () => {
    const r = reconcile(['--apply', '--json', '-f', desired, '--root', '']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ format_version: '1.0', applied: [], failed: [] });
    expect(JSON.parse(r.stdout).error).toMatch(/--root is empty/);
  });
});

describe('one apply at a time', () => {
  it('a lock held by a live process stops the second run before it changes anything', () => {
    const { root, desired } = lab();
    const holder = spawn('sleep', ['30']);
    try {
      writeFileSync(
        path.join(root, 'run/k8s-host-reconcile.lock'),
        JSON.stringify({ pid: holder.pid, pid_start: null, started: '2026-12-01T00:00:00.000Z', mode: 'apply' }),
      );
      const before = snapshot(root);
      const r = reconcile(['--apply', '-f', desired, '--root', root]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`another run (pid ${holder.pid}, started 2026-12-01T00:00:00.000Z) holds /run/k8s-host-reconcile.lock`);
      expect(snapshot(root)).toEqual(before);
    } finally {
      holder.kill();
    }
  });

  it('a stale lock from a dead pid is taken over, with a line saying so', () => {
    const { root, desired } = lab();
    const dead = spawnSync('true').pid!;
    writeFileSync(
      path.join(root, 'run/k8s-host-reconcile.lock'),
      JSON.stringify({ pid: dead, pid_start: null, started: '2026-11-30T00:00:00.000Z', mode: 'apply' }),
    );
    const r = reconcile(['--apply', '-f', desired, '--root', root]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`took over a stale lock /run/k8s-host-reconcile.lock from pid ${dead}`);
    expect(existsSync(path.join(root, 'run/k8s-host-reconcile.lock'))).toBe(false);
  });

  it('two applies at once: one wins, the other gets the lock message', async () => {
    const { root, desired } = lab();
    // The first run stops itself after its third journal record, holding the lock mid-apply.
    const first = spawn(process.execPath, [BUNDLE, '--apply', '-f', desired, '--root', root], {
      env: { ...process.env, RECONCILE_TEST_SIGNAL_AFTER_RECORD: 'SIGSTOP:3' },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((res) => first.on('exit', (code) => res(code)));
    const journalOf = () => readdirSync(path.join(root, 'root/ks/preflight/runs')).map((d) => path.join(root, 'root/ks/preflight/runs', d, 'journal'));
    for (let i = 0; i < 600; i++) {
      const j = existsSync(path.join(root, 'root/ks/preflight/runs')) ? journalOf() : [];
      if (j.length === 1 && existsSync(j[0]!) && parseJournal(readFileSync(j[0]!, 'utf8')).records.length >= 3) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const second = reconcile(['--apply', '-f', desired, '--root', root]);
    first.kill('SIGCONT');
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`another run (pid ${first.pid}`);
    expect(await exited).toBe(0);
  });
});

describe('errors at the edge are one line naming the path and the cause', () => {
  const inMountNs = (script: string, args: string[]) =>
    spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script, 'sh', ...args], { encoding: 'utf8' });

  it('a read-only root: EROFS, no stack trace, nothing changed', () => {
    const { root, desired } = lab();
    const before = snapshot(root);
    const r = inMountNs('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec "$2" "$3" --apply -f "$4" --root "$1"', [
      root,
      process.execPath,
      BUNDLE,
      desired,
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^reconcile: cannot take the run lock \/run\/k8s-host-reconcile.lock: read-only file system \(EROFS\)\n$/);
    expect(r.stderr).not.toMatch(/at .*\.mjs:\d+/);
    expect(snapshot(root)).toEqual(before);
  });

  it('a full disk: ENOSPC in one line, and --json says so as a document', () => {
    const mnt = temp('safety-full-');
    const r = inMountNs(
      'mount -t tmpfs -o size=64k tmpfs "$1" && cp -a "$2"/. "$1"/ && (head -c 1M /dev/zero > "$1/fill" 2>/dev/null; true) && exec "$3" "$4" --apply --json -f "$1/root/desired-state.yaml" --root "$1"',
      [mnt, lab().root, process.execPath, BUNDLE],
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no space left on device \(ENOSPC\)/);
    expect(
      r.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('reconcile: ')),
    ).toEqual([]);
    expect(JSON.parse(r.stdout)).toMatchObject({ format_version: '1.0', applied: [], failed: [] });
  });

  it('a link loop on the way to a file is one line naming it', () => {
    const { root, desired } = lab();
    rmSync(path.join(root, 'etc/fstab'));
    symlinkSync('fstab.loop', path.join(root, 'etc/fstab'));
    symlinkSync('fstab', path.join(root, 'etc/fstab.loop'));
    const before = snapshot(root);
    const r = reconcile(['--apply', '-f', desired, '--root', root]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('reconcile: too many levels of symbolic links resolving /etc/fstab\n');
    expect(snapshot(root)).toEqual(before);
  });

  it('after a partial failure the applied and the failed changes are both printed', () => {
    const { root, desired } = lab();
    // A directory where SwapOff's mask link must go: only the apply finds out.
    mkdirSync(path.join(root, 'etc/systemd/system/swap.target'));
    const r = reconcile(['--apply', '--json', '-f', desired, '--root', root]);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.applied.map((a: { resource: string }) => a.resource)).toEqual(['FirstBoot', 'ModulesLoad', 'SysctlFile', 'PortFree']);
    // The failure names the changes it left undone, the mask among them.
    expect(doc.failures[0]).toEqual({
      resource: 'SwapOff',
      message: 'cannot link /etc/systemd/system/swap.target: it is a directory',
      changes: expect.arrayContaining(['mask:swap.target']),
    });
    const human = reconcile(['--apply', '-f', desired, '--root', root]);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('error: SwapOff: cannot link /etc/systemd/system/swap.target: it is a directory');
  });
});

describe('writes stay inside the root', () => {
  it('reports_dir and a directory on its way linking outside: everything lands inside, the outside is read-only and untouched', () => {
    const { root, desired } = lab();
    const outside = temp('safety-outside-');
    mkdirSync(path.join(outside, 'ks'));
    symlinkSync(outside, path.join(root, 'root/ks')); // /root/ks -> <outside>: inside the image, <root><outside>
    const r = spawnSync(
      'unshare',
      [
        '-m',
        '--propagation',
        'private',
        'sh',
        '-c',
        'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && exec "$2" "$3" --apply -f "$4" --root "$5"',
        'sh',
        outside,
        process.execPath,
        BUNDLE,
        desired,
        root,
      ],
      { encoding: 'utf8' },
    );
    expect({ code: r.status, err: r.stderr.split('\n').filter((l) => /EROFS|error/.test(l)) }).toEqual({ code: 0, err: [] });
    expect(readdirSync(outside)).toEqual(['ks']);
    expect(readdirSync(path.join(outside, 'ks'))).toEqual([]);
    expect(readdirSync(path.join(root, outside, 'preflight/runs'))).toHaveLength(1);
  });
});

describe('SIGKILL at every journal step of an apply', () => {
  it('never tears a file; the journal stays readable; rollback restores the original exactly; a rerun converges', () => {
    const master = lab();
    const original = snapshot(master.root, toolOwned);
    // A full, unkilled run tells how many records there are and what each file ends as.
    const full = temp('safety-full-run-');
    spawnSync('cp', ['-a', `${master.root}/.`, full]);
    expect(reconcile(['--apply', '-f', path.join(full, 'root/desired-state.yaml'), '--root', full]).code).toBe(0);
    const converged = snapshot(full, toolOwned);
    const [runDir] = readdirSync(path.join(full, 'root/ks/preflight/runs'));
    const steps = parseJournal(readFileSync(path.join(full, 'root/ks/preflight/runs', runDir!, 'journal'), 'utf8')).records.length;
    expect(steps).toBeGreaterThan(10);

    const problems: string[] = [];
    for (let n = 1; n < steps; n++) {
      const root = temp(`safety-kill-${n}-`);
      spawnSync('cp', ['-a', `${master.root}/.`, root]);
      const desired = path.join(root, 'root/desired-state.yaml');
      const killed = reconcile(['--apply', '-f', desired, '--root', root], { RECONCILE_TEST_SIGNAL_AFTER_RECORD: `SIGKILL:${n}` });
      if (killed.signal !== 'SIGKILL') problems.push(`step ${n}: not killed (${killed.code})`);
      // Every entry is either as it was or as the full run leaves it.
      const now = snapshot(root, toolOwned);
      for (const p of new Set([...Object.keys(now), ...Object.keys(original)])) {
        if (now[p] !== original[p] && now[p] !== converged[p] && !p.includes('.reconcile-')) problems.push(`step ${n}: ${p} is torn: ${now[p]}`);
      }
      const journals = readdirSync(path.join(root, 'root/ks/preflight/runs'));
      for (const j of journals) {
        try {
          parseJournal(readFileSync(path.join(root, 'root/ks/preflight/runs', j, 'journal'), 'utf8'));
        } catch (e) {
          problems.push(`step ${n}: journal unreadable: ${(e as Error).message}`);
        }
      }
      // The killed run's journal has no end record: rollback says so and changes nothing unless forced.
      // (The killed run's stale lock is taken over and released: the one entry that may go.)
      const lockFree = (rel: string) => rel === 'run/k8s-host-reconcile.lock';
      const unforced = snapshot(root, lockFree);
      const refused = reconcile(['--rollback', journals[0]!, '-f', desired, '--root', root]);
      if (refused.code !== 1 || !refused.stdout.includes('incomplete'))
        problems.push(`step ${n}: rollback of an incomplete journal without --force: exit ${refused.code}: ${refused.stdout}${refused.stderr}`);
      if (JSON.stringify(snapshot(root, lockFree)) !== JSON.stringify(unforced)) problems.push(`step ${n}: a refused rollback changed the tree`);
      const rb = reconcile(['--rollback', journals[0]!, '--force', '-f', desired, '--root', root]);
      if (rb.code !== 0) problems.push(`step ${n}: rollback exit ${rb.code}: ${rb.stdout}${rb.stderr}`);
      if (!rb.stderr.includes(`run ${journals[0]} was interrupted after record ${n}`))
        problems.push(`step ${n}: the next run did not say the run was interrupted: ${rb.stderr}`);
      const restored: Snapshot = snapshot(root, toolOwned);
      if (JSON.stringify(restored) !== JSON.stringify(original))
        problems.push(
          `step ${n}: rollback left ${JSON.stringify(Object.entries(restored).filter(([k, v]) => original[k] !== v))} / missing ${JSON.stringify(Object.keys(original).filter((k) => !(k in restored)))}`,
        );
      const again = reconcile(['--apply', '-f', desired, '--root', root]);
      if (again.code !== 0) problems.push(`step ${n}: rerun exit ${again.code}: ${again.stderr.slice(-400)}`);
      if (JSON.stringify(snapshot(root, toolOwned)) !== JSON.stringify(converged)) problems.push(`step ${n}: rerun did not converge to the full run's tree`);
      const plan = reconcile(['--plan', '-f', desired, '--root', root]);
      if (plan.code !== 0) problems.push(`step ${n}: plan after rerun exit ${plan.code}`);
      rmSync(root, { recursive: true, force: true });
    }
    expect(problems).toEqual([]);
  }, 600_000);
});

// The lock path and the runs directory are the image's, so untrusted. Each run below is under a
// read-only view of the whole build machine except the root (a private mount namespace: every mount but the
// root's own bind, /proc and /sys is remounted read-only), and has a deadline: `timeout -s KILL` ends a run that
// blocks on a fifo (open(2) waits for a writer) or reads a character device without end (/dev/zero).
describe('hostile lock paths and runs directories: never followed out of the root, never a hang', () => {
  const DEADLINE_S = 20;
  const underReadOnlyHost = (root: string, args: string[]) => {
    const r = spawnSync(
      'unshare',
      [
        '-m',
        '--propagation',
        'private',
        'sh',
        '-c',
        `root="$1"; shift; mount --bind "$root" "$root" || exit 97
for m in $(awk '{print $2}' /proc/self/mounts | sort -ru); do
  case "$m" in "$root"|/proc|/proc/*|/sys|/sys/*) ;; *) mount -o remount,bind,ro "$m" 2>/dev/null ;; esac
done
touch /k8s-host-reconcile-ro-probe 2>/dev/null && exit 98
exec timeout -s KILL ${DEADLINE_S} "$@"`,
        'sh',
        root,
        process.execPath,
        BUNDLE,
        ...args,
      ],
      { encoding: 'utf8', timeout: (DEADLINE_S + 10) * 1000 },
    );
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const mkfifo = (p: string) => expect(spawnSync('mkfifo', [p]).status).toBe(0);
  const mknodZero = (p: string) => expect(spawnSync('mknod', [p, 'c', '1', '5']).status).toBe(0);
  const LOCK = 'run/k8s-host-reconcile.lock';
  const OLD = '20261130T000000000Z-4242';

  it.each([
    [
      'a link to a lock file outside the root that names a live process',
      (outside: string) => {
        writeFileSync(path.join(outside, 'held'), JSON.stringify({ pid: process.pid, pid_start: null, started: '2026-12-01T00:00:00.000Z', mode: 'apply' }));
        return path.join(outside, 'held');
      },
    ],
    [
      'a link to a fifo outside the root',
      (outside: string) => {
        mkfifo(path.join(outside, 'fifo'));
        return path.join(outside, 'fifo');
      },
    ],
    ["a link to the build machine's /dev/zero", () => '/dev/zero'],
  ])('the lock path is %s: refused, naming it; nothing outside is opened for the lock, nothing changes', (_what, make) => {
    const { root, desired } = lab();
    const outside = temp('safety-outside-');
    symlinkSync(make(outside), path.join(root, LOCK));
    const before = { root: snapshot(root), outside: snapshot(outside) };
    const r = underReadOnlyHost(root, ['--apply', '-f', desired, '--root', root]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 1,
      stderr:
        'reconcile: cannot take the run lock /run/k8s-host-reconcile.lock: it is a symbolic link, not a lock file this tool writes; nothing was changed; remove it if no run is under way\n',
    });
    expect({ root: snapshot(root), outside: snapshot(outside) }).toEqual(before);
  });

  it('the lock path is a directory: refused, naming it, never renamed aside', () => {
    const { root, desired } = lab();
    mkdirSync(path.join(root, LOCK));
    writeFileSync(path.join(root, LOCK, 'keep'), 'x');
    const before = snapshot(root);
    const r = underReadOnlyHost(root, ['--apply', '-f', desired, '--root', root]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 1,
      stderr:
        'reconcile: cannot take the run lock /run/k8s-host-reconcile.lock: it is a directory, not a lock file this tool writes; nothing was changed; remove it if no run is under way\n',
    });
    expect(snapshot(root)).toEqual(before);
  });

  it.each([
    ['a fifo', mkfifo, 'fifo'],
    ['a character device (1:5, /dev/zero)', mknodZero, 'character device'],
  ] as const)("an earlier run's journal is %s: --apply and --rollback end, naming it; the journal is left as it is", (_what, make, kind) => {
    const { root, desired } = lab();
    const runDir = path.join(root, 'root/ks/preflight/runs', OLD);
    mkdirSync(runDir, { recursive: true });
    make(path.join(runDir, 'journal'));
    const journalBefore = snapshot(runDir);
    const rb = underReadOnlyHost(root, ['--rollback', OLD, '-f', desired, '--root', root]);
    expect(rb.code, rb.stderr).toBe(1);
    // The rollback reads the journal as its own file (door/own-file.ts), the apply as a host file: both name it and what it is.
    expect(rb.stderr).toContain(`/root/ks/preflight/runs/${OLD}/journal is a ${kind}; it was not opened`);
    // apply skips a run directory whose journal is no regular file, naming it, and goes on (door/interrupted.ts).
    const ap = underReadOnlyHost(root, ['--apply', '-f', desired, '--root', root]);
    expect(ap.code, ap.stderr).toBe(0);
    expect(ap.stderr).toContain(`skipped /root/ks/preflight/runs/${OLD}/journal: it is a ${kind};`);
    expect(snapshot(runDir)).toEqual(journalBefore);
    expect(readdirSync(path.join(root, 'run'))).toEqual([]);
  });
});

// A temporary of the tool never stays behind, a full disk included. A tmpfs of 1 MiB in a private
// mount namespace is filled with zeros but for `room` bytes; what the run leaves is listed inside the namespace.
describe('a full disk leaves no temporary behind', () => {
  const fullDisk = (room: number, prepare = '') => {
    const mnt = temp('safety-enospc-');
    const r = spawnSync(
      'unshare',
      [
        '-m',
        '--propagation',
        'private',
        'sh',
        '-c',
        `mount -t tmpfs -o size=1m tmpfs "$1" && cp -a "$2"/. "$1"/ && ${prepare || 'true'} && head -c ${room} /dev/zero > "$1/room" && (head -c 2M /dev/zero > "$1/fill" 2>/dev/null; true) && rm "$1/room" || exit 97
timeout -s KILL 60 "$3" "$4" --apply -f "$1/root/desired-state.yaml" --root "$1" >/dev/null; echo "exit $?"
find "$1" \\( -name 'k8s-host-reconcile.lock*' -o -name '*.tmp-*' -o -name '.*.reconcile-*' -o -path "$1/run" \\) | sed "s#^$1##" | sort`,
        'sh',
        mnt,
        lab().root,
        process.execPath,
        BUNDLE,
      ],
      { encoding: 'utf8', timeout: 90_000 },
    );
    return { out: r.stdout.trim().split('\n'), stderr: r.stderr };
  };

  it("no room for the lock: ENOSPC naming it; neither the lock's temporary nor the /run it made stays", () => {
    const r = fullDisk(0, 'rm -rf "$1/run"');
    expect(r.stderr).toMatch(/^reconcile: cannot take the run lock \/run\/k8s-host-reconcile\.lock: no space left on device \(ENOSPC\)\n$/);
    expect(r.out).toEqual(['exit 1']);
  });

  it('room for the lock and the journal, not for plan.json: ENOSPC naming plan.json, no plan.json.tmp-* left', () => {
    const r = fullDisk(8192);
    expect(r.stderr).toMatch(/reconcile: cannot write \/root\/ks\/preflight\/runs\/[^/]+\/plan\.json: no space left on device \(ENOSPC\)\n$/);
    expect(r.out).toEqual(['exit 1', '/run']);
  });
});

describe('SIGKILL at every journal step of a rollback', () => {
  it('the rollback never tears a file; a second rollback puts the original back exactly, /run made for the lock included; an apply after it converges', () => {
    const master = lab();
    // An image without /run: the apply's lock makes it, and undoing the apply removes it, also after a kill.
    rmSync(path.join(master.root, 'run'), { recursive: true });
    const original = snapshot(master.root, toolOwned);
    const desiredOf = (root: string) => path.join(root, 'root/desired-state.yaml');
    expect(reconcile(['--apply', '-f', desiredOf(master.root), '--root', master.root]).code).toBe(0);
    const converged = snapshot(master.root, toolOwned);
    const [applied] = readdirSync(path.join(master.root, 'root/ks/preflight/runs'));
    // A full, unkilled rollback of a copy tells how many records a rollback journal has.
    const full = temp('safety-rb-full-');
    spawnSync('cp', ['-a', `${master.root}/.`, full]);
    expect(reconcile(['--rollback', applied!, '-f', desiredOf(full), '--root', full]).code).toBe(0);
    const rollbackRun = readdirSync(path.join(full, 'root/ks/preflight/runs')).find((d) => d !== applied)!;
    const steps = parseJournal(readFileSync(path.join(full, 'root/ks/preflight/runs', rollbackRun, 'journal'), 'utf8')).records.length;
    expect(steps).toBeGreaterThan(10);

    const problems: string[] = [];
    for (let n = 1; n < steps; n++) {
      const root = temp(`safety-rb-kill-${n}-`);
      spawnSync('cp', ['-a', `${master.root}/.`, root]);
      const desired = desiredOf(root);
      const killed = reconcile(['--rollback', applied!, '-f', desired, '--root', root], { RECONCILE_TEST_SIGNAL_AFTER_RECORD: `SIGKILL:${n}` });
      if (killed.signal !== 'SIGKILL') problems.push(`step ${n}: not killed (${killed.code}): ${killed.stdout}${killed.stderr}`);
      // Every entry is as the apply left it or as the rollback puts it back (a temp file of the killed rollback aside,
      // and the /run its lock made: a killed process cannot remove its lock; the next run takes it over and removes it).
      const now = snapshot(root, toolOwned);
      for (const p of new Set([...Object.keys(now), ...Object.keys(original)])) {
        if (now[p] !== original[p] && now[p] !== converged[p] && !p.includes('.reconcile-') && p !== 'run') problems.push(`step ${n}: ${p} is torn: ${now[p]}`);
      }
      // Odd steps: a second rollback of the same run; even steps: an apply. Either ends consistent.
      if (n % 2 === 1) {
        const again = reconcile(['--rollback', applied!, '-f', desired, '--root', root]);
        if (again.code !== 0) problems.push(`step ${n}: second rollback exit ${again.code}: ${again.stdout}${again.stderr}`);
        if (JSON.stringify(snapshot(root, toolOwned)) !== JSON.stringify(original))
          problems.push(`step ${n}: second rollback left ${JSON.stringify(Object.entries(snapshot(root, toolOwned)).filter(([k, v]) => original[k] !== v))}`);
      } else {
        const again = reconcile(['--apply', '-f', desired, '--root', root]);
        if (again.code !== 0) problems.push(`step ${n}: apply after the killed rollback exit ${again.code}: ${again.stderr.slice(-400)}`);
        if (!again.stderr.includes('was interrupted after record')) problems.push(`step ${n}: the apply did not say the rollback was interrupted`);
        if (JSON.stringify(snapshot(root, toolOwned)) !== JSON.stringify(converged))
          problems.push(
            `step ${n}: apply after the killed rollback left ${JSON.stringify(Object.entries(snapshot(root, toolOwned)).filter(([k, v]) => converged[k] !== v))}`,
          );
      }
      const plan = reconcile(['--plan', '-f', desired, '--root', root]);
      if (plan.code !== (n % 2 === 1 ? 2 : 0)) problems.push(`step ${n}: plan afterwards exit ${plan.code}`);
      rmSync(root, { recursive: true, force: true });
    }
    expect(problems).toEqual([]);
  }, 900_000);
});
