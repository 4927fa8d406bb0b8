// The facts the checkers judge, each read once through the Host: CPUs,
// memory and the kernel release from the facts kubespray's report gathered
// (never read again), the cgroup controllers and a container marker from the
// running kernel (live only), and PATH lookups in the target's tree (which an
// image can answer too). Host files are untrusted: a value that does not
// parse is not known, with the reason.
import path from 'node:path';
import type { TargetFs, TargetHost } from '../host.js';
import type { Facts } from '../facts/linux.js';
import { commandFile } from '../facts/command-path.js';
import type {
  AcceptanceFacts,
  CgroupFacts,
  DiskSpaceFacts,
  Known,
  KubeadmProxyFacts,
  KubeletServiceFacts,
  KubesprayValues,
  ResolvConfFacts,
  ResolvFile,
  TimeSyncFacts,
  WatchedFs,
} from './checker.js';
import { DNS_SERVICES, unreadable } from './checker.js';
import { onlyLoopback, podForwardAddresses } from './resolv-conf.js';
import { readRuntimeCollision } from './runtime-facts.js';
import { readNetworkManager } from './nm-facts.js';
import { readForward } from './forward-facts.js';
import { readFirewall } from './firewall-facts.js';
import { systemUnitGraph } from '../systemd/system-graph.js';
import { bootPaths } from '../systemd/boot-reach.js';
import { hostsFileLine } from './hosts-file.js';
import { known, notKnown } from './checker.js';
import { ALL_PROGRAMS } from './file-existing.js';
import { TIME_SYNC_UNITS } from './time-sync.js';
import { HTTPS_PROXY_VARS, NO_PROXY_VARS, firstSet, kubeadmEnvironment, readEnvironmentFile } from './proxy-env.js';

/**
 * The PATH kubeadm is looked up and runs with: kubespray runs it with
 * "{{ bin_dir }}:{{ ansible_env.PATH }}" (roles/kubernetes/control-plane/tasks/kubeadm-setup.yml),
 * bin_dir being /usr/local/bin by default and ansible_env.PATH root's (sudo's secure_path on Debian).
 */
export const KUBEADM_PATH = '/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin';

/** /sys/fs/cgroup/cgroup.controllers (v2) or /proc/cgroups' enabled column (v1), as the cgroups validator reads them. */
export async function readCgroups(host: TargetHost): Promise<Known<CgroupFacts>> {
  if (!host.live) return notKnown(`offline (--root ${host.root}): the controllers are the running kernel's`);
  // systemd writes this file when PID 1 runs in a container: the controllers are then what the container manager delegates, not the server's.
  const container = await host.readFile('/run/systemd/container').catch(() => null);
  if (container !== null)
    return notKnown(
      `this is a container (/run/systemd/container: ${JSON.stringify(container.trim().slice(0, 40))}): its cgroup controllers are the container manager's delegation, not what kubelet would get on the server`,
    );
  const v2 = await host.readKernel('/sys/fs/cgroup/cgroup.controllers').catch(() => null);
  if (v2 !== null) return known({ version: 2, controllers: v2.split(/\s+/).filter((w) => w !== '') });
  const v1 = await host.readKernel('/proc/cgroups').catch(() => null);
  if (v1 === null) return notKnown('neither /sys/fs/cgroup/cgroup.controllers nor /proc/cgroups can be read');
  const controllers: string[] = [];
  for (const line of v1.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const parts = line.split(/\s+/).filter((w) => w !== '');
    if (parts.length >= 4 && parts[3] !== '0') controllers.push(parts[0]!);
  }
  return known({ version: 1, controllers });
}

/** Each program kubeadm looks up, in KUBEADM_PATH under the root. */
export async function lookUpPrograms(host: TargetHost): Promise<Map<string, Known<string | null>>> {
  const out = new Map<string, Known<string | null>>();
  for (const p of ALL_PROGRAMS) {
    const f = await commandFile(host, p, { PATH: KUBEADM_PATH });
    out.set(p, f.kind === 'file' ? known(f.path) : f.kind === 'missing' ? known(null) : notKnown(f.reason));
  }
  return out;
}

const fromFacts = <T>(facts: Facts | undefined, why: string, pick: (f: Facts) => T): Known<T> => (facts ? known(pick(facts)) : notKnown(why));

/**
 * firewalld as kubeadm's FirewalldCheck asks systemd: absent when no unit
 * file of that name loads; live, active as `systemctl show` says; offline,
 * active when it starts at boot (the image's first boot starts it).
 */
