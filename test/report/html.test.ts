// The fleet page. Oracles outside the module: python's html.parser reads the
// page as a browser's tokenizer would (which elements there are, what text a
// cell holds), and openssl computes the hashes the Content-Security-Policy
// must carry for the page's one style and one script (CSP level 2:
// base64 of the SHA-256 of the element's text).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { documentHref, escapeHtml, renderHtml } from '../../src/report/html.js';
import { hostSummary } from '../helpers/host-summary.js';

const host = hostSummary;

interface Parsed {
  tags: Record<string, number>;
  /** Text of each td.host cell, in page order. */
  hostCells: string[];
  style: string;
  script: string;
  csp: string;
  title: string;
}

/** The page as python's html.parser tokenizes it. */
function parse(html: string): Parsed {
  const py = `
import sys, json
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = {}; self.hosts = []; self.in_host = False; self.raw = None; self.style = ''; self.script = ''; self.csp = ''; self.title = ''; self.in_title = False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if tag == 'td' and a.get('class') == 'host': self.in_host = True; self.hosts.append('')
        if tag in ('style', 'script'): self.raw = tag
        if tag == 'title': self.in_title = True
        if tag == 'meta' and a.get('http-equiv') == 'Content-Security-Policy': self.csp = a.get('content')
    def handle_endtag(self, tag):
        if tag == 'td': self.in_host = False
        if tag in ('style', 'script'): self.raw = None
        if tag == 'title': self.in_title = False
    def handle_data(self, d):
        if self.in_host: self.hosts[-1] += d
        if self.raw == 'style': self.style += d
        if self.raw == 'script': self.script += d
        if self.in_title: self.title += d
p = P(); p.feed(sys.stdin.read()); p.close()
print(json.dumps({'tags': p.tags, 'hostCells': p.hosts, 'style': p.style, 'script': p.script, 'csp': p.csp, 'title': p.title}))
`;
  return JSON.parse(execFileSync('python3', ['-c', py], { input: html, encoding: 'utf8', maxBuffer: 64 << 20 })) as Parsed;
}

const opensslHash = (text: string) =>
  `'sha256-${execFileSync('sh', ['-c', 'openssl dgst -sha256 -binary | openssl base64 -A'], { input: text, encoding: 'utf8' }).trim()}'`;

describe('escapeHtml', () => {
  it('turns the five markup characters into numeric references and leaves the rest', () => {
    expect(escapeHtml(`a&b<c>d"e'f é`)).toBe('a&#38;b&#60;c&#62;d&#34;e&#39;f é');
  });
});

describe('documentHref', () => {
  it('is relative to the page, each segment percent-encoded', () => {
    expect(documentHref('/out', '/out/hosts/a b#1?/reconcile.json')).toBe('hosts/a%20b%231%3F/reconcile.json');
    expect(documentHref('/out/page', '/fleet/node-1/reconcile.json')).toBe('../../fleet/node-1/reconcile.json');
  });
});

describe('renderHtml', () => {
  const hostile = '</td></tr><script>alert(1)</script><img src=x onerror=alert(2)>';
  const hosts = [
    host('node-b', 'ready'),
    host(hostile, 'changes', { changes: 2 }),
    host('node-a', 'failed', { mode: 'error', errors: ['line one\nline <two>'] }),
    host('node-c', 'ready'),
  ];

  it('has one script and one style, whatever a host is named; every host string is text', () => {
    const p = parse(renderHtml(hosts));
    expect(p.tags.script).toBe(1);
    expect(p.tags.style).toBe(1);
    expect(p.tags.img).toBeUndefined();
    expect(p.hostCells).toContain(hostile);
  });

  it('lists the hosts worst verdict first, then by name', () => {
    expect(parse(renderHtml(hosts)).hostCells).toEqual(['node-a', hostile, 'node-b', 'node-c']);
  });

  it("the policy allows exactly the page's own style and script, by the hashes openssl computes of them", () => {
    const p = parse(renderHtml(hosts));
    const csp = Object.fromEntries(
      p.csp
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([k, ...v]) => [k, v.join(' ')]),
    );
    expect(csp['default-src']).toBe("'none'");
    expect(csp['style-src']).toBe(opensslHash(p.style));
    expect(csp['script-src']).toBe(opensslHash(p.script));
  });

  it('the title is escaped, in <title> and <h1>', () => {
    const p = parse(renderHtml([], { title: 'fleet <b>"x"</b>' }));
    expect(p.title).toBe('fleet <b>"x"</b>');
    expect(p.tags.b).toBeUndefined();
  });

  it('without a finding on any host the cause list says so', () => {
    expect(renderHtml([host('n', 'ready')])).toContain('<p>No finding on any host.</p>');
  });

  it("a host's documents are linked relative to the page's directory", () => {
    const page = renderHtml([host('n 1', 'ready', { documents: ['/fleet/n 1/reconcile.json'] })], { outDir: '/fleet/out' });
    expect(page).toContain('<a href="../n%201/reconcile.json">');
  });
});
