// `npm run deb`: the package builds with dpkg-deb, the same bytes every time
// for one commit, lintian --pedantic reports only the tags it overrides with
// a reason, and it installs with dpkg into a fresh Debian 12 chroot whose only
// node is Debian's own nodejs (18), where `k8s-host-reconcile plan --root`
// (with the conffile as its default desired state) and a bake run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { freshChroot } from './helpers/debian-chroot.js';

const repo = path.resolve(new URL('..', import.meta.url).pathname);
const version = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')).version as string;
const DEB = path.join(repo, 'dist', `k8s-host-reconcile_${version}_all.deb`);
const UNIT = 'k8s-host-reconcile-first-boot.service';
const CONFFILE = '/etc/k8s-host-reconcile/desired-state.yaml';
const SCHEMA = '/usr/share/k8s-host-reconcile/desired-state.schema.json';

let chroot: string;
/** sha256 of the build beforeAll made, and when it finished. */
let firstSha: string;
let firstBuiltAt: number;

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
function buildDeb(env: NodeJS.ProcessEnv = {}) {
  // Every build here has the default time (the last commit's), unless a test names one.
  const { SOURCE_DATE_EPOCH: _caller, ...inherited } = process.env;
  const built = spawnSync(process.execPath, ['scripts/deb.mjs'], { cwd: repo, encoding: 'utf8', env: { ...inherited, ...env } });
  expect(built.stderr).toBe('');
  expect(built.status).toBe(0);
}
/** The last commit's time, the build's default SOURCE_DATE_EPOCH. */
const commitTime = () => Number(spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: repo, encoding: 'utf8' }).stdout.trim());

/** The deb's ar members (deb(5): the common ar format): name, mtime, uid, gid, mode, read from the 60-byte headers. */
function arMembers(file: string) {
  const b = readFileSync(file);
  expect(b.subarray(0, 8).toString('latin1')).toBe('!<arch>\n');
  const out: { name: string; mtime: number; uid: string; gid: string }[] = [];
  for (let at = 8; at < b.length;) {
    const h = b.subarray(at, at + 60).toString('latin1');
    const size = Number(h.slice(48, 58).trim());
    out.push({
      name: h.slice(0, 16).trim().replace(/\/$/, ''),
      mtime: Number(h.slice(16, 28).trim()),
      uid: h.slice(28, 34).trim(),
      gid: h.slice(34, 40).trim(),
    });
    at += 60 + size + (size % 2);
  }
  return out;
}

/** `tar -tv` of the data or control member: mode, owner/group as numbers, time (UTC), name. */
function tarEntries(which: '--fsys-tarfile' | '--ctrl-tarfile') {
  const tar = spawnSync('sh', ['-c', 'dpkg-deb "$1" "$2" | tar --list --verbose --numeric-owner --full-time -f -', 'sh', which, DEB], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, TZ: 'UTC', LC_ALL: 'C' },
  });
  expect(tar.status).toBe(0);
  return tar.stdout
    .trimEnd()
    .split('\n')
    .map((l) => {
      const m = /^(\S+) (\d+)\/(\d+) +\d+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) (.*)$/.exec(l);
      expect(m, l).not.toBeNull();
      return { mode: m![1]!, owner: `${m![2]}/${m![3]}`, time: m![4]!, name: m![5]!.replace(/ -> .*$/, '') };
    });
}
/** "2026-12-07 02:03:30": how tar --full-time prints a time in UTC. */
const utc = (epoch: number) => new Date(epoch * 1000).toISOString().slice(0, 19).replace('T', ' ');

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
  buildDeb();
  firstSha = sha256(DEB);
  firstBuiltAt = Date.now();
  chroot = freshChroot('bookworm');
}, 1_800_000);
// Removing a whole Debian chroot takes more than vitest's default 10 s hook time on a loaded machine.
afterAll(() => {
  if (chroot) rmSync(chroot, { recursive: true, force: true });
}, 300_000);

