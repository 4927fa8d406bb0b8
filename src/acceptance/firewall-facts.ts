// What a new TCP connection from another node to each control-plane port
// meets in the filter INPUT hook, now and at the next boot (firewall-eval.ts
// evaluates each ruleset). Now (live): `iptables-save -t filter` and the
// native nftables tables of `nft list ruleset` (iptables-nft's own "ip
// filter" is iptables-save's). At boot, as the writers that start then load
// their files: ufw-init (ENABLED=yes) builds INPUT as /lib/ufw/ufw-init-functions
// does (INPUT jumps to ufw-before-logging-input, ufw-before-input,
// ufw-after-input, ufw-after-logging-input, ufw-reject-input,
// ufw-track-input; before.rules, after.rules and user.rules restored into
// them; ufw-before-input then jumps to ufw-user-input; DEFAULT_INPUT_POLICY
// the policy, REJECT being DROP plus a reject rule), netfilter-persistent
// restores /etc/iptables/rules.v4, nftables.service loads /etc/nftables.conf.
// IPv6 (`ipv6`): the same from ip6tables-save and nft's ip6 and inet tables,
// the connection then an IPv6 one (firewall-eval.ts); at boot ufw's ufw6-
// chains from before6.rules, after6.rules and user6.rules with IPV6=yes (with
// IPV6 not yes ufw-init sets ip6tables' INPUT to DROP, only lo accepted),
// /etc/iptables/rules.v6, and nftables.conf's ip6 and inet tables.
import type { TargetHost } from '../host.js';
import type { Known } from './checker.js';
import { known, notKnown, unreadable } from './checker.js';
import { parseSaved, policyOf, type SavedTable } from './iptables-save.js';
import { parseNftConf } from './nft-conf.js';
import { evaluateIptablesInput, evaluateNftInput, type Verdict } from './firewall-eval.js';
import { NFTABLES_CONF, RULES, SAVE, UFW_DEFAULTS, UFW_IPV6_OFF, XT_FAMILY, program, sourcedValue, ufwFiles, ufwIpv6, type IpFamily } from './forward-facts.js';
import { systemUnitGraph } from '../systemd/system-graph.js';
import { bootPaths } from '../systemd/boot-reach.js';

/** kube-apiserver (kube_apiserver_port), etcd's client and peer ports, kubelet, kube-controller-manager, kube-scheduler. */
export const CONTROL_PLANE_PORTS = [6443, 2379, 2380, 10250, 10257, 10259];

export interface PortVerdict {
  /** Which ruleset: "now (iptables-save)", "at boot (ufw)". */
  source: string;
  port: number;
  verdict: Verdict;
  /** The file (or program output) the verdict's line is in. */
  file: string;
}

export type FirewallFacts = {
  now: Known<PortVerdict[]> | 'offline';
  atBoot: PortVerdict[];
  /** The same for a new IPv6 connection (the ip6 tables); absent where it was not read. */
  ipv6?: Known<{ now: Known<PortVerdict[]> | 'offline'; atBoot: PortVerdict[] }>;
};

const UFW_UNIT_FUNCTIONS = '/lib/ufw/ufw-init-functions';
/** ufw-init's rules files: before${type}.rules, after${type}.rules, user${type}.rules, type "6" for ip6tables. */
const ufwRules = (type: '' | '6') => [`/etc/ufw/before${type}.rules`, `/etc/ufw/after${type}.rules`, `/etc/ufw/user${type}.rules`];
const UFW_CHAINS = ['before-logging-input', 'before-input', 'after-input', 'after-logging-input', 'reject-input', 'track-input'];

function each(ports: number[], source: string, file: string, judge: (port: number) => Verdict): PortVerdict[] {
  return ports.map((port) => ({ source, port, verdict: judge(port), file }));
}

const filterOf = (tables: SavedTable[]): SavedTable => {
  const t: SavedTable = { name: 'filter', line: 0, chains: [], rules: [] };
  for (const x of tables.filter((y) => y.name === 'filter')) {
    t.chains.push(...x.chains);
    t.rules.push(...x.rules);
  }
  return t;
};

