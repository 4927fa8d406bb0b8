// Host is the only module that touches the machine. Every path a provider
// names is a path on the *target* (e.g. "/etc/fstab"); Host maps it under
// `root`, which is "/" on a live host and an unbooted image with --root.
import { constants as fsc, lstatSync, promises as fs, readdirSync, readlinkSync } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import path from 'node:path';
import { HostError, describeFsError } from './errors.js';
import { bytesOf, type ByteString } from './bytes.js';
import { MAX_READ_BYTES, NotRegularFileError, readRegular, readRegularHead } from './regular-file.js';

export interface CommandResult {
  command: string;
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Commands that only read or that work on the root tree (systemctl --root) may run offline. */
  offlineSafe?: boolean;
  /** Input to feed on stdin. */
  input?: string;
  timeoutMs?: number;
  cwd?: string;
  env?: Record<string, string>;
}

export type CommandRunner = (cmd: string, args: string[], opts: RunOptions) => Promise<CommandResult>;

const defaultRunner: CommandRunner = async (cmd, args, opts) => {
  // execa (and what it pulls in) initialises on the first command, not at start-up.
  const { execa } = await import('execa');
  const r = await execa(cmd, args, {
    reject: false,
    stdin: opts.input === undefined ? 'ignore' : 'pipe',
    input: opts.input,
    timeout: opts.timeoutMs,
    cwd: opts.cwd,
    env: opts.env,
    extendEnv: true,
    stripFinalNewline: false,
  });
  return {
    command: [cmd, ...args].join(' '),
    exitCode: typeof r.exitCode === 'number' ? r.exitCode : 127,
    stdout: String(r.stdout ?? ''),
    stderr: String(r.stderr ?? (r.failed ? r.shortMessage : '')),
  };
};

export interface HostOptions {
  root?: string;
  runner?: CommandRunner;
  /**
   * Tests only: treat a fixture root as a running host, so live branches
   * (/proc reads, runtime commands through a fake runner) can be exercised
   * without touching this machine. Defaults to root === "/".
   */
  live?: boolean;
}

/**
 * The target's file system, read-only: what observers and a provider's
 * observe() need. A function that takes only this runs no command and writes
 * nothing; its type shows it. Paths are target paths, clamped to `root`.
 */
export interface TargetFs {
  readonly root: string;
  /** Live: the running system, whose /proc and /sys may be read (readKernel). */
  readonly live: boolean;
  realTarget(target: string): Promise<string>;
  readFile(target: string): Promise<string | null>;
  readBytes(target: string): Promise<ByteString | null>;
  readHead(target: string, length: number): Promise<Buffer | null>;
  locate(target: string, opts: { follow: boolean }): Promise<{ target: string; abs: string }>;
  readDir(target: string): Promise<Dirent[] | null>;
  lstat(target: string): Promise<Stats | null>;
  readLink(target: string): Promise<string | null>;
  readLinksIn(dir: string): Promise<Map<string, string | null> | null>;
  exists(target: string): Promise<boolean>;
  assertLive(what: string): void;
  readKernel(target: string): Promise<string | null>;
  memo<T>(key: string, read: () => Promise<T>): Promise<T>;
}

/** Runs commands with argument arrays; offline only `offlineSafe` ones (they act on the root tree, or only read). */
export interface Commands {
  readonly root: string;
  readonly live: boolean;
  run(cmd: string, args: string[], opts?: RunOptions): Promise<CommandResult>;
  runChecked(cmd: string, args: string[], opts?: RunOptions): Promise<CommandResult>;
  isRoot(): boolean;
}

/** What an observer that both reads and runs (systemctl show, ansible --version) is given. */
export type TargetHost = TargetFs & Commands;

const MAX_SYMLINK_HOPS = 40;

/**
 * The kernel's own files (/proc, /sys, live only) are generated, finite and
 * can outgrow MAX_READ_BYTES honestly: /proc/net/tcp has a line of 150 bytes
 * per socket, 15 MB for 100,000 sockets. They still get a bound.
 */
export const MAX_KERNEL_READ_BYTES = 256 * 1024 * 1024;

/** A target path with its symlinks resolved, and how many links that took. */
interface Resolved {
  readonly parts: readonly string[];
  readonly path: string;
  readonly hops: number;
}
const TOP: Resolved = { parts: [], path: '/', hops: 0 };