describe('the Debian package', () => {
  it('has the program, the default desired state and schemas, the unit and the man page, and Depends: nodejs (>= 18)', () => {
    const list = spawnSync('dpkg-deb', ['--contents', DEB], { encoding: 'utf8' }).stdout;
    for (const f of [
      './usr/libexec/k8s-host-reconcile/reconcile.mjs',
      `.${CONFFILE}`,
      `.${SCHEMA}`,
      `./lib/systemd/system/${UNIT}`,
      './usr/share/man/man1/k8s-host-reconcile.1.gz',
      './usr/share/lintian/overrides/k8s-host-reconcile',
      // The --json documents' schemas beside the desired state's.
      './usr/share/k8s-host-reconcile/plan.schema.json',
      './usr/share/k8s-host-reconcile/apply.schema.json',
      './usr/share/k8s-host-reconcile/error.schema.json',
    ])
      expect(list).toContain(f);
    expect(list).toMatch(/ \.\/usr\/bin\/k8s-host-reconcile -> \.\.\/libexec\/k8s-host-reconcile\/reconcile\.mjs\n/);
    // No generic /usr/bin/reconcile, and no second desired state beside the conffile.
    expect(list).not.toMatch(/\.\/usr\/bin\/reconcile\b/);
    expect(list).not.toMatch(/\/usr\/share\/k8s-host-reconcile\/desired-state\.yaml/);
    expect(spawnSync('dpkg-deb', ['--field', DEB, 'Depends'], { encoding: 'utf8' }).stdout.trim()).toBe('nodejs (>= 18)');
    expect(spawnSync('dpkg-deb', ['--field', DEB, 'Architecture'], { encoding: 'utf8' }).stdout.trim()).toBe('all');
  });

  it('ships its desired state as a conffile with no lab path, whose $schema line names the schema the package ships', () => {
    const conffiles = spawnSync('sh', ['-c', 'dpkg-deb --ctrl-tarfile "$1" | tar -xOf - ./conffiles', 'sh', DEB], { encoding: 'utf8' });
    expect(conffiles.stdout).toBe(`${CONFFILE}\n`);
    const shipped = spawnSync('sh', ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar -xOf - "$2"', 'sh', DEB, `.${CONFFILE}`], { encoding: 'utf8' }).stdout;
    expect(shipped.split('\n')[0]).toBe(`# yaml-language-server: $schema=${SCHEMA}`);
    expect(shipped).not.toMatch(/\/root\/ks|\/opt\/ks/);
    expect(shipped).toMatch(/^reports_dir: \/var\/lib\/k8s-host-reconcile\/reports$/m);
  });

  it('two builds of one commit are the same bytes: every time is the last commit time, entries sorted and root:root', () => {
    // A later build, with the sources' and the stage's file times all newer than the first one's.
    while (Date.now() - firstBuiltAt < 2_100) spawnSync('sleep', ['0.2']);
    spawnSync('touch', [path.join(repo, 'contrib/deb/desired-state.yaml')]);
    buildDeb();
    expect(sha256(DEB)).toBe(firstSha);

    const epoch = commitTime();
    expect(arMembers(DEB)).toEqual([
      { name: 'debian-binary', mtime: epoch, uid: '0', gid: '0' },
      { name: 'control.tar.xz', mtime: epoch, uid: '0', gid: '0' },
      { name: 'data.tar.xz', mtime: epoch, uid: '0', gid: '0' },
    ]);
    for (const member of ['--fsys-tarfile', '--ctrl-tarfile'] as const) {
      const entries = tarEntries(member);
      expect(entries.length).toBeGreaterThan(3);
      expect(new Set(entries.map((e) => `${e.owner} ${e.time}`))).toEqual(new Set([`0/0 ${utc(epoch)}`]));
      // dpkg-deb puts the links last; each part is in byte order.
      for (const part of [entries.filter((e) => !e.mode.startsWith('l')), entries.filter((e) => e.mode.startsWith('l'))]) {
        const names = part.map((e) => e.name);
        expect(names).toEqual([...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }
    }
    const changelog = spawnSync('sh', ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar -xOf - ./usr/share/doc/k8s-host-reconcile/changelog.gz', 'sh', DEB]);
    expect(gunzipSync(changelog.stdout).toString('utf8')).toContain(`  ${new Date(epoch * 1000).toUTCString().replace('GMT', '+0000')}\n`);

    // The caller's SOURCE_DATE_EPOCH wins; then the default build is the first one's bytes again.
    buildDeb({ SOURCE_DATE_EPOCH: '1700000000' });
    expect(arMembers(DEB).map((m) => m.mtime)).toEqual([1700000000, 1700000000, 1700000000]);
    expect(new Set(tarEntries('--fsys-tarfile').map((e) => e.time))).toEqual(new Set([utc(1700000000)]));
    expect(sha256(DEB)).not.toBe(firstSha);
    buildDeb();
    expect(sha256(DEB)).toBe(firstSha);
  }, 120_000);

  it('lintian --pedantic (with info and experimental tags) reports nothing but the tags the package overrides, each with a reason', () => {
    const r = spawnSync('lintian', ['--pedantic', '--display-info', '--display-experimental', '--show-overrides', '--fail-on', 'none', DEB], {
      encoding: 'utf8',
      timeout: 600_000,
    });
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n').filter((l) => l !== '');
    // E error, W warning, I info, P pedantic, X experimental, C classification; O is an overridden tag, N its reason.
    expect(lines.filter((l) => !/^[ON]: /.test(l))).toEqual([]);
    expect(lines.filter((l) => l.startsWith('O: ')).sort()).toEqual([
      `O: k8s-host-reconcile: package-supports-alternative-init-but-no-init.d-script [lib/systemd/system/${UNIT}]`,
      'O: k8s-host-reconcile: uses-dpkg-database-directly [usr/libexec/k8s-host-reconcile/reconcile.mjs]',
    ]);
    // Every override has a comment line right above it, its reason.
    const overrides = readFileSync(path.join(repo, 'contrib/deb/lintian-overrides'), 'utf8').trimEnd().split('\n');
    overrides.forEach((l, i) => {
      if (!l.startsWith('#')) expect(overrides[i - 1] ?? '', `no reason above ${l}`).toMatch(/^# \S/);
    });
  }, 600_000);

  it("installs with dpkg into a fresh bookworm chroot with Debian's nodejs 18, and runs there", () => {
    copyFileSync(DEB, path.join(chroot, 'tmp/pkg.deb'));
    const node = inChroot(['node', '--version']);
    expect(node.stdout.trim()).toMatch(/^v18\./);
    const install = inChroot(['dpkg', '-i', '/tmp/pkg.deb']);
    expect({ code: install.code, err: install.stderr }).toEqual({ code: 0, err: '' });
    expect(inChroot(['dpkg-query', '-W', '-f', '${Status}', 'k8s-host-reconcile']).stdout).toBe('install ok installed');
    expect(inChroot(['k8s-host-reconcile', '--version'])).toMatchObject({ code: 0, stdout: `k8s-host-reconcile ${version}\n` });
    expect(existsSync(path.join(chroot, 'usr/bin/reconcile'))).toBe(false);
    // dpkg registered the desired state as a conffile, and the schema its first line names is there, the repository's.
    expect(inChroot(['dpkg-query', '-W', '-f', '${Conffiles}', 'k8s-host-reconcile']).stdout).toMatch(
      new RegExp(
        `^\\n? ${CONFFILE.replace(/[.]/g, '\\.')} ${createHash('md5')
          .update(readFileSync(path.join(repo, 'contrib/deb/desired-state.yaml')))
          .digest('hex')}$`,
      ),
    );
    const schemaLine = readFileSync(path.join(chroot, CONFFILE), 'utf8').split('\n')[0]!;
    const schemaPath = schemaLine.replace(/^# yaml-language-server: \$schema=/, '');
    expect(readFileSync(path.join(chroot, schemaPath), 'utf8')).toBe(readFileSync(path.join(repo, 'schema/desired-state.schema.json'), 'utf8'));
    const man = gunzipSync(readFileSync(path.join(chroot, 'usr/share/man/man1/k8s-host-reconcile.1.gz'))).toString('utf8');
    expect(man).toMatch(/^\.TH k8s-host-reconcile 1 /m);
    expect(man).toMatch(/^\.SH NAME\n\.PP\nk8s-host-reconcile - make a Debian host or image safe to install Kubernetes on$/m);
    // ENVIRONMENT, before FILES (man-pages(7)'s order), names NO_COLOR.
    expect(man).toMatch(/^\.SH ENVIRONMENT\n[^]*^\.TP\n\\fINO_COLOR\\fP\n[^]*^\.SH FILES$/m);
    // systemd itself checks the packaged unit (the chroot has Debian's systemd).
    const verify = inChroot(['systemd-analyze', 'verify', '--man=no', `/lib/systemd/system/${UNIT}`]);
    expect({ code: verify.code, out: verify.stdout + verify.stderr }).toEqual({ code: 0, out: '' });
  }, 600_000);

  it('k8s-host-reconcile plan --root on an image inside the chroot: the conffile by default, a swap line, exit 2; the bake then runs the packaged program at first boot', () => {
    const image = path.join(chroot, 'image');
    const put = (rel: string, data: string, mode = 0o644) => {
      mkdirSync(path.dirname(path.join(image, rel)), { recursive: true });
      writeFileSync(path.join(image, rel), data);
      chmodSync(path.join(image, rel), mode);
    };
    put('etc/fstab', 'UUID=1 / ext4 defaults 0 1\n/swapfile none swap sw 0 0\n');
    for (const d of ['run', 'root', 'etc/systemd/system']) mkdirSync(path.join(image, d), { recursive: true });
    // No -f, and no ./desired-state.yaml (chroot's working directory is /): the packaged program reads the conffile.
    expect(existsSync(path.join(chroot, 'desired-state.yaml'))).toBe(false);
    const plan = inChroot(['k8s-host-reconcile', 'plan', '--root', '/image']);
    expect(plan.stderr).not.toMatch(/internal error|SyntaxError|Cannot find|no such file/);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('-/swapfile none swap sw 0 0');
    // An image that has the package too: its first boot runs /usr/bin/k8s-host-reconcile.
    put('usr/bin/node', '#!/bin/sh\n', 0o755);
    put('usr/libexec/k8s-host-reconcile/reconcile.mjs', '#!/usr/bin/env node\n', 0o755);
    spawnSync('ln', ['-s', '../libexec/k8s-host-reconcile/reconcile.mjs', path.join(image, 'usr/bin/k8s-host-reconcile')]);
    const bake = inChroot(['k8s-host-reconcile', '--apply', '--root', '/image', '-f', CONFFILE]);
    expect({ code: bake.code, err: bake.stderr.split('\n').filter((l) => /error/.test(l)) }).toEqual({ code: 0, err: [] });
    expect(readFileSync(path.join(image, 'etc/systemd/system', UNIT), 'utf8')).toContain(
      '\nExecStart=/usr/bin/k8s-host-reconcile --first-boot -f /etc/k8s-host-reconcile/desired-state.yaml\n',
    );
    expect(spawnSync('systemctl', ['--root', image, 'is-enabled', UNIT], { encoding: 'utf8' }).stdout.trim()).toBe('enabled');
  }, 600_000);
});