async function iptablesNow(host: TargetHost, ports: number[], ip: IpFamily): Promise<Known<{ verdicts: PortVerdict[]; viaNft: boolean }>> {
  const save = await program(host, SAVE[ip]);
  if (!save.known) return save;
  if (save.value === null) return known({ verdicts: [], viaNft: false });
  const r = await host.run(save.value, ['-t', 'filter']);
  if (r.exitCode !== 0) return notKnown(`${save.value} -t filter failed (exit ${r.exitCode})`);
  const p = parseSaved(r.stdout);
  if (!p.ok) return unreadable(`the output of ${save.value} -t filter, line ${p.line}: ${p.reason}`);
  const t = filterOf(p.tables);
  const file = `the output of ${save.value} -t filter`;
  return known({
    verdicts: each(ports, ip === 4 ? 'now (iptables)' : 'now (ip6tables)', file, (port) =>
      evaluateIptablesInput(t, policyOf(p.tables, 'filter', 'INPUT'), port),
    ),
    viaNft: p.backend === 'nf_tables',
  });
}

export async function readFirewallNow(host: TargetHost, ports: number[], ip: IpFamily = 4): Promise<Known<PortVerdict[]>> {
  const ipt = await iptablesNow(host, ports, ip);
  if (!ipt.known) return ipt;
  const nft = await program(host, 'nft');
  if (!nft.known) return nft;
  if (nft.value === null) return known(ipt.value.verdicts);
  const r = await host.run(nft.value, ['list', 'ruleset']);
  if (r.exitCode !== 0) return notKnown(`${nft.value} list ruleset failed (exit ${r.exitCode})`);
  const file = `the output of ${nft.value} list ruleset`;
  const p = parseNftConf(r.stdout);
  if (!p.ok) return unreadable(`${file}, line ${p.line}: ${p.reason}`);
  // iptables-nft keeps its tables as nft's "ip filter" (ip6tables-nft's as "ip6 filter"): what ip[6]tables-save read already.
  const native = p.chains.filter((c) => !(ipt.value.viaNft && c.family === XT_FAMILY[ip] && c.table === 'filter'));
  const source = ip === 4 ? 'now (nftables)' : 'now (nftables, IPv6)';
  return known([...ipt.value.verdicts, ...each(ports, source, file, (port) => evaluateNftInput(native, port, ip))]);
}

/** ufw's INPUT as ufw-init builds it from its files (ip6tables': the ufw6- chains from the *6.rules files). */
async function ufwTable(host: TargetHost, policy: string, type: '' | '6'): Promise<Known<SavedTable>> {
  const pol = policy === 'ACCEPT' ? 'ACCEPT' : 'DROP';
  const u = `ufw${type}`;
  // ufw-init's primary chains, INPUT's jumps to them, and the skip-to-policy chain user and after rules may jump to.
  const skeleton = ['*filter', `:INPUT ${pol} [0:0]`, ...UFW_CHAINS.map((c) => `:${u}-${c} - [0:0]`), `:${u}-skip-to-policy-input - [0:0]`];
  skeleton.push(...UFW_CHAINS.map((c) => `-A INPUT -j ${u}-${c}`), `-A ${u}-skip-to-policy-input -j ${pol}`);
  if (policy === 'REJECT') skeleton.push(`-A ${u}-reject-input -j REJECT`);
  const parsed = parseSaved([...skeleton, 'COMMIT', ''].join('\n'));
  if (!parsed.ok) return notKnown(`ufw's chains: ${parsed.reason}`);
  const table = filterOf(parsed.tables);
  table.rules.forEach((r) => (r.file = UFW_UNIT_FUNCTIONS));
  for (const path of ufwRules(type)) {
    const text = await host.readFile(path).catch((e: Error) => e);
    if (text instanceof Error || text === null) return unreadable(`${path} cannot be read${text instanceof Error ? `: ${text.message}` : ': it is not there'}`);
    const p = parseSaved(text);
    if (!p.ok) return unreadable(`${path}:${p.line}: ${p.reason}`);
    const t = filterOf(p.tables);
    t.rules.forEach((r) => (r.file = path));
    table.chains.push(...t.chains);
    table.rules.push(...t.rules);
  }
  table.rules.push({ command: '-A', chain: `${u}-before-input`, args: ['-j', `${u}-user-input`], line: 350, file: UFW_UNIT_FUNCTIONS });
  return known(table);
}

