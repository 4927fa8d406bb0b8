// `npm run deb`: dist/k8s-host-reconcile_<version>_all.deb, built with
// dpkg-deb from the bundle, the default desired state and schema, the
// first-boot unit and a man page rendered by go-md2man (Debian's package).
// The program is /usr/libexec/k8s-host-reconcile/reconcile.mjs (libexec, as
// FHS 3.0 and lintian ask of an executable that is not itself a command) with
// /usr/bin/k8s-host-reconcile linking to it: node decides ESM by the real
// file's extension, and an extensionless ESM file would not load on node 18.
//
// Reproducible: every time in the package is SOURCE_DATE_EPOCH (by default
// the last commit's time), so two builds of one commit are the same bytes.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

// What the build runs, checked first: a missing tool is one line naming its
// Debian package (`npm run deb` installs them first: predeb), never a stack.
const tools = { 'go-md2man': 'go-md2man', 'dpkg-deb': 'dpkg' };
const absent = Object.keys(tools).filter((t) => spawnSync('sh', ['-c', 'command -v "$1"', 'sh', t]).status !== 0);
if (absent.length) {
  const pkgs = [...new Set(absent.map((t) => tools[t]))];
  process.stderr.write(
    `deb: ${absent.join(' and ')} missing: apt-get install ${pkgs.join(' ')} (or run npm run deb as root, which installs ${pkgs.length === 1 ? 'it' : 'them'})\n`,
  );
  process.exit(1);
}
let build;
try {
  ({ build } = await import('esbuild'));
} catch {
  process.stderr.write('deb: the npm package esbuild is missing: run npm ci\n');
  process.exit(1);
}

// The one time the package carries: the caller's SOURCE_DATE_EPOCH, else the
// last commit's (https://reproducible-builds.org/docs/source-date-epoch/).
let epoch = process.env.SOURCE_DATE_EPOCH;
if (epoch === undefined || epoch === '') {
  const git = spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: repo, encoding: 'utf8' });
  epoch = git.status === 0 ? git.stdout.trim() : '';
  if (!epoch) {
    process.stderr.write('deb: not a git checkout: set SOURCE_DATE_EPOCH (seconds since 1970) to the time the package should carry\n');
    process.exit(1);
  }
}
if (!/^\d+$/.test(epoch)) {
  process.stderr.write(`deb: SOURCE_DATE_EPOCH must be whole seconds since 1970, not ${JSON.stringify(epoch)}\n`);
  process.exit(1);
}
const when = Number(epoch);

const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
const NAME = 'k8s-host-reconcile';
const version = pkg.version;
const out = path.join(repo, 'dist', `${NAME}_${version}_all.deb`);
const stage = path.join(repo, 'dist', 'deb', `${NAME}_${version}_all`);

execFileSync(process.execPath, [path.join(repo, 'scripts/bundle.mjs')], { cwd: repo, stdio: 'inherit' });

// The unit text comes from the same module the bake uses.
const unitModule = path.join(repo, 'dist', 'deb', 'unit.mjs');
await build({
  entryPoints: [path.join(repo, 'src/resources/first-boot/unit.ts')],
  outfile: unitModule,
  bundle: true,
  platform: 'node',
  format: 'esm',
  logLevel: 'warning',
});
const { firstBootUnit, FIRST_BOOT_UNIT, IMAGE_DESIRED, PACKAGED_PROGRAM } = await import(unitModule);
const versionModule = path.join(repo, 'dist', 'deb', 'version.mjs');
await build({ entryPoints: [path.join(repo, 'src/version.ts')], outfile: versionModule, bundle: true, platform: 'node', format: 'esm', logLevel: 'warning' });
// The paths the CLI takes for the package's own (its default -f, how it knows it is the packaged program) are the ones installed.
const { PACKAGED_BUNDLE, PACKAGED_DESIRED_STATE } = await import(versionModule);
if (PACKAGED_DESIRED_STATE !== IMAGE_DESIRED) throw new Error(`the CLI's default ${PACKAGED_DESIRED_STATE} is not the first boot's ${IMAGE_DESIRED}`);

fs.rmSync(stage, { recursive: true, force: true });
const put = (rel, data, mode = 0o644) => {
  const p = path.join(stage, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true, mode: 0o755 });
  fs.writeFileSync(p, data);
  fs.chmodSync(p, mode);
};
const gz = (data) => zlib.gzipSync(data, { level: 9 }); // no name, no mtime in the header (like gzip -9n)

const bundle = fs.readFileSync(path.join(repo, 'dist/reconcile.mjs'));
if (!bundle.subarray(0, 20).toString().startsWith('#!/usr/bin/env node\n')) throw new Error('dist/reconcile.mjs does not start with #!/usr/bin/env node');
put(PACKAGED_BUNDLE.slice(1), bundle, 0o755);
fs.mkdirSync(path.join(stage, 'usr/bin'), { recursive: true });
fs.symlinkSync(path.relative(path.dirname(PACKAGED_PROGRAM), PACKAGED_BUNDLE), path.join(stage, PACKAGED_PROGRAM.slice(1)));
// Not the repository's desired-state.yaml: that one names the lab's checkout and reports directory.
put(PACKAGED_DESIRED_STATE.slice(1), fs.readFileSync(path.join(repo, 'contrib/deb/desired-state.yaml')));
// The desired state's schema (the conffile's first line names it) and those of the --json documents (docs/output.md).
for (const schema of ['desired-state', 'plan', 'apply', 'error'])
  put(`usr/share/${NAME}/${schema}.schema.json`, fs.readFileSync(path.join(repo, `schema/${schema}.schema.json`)));
