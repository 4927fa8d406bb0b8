// Which file a command name runs, looked up as execvp(3) (and so node's
// spawn) looks it up: each PATH entry in order, the first executable regular
// file wins. The models of lsb_release and ansible read that file instead of
// running it; where the lookup is not certain they run the command itself.
import type { TargetHost } from '../host.js';

export type CommandFile =
  /** The target path of the file that would run (symlinks resolved inside the root). */
  | { kind: 'file'; path: string; named: string }
  /** No PATH entry has it: running it fails with ENOENT, as a spawn would. */
  | { kind: 'missing' }
  /** The lookup depends on something not modelled (no PATH, a relative entry): run the command. */
  | { kind: 'unknown'; reason: string };

export async function commandFile(host: TargetHost, name: string, env: NodeJS.ProcessEnv = process.env): Promise<CommandFile> {
  const pathVar = env.PATH;
  if (pathVar === undefined) return { kind: 'unknown', reason: 'PATH is not set' };
  for (const dir of pathVar.split(':')) {
    if (!dir.startsWith('/')) return { kind: 'unknown', reason: `PATH has the relative entry "${dir}"` };
    const named = `${dir.replace(/\/+$/, '')}/${name}`;
    let real: string;
    try {
      real = await host.realTarget(named);
    } catch {
      return { kind: 'unknown', reason: `${named} cannot be resolved` };
    }
    const st = await host.lstat(real);
    if (!st) continue;
    if (!st.isFile()) continue;
    // Root may execute a file with any x bit; others need their own (not modelled: run it).
    if ((st.mode & 0o111) === 0) continue;
    if (!host.isRoot() && (st.mode & 0o111) !== 0o111) return { kind: 'unknown', reason: `${named} is not executable by everyone and this is not root` };
    return { kind: 'file', path: real, named };
  }
  return { kind: 'missing' };
}

export type CommandScript = Exclude<CommandFile, { kind: 'file' }> | { kind: 'file'; path: string; named: string; content: string };

/**
 * The file a command name runs, with its content (`bytes`: as a byte string;
 * `text`: as UTF-8): what the models read instead of running it. A file that
 * cannot be read makes the lookup unknown: run the command.
 */
export async function commandScript(host: TargetHost, name: string, env: NodeJS.ProcessEnv, as: 'text' | 'bytes'): Promise<CommandScript> {
  const cmd = await commandFile(host, name, env);
  if (cmd.kind !== 'file') return cmd;
  const content = await (as === 'bytes' ? host.readBytes(cmd.path) : host.readFile(cmd.path)).catch(() => null);
  if (content === null) return { kind: 'unknown', reason: `${cmd.named} cannot be read` };
  return { ...cmd, content };
}