export class Host implements TargetFs, Commands {
  readonly root: string;
  /** Live: the running system. Offline: an unbooted tree; no /proc, /sys or runtime actions. */
  readonly live: boolean;
  private readonly runner: CommandRunner;
  /**
   * readlink results by build-machine path (null: not a link), so a tree of
   * thousands of files resolves each directory once. The write door calls
   * forgetLinks() after every change it makes.
   */
  private readonly links = new Map<string, string | null>();

  /** Whole-tree readings several providers share in one observation (memo()); gone with forgetLinks(). */
  private readonly memos = new Map<string, Promise<unknown>>();

  /** realTarget's resolved directories by normalised target path; gone with forgetLinks(), like the links they were read from. */
  private readonly dirs = new Map<string, Resolved>();

  constructor(opts: HostOptions = {}) {
    this.root = path.resolve(opts.root ?? '/');
    this.live = opts.live ?? this.root === '/';
    this.runner = opts.runner ?? defaultRunner;
  }

  /** Path on the build machine for a target path, without following symlinks. */
  private hostPath(target: string): string {
    if (target !== '/' && isNormalAbsolute(target)) return this.root === '/' ? target : this.root + target;
    const norm = path.posix.normalize('/' + target);
    return this.root === '/' ? norm : path.join(this.root, norm);
  }

  /**
   * Resolves every symlink in `target` the way the target's own kernel would,
   * but with the root clamped: an absolute link inside an image points into
   * the image, and ".." never climbs above the root. Returns a target path.
   */
  async realTarget(target: string): Promise<string> {
    const parts = (isNormalAbsolute(target) ? target : path.posix.normalize('/' + target)).split('/').filter(Boolean);
    if (parts.length === 0) return '/';
    // The directories on the way resolve the same inside every path below
    // them: kept (until forgetLinks) with the hops they used, so a tree of
    // files in one directory walks each directory's components once.
    const keys: string[] = [];
    let key = '';
    for (let i = 0; i < parts.length - 1; i++) keys.push((key += '/' + parts[i]));
    let n = keys.length;
    while (n > 0 && !this.dirs.has(keys[n - 1]!)) n--;
    let at: Resolved = n === 0 ? TOP : this.dirs.get(keys[n - 1]!)!;
    for (; n < parts.length; n++) {
      at = this.step(at, parts[n]!, target);
      if (n < keys.length) this.dirs.set(keys[n]!, at);
    }
    return at.path;
  }

  /** `from` followed by one more component, every symlink on the way resolved (the hop count goes on from `from`'s). */
  private step(from: Resolved, next: string, target: string): Resolved {
    let pending = [next];
    let resolved = from.parts.slice();
    let hops = from.hops;
    while (pending.length > 0) {
      const part = pending.shift()!;
      if (part === '..') {
        resolved.pop();
        continue;
      }
      if (part === '.') continue;
      const candidate = resolved.length === 0 ? '/' + part : '/' + resolved.join('/') + '/' + part;
      const link = this.readlinkCached(this.hostPath(candidate));
      if (link === null) {
        resolved.push(part);
        continue;
      }
      if (++hops > MAX_SYMLINK_HOPS) throw new HostError(`too many levels of symbolic links resolving ${target}`, target, 'ELOOP');
      const linkParts = link.split('/').filter(Boolean);
      if (link.startsWith('/')) resolved = [];
      pending = [...linkParts, ...pending];
    }
    return { parts: resolved, path: '/' + resolved.join('/'), hops };
  }

  // Reads use the synchronous calls: a CLI has nothing to overlap, and they
  // cost a fraction of a thread-pool round trip per file in large trees.
  private readlinkCached(abs: string): string | null {
    const known = this.links.get(abs);
    if (known !== undefined) return known;
    let link: string | null;
    try {
      link = readlinkSync(abs);
    } catch {
      link = null;
    }
    this.links.set(abs, link);
    return link;
  }

  /** After a change to the tree (the write door's), resolve links and shared readings afresh. */
  forgetLinks(): void {
    this.links.clear();
    this.memos.clear();
    this.dirs.clear();
  }

  /**
   * One reading of the tree under `key` until the next change (forgetLinks):
   * SwapOff, SysctlFile and ModulesLoad each scan the boot scripts, and the
   * host's files are the same for all three. The result is shared: callers
   * must not mutate it.
   */
  memo<T>(key: string, read: () => Promise<T>): Promise<T> {
    const seen = this.memos.get(key);
    if (seen) return seen as Promise<T>;
    const p = read();
    this.memos.set(key, p);
    // A failed reading is not kept: the next caller reads again and sees the error itself.
    p.catch(() => this.memos.delete(key));
    return p;
  }

