// What leaves the filter FORWARD hook dropping by default, now and at the
// next boot. Now (live): the ruleset read with the real programs,
// `iptables-save -t filter` (iptables-save.ts) and `nft -j list ruleset`
// (nft-json.ts). At boot: the writers that start then, each read as it reads
// its files: ufw-init (ufw.service) sources /etc/default/ufw then
// /etc/ufw/ufw.conf and, with ENABLED=yes, sets FORWARD to
// DEFAULT_FORWARD_POLICY (REJECT being DROP plus a reject rule);
// netfilter-persistent's 15-ip4tables plugin runs iptables-restore <
// /etc/iptables/rules.v4; nftables.service runs nft -f /etc/nftables.conf.
// IPv4 is read from iptables-save, rules.v4 and nft's ip, inet and bridge
// tables; IPv6 (`ipv6`) from ip6tables-save, rules.v6 (netfilter-persistent's
// 25-ip6tables plugin) and nft's ip6, inet and bridge tables, and ufw-init's
// ip6tables FORWARD: DEFAULT_FORWARD_POLICY with IPV6=yes, DROP otherwise
// (ufw-init-functions: "IPv6 support disabled but available in the kernel,
// so default DROP"). Whether IPv6 is judged is the check's to say. A file
// that decides it and cannot be read is unreadable (the check's loud
// unknown), naming file:line.
import type { TargetHost } from '../host.js';
import { commandFile } from '../facts/command-path.js';
import { systemUnitGraph } from '../systemd/system-graph.js';
import { bootPaths } from '../systemd/boot-reach.js';
import type { UnitGraph } from '../systemd/unit-loader.js';
import { shellSimpleCommandsAt } from '../lex/shell.js';
import { ShellVariables } from '../lex/shell-variables.js';
import type { Known } from './checker.js';
import { known, notKnown, unreadable } from './checker.js';
import { parseSaved, policyOf } from './iptables-save.js';
import { parseNftConf } from './nft-conf.js';
import { parseNftJson } from './nft-json.js';
import type { FlaggedTable, LiveChain } from './nft-json.js';
import { nftTableFlags } from './nft-table-flags.js';

/** One thing that makes forwarded IPv4 packets dropped by default, and where it says so (file:line, or the program's output). */
export interface ForwardDrop {
  what: string;
  where: string;
  /** An nftables base chain of its own table: an ACCEPT in iptables' FORWARD (a CNI's) does not pass it. */
  ownTable?: true;
}

export interface ForwardFacts {
  /** The running ruleset; 'offline' for an image (its ruleset is the booted host's). */
  now: Known<ForwardDrop[]> | 'offline';
  atBoot: ForwardDrop[];
  /** docker.service's unit file when it starts at boot (dockerd may set the policy itself). */
  docker: string | null;
  /** The same for forwarded IPv6 packets (the ip6 tables); absent where it was not read. */
  ipv6?: Known<Omit<ForwardFacts, 'docker' | 'ipv6'>>;
}

/** IPv4 (iptables, rules.v4, nft's ip tables) or IPv6 (ip6tables, rules.v6, nft's ip6 tables). */
export type IpFamily = 4 | 6;

const PATH = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };
/** The nft families whose forward hook a forwarded packet of each IP family passes: inet holds both. */
const FAMILIES = { 4: new Set(['ip', 'inet', 'bridge']), 6: new Set(['ip6', 'inet', 'bridge']) };
/** Per IP family: the save program, the nft family iptables-nft keeps its tables in, netfilter-persistent's file. */
export const SAVE = { 4: 'iptables-save', 6: 'ip6tables-save' } as const;
export const XT_FAMILY = { 4: 'ip', 6: 'ip6' } as const;
export const UFW_DEFAULTS = '/etc/default/ufw';
export const UFW_CONF = '/etc/ufw/ufw.conf';
export const RULES_V4 = '/etc/iptables/rules.v4';
export const RULES_V6 = '/etc/iptables/rules.v6';
export const RULES = { 4: RULES_V4, 6: RULES_V6 } as const;
export const NFTABLES_CONF = '/etc/nftables.conf';
export const WRITER_UNITS = ['ufw.service', 'netfilter-persistent.service', 'nftables.service', 'docker.service'] as const;

/** An nft base chain on the forward hook whose policy drops, in a family the IP family's pod traffic passes. */
const dropsForward = (ip: IpFamily) => (c: { family: string; hook: string | null; policy: string | null; dormant: boolean }) =>
  c.hook === 'forward' && c.policy === 'drop' && !c.dormant && FAMILIES[ip].has(c.family);

