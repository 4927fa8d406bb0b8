// NetworkManager on this host, read once: whether it runs (its unit starts at
// boot, read from the unit files live or offline; or, live, systemctl calls
// it active), whether it is active now (what kubespray's `systemctl
// is-active NetworkManager.service` register will say), and the
// configuration files it reads (nm-conf.ts NM_MAIN, NM_CONF_DIRS), kept as
// text so that who-fixes can add the files kubespray writes and merge again.
import type { TargetHost } from '../host.js';
import type { Known } from './checker.js';
import { known, notKnown, unreadable } from './checker.js';
import { systemUnitGraph } from '../systemd/system-graph.js';
import { bootPaths } from '../systemd/boot-reach.js';
import { NM_CONF_DIRS, NM_MAIN, isConfName, type NmConfFile } from './nm-conf.js';

export const NM_UNIT = 'NetworkManager.service';

export interface NetworkManagerFacts {
  /** null: no NetworkManager.service unit file; else whether it runs and how that was read. */
  runs: { yes: boolean; how: string } | null;
  /** Live: ActiveState is active (kubespray's is-active register); offline: not known. */
  active: Known<boolean>;
  main: NmConfFile | null;
  /** Each conf.d directory's *.conf files (a missing directory: none). */
  dirs: Record<string, NmConfFile[]>;
  /**
   * NetworkManager's udev rule that leaves veth devices unmanaged: in force
   * (the package's file, not shadowed), absent, or shadowed by a file of the
   * same name in /etc or /run's rules.d (udev reads that one instead; its
   * rules are not read here).
   */
  vethRule: { state: 'in force' | 'absent'; file: string } | { state: 'shadowed'; file: string };
}

export const NM_UDEV_RULE = '85-nm-unmanaged.rules';
/** udev's rules directories, the first that has a name winning (udev(7)); /lib's is the package's on Debian. */
const UDEV_RULES_DIRS = ['/etc/udev/rules.d', '/run/udev/rules.d', '/usr/lib/udev/rules.d', '/lib/udev/rules.d'];

async function readVethRule(host: TargetHost): Promise<NetworkManagerFacts['vethRule']> {
  for (const d of UDEV_RULES_DIRS) {
    const f = `${d}/${NM_UDEV_RULE}`;
    if (!(await host.exists(f))) continue;
    return d.startsWith('/etc') || d.startsWith('/run') ? { state: 'shadowed', file: f } : { state: 'in force', file: f };
  }
  return { state: 'absent', file: `/lib/udev/rules.d/${NM_UDEV_RULE}` };
}

async function activeState(host: TargetHost): Promise<Known<boolean>> {
  if (!host.live) return notKnown(`offline (--root ${host.root}): whether ${NM_UNIT} is active is the booted host's`);
  const r = await host.run('systemctl', ['show', '-p', 'ActiveState', '--value', NM_UNIT]);
  if (r.exitCode !== 0) return notKnown(`systemctl show -p ActiveState ${NM_UNIT} failed (exit ${r.exitCode})`);
  return known(r.stdout.trim() === 'active');
}

/** Whether the unit runs: null when there is no unit file; not known when the unit files cannot be read. */
async function readRuns(host: TargetHost, active: Known<boolean>): Promise<Known<NetworkManagerFacts['runs']>> {
  const graph = await systemUnitGraph(host, [NM_UNIT]).catch((e: Error) => e);
  if (graph instanceof Error) return notKnown(`the unit files cannot be read: ${graph.message}`);
  const u = graph.units.get(graph.resolve(NM_UNIT));
  if (!u || u.entry === null) return known(null);
  if (active.known && active.value) return known({ yes: true, how: `systemctl: ${NM_UNIT} is active` });
  if (u.masked) return known({ yes: false, how: `${NM_UNIT} is masked` });
  if (bootPaths(graph, [NM_UNIT]).get(NM_UNIT)) return known({ yes: true, how: `${u.entry} starts at boot` });
  if (!host.live && graph.defaultTarget === null)
    return notKnown(`${u.entry} is installed, and there is no default.target on the unit search path, so whether it starts at boot is unknown`);
  return known({ yes: false, how: `${u.entry} does not start at boot${active.known ? ' and is not active' : ''}` });
}

/** The *.conf files of one conf.d directory, as NM lists them (every name ending in .conf). */
async function confDir(host: TargetHost, dir: string): Promise<Known<NmConfFile[]>> {
  const entries = await host.readDir(dir).catch((e: Error) => e);
  if (entries instanceof Error) return unreadable(`${dir} cannot be listed: ${entries.message}`);
  const out: NmConfFile[] = [];
  for (const e of entries ?? []) {
    if (!isConfName(e.name) || e.isDirectory()) continue;
    const p = `${dir}/${e.name}`;
    const text = await host.readFile(p).catch((err: Error) => err);
    if (text instanceof Error) return unreadable(`${p} cannot be read: ${text.message}`);
    if (text !== null) out.push({ path: p, text });
  }
  return known(out);
}

/** Read only when NetworkManager's unit file is there: its configuration is what decides then. */
export async function readNetworkManager(host: TargetHost): Promise<Known<NetworkManagerFacts>> {
  // systemctl is asked only where the unit file is there (a stock server has none).
  const graph = await systemUnitGraph(host, [NM_UNIT]).catch(() => null);
  const u = graph?.units.get(graph.resolve(NM_UNIT));
  const active = graph !== null && (!u || u.entry === null) ? known(false) : await activeState(host);
  const runs = await readRuns(host, active);
  if (!runs.known) return runs;
  const none: NetworkManagerFacts = { runs: runs.value, active, main: null, dirs: {}, vethRule: { state: 'absent', file: '' } };
  if (runs.value === null || !runs.value.yes) return known(none);
  const mainText = await host.readFile(NM_MAIN).catch((e: Error) => e);
  if (mainText instanceof Error) return unreadable(`${NM_MAIN} cannot be read: ${mainText.message}`);
  const dirs: Record<string, NmConfFile[]> = {};
  for (const d of NM_CONF_DIRS) {
    const files = await confDir(host, d);
    if (!files.known) return files;
    dirs[d] = files.value;
  }
  return known({ ...none, main: mainText === null ? null : { path: NM_MAIN, text: mainText }, dirs, vethRule: await readVethRule(host) });
}