put(`usr/share/lintian/overrides/${NAME}`, fs.readFileSync(path.join(repo, 'contrib/deb/lintian-overrides')));
// Shipped, not enabled: a bake enables it in an image (with the candidates it found); on a host, `systemctl enable` does.
put(`lib/systemd/system/${FIRST_BOOT_UNIT}`, firstBootUnit({ exec: [PACKAGED_PROGRAM], after: [], timeoutSec: 900 }));

const man = execFileSync('go-md2man', ['-in', path.join(repo, 'docs/reconcile.1.md')]);
put(`usr/share/man/man1/${path.basename(PACKAGED_PROGRAM)}.1.gz`, gz(man));
put(
  `usr/share/doc/${NAME}/copyright`,
  [
    'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/',
    `Upstream-Name: ${NAME}`,
    '',
    'Files: *',
    `Copyright: 2026 the ${NAME} authors`,
    'License: Apache-2.0',
    ' On Debian systems, the full text of the Apache License, Version 2.0 can be',
    ' found in the file /usr/share/common-licenses/Apache-2.0.',
    '',
  ].join('\n'),
);
const date = execFileSync('date', ['-R', '-u', '-d', `@${when}`])
  .toString()
  .trim();
put(
  `usr/share/doc/${NAME}/changelog.gz`,
  gz(
    `${NAME} (${version}) unstable; urgency=medium\n\n  * Package the single-file bundle, the first-boot unit and the man page.\n\n -- ${NAME} maintainers <maintainers@k8s-host-reconcile.invalid>  ${date}\n`,
  ),
);

// Control files: sums and size of what the package installs.
const files = [];
const walk = (rel) => {
  for (const e of fs.readdirSync(path.join(stage, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (r === 'DEBIAN') continue;
    if (e.isDirectory()) walk(r);
    else files.push(r);
  }
};
walk('');
const sums =
  files
    .filter((f) => !fs.lstatSync(path.join(stage, f)).isSymbolicLink())
    .sort()
    .map(
      (f) =>
        `${createHash('md5')
          .update(fs.readFileSync(path.join(stage, f)))
          .digest('hex')}  ${f}`,
    )
    .join('\n') + '\n';
const sizeKb = Math.ceil(files.reduce((n, f) => n + fs.lstatSync(path.join(stage, f)).size, 0) / 1024);
put('DEBIAN/md5sums', sums);
// dpkg keeps an admin's edits of these across upgrades (and asks when both changed).
put('DEBIAN/conffiles', `${PACKAGED_DESIRED_STATE}\n`);
put(
  'DEBIAN/control',
  [
    `Package: ${NAME}`,
    `Version: ${version}`,
    'Architecture: all',
    `Maintainer: ${NAME} maintainers <maintainers@k8s-host-reconcile.invalid>`,
    `Installed-Size: ${sizeKb}`,
    'Depends: nodejs (>= 18)',
    'Section: admin',
    'Priority: optional',
    'Description: make a Debian host or image safe to install Kubernetes on',
    ' k8s-host-reconcile compares a host with a desired state (swap off, the',
    ' overlay and br_netfilter modules, the forwarding sysctls, free control-plane',
    ' ports) and converges it, now and at every later boot, with a journal to roll',
    ' back.',
    ' Run with --root on an unbooted image, it leaves what only a running system',
    ' can judge to a one-shot first-boot unit.',
    '',
  ].join('\n'),
);

// Every entry the same whatever the umask and the clock: directories 0755,
// and each time SOURCE_DATE_EPOCH (dpkg-deb only clamps later times to it).
const settle = (rel) => {
  const p = path.join(stage, rel);
  const st = fs.lstatSync(p);
  if (st.isDirectory()) {
    fs.chmodSync(p, 0o755);
    for (const e of fs.readdirSync(p)) settle(rel ? `${rel}/${e}` : e);
  }
  fs.lutimesSync(p, when, when);
};
settle('');

fs.rmSync(out, { force: true });
// dpkg-deb (1.21) takes the ar members' times from SOURCE_DATE_EPOCH and sorts the tar entries; root:root owns them;
// one xz thread, because a multi-threaded xz splits its output in blocks, and a machine with other cores would get other bytes.
execFileSync('dpkg-deb', ['--root-owner-group', '-Zxz', '--build', stage, out], {
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, SOURCE_DATE_EPOCH: String(when), DPKG_DEB_THREADS_MAX: '1' },
});
process.stdout.write(`${path.relative(process.cwd(), out)}\n`);
