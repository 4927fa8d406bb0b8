// kmod as the oracle for modprobe.d: `modprobe -C DIR -d BASE --showconfig`
// over an empty module tree (nothing is loaded, and no module file of this
// machine is involved), read back as directive lines; and our parser's
// directives in the same form, to compare with them.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';
import type { ModprobeDirective } from '../../src/modprobe/modprobe-d.js';

/** An empty module tree for the running kernel's release under `work`: kmod's `-d BASE`. */
export function emptyModuleTree(work: string): string {
  const base = path.join(work, 'base');
  const release = spawnSync('uname', ['-r'], { encoding: 'utf8' }).stdout.trim();
  mkdirSync(path.join(base, 'lib/modules', release), { recursive: true });
  writeFileSync(path.join(base, 'lib/modules', release, 'modules.dep'), '');
  return base;
}

/**
 * How an install line is compared:
 * - `as-printed`: the line as kmod prints it, trailing blanks dropped, so the
 *   command keeps the blanks libkmod keeps after the name's one separator
 *   (the grammar tests pin exactly those);
 * - `command-trimmed`: the command without blanks around it (the oracle tests
 *   compare the command sh would run, which those blanks do not change).
 */
export type InstallForm = 'as-printed' | 'command-trimmed';

const words = (s: string | undefined) => (s ?? '').split(/\s+/).filter(Boolean).join(' ');

/** kmod's directives in `dir`, sorted: "blacklist M", "install M CMD", "softdep M pre: A post: B". */
export function kmodDirectives(dir: string, base: string, install: InstallForm): string[] {
  const r = spawnSync('modprobe', ['-C', dir, '-d', base, '--showconfig'], { encoding: 'latin1' });
  expect(r.status, r.stderr).toBe(0);
  const out: string[] = [];
  for (const line of r.stdout.split('\n')) {
    if (line.startsWith('# End of configuration')) break;
    if (line.startsWith('blacklist ')) out.push(line);
    else if (line.startsWith('install ')) {
      if (install === 'as-printed') out.push(line.replace(/[\t ]+$/, ''));
      else {
        const m = /^install (\S+) (.*)$/s.exec(line)!;
        out.push(`install ${m[1]} ${m[2]!.replace(/^[\t ]+|[\t ]+$/g, '')}`);
      }
    } else if (line.startsWith('softdep ')) {
      // kmod prints the lists without a blank before "post:", and the names as
      // written, matching them with "-" as "_" (modname_normalize).
      const m = /^softdep (\S+)(?: pre:(.*?))?\s*(?:post:(.*))?$/.exec(line)!;
      const names = (s: string | undefined) => words(s).replace(/-/g, '_');
      out.push(`softdep ${m[1]} pre: ${names(m[2])} post: ${names(m[3])}`.replace(/ +$/, ''));
    }
  }
  return out.sort();
}

/** Our parser's directives in the form kmodDirectives gives them, sorted. */
export function directiveLines(directives: ModprobeDirective[]): string[] {
  return directives
    .map((d) =>
      d.kind === 'blacklist'
        ? `blacklist ${d.module}`
        : d.kind === 'install'
          ? `install ${d.module} ${d.command}`
          : `softdep ${d.module} pre: ${d.pre.join(' ')} post: ${d.post.join(' ')}`.replace(/ +$/, ''),
    )
    .sort();
}
