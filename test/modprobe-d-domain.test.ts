// modprobe.d rules the main tests leave open, with kmod as the oracle
// (`modprobe -C DIR -d BASE --showconfig` over an empty module tree: nothing
// is loaded): a backslash on the last line, tabs as separators, softdep
// lists, CRLF files commented out by us, and which softdep and dependency
// install lines stop a wanted module.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { commentOutDirectives, findBlockers, findUnjudged, logicalLines, MODPROBE_MARKER, parseModprobeConf, softdepsOf } from '../src/modprobe/modprobe-d.js';
import { directiveLines, emptyModuleTree, kmodDirectives } from './helpers/kmod.js';

const work = mkdtempSync(path.join(tmpdir(), 'modprobe-domain-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const base = emptyModuleTree(work);

let n = 0;
/** kmod's directives for one file's text, the install lines as kmod prints them. */
function kmod(text: string): string[] {
  const dir = path.join(work, `conf-${n++}`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'x.conf'), text, 'latin1');
  return kmodDirectives(dir, base, 'as-printed');
}

const ours = (text: string): string[] => directiveLines(parseModprobeConf(text));

describe('modprobe.d forms against kmod --showconfig', () => {
  const forms: Record<string, string> = {
    'backslash on the last line, then a newline': 'install overlay /bin/true \\\n',
    'tabs and blanks between the words': '\tblacklist\toverlay\n  install \t br_netfilter\t/bin/false\t\n',
    'softdep lists switch at pre: and post:': 'softdep br-netfilter pre: nf-a nf_b post: nf_c\nsoftdep overlay post: x-y\nsoftdep nf_a post: z\n',
    'an install or blacklist line without a module': 'blacklist\ninstall\ninstall \t\n',
    'comment lines, also continued ones': '# blacklist overlay \\\nblacklist br_netfilter\n#install overlay /bin/true\n',
  };
  for (const [name, text] of Object.entries(forms)) {
    it(name, () => {
      expect(ours(text)).toEqual(kmod(text));
    });
  }

  it('the logical lines keep their first and last physical line numbers', () => {
    expect(logicalLines('a \\\nb\nc\\\n d \\\ne\nf\\')).toEqual([
      { firstLine: 1, lastLine: 2, text: 'a b' },
      { firstLine: 3, lastLine: 5, text: 'c d e' },
      { firstLine: 6, lastLine: 6, text: 'f\\' },
    ]);
  });
});

describe('commenting out keeps the file kmod reads otherwise identical', () => {
  it('in a CRLF file the marker line ends in CRLF too, and kmod no longer sees the directive', () => {
    const text = 'install overlay /bin/true\r\nblacklist br_netfilter\r\noptions foo bar=1\r\n';
    const out = commentOutDirectives(text, [{ firstLine: 1, lastLine: 1 }]);
    expect(out).toBe(`${MODPROBE_MARKER}\r\n#install overlay /bin/true\r\nblacklist br_netfilter\r\noptions foo bar=1\r\n`);
    expect(kmod(out)).toEqual(['blacklist br_netfilter\r']);
  });

  it('in an LF file the marker line has no CR', () => {
    const out = commentOutDirectives('blacklist overlay\ninstall br_netfilter /bin/false\n', [{ firstLine: 2, lastLine: 2 }]);
    expect(out).toBe(`blacklist overlay\n${MODPROBE_MARKER}\n#install br_netfilter /bin/false\n`);
    expect(kmod(out)).toEqual(['blacklist overlay']);
  });

  it('a continued directive is commented on every physical line, an already commented one is left as it is', () => {
    const text = 'install overlay \\\n#/bin/true\nblacklist x\n';
    const out = commentOutDirectives(text, [{ firstLine: 1, lastLine: 2 }]);
    expect(out).toBe(`${MODPROBE_MARKER}\n#install overlay \\\n#/bin/true\nblacklist x\n`);
    expect(kmod(out)).toEqual(['blacklist x']);
  });
});

describe('what stops a wanted module', () => {
  const WANT = ['overlay', 'br_netfilter'];

  it('softdeps of wanted modules only, each with the wanted modules that pull it in', () => {
    const a = 'softdep br_netfilter pre: nf-conntrack post: overlay\nsoftdep overlay pre: nf_conntrack helper\n';
    const b = 'softdep unrelated pre: other\n';
    const s = softdepsOf(WANT, [a, b]);
    expect([...s.entries()]).toEqual([
      ['nf_conntrack', ['br_netfilter', 'overlay']],
      ['helper', ['overlay']],
    ]);
  });

  it("a softdep's failing install command blocks, a succeeding one does not, an unknown one is listed", () => {
    const soft = new Map([['a', ['overlay']], ['b', ['overlay']], ['c', ['br_netfilter']]]);
    const text = 'install a /bin/false\ninstall b /bin/true\ninstall c /usr/local/bin/mystery\nblacklist a\n';
    expect(findBlockers('/etc/modprobe.d/s.conf', text, WANT, new Map(), soft).map((x) => [x.module, x.kind, x.firstLine, x.neededBy])).toEqual([
      ['a', 'install', 1, ['overlay']],
    ]);
    const unjudged = findUnjudged('/etc/modprobe.d/s.conf', text, WANT, new Map(), soft);
    expect(unjudged.map((x) => [x.module, x.firstLine, x.neededBy])).toEqual([['c', 3, ['br_netfilter']]]);
    expect(unjudged[0]!.reason).toContain('/usr/local/bin/mystery');
  });

  it("a softdep whose install command loads it is fine", () => {
    const soft = new Map([['a', ['overlay']]]);
    expect(findBlockers('/f', 'install a /sbin/modprobe --ignore-install a\n', WANT, new Map(), soft)).toEqual([]);
    expect(findUnjudged('/f', 'install a /sbin/modprobe --ignore-install a\n', WANT, new Map(), soft)).toEqual([]);
  });

  it("a dependency's no-op install blocks the module that needs it, its unknown install is listed with it", () => {
    const deps = new Map([['bridge', ['br_netfilter']], ['stp', ['br_netfilter']]]);
    const text = 'install bridge /bin/true\ninstall stp /opt/x.sh\nblacklist bridge\n';
    expect(findBlockers('/f', text, WANT, deps).map((x) => [x.module, x.firstLine, x.neededBy])).toEqual([['bridge', 1, ['br_netfilter']]]);
    expect(findUnjudged('/f', text, WANT, deps).map((x) => [x.module, x.neededBy])).toEqual([['stp', ['br_netfilter']]]);
    // The wanted module's own unknown install has no neededBy.
    const own = findUnjudged('/f', 'install overlay /opt/x.sh\n', WANT, deps);
    expect(own.map((x) => [x.module, 'neededBy' in x])).toEqual([['overlay', false]]);
  });
});
