// `npm run deb`: the package builds with dpkg-deb, lintian finds no error,
// and it installs with dpkg into a fresh Debian 12 chroot whose only node is
// Debian's own nodejs (18), where `reconcile --plan --root` and a bake run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { freshChroot } from './helpers/debian-chroot.js';

const repo = path.resolve(new URL('..', import.meta.url).pathname);
const version = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')).version as string;
const DEB = path.join(repo, 'dist', `k8s-host-reconcile_${version}_all.deb`);
const UNIT = 'k8s-host-reconcile-first-boot.service';

let chroot: string;

function inChroot(args: string[], timeout = 300_000) {
  // A private mount namespace, so the chroot's /proc mount never shows on this machine.
  const r = spawnSync(
    'unshare',
    ['--mount', '--propagation', 'private', 'sh', '-c', 'mount -t proc proc "$1/proc" && shift && exec chroot "$@"', 'sh', chroot, chroot, ...args],
    {
      encoding: 'utf8',
      timeout,
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8', NO_COLOR: '1' },
    },
  );
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

beforeAll(() => {
  const built = spawnSync(process.execPath, ['scripts/deb.mjs'], { cwd: repo, encoding: 'utf8' });
  expect(built.stderr).toBe('');
  expect(built.status).toBe(0);
  chroot = freshChroot('bookworm');
}, 1_800_000);
// Removing a whole Debian chroot takes more than vitest's default 10 s hook time on a loaded machine.
afterAll(() => {
  if (chroot) rmSync(chroot, { recursive: true, force: true });
}, 300_000);

describe('the Debian package', () => {
  it('has the program, the default desired state and schema, the unit and the man page, and Depends: nodejs (>= 18)', () => {
    const list = spawnSync('dpkg-deb', ['--contents', DEB], { encoding: 'utf8' }).stdout;
    for (const f of [
      './usr/lib/k8s-host-reconcile/reconcile.mjs',
      './usr/share/k8s-host-reconcile/desired-state.yaml',
      './usr/share/k8s-host-reconcile/desired-state.schema.json',
      `./lib/systemd/system/${UNIT}`,
      './usr/share/man/man1/reconcile.1.gz',
    ])
      expect(list).toContain(f);
    expect(list).toMatch(/\.\/usr\/bin\/reconcile -> \.\.\/lib\/k8s-host-reconcile\/reconcile\.mjs/);
    expect(spawnSync('dpkg-deb', ['--field', DEB, 'Depends'], { encoding: 'utf8' }).stdout.trim()).toBe('nodejs (>= 18)');
    expect(spawnSync('dpkg-deb', ['--field', DEB, 'Architecture'], { encoding: 'utf8' }).stdout.trim()).toBe('all');
  });

  it('lintian reports no error', () => {
    const r = spawnSync('lintian', ['--fail-on', 'error', DEB], { encoding: 'utf8', timeout: 600_000 });
    expect({ code: r.status, errors: r.stdout.split('\n').filter((l) => l.startsWith('E:')) }).toEqual({ code: 0, errors: [] });
  }, 600_000);

  it("installs with dpkg into a fresh bookworm chroot with Debian's nodejs 18, and runs there", () => {
    copyFileSync(DEB, path.join(chroot, 'tmp/pkg.deb'));
    const node = inChroot(['node', '--version']);
    expect(node.stdout.trim()).toMatch(/^v18\./);
    const install = inChroot(['dpkg', '-i', '/tmp/pkg.deb']);
    expect({ code: install.code, err: install.stderr }).toEqual({ code: 0, err: '' });
    expect(inChroot(['dpkg-query', '-W', '-f', '${Status}', 'k8s-host-reconcile']).stdout).toBe('install ok installed');
    expect(inChroot(['reconcile', '--version'])).toMatchObject({ code: 0, stdout: `k8s-host-reconcile ${version}\n` });
    const man = gunzipSync(readFileSync(path.join(chroot, 'usr/share/man/man1/reconcile.1.gz'))).toString('utf8');
    expect(man).toMatch(/^\.TH reconcile 1 /m);
    expect(man).toMatch(/^\.SH NAME\n\.PP\nreconcile - make a Debian host or image safe to install Kubernetes on$/m);
    // systemd itself checks the packaged unit (the chroot has Debian's systemd).
    const verify = inChroot(['systemd-analyze', 'verify', '--man=no', `/lib/systemd/system/${UNIT}`]);
    expect({ code: verify.code, out: verify.stdout + verify.stderr }).toEqual({ code: 0, out: '' });
  }, 600_000);

  it('reconcile --plan --root on an image inside the chroot: the default desired state, a swap line, exit 2; the bake then runs the packaged program at first boot', () => {
    const image = path.join(chroot, 'image');
    const put = (rel: string, data: string, mode = 0o644) => {
      mkdirSync(path.dirname(path.join(image, rel)), { recursive: true });
      writeFileSync(path.join(image, rel), data);
      chmodSync(path.join(image, rel), mode);
    };
    put('etc/fstab', 'UUID=1 / ext4 defaults 0 1\n/swapfile none swap sw 0 0\n');
    for (const d of ['run', 'root', 'etc/systemd/system']) mkdirSync(path.join(image, d), { recursive: true });
    const desired = '/usr/share/k8s-host-reconcile/desired-state.yaml';
    const plan = inChroot(['reconcile', '--plan', '--root', '/image', '-f', desired]);
    expect(plan.stderr).not.toMatch(/internal error|SyntaxError|Cannot find/);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('-/swapfile none swap sw 0 0');
    // An image that has the package too: its first boot runs /usr/bin/reconcile.
    put('usr/bin/node', '#!/bin/sh\n', 0o755);
    put('usr/lib/k8s-host-reconcile/reconcile.mjs', '#!/usr/bin/env node\n', 0o755);
    spawnSync('ln', ['-s', '../lib/k8s-host-reconcile/reconcile.mjs', path.join(image, 'usr/bin/reconcile')]);
    const bake = inChroot(['reconcile', '--apply', '--root', '/image', '-f', desired]);
    expect({ code: bake.code, err: bake.stderr.split('\n').filter((l) => /error/.test(l)) }).toEqual({ code: 0, err: [] });
    expect(readFileSync(path.join(image, 'etc/systemd/system', UNIT), 'utf8')).toContain(
      '\nExecStart=/usr/bin/reconcile --first-boot -f /etc/k8s-host-reconcile/desired-state.yaml\n',
    );
    expect(spawnSync('systemctl', ['--root', image, 'is-enabled', UNIT], { encoding: 'utf8' }).stdout.trim()).toBe('enabled');
  }, 600_000);
});
