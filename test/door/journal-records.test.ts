// The set-aside name the door gives an entry it moves out of the way: beside it (same directory, so a rename(2),
// never a copy across file systems), marked as ours, and naming the run that moved it.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ASIDE_MARK, asideName } from '../../src/door/journal-records.js';

describe('asideName', () => {
  it("the target's path, the tool's mark, the run id", () => {
    expect(asideName('/var/lib/etcd', '20261207T2130Z-4f2a')).toBe('/var/lib/etcd.k8s-host-reconcile-aside-20261207T2130Z-4f2a');
    expect(ASIDE_MARK).toBe('.k8s-host-reconcile-aside-');
  });
  it('stays in the same directory, also for a relative path and a dot file', () => {
    for (const t of ['/etc/kubernetes', 'etc/cni/net.d', '/root/.kube']) {
      const a = asideName(t, 'r1');
      expect(path.dirname(a)).toBe(path.dirname(t));
      expect(path.basename(a)).toBe(`${path.basename(t)}.k8s-host-reconcile-aside-r1`);
    }
  });
  it('two runs give two names, neither the target itself', () => {
    expect(asideName('/x', 'a')).not.toBe(asideName('/x', 'b'));
    expect(asideName('/x', 'a')).not.toBe('/x');
  });
});
