// The boot-time scripts a Debian host runs, read for commands that turn swap
// on, write sysctls or remove modules (commands.ts). Reads through Host only;
// the parsing is pure (shell-lines.ts and lex/, ports/crontab.ts, systemd/exec-command.ts).
//
// Sources, each with the rule of the program that runs it:
// - /etc/rc.local: systemd-rc-local-generator pulls rc-local.service into
//   multi-user.target only when the file is executable (access(X_OK), which
//   for root means any execute bit), and the service runs it by its "#!" line.
// - crontabs (system: /etc/crontab, /etc/cron.d/*; users:
//   /var/spool/cron/crontabs/*): every entry, @reboot or timed, runs its
//   command through `sh -c`; a timed swapon brings swap back minutes after boot.
// - /etc/network/if-*.d/*: ifupdown runs each directory with run-parts(8),
//   which runs only executable files named [A-Za-z0-9_-]+.
// - /etc/network/interfaces and what it sources (interfaces(5)): the
//   pre-up/up/post-up lines of the interfaces ifupdown brings up at boot
//   (networking.service's `ifup -a` for auto/allow-auto, udev for
//   allow-hotplug, lo always), each run through /bin/sh -c.
// - ExecStartPre=/ExecStart=/ExecStartPost= of services that start at boot:
//   reached from default.target in the unit graph of src/systemd/ (Wants= and
//   the like in [Unit] and drop-ins, link directories, socket/timer/path
//   triggers), and, conservatively, any service named by a link in a
//   .wants/.requires/.upholds directory even where the graph does not reach it.
// - what any of these starts: a program that is a POSIX shell script in the
//   root is read too, with the runner's description (followProgram).
import path from 'node:path';
import type { TargetFs, Host } from '../host.js';
import type { ByteString } from '../bytes.js';
import { cronDName, loadCrontabs } from '../ports/crontab.js';
import { execCommandsOf } from '../systemd/exec-command.js';
import { unitFilesOf } from '../systemd/socket-unit.js';
import { dependencyLinks, type UnitGraph } from '../systemd/unit-loader.js';
import { systemUnitGraph } from '../systemd/system-graph.js';
import { bootPaths, describeBootPath } from '../systemd/boot-reach.js';
import { execActions, readShellScript } from './shell-lines.js';
import { unwrap, type ScriptAction } from './commands.js';
import { programKind } from '../lex/shebang.js';
import { readWriter, SYSCTL_FILE_WRITERS } from './sysctl-file-writers.js';
import { wgConfigFile, wgQuickUpHooks } from './wg-quick.js';
import { ipForwarding, readShorewallConf, SHOREWALL_CONF, SHOREWALL_UNIT } from './shorewall.js';
import { argvParseCmd, readOpenvpnOptions, SSEC_SCRIPTS, type OpenvpnScript } from './openvpn.js';
import { openvpnBootInstances, openvpnCommandOf, type OpenvpnInstance } from './openvpn-units.js';
import { TUNED_REAPPLY_DIRS, TUNED_REAPPLY_LAST, TUNED_UNIT, tunedAtBoot, type TunedBoot, type TunedWrite } from './tuned.js';
import { commentOutRanges, scriptMarker } from './neutralise.js';
import { sysctlProcPath } from '../observe/sysctl-live.js';
import { globKind, matchComponent, readInterfaces, sourceDirectoryName, UP_OPTIONS, type IfaceStanza } from './interfaces.js';
import { isShell, shebangShell, type Word } from '../lex/shell.js';

export type ScriptSource = 'rc.local' | 'crontab' | 'if-updown' | 'interfaces' | 'unit';

export const RC_LOCAL = '/etc/rc.local';
export const NETWORK_DIR = '/etc/network';

export interface BootScriptHit {
  source: ScriptSource;
  /** Target path of the file the line is in. */
  file: string;
  /** 1-based line of the command. */
  line: number;
  /** The physical lines commenting it out touches (its statement). */
  first: number;
  last: number;
  /** The line as written (first physical line, trimmed). */
  text: string;
  action: Exclude<ScriptAction, { kind: 'unknown' }>;
  /** Who runs it and when, e.g. "rc-local.service runs it at boot". */
  runBy: string;
  /** The service whose command line it is (source 'unit'). */
  unit?: string;
  /** true when commenting out first..last is safe; otherwise why a person must edit it. */
  neutralisable: true | string;
  /** sysctl-load: each file as read now, in the order sysctl loads them. */
  loaded?: LoadedSysctlFile[];
  /** A write followed by a re-read of sysctl files (tuned's reapply_sysctl): a key those files set ends at their value. */
  reapplied?: ReappliedSysctl;
  /** A `swapon -a` naming nothing (fstabOnly): /etc/fstab as read now (null: there is none), the file it turns on. */
  fstab?: ByteString | null;
}

/**
 * The sysctl files a program re-applies after its own write, as read now: the
 * directories' *.conf files (the first directory holding a name wins), sorted
 * by name, then `last`. A file the plan adds to one of the directories is
 * re-applied too, so the judge lists them again with the plan's files.
 */
export interface ReappliedSysctl {
  dirs: string[];
  files: LoadedSysctlFile[];
  last: string;
}

/** The file `swapon -a` reads (util-linux: _PATH_MNTTAB). */
export const SWAPON_FSTAB = '/etc/fstab';

/** A file `sysctl -p` loads, read through the root. */
export interface LoadedSysctlFile {
  /** As the command names it. */
  file: string;
  /** Where the bytes are (links followed inside the root): a planned rewrite of that path changes what is loaded. */
  realPath: string;
  content: ByteString;
}

export interface BootScriptUnknown {
  source: ScriptSource;
  file: string;
  line: number;
  /** What cannot be judged: any concern ('program', a file not read) or one of them. */
  what: 'program' | 'swapon' | 'sysctl' | 'module';
  message: string;
  /** A sysctl write to a /proc/sys path known in part ("*" for the unknown pieces): only keys it can match are concerned. */
  path?: string;
  /** The write is followed by a re-read of sysctl files (tuned's reapply_sysctl): a key those files set is not concerned. */
  reapplied?: ReappliedSysctl;
}

