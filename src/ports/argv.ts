// Whether a process found holding a port is the command a unit, a crontab or
// supervisord runs: its argv read back from /proc against the command's words. Pure.
import type { Word } from '../lex/shell.js';

/**
 * Whether a process's argv is the command `words`: the same arguments, and
 * the same program (equal argv[0], or equal base names when one of them was
 * found through PATH). Unknown words never match.
 */
export function argvMatches(argv: string[] | null, words: Word[]): boolean {
  if (argv === null || argv.length !== words.length || words.length === 0) return false;
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (w === null || w === undefined) return false;
    if (i === 0) {
      const a = argv[0]!;
      if (a === w) continue;
      if ((!a.includes('/') || !w.includes('/')) && basename(a) === basename(w)) continue;
      return false;
    }
    if (argv[i] !== w) return false;
  }
  return true;
}

/** The last component of a path as written ("a/" -> ""), not path.basename's. */
function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? p : p.slice(i + 1);
}
