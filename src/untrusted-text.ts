// Text that came from a host (file contents, unit names, command lines) shown
// on an operator's terminal. Control characters (C0, DEL, C1) would move the
// cursor or start an escape sequence; format characters (Unicode category Cf:
// the bidi embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069,
// zero-width joiners, the BOM, soft hyphen...) would reorder or hide what the
// operator reads (the Trojan Source class). Both are shown as escapes, so what
// the host wrote is data on the screen, never control.

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const FORMAT = /\p{Cf}/gu;

/** One line of untrusted text for a terminal: controls as \xNN, format characters as \u{XXXX}. */
export function terminalSafe(s: string): string {
  return s
    .replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .replace(FORMAT, (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`);
}