export interface BootScripts {
  hits: BootScriptHit[];
  unknown: BootScriptUnknown[];
  /** Bytes of every file with a hit, for commenting lines out. */
  contents: Record<string, ByteString>;
  /** Files read, for the record. */
  read: string[];
}

function lineText(text: string, line: number): string {
  return (text.split('\n')[line - 1] ?? '').replace(/\r$/, '').trim();
}

/** The file behind a path, followed inside the root: its lstat and real target, or null when missing. */
async function realStat(host: TargetFs, p: string) {
  const real = await host.realTarget(p);
  const st = await host.lstat(real);
  return st === null ? null : { st, real };
}

type Sink = { out: BootScripts };

/** The files of a `sysctl -p` read through the root, or why one of them cannot be known. */
async function readLoads(host: TargetFs, files: string[]): Promise<LoadedSysctlFile[] | string> {
  const out: LoadedSysctlFile[] = [];
  for (const file of files) {
    let s: Awaited<ReturnType<typeof realStat>>;
    let content: ByteString | null = null;
    try {
      s = await realStat(host, file);
      if (s !== null && s.st.isFile()) content = await host.readBytes(file);
    } catch (e) {
      return `sysctl -p loads ${file}, which cannot be read (${(e as Error).message})`;
    }
    if (s === null || content === null)
      return `sysctl -p loads ${file}, which does not exist ${s === null ? 'now' : 'as a regular file'}; what it holds when the script runs cannot be known`;
    out.push({ file, realPath: s.real, content });
  }
  return out;
}

type Where = Omit<BootScriptHit, 'action' | 'loaded' | 'fstab'>;

/** One action of a command: a hit, or an unknown (a `sysctl -p` whose file cannot be read is one). */
async function record(host: TargetFs, sink: Sink, where: Where, a: ScriptAction, unknownPrefix = ''): Promise<void> {
  const unknown = (message: string, what: BootScriptUnknown['what'], path?: string): void => {
    sink.out.unknown.push({
      source: where.source,
      file: where.file,
      line: where.line,
      what,
      message: unknownPrefix + message,
      ...(path !== undefined ? { path } : {}),
    });
  };
  if (a.kind === 'unknown') return unknown(a.why, a.what, a.path);
  if (a.kind === 'sysctl-load') {
    const loaded = await readLoads(host, a.files);
    if (typeof loaded === 'string') return unknown(loaded, 'sysctl');
    sink.out.hits.push({ ...where, action: a, loaded });
    return;
  }
  if (a.kind === 'swapon' && a.fstabOnly === true) {
    let fstab: ByteString | null;
    try {
      fstab = await host.readBytes(SWAPON_FSTAB);
    } catch (e) {
      return unknown(`swapon -a turns on the swap lines of ${SWAPON_FSTAB}, which cannot be read (${(e as Error).message})`, 'swapon');
    }
    sink.out.hits.push({ ...where, action: a, fstab });
    return;
  }
  sink.out.hits.push({ ...where, action: a });
}

/**
 * Programs a runner starts are followed into when they are shell scripts in
 * the root: the scan reads them as it reads rc.local, with who runs them.
 * `seen` holds the scripts on the way (a script that runs itself stops
 * there); deeper than FOLLOW_DEPTH is an unknown.
 */
interface Follow {
  depth: number;
  seen: ReadonlySet<string>;
  /** The service whose command line started the chain. */
  unit?: string;
}

const FOLLOW_DEPTH = 4;

/** PATH of systemd's services and of Debian's /etc/crontab: where a bare program name is looked up. */
const SEARCH_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Programs Debian's packages install (not /usr/local): judged by their name as before, never an unknown of their own. */
function distributionPath(p: string): boolean {
  const n = path.posix.normalize(p);
  return !n.startsWith('/usr/local/') && ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/', '/lib32/', '/libx32/'].some((d) => n.startsWith(d));
}

/**
 * The file a program word names: an absolute path as written, a bare name through SEARCH_PATH; null when none exists.
 * A name is looked up once per reading of the tree (host.memo): scripts and units name the same few programs
 * hundreds of times, and each lookup stats up to six directories.
 */
async function locate(host: TargetFs, prog: string): Promise<string | null> {
  if (prog.startsWith('/')) return prog;
  if (prog.includes('/')) return null; // relative to a working directory this scan does not know
  return host.memo(`boot-scripts/locate\u0000${prog}`, async () => {
    for (const d of SEARCH_PATH) {
      const f = path.posix.join(d, prog);
      const s = await realStat(host, f).catch(() => null);
      if (s !== null && s.st.isFile() && (s.st.mode & 0o111) !== 0) return f;
    }
    return null;
  });
}

/**
 * A command a runner starts, followed into the program it runs: a POSIX
 * shell script in the root (its "#!" names sh, dash or bash, or `sh FILE`)
 * is read with the runner's description; an ELF binary or a program Debian
 * installs is judged by its name alone (commands.ts); a script in another
 * language outside Debian's paths, or one that cannot be read, is unknown.
 * `viaShell`: the command is run by a shell, which runs a file without "#!"
 * as a shell script itself (POSIX, on ENOEXEC); systemd's execve() does not.
 */
