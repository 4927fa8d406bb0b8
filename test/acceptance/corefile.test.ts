// The root zone's forward in a Corefile, with the Caddyfile's lexical rules
// (coredns/caddy caddyfile/lexer.go: white space splits tokens, "#" at a
// token's start comments out the line, "quoted" tokens, { and } blocks).
// The main case is kubespray's own Corefile as its v2.24.0
// roles/kubernetes-apps/ansible/templates/coredns-config.yml.j2 renders with
// its defaults (no upstream_dns_servers, no external zones), copied from the
// rendering; the others are CoreDNS's documented forms (coredns.io/plugins/forward).
import { describe, expect, it } from 'vitest';
import { rootForward, targetAddress } from '../../src/acceptance/corefile.js';

const KUBESPRAY =
  '.:53 {\n    errors {\n    }\n    health {\n        lameduck 5s\n    }\n    ready\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n' +
  '      pods insecure\n      fallthrough in-addr.arpa ip6.arpa\n    }\n    prometheus :9153\n    forward . /etc/resolv.conf {\n' +
  '      prefer_udp\n      max_concurrent 1000\n    }\n    cache 30\n    loop\n    reload\n    loadbalance\n}\n';

describe("a Corefile's root forward", () => {
  it("kubespray's default: forward . /etc/resolv.conf on line 13, its block of options not taken for targets", () => {
    expect(rootForward(KUBESPRAY)).toEqual({ known: true, value: { to: ['/etc/resolv.conf'], line: 13 } });
  });
  it('upstream servers; another zone first; comments; the zone written "." or dns://.:53', () => {
    const text = '# site\nexample.org:53 {\n  forward . 10.9.9.9\n}\ndns://.:53 {\n  forward . 10.0.0.2 8.8.8.8 # upstreams\n  cache\n}\n';
    expect(rootForward(text)).toEqual({ known: true, value: { to: ['10.0.0.2', '8.8.8.8'], line: 6 } });
    expect(rootForward('. {\n  forward . "127.0.0.1"\n}\n')).toEqual({ known: true, value: { to: ['127.0.0.1'], line: 2 } });
  });
  it('no root zone, or no forward in it: null; a forward of a sub-zone only, an import, a snippet, a placeholder: not known', () => {
    expect(rootForward('example.org {\n  forward . 10.0.0.1\n}\n')).toEqual({ known: true, value: null });
    expect(rootForward('.:53 {\n  cache\n}\n')).toEqual({ known: true, value: null });
    expect(rootForward('.:53 {\n  forward example.org 10.0.0.1\n}\n')).toMatchObject({ known: false });
    for (const t of ['.:53 {\n  import common\n}\n', '(common) {\n  cache\n}\n', '.:53 {\n  forward . {$UPSTREAM}\n}\n'])
      expect(rootForward(t)).toMatchObject({ known: false });
    expect(rootForward('.:53 {\n  forward . 1.1.1.1\n')).toMatchObject({ known: false, reason: expect.stringContaining('not closed') });
  });
  it("a target's address: dns:// and a :port dropped, [v6]:port, tls:// none", () => {
    expect(['8.8.8.8', 'dns://8.8.8.8', '8.8.8.8:53', 'dns://[::1]:53', '::1', 'tls://1.1.1.1'].map(targetAddress)).toEqual([
      '8.8.8.8',
      '8.8.8.8',
      '8.8.8.8',
      '::1',
      '::1',
      null,
    ]);
  });
});
