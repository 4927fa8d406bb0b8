// Host text on a terminal: every control and format character is shown as an
// escape. Expected strings are written out by hand, code point by code point.
import { describe, expect, it } from 'vitest';
import { terminalSafe } from '../src/untrusted-text.js';

describe('terminalSafe', () => {
  it('escapes C0, DEL and C1 controls as \\xNN', () => {
    expect(terminalSafe('a\u0000b\u001b[31mc\rd\u007fe\u0085f\u009bg')).toBe('a\\x00b\\x1b[31mc\\x0dd\\x7fe\\x85f\\x9bg');
  });

  it('escapes every bidi embedding, override and isolate (U+202A–U+202E, U+2066–U+2069)', () => {
    const bidi = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];
    expect(terminalSafe(bidi.map((c) => String.fromCodePoint(c)).join('x'))).toBe(
      '\\u{202A}x\\u{202B}x\\u{202C}x\\u{202D}x\\u{202E}x\\u{2066}x\\u{2067}x\\u{2068}x\\u{2069}',
    );
  });

  it('escapes other format characters: zero-width joiner and space, the BOM, soft hyphen, and one outside the BMP', () => {
    expect(terminalSafe('a\u200db\u200bc\ufeffd\u00ade\u{e0001}f')).toBe('a\\u{200D}b\\u{200B}c\\u{FEFF}d\\u{00AD}e\\u{E0001}f');
  });

  it('keeps printable text, including non-Latin scripts and right-to-left letters, as it is', () => {
    const s = 'swap: /swapfile — スワップ, שלום, مرحبا, émigré';
    expect(terminalSafe(s)).toBe(s);
  });
});
