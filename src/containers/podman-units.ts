// Units written by `podman generate systemd` (deprecated in podman 4.4 for
// quadlets, still common): a service in /etc/systemd/system whose ExecStart=
// runs `podman start NAME` (the default) or, with --new, `podman run ... --name
// NAME ...`. Read with the repo's unit-file and Exec parsers, never a regex over
// the command line.
import path from 'node:path';
import type { TargetFs } from '../host.js';
import { parseUnitText } from '../systemd/unit-file.js';
import { execCommandsOf } from '../systemd/exec-command.js';
import { SYSTEMD_SYSTEM_ETC } from '../systemd/unit-dirs.js';
import type { Word } from '../lex/shell.js';

export interface PodmanUnit {
  unit: string;
  file: string;
  line: number;
}

/** The container a `podman ...` argv starts: start's operand, or run's --name; null for any other command. */
export function podmanTarget(argv: Word[]): string | null {
  if (argv[0] == null || path.posix.basename(argv[0]) !== 'podman') return null;
  const rest = argv.slice(1);
  const verb = rest.findIndex((w) => w === 'start' || w === 'run');
  if (verb < 0) return null;
  const after = rest.slice(verb + 1);
  if (rest[verb] === 'start') return after.find((w): w is string => w !== null && !w.startsWith('-')) ?? null;
  for (let i = 0; i < after.length; i++) {
    const w = after[i];
    if (w === '--name') return after[i + 1] ?? null;
    if (w?.startsWith('--name=')) return w.slice('--name='.length);
  }
  return null;
}

/** The services in /etc/systemd/system that start container `name` (or id `id`) with podman; `unreadable` names what was not read. */
export async function podmanUnitsFor(fs: TargetFs, name: string | null, id: string): Promise<{ units: PodmanUnit[]; unreadable: string[] }> {
  const out: { units: PodmanUnit[]; unreadable: string[] } = { units: [], unreadable: [] };
  let ents;
  try {
    ents = await fs.readDir(SYSTEMD_SYSTEM_ETC);
  } catch {
    return { units: [], unreadable: [SYSTEMD_SYSTEM_ETC] };
  }
  const services = (ents ?? []).filter((x) => x.name.endsWith('.service') && (x.isFile() || x.isSymbolicLink())).sort((a, b) => a.name.localeCompare(b.name));
  for (const e of services) {
    const file = `${SYSTEMD_SYSTEM_ETC}/${e.name}`;
    let text: string | null = null;
    try {
      text = await fs.readFile(file);
    } catch {
      text = null;
    }
    if (text === null) {
      out.unreadable.push(file);
      continue;
    }
    for (const x of execCommandsOf(parseUnitText(text, file), 'ExecStart')) {
      const t = x.command ? podmanTarget(x.command.argv) : null;
      if (t !== null && (t === name || (t.length >= 12 && id.startsWith(t)))) out.units.push({ unit: e.name, file, line: x.directive.line });
    }
  }
  return out;
}