export async function readFirewalld(host: TargetHost): Promise<AcceptanceFacts['firewalld']> {
  const unit = 'firewalld.service';
  const graph = await systemUnitGraph(host, [unit]).catch((e: Error) => e);
  if (graph instanceof Error) return notKnown(`the unit files cannot be read: ${graph.message}`);
  const u = graph.units.get(graph.resolve(unit));
  if (!u || u.entry === null) return known({ state: 'absent', how: 'no firewalld.service unit file' });
  if (host.live) {
    const r = await host.run('systemctl', ['show', '-p', 'ActiveState', '--value', unit]);
    if (r.exitCode !== 0) return notKnown(`systemctl show -p ActiveState ${unit} failed (exit ${r.exitCode})`);
    const state = r.stdout.trim();
    return known({ state: state === 'active' ? 'active' : 'inactive', how: `systemctl: ${unit} is ${state}` });
  }
  if (u.masked) return known({ state: 'inactive', how: `${unit} is masked` });
  const path = bootPaths(graph, [unit]).get(unit);
  return path ? known({ state: 'active', how: `${u.entry} starts at boot` }) : known({ state: 'inactive', how: `${u.entry} does not start at boot` });
}

/**
 * The node name looked up as kubeadm's Go resolver does: /etc/hosts under
 * the root first, then DNS (live only: `getent -s dns`, so that nss modules
 * Go does not consult, such as myhostname, answer nothing).
 */
export async function lookUpNodeName(host: TargetHost, name: Known<string>): Promise<AcceptanceFacts['nodeNameLookup']> {
  if (!name.known) return name;
  const hosts = await host.readFile('/etc/hosts').catch((e: Error) => e);
  if (hosts instanceof Error) return notKnown(`/etc/hosts cannot be read: ${hosts.message}`);
  const line = hosts === null ? null : hostsFileLine(hosts, name.value);
  if (line !== null) return known({ resolves: true, how: `/etc/hosts:${line}` });
  if (!host.live) return notKnown(`offline (--root ${host.root}): ${name.value} is not in /etc/hosts, and DNS is the booted host's`);
  const r = await host.run('getent', ['-s', 'dns', 'ahosts', name.value]);
  // getent: 0 found, 2 not found; anything else says nothing about the name.
  if (r.exitCode === 0) return known({ resolves: true, how: 'DNS' });
  if (r.exitCode === 2) return known({ resolves: false, how: 'not in /etc/hosts, and DNS has no address for it' });
  return notKnown(`getent -s dns ahosts ${name.value} failed (exit ${r.exitCode})`);
}

/** A live host's container marker: systemd writes /run/systemd/container when PID 1 runs in one (what systemd-detect-virt --container reads first). */
async function containerMarker(host: TargetHost): Promise<string | null> {
  if (!host.live) return null;
  const c = await host.readFile('/run/systemd/container').catch(() => null);
  return c === null ? null : `/run/systemd/container: ${JSON.stringify(c.trim().slice(0, 40))}`;
}

/**
 * The NTP clients as systemd sees them: a unit file that loads, and whether
 * it runs: it starts at boot (its enablement, read from the unit files, live
 * or offline), or live, `systemctl show` calls it active (started by hand).
 */
export async function readTimeSync(host: TargetHost): Promise<Known<TimeSyncFacts>> {
  const graph = await systemUnitGraph(host, TIME_SYNC_UNITS).catch((e: Error) => e);
  if (graph instanceof Error) return notKnown(`the unit files cannot be read: ${graph.message}`);
  const boots = bootPaths(graph, TIME_SYNC_UNITS);
  const clients: TimeSyncFacts['clients'] = [];
  const seen = new Set<string>();
  for (const unit of TIME_SYNC_UNITS) {
    // Debian's ntpsec.service is also ntp.service (Alias=): one client, named once.
    const u = graph.units.get(graph.resolve(unit));
    if (!u || u.entry === null || seen.has(graph.resolve(unit))) continue;
    seen.add(graph.resolve(unit));
    if (u.masked) {
      clients.push({ unit, runs: false, how: 'masked' });
      continue;
    }
    if (boots.get(unit)) {
      clients.push({ unit, runs: true, how: `${u.entry} starts at boot` });
      continue;
    }
    if (!host.live) {
      // Without a default target nothing is known to start at boot (SwapOff says the same): not a client that does not run.
      if (graph.defaultTarget === null)
        return notKnown(`${u.entry} is installed, and there is no default.target on the unit search path, so whether it starts at boot is unknown`);
      clients.push({ unit, runs: false, how: `${u.entry} does not start at boot` });
      continue;
    }
    const r = await host.run('systemctl', ['show', '-p', 'ActiveState', '--value', unit]);
    if (r.exitCode !== 0) return notKnown(`systemctl show -p ActiveState ${unit} failed (exit ${r.exitCode})`);
    const state = r.stdout.trim();
    clients.push({ unit, runs: state === 'active', how: `does not start at boot; systemctl: ${state}` });
  }
  return known({ container: await containerMarker(host), clients });
}

