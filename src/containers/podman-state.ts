// A rootful podman container, as far as its state can be read without libpod's
// database (bolt_state.db or db.sql: neither is JSON, so not read here).
// containers/storage keeps /var/lib/containers/storage/overlay-containers/containers.json,
// (DRIVER-containers for the other graph drivers: vfs where the root is itself an overlay),
// a JSON array of its Container struct (containers.go: "id", "names", "image" =
// the image's ID, "layer", "metadata"). The restart policy and what brings the
// container back live in libpod's database: always named as unknown.
import type { TargetFs } from '../host.js';

export const PODMAN_CONTAINERS_JSON = '/var/lib/containers/storage/overlay-containers/containers.json';
/** containers/storage keeps each graph driver's containers in DRIVER-containers; overlay first (podman's default), then the others it ships. */
export const PODMAN_CONTAINERS_JSONS = ['overlay', 'vfs', 'btrfs', 'zfs'].map((d) => `/var/lib/containers/storage/${d}-containers/containers.json`);

/** The first containers.json that exists, with its text; null when none does. */
async function containersJson(fs: TargetFs): Promise<{ file: string; text: string } | null> {
  for (const file of PODMAN_CONTAINERS_JSONS) {
    const text = await fs.readFile(file);
    if (text !== null) return { file, text };
  }
  return null;
}

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
  let file = PODMAN_CONTAINERS_JSON;
  try {
    const found = await containersJson(fs);
    if (found === null) {
      c.unknown.push(`none of ${PODMAN_CONTAINERS_JSONS.join(', ')} exists`);
      return c;
    }
    file = found.file;
    list = JSON.parse(found.text);
  } catch (e) {
    c.unknown.push(`${file} could not be read as JSON (${(e as Error).message})`);
    return c;
  }
  const hit = Array.isArray(list) ? list.find((x) => isObj(x) && typeof x['id'] === 'string' && x['id'].startsWith(idPrefix)) : undefined;
  if (!isObj(hit)) {
    c.unknown.push(`${file} has no container ${idPrefix}`);
    return c;
  }
  c.id = hit['id'] as string;
  const names = hit['names'];
  c.name = Array.isArray(names) && typeof names[0] === 'string' ? names[0] : null;
  c.image = typeof hit['image'] === 'string' ? hit['image'] : null;
  return c;
}
