// Who keeps CoreDNS from forwarding to itself, from a hand-written checkout in
// kubespray's layout (no inventory, no facts): the Corefile template's root
// forward as rendered, the file kube_resolv_conf hands kubelet, and the
// preinstall DNS tasks chosen by the two `systemctl is-active` registers
// (systemctl(1): exit 0 when active, 3 otherwise). Expected verdicts and
// file:line citations are read off the fixture texts below by hand.
import { describe, expect, it } from 'vitest';
import { known, notKnown, type Known, type ResolvConfFacts } from '../../src/acceptance/checker.js';
import { COREFILE_TEMPLATE, DNS_REWRITES, isActiveUnit, resolvConfWhoFixes } from '../../src/acceptance/resolv-conf-who.js';
import type { Task } from '../../src/kubespray/tasks.js';
import { fixtureNode } from '../helpers/kubespray-fixture.js';

const PRE = 'roles/kubernetes/preinstall/tasks';
// The root zone's forward is on Corefile line 2 (".:53 {" is line 1).
const corefile = (fwd: string) =>
  `---\nkind: ConfigMap\ndata:\n  Corefile: |\n    .:53 {\n        forward . ${fwd} {\n          prefer_udp\n        }\n        loop\n    }\n`;
const DEFAULT_FWD = "{{ upstream_dns_servers | join(' ') if upstream_dns_servers is defined and upstream_dns_servers | length > 0 else '/etc/resolv.conf' }}";
const MAIN =
  '---\n- name: Check systemd-resolved\n  command: systemctl is-active systemd-resolved\n  register: resolved_on\n  failed_when: false\n\n' +
  '- name: Check NetworkManager\n  command: systemctl is-active --quiet NetworkManager.service\n  register: nm_on\n  failed_when: false\n\n' +
  '- name: Resolvconf\n  import_tasks: 0060-resolvconf.yml\n  when:\n    - resolvconf_mode == "host_resolvconf"\n    - resolved_on.rc != 0\n    - nm_on.rc != 0\n\n' +
  '- name: NM DNS\n  import_tasks: 0063-networkmanager-dns.yml\n  when:\n    - resolvconf_mode == "host_resolvconf"\n    - nm_on.rc == 0\n';
const REWRITE_0060 = '---\n- name: Write resolv.conf\n  blockinfile:\n    path: /etc/resolv.conf\n    block: "nameserver {{ nameserverentries }}"\n';
const REWRITE_0063 = '---\n- name: NM servers\n  ini_file:\n    path: /etc/NetworkManager/conf.d/dns.conf\n    option: servers\n    value: x\n';

function files(o: { fwd?: string; kubeletFile?: string; mode?: string; upstream?: string; main?: string; corefile?: string | null } = {}) {
  const f: Record<string, string> = {
    'roles/kubernetes-apps/ansible/defaults/main.yml': o.upstream ? `---\nupstream_dns_servers: ${o.upstream}\n` : '---\ndns_domain: cluster.local\n',
    'roles/kubernetes/node/defaults/main.yml': `---\n# kubelet's file\nkube_resolv_conf: "${o.kubeletFile ?? '/etc/resolv.conf'}"\n`,
    'roles/kubernetes/preinstall/defaults/main.yml': `---\nresolvconf_mode: ${o.mode ?? 'host_resolvconf'}\n`,
    [`${PRE}/main.yml`]: o.main ?? MAIN,
    [`${PRE}/0060-resolvconf.yml`]: REWRITE_0060,
    [`${PRE}/0063-networkmanager-dns.yml`]: REWRITE_0063,
  };
  if (o.corefile !== null) f[COREFILE_TEMPLATE] = o.corefile ?? corefile(o.fwd ?? DEFAULT_FWD);
  return f;
}

const LOOPBACK: ResolvConfFacts['addresses'] = ['127.0.0.53'];
function facts(
  o: { resolved?: Known<boolean>; nm?: Known<boolean>; upstream?: Known<{ path: string; real: string; addresses: string[] } | null> } = {},
): ResolvConfFacts {
  return {
    path: '/etc/resolv.conf',
    real: '/run/systemd/resolve/stub-resolv.conf',
    addresses: LOOPBACK,
    beside: {
      upstream: o.upstream ?? known({ path: '/run/systemd/resolve/resolv.conf', real: '/run/systemd/resolve/resolv.conf', addresses: ['10.0.0.2'] }),
      active: { 'systemd-resolved.service': o.resolved ?? known(true), 'NetworkManager.service': o.nm ?? known(false) },
    },
  };
}
const FWD = `${COREFILE_TEMPLATE} rendered for this node: Corefile line 2`;
const KUBELET = 'roles/kubernetes/node/defaults/main.yml:3 kube_resolv_conf';