async function followProgram(
  host: TargetFs,
  sink: Sink,
  source: ScriptSource,
  words: Word[],
  runBy: string,
  at: { file: string; line: number },
  f: Follow,
  viaShell: boolean,
): Promise<void> {
  const argv = unwrap(words);
  if (argv === null || argv.length === 0 || argv[0] === null || argv[0] === undefined) return;
  let prog: string = argv[0];
  let forceShell = false;
  if (isShell(prog)) {
    // sh [-opts] FILE [args]: the shell reads FILE whatever its "#!" (sh -c is read by commands.ts).
    const i = argv.findIndex((w, k) => k > 0 && (w === null || !w.startsWith('-')));
    const file = i > 0 ? argv[i] : undefined;
    if (file === undefined || argv.slice(1, i).some((w) => w !== null && /^-[a-zA-Z]*c/.test(w))) return;
    if (file === null) {
      sink.out.unknown.push({
        source,
        file: at.file,
        line: at.line,
        what: 'program',
        message: `${runBy}: ${path.posix.basename(prog)} runs a script whose name is known only at run time`,
      });
      return;
    }
    prog = file;
    forceShell = true;
  }
  const file = await locate(host, prog);
  if (file === null) return;
  const distro = distributionPath(file);
  const unknown = (message: string): void => {
    if (!distro) sink.out.unknown.push({ source, file: at.file, line: at.line, what: 'program', message: `${runBy}: ${message}` });
  };
  let real: string;
  let head: Buffer | null;
  try {
    real = await host.realTarget(file);
    head = await host.readHead(file, 256);
  } catch (e) {
    return unknown(`runs ${file}, which cannot be read (${(e as Error).message})`);
  }
  if (head === null) return; // missing: the command fails and runs nothing
  if (f.seen.has(real)) return;
  const kind = programKind(head);
  if (kind.kind === 'elf') return;
  // JSON quoting only where the name holds a control character (a CRLF file's "/bin/sh\r"), so the line stays one line.
  if (kind.kind === 'script' && !forceShell)
    return unknown(
      `runs ${file}, a ${/[\x00-\x1f]/.test(kind.interpreter) ? JSON.stringify(kind.interpreter) : kind.interpreter} script this scan does not read`,
    );
  if (kind.kind === 'no-shebang' && !forceShell && !viaShell) return;
  if (f.depth >= FOLLOW_DEPTH) return unknown(`runs ${file}, a shell script nested more than ${FOLLOW_DEPTH} deep`);
  let text: ByteString | null;
  try {
    text = await host.readBytes(file);
  } catch (e) {
    return unknown(`runs ${file}, which cannot be read (${(e as Error).message})`);
  }
  if (text === null) return;
  sink.out.read.push(file);
  const unknownsBefore = sink.out.unknown.length;
  const before = sink.out.hits.length;
  await addCommands(host, sink, source, file, text, `${runBy} via ${file}`, undefined, undefined, {
    depth: f.depth + 1,
    seen: new Set([...f.seen, real]),
    ...(f.unit !== undefined ? { unit: f.unit } : {}),
  });
  if (sink.out.hits.length > before) sink.out.contents[file] = text;
  // A package's file: commenting a line out there lasts until the next upgrade of the package.
  if (distro)
    for (const h of sink.out.hits.slice(before))
      h.neutralisable = `${file} belongs to a Debian package, whose next upgrade puts the line back: change what runs it (${runBy})`;
  // Debian's own scripts: what they run is judged by name (as before this scan followed programs), so their unknowns are not the host's.
  if (distro) sink.out.unknown.length = unknownsBefore;
}

async function addCommands(
  host: TargetFs,
  sink: Sink,
  source: ScriptSource,
  file: string,
  text: string,
  runBy: string,
  lineMap?: (l: number) => number,
  whole?: true | string,
  follow: Follow = { depth: 0, seen: new Set() },
): Promise<void> {
  // Read without a line map, the text is a script file (rc.local, a hook, a followed program); with one, a command line run by sh -c.
  const r = readShellScript(text, 0, lineMap === undefined);
  for (const p of r.problems) {
    sink.out.unknown.push({ source, file, line: lineMap ? lineMap(p.line) : p.line, what: 'program', message: p.message });
  }
  for (const c of r.commands) {
    for (const a of c.actions) {
      const line = lineMap ? lineMap(c.line) : c.line;
      await record(
        host,
        sink,
        {
          source,
          file,
          line,
          first: lineMap ? lineMap(c.first) : c.first,
          last: lineMap ? lineMap(c.last) : c.last,
          text: '',
          runBy,
          ...(follow.unit !== undefined ? { unit: follow.unit } : {}),
          neutralisable: whole ?? c.neutralisable,
        },
        a,
      );
    }
  }
  for (const c of r.programs) {
    await followProgram(host, sink, source, c.words, runBy, { file, line: lineMap ? lineMap(c.line) : c.line }, follow, true);
  }
}

/** A script file run by its "#!" line (rc.local, run-parts): read when it is a shell script, else unknown. */
async function scanExecutable(host: TargetFs, sink: Sink, source: ScriptSource, file: string, runBy: string): Promise<void> {
  let text: ByteString | null;
  try {
    text = await host.readBytes(file);
  } catch (e) {
    sink.out.unknown.push({ source, file, line: 0, what: 'program', message: `cannot be read (${(e as Error).message})` });
    return;
  }
  if (text === null) return;
  sink.out.read.push(file);
  const first = text.split('\n')[0]!.replace(/\r$/, '');
  if (!first.startsWith('#!')) {
    sink.out.unknown.push({
      source,
      file,
      line: 1,
      what: 'program',
      message: 'has no "#!" line: systemd and run-parts execve() it, which fails (ENOEXEC), so it does not run as it stands',
    });
    return;
  }
  if (shebangShell(first) === null) {
    sink.out.unknown.push({ source, file, line: 1, what: 'program', message: `runs under ${first.slice(2).trim()}, not a shell this scan reads` });
    return;
  }
  const before = sink.out.hits.length;
  await addCommands(host, sink, source, file, text, runBy, undefined, undefined, { depth: 0, seen: new Set([await host.realTarget(file)]) });
  if (sink.out.hits.length > before) sink.out.contents[file] = text;
}

async function scanRcLocal(host: TargetFs, sink: Sink): Promise<void> {
  const s = await realStat(host, RC_LOCAL);
  if (s === null || !s.st.isFile()) return;
  // systemd-rc-local-generator: access(X_OK) as root, i.e. any execute bit.
  if ((s.st.mode & 0o111) === 0) return;
  if ((await host.readLink('/etc/systemd/system/rc-local.service')) === '/dev/null') return;
  await scanExecutable(host, sink, 'rc.local', RC_LOCAL, 'rc-local.service runs it at boot');
}

