// Commenting out boot-script lines: every byte the tool does not change stays
// as it was (CRLF, Latin-1, a missing final newline), and a file another
// resource of the same run commented out first is recognised line by line.
import { describe, expect, it } from 'vitest';
import { alignCommented, commentOutRanges, isScriptMarker, rangesIn, scriptMarker } from '../../src/boot-scripts/neutralise.js';

const M = scriptMarker('test reason');

describe('commentOutRanges', () => {
  it('puts the marker above the first line and "#" before each line of the range, nothing else', () => {
    expect(commentOutRanges('a\nb \\\n c\nd', [{ first: 2, last: 3 }], M)).toBe(`a\n${M}\n#b \\\n# c\nd`);
  });
  it('keeps CRLF endings (the marker gets one too), Latin-1 bytes and a missing final newline', () => {
    const text = 'caf\xe9\r\nswapon /x\r\nend';
    expect(commentOutRanges(text, [{ first: 2, last: 2 }], M)).toBe(`caf\xe9\r\n${M}\r\n#swapon /x\r\nend`);
  });
  it('one marker for two hits in one statement', () => {
    expect(
      commentOutRanges(
        'swapon /a; swapon /b\n',
        [
          { first: 1, last: 1 },
          { first: 1, last: 1 },
        ],
        M,
      ),
    ).toBe(`${M}\n#swapon /a; swapon /b\n`);
  });
  it('the marker is recognised, and only the marker', () => {
    expect(isScriptMarker(M)).toBe(true);
    expect(isScriptMarker(M + '\r')).toBe(true);
    expect(isScriptMarker('# k8s-host-reconcile: something else')).toBe(false);
  });
});

describe('a file another resource of the run wrote first', () => {
  const before = 'one\nswapon /a\nsysctl -w net.ipv4.ip_forward=0\nend\n';
  const bySwap = commentOutRanges(before, [{ first: 2, last: 2 }], M);

  it('maps each original line to where it is now', () => {
    expect([...alignCommented(before, bySwap)!.entries()]).toEqual([
      [1, { line: 1, commented: false }],
      [2, { line: 3, commented: true }],
      [3, { line: 4, commented: false }],
      [4, { line: 5, commented: false }],
      [5, { line: 6, commented: false }],
    ]);
    expect(commentOutRanges(bySwap, rangesIn(before, bySwap, [{ first: 3, last: 3 }])!, M)).toBe(
      `one\n${M}\n#swapon /a\n${M}\n#sysctl -w net.ipv4.ip_forward=0\nend\n`,
    );
  });
  it('a line already commented out by the other resource is left alone', () => {
    expect(rangesIn(before, bySwap, [{ first: 2, last: 2 }])).toEqual([]);
  });
  it('any other difference is refused', () => {
    expect(rangesIn(before, bySwap.replace('end', 'END'), [{ first: 3, last: 3 }])).toBeNull();
    expect(rangesIn(before, bySwap + 'more\n', [{ first: 3, last: 3 }])).toBeNull();
  });
});

describe('unknowns are warnings naming file and lines', () => {
  it('one warning per file and reason, every line named', async () => {
    const { scriptWarnings } = await import('../../src/resources/boot-script-hook.js');
    const { swapConcern } = await import('../../src/resources/swap-off/boot-scripts.js');
    const u = (line: number, what: 'program' | 'sysctl', message: string) => ({
      source: 'if-updown' as const,
      file: '/etc/network/if-up.d/ethtool',
      line,
      what,
      message,
    });
    const scripts = {
      hits: [],
      contents: {},
      read: [],
      unknown: [
        u(12, 'program', 'the program is known only at run time'),
        u(15, 'program', 'the program is known only at run time'),
        u(20, 'sysctl', 'sysctl -p /x loads a file this scan does not read'),
      ],
    };
    expect(scriptWarnings(scripts, swapConcern)).toEqual([
      'unknown: /etc/network/if-up.d/ethtool lines 12, 15: the program is known only at run time; whether it undoes this resource at boot cannot be judged',
    ]);
  });
});