describe('isActiveUnit: the unit a `systemctl is-active` command task asks about', () => {
  const task = (module: string, raw: unknown): Task => ({ module, args: { _raw_params: raw } }) as unknown as Task;
  it('a bare name is a .service, a suffixed one is kept, --quiet is not a word that counts', () => {
    expect(isActiveUnit(task('command', 'systemctl is-active systemd-resolved'))).toBe('systemd-resolved.service');
    expect(isActiveUnit(task('command', 'systemctl is-active --quiet NetworkManager.service'))).toBe('NetworkManager.service');
    expect(isActiveUnit(task('command', "systemctl is-active 'chronyd.socket'"))).toBe('chronyd.socket');
  });
  it('any other command, module, templated or unsplittable line is not one', () => {
    expect(isActiveUnit(task('shell', 'systemctl is-active systemd-resolved'))).toBeNull();
    expect(isActiveUnit(task('command', 'systemctl is-enabled systemd-resolved'))).toBeNull();
    expect(isActiveUnit(task('command', 'systemctl is-active a b'))).toBeNull();
    expect(isActiveUnit(task('command', 'systemctl is-active'))).toBeNull();
    expect(isActiveUnit(task('command', 'systemctl is-active {{ unit }}'))).toBeNull();
    expect(isActiveUnit(task('command', "systemctl is-active 'unterminated"))).toBeNull();
    expect(isActiveUnit(task('command', ['systemctl', 'is-active', 'x']))).toBeNull();
  });
  it('the three preinstall task files that rewrite nameservers', () => {
    expect(DNS_REWRITES).toEqual(['0060-resolvconf.yml', '0063-networkmanager-dns.yml', '0100-dhclient-hooks.yml']);
  });
});

describe('resolvConfWhoFixes: where CoreDNS forwards', () => {
  it('upstream_dns_servers set: CoreDNS forwards there, kubespray handles it', async () => {
    const r = await resolvConfWhoFixes(await fixtureNode(files({ upstream: '[10.0.0.2, 8.8.8.8]' })), facts());
    expect(r).toEqual({
      who: 'kubespray',
      says: `kubespray's CoreDNS forwards to 10.0.0.2, 8.8.8.8, not to /etc/resolv.conf (${FWD}, forward . 10.0.0.2 8.8.8.8)`,
      evidence: [`${FWD}, forward . 10.0.0.2 8.8.8.8`],
    });
  });
  it('upstream servers all loopback (127.0.0.1, ::1): the operator sets real ones', async () => {
    const r = await resolvConfWhoFixes(await fixtureNode(files({ upstream: '["127.0.0.1", "::1"]' })), facts());
    expect(r.who).toBe('operator');
    expect(r.says).toContain('forwards to loopback addresses only');
    expect(r.says).toContain('set upstream_dns_servers to real servers');
  });
  it('one loopback and one real upstream: not only loopback, so kubespray', async () => {
    const r = await resolvConfWhoFixes(await fixtureNode(files({ upstream: '[127.0.0.1, 10.0.0.2]' })), facts());
    expect(r.who).toBe('kubespray');
  });
  it('a forward target that is not an address (a host name): unknown, citing the Corefile', async () => {
    const r = await resolvConfWhoFixes(await fixtureNode(files({ fwd: 'dns.example' })), facts());
    expect(r.who).toBe('unknown');
    expect(r.says).toContain('forwards to dns.example');
    expect(r.evidence).toEqual([`${FWD}, forward . dns.example`]);
  });
  it('a forward to a file that is not /etc/resolv.conf, or to a file and an address: unknown', async () => {
    for (const fwd of ['/etc/other.conf', '/etc/resolv.conf 10.0.0.2']) {
      const r = await resolvConfWhoFixes(await fixtureNode(files({ fwd })), facts());
      expect(r.who, fwd).toBe('unknown');
      expect(r.says, fwd).toContain('which is not read here');
    }
  });
  it('no template, no data.Corefile, no root forward, an unrenderable template: unknown with the reason', async () => {
    const cases: [string | null, string][] = [
      [null, `the checkout has no ${COREFILE_TEMPLATE}`],
      ['---\nkind: ConfigMap\n', `${COREFILE_TEMPLATE} renders no data.Corefile`],
      ['---\ndata:\n  Corefile: |\n    .:53 {\n        cache 30\n    }\n', `${COREFILE_TEMPLATE}'s Corefile has no forward for the zone "."`],
      ['---\ndata:\n  Corefile: "{{ no_such_var }}"\n', `${COREFILE_TEMPLATE} cannot be rendered for this node`],
    ];
    for (const [text, reason] of cases) {
      const r = await resolvConfWhoFixes(await fixtureNode(files({ corefile: text })), facts());
      expect(r.who, reason).toBe('unknown');
      expect(r.says, reason).toContain(`whether CoreDNS gets a nameserver other than itself cannot be evaluated: ${reason}`);
    }
  });
});

