// parseNftJson on what `nft -j list ruleset` prints in a network namespace
// made here (test/helpers/rulesets.ts) once a ruleset is loaded. The oracle:
// `nft list chains` in the same namespace, nft's own text listing of each
// chain with its hook and policy.
import { describe, expect, it } from 'vitest';
import { parseNftJson } from '../../src/acceptance/nft-json.js';
import { DROPPING_NFTABLES_CONF, inNamespace } from '../helpers/rulesets.js';

const DORMANT = 'table ip parked {\n  flags dormant\n  chain input { type filter hook input priority 0; policy drop; }\n}\n';

/** The chains `nft list chains` prints: "family table name hook policy" (hook and policy "-" for a regular chain). */
function listed(text: string): string[] {
  const out: string[] = [];
  let table = '';
  for (const line of text.split('\n').map((l) => l.trim())) {
    const words = line.replace(/;/g, ' ;').split(/\s+/);
    if (words[0] === 'table') table = `${words[1]} ${words[2]}`;
    else if (words[0] === 'chain') out.push(`${table} ${words[1]} - -`);
    else if (words[0] === 'type') {
      const w = (k: string) => words[words.indexOf(k) + 1] ?? '-';
      out[out.length - 1] = out[out.length - 1]!.replace(/ - -$/, ` ${w('hook')} ${words.includes('policy') ? w('policy') : '-'}`);
    }
  }
  return out.sort();
}

describe('the live ruleset, as nft -j list ruleset prints it', () => {
  it('every chain with its hook and policy, as nft list chains lists them', () => {
    const [json, text] = inNamespace(`${DROPPING_NFTABLES_CONF}${DORMANT}`, 'nft -f "$1" && nft -j list ruleset && echo ---- && nft list chains').split(
      '----\n',
    );
    const p = parseNftJson(json!);
    if (!p.ok) throw new Error(p.reason);
    const ours = p.chains.map((c) => `${c.family} ${c.table} ${c.name} ${c.hook ?? '-'} ${c.policy ?? '-'}`).sort();
    expect(ours).toEqual(listed(text!));
    expect(ours.length).toBeGreaterThan(3);
    // nft 1.0.6 prints a dormant table's flags in JSON as its name ("flags": "parked"), so the live mark is not
    // asserted here: it is shown below on the form libnftables-json(5) documents.
    expect(p.chains.every((c) => !c.dormant)).toBe(true);
    // So the one table with flags is handed on, for its text listing to be read (nft-table-flags.test.ts).
    expect(p.flagged).toEqual([{ family: 'ip', name: 'parked' }]);
  });

  it('a table whose flags hold "dormant" (a string or an array, libnftables-json(5)) marks its own chains dormant', () => {
    const chain = (table: string) => ({ chain: { family: 'ip', table, name: 'input', type: 'filter', hook: 'input', prio: 0, policy: 'drop' } });
    for (const flags of ['dormant', ['dormant']]) {
      const doc = { nftables: [{ table: { family: 'ip', name: 'parked', flags } }, chain('parked'), { table: { family: 'ip', name: 'live' } }, chain('live')] };
      const p = parseNftJson(JSON.stringify(doc));
      expect(p.ok && p.chains.map((c) => [c.table, c.dormant])).toEqual([
        ['parked', true],
        ['live', false],
      ]);
    }
  });

  it('what is not nft JSON is an error naming why, never an empty ruleset', () => {
    expect(parseNftJson('table inet filter {')).toMatchObject({ ok: false, reason: expect.stringContaining('not JSON') });
    expect(parseNftJson('{"metainfo": {}}')).toEqual({ ok: false, reason: 'no "nftables" array' });
    expect(parseNftJson('{"nftables": [{"chain": {"family": "inet", "table": "filter"}}]}')).toMatchObject({
      ok: false,
      reason: expect.stringContaining('a chain without family, table or name'),
    });
  });
});