async function scanCrontabs(host: TargetFs, sink: Sink): Promise<void> {
  const tabs = await loadCrontabs(host);
  sink.out.read.push(...tabs.read);
  for (const f of tabs.unreadable) sink.out.unknown.push({ source: 'crontab', file: f, line: 0, what: 'program', message: 'cannot be read' });
  for (const p of tabs.problems)
    sink.out.unknown.push({ source: 'crontab', file: p.file, line: p.line, what: 'program', message: `not read as cron reads it: ${p.message}` });
  const withHits = new Set<string>();
  for (const e of tabs.entries) {
    const before = sink.out.hits.length;
    const when = e.schedule === '@reboot' ? 'at every boot (@reboot)' : `on schedule ${e.schedule}`;
    // cron hands the command to sh -c: every command of it runs; the entry is one line, so commenting it out is always safe.
    await addCommands(host, sink, 'crontab', e.file, e.shellCommand, `cron runs it as ${e.user} ${when}`, () => e.line, true);
    if (sink.out.hits.length > before) withHits.add(e.file);
  }
  for (const f of withHits) {
    const bytes = await host.readBytes(f);
    if (bytes !== null) sink.out.contents[f] = bytes;
  }
}

async function scanIfUpdown(host: TargetFs, sink: Sink): Promise<void> {
  for (const d of (await host.readDir(NETWORK_DIR)) ?? []) {
    if (!/^if-[a-z-]+\.d$/.test(d.name)) continue;
    const dir = path.posix.join(NETWORK_DIR, d.name);
    const phase = d.name.slice(0, -2);
    for (const e of (await host.readDir(dir)) ?? []) {
      // run-parts(8) without --lsbsysinit: only these names, only executable regular files (links followed).
      if (!cronDName(e.name)) continue;
      const file = path.posix.join(dir, e.name);
      const s = await realStat(host, file);
      if (s === null || !s.st.isFile() || (s.st.mode & 0o111) === 0) continue;
      await scanExecutable(host, sink, 'if-updown', file, `ifupdown runs it (run-parts ${dir}) on ${phase} of an interface, at boot too`);
    }
  }
}

export const INTERFACES = '/etc/network/interfaces';
const IFUP = ['/usr/sbin/ifup', '/sbin/ifup'];
/** How deep `source` may nest before the scan stops with an unknown (ifupdown itself has no bound; a loop is a mistake). */
const SOURCE_DEPTH = 8;

/** The paths a `source` / `source-directory` pattern names, expanded as glob(3) does, sorted; or why it cannot be known. */
async function expandSource(host: TargetFs, pattern: string, from: string): Promise<string[] | string> {
  const kind = globKind(pattern);
  if (kind === 'unknown') return `source ${pattern}: wordexp(3) expands more than globs here (variables, quotes, substitutions), which this scan does not`;
  const abs = pattern.startsWith('/') ? pattern : path.posix.join(path.posix.dirname(from), pattern);
  if (kind === 'plain') return [path.posix.normalize(abs)];
  let paths = ['/'];
  for (const part of path.posix
    .normalize(abs)
    .split('/')
    .filter((x) => x !== '')) {
    const next: string[] = [];
    for (const dir of paths) {
      if (globKind(part) === 'plain') {
        next.push(path.posix.join(dir, part));
        continue;
      }
      const names = ((await host.readDir(dir)) ?? []).map((e) => e.name).filter((n) => matchComponent(part, n));
      next.push(...names.sort().map((n) => path.posix.join(dir, n)));
    }
    paths = next;
  }
  const out: string[] = [];
  for (const p of paths) if ((await host.lstat(p)) !== null) out.push(p);
  return out;
}

interface IfaceAt {
  stanza: IfaceStanza;
  file: string;
}

/** Every stanza of the interfaces file and what it sources, in ifupdown's order, with the files read. */
async function loadInterfaces(
  host: TargetFs,
  sink: Sink,
  file: string,
  depth: number,
  seen: Set<string>,
  acc: { ifaces: IfaceAt[]; allow: Map<string, string>; unsure: string | null; texts: Map<string, ByteString> },
): Promise<void> {
  let text: ByteString | null;
  try {
    text = await host.readBytes(file);
  } catch (e) {
    sink.out.unknown.push({
      source: 'interfaces',
      file,
      line: 0,
      what: 'program',
      message: `ifupdown reads it at boot, and it cannot be read (${(e as Error).message})`,
    });
    return;
  }
  if (text === null) return;
  const real = await host.realTarget(file);
  if (seen.has(real)) return;
  seen.add(real);
  sink.out.read.push(file);
  acc.texts.set(file, text);
  for (const e of readInterfaces(text)) {
    if (e.kind === 'iface') acc.ifaces.push({ stanza: e.stanza, file });
    else if (e.kind === 'allow') {
      if (e.cls !== 'auto' && e.cls !== 'hotplug') continue;
      for (const n of e.names) {
        // A pattern ("/eth*/=eth") matches names known only when ifupdown runs.
        if (n.startsWith('/')) acc.unsure ??= `${file}:${e.line} selects interfaces by the pattern ${n}`;
        else if (!acc.allow.has(n)) acc.allow.set(n, `${e.cls === 'auto' ? 'auto' : 'allow-hotplug'} ${n} (${file}:${e.line})`);
      }
    } else if (e.kind === 'mapping') acc.unsure ??= `${file}:${e.line} maps interfaces by a script`;
    else if (e.kind === 'rename') acc.unsure ??= `${file}:${e.line} renames interfaces`;
    else {
      const paths = await expandSource(host, e.pattern, file);
      if (typeof paths === 'string') {
        sink.out.unknown.push({ source: 'interfaces', file, line: e.line, what: 'program', message: paths });
        continue;
      }
      if (depth >= SOURCE_DEPTH) {
        sink.out.unknown.push({ source: 'interfaces', file, line: e.line, what: 'program', message: `source nested more than ${SOURCE_DEPTH} deep` });
        continue;
      }
      for (const p of paths) {
        if (!e.directory) {
          await loadInterfaces(host, sink, p, depth + 1, seen, acc);
          continue;
        }
        const names = ((await host.readDir(p)) ?? [])
          .map((d) => d.name)
          .filter(sourceDirectoryName)
          .sort();
        for (const n of names) await loadInterfaces(host, sink, path.posix.join(p, n), depth + 1, seen, acc);
      }
    }
  }
}

