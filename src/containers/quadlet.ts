// Podman quadlets (podman-systemd.unit(5)): NAME.container files in the rootful
// search path, unit-file syntax (read with the repo's parser). The generator
// makes NAME.service from each; [Container] ContainerName= names the container
// (default "systemd-%N", %N being NAME), PublishPort= and Network= its ports,
// and [Install] WantedBy=/RequiredBy=/UpheldBy= are applied by the generator
// itself: the generated unit is transient, so `systemctl disable` cannot undo
// it, only moving the .container file away (then daemon-reload) does.
import type { TargetFs } from '../host.js';
import { effectiveList, effectiveValue, parseUnitText } from '../systemd/unit-file.js';

/** Rootful quadlet directories, highest precedence first (podman 5's list; /run is for temporary ones). */
export const QUADLET_DIRS = ['/run/containers/systemd', '/etc/containers/systemd', '/usr/share/containers/systemd'];

export interface Quadlet {
  file: string;
  /** NAME.service, the unit the generator makes. */
  unit: string;
  containerName: string;
  /** [Install] targets the generator links it into: it starts at boot when any is set. */
  startedBy: string[];
  publishPorts: string[];
  network: string | null;
}

export interface Quadlets {
  quadlets: Quadlet[];
  /** Directories or files that exist but could not be read. */
  unreadable: string[];
}

function quadletOf(text: string, file: string, base: string): Quadlet {
  const d = parseUnitText(text, file);
  const install = ['WantedBy', 'RequiredBy', 'UpheldBy'].flatMap((k) => effectiveList(d, 'Install', k).flatMap((x) => x.value.split(/\s+/).filter(Boolean)));
  return {
    file,
    unit: `${base}.service`,
    containerName: effectiveValue(d, 'Container', 'ContainerName') ?? `systemd-${base}`,
    startedBy: install,
    publishPorts: effectiveList(d, 'Container', 'PublishPort').map((x) => x.value),
    network: effectiveValue(d, 'Container', 'Network'),
  };
}

/** Every rootful .container quadlet; a name in a higher directory hides the same name below it. */
export async function readQuadlets(fs: TargetFs): Promise<Quadlets> {
  const out: Quadlets = { quadlets: [], unreadable: [] };
  const seen = new Set<string>();
  for (const dir of QUADLET_DIRS) {
    let ents;
    try {
      ents = await fs.readDir(dir);
    } catch {
      out.unreadable.push(dir);
      continue;
    }
    for (const e of (ents ?? []).filter((x) => x.name.endsWith('.container')).sort((a, b) => a.name.localeCompare(b.name))) {
      if (seen.has(e.name)) continue;
      seen.add(e.name);
      const file = `${dir}/${e.name}`;
      let text: string | null = null;
      try {
        text = await fs.readFile(file);
      } catch {
        text = null;
      }
      if (text === null) out.unreadable.push(file);
      else out.quadlets.push(quadletOf(text, file, e.name.slice(0, -'.container'.length)));
    }
  }
  return out;
}
