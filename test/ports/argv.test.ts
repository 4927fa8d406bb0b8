// Whether a process's argv, read back from /proc, is the command a unit, a
// crontab or supervisord runs: the same words, the program by its path or,
// when either side was found through PATH, by its base name.
import { describe, expect, it } from 'vitest';
import { argvMatches } from '../../src/ports/argv.js';

describe('argvMatches', () => {
  it('argv matches a command by its words, the program by path or base name', () => {
    expect(argvMatches(['python3', '-m', 'x'], ['python3', '-m', 'x'])).toBe(true);
    expect(argvMatches(['/usr/bin/python3', '-m', 'x'], ['python3', '-m', 'x'])).toBe(true);
    expect(argvMatches(['/opt/python3', '-m', 'x'], ['/usr/bin/python3', '-m', 'x'])).toBe(false);
    expect(argvMatches(['python3', '-m', 'x'], ['python3', '-m', null])).toBe(false);
    expect(argvMatches(['python3', '-m'], ['python3', '-m', 'x'])).toBe(false);
  });
  it('a program found through PATH on either side matches by base name; two paths must be equal', () => {
    expect(argvMatches(['python3', '-m', 'x'], ['/usr/bin/python3', '-m', 'x'])).toBe(true);
    expect(argvMatches(['/usr/bin/python3'], ['/usr/bin/python3'])).toBe(true);
    expect(argvMatches(['/usr/local/bin/python3'], ['/usr/bin/python3'])).toBe(false);
    expect(argvMatches(['python3'], ['python'])).toBe(false);
    // A directory path's base name is empty, not the last directory (path.basename would say "bin").
    expect(argvMatches(['bin'], ['/usr/bin/'])).toBe(false);
  });
  it('only argv[0] is compared by base name: a later argument must be equal as written', () => {
    expect(argvMatches(['node', '/opt/app/x.js'], ['node', 'x.js'])).toBe(false);
    expect(argvMatches(['node', 'x.js'], ['node', 'x.js'])).toBe(true);
  });
  it('an unknown word anywhere, no argv, an empty command or a longer argv never match', () => {
    expect(argvMatches(['python3', '-m', 'x'], [null, '-m', 'x'])).toBe(false);
    expect(argvMatches(null, ['python3'])).toBe(false);
    expect(argvMatches([], [])).toBe(false);
    expect(argvMatches(['python3', '-m', 'x', 'y'], ['python3', '-m', 'x'])).toBe(false);
  });
});