describe("resolvConfWhoFixes: the file kubelet hands CoreDNS's pod", () => {
  const UPSTREAM_KUBELET = '/run/systemd/resolve/resolv.conf';
  it("kube_resolv_conf is resolved's upstream list with a real server: kubespray, citing both", async () => {
    const r = await resolvConfWhoFixes(await fixtureNode(files({ kubeletFile: UPSTREAM_KUBELET })), facts());
    expect(r).toEqual({
      who: 'kubespray',
      says: `kubespray hands pods ${UPSTREAM_KUBELET} instead (${KUBELET}): systemd-resolved's upstream servers 10.0.0.2`,
      evidence: [`${FWD}, forward . /etc/resolv.conf`, KUBELET],
    });
  });
  it('... whose list is only loopback, or empty: the operator', async () => {
    for (const [addresses, has] of [
      [['127.0.0.1'], 'only loopback nameservers (127.0.0.1)'],
      [[], 'no nameserver'],
    ] as const) {
      const up = known({ path: UPSTREAM_KUBELET, real: UPSTREAM_KUBELET, addresses: [...addresses] });
      const r = await resolvConfWhoFixes(await fixtureNode(files({ kubeletFile: UPSTREAM_KUBELET })), facts({ upstream: up }));
      expect(r.who).toBe('operator');
      expect(r.says).toContain(`and it has ${has}: give systemd-resolved real upstream servers`);
    }
  });
  it('... which does not exist here, or cannot be read: unknown', async () => {
    const missing = await resolvConfWhoFixes(await fixtureNode(files({ kubeletFile: UPSTREAM_KUBELET })), facts({ upstream: known(null) }));
    expect(missing.who).toBe('unknown');
    expect(missing.says).toContain('which does not exist here');
    const unreadable = await resolvConfWhoFixes(await fixtureNode(files({ kubeletFile: UPSTREAM_KUBELET })), facts({ upstream: notKnown('EACCES') }));
    expect(unreadable).toMatchObject({ who: 'unknown', says: expect.stringContaining('EACCES') });
  });
  it('any other file than the upstream list: unknown, naming it', async () => {
    const r = await resolvConfWhoFixes(await fixtureNode(files({ kubeletFile: '/etc/kubelet-resolv.conf' })), facts());
    expect(r.who).toBe('unknown');
    expect(r.says).toContain('kubelet is given /etc/kubelet-resolv.conf');
  });
});

describe("resolvConfWhoFixes: kubelet keeps /etc/resolv.conf, and whether kubespray rewrites the host's nameservers", () => {
  it('systemd-resolved active (rc 0): 0060 and 0063 do not run, the operator sets kube_resolv_conf', async () => {
    const r = await resolvConfWhoFixes(await fixtureNode(files()), facts({ resolved: known(true), nm: known(false) }));
    expect(r.who).toBe('operator');
    expect(r.says).toContain(`kubespray hands pods /etc/resolv.conf (${KUBELET}) and leaves its nameservers: set kube_resolv_conf`);
    expect(r.evidence).toEqual([`${FWD}, forward . /etc/resolv.conf`, KUBELET]);
  });
  it('neither active (rc 3, rc 3): 0060 runs, unknown naming its task', async () => {
    const r = await resolvConfWhoFixes(await fixtureNode(files()), facts({ resolved: known(false), nm: known(false) }));
    expect(r.who).toBe('unknown');
    expect(r.evidence).toContain(`${PRE}/0060-resolvconf.yml:2 Write resolv.conf`);
  });
  it('NetworkManager active: 0063 runs, unknown naming its task', async () => {
    const r = await resolvConfWhoFixes(await fixtureNode(files()), facts({ resolved: known(false), nm: known(true) }));
    expect(r.evidence).toContain(`${PRE}/0063-networkmanager-dns.yml:2 NM servers`);
  });
  it('resolvconf_mode none: no rewrite runs whatever the services, the operator', async () => {
    const r = await resolvConfWhoFixes(await fixtureNode(files({ mode: 'none' })), facts({ resolved: known(false), nm: known(false) }));
    expect(r.who).toBe('operator');
  });
  it("a service's state not known, or the services not read at all: unknown with the reason", async () => {
    const r = await resolvConfWhoFixes(await fixtureNode(files()), facts({ nm: notKnown('systemctl failed (exit 127)') }));
    expect(r).toMatchObject({ who: 'unknown', says: expect.stringContaining('systemctl failed (exit 127)') });
    const none = await resolvConfWhoFixes(await fixtureNode(files()), { ...facts(), beside: null });
    expect(none).toMatchObject({ who: 'unknown', says: expect.stringContaining('the DNS services were not read') });
  });
  it('a condition on a variable nobody defines: unknown, naming the task', async () => {
    const main = MAIN.replace('resolvconf_mode == "host_resolvconf"\n    - resolved_on.rc != 0', 'undefined_thing\n    - resolved_on.rc != 0');
    const r = await resolvConfWhoFixes(await fixtureNode(files({ main })), facts({ resolved: known(false), nm: known(false) }));
    expect(r.who).toBe('unknown');
    expect(r.says).toContain(`whether ${PRE}/0060-resolvconf.yml:2 Write resolv.conf runs`);
  });
  it("preinstall without any of kubespray's DNS task files: unknown, naming them", async () => {
    const r = await resolvConfWhoFixes(await fixtureNode(files({ main: '---\n- name: nothing\n  debug:\n    msg: hi\n' })), facts());
    expect(r.says).toContain(`${PRE} has none of kubespray's DNS tasks (${DNS_REWRITES.join(', ')})`);
  });
});
