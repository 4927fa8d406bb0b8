// modules.dep as depmod(8) writes it: "path/mod.ko[.xz]: dep.ko ...", each
// line listing the module's whole dependency closure; a module with none
// has nothing after the colon. kmod reads "-" and "_" in names alike.
import { describe, expect, it } from 'vitest';
import { dependenciesOf, parseModulesDep } from '../../src/modprobe/modules-dep.js';

const DEP = [
  'kernel/net/bridge/br_netfilter.ko.xz: kernel/net/bridge/bridge.ko.xz kernel/net/802/stp.ko.xz kernel/net/llc/llc.ko.xz',
  'kernel/net/bridge/bridge.ko.xz: kernel/net/802/stp.ko.xz kernel/net/llc/llc.ko.xz',
  'kernel/fs/overlayfs/overlay.ko.zst:',
  'updates/dkms/my-driver.ko: kernel/net/llc/llc.ko.gz',
  '',
].join('\n');

describe('parseModulesDep', () => {
  it('names each module by its file name without .ko and compression suffix, - as _', () => {
    const m = parseModulesDep(DEP);
    expect([...m]).toEqual([
      ['br_netfilter', ['bridge', 'stp', 'llc']],
      ['bridge', ['stp', 'llc']],
      ['overlay', []],
      ['my_driver', ['llc']],
    ]);
  });
  it('a line without a colon is no entry', () => {
    expect([...parseModulesDep('# comment\nkernel/x.ko\n')]).toEqual([]);
  });
});

describe('dependenciesOf', () => {
  it('maps each dependency to the wanted modules that need it, merged over kernels without repeats', () => {
    const old = parseModulesDep('kernel/net/bridge/br_netfilter.ko: kernel/net/bridge/bridge.ko kernel/net/nf_old.ko\n');
    const deps = dependenciesOf(['br-netfilter', 'my_driver', 'overlay'], [parseModulesDep(DEP), old]);
    expect([...deps]).toEqual([
      ['bridge', ['br_netfilter']],
      ['stp', ['br_netfilter']],
      ['llc', ['br_netfilter', 'my_driver']],
      ['nf_old', ['br_netfilter']],
    ]);
  });
  it('a module no kernel lists needs nothing', () => {
    expect(dependenciesOf(['veth'], [parseModulesDep(DEP)]).size).toBe(0);
  });
});
