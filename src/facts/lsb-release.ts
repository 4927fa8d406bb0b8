// What `lsb_release -a` prints, computed from the files it reads, without
// running it (distro, and so ansible, read its output). Modelled is Debian
// 12's lsb-release 12.0-1 ("minimal implementation", a /bin/sh script): it
// sources /etc/os-release (else /usr/lib/os-release) and prints ID, NAME,
// PRETTY_NAME, VERSION_ID and VERSION_CODENAME. The script is recognised by
// its exact bytes (sha256); any other lsb_release (Debian 11's Python one,
// Ubuntu's, a later revision) and any os-release the shell would have to
// evaluate are run for real instead.
import { createHash } from 'node:crypto';
import type { TargetHost } from '../host.js';
import { commandScript } from './command-path.js';
import { parseShAssignments } from './os-release-sh.js';

/** sha256 of /usr/bin/lsb_release as Debian's lsb-release 12.0-1 (bookworm) ships it. */
export const MINIMAL_LSB_RELEASE_SHA256 = new Set(['484188f4b37b4021998dafd1966cda1c6f8207af9aee3ad51746a5d22acf3e65']);

export type LsbRelease =
  /** stdout of `lsb_release -a` (null: the program is missing, as when running it fails). */
  { known: true; stdout: string | null; from: string } | { known: false; reason: string };

// Names the script reads from its environment or uses itself: one set by the
// environment or by os-release changes what the script does.
const SCRIPT_VARS = ['os_release', 'LSB_OS_RELEASE', 'ID', 'NAME', 'PRETTY_NAME', 'VERSION_ID', 'VERSION_CODENAME', 'IFS'];
const SHELL_VARS = new Set([
  'IFS',
  'PATH',
  'LC_ALL',
  'LC_CTYPE',
  'LC_COLLATE',
  'LC_MESSAGES',
  'LANG',
  'LANGUAGE',
  'ENV',
  'HOME',
  'PWD',
  'OLDPWD',
  'CDPATH',
  'OPTIND',
  'OPTARG',
  'PS1',
  'PS2',
  'PS4',
  'PPID',
  'LINENO',
  'MAIL',
  'MAILPATH',
  'HISTFILE',
  'FCEDIT',
  'TERM',
]);

export async function lsbReleaseOutput(host: TargetHost, env: NodeJS.ProcessEnv = process.env): Promise<LsbRelease> {
  const cmd = await commandScript(host, 'lsb_release', env, 'bytes');
  if (cmd.kind === 'unknown') return { known: false, reason: cmd.reason };
  if (cmd.kind === 'missing') return { known: true, stdout: null, from: 'no lsb_release on PATH' };
  const script = cmd.content;
  const sha = createHash('sha256').update(Buffer.from(script, 'latin1')).digest('hex');
  if (!MINIMAL_LSB_RELEASE_SHA256.has(sha)) return { known: false, reason: `${cmd.named} is not the lsb_release this models (sha256 ${sha})` };
  const set = SCRIPT_VARS.filter((v) => env[v] !== undefined);
  if (set.length > 0) return { known: false, reason: `the environment sets ${set.join(', ')}, which lsb_release reads` };

  // [ -f /usr/lib/os-release ] && os_release=…; [ -f /etc/os-release ] && os_release=…; . "$os_release"
  let osRelease: string | null = null;
  for (const p of ['/usr/lib/os-release', '/etc/os-release']) {
    const st = await host.lstat(await host.realTarget(p).catch(() => p));
    if (st?.isFile()) osRelease = p;
  }
  let vars = new Map<string, string>();
  if (osRelease !== null) {
    const text = await host.readFile(osRelease).catch(() => null);
    if (text === null) return { known: false, reason: `${osRelease} cannot be read` };
    const parsed = parseShAssignments(text);
    if (!parsed.ok) return { known: false, reason: `${osRelease} line ${parsed.line}: ${parsed.reason}` };
    for (const [k, v] of parsed.vars) {
      if (!/^[A-Z][A-Z0-9_]*$/.test(k) || SHELL_VARS.has(k))
        return { known: false, reason: `${osRelease} sets ${k}, which changes the shell running lsb_release` };
      // cut -c and tr work on bytes; a newline splits cut's lines and printf's output.
      if (v.includes('\n') || ((k === 'ID' || k === 'NAME') && /[^\x20-\x7e]/.test(v)))
        return { known: false, reason: `${osRelease} has a ${k} the model does not cover` };
    }
    vars = parsed.vars;
  }

  // ID's first byte upper-cased (cut -c1 | tr, in C.UTF-8: ASCII only); NAME replaces it when they differ only in case.
  let id = vars.get('ID') ?? '';
  id = id.slice(0, 1).toUpperCase() + id.slice(1);
  const name = vars.get('NAME');
  // "${NAME-x}" != "x": a NAME of exactly "x" counts as unset.
  if (name !== undefined && name !== 'x' && id.toLowerCase() === name.toLowerCase()) id = name;
  const orNa = (v: string | undefined) => (v === undefined || v === '' ? 'n/a' : v);
  const stdout =
    [
      `Distributor ID:\t${orNa(id)}`,
      `Description:\t${orNa(vars.get('PRETTY_NAME'))}`,
      `Release:\t${orNa(vars.get('VERSION_ID'))}`,
      `Codename:\t${orNa(vars.get('VERSION_CODENAME'))}`,
    ].join('\n') + '\n';
  return { known: true, stdout, from: `${cmd.named} (lsb-release 12.0) over ${osRelease ?? 'no os-release'}` };
}
