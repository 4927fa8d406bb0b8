// softdep lines with stray blanks, against kmod (`modprobe -C DIR -d BASE
// --showconfig` over an empty module tree, see helpers/kmod.ts): libkmod
// splits the list on runs of blanks and tabs, so a blank at the end of a
// list, or two between names, adds no module. The lists are compared as
// lists (not joined into a line), so an empty name shows wherever it sits.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseModprobeConf } from '../src/modprobe/modprobe-d.js';
import { emptyModuleTree, kmodDirectives } from './helpers/kmod.js';

const work = mkdtempSync(path.join(tmpdir(), 'modprobe-softdep-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const base = emptyModuleTree(work);

interface Softdep { module: string; pre: string[]; post: string[] }

let n = 0;
/** kmod's softdeps for one file's text, each list as the names kmod prints. */
function kmodSoftdeps(text: string): Softdep[] {
  const dir = path.join(work, `conf-${n++}`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'x.conf'), text, 'latin1');
  return kmodDirectives(dir, base, 'as-printed')
    .filter((l) => l.startsWith('softdep '))
    .map((l) => {
      const m = /^softdep (\S+) pre:(.*?)(?: post:(.*))?$/.exec(l)!;
      const names = (s: string | undefined) => (s ?? '').split(' ').filter((w) => w !== '');
      return { module: m[1]!, pre: names(m[2]), post: names(m[3]) };
    });
}

const ours = (text: string): Softdep[] =>
  parseModprobeConf(text)
    .flatMap((d) => (d.kind === 'softdep' ? [{ module: d.module, pre: d.pre, post: d.post }] : []))
    .sort((a, b) => (a.module < b.module ? -1 : a.module > b.module ? 1 : 0));

describe('softdep lists with stray blanks, against kmod --showconfig', () => {
  const forms: Record<string, string> = {
    'a blank after the last pre: name': 'softdep br_netfilter pre: nf_conntrack \n',
    'a tab after the last pre: name': 'softdep br_netfilter pre: nf_conntrack\t\n',
    'a blank after the last post: name': 'softdep overlay post: ovl_helper \n',
    'two blanks and a tab between names': 'softdep br_netfilter pre: nf_a  \tnf_b post:  nf_c\t \n',
    'blanks before pre:': 'softdep br_netfilter \t pre: nf_conntrack\n',
    'a list continued onto the next line': 'softdep br_netfilter pre: nf_a \\\n  post: nf_b \n',
  };
  for (const [name, text] of Object.entries(forms)) {
    it(name, () => {
      const oracle = kmodSoftdeps(text);
      expect(oracle.length).toBe(1);
      expect(ours(text)).toEqual(oracle);
    });
  }
});
