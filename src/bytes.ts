// File content as the tool holds it: a "byte string", one UTF-16 code unit
// per byte (latin1 decoding). Parsers of fstab, sysctl.d, modprobe.d and
// modules-load.d only look at ASCII syntax, so they work on it unchanged,
// and writing it back is byte-exact: invalid UTF-8, Latin-1 labels, NULs in
// comments and CRLF survive every line the tool does not change.

/** Bytes held as a string of code units 0..255. */
export type ByteString = string;

export function bytesOf(buf: Uint8Array): ByteString {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('latin1');
}

/**
 * The bytes of a byte string. A code unit above 255 means text that never
 * came from a file was mixed in without utf8Bytes(); refuse rather than let
 * latin1 encoding silently mangle it.
 */
export function bufferOf(s: ByteString): Buffer {
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0xff)
      throw new Error(`internal: text with code unit U+${s.charCodeAt(i).toString(16).toUpperCase()} at ${i} was not encoded as bytes`);
  }
  return Buffer.from(s, 'latin1');
}

/** UTF-8 bytes of text the tool generates (reports, JSON), as a byte string. */
export function utf8Bytes(text: string): ByteString {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/** For people: valid UTF-8 shows as itself, anything else as U+FFFD. Never written back. */
export function displayText(s: ByteString): string {
  return Buffer.from(s, 'latin1').toString('utf8');
}
