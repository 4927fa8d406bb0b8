// The iptables chains kube-proxy and CNI plugins leave (KUBE-*, CNI-*, cali-*, CILIUM_*, FLANNEL-*), read
// from iptables-save's output, and the commands that remove exactly those: the rules of other chains that
// jump to them deleted (`-D` with the rule as iptables-save wrote it), then the chains flushed and deleted.
// Every other table, chain and rule is left as it is (kubespray's reset flushes them all). Pure: the text
// in, commands out; each line of a rule is split as iptables-restore reads it (quotes, backslash escapes).
import { shlexSplit } from '../lex/shlex.js';

const PREFIXES = ['KUBE-', 'CNI-', 'cali-', 'CILIUM_', 'FLANNEL-'];
export const isKubeChain = (name: string): boolean => PREFIXES.some((p) => name.startsWith(p));

export interface KubeChains {
  /** table -> the Kubernetes chains it has, in the order iptables-save listed them. */
  chains: Map<string, string[]>;
  /** Rules of other chains that jump or go to one of them: table, chain and the rule's words after `-A CHAIN`, as saved. */
  jumps: Array<{ table: string; chain: string; rule: string }>;
  /** Lines it could not split (an unclosed quote): named, never guessed at. */
  unread: string[];
}

/** iptables-save's text: `*table`, `:CHAIN POLICY [p:b]` declarations, `-A CHAIN ...` rules, `COMMIT`, comments. */
export function readKubeChains(save: string): KubeChains {
  const out: KubeChains = { chains: new Map(), jumps: [], unread: [] };
  let table = '';
  for (const line of save.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1).trim();
    else if (line.startsWith(':')) {
      const name = line.slice(1).split(' ')[0] ?? '';
      if (isKubeChain(name)) out.chains.set(table, [...(out.chains.get(table) ?? []), name]);
    } else if (line.startsWith('-A ')) {
      const split = shlexSplit(line);
      if (split.error !== null) {
        out.unread.push(line);
        continue;
      }
      const [, chain, ...words] = split.tokens;
      if (chain === undefined || isKubeChain(chain)) continue;
      const at = words.findIndex((w) => w === '-j' || w === '--jump' || w === '-g' || w === '--goto');
      const target = at >= 0 ? words[at + 1] : undefined;
      if (target !== undefined && isKubeChain(target)) out.jumps.push({ table, chain, rule: line.slice(`-A ${chain} `.length) });
    }
  }
  return out;
}

/** The commands, in the order they must run, for `program` (iptables or ip6tables). */
export function kubeChainCommands(program: string, k: KubeChains): string[] {
  const out = k.jumps.map((j) => `${program} -t ${j.table} -D ${j.chain} ${j.rule}`);
  for (const [table, names] of k.chains) for (const n of names) out.push(`${program} -t ${table} -F ${n}`);
  for (const [table, names] of k.chains) for (const n of names) out.push(`${program} -t ${table} -X ${n}`);
  return out;
}