/**
 * The pre-up/up/post-up lines of /etc/network/interfaces (and what it
 * sources) for the interfaces ifupdown brings up at boot: lo (ifupdown
 * 0.8 always brings it up with `ifup -a`), those named by auto/allow-auto
 * (networking.service) and allow-hotplug (udev, at boot for the devices
 * present). When a mapping, a rename or a pattern decides at run time which
 * stanza comes up, every stanza is read: a line named in the plan is better
 * than a miss. Down lines run when the interface goes down, and the next
 * boot starts from the kernel's defaults again, so they are not read.
 */
async function scanInterfaces(host: TargetFs, sink: Sink): Promise<void> {
  let installed = false;
  for (const p of IFUP) if ((await realStat(host, p).catch(() => null)) !== null) installed = true;
  if (!installed) return; // nothing reads the file at boot without ifupdown
  const acc = { ifaces: [] as IfaceAt[], allow: new Map<string, string>(), unsure: null as string | null, texts: new Map<string, ByteString>() };
  const done = new Set<string>();
  await loadInterfaces(host, sink, INTERFACES, 0, new Set(), acc);
  if (!acc.allow.has('lo')) acc.allow.set('lo', 'lo, which ifupdown always brings up at boot');
  const byName = new Map<string, IfaceAt[]>();
  for (const i of acc.ifaces) byName.set(i.stanza.name, [...(byName.get(i.stanza.name) ?? []), i]);
  for (const i of acc.ifaces) {
    const why = acc.allow.get(i.stanza.name) ?? (acc.unsure !== null ? `it may be brought up at boot: ${acc.unsure}` : null);
    if (why === null) continue;
    // inherits: the options of the named stanza come with this one (ifupdown copies them).
    const chain: IfaceAt[] = [i];
    for (let at = i; at.stanza.inherits !== null && chain.length < 8;) {
      const parent = byName.get(at.stanza.inherits)?.[0];
      if (parent === undefined || chain.includes(parent)) break;
      chain.push(parent);
      at = parent;
    }
    for (const st of chain) {
      for (const o of st.stanza.options) {
        if (!UP_OPTIONS.has(o.key)) continue;
        // One option line, read once even when several interfaces inherit it.
        if (done.has(`${st.file}:${o.first}`)) continue;
        done.add(`${st.file}:${o.first}`);
        const before = sink.out.hits.length;
        const runBy = `ifupdown runs it through /bin/sh (${o.key} of iface ${i.stanza.name} ${i.stanza.family} ${i.stanza.method}${st === i ? '' : `, inherited from ${st.stanza.name}`}) when it brings ${i.stanza.name} up at boot: ${why}`;
        // Commenting out every physical line of the option removes exactly it: ifupdown skips "#" lines and a comment never continues.
        await addCommands(host, sink, 'interfaces', st.file, o.value, runBy, () => o.first, true);
        for (const h of sink.out.hits.slice(before)) h.last = o.last;
        if (sink.out.hits.length > before) sink.out.contents[st.file] = acc.texts.get(st.file)!;
      }
    }
  }
}

const EXEC_KEYS = ['ExecStartPre', 'ExecStart', 'ExecStartPost'] as const;

/** Services named by a link in a dependency directory of any unit directory (template instances as their template), /dev/null links too. */
function linkedServices(graph: UnitGraph): Set<string> {
  const out = new Set<string>();
  for (const l of dependencyLinks(graph)) {
    if (!l.name.endsWith('.service')) continue;
    out.add(l.name);
    const at = l.name.indexOf('@');
    if (at > 0) out.add(`${l.name.slice(0, at)}@.service`);
  }
  return out;
}

/** Services that start at boot, each with why: the graph's chain from default.target, or a dependency-directory link. */
function bootServices(graph: UnitGraph): Map<string, string> {
  const out = new Map<string, string>();
  const services = [...graph.units.keys()].filter((n) => n.endsWith('.service'));
  for (const [name, p] of bootPaths(graph, services)) out.set(name, `it starts at boot: ${describeBootPath(graph, p, { still: false })}`);
  for (const name of linkedServices(graph)) if (!out.has(name)) out.set(name, 'it is enabled');
  return out;
}

/** The system's units as the unit scans read them, computed once per scan. */
interface BootUnits {
  /** Services that start at boot, each with why (bootServices). */
  enabled: Map<string, string>;
  units: ReturnType<typeof unitFilesOf>;
}

async function bootUnitsOf(host: TargetFs): Promise<BootUnits> {
  const graph = await systemUnitGraph(host);
  return { enabled: bootServices(graph), units: unitFilesOf(graph) };
}

async function scanUnits(host: TargetFs, sink: Sink, { enabled, units }: BootUnits): Promise<void> {
  if (enabled.size === 0) return;
  for (const [name, why] of [...enabled].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const u = units.get(name);
    if (!u || u.masked) continue;
    for (const key of EXEC_KEYS) {
      // Every command of a value ("a ; b" runs both); a value systemd refuses runs nothing past the refusal.
      for (const { directive: d, command: cmd } of execCommandsOf(u.directives, key)) {
        if (cmd === null) continue;
        const words = [cmd.path, ...cmd.argv.slice(1)];
        for (const a of execActions(words)) {
          await record(
            host,
            sink,
            {
              source: 'unit',
              file: d.file,
              line: d.line,
              first: d.line,
              last: d.line,
              text: `${key}=${d.value}`,
              runBy: `${key}= of ${name}: ${why}`,
              unit: name,
              neutralisable: `it is a unit's command line: disable ${name}, or override ${key}= in a drop-in (systemctl edit ${name})`,
            },
            a,
            `${key}= of ${name}: `,
          );
        }
        await followProgram(
          host,
          sink,
          'unit',
          words,
          `${key}= of ${name} (${why})`,
          { file: d.file, line: d.line },
          { depth: 0, seen: new Set(), unit: name },
          false,
        );
      }
    }
  }
}