/**
 * A program as PATH finds it, by the name found there (iptables-save is a link to xtables-nft-multi, which
 * dispatches on the name it is run by); null when no PATH entry has it.
 */
export async function program(host: TargetHost, name: string): Promise<Known<string | null>> {
  const f = await commandFile(host, name, PATH);
  if (f.kind === 'unknown') return notKnown(`where ${name} is cannot be told: ${f.reason}`);
  return known(f.kind === 'file' ? f.named : null);
}

/** ip[6]tables-save's filter FORWARD policy; and whether its backend is nf_tables (its chains are then nft's ip[6] filter too). */
async function iptablesNow(host: TargetHost, drops: ForwardDrop[], ip: IpFamily): Promise<Known<boolean>> {
  const save = await program(host, SAVE[ip]);
  if (!save.known) return save;
  if (save.value === null) return known(false);
  const r = await host.run(save.value, ['-t', 'filter']);
  if (r.exitCode !== 0) return notKnown(`${save.value} -t filter failed (exit ${r.exitCode}): ${r.stderr.trim().slice(0, 200)}`);
  const p = parseSaved(r.stdout);
  if (!p.ok) return unreadable(`the output of ${save.value} -t filter, line ${p.line}: ${p.reason}`);
  const pol = policyOf(p.tables, 'filter', 'FORWARD');
  if (pol?.policy === 'DROP')
    drops.push({
      what: `${SAVE[ip].replace('-save', '')} (${p.backend ?? 'backend not named'})`,
      where: `${save.value} -t filter, line ${pol.line}: :FORWARD DROP`,
    });
  return known(p.backend === 'nf_tables');
}

/**
 * The chains with each flagged table's dormant mark read from `nft list table` (text): nft 1.0.6's JSON prints
 * flags from freed memory (nft-json.ts).
 */
async function withDormantFromText(host: TargetHost, nft: string, chains: LiveChain[], flagged: FlaggedTable[]): Promise<Known<LiveChain[]>> {
  const dormant = new Map<string, boolean>();
  for (const t of flagged) {
    const r = await host.run(nft, ['list', 'table', t.family, t.name]);
    const what = `${nft} list table ${t.family} ${t.name}`;
    if (r.exitCode !== 0) return notKnown(`${what} failed (exit ${r.exitCode}): ${r.stderr.trim().slice(0, 200)}`);
    const f = nftTableFlags(r.stdout, t.family, t.name);
    if (!f.ok) return unreadable(`the output of ${what}, line ${f.line}: ${f.reason}`);
    dormant.set(`${t.family} ${t.name}`, f.flags.includes('dormant'));
  }
  return known(chains.map((c) => ({ ...c, dormant: dormant.get(`${c.family} ${c.table}`) ?? c.dormant })));
}

export async function readForwardNow(host: TargetHost, ip: IpFamily = 4): Promise<Known<ForwardDrop[]>> {
  if (!host.live) return notKnown(`offline (--root ${host.root}): the ruleset is the running kernel's`);
  const drops: ForwardDrop[] = [];
  const viaNft = await iptablesNow(host, drops, ip);
  if (!viaNft.known) return viaNft;
  const nft = await program(host, 'nft');
  if (!nft.known) return nft;
  if (nft.value === null) return known(drops);
  const r = await host.run(nft.value, ['-j', 'list', 'ruleset']);
  if (r.exitCode !== 0) return notKnown(`${nft.value} -j list ruleset failed (exit ${r.exitCode}): ${r.stderr.trim().slice(0, 200)}`);
  const p = parseNftJson(r.stdout);
  if (!p.ok) return unreadable(`the output of ${nft.value} -j list ruleset: ${p.reason}`);
  const chains = await withDormantFromText(host, nft.value, p.chains, p.flagged);
  if (!chains.known) return chains;
  for (const c of chains.value.filter(dropsForward(ip))) {
    // iptables-nft keeps its filter table as nft's "ip filter" (ip6tables-nft's as "ip6 filter"): the chain ip[6]tables-save read already.
    if (viaNft.value && c.family === XT_FAMILY[ip] && c.table === 'filter' && c.name === 'FORWARD') continue;
    drops.push({ what: 'nftables', where: `${nft.value} -j list ruleset: table ${c.family} ${c.table} chain ${c.name} policy drop`, ownTable: true });
  }
  return known(drops);
}