  /**
   * Reads a file the tool only interprets (YAML, os-release, unit files) as
   * UTF-8 text; null when it does not exist. Follows symlinks inside the root.
   */
  async readFile(target: string): Promise<string | null> {
    const b = await this.readBuffer(target);
    return b === null ? null : b.toString('utf8');
  }

  /**
   * Reads a file the tool may rewrite (fstab, sysctl.d, modprobe.d,
   * modules-load.d) as a byte string, so that every byte it does not change
   * is written back exactly. Null when it does not exist.
   */
  async readBytes(target: string): Promise<ByteString | null> {
    const b = await this.readBuffer(target);
    return b === null ? null : bytesOf(b);
  }

  /**
   * Regular files only (regular-file.ts): a fifo, socket or device is a
   * NotRegularFileError naming it, a file over MAX_READ_BYTES a
   * FileTooLargeError; never a read that blocks or does not end.
   */
  private async readBuffer(target: string, limit = MAX_READ_BYTES): Promise<Buffer | null> {
    try {
      return readRegular(this.hostPath(await this.realTarget(target)), target, { limit }).bytes;
    } catch (e) {
      if (isMissing(e)) return null;
      if (e instanceof HostError) throw e;
      throw new HostError(`cannot read ${target}: ${describeFsError(e)}`, target, (e as NodeJS.ErrnoException).code);
    }
  }

  /**
   * The first `length` bytes of a regular file, never the whole file (a swap
   * file is gigabytes); null when it does not exist or is not a regular file.
   * Follows symlinks inside the root.
   */
  async readHead(target: string, length: number): Promise<Buffer | null> {
    try {
      return readRegularHead(this.hostPath(await this.realTarget(target)), target, length);
    } catch (e) {
      if (isMissing(e) || e instanceof NotRegularFileError) return null;
      if (e instanceof HostError) throw e;
      throw new HostError(`cannot read ${target}: ${describeFsError(e)}`, target, (e as NodeJS.ErrnoException).code);
    }
  }

  /**
   * Where a target path lives on the build machine, with every directory on
   * the way resolved inside the root (and the last component too when
   * `follow`). The write door is the only caller that writes there; `ansible
   * -m setup` runs in the checkout found this way.
   */
  async locate(target: string, opts: { follow: boolean }): Promise<{ target: string; abs: string }> {
    let at: string;
    if (opts.follow) at = await this.realTarget(target);
    else {
      const norm = path.posix.normalize('/' + target);
      const dir = await this.realTarget(path.posix.dirname(norm));
      at = path.posix.join(dir, path.posix.basename(norm));
    }
    return { target: at, abs: this.hostPath(at) };
  }

