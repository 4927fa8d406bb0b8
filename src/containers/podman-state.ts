// A rootful podman container, as far as its state can be read without libpod's
// database (bolt_state.db or db.sql: neither is JSON, so not read here).
// containers/storage keeps /var/lib/containers/storage/overlay-containers/containers.json,
// a JSON array of its Container struct (containers.go: "id", "names", "image" =
// the image's ID, "layer", "metadata"). The restart policy and what brings the
// container back live in libpod's database: always named as unknown.
import type { TargetFs } from '../host.js';

export const PODMAN_CONTAINERS_JSON = '/var/lib/containers/storage/overlay-containers/containers.json';

export interface PodmanContainer {
  runtime: 'podman';
  id: string;
  name: string | null;
  /** The image's ID (containers.json has no image name). */
  image: string | null;
  unknown: string[];
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export async function readPodmanContainer(fs: TargetFs, idPrefix: string): Promise<PodmanContainer> {
  const c: PodmanContainer = { runtime: 'podman', id: idPrefix, name: null, image: null, unknown: [] };
  c.unknown.push(`podman's restart policy and the units that start it are in libpod's database (/var/lib/containers/storage/libpod), which is not read`);
  let list: unknown;
  try {
    const text = await fs.readFile(PODMAN_CONTAINERS_JSON);
    if (text === null) {
      c.unknown.push(`${PODMAN_CONTAINERS_JSON} does not exist`);
      return c;
    }
    list = JSON.parse(text);
  } catch (e) {
    c.unknown.push(`${PODMAN_CONTAINERS_JSON} could not be read as JSON (${(e as Error).message})`);
    return c;
  }
  const hit = Array.isArray(list) ? list.find((x) => isObj(x) && typeof x['id'] === 'string' && x['id'].startsWith(idPrefix)) : undefined;
  if (!isObj(hit)) {
    c.unknown.push(`${PODMAN_CONTAINERS_JSON} has no container ${idPrefix}`);
    return c;
  }
  c.id = hit['id'] as string;
  const names = hit['names'];
  c.name = Array.isArray(names) && typeof names[0] === 'string' ? names[0] : null;
  c.image = typeof hit['image'] === 'string' ? hit['image'] : null;
  return c;
}
