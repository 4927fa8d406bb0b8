// PreviousCluster's promise kinds: each directory `kubeadm reset` (and the k3s/rke2 uninstallers) would
// clear stays absent, each node unit stays down. The directory list is kubeadm reset's own (its
// cleanup of /etc/kubernetes, /var/lib/kubelet, /var/lib/etcd, /etc/cni/net.d) plus rancher's two,
// written out here by hand; the unit states are the ACTIVE column systemctl list-units prints.
import { describe, expect, it } from 'vitest';
import {
  PATH_ABSENT_KIND,
  PROMISED_UNITS,
  UNIT_DOWN_KIND,
  absentPromise,
  resetPromises,
  unitDownPromise,
} from '../../../src/resources/previous-cluster/promises.js';
import type { Promised } from '../../../src/promises.js';

const dir: Promised = { id: 'absent:/var/lib/etcd', kind: 'path-absent', subject: '/var/lib/etcd', expect: 'absent' };
const unit: Promised = { id: 'unit-down:kubelet.service', kind: 'unit-down', subject: 'kubelet.service', expect: 'not running' };

describe('the reset promises', () => {
  it('are named by kind and subject', () => {
    expect(absentPromise('/etc/kubernetes')).toBe('absent:/etc/kubernetes');
    expect(unitDownPromise('k3s.service')).toBe('unit-down:k3s.service');
  });

  it('promise every reset directory absent and every node unit down, one promise each', () => {
    const ps = resetPromises();
    const dirs = ps.filter((p) => p.kind === 'path-absent');
    expect(dirs.map((p) => p.subject).sort()).toEqual(
      ['/etc/cni/net.d', '/etc/kubernetes', '/etc/rancher', '/var/lib/etcd', '/var/lib/kubelet', '/var/lib/rancher'].sort(),
    );
    for (const p of dirs) expect(p).toEqual({ id: `absent:${p.subject}`, kind: 'path-absent', subject: p.subject, expect: 'absent' });
    const units = ps.filter((p) => p.kind === 'unit-down');
    expect(units.map((p) => p.subject)).toEqual([
      'kubelet.service',
      'etcd.service',
      'k3s.service',
      'k3s-agent.service',
      'rke2-server.service',
      'rke2-agent.service',
    ]);
    for (const p of units) expect(p).toEqual({ id: `unit-down:${p.subject}`, kind: 'unit-down', subject: p.subject, expect: 'not running' });
    expect(ps).toHaveLength(12);
    expect(new Set(ps.map((p) => p.id)).size).toBe(12);
    expect([...PROMISED_UNITS]).toEqual(units.map((p) => p.subject));
  });
});

describe('a directory promised absent', () => {
  it('is worded as moved aside', () => {
    expect(PATH_ABSENT_KIND.describe(dir)).toBe('/var/lib/etcd absent (moved aside)');
  });

  it('breaks only when the tier saw an entry at that very path', () => {
    expect(PATH_ABSENT_KIND.judge(dir, { paths: new Map([['/var/lib/etcd', true]]) })).toBe('/var/lib/etcd exists');
    expect(PATH_ABSENT_KIND.judge(dir, { paths: new Map([['/var/lib/etcd', false]]) })).toBeNull();
    // Another path being there says nothing about this one.
    expect(PATH_ABSENT_KIND.judge(dir, { paths: new Map([['/var/lib/kubelet', true]]) })).toBeNull();
  });

  it('no path observation: nothing to judge', () => {
    expect(PATH_ABSENT_KIND.judge(dir, {})).toBeNull();
  });
});

describe('a unit promised down', () => {
  it('is worded as not running', () => {
    expect(UNIT_DOWN_KIND.describe(unit)).toBe('kubelet.service not running');
  });

  // systemd's ACTIVE states (systemctl --state=help): active, reloading, inactive, failed, activating,
  // deactivating, maintenance, refreshing. Running or about to run breaks the promise.
  it.each(['active', 'activating', 'reloading', 'refreshing'])('breaks when the unit is %s', (state) => {
    expect(UNIT_DOWN_KIND.judge(unit, { units: new Map([['kubelet.service', state]]) })).toBe(`kubelet.service is ${state}`);
  });

  it.each(['inactive', 'failed', 'deactivating', 'maintenance'])('holds when the unit is %s', (state) => {
    expect(UNIT_DOWN_KIND.judge(unit, { units: new Map([['kubelet.service', state]]) })).toBeNull();
  });

  it('holds when the unit is not listed (not loaded) or nothing was observed', () => {
    expect(UNIT_DOWN_KIND.judge(unit, { units: new Map([['etcd.service', 'active']]) })).toBeNull();
    expect(UNIT_DOWN_KIND.judge(unit, {})).toBeNull();
  });
});
