// A new TCP connection from another node to a local port, evaluated as the
// kernel evaluates the filter INPUT hook: an iptables chain's rules in order
// (the first whose matches all hold decides; a jump evaluates the chain it
// names, RETURN and its end come back, LOG and the like go on), the built-in
// chain's policy last; an nftables base chain likewise, and with several base
// chains on the hook the packet must be accepted by each (a drop in one is
// final). The packet: TCP, state NEW, to a local address, on an interface
// other than lo, from an address not known here. A match whose answer for
// that packet is not known (another interface by name, an address, a rate
// limit, a module not read here) makes the verdict unknown with the rule's
// line, unless a match known to fail comes first in the rule. The packet is
// IPv4 or, for the ip6 tables, IPv6 (`ip`): in an inet table an `ip` header
// match fails for an IPv6 packet and an `ip6` one for an IPv4 packet. Pure.
import type { SavedTable } from './iptables-save.js';
import type { NftChain } from './nft-conf.js';
import type { IpFamily } from './forward-facts.js';

/** `file`: the rule's file, when a table holds the rules of several (ufw's). */
export type Verdict = ({ verdict: 'accept' | 'drop'; line: number | null } | { verdict: 'unknown'; line: number; reason: string }) & { file?: string };
type Match = 'yes' | 'no' | { unknown: string };

/** Does a port list ("6443", "2379:2380", "22,80,6443", nft's "2379-2380") hold port? */
export function portIn(list: string[], port: number, range: ':' | '-'): Match {
  for (const item of list) {
    const [a, b] = item.split(range);
    const lo = Number(a);
    const hi = b === undefined ? lo : Number(b);
    if (!Number.isInteger(lo) || !Number.isInteger(hi)) return { unknown: `port ${item} is not a number (a service name is not read here)` };
    if (port >= lo && port <= hi) return 'yes';
  }
  return 'no';
}

const NON_TERMINAL = new Set(['LOG', 'NFLOG', 'ULOG', 'MARK', 'CONNMARK', 'TRACE', 'AUDIT']);
const all = (ms: Match[]): Match => (ms.includes('no') ? 'no' : (ms.find((m) => m !== 'yes') ?? 'yes'));
const not = (m: Match, neg: boolean): Match => (!neg || typeof m === 'object' ? m : m === 'yes' ? 'no' : 'yes');

/** One iptables option and its value against the packet. */
function iptablesOption(opt: string, value: string, port: number): Match {
  switch (opt) {
    case '-p':
    case '--protocol':
      return ['tcp', '6', 'all', '0'].includes(value.toLowerCase()) ? 'yes' : 'no';
    case '-i':
    case '--in-interface':
      return value === 'lo' ? 'no' : { unknown: `-i ${value}: the interface another node's packet comes in on is not known here` };
    case '-s':
    case '--source':
    case '-d':
    case '--destination':
      return value === '0.0.0.0/0' || value === '::/0' ? 'yes' : { unknown: `${opt} ${value}: the addresses are not judged here` };
    case '--dport':
    case '--destination-port':
      return portIn([value], port, ':');
    case '--dports':
    case '--ports':
    case '--destination-ports':
      return portIn(value.split(','), port, ':');
    case '--ctstate':
    case '--state':
      return value.toUpperCase().split(',').includes('NEW') ? 'yes' : 'no';
    case '--dst-type':
      return value === 'LOCAL' ? 'yes' : value === 'MULTICAST' || value === 'BROADCAST' ? 'no' : { unknown: `--dst-type ${value}` };
    case '--comment':
      return 'yes';
    case '--rt-type':
      // ip6tables' rt match: the packet has a routing header of that type; a TCP connect carries none.
      return 'no';
    case '--icmp-type':
      return 'no';
    default:
      return { unknown: `${opt} ${value}: a match not read here` };
  }
}

const MODULES = new Set(['tcp', 'udp', 'multiport', 'conntrack', 'state', 'comment', 'addrtype', 'icmp', 'rt']);

