// File content as byte strings (bytes.ts): one code unit per byte, so what
// the tool does not change is written back exactly. The bytes are written
// by hand (invalid UTF-8, a Latin-1 label, a NUL, CRLF) and compared byte
// by byte with what the file system holds.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bufferOf, bytesOf, displayText, utf8Bytes } from '../src/bytes.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// "LABEL=sw\xe4p" (Latin-1 ä), a lone continuation byte, a NUL in a comment, CRLF, and UTF-8 "é".
const RAW = [0x4c, 0x41, 0x42, 0x45, 0x4c, 0x3d, 0x73, 0x77, 0xe4, 0x70, 0x20, 0x80, 0x23, 0x00, 0x0d, 0x0a, 0xc3, 0xa9, 0x0a];

describe('bytesOf and bufferOf', () => {
  it('one code unit per byte, each the byte value; back to the very bytes', () => {
    const s = bytesOf(Uint8Array.from(RAW));
    expect(s.length).toBe(RAW.length);
    expect([...s].map((c) => c.charCodeAt(0))).toEqual(RAW);
    expect([...bufferOf(s)]).toEqual(RAW);
  });

  it('a file read, held and written back is byte-identical', () => {
    const d = mkdtempSync(path.join(tmpdir(), 'bytes-'));
    dirs.push(d);
    writeFileSync(path.join(d, 'in'), Uint8Array.from(RAW));
    writeFileSync(path.join(d, 'out'), bufferOf(bytesOf(readFileSync(path.join(d, 'in')))));
    expect([...readFileSync(path.join(d, 'out'))]).toEqual(RAW);
  });

  it('a view into a larger buffer gives only its own bytes', () => {
    const big = Uint8Array.from([1, 2, 0x41, 0x42, 3]);
    expect(bytesOf(big.subarray(2, 4))).toBe('AB');
  });

  it('refuses text above U+00FF, naming the code unit and where', () => {
    expect(() => bufferOf('ok€')).toThrow('internal: text with code unit U+20AC at 2 was not encoded as bytes');
    expect(() => bufferOf('\u0100')).toThrow('U+100 at 0');
    expect([...bufferOf('\u00ff')]).toEqual([0xff]);
  });
});

describe('utf8Bytes and displayText', () => {
  it("utf8Bytes: the text's UTF-8 bytes as a byte string", () => {
    expect(utf8Bytes('é€')).toBe('\xc3\xa9\xe2\x82\xac');
    expect(utf8Bytes('plain')).toBe('plain');
  });

  it('displayText: valid UTF-8 as itself, each invalid byte as U+FFFD', () => {
    expect(displayText('\xc3\xa9')).toBe('é');
    expect(displayText('sw\xe4p')).toBe('sw\ufffdp');
    expect(displayText(utf8Bytes('k8s ✓'))).toBe('k8s ✓');
  });
});