/**
 * Sysctl files a boot unit applies from its own configuration
 * (sysctl-file-writers.ts): a `sysctl-load` hit at the line that names the
 * file, when the unit starts at boot, runs the writer's program and its
 * configuration turns it on; nothing when the file is missing or empty (the
 * programs test -s first).
 */
async function scanSysctlFileWriters(host: TargetFs, sink: Sink, { enabled, units }: BootUnits): Promise<void> {
  for (const w of SYSCTL_FILE_WRITERS) {
    const why = enabled.get(w.unit);
    const u = units.get(w.unit);
    if (why === undefined || !u || u.masked) continue;
    const runs = execCommandsOf(u.directives, 'ExecStart').some(
      ({ command }) => command !== null && command.path !== null && path.posix.basename(command.path) === path.posix.basename(w.program),
    );
    if (!runs) continue;
    const found = await readWriter(host, w);
    if (found === null) continue;
    if (!('at' in found)) {
      sink.out.unknown.push({ source: 'unit', file: found.file, line: found.line, what: 'sysctl', message: found.message });
      continue;
    }
    const loaded = await readLoads(host, [found.file]);
    if (typeof loaded === 'string' || loaded.every((l) => l.content === '')) continue;
    const config = await host.readBytes(found.at.file);
    if (config !== null) sink.out.contents[found.at.file] = config;
    sink.out.read.push(found.at.file);
    sink.out.hits.push({
      source: 'unit',
      file: found.at.file,
      line: found.at.line,
      first: found.at.line,
      last: found.at.line,
      text: '',
      runBy: `${w.unit} applies ${found.file} when it starts at boot (${w.program} runs ${w.command} $${w.fileVar}; ${why})`,
      unit: w.unit,
      neutralisable: `it is ${w.unit}'s setting: commenting it out drops every line of ${found.file}; set conflict_policy: resolve, or edit ${found.file} by hand`,
      action: { kind: 'sysctl-load', files: [found.file] },
      loaded,
    });
  }
}

/**
 * wg-quick's PreUp and PostUp snippets (wg-quick.ts) for each
 * wg-quick@NAME.service that starts at boot and runs `wg-quick up`: each
 * read as the shell script wg-quick evals, at its line of the configuration.
 * A snippet is the configuration's own setting: a person edits it.
 */
async function scanWgQuick(host: TargetFs, sink: Sink, { enabled, units }: BootUnits): Promise<void> {
  for (const [name, why] of [...enabled].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const m = /^wg-quick@(.+)\.service$/.exec(name);
    if (!m) continue;
    const u = units.get(name) ?? units.get('wg-quick@.service');
    if (!u || u.masked) continue;
    const up = execCommandsOf(u.directives, 'ExecStart').find(
      ({ command }) => command !== null && command.path !== null && path.posix.basename(command.path) === 'wg-quick' && command.argv[1] === 'up',
    );
    if (up === undefined) continue;
    const file = wgConfigFile(m[1]!);
    if (file === null) {
      // wg-quick takes an instance that is no interface name as a path to its configuration, relative to the unit's directory: not followed.
      sink.out.unknown.push({
        source: 'unit',
        file: up.directive.file,
        line: up.directive.line,
        what: 'program',
        message: `${name} runs wg-quick up with "${m[1]!}", which is no interface name, so wg-quick reads it as the path of its configuration; its PreUp and PostUp lines are not read`,
      });
      continue;
    }
    let text: ByteString | null;
    try {
      text = await host.readBytes(file);
    } catch (e) {
      sink.out.unknown.push({
        source: 'unit',
        file,
        line: 0,
        what: 'program',
        message: `${name} reads it at boot, and it cannot be read (${(e as Error).message})`,
      });
      continue;
    }
    if (text === null) continue;
    sink.out.read.push(file);
    const before = sink.out.hits.length;
    for (const h of wgQuickUpHooks(text, m[1]!)) {
      const edit = `it is ${h.key} of ${file}:${h.line}, which wg-quick runs whole: edit or remove that line`;
      await addCommands(host, sink, 'unit', file, h.script, `${name} runs ${h.key} of ${file} when it starts at boot (${why})`, () => h.line, edit, {
        depth: 0,
        seen: new Set(),
        unit: name,
      });
    }
    if (sink.out.hits.length > before) sink.out.contents[file] = text;
  }
}

/** Every boot-time script hit and unknown on the host (live or --root). */
/**
 * Shorewall's start at boot (shorewall.ts): `shorewall start` writes
 * IP_FORWARDING into net.ipv4.ip_forward, a `sysctl-write` hit at the line
 * that sets it (the unit's ExecStart= line when the default, On, decides).
 * Nothing when shorewall.conf is missing (shorewall does not start) or says Keep.
 */
async function scanShorewall(host: TargetFs, sink: Sink, { enabled, units }: BootUnits): Promise<void> {
  const why = enabled.get(SHOREWALL_UNIT);
  const u = units.get(SHOREWALL_UNIT);
  if (why === undefined || !u || u.masked) return;
  const start = execCommandsOf(u.directives, 'ExecStart').find(
    ({ command }) => command !== null && path.posix.basename(command.path ?? '') === 'shorewall' && command.argv.includes('start'),
  );
  if (!start) return;
  const text = await host.readBytes(SHOREWALL_CONF);
  if (text === null) return;
  sink.out.read.push(SHOREWALL_CONF);
  const f = ipForwarding(readShorewallConf(text));
  if ('unknown' in f) {
    sink.out.unknown.push({
      source: 'unit',
      file: SHOREWALL_CONF,
      line: f.line,
      what: 'sysctl',
      message: `${SHOREWALL_UNIT} starts at boot (${why}): ${f.unknown}`,
    });
    return;
  }
  if (f.writes === null) return;
  const at = f.line === null ? { file: start.directive.file, line: start.directive.line } : { file: SHOREWALL_CONF, line: f.line };
  if (f.line !== null) sink.out.contents[SHOREWALL_CONF] = text;
  const setting = f.line === null ? `IP_FORWARDING is not set in ${SHOREWALL_CONF} (its default is On)` : `IP_FORWARDING at ${SHOREWALL_CONF}:${f.line}`;
  sink.out.hits.push({
    source: 'unit',
    ...at,
    first: at.line,
    last: at.line,
    text: f.line === null ? `ExecStart=${start.directive.value}` : '',
    runBy: `${SHOREWALL_UNIT} writes ${f.writes} to /proc/sys/net/ipv4/ip_forward when it starts at boot (${setting}; ${why})`,
    unit: SHOREWALL_UNIT,
    // Commented out, the line leaves Shorewall's default (On, a write of 1); with no line there is nothing to comment out.
    neutralisable: f.line !== null || `set IP_FORWARDING=Keep in ${SHOREWALL_CONF}, or disable ${SHOREWALL_UNIT}`,
    action: { kind: 'sysctl-write', key: 'net.ipv4.ip_forward', value: f.writes, how: `shorewall start (IP_FORWARDING)` },
  });
}

