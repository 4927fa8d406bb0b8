// Which ansible-core will gather kubespray's facts, and so which `distro`
// library decides distribution_version on the target: the target's system
// python3-distro when its python3 imports one, else the copy bundled in
// that ansible-core (module_utils/distro/_distro.py: 1.6.0 up to 2.16,
// 1.8.0 in 2.17, 1.9.0 from 2.18; read from ansible-core's release tags).
import path from 'node:path';
import type { TargetHost } from '../host.js';
import { installedAnsibleCore } from './ansible-install.js';

export interface AnsibleCore {
  /** e.g. "2.14.18"; null when neither source says. */
  version: string | null;
  /** Where the version comes from, for evidence. */
  from: string;
}

/** `ansible [core 2.14.18]` (ansible >= 2.11) or `ansible 2.10.8`. */
export function parseAnsibleVersion(stdout: string): string | null {
  const first = stdout.split('\n')[0] ?? '';
  const m = /^ansible \[core (\d+\.\d+(?:\.\d+)?)[^\]]*\]/.exec(first) ?? /^ansible (\d+\.\d+(?:\.\d+)?)/.exec(first);
  return m ? m[1]! : null;
}

// The community `ansible` package's major version -> the ansible-core it requires.
const ANSIBLE_TO_CORE: Record<number, string> = {
  3: '2.10',
  4: '2.11',
  5: '2.12',
  6: '2.13',
  7: '2.14',
  8: '2.15',
  9: '2.16',
  10: '2.17',
  11: '2.18',
  12: '2.19',
  13: '2.20',
};

/** The ansible-core a kubespray requirements.txt pins: ansible-core==X directly, or through ansible==N. */
export function coreFromRequirements(text: string): string | null {
  let fromAnsible: string | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    const m = /^(ansible-core|ansible)\s*==\s*(\d+(?:\.\d+)*)/.exec(line);
    if (!m) continue;
    if (m[1] === 'ansible-core') return m[2]!;
    fromAnsible = ANSIBLE_TO_CORE[Number(m[2]!.split('.')[0])] ?? null;
  }
  return fromAnsible;
}

/**
 * What the local `ansible --version` says when ansible is installed, else the
 * checkout's requirements.txt. The version is read from the installed
 * package (ansible-install.ts) where that is certain to be what the command
 * prints; otherwise the command runs.
 */
export async function ansibleCoreFor(host: TargetHost, kubesprayDir: string | undefined): Promise<AnsibleCore> {
  if (host.live) {
    const installed = await installedAnsibleCore(host);
    if (installed.known) {
      // The CLI's first line is `ansible [core <__version__>]`.
      const v = installed.version === null ? null : parseAnsibleVersion(`ansible [core ${installed.version}]`);
      if (v) return { version: v, from: `${installed.from}, the version ansible --version prints` };
    } else {
      const r = await host.run('ansible', ['--version']).catch(() => null);
      const v = r && r.exitCode === 0 ? parseAnsibleVersion(r.stdout) : null;
      if (v) return { version: v, from: 'ansible --version' };
    }
  }
  if (kubesprayDir) {
    const rel = path.posix.join(kubesprayDir, 'requirements.txt');
    const text = await host.readFile(rel).catch(() => null);
    const v = text === null ? null : coreFromRequirements(text);
    if (v) return { version: v, from: `${rel}` };
  }
  return { version: null, from: 'no ansible --version and no pinned requirements.txt' };
}

function minor(v: string): number {
  const [a, b] = v.split('.').map(Number);
  return (a ?? 0) * 1000 + (b ?? 0);
}

/** The distro version bundled in an ansible-core release. */
export function bundledDistroVersion(core: string): string {
  const m = minor(core);
  if (m >= minor('2.18')) return '1.9.0';
  if (m >= minor('2.17')) return '1.8.0';
  return '1.6.0';
}