  /** Entries of a directory, sorted; null when it does not exist. */
  async readDir(target: string): Promise<Dirent[] | null> {
    try {
      const entries = readdirSync(this.hostPath(await this.realTarget(target)), { withFileTypes: true });
      return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (e) {
      if (isMissing(e) || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw new HostError(`cannot list ${target}: ${describeFsError(e)}`, target);
    }
  }

  /** lstat of the target path itself (the last component is not followed). */
  async lstat(target: string): Promise<Stats | null> {
    try {
      return lstatSync(this.hostPath(await this.inRealDir(target)));
    } catch (e) {
      if (isMissing(e)) return null;
      throw new HostError(`cannot stat ${target}: ${describeFsError(e)}`, target);
    }
  }

  /** `target` with its directory's symlinks resolved, its last component not followed. */
  private async inRealDir(target: string): Promise<string> {
    if (target !== '/' && isNormalAbsolute(target)) {
      const cut = target.lastIndexOf('/');
      const dir = await this.realTarget(cut === 0 ? '/' : target.slice(0, cut));
      return (dir === '/' ? '' : dir) + target.slice(cut);
    }
    const dir = await this.realTarget(path.posix.dirname(target));
    return path.posix.join(dir, path.posix.basename(target));
  }

  /** The raw text of a symlink, or null when `target` is not a symlink. */
  async readLink(target: string): Promise<string | null> {
    try {
      return readlinkSync(this.hostPath(await this.inRealDir(target)));
    } catch {
      return null;
    }
  }

  /**
   * The link texts of the symlinks directly in `dir` (e.g. /proc/PID/fd),
   * resolving `dir` once instead of once per entry; null when `dir` is gone.
   * An entry whose link cannot be read (gone meanwhile, access denied, not a
   * link) maps to null.
   */
  async readLinksIn(dir: string): Promise<Map<string, string | null> | null> {
    const real = this.hostPath(await this.realTarget(dir));
    let names: string[];
    try {
      names = await fs.readdir(real);
    } catch (e) {
      if (isMissing(e) || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw new HostError(`cannot list ${dir}: ${(e as Error).message}`, dir);
    }
    const out = new Map<string, string | null>();
    await Promise.all(
      names.map(async (n) => {
        try {
          out.set(n, await fs.readlink(path.join(real, n)));
        } catch {
          out.set(n, null);
        }
      }),
    );
    return out;
  }

  async exists(target: string): Promise<boolean> {
    return (await this.lstat(target)) !== null;
  }

  /** Kernel interfaces (/proc, /sys) exist only on a live host. */
  assertLive(what: string): void {
    if (!this.live) throw new HostError(`${what} needs a running host; offline (--root ${this.root}) it is never read`, what);
  }

  /** Reads /proc or /sys. Refuses offline, so the build machine's kernel never leaks into an image's plan. */
  async readKernel(target: string): Promise<string | null> {
    this.assertLive(target);
    const b = await this.readBuffer(target, MAX_KERNEL_READ_BYTES);
    return b === null ? null : b.toString('utf8');
  }

  /**
   * Writes a value into /proc/sys or /sys in place. Kernel files cannot be
   * replaced by rename and have nothing to back up, so this is not writeFile:
   * one write() of the whole value at offset 0 (what the kernel's sysctl
   * handlers expect), no O_CREAT, so a key the kernel lacks fails with ENOENT
   * instead of creating a stray file. Refuses offline.
   */
  async writeKernel(target: string, value: string): Promise<void> {
    this.assertLive(target);
    const norm = path.posix.normalize('/' + target);
    if (!norm.startsWith('/proc/sys/') && !norm.startsWith('/sys/')) {
      throw new HostError(`refusing to write ${norm}: writeKernel is for /proc/sys and /sys only`, norm);
    }
    const data = value.endsWith('\n') ? value : value + '\n';
    try {
      // O_TRUNC is ignored by procfs/sysfs; it keeps fixture roots (plain files) exact.
      const fh = await fs.open(this.hostPath(norm), fsc.O_WRONLY | fsc.O_TRUNC);
      try {
        await fh.write(data, 0, 'utf8');
      } finally {
        await fh.close();
      }
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new HostError(`cannot write ${JSON.stringify(value)} to ${norm}: ${code ?? (e as Error).message}`, norm);
    }
  }

  /** Runs a command with an argument array (never a shell string). Offline only `offlineSafe` commands run. */
  async run(cmd: string, args: string[], opts: RunOptions = {}): Promise<CommandResult> {
    if (!this.live && !opts.offlineSafe) {
      throw new HostError(`refusing to run ${cmd} offline (--root ${this.root}): it would act on the build machine`, cmd);
    }
    return this.runner(cmd, args, opts);
  }

  /** Like run, but a non-zero exit is an error naming the command and its stderr. */
  async runChecked(cmd: string, args: string[], opts: RunOptions = {}): Promise<CommandResult> {
    const r = await this.run(cmd, args, opts);
    if (r.exitCode !== 0) {
      throw new HostError(`${r.command} exited ${r.exitCode}: ${r.stderr.trim() || r.stdout.trim()}`, cmd);
    }
    return r;
  }

  isRoot(): boolean {
    return process.getuid?.() === 0;
  }
}

/**
 * An absolute path that path.posix.normalize leaves as it is: no empty, "."
 * or ".." component and no trailing slash. Most paths the tool builds are,
 * and skipping the normalisation of thousands of them keeps the run small.
 */
function isNormalAbsolute(p: string): boolean {
  return p.startsWith('/') && (p.length === 1 || (!p.endsWith('/') && !p.includes('//') && !p.includes('/./') && !p.includes('/../') && !p.endsWith('/.') && !p.endsWith('/..')));
}

function isMissing(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT';
}

export { describeFsError } from './errors.js';