/**
 * One OpenVPN script (openvpn.ts) as openvpn execs it: argv_parse_cmd's
 * words, argv[0] relative to the directory it runs in (no PATH search); a
 * `sh FILE` operand relative to the same directory. openvpn appends the
 * tunnel's parameters (device, MTU, addresses, "init") after these words;
 * they are not judged (a sysctl -w refuses them after its own writes).
 * Nothing when argv[0] is no executable file: openvpn then refuses to start.
 */
async function openvpnScript(
  host: TargetFs,
  sink: Sink,
  inst: OpenvpnInstance,
  s: OpenvpnScript,
  runDir: string,
  place: { file: string; line: number },
): Promise<void> {
  const argv = argvParseCmd(s.command);
  const resolve = (w: string): string => path.posix.resolve(runDir, w);
  if (!argv[0]!.startsWith('/') && path.posix.resolve(s.cwd, argv[0]!) !== resolve(argv[0]!)) {
    sink.out.unknown.push({
      source: 'unit',
      ...place,
      what: 'program',
      message: `${inst.unit}: --${s.option} ${argv[0]!} is relative, and a later cd changes the directory it runs in (${runDir})`,
    });
    return;
  }
  const prog = resolve(argv[0]!);
  const st = await realStat(host, prog).catch(() => null);
  if (st === null || !st.st.isFile() || (st.st.mode & 0o111) === 0) return;
  const words: string[] = [prog, ...argv.slice(1)];
  if (isShell(prog)) {
    const i = words.findIndex((w, k) => k > 0 && !w.startsWith('-'));
    if (i > 0 && !words.slice(1, i).some((w) => /^-[a-zA-Z]*c/.test(w))) words[i] = resolve(words[i]!);
  }
  const { file, line } = place;
  const where = s.at.file === null ? `the command line of ${inst.unit}` : `${s.at.file}:${s.at.line}`;
  const runBy = `${inst.unit} runs --${s.option} of ${where} when its tunnel comes up at boot (${inst.why})`;
  const fix = `it is the ${s.option} option of ${where}, which openvpn runs whole: edit or remove that line`;
  for (const a of execActions(words))
    await record(
      host,
      sink,
      { source: 'unit', file, line, first: line, last: line, text: '', runBy, unit: inst.unit, neutralisable: fix },
      a,
      `${inst.unit}: `,
    );
  await followProgram(host, sink, 'unit', words, runBy, { file, line }, { depth: 0, seen: new Set(), unit: inst.unit }, false);
}

/**
 * OpenVPN instances that start at boot (openvpn-units.ts: enabled, or
 * linked by openvpn-generator): their configuration read as openvpn reads
 * it (openvpn.ts), and each up / route-up / ipchange / tls-verify command
 * read when script-security is 2 or more (below, openvpn runs none). A
 * configuration openvpn refuses starts no tunnel and runs nothing.
 */
async function scanOpenvpn(host: TargetFs, sink: Sink, { enabled, units }: BootUnits): Promise<void> {
  const found = await openvpnBootInstances(host, enabled);
  for (const x of found.unknown) sink.out.unknown.push({ source: 'unit', ...x, what: 'program' });
  for (const inst of found.instances.sort((a, b) => (a.unit < b.unit ? -1 : a.unit > b.unit ? 1 : 0))) {
    const u = units.get(inst.unit) ?? units.get(`${inst.template}@.service`);
    if (!u || u.masked) continue;
    const cmd = openvpnCommandOf(u, inst.instance);
    if (cmd === null) continue;
    if (!('argv' in cmd)) {
      sink.out.unknown.push({ source: 'unit', ...cmd, what: 'program' });
      continue;
    }
    const r = await readOpenvpnOptions(cmd.argv, cmd.workingDirectory, {
      read: (f) => host.readBytes(f),
      executable: async (f) => {
        const st = await realStat(host, f).catch(() => null);
        return st !== null && st.st.isFile() && (st.st.mode & 0o111) !== 0;
      },
    });
    const at = (a: { file: string | null; line: number }) =>
      a.file === null ? { file: cmd.directive.file, line: cmd.directive.line } : { file: a.file, line: a.line };
    if ('unknown' in r) {
      sink.out.unknown.push({
        source: 'unit',
        ...at(r.at),
        what: 'program',
        message: `${inst.unit} starts at boot (${inst.why}); its options cannot be judged: ${r.unknown}`,
      });
      continue;
    }
    if ('refused' in r) continue;
    sink.out.read.push(...r.options.read);
    if ((r.options.scriptSecurity?.level ?? 1) < SSEC_SCRIPTS) continue;
    const before = sink.out.hits.length;
    for (const s of r.options.scripts) {
      if (r.options.chroot !== null && (s.option === 'ipchange' || s.option === 'tls-verify')) {
        sink.out.unknown.push({
          source: 'unit',
          ...at(s.at),
          what: 'program',
          message: `${inst.unit}: --${s.option} runs inside chroot ${r.options.chroot}, which this scan does not follow`,
        });
        continue;
      }
      await openvpnScript(host, sink, inst, s, r.options.runDir, at(s.at));
    }
    for (const h of sink.out.hits.slice(before)) {
      if (sink.out.contents[h.file] !== undefined) continue;
      const bytes = await host.readBytes(h.file);
      if (bytes !== null) sink.out.contents[h.file] = bytes;
    }
  }
}

