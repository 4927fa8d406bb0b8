// A Docker container's own on-disk state, read as untrusted data through the
// TargetFs (so --root works). moby's daemon/container/container.go writes two
// files per container under /var/lib/docker/containers/<id>/:
//   config.v2.json  (configFileName: the Container struct: ID, Name "/name",
//                    Config.Image, State.Running/Pid, NetworkSettings)
//   hostconfig.json (hostConfigFileName: api/types/container/hostconfig.go's
//                    HostConfig: RestartPolicy{Name,MaximumRetryCount},
//                    PortBindings {"6443/tcp":[{"HostIp","HostPort"}]}, NetworkMode)
// A file that cannot be read or parsed makes the fact it holds unknown, named with the file.
import type { TargetFs } from '../host.js';

export const DOCKER_CONTAINERS = '/var/lib/docker/containers';

/** RestartPolicy.Name as hostconfig.go defines it; "" is how an unset policy is stored ("no"). */
export type DockerRestart = 'no' | 'always' | 'unless-stopped' | 'on-failure';

export interface DockerContainer {
  runtime: 'docker';
  id: string;
  /** Name without moby's leading "/"; null when config.v2.json could not say. */
  name: string | null;
  image: string | null;
  running: boolean | null;
  pid: number | null;
  restart: DockerRestart | null;
  networkMode: string | null;
  /** Host ports published, from PortBindings ("6443/tcp" -> HostPort). */
  published: { port: number; proto: string; hostIp: string }[];
  /** What could not be read, each naming its file; empty when all was. */
  unknown: string[];
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

async function readJson(fs: TargetFs, file: string): Promise<{ value: Json } | { error: string }> {
  let text: string | null;
  try {
    text = await fs.readFile(file);
  } catch (e) {
    return { error: `${file} could not be read (${(e as Error).message})` };
  }
  if (text === null) return { error: `${file} does not exist` };
  try {
    const value: unknown = JSON.parse(text);
    return isObj(value) ? { value } : { error: `${file} is not a JSON object` };
  } catch (e) {
    return { error: `${file} is not valid JSON (${(e as Error).message})` };
  }
}

const RESTARTS: readonly string[] = ['no', 'always', 'unless-stopped', 'on-failure'];

/** PortBindings: nat.PortMap, "PORT/PROTO" -> [{HostIp, HostPort}]; HostPort may be a range "8000-8010". */
function publishedOf(bindings: unknown, file: string, unknown: string[]): DockerContainer['published'] {
  if (bindings === undefined || bindings === null) return [];
  if (!isObj(bindings)) {
    unknown.push(`${file}: PortBindings is not an object`);
    return [];
  }
  const out: DockerContainer['published'] = [];
  for (const [key, list] of Object.entries(bindings)) {
    const proto = key.includes('/') ? key.slice(key.indexOf('/') + 1) : 'tcp';
    for (const b of Array.isArray(list) ? list : []) {
      const hp = isObj(b) ? str(b['HostPort']) : null;
      const range = hp === null ? null : /^(\d+)(?:-(\d+))?$/.exec(hp);
      if (range === null) {
        // An empty HostPort asks dockerd for an ephemeral port: not known from the file.
        unknown.push(`${file}: PortBindings["${key}"] has HostPort ${JSON.stringify(hp)}, which does not name a host port`);
        continue;
      }
      const lo = Number(range[1]);
      const hi = range[2] === undefined ? lo : Number(range[2]);
      for (let p = lo; p <= hi && p - lo < 65536; p++) out.push({ port: p, proto, hostIp: (isObj(b) ? str(b['HostIp']) : null) ?? '' });
    }
  }
  return out;
}

function restartOf(host: Json, file: string, unknown: string[]): DockerRestart | null {
  const rp = host['RestartPolicy'];
  const name = isObj(rp) ? str(rp['Name']) : null;
  if (name === '') return 'no';
  if (name !== null && RESTARTS.includes(name)) return name as DockerRestart;
  unknown.push(`${file}: RestartPolicy.Name ${JSON.stringify(name)} is not one of ${RESTARTS.join(', ')}`);
  return null;
}

/** Reads container `id` (its full 64-hex id, the directory's name). */
export async function readDockerContainer(fs: TargetFs, id: string): Promise<DockerContainer> {
  const dir = `${DOCKER_CONTAINERS}/${id}`;
  const c: DockerContainer = {
    runtime: 'docker',
    id,
    name: null,
    image: null,
    running: null,
    pid: null,
    restart: null,
    networkMode: null,
    published: [],
    unknown: [],
  };
  const cfgFile = `${dir}/config.v2.json`;
  const cfg = await readJson(fs, cfgFile);
  if ('error' in cfg) c.unknown.push(cfg.error);
  else {
    const name = str(cfg.value['Name']);
    c.name = name === null ? null : name.replace(/^\//, '');
    const config = cfg.value['Config'];
    c.image = isObj(config) ? str(config['Image']) : null;
    const state = cfg.value['State'];
    c.running = isObj(state) && typeof state['Running'] === 'boolean' ? state['Running'] : null;
    c.pid = isObj(state) && typeof state['Pid'] === 'number' && state['Pid'] > 0 ? state['Pid'] : null;
    if (c.name === null) c.unknown.push(`${cfgFile}: no Name`);
    if (c.image === null) c.unknown.push(`${cfgFile}: no Config.Image`);
  }
  const hostFile = `${dir}/hostconfig.json`;
  const hc = await readJson(fs, hostFile);
  if ('error' in hc) c.unknown.push(hc.error);
  else {
    c.restart = restartOf(hc.value, hostFile, c.unknown);
    c.networkMode = str(hc.value['NetworkMode']);
    c.published = publishedOf(hc.value['PortBindings'], hostFile, c.unknown);
  }
  return c;
}

/** Every container directory under /var/lib/docker/containers (64-hex names); null when the directory cannot be read. */
export async function dockerContainerIds(fs: TargetFs): Promise<string[] | null> {
  const ents = await fs.readDir(DOCKER_CONTAINERS);
  if (ents === null) return null;
  return ents
    .filter((e) => e.isDirectory() && /^[0-9a-f]{64}$/.test(e.name))
    .map((e) => e.name)
    .sort();
}

/** The directory whose name starts with `prefix` (a cgroup scope carries the full id; a prefix must be unique). */
export async function resolveDockerId(fs: TargetFs, prefix: string): Promise<{ id: string } | { error: string }> {
  const ids = await dockerContainerIds(fs);
  if (ids === null) return { error: `${DOCKER_CONTAINERS} could not be read` };
  const hits = ids.filter((i) => i.startsWith(prefix));
  if (hits.length === 1) return { id: hits[0]! };
  return {
    error:
      hits.length === 0 ? `no directory ${DOCKER_CONTAINERS}/${prefix}* exists` : `${hits.length} directories in ${DOCKER_CONTAINERS} start with ${prefix}`,
  };
}