/** The 1-based line of an offset in text. */
const lineAt = (text: string, at: number) => text.slice(0, at).split('\n').length;

/** A variable as ufw-init's `. FILE` leaves it: null when no file assigns it; not known when it is not a literal. */
export function sourcedValue(files: { path: string; text: string }[], name: string): Known<{ value: string; at: string } | null> {
  const text = files.map((f) => f.text).join('\n');
  const cmds = shellSimpleCommandsAt(text);
  const assigned = cmds.flatMap((c) => (c.words.length === 0 ? (c.assignments ?? []) : [])).filter((t) => (t.word ?? t.prefix ?? '').startsWith(`${name}=`));
  const last = assigned[assigned.length - 1];
  if (!last) return known(null);
  let line = lineAt(text, last.at);
  let file = files[0]!;
  for (const f of files) {
    const n = f.text.split('\n').length;
    if (line <= n) {
      file = f;
      break;
    }
    line -= n;
  }
  const value = new ShellVariables(cmds).value(name, text.length);
  if (value === null) return unreadable(`${file.path}:${line}: ${name} is not a literal value (ufw-init sources this file as shell)`);
  return known({ value, at: `${file.path}:${line}` });
}

/** ufw-init's two files as it sources them; null when either is missing or empty (it stops with "Could not find"). */
export async function ufwFiles(host: TargetHost): Promise<Known<{ path: string; text: string }[] | null>> {
  const files: { path: string; text: string }[] = [];
  for (const path of [UFW_DEFAULTS, UFW_CONF]) {
    const text = await host.readFile(path).catch((e: Error) => e);
    if (text instanceof Error) return unreadable(`${path} cannot be read: ${text.message}`);
    if (text === null || text === '') return known(null);
    files.push({ path, text });
  }
  return known(files);
}

/** ufw-init-functions' line that sets ip6tables' INPUT (and the next FORWARD) to DROP when IPV6 is not yes. */
export const UFW_IPV6_OFF = { file: '/lib/ufw/ufw-init-functions', input: 148, forward: 149 };

/**
 * IPV6 as ufw-init tests it ("yes" or "YES" applies the IPv6 rules; anything else, with IPv6 in the kernel, sets
 * ip6tables' INPUT and FORWARD to DROP, lo accepted), and where it is set (or that no file sets it).
 */
export function ufwIpv6(files: { path: string; text: string }[]): Known<{ yes: boolean; said: string }> {
  const v = sourcedValue(files, 'IPV6');
  if (!v.known) return v;
  const yes = v.value?.value === 'yes' || v.value?.value === 'YES';
  return known({ yes, said: v.value === null ? `IPV6 set in neither ${UFW_DEFAULTS} nor ${UFW_CONF}` : `${v.value.at} IPV6=${v.value.value}` });
}

async function ufwAtBoot(host: TargetHost, entry: string, ip: IpFamily): Promise<Known<ForwardDrop | null>> {
  const read = await ufwFiles(host);
  if (!read.known || read.value === null) return read.known ? known(null) : read;
  const files = read.value;
  const enabled = sourcedValue(files, 'ENABLED');
  if (!enabled.known) return enabled;
  if (enabled.value?.value !== 'yes' && enabled.value?.value !== 'YES') return known(null);
  const v6 = ip === 6 ? ufwIpv6(files) : known({ yes: true, said: '' });
  if (!v6.known) return v6;
  if (!v6.value.yes)
    return known({
      what: 'ufw (IPv6)',
      where: `${enabled.value.at} ENABLED=${enabled.value.value}, ${v6.value.said}: ufw-init sets ip6tables' FORWARD to DROP (${UFW_IPV6_OFF.file}:${UFW_IPV6_OFF.forward}), ${entry} starts at boot`,
    });
  const pol = sourcedValue(files, 'DEFAULT_FORWARD_POLICY');
  if (!pol.known) return pol;
  const p = pol.value?.value ?? '';
  if (p === 'ACCEPT') return known(null);
  if (p !== 'DROP' && p !== 'REJECT')
    return unreadable(`${pol.value?.at ?? UFW_DEFAULTS}: DEFAULT_FORWARD_POLICY ${JSON.stringify(p)} is not one ufw-init sets`);
  return known({
    what: ip === 4 ? 'ufw' : 'ufw (IPv6)',
    where: `${enabled.value.at} ENABLED=${enabled.value.value}, ${ip === 6 ? `${v6.value.said}, ` : ''}${pol.value!.at} DEFAULT_FORWARD_POLICY="${p}", ${entry} starts at boot`,
  });
}