/** plugin_sysctl.py _apply_system_sysctl's files as read now (a missing or unreadable one is skipped, as tuned skips it). */
async function readReapplied(host: TargetFs): Promise<ReappliedSysctl> {
  const names = new Map<string, string>();
  for (const dir of TUNED_REAPPLY_DIRS) {
    const entries = await host.readDir(dir).catch(() => null);
    for (const e of entries ?? []) if (e.name.endsWith('.conf') && !names.has(e.name)) names.set(e.name, path.posix.join(dir, e.name));
  }
  const files: LoadedSysctlFile[] = [];
  for (const file of [...[...names.keys()].sort().map((n) => names.get(n)!), TUNED_REAPPLY_LAST]) {
    const got = await readLoads(host, [file]).catch(() => null);
    if (Array.isArray(got)) files.push(...got);
  }
  return { dirs: TUNED_REAPPLY_DIRS, files, last: TUNED_REAPPLY_LAST };
}

/** Whether tuned, with the line commented out as neutralise_scripts would, no longer writes that key to another value than it does now. */
async function tunedWithout(host: TargetFs, w: TunedWrite & { value: string }, content: ByteString): Promise<boolean> {
  const text = Buffer.from(commentOutRanges(content, [{ first: w.line, last: w.line }], scriptMarker('probe')), 'latin1').toString('utf8');
  const again = await tunedAtBoot(host, new Map([[w.file, text]]));
  return again.unknown.length === 0 && !again.writes.some((x) => x.key === w.key);
}

/** One tuned write as a hit: the profile line that sets the key, commented out only in an /etc profile where that leaves the key alone. */
async function tunedHit(host: TargetFs, sink: Sink, boot: TunedBoot, w: TunedWrite & { value: string }, why: string): Promise<void> {
  const content = await host.readBytes(w.file);
  if (content === null) return;
  sink.out.contents[w.file] = content;
  const at = boot.reapply.at;
  const off = boot.reapply.on ? '' : `, and reapply_sysctl is off at ${at!.file}:${at!.line}, so no sysctl.d file is re-applied after it`;
  const fix = `set reapply_sysctl = 1 in /etc/tuned/tuned-main.conf (tuned then re-applies /etc/sysctl.d after its profile)`;
  // Only a file of the admin's, at its own path (a link into /usr/lib would edit the package's file).
  const own = w.file.startsWith('/etc/tuned/') && (await host.realTarget(w.file)) === w.file;
  const neutralisable = !own
    ? `${w.file} is not a file of /etc/tuned (the tuned package's, or a link): ${fix}, or give the profile an override in /etc/tuned/NAME/tuned.conf`
    : (await tunedWithout(host, w, content)) || `commenting it out leaves another profile's value for ${w.key}: ${fix}`;
  sink.out.hits.push({
    source: 'unit',
    file: w.file,
    line: w.line,
    first: w.line,
    last: w.line,
    text: '',
    runBy: `${TUNED_UNIT} writes ${w.value} to ${sysctlProcPath(w.key)} when it starts at boot (its profile's [sysctl]${off}; ${why})`,
    unit: TUNED_UNIT,
    neutralisable,
    action: { kind: 'sysctl-write', key: w.key, value: w.value, how: 'tuned profile [sysctl]' },
    ...(boot.reapply.on ? { reapplied: await readReapplied(host) } : {}),
  });
}

/**
 * tuned.service at boot (tuned.ts): each key its profile's [sysctl] writes is
 * a sysctl-write hit at the profile line; what cannot be judged is unknown,
 * naming the key's /proc/sys path so only a resource wanting that key is
 * concerned. With reapply_sysctl (the default) the hit carries the files
 * tuned re-applies after it, which the judge reads as the plan leaves them.
 */
async function scanTuned(host: TargetFs, sink: Sink, { enabled, units }: BootUnits): Promise<void> {
  const why = enabled.get(TUNED_UNIT);
  const u = units.get(TUNED_UNIT);
  if (why === undefined || !u || u.masked) return;
  const runs = execCommandsOf(u.directives, 'ExecStart').some(({ command }) => command !== null && path.posix.basename(command.path ?? '') === 'tuned');
  if (!runs) return;
  const boot = await tunedAtBoot(host);
  sink.out.read.push(...boot.read);
  const reapplied = boot.reapply.on ? await readReapplied(host) : undefined;
  for (const x of boot.unknown)
    sink.out.unknown.push({ source: 'unit', file: x.file, line: x.line, what: 'sysctl', message: `${TUNED_UNIT} starts at boot (${why}): ${x.message}` });
  for (const w of boot.writes) {
    if ('value' in w) await tunedHit(host, sink, boot, w, why);
    else
      sink.out.unknown.push({
        source: 'unit',
        file: w.file,
        line: w.line,
        what: 'sysctl',
        message: `${TUNED_UNIT} starts at boot (${why}) and its profile sets ${w.key}: ${w.unknown}`,
        path: sysctlProcPath(w.key),
        ...(reapplied ? { reapplied } : {}),
      });
  }
}

export function scanBootScripts(host: TargetFs): Promise<BootScripts> {
  return host.memo('boot-scripts', () => scanAll(host));
}

async function scanAll(host: TargetFs): Promise<BootScripts> {
  const sink: Sink = { out: { hits: [], unknown: [], contents: {}, read: [] } };
  await scanRcLocal(host, sink);
  await scanCrontabs(host, sink);
  await scanIfUpdown(host, sink);
  await scanInterfaces(host, sink);
  const boot = await bootUnitsOf(host);
  await scanUnits(host, sink, boot);
  await scanSysctlFileWriters(host, sink, boot);
  await scanWgQuick(host, sink, boot);
  await scanShorewall(host, sink, boot);
  await scanOpenvpn(host, sink, boot);
  await scanTuned(host, sink, boot);
  for (const h of sink.out.hits) {
    if (h.text === '') h.text = lineText(sink.out.contents[h.file] ?? '', h.line);
  }
  return sink.out;
}
