// The resolv.conf kubelet hands pods with dnsPolicy Default, as kubespray's
// kubernetes/node role sets kube_resolv_conf: its default, or an OS-specific
// vars file that the role's include_vars finds with with_first_found (Ansible's
// first_found lookup: the role's vars/ directory first) and whose value
// outranks the defaults. Fixture checkouts written by hand.
import { describe, expect, it } from 'vitest';
import { notKnown } from '../../src/acceptance/checker.js';
import { kubeletResolvConf } from '../../src/acceptance/kubelet-resolv-conf.js';
import { fixtureNode } from '../helpers/kubespray-fixture.js';

const R = 'roles/kubernetes/node';
const MAIN = `${R}/tasks/main.yml`;
const FACTS = `${R}/tasks/facts.yml`;
const include = (extra = '') =>
  `---\n- name: Os specific vars\n  include_vars: "{{ item }}"\n  with_first_found:\n    - files:\n        - "{{ os_name }}-{{ os_version }}.yml"\n        - "{{ os_name }}.yml"\n      skip: true\n${extra}`;
const role = (os: string, files: Record<string, string> = {}, facts = include()) => ({
  [`${R}/defaults/main.yml`]: `kube_resolv_conf: "/etc/resolv.conf"\nos_name: ${os}\nos_version: "22"\n`,
  [MAIN]: '---\n- name: Facts\n  import_tasks: facts.yml\n',
  [FACTS]: facts,
  [`${R}/vars/ubuntu.yml`]: '---\nkube_resolv_conf: "/run/systemd/resolve/resolv.conf"\n',
  ...files,
});

describe('kubeletResolvConf', () => {
  it("no vars file for this OS: the role's default /etc/resolv.conf", async () => {
    expect(await kubeletResolvConf(await fixtureNode(role('debian')))).toEqual({
      known: true,
      value: { path: '/etc/resolv.conf', where: `${R}/defaults/main.yml:1 kube_resolv_conf` },
    });
  });
  it("the first file found wins: ubuntu.yml's systemd-resolved file, or ubuntu-22.yml before it when it exists", async () => {
    expect(await kubeletResolvConf(await fixtureNode(role('ubuntu')))).toEqual({
      known: true,
      value: { path: '/run/systemd/resolve/resolv.conf', where: `${R}/vars/ubuntu.yml:2 kube_resolv_conf` },
    });
    const both = role('ubuntu', { [`${R}/vars/ubuntu-22.yml`]: 'kube_resolv_conf: /etc/kubelet-resolv.conf\n' });
    expect(await kubeletResolvConf(await fixtureNode(both))).toMatchObject({
      value: { path: '/etc/kubelet-resolv.conf', where: `${R}/vars/ubuntu-22.yml:1 kube_resolv_conf` },
    });
  });
  it('an include_vars that does not run here (when: false) changes nothing', async () => {
    const off = role('ubuntu', {}, include('  when: os_name == "fedora"\n'));
    expect(await kubeletResolvConf(await fixtureNode(off))).toMatchObject({ value: { path: '/etc/resolv.conf' } });
  });
  it('not modelled or not defined: not known, naming the task or the variable', async () => {
    const plain = role('ubuntu', {}, '---\n- name: Os specific vars\n  include_vars: ubuntu.yml\n');
    expect(await kubeletResolvConf(await fixtureNode(plain))).toEqual(
      notKnown(`${FACTS}:2 Os specific vars: an include_vars without with_first_found is not modelled`),
    );
    const paths = role(
      'ubuntu',
      {},
      '---\n- name: Os specific vars\n  include_vars: "{{ item }}"\n  with_first_found:\n    - files: [a.yml]\n      paths: [vars]\n',
    );
    expect(await kubeletResolvConf(await fixtureNode(paths))).toEqual(notKnown(`${FACTS}:2 Os specific vars: a first_found term with paths: is not modelled`));
    const undef = await fixtureNode({ [`${R}/defaults/main.yml`]: 'other: 1\n', [MAIN]: '---\n[]\n' });
    expect(await kubeletResolvConf(undef)).toEqual(notKnown('kube_resolv_conf is not defined for kubernetes/node'));
  });
});