/** netfilter-persistent's 15-ip4tables plugin restores rules.v4, its 25-ip6tables plugin rules.v6. */
async function rulesAtBoot(host: TargetHost, entry: string, ip: IpFamily): Promise<Known<ForwardDrop | null>> {
  const file = RULES[ip];
  const text = await host.readFile(file).catch((e: Error) => e);
  if (text instanceof Error) return unreadable(`${file} cannot be read: ${text.message}`);
  if (text === null) return known(null);
  const p = parseSaved(text);
  if (!p.ok) return unreadable(`${file}:${p.line}: ${p.reason}`);
  const pol = policyOf(p.tables, 'filter', 'FORWARD');
  const what = ip === 4 ? 'iptables-persistent' : 'ip6tables-persistent';
  return known(pol?.policy === 'DROP' ? { what, where: `${file}:${pol.line} :FORWARD DROP, ${entry} starts at boot` } : null);
}

async function nftablesAtBoot(host: TargetHost, entry: string, ip: IpFamily): Promise<Known<ForwardDrop[]>> {
  const text = await host.readFile(NFTABLES_CONF).catch((e: Error) => e);
  if (text instanceof Error) return unreadable(`${NFTABLES_CONF} cannot be read: ${text.message}`);
  if (text === null) return known([]);
  const p = parseNftConf(text);
  if (!p.ok) return unreadable(`${NFTABLES_CONF}:${p.line}: ${p.reason}`);
  return known(
    p.chains.filter(dropsForward(ip)).map((c) => ({
      what: 'nftables',
      where: `${NFTABLES_CONF}:${c.policyLine} table ${c.family} ${c.table} chain ${c.name} policy drop, ${entry} starts at boot`,
      ownTable: true as const,
    })),
  );
}

/** Each writer unit that starts at boot, with its unit file; not known offline without a default target. */
function startingAtBoot(graph: UnitGraph): Known<Map<string, string>> {
  const boots = bootPaths(graph, WRITER_UNITS);
  const out = new Map<string, string>();
  for (const unit of WRITER_UNITS) {
    const u = graph.units.get(graph.resolve(unit));
    if (!u || u.entry === null || u.masked) continue;
    if (graph.defaultTarget === null)
      return notKnown(`${u.entry} is installed, and there is no default.target on the unit search path, so whether it starts at boot is unknown`);
    if (boots.get(unit)) out.set(unit, u.entry);
  }
  return known(out);
}

export async function readForwardAtBoot(host: TargetHost, ip: IpFamily = 4): Promise<Known<{ drops: ForwardDrop[]; docker: string | null }>> {
  const graph = await systemUnitGraph(host, WRITER_UNITS).catch((e: Error) => e);
  if (graph instanceof Error) return notKnown(`the unit files cannot be read: ${graph.message}`);
  const starts = startingAtBoot(graph);
  if (!starts.known) return starts;
  const drops: ForwardDrop[] = [];
  const s = starts.value;
  const readers: [string, (e: string) => Promise<Known<ForwardDrop | ForwardDrop[] | null>>][] = [
    ['ufw.service', (e) => ufwAtBoot(host, e, ip)],
    ['netfilter-persistent.service', (e) => rulesAtBoot(host, e, ip)],
    ['nftables.service', (e) => nftablesAtBoot(host, e, ip)],
  ];
  for (const [unit, read] of readers) {
    if (!s.has(unit)) continue;
    const d = await read(s.get(unit)!);
    if (!d.known) return d;
    if (d.value !== null) drops.push(...(Array.isArray(d.value) ? d.value : [d.value]));
  }
  return known({ drops, docker: s.get('docker.service') ?? null });
}

export async function readForward(host: TargetHost): Promise<Known<ForwardFacts>> {
  const boot = await readForwardAtBoot(host);
  if (!boot.known) return boot;
  const boot6 = await readForwardAtBoot(host, 6);
  const ipv6 = boot6.known ? known({ now: host.live ? await readForwardNow(host, 6) : ('offline' as const), atBoot: boot6.value.drops }) : boot6;
  return known({ now: host.live ? await readForwardNow(host) : 'offline', atBoot: boot.value.drops, docker: boot.value.docker, ipv6 });
}
