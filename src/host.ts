// Host is the only module that touches the machine. Every path a provider
// names is a path on the *target* (e.g. "/etc/fstab"); Host maps it under
// `root`, which is "/" on a live host and an unbooted image with --root.
import { constants as fsc, promises as fs } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { execa } from 'execa';
import { HostError } from './errors.js';

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
  /** Directory (target path) where originals are copied before they change. */
  backupDir?: string;
  /**
   * Tests only: treat a fixture root as a running host, so live branches
   * (/proc reads, runtime commands through a fake runner) can be exercised
   * without touching this machine. Defaults to root === "/".
   */
  live?: boolean;
}

const MAX_SYMLINK_HOPS = 40;

export class Host {
  readonly root: string;
  /** Live: the running system. Offline: an unbooted tree; no /proc, /sys or runtime actions. */
  readonly live: boolean;
  backupDir: string | undefined;
  private readonly runner: CommandRunner;
  private readonly backedUp = new Set<string>();

  constructor(opts: HostOptions = {}) {
    this.root = path.resolve(opts.root ?? '/');
    this.live = opts.live ?? this.root === '/';
    this.runner = opts.runner ?? defaultRunner;
    this.backupDir = opts.backupDir;
  }

  /** Path on the build machine for a target path, without following symlinks. */
  hostPath(target: string): string {
    const norm = path.posix.normalize('/' + target);
    return this.root === '/' ? norm : path.join(this.root, norm);
  }

  /**
   * Resolves every symlink in `target` the way the target's own kernel would,
   * but with the root clamped: an absolute link inside an image points into
   * the image, and ".." never climbs above the root. Returns a target path.
   */
  async realTarget(target: string): Promise<string> {
    let pending = path.posix.normalize('/' + target).split('/').filter(Boolean);
    let resolved: string[] = [];
    let hops = 0;
    while (pending.length > 0) {
      const part = pending.shift()!;
      if (part === '..') {
        resolved.pop();
        continue;
      }
      if (part === '.') continue;
      const candidate = '/' + [...resolved, part].join('/');
      let link: string | null = null;
      try {
        link = await fs.readlink(this.hostPath(candidate));
      } catch {
        link = null;
      }
      if (link === null) {
        resolved.push(part);
        continue;
      }
      if (++hops > MAX_SYMLINK_HOPS) throw new HostError(`too many levels of symbolic links resolving ${target}`, target);
      const linkParts = link.split('/').filter(Boolean);
      if (link.startsWith('/')) resolved = [];
      pending = [...linkParts, ...pending];
    }
    return '/' + resolved.join('/');
  }

  /** Reads a text file; null when it does not exist. Follows symlinks inside the root. */
  async readFile(target: string): Promise<string | null> {
    try {
      return await fs.readFile(this.hostPath(await this.realTarget(target)), 'utf8');
    } catch (e) {
      if (isMissing(e)) return null;
      throw new HostError(`cannot read ${target}: ${(e as Error).message}`, target);
    }
  }

  /**
   * Up to `length` bytes at `offset` of a regular file, never the whole file
   * (a swap file is gigabytes); null when it does not exist or is not a
   * regular file. Follows symlinks inside the root.
   */
  async readBytes(target: string, offset: number, length: number): Promise<Buffer | null> {
    try {
      const fh = await fs.open(this.hostPath(await this.realTarget(target)), fsc.O_RDONLY | fsc.O_NONBLOCK);
      try {
        if (!(await fh.stat()).isFile()) return null;
        const buf = Buffer.alloc(length);
        const { bytesRead } = await fh.read(buf, 0, length, offset);
        return buf.subarray(0, bytesRead);
      } finally {
        await fh.close();
      }
    } catch (e) {
      if (isMissing(e)) return null;
      throw new HostError(`cannot read ${target}: ${(e as Error).message}`, target);
    }
  }