/**
 * kubelet.service as kubeadm's ServiceCheck asks systemd: absent when no unit
 * file loads; masked where the mask is; live, enabled as `systemctl
 * is-enabled` says (its exit 0, kubeadm's ServiceIsEnabled); offline, enabled
 * when it starts at boot.
 */
export async function readKubeletService(host: TargetHost): Promise<Known<KubeletServiceFacts>> {
  const unit = 'kubelet.service';
  const graph = await systemUnitGraph(host, [unit]).catch((e: Error) => e);
  if (graph instanceof Error) return notKnown(`the unit files cannot be read: ${graph.message}`);
  const u = graph.units.get(graph.resolve(unit));
  if (!u || u.entry === null) return known({ state: 'absent', entry: null, how: 'no kubelet.service unit file' });
  if (u.masked) return known({ state: 'masked', entry: u.entry, how: `masked by ${u.entry}` });
  if (host.live) {
    const r = await host.run('systemctl', ['is-enabled', unit]);
    const said = r.stdout.trim();
    // is-enabled exits 1 for disabled and the like, with the state on stdout; anything else (no systemctl, no bus) says nothing.
    if (r.exitCode !== 0 && (r.exitCode !== 1 || said === '')) return notKnown(`systemctl is-enabled ${unit} failed (exit ${r.exitCode})`);
    return known({ state: r.exitCode === 0 ? 'enabled' : 'disabled', entry: u.entry, how: `systemctl is-enabled: ${said}` });
  }
  if (graph.defaultTarget === null) return notKnown(`there is no default.target on the unit search path, so whether ${u.entry} starts at boot is unknown`);
  return bootPaths(graph, [unit]).get(unit)
    ? known({ state: 'enabled', entry: u.entry, how: `${u.entry} starts at boot` })
    : known({ state: 'disabled', entry: u.entry, how: `${u.entry} does not start at boot` });
}

/** systemd-resolved's list of the upstream servers it was given (resolved.conf(5), systemd-resolved.service(8)). */
export const RESOLVED_UPSTREAM = '/run/systemd/resolve/resolv.conf';

/**
 * A resolv.conf as kubelet would read it, its links resolved inside the root
 * (Host.realTarget never leaves it): null when nothing is there; not known
 * when a link points at nothing (offline, systemd-resolved's files in /run
 * are written at boot) or the file cannot be read.
 */
export async function readResolvFile(host: TargetFs, path: string): Promise<Known<ResolvFile | null>> {
  const link = await host.readLink(path).catch(() => null);
  const real = await host.realTarget(path).catch((e: Error) => e);
  if (real instanceof Error) return unreadable(`${path} cannot be resolved: ${real.message}`);
  const text = await host.readFile(path).catch((e: Error) => e);
  if (text instanceof Error) return unreadable(`${path}${real !== path ? ` (${real})` : ''} cannot be read: ${text.message}`);
  if (text === null) {
    if (link === null) return known(null);
    return notKnown(
      `${path} is a link to ${real}, which does not exist${host.live ? '' : ` (offline, --root ${host.root}: what is in /run is written at boot)`}`,
    );
  }
  return known({ path, real, addresses: podForwardAddresses(text) });
}

/** Whether a service is active, as `systemctl is-active` tells kubespray (ActiveState=active); live only. */
async function activeNow(host: TargetHost, unit: string): Promise<Known<boolean>> {
  if (!host.live) return notKnown(`offline (--root ${host.root}): whether ${unit} is active is the booted host's`);
  const r = await host.run('systemctl', ['show', '-p', 'ActiveState', '--value', unit]);
  if (r.exitCode !== 0) return notKnown(`systemctl show -p ActiveState ${unit} failed (exit ${r.exitCode})`);
  return known(r.stdout.trim() === 'active');
}

/**
 * /etc/resolv.conf, the file kubelet hands pods unless kubespray names another
 * (kube_resolv_conf). A missing file has no nameserver to loop to. Only when
 * its addresses are all loopback is the rest read: systemd-resolved's upstream
 * list and, live, the two services kubespray's DNS tasks depend on.
 */
export async function readResolvConf(host: TargetHost): Promise<Known<ResolvConfFacts>> {
  const path = '/etc/resolv.conf';
  const etc = await readResolvFile(host, path);
  if (!etc.known) return etc;
  const file = etc.value ?? { path, real: path, addresses: [] };
  if (!onlyLoopback(file.addresses)) return known({ ...file, beside: null });
  const active = {} as Record<(typeof DNS_SERVICES)[number], Known<boolean>>;
  for (const unit of DNS_SERVICES) active[unit] = await activeNow(host, unit);
  return known({ ...file, beside: { upstream: await readResolvFile(host, RESOLVED_UPSTREAM), active } });
}