/** A rule's matches and its target. */
function iptablesRule(args: string[], port: number): { match: Match; target: string | null; goto: boolean } {
  const ms: Match[] = [];
  let target: string | null = null;
  let goto = false;
  for (let i = 0; i < args.length; i++) {
    let neg = false;
    if (args[i] === '!') {
      neg = true;
      i++;
    }
    const opt = args[i]!;
    if (opt === '-j' || opt === '--jump' || opt === '-g' || opt === '--goto') {
      target = args[++i] ?? null;
      goto = opt === '-g' || opt === '--goto';
      // A target's own options (--reject-with, --log-prefix) follow it.
      while (i + 1 < args.length && args[i + 1]!.startsWith('--')) i += 2;
      continue;
    }
    if (opt === '-m' || opt === '--match') {
      const mod = args[++i] ?? '';
      if (!MODULES.has(mod)) ms.push({ unknown: `-m ${mod}: a match module not read here` });
      continue;
    }
    if (opt === '--syn') {
      ms.push('yes');
      continue;
    }
    let value = args[++i] ?? '';
    // The old placement of "!" after the option: -s ! 10.0.0.0/8.
    if (value === '!') {
      neg = !neg;
      value = args[++i] ?? '';
    }
    ms.push(not(iptablesOption(opt, value, port), neg));
  }
  return { match: all(ms), target, goto };
}

/** The filter table's INPUT chain for a new TCP connection to `port`. */
export function evaluateIptablesInput(table: SavedTable, policy: { policy: string; line: number } | null, port: number): Verdict {
  const r = evalChain(table, 'INPUT', port, 0);
  if (r !== 'return') return r;
  const p = policy?.policy ?? 'ACCEPT';
  return { verdict: p === 'DROP' ? 'drop' : 'accept', line: policy?.line ?? null };
}

function evalChain(table: SavedTable, chain: string, port: number, depth: number): Verdict | 'return' {
  if (depth > 32) return { verdict: 'unknown', line: 0, reason: `chain ${chain}: jumps nested deeper than 32` };
  for (const rule of table.rules.filter((x) => x.chain === chain && (x.command === '-A' || x.command === '-I'))) {
    const f = rule.file !== undefined ? { file: rule.file } : {};
    if (rule.command === '-I') return { verdict: 'unknown', line: rule.line, reason: '-I inserts at a position: not evaluated here', ...f };
    const r = iptablesRule(rule.args, port);
    if (r.target !== null && NON_TERMINAL.has(r.target)) continue;
    if (r.match === 'no') continue;
    if (typeof r.match === 'object') return { verdict: 'unknown', line: rule.line, reason: r.match.unknown, ...f };
    if (r.target === null) continue;
    if (r.target === 'ACCEPT') return { verdict: 'accept', line: rule.line, ...f };
    if (r.target === 'DROP' || r.target === 'REJECT') return { verdict: 'drop', line: rule.line, ...f };
    if (r.target === 'RETURN') return 'return';
    if (!table.chains.some((c) => c.name === r.target) && !table.rules.some((x) => x.chain === r.target))
      return { verdict: 'unknown', line: rule.line, reason: `-j ${r.target}: not a chain of this table nor a target read here`, ...f };
    const sub = evalChain(table, r.target, port, depth + 1);
    if (sub !== 'return') return sub;
    if (r.goto) return 'return';
  }
  return 'return';
}

/** nft's value after a key: one word, a comma list, or a { set }; quotes dropped. */
function nftValue(words: string[], i: number): { values: string[]; next: number } {
  const out: string[] = [];
  if (words[i] === '{') {
    let j = i + 1;
    for (; j < words.length && words[j] !== '}'; j++) if (words[j] !== ',') out.push(words[j]!.replace(/^"|"$/g, ''));
    return { values: out, next: j + 1 };
  }
  let j = i;
  out.push((words[j] ?? '').replace(/^"|"$/g, ''));
  while (words[j + 1] === ',') {
    out.push((words[j + 2] ?? '').replace(/^"|"$/g, ''));
    j += 2;
  }
  return { values: out, next: j + 1 };
}

type NftStep = { match: Match; next: number } | { verdict: string; target?: string; next: number };

/** Header matches that fail for the other IP family's packet, and that cannot hold for a TCP connect. */
const NEVER: Record<IpFamily, string[]> = {
  4: ['udp dport', 'udp sport', 'icmp type', 'icmpv6 type', 'ip6 saddr', 'ip6 daddr', 'ip6 nexthdr'],
  6: ['udp dport', 'udp sport', 'icmp type', 'icmpv6 type', 'ip saddr', 'ip daddr', 'ip protocol'],
};