  /** Entries of a directory, sorted; null when it does not exist. */
  async readDir(target: string): Promise<Dirent[] | null> {
    try {
      const entries = await fs.readdir(this.hostPath(await this.realTarget(target)), { withFileTypes: true });
      return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (e) {
      if (isMissing(e) || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw new HostError(`cannot list ${target}: ${(e as Error).message}`, target);
    }
  }

  /** lstat of the target path itself (the last component is not followed). */
  async lstat(target: string): Promise<Stats | null> {
    try {
      const dir = await this.realTarget(path.posix.dirname(target));
      return await fs.lstat(this.hostPath(path.posix.join(dir, path.posix.basename(target))));
    } catch (e) {
      if (isMissing(e)) return null;
      throw new HostError(`cannot stat ${target}: ${(e as Error).message}`, target);
    }
  }

  /** The raw text of a symlink, or null when `target` is not a symlink. */
  async readLink(target: string): Promise<string | null> {
    try {
      const dir = await this.realTarget(path.posix.dirname(target));
      return await fs.readlink(this.hostPath(path.posix.join(dir, path.posix.basename(target))));
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
    return this.readFile(target);
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

  /**
   * Writes `content` atomically: a temporary file in the same directory,
   * fsync, rename, fsync of the directory. The original's mode and owner are
   * kept, and the original is first copied to the run's backup directory.
   * Writing through a symlink writes its target and keeps the link.
   */
  async writeFile(target: string, content: string, opts: { mode?: number } = {}): Promise<void> {
    const real = await this.realTarget(target);
    const dest = this.hostPath(real);
    const dir = path.dirname(dest);
    let original: Stats | null = null;
    try {
      original = await fs.stat(dest);
    } catch (e) {
      if (!isMissing(e)) throw new HostError(`cannot stat ${real}: ${(e as Error).message}`, real);
    }
    if (original) await this.backup(real);
    await fs.mkdir(dir, { recursive: true, mode: 0o755 });
    const tmp = path.join(dir, `.${path.basename(dest)}.reconcile-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      const fh = await fs.open(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o600);
      try {
        await fh.writeFile(content, 'utf8');
        await fh.chmod(original ? original.mode & 0o7777 : (opts.mode ?? 0o644));
        if (original && (original.uid !== process.getuid?.() || original.gid !== process.getgid?.())) {
          await fh.chown(original.uid, original.gid);
        }
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fs.rename(tmp, dest);
    } catch (e) {
      await fs.rm(tmp, { force: true });
      throw new HostError(`cannot write ${real}: ${(e as Error).message}`, real);
    }
    await fsyncDir(dir);
  }

  /** Creates or replaces a symlink (unit enablement, masks). The old entry is backed up. */
  async symlink(linkTarget: string, target: string): Promise<void> {
    const dir = await this.realTarget(path.posix.dirname(target));
    const at = path.posix.join(dir, path.posix.basename(target));
    const dest = this.hostPath(at);
    if (await this.exists(at)) await this.backup(at);
    await fs.mkdir(path.dirname(dest), { recursive: true, mode: 0o755 });
    const tmp = `${dest}.reconcile-${process.pid}-${randomBytes(4).toString('hex')}`;
    await fs.symlink(linkTarget, tmp);
    await fs.rename(tmp, dest);
    await fsyncDir(path.dirname(dest));
  }

  /**
   * Removes a file or symlink (not a directory), after backing it up.
   * `backup: false` is for content nobody can want back (a swap file's pages),
   * where a copy could fill the disk.
   */
  async remove(target: string, opts: { backup?: boolean } = {}): Promise<void> {
    const dir = await this.realTarget(path.posix.dirname(target));
    const at = path.posix.join(dir, path.posix.basename(target));
    if (!(await this.exists(at))) return;
    if (opts.backup !== false) await this.backup(at);
    await fs.rm(this.hostPath(at), { force: true });
    await fsyncDir(path.dirname(this.hostPath(at)));
  }

  /**
   * Removes `target` when it is an empty directory (what `systemctl disable`
   * does to a .wants directory it emptied). Returns whether it was removed;
   * an empty directory holds nothing to back up.
   */
  async removeEmptyDir(target: string): Promise<boolean> {
    const dir = await this.realTarget(path.posix.dirname(target));
    const at = this.hostPath(path.posix.join(dir, path.posix.basename(target)));
    try {
      await fs.rmdir(at);
    } catch {
      return false; // not empty, not a directory, or gone
    }
    await fsyncDir(path.dirname(at));
    return true;
  }

  /** Copies the current entry (file, or symlink as a symlink) into the run's backup directory, once per run. */
  async backup(real: string): Promise<string | null> {
    if (!this.backupDir) throw new HostError(`refusing to change ${real}: no backup directory is set for this run`, real);
    if (this.backedUp.has(real)) return null;
    const src = this.hostPath(real);
    const dst = this.hostPath(path.posix.join(this.backupDir, real));
    await fs.mkdir(path.dirname(dst), { recursive: true, mode: 0o700 });
    const st = await fs.lstat(src);
    if (st.isSymbolicLink()) await fs.symlink(await fs.readlink(src), dst);
    else await fs.copyFile(src, dst, fsc.COPYFILE_EXCL);
    this.backedUp.add(real);
    return dst;
  }

  /** Files backed up so far in this run (target paths). */
  backups(): string[] {
    return [...this.backedUp].sort();
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

function isMissing(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT';
}

async function fsyncDir(dir: string): Promise<void> {
  try {
    const fh = await fs.open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Some file systems refuse fsync on directories; the rename is still atomic.
  }
}
