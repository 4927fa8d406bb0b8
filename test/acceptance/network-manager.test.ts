// NetworkManagerCNI: NetworkManager running and managing the CNI plugin's
// interfaces. Which interfaces a configuration leaves unmanaged is read by
// hand from NetworkManager.conf(5) ([keyfile] unmanaged-devices, the Device
// List Format), and the veth rule from network-manager's
// /lib/udev/rules.d/85-nm-unmanaged.rules (ENV{ID_NET_DRIVER}=="veth" ->
// NM_UNMANAGED=1). The merge itself is nm-conf.test.ts's, against NetworkManager.
import { describe, expect, it } from 'vitest';
import { known, notKnown } from '../../src/acceptance/checker.js';
import type { NetworkManagerFacts } from '../../src/acceptance/nm-facts.js';
import { CNI_INTERFACES } from '../../src/acceptance/cni-interfaces.js';
import { hostFiles, managedPatterns, networkManagerCniCheck, stillManaged } from '../../src/acceptance/network-manager.js';
import { passingFacts } from '../helpers/acceptance-facts.js';

const CONF_D = '/etc/NetworkManager/conf.d';
const MAIN = { path: '/etc/NetworkManager/NetworkManager.conf', text: '[main]\nplugins=ifupdown,keyfile\n\n[ifupdown]\nmanaged=false\n' };
const nm = (over: Partial<NetworkManagerFacts> = {}): NetworkManagerFacts => ({
  runs: { yes: true, how: 'NetworkManager.service starts at boot' },
  active: known(true),
  main: MAIN,
  dirs: {},
  vethRule: { state: 'absent', file: '' },
  ...over,
});
const check = (n: NetworkManagerFacts, plugin = 'calico') =>
  networkManagerCniCheck.check(passingFacts({ networkManager: known(n), networkPlugin: known(plugin) }));
const calicoConf = (text: string) => ({ [CONF_D]: [{ path: `${CONF_D}/calico.conf`, text }] });

describe('networkManagerCniCheck', () => {
  it('NetworkManager not installed or not running: nothing to say', () => {
    expect(check(nm({ runs: null }))).toEqual({ warnings: [], errors: [] });
    expect(check(nm({ runs: { yes: false, how: 'disabled' } }))).toEqual({ warnings: [], errors: [] });
  });
  it("running with Debian's stock NetworkManager.conf and no veth rule: every calico pattern is managed, a warning names them", () => {
    expect(check(nm())).toEqual({
      warnings: [
        `NetworkManager runs (NetworkManager.service starts at boot) and would manage calico's interfaces cali*, tunl*, vxlan.calico (${CNI_INTERFACES.calico!.source}): its [keyfile] unmanaged-devices (not set) does not leave them alone`,
      ],
      errors: [],
    });
  });
  it('the veth rule in force leaves the veth patterns alone (cali*), not the tunnels', () => {
    const r = check(nm({ vethRule: { state: 'in force', file: '/lib/udev/rules.d/85-nm-unmanaged.rules' } }));
    expect(r).toMatchObject({ warnings: [expect.stringContaining("would manage calico's interfaces tunl*, vxlan.calico (")] });
  });
  it("calico's documented file (interface-name:cali*;interface-name:tunl*;interface-name:vxlan.calico) leaves all unmanaged", () => {
    const text = '[keyfile]\nunmanaged-devices=interface-name:cali*;interface-name:tunl*;interface-name:vxlan.calico\n';
    expect(check(nm({ dirs: calicoConf(text) }))).toEqual({ warnings: [], errors: [] });
    // The same for flannel's interfaces is not enough.
    expect(check(nm({ dirs: calicoConf(text) }), 'flannel')).toMatchObject({ warnings: [expect.stringContaining("flannel's interfaces cni0, flannel.1")] });
  });
  it('plugin none: nothing; a plugin whose interfaces are not known, or an except: that could decide it: unknown; no plugin known: skipped', () => {
    expect(check(nm(), 'none')).toEqual({ warnings: [], errors: [] });
    expect(check(nm(), 'weave')).toEqual({
      unknown: 'kube_network_plugin is "weave", whose interface names are not known here (src/acceptance/cni-interfaces.ts)',
    });
    const except = check(nm({ dirs: calicoConf('[keyfile]\nunmanaged-devices=interface-name:cali*;except:interface-name:cali0\n') }));
    expect(except).toMatchObject({ unknown: expect.stringContaining(`(set at ${CONF_D}/calico.conf`) });
    expect(networkManagerCniCheck.check(passingFacts({ networkManager: known(nm()), networkPlugin: notKnown('no checkout') }))).toEqual({
      skipped: 'no checkout',
    });
  });
});

describe('stillManaged: a shadowed veth rule', () => {
  const shadowed = nm({ vethRule: { state: 'shadowed', file: '/etc/udev/rules.d/85-nm-unmanaged.rules' } });
  it("counted managed by the checker's caller that cannot read udev ('managed'), unknown where it could decide ('unknown')", () => {
    expect(stillManaged(CNI_INTERFACES.cilium!, shadowed, hostFiles(shadowed), 'managed')).toEqual(
      known({ managed: ['cilium_host', 'cilium_net', 'cilium_vxlan', 'lxc*'], from: [] }),
    );
    expect(stillManaged(CNI_INTERFACES.cilium!, shadowed, hostFiles(shadowed), 'unknown')).toEqual(
      notKnown(
        "/etc/udev/rules.d/85-nm-unmanaged.rules shadows NetworkManager's udev rule for veth devices (cilium_host, cilium_net, lxc*), and udev rules are not read here",
      ),
    );
    // Flannel has no veth pattern: the shadowing decides nothing.
    expect(stillManaged(CNI_INTERFACES.flannel!, shadowed, hostFiles(shadowed), 'unknown')).toEqual(known({ managed: ['cni0', 'flannel.1'], from: [] }));
  });
});

describe('hostFiles and managedPatterns', () => {
  it("a file kubespray would write replaces the host's file of the same name in /etc's conf.d", () => {
    const host = nm({ dirs: calicoConf('[keyfile]\nunmanaged-devices=interface-name:cali*\n') });
    const written = { path: `${CONF_D}/calico.conf`, text: '[keyfile]\nunmanaged-devices+=interface-name:tunl*\n' };
    const files = hostFiles(host, [written]);
    expect(files.filter((f) => f.path === `${CONF_D}/calico.conf`)).toEqual([written]);
    expect(managedPatterns(files, ['cali*', 'tunl*'])).toEqual(known({ managed: ['cali*'], from: [`${CONF_D}/calico.conf:2`] }));
  });
});