/** `facts`: kubespray's report's (undefined offline or when gathering failed); `ks`: what kubespray gives kubeadm on this node. */
export async function acceptanceFacts(host: TargetHost, facts: Facts | undefined, ks: KubesprayValues): Promise<AcceptanceFacts> {
  const why = host.live ? 'the host facts could not be gathered (see the facts finding)' : `offline (--root ${host.root}): it is the running host's`;
  return {
    cpus: fromFacts(facts, why, (f) => f.processor_vcpus),
    memTotalMb: fromFacts(facts, why, (f) => f.memtotal_mb),
    kernelRelease: fromFacts(facts, why, (f) => f.kernel),
    cgroup: await readCgroups(host),
    programs: await lookUpPrograms(host),
    kubeVersion: ks.kubeVersion,
    firewalld: await readFirewalld(host),
    apiserverPort: ks.apiserverPort,
    nodeName: ks.nodeName,
    nodeNameLookup: await lookUpNodeName(host, ks.nodeName),
    timeSync: await readTimeSync(host),
    kubeletService: await readKubeletService(host),
    resolvConf: await readResolvConf(host),
    runtimeCollision: await readRuntimeCollision(host),
    kubeadmProxy: await readKubeadmProxy(host, ks.kubeadmPlayEnv),
    eviction: ks.eviction,
    diskSpace: await readDiskSpace(host, ks.imageFsDir),
    networkManager: await readNetworkManager(host),
    networkPlugin: ks.networkPlugin,
    forward: await readForward(host),
    firewall: await readFirewall(host, ks.apiserverPort),
    ipv6Stack: ks.ipv6Stack,
  };
}

/** kubelet's default --root-dir; kubespray's kubelet templates do not change it. */
export const KUBELET_ROOT_DIR = '/var/lib/kubelet';

/** statfs of the file system `dir` will be on: its own, or its nearest existing parent's (before the install it may not exist). */
async function watchedFs(host: TargetHost, dir: string): Promise<WatchedFs> {
  for (let d = dir; ; d = path.posix.dirname(d)) {
    const usage = await host.statfs(d);
    if (usage !== null) return { dir: d === dir ? dir : `${dir} (not there yet: ${d})`, usage };
    if (d === '/') throw new Error(`no file system found for ${dir}`);
  }
}

/** nodefs and imagefs as kubelet will measure them; live only (an image's disk is not the one it will boot on). */
export async function readDiskSpace(host: TargetHost, imageFsDir: Known<string | null>): Promise<Known<DiskSpaceFacts>> {
  if (!host.live) return notKnown(`offline (--root ${host.root}): the free space is the booted host's`);
  try {
    const nodefs = await watchedFs(host, KUBELET_ROOT_DIR);
    const imagefs = imageFsDir.known && imageFsDir.value !== null ? await watchedFs(host, imageFsDir.value) : null;
    return known({ nodefs, imagefs });
  } catch (e) {
    return notKnown(`the free space cannot be read: ${(e as Error).message}`);
  }
}

/** The login environment pam_env gives an SSH session, which Ansible's tasks inherit. */
export const LOGIN_ENVIRONMENT = '/etc/environment';

/**
 * The https proxy kubeadm's HTTPProxy checks will find: the play's environment over /etc/environment's. An
 * image's /etc/environment is the one its booted host will have, so this is read offline too.
 */
export async function readKubeadmProxy(
  host: TargetHost,
  play: Known<{ vars: Record<string, unknown> | null; where: string }>,
): Promise<Known<KubeadmProxyFacts>> {
  if (!play.known) return play;
  const text = await host.readFile(LOGIN_ENVIRONMENT).catch((e: Error) => e);
  if (text instanceof Error) return notKnown(`${LOGIN_ENVIRONMENT} cannot be read: ${text.message}`);
  const env = kubeadmEnvironment(readEnvironmentFile(text ?? ''), LOGIN_ENVIRONMENT, play.value.vars, play.value.where);
  const how =
    play.value.vars === null
      ? `the play at ${play.value.where} sets no environment, so the login's (${LOGIN_ENVIRONMENT})`
      : `the play's environment at ${play.value.where} over ${LOGIN_ENVIRONMENT}`;
  return known({ https: firstSet(env, HTTPS_PROXY_VARS), noProxy: firstSet(env, NO_PROXY_VARS), how });
}
