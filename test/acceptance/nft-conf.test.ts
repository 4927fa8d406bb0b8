// nftables.conf read as `nft -f` loads it. The oracle: nft loads each text
// into a network namespace made here and `nft -j list ruleset` there says
// which base chains and policies the kernel kept.
import { describe, expect, it } from 'vitest';
import { parseNftConf } from '../../src/acceptance/nft-conf.js';
import { parseNftJson } from '../../src/acceptance/nft-json.js';
import { DEBIAN_NFTABLES_CONF, DROPPING_NFTABLES_CONF, inNamespace } from '../helpers/rulesets.js';

/** The base chains nft keeps after `nft -f` of the text: family, table, name, hook, policy. */
function nftBaseChains(text: string) {
  const p = parseNftJson(inNamespace(text, 'nft -f "$1" && nft -j list ruleset'));
  if (!p.ok) throw new Error(p.reason);
  return p.chains.filter((c) => c.hook !== null).map((c) => ({ family: c.family, table: c.table, name: c.name, hook: c.hook, policy: c.policy }));
}
const readBaseChains = (text: string) => {
  const p = parseNftConf(text);
  if (!p.ok) throw new Error(`line ${p.line}: ${p.reason}`);
  // A base chain without a policy statement keeps nft's default, accept.
  return p.chains.filter((c) => c.hook !== null).map((c) => ({ family: c.family, table: c.table, name: c.name, hook: c.hook, policy: c.policy ?? 'accept' }));
};

describe('nftables.conf, read as nft -f loads it', () => {
  for (const [name, text] of [
    ["Debian's stock /etc/nftables.conf", DEBIAN_NFTABLES_CONF],
    ['a server firewall dropping input and forward, with sets, a define, a nat table and add statements', DROPPING_NFTABLES_CONF],
    ['a later redefinition of the chain wins', `${DEBIAN_NFTABLES_CONF}table inet filter {\n  chain forward { policy drop; }\n}\n`],
    ['flush ruleset drops what came before it', `${DROPPING_NFTABLES_CONF}flush ruleset\n${DEBIAN_NFTABLES_CONF.replace('#!/usr/sbin/nft -f', '')}`],
  ] as const)
    it(`${name}: the base chains and policies nft keeps`, () => {
      const sort = (l: { family: string; table: string; name: string }[]) =>
        [...l].sort((a, b) => `${a.family}${a.table}${a.name}`.localeCompare(`${b.family}${b.table}${b.name}`));
      expect(sort(readBaseChains(text))).toEqual(sort(nftBaseChains(text)));
    });

  it('what is not read here is an error with its line, never a guess: include, a policy from a variable, delete', () => {
    expect(parseNftConf('flush ruleset\ninclude "/etc/nftables.d/*.nft"\n')).toMatchObject({ ok: false, line: 2 });
    expect(parseNftConf('define p = drop\ntable inet f {\n  chain forward { type filter hook forward priority 0; policy $p; }\n}\n')).toMatchObject({
      ok: false,
      line: 3,
    });
    expect(parseNftConf('table inet filter {\n}\ndelete table inet filter\n')).toMatchObject({ ok: false, line: 3 });
  });
});
