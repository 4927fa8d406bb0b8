// A UnitFile as the loader hands it to the port readers, built from unit text
// by the real unit-file parser (no hand-made directive lists).
import { parseUnitText } from '../../src/systemd/unit-file.js';
import type { UnitFile } from '../../src/systemd/socket-unit.js';

/** Unit `name` at `dir/name`, with drop-ins at `dir/name.d/0.conf`, `1.conf`, … in the order given. */
export function unitFileIn(dir: string, name: string, text: string, ...dropIns: string[]): UnitFile {
  return {
    name,
    fragment: `${dir}/${name}`,
    masked: false,
    directives: [...parseUnitText(text, `${dir}/${name}`), ...dropIns.flatMap((t, i) => parseUnitText(t, `${dir}/${name}.d/${i}.conf`))],
  };
}

/** The same in /etc/systemd/system, where an admin's units live. */
export const etcUnitFile = (name: string, text: string, ...dropIns: string[]): UnitFile => unitFileIn('/etc/systemd/system', name, text, ...dropIns);