/** One nft expression or statement at words[i]. */
function nftStep(w: string[], i: number, port: number, ip: IpFamily): NftStep {
  const op = (j: number) => (w[j] === '!=' ? { neg: true, at: j + 1 } : { neg: false, at: w[j] === '==' ? j + 1 : j });
  const k = `${w[i]} ${w[i + 1] ?? ''}`;
  const valued = (j: number, judge: (v: string[]) => Match): NftStep => {
    const o = op(j);
    const v = nftValue(w, o.at);
    return { match: not(judge(v.values), o.neg), next: v.next };
  };
  if (k === 'ct state') return valued(i + 2, (v) => (v.includes('new') ? 'yes' : 'no'));
  if (w[i] === 'iif' || w[i] === 'iifname')
    return valued(i + 1, (v) => (v.every((x) => x === 'lo') ? 'no' : { unknown: `${w[i]} ${v.join(',')}: the interface is not known here` }));
  if (k === 'tcp dport') return valued(i + 2, (v) => portIn(v, port, '-'));
  if (NEVER[ip].includes(k)) return valued(i + 2, () => 'no');
  if (k === 'meta l4proto' || k === (ip === 4 ? 'ip protocol' : 'ip6 nexthdr'))
    return valued(i + 2, (v) => (v.includes('tcp') || v.includes('6') ? 'yes' : 'no'));
  if (['counter', 'accept', 'drop', 'reject', 'return', 'continue', 'jump', 'goto', 'log', 'comment'].includes(w[i]!)) return nftStatement(w, i);
  return { match: { unknown: `${w.slice(i, i + 3).join(' ')}: an expression not read here` }, next: w.length };
}

/** Verdicts and the statements that decide nothing (counter, log, comment), with their arguments skipped. */
function nftStatement(w: string[], i: number): NftStep {
  const s = w[i]!;
  if (s === 'accept' || s === 'drop' || s === 'return' || s === 'continue') return { verdict: s, next: i + 1 };
  if (s === 'reject') return { verdict: 'drop', next: w.length };
  if (s === 'jump' || s === 'goto') return { verdict: s, target: w[i + 1], next: i + 2 };
  if (s === 'comment') return { match: 'yes', next: i + 2 };
  let j = i + 1;
  const args = s === 'counter' ? ['packets', 'bytes'] : ['prefix', 'level', 'flags', 'group', 'snaplen', 'queue-threshold'];
  while (args.includes(w[j] ?? '')) j += 2;
  return { match: 'yes', next: j };
}

/** One nft base chain of the input hook (and the regular chains it jumps to). */
export function evaluateNftChain(chains: NftChain[], chain: NftChain, port: number, depth = 0, ip: IpFamily = 4): Verdict | 'return' {
  if (depth > 32) return { verdict: 'unknown', line: chain.line, reason: `chain ${chain.name}: jumps nested deeper than 32` };
  rules: for (const rule of chain.rules) {
    const ms: Match[] = [];
    for (let i = 0; i < rule.words.length;) {
      const s = nftStep(rule.words, i, port, ip);
      i = s.next;
      if ('match' in s) {
        ms.push(s.match);
        if (s.match === 'no') continue rules;
        continue;
      }
      const m = all(ms);
      if (typeof m === 'object') return { verdict: 'unknown', line: rule.line, reason: m.unknown };
      if (s.verdict === 'accept') return { verdict: 'accept', line: rule.line };
      if (s.verdict === 'drop') return { verdict: 'drop', line: rule.line };
      if (s.verdict === 'return') return 'return';
      if (s.verdict === 'continue') continue rules;
      const target = chains.find((c) => c.family === chain.family && c.table === chain.table && c.name === s.target && c.hook === null);
      if (!target) return { verdict: 'unknown', line: rule.line, reason: `${s.verdict} ${s.target ?? ''}: no such regular chain in table ${chain.table}` };
      const sub = evaluateNftChain(chains, target, port, depth + 1, ip);
      if (sub !== 'return') return sub;
      if (s.verdict === 'goto') return 'return';
      continue rules;
    }
    const m = all(ms);
    if (typeof m === 'object') return { verdict: 'unknown', line: rule.line, reason: m.unknown };
  }
  return 'return';
}

/** Every input base chain of the ip (ip6 for IPv6) and inet tables must accept: a drop in one is final, an unknown one is unknown. */
export function evaluateNftInput(chains: NftChain[], port: number, ip: IpFamily = 4): Verdict {
  let unknown: Verdict | null = null;
  const own = ip === 4 ? 'ip' : 'ip6';
  for (const c of chains.filter((x) => x.hook === 'input' && !x.dormant && (x.family === own || x.family === 'inet'))) {
    const r = evaluateNftChain(chains, c, port, 0, ip);
    const v: Verdict = r === 'return' ? { verdict: c.policy === 'drop' ? 'drop' : 'accept', line: c.policyLine } : r;
    if (v.verdict === 'drop') return v;
    if (v.verdict === 'unknown') unknown ??= v;
  }
  return unknown ?? { verdict: 'accept', line: null };
}
