// A dormant table, told by the kernel itself: in a network namespace made here,
// every table has an output base chain with a counter, a packet is sent to
// 127.0.0.1, and a table is dormant exactly when its counter stayed 0 (its
// chains saw no packet). nft 1.0.6's JSON prints a dormant table's flags from
// freed memory ("flags": "parked"), so parseNftJson hands each flagged table on
// and nftTableFlags reads `nft list table` (text); both must agree with the
// counters.
import { describe, expect, it } from 'vitest';
import { parseNftJson } from '../../src/acceptance/nft-json.js';
import { nftTableFlags } from '../../src/acceptance/nft-table-flags.js';
import { inNamespace } from '../helpers/rulesets.js';

const table = (name: string, flags: string) =>
  [
    `table ip ${name} {`,
    flags,
    '  set peers { type ipv4_addr; flags interval; elements = { 10.0.0.0/8 }; }',
    '  chain out { type filter hook output priority 0; policy accept; counter; }',
    '  chain pass { type filter hook forward priority 0; policy drop; }',
    '}',
  ].join('\n');
const RULESET = [table('parked', '  flags dormant'), table('live', ''), table('t', '  flags dormant'), ''].join('\n');
const SCRIPT =
  'ip link set lo up && nft -f "$1" && bash -c "echo x > /dev/udp/127.0.0.1/9" && nft -j list ruleset && ' +
  'for t in parked live t; do echo ----; nft list table ip $t; done';

/** The tables whose output counter counted nothing: the kernel's dormant tables. */
function silent(json: string): string[] {
  const items = (JSON.parse(json) as { nftables: { rule?: { table: string; expr: { counter?: { packets: number } }[] } }[] }).nftables;
  const counters = items.flatMap((i) => (i.rule ? i.rule.expr.filter((e) => e.counter).map((e) => [i.rule!.table, e.counter!.packets] as const) : []));
  expect(counters.length).toBe(3);
  return counters
    .filter(([, n]) => n === 0)
    .map(([t]) => t)
    .sort();
}

describe('a dormant table, as the kernel tells it', () => {
  const [json, ...texts] = inNamespace(RULESET, SCRIPT).split('----\n');
  const listing = Object.fromEntries(['parked', 'live', 't'].map((t, i) => [t, texts[i]!]));

  it('each table with flags is handed on from the JSON, and the text listing says which are dormant', () => {
    const dormant = silent(json!);
    expect(dormant).toEqual(['parked', 't']);
    const p = parseNftJson(json!);
    if (!p.ok) throw new Error(p.reason);
    expect(p.flagged.map((t) => t.name).sort()).toEqual(dormant);
    const read = p.flagged.filter((t) => {
      const f = nftTableFlags(listing[t.name]!, t.family, t.name);
      if (!f.ok) throw new Error(f.reason);
      return f.flags.includes('dormant');
    });
    expect(read.map((t) => t.name).sort()).toEqual(dormant);
  });

  it("a table without flags lists none, its set and chains not read as the table's", () => {
    expect(nftTableFlags(listing.live!, 'ip', 'live')).toEqual({ ok: true, flags: [] });
  });

  it('a listing without the table, or cut short, is an error, never "no flags"', () => {
    expect(nftTableFlags(listing.live!, 'ip', 'parked')).toMatchObject({ ok: false, reason: expect.stringContaining('no "table ip parked {"') });
    expect(nftTableFlags('table ip live {\n\tflags dormant\n', 'ip', 'live')).toMatchObject({ ok: false, reason: expect.stringContaining('does not end') });
  });
});
