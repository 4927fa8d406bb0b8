// The iptables-save format read as iptables-restore reads it. The oracle:
// iptables-restore loads each text into a network namespace made here, and
// `iptables -S` / `iptables-save` there say what the kernel was left with.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSaved, policyOf, restoreWords } from '../../src/acceptance/iptables-save.js';
import { RULES_V4, inNamespace, tmp } from '../helpers/rulesets.js';

/** The FORWARD policy the kernel keeps after iptables-restore of the text, as iptables -S prints it. */
const restoredPolicy = (text: string) => /^-P FORWARD (\S+)$/m.exec(inNamespace(text, 'iptables-restore < "$1" && iptables -S FORWARD'))?.[1];

describe('the iptables-save format, read as iptables-restore reads it', () => {
  const cases: [string, string][] = [
    ['FORWARD DROP', RULES_V4('DROP')],
    ['FORWARD ACCEPT', RULES_V4('ACCEPT')],
    ['DROP, then a -P line setting ACCEPT', RULES_V4('DROP', '-P FORWARD ACCEPT')],
    ['ACCEPT, then a --policy line setting DROP', RULES_V4('ACCEPT', '--policy FORWARD DROP')],
  ];
  for (const [name, text] of cases)
    it(`${name}: the policy the kernel keeps after iptables-restore`, () => {
      const p = parseSaved(text);
      expect(p.ok).toBe(true);
      if (!p.ok) return;
      expect(policyOf(p.tables, 'filter', 'FORWARD')?.policy).toBe(restoredPolicy(text));
    });

  it("iptables-save's own output of the restored rules: the same policy, its backend, its rules' words", () => {
    const saved = inNamespace(RULES_V4('DROP'), 'iptables-restore < "$1" && iptables-save -t filter');
    const p = parseSaved(saved);
    expect(p).toMatchObject({ ok: true, backend: 'nf_tables' });
    if (!p.ok) return;
    expect(policyOf(p.tables, 'filter', 'FORWARD')?.policy).toBe('DROP');
    const listed = inNamespace(RULES_V4('DROP'), 'iptables-restore < "$1" && iptables -S INPUT')
      .split('\n')
      .filter((l) => l.startsWith('-A'));
    expect(p.tables[0]!.rules.map((r) => [r.command, r.chain, ...r.args])).toEqual(listed.map((l) => restoreWords(l)));
  });

  it('an unterminated quote runs to the end of the line, as iptables-restore takes it', () => {
    const text = '*filter\n-A INPUT -m comment --comment "open a b\n-A INPUT -m comment --comment "x\\"y z" -j ACCEPT\nCOMMIT\n';
    const p = parseSaved(text);
    expect(p.ok && p.tables[0]!.rules.map((r) => r.args)).toEqual([
      ['-m', 'comment', '--comment', 'open a b'],
      ['-m', 'comment', '--comment', 'x"y z', '-j', 'ACCEPT'],
    ]);
    expect(inNamespace(text, 'iptables-restore < "$1" && iptables -S INPUT')).toContain('-A INPUT -m comment --comment "x\\"y z" -j ACCEPT');
  });

  it('what iptables-restore refuses is an error with its line (and iptables-restore refuses it too)', () => {
    for (const [text, line] of [
      ['*filter\n:FORWARD DROP [0:0]\n', 1],
      [':FORWARD DROP [0:0]\n', 1],
      ['*filter\n:FORWARD\nCOMMIT\n', 2],
      ['*filter\n-P FORWARD\nCOMMIT\n', 2],
      ['*filter\nforward drop\nCOMMIT\n', 2],
    ] as const) {
      expect(parseSaved(text)).toMatchObject({ ok: false, line });
      const file = path.join(tmp(), 'bad');
      writeFileSync(file, text);
      expect(spawnSync('unshare', ['-rn', 'sh', '-c', 'iptables-restore < "$1"', 'sh', file]).status).not.toBe(0);
    }
  });
});
