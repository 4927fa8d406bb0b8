// What PreviousCluster reads: the former node's evidence (src/former-node/evidence.ts), the directories a
// reset moves aside, measured, and the node's units with what would start them at boot (their links) and,
// live, whether they run now. Under policy report nothing is read: the FormerNode finding reads the host.
import path from 'node:path';
import type { TargetHost } from '../../host.js';
import { observeFormerNode, type NodeEvidence } from '../../former-node/evidence.js';
import { nodeUnits, resetDirs, type ResetDir } from '../../former-node/reset-targets.js';
import { enablementOf } from '../../systemd/unit-links.js';
import { systemctlValue } from '../../systemd/systemctl-show.js';
import type { PreviousClusterSpec } from './spec.js';
import { readKubeChains, type KubeChains } from '../../former-node/kube-chains.js';
import { readKubeNftTables, type NftTable } from '../../former-node/kube-nft-tables.js';

/** What `nft -j list tables` said: kube-proxy's tables, or why it could not be read; null when nft is not installed, or offline. */
export type NftTablesRead = { tables: NftTable[] } | { error: string } | null;

/** What iptables-save (or ip6tables-save) said: its Kubernetes chains, or why it could not be read. */
export type ChainsRead = { program: 'iptables' | 'ip6tables'; chains: KubeChains } | { program: 'iptables' | 'ip6tables'; error: string };

/** Where an admin's (or an installer's: kubespray, k3s, rke2) unit files live: set aside with the unit. Vendor dirs are a package's. */
export const ADMIN_UNIT_DIRS = ['/etc/systemd/system', '/usr/local/lib/systemd/system'];

export interface ObservedUnit {
  unit: string;
  file: string;
  /** The file is a mask: nothing at boot starts the unit, whatever links it has. */
  masked: boolean;
  /** The unit file and its drop-in directory when they are an admin's (ADMIN_UNIT_DIRS): moved aside with the unit. */
  files: string[];
  /** Live: ActiveState (null: systemctl did not say); offline: null. */
  active: string | null;
  /** What `systemctl disable UNIT` removes (Also= included). */
  links: string[];
  /** Links in vendor directories: disable leaves them. */
  vendorLinks: string[];
}

export interface PreviousClusterObserved {
  policy: PreviousClusterSpec['policy'];
  live: boolean;
  evidence: NodeEvidence[];
  dirs: ResetDir[];
  units: ObservedUnit[];
  /** Live only: the chains kube-proxy and CNI plugins left, per family; absent where the program is not installed. */
  chains: ChainsRead[];
  /** Live only: the tables kube-proxy's nftables mode left. */
  nftTables: NftTablesRead;
}

/** Live: iptables-save and ip6tables-save read (a program not installed: nothing to read). */
async function readChains(host: TargetHost): Promise<ChainsRead[]> {
  if (!host.live) return [];
  const out: ChainsRead[] = [];
  for (const program of ['iptables', 'ip6tables'] as const) {
    const r = await host.run(`${program}-save`, []).catch((e: Error) => ({ exitCode: -1, stdout: '', stderr: e.message }));
    if (r.exitCode === 127) continue;
    out.push(r.exitCode === 0 ? { program, chains: readKubeChains(r.stdout) } : { program, error: `${program}-save exited ${r.exitCode}: ${r.stderr.trim()}` });
  }
  return out;
}

/** Live: kube-proxy's nftables tables (nft not installed: nothing to read). */
async function readNftTables(host: TargetHost): Promise<NftTablesRead> {
  if (!host.live) return null;
  const r = await host.run('nft', ['-j', 'list', 'tables']).catch((e: Error) => ({ exitCode: -1, stdout: '', stderr: e.message }));
  if (r.exitCode === 127) return null;
  if (r.exitCode !== 0) return { error: `nft -j list tables exited ${r.exitCode}: ${r.stderr.trim()}` };
  const read = readKubeNftTables(r.stdout);
  return read.ok ? { tables: read.tables } : { error: `nft -j list tables printed what is not its JSON (${read.reason})` };
}

/** The unit's own file when it is an admin's, and its drop-in directories there; a link (a mask, systemctl link) is never moved. */
async function unitFiles(host: TargetHost, unit: string, file: string): Promise<string[]> {
  const out: string[] = [];
  const fileSt = await host.lstat(file);
  if (ADMIN_UNIT_DIRS.includes(path.posix.dirname(file)) && fileSt !== null && !fileSt.isSymbolicLink()) out.push(file);
  for (const dir of ADMIN_UNIT_DIRS) {
    const dropIns = path.posix.join(dir, `${unit}.d`);
    const st = await host.lstat(dropIns);
    if (st?.isDirectory()) out.push(dropIns);
  }
  return out;
}

export async function observePreviousCluster(host: TargetHost, spec: PreviousClusterSpec): Promise<PreviousClusterObserved> {
  const none = { policy: spec.policy, live: host.live, evidence: [], dirs: [], units: [], chains: [], nftTables: null };
  if (spec.policy === 'report') return none;
  const evidence = await observeFormerNode(host);
  const found = await nodeUnits(host, evidence);
  const enabled = await enablementOf(
    host,
    found.map((u) => u.unit),
  );
  const units: ObservedUnit[] = [];
  for (const { unit, file, masked } of found) {
    const en = enabled.get(unit);
    units.push({
      unit,
      file,
      masked,
      files: await unitFiles(host, unit, file),
      active: host.live ? await systemctlValue(host, 'ActiveState', unit) : null,
      links: en ? [...en.links, ...en.alsoLinks] : [],
      vendorLinks: en?.vendorLinks ?? [],
    });
  }
  return {
    policy: spec.policy,
    live: host.live,
    evidence,
    dirs: await resetDirs(host),
    units,
    chains: await readChains(host),
    nftTables: await readNftTables(host),
  };
}
