// A unit as a running manager loaded it: exactly the files it names in
// FragmentPath= and DropInPaths= (systemctl show), in that order, read with
// the unit-file grammar. The manager's own list, not the search path: a unit
// loaded before a file changed keeps what it read then.
import type { TargetFs } from '../host.js';
import { parseUnitText, type UnitDirective } from './unit-file.js';

export interface ManagerUnitFiles {
  /** Fragment then drop-ins, in the order the manager applied them. */
  directives: UnitDirective[];
  /** The fragment's text, or null when it could not be read. */
  fragmentText: string | null;
  /** The first file that could not be read, as a sentence; null when all were. */
  error: string | null;
}

/** `DropInPaths=` as systemctl show prints it: paths separated by spaces. */
export function dropInPathsOf(value: string | undefined): string[] {
  return (value ?? '').split(/\s+/).filter(Boolean);
}

export async function readManagerUnitFiles(host: TargetFs, unit: string, fragment: string, dropIns: readonly string[]): Promise<ManagerUnitFiles> {
  const out: ManagerUnitFiles = { directives: [], fragmentText: null, error: null };
  for (const f of [fragment, ...dropIns]) {
    let text: string | null;
    try {
      text = await host.readFile(f);
    } catch (e) {
      out.error ??= `${f} could not be read: ${(e as Error).message}`;
      continue;
    }
    if (text === null) {
      out.error ??= `${f} (a unit file systemctl names for ${unit}) does not exist`;
      continue;
    }
    out.directives.push(...parseUnitText(text, f));
    if (f === fragment) out.fragmentText = text;
  }
  return out;
}