async function ufwAtBoot(host: TargetHost, ports: number[], ip: IpFamily): Promise<Known<PortVerdict[]>> {
  const read = await ufwFiles(host);
  if (!read.known || read.value === null) return read.known ? known([]) : read;
  const files = read.value;
  const enabled = sourcedValue(files, 'ENABLED');
  if (!enabled.known) return enabled;
  if (enabled.value?.value !== 'yes' && enabled.value?.value !== 'YES') return known([]);
  const v6 = ip === 6 ? ufwIpv6(files) : known({ yes: true, said: '' });
  if (!v6.known) return v6;
  // IPV6 not yes: ufw-init's INPUT DROP with only lo accepted, so every port from another node dropped.
  if (!v6.value.yes) return known(each(ports, `at boot (ufw, ${v6.value.said})`, UFW_IPV6_OFF.file, () => ({ verdict: 'drop', line: UFW_IPV6_OFF.input })));
  const pol = sourcedValue(files, 'DEFAULT_INPUT_POLICY');
  if (!pol.known) return pol;
  const policy = pol.value?.value ?? '';
  if (!['ACCEPT', 'DROP', 'REJECT'].includes(policy))
    return unreadable(`${pol.value?.at ?? UFW_DEFAULTS}: DEFAULT_INPUT_POLICY ${JSON.stringify(policy)} is not one ufw-init sets`);
  const t = await ufwTable(host, policy, ip === 6 ? '6' : '');
  if (!t.known) return t;
  const at = pol.value!.at;
  const source = ip === 4 ? 'at boot (ufw)' : 'at boot (ufw, IPv6)';
  return known(
    ports.map((port) => {
      const v = evaluateIptablesInput(t.value, { policy: policy === 'ACCEPT' ? 'ACCEPT' : 'DROP', line: 0 }, port);
      // The policy's line is /etc/default/ufw's, named in `file`.
      if (v.file === undefined) return { source, port, verdict: { ...v, line: null } as Verdict, file: `${at} DEFAULT_INPUT_POLICY` };
      return { source, port, verdict: v, file: v.file };
    }),
  );
}

async function fileAtBoot(host: TargetHost, path: string, ports: number[], ip: IpFamily): Promise<Known<PortVerdict[]>> {
  const text = await host.readFile(path).catch((e: Error) => e);
  if (text instanceof Error) return unreadable(`${path} cannot be read: ${text.message}`);
  if (text === null) return known([]);
  if (path === RULES[ip]) {
    const p = parseSaved(text);
    if (!p.ok) return unreadable(`${path}:${p.line}: ${p.reason}`);
    return known(
      each(ports, ip === 4 ? 'at boot (iptables-persistent)' : 'at boot (ip6tables-persistent)', path, (port) =>
        evaluateIptablesInput(filterOf(p.tables), policyOf(p.tables, 'filter', 'INPUT'), port),
      ),
    );
  }
  const p = parseNftConf(text);
  if (!p.ok) return unreadable(`${path}:${p.line}: ${p.reason}`);
  return known(each(ports, ip === 4 ? 'at boot (nftables)' : 'at boot (nftables, IPv6)', path, (port) => evaluateNftInput(p.chains, port, ip)));
}

export async function readFirewallAtBoot(host: TargetHost, ports: number[], ip: IpFamily = 4): Promise<Known<PortVerdict[]>> {
  const units = ['ufw.service', 'netfilter-persistent.service', 'nftables.service'];
  const graph = await systemUnitGraph(host, units).catch((e: Error) => e);
  if (graph instanceof Error) return notKnown(`the unit files cannot be read: ${graph.message}`);
  const boots = bootPaths(graph, units);
  const out: PortVerdict[] = [];
  const readers: [string, () => Promise<Known<PortVerdict[]>>][] = [
    ['ufw.service', () => ufwAtBoot(host, ports, ip)],
    ['netfilter-persistent.service', () => fileAtBoot(host, RULES[ip], ports, ip)],
    ['nftables.service', () => fileAtBoot(host, NFTABLES_CONF, ports, ip)],
  ];
  for (const [unit, read] of readers) {
    const u = graph.units.get(graph.resolve(unit));
    if (!u || u.entry === null || u.masked) continue;
    if (graph.defaultTarget === null) return notKnown(`${u.entry} is installed, and there is no default.target on the unit search path`);
    if (!boots.get(unit)) continue;
    const r = await read();
    if (!r.known) return r;
    out.push(...r.value);
  }
  return known(out);
}

export async function readFirewall(host: TargetHost, apiserverPort: Known<number>): Promise<Known<FirewallFacts>> {
  const ports = [apiserverPort.known ? apiserverPort.value : 6443, ...CONTROL_PLANE_PORTS.slice(1)];
  const boot = await readFirewallAtBoot(host, ports);
  if (!boot.known) return boot;
  const boot6 = await readFirewallAtBoot(host, ports, 6);
  const ipv6 = boot6.known ? known({ now: host.live ? await readFirewallNow(host, ports, 6) : ('offline' as const), atBoot: boot6.value }) : boot6;
  return known({ now: host.live ? await readFirewallNow(host, ports) : 'offline', atBoot: boot.value, ipv6 });
}
