// HTTPProxy and HTTPProxyCIDR: kubeadm's proxy checks, unknown when kubeadm will run behind a proxy (NO_PROXY is Go's to decide).
import { describe, expect, it } from 'vitest';
import { httpProxyCheck, httpProxyCidrCheck } from '../../src/acceptance/http-proxy.js';
import { known, notKnown } from '../../src/acceptance/checker.js';
import { passingFacts as facts } from '../helpers/acceptance-facts.js';

describe("HTTPProxy and HTTPProxyCIDR: kubeadm's proxy checks on the environment kubespray gives kubeadm", () => {
  it('no https proxy in that environment: both pass', () => {
    expect(httpProxyCheck.check(facts())).toEqual({ warnings: [], errors: [] });
    expect(httpProxyCidrCheck.check(facts())).toEqual({ warnings: [], errors: [] });
  });
  it('a proxy kubeadm will have: unknown, naming where it comes from and the NO_PROXY beside it (Go decides by NO_PROXY)', () => {
    const proxied = facts({
      kubeadmProxy: known({
        https: { value: 'http://proxy:3128', where: '/etc/environment:2' },
        noProxy: { value: 'localhost,10.0.0.0/8', where: '/etc/environment:3' },
        how: "the play at cluster.yml:75 sets no environment, so the login's (/etc/environment)",
      }),
    });
    expect(httpProxyCheck.check(proxied)).toEqual({
      unknown:
        'kubeadm runs with the https proxy "http://proxy:3128" (/etc/environment:2; the play at cluster.yml:75 sets no environment, so the login\'s (/etc/environment)); whether NO_PROXY is "localhost,10.0.0.0/8" (/etc/environment:3) excludes the node\'s API address is not judged here',
    });
    expect(httpProxyCidrCheck.check(proxied)).toMatchObject({ unknown: expect.stringContaining('excludes the service and pod ranges') });
    expect(httpProxyCheck.check(facts({ kubeadmProxy: notKnown('no play runs kubernetes/control-plane') }))).toEqual({
      skipped: 'no play runs kubernetes/control-plane',
    });
  });
});
