// kubelet's hard eviction thresholds as kubespray configures them: kubelet's
// DefaultEvictionHard on Linux (pkg/kubelet/eviction/defaults_linux.go:
// nodefs.available<10%, nodefs.inodesFree<5%, imagefs.available<15%,
// imagefs.inodesFree<5%) when eviction_hard is empty, else the mapping whole;
// and a threshold read as kubelet reads it (a percentage, or a resource.Quantity:
// k8s.io/apimachinery's binary Ki..Ei and decimal k..E suffixes).
import { describe, expect, it } from 'vitest';
import { evictionThresholds, thresholdAmount } from '../../src/acceptance/eviction.js';
import { known, notKnown } from '../../src/acceptance/checker.js';

const DEFAULTS = { 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '15%', 'imagefs.inodesFree': '5%' };

describe("evictionThresholds: eviction_hard's value as the thresholds kubelet gets", () => {
  it("unset, null, '' and {} are kubelet's defaults, saying kubespray writes no evictionHard", () => {
    for (const empty of [undefined, null, '', {}])
      expect(evictionThresholds(empty, 'group_vars/all.yml:7 eviction_hard'), JSON.stringify(empty)).toEqual(
        known({ thresholds: DEFAULTS, from: "kubelet's defaults (group_vars/all.yml:7 eviction_hard is empty, so kubespray writes no evictionHard)" }),
      );
  });
  it('a mapping keeps only the disk signals, each value as text; the memory and pid signals are not disk signals', () => {
    expect(evictionThresholds({ 'memory.available': '100Mi', 'nodefs.inodesFree': 3, 'imagefs.available': '20%', 'pid.available': '10%' }, 'e')).toEqual(
      known({ thresholds: { 'nodefs.inodesFree': '3', 'imagefs.available': '20%' }, from: "kubespray's e" }),
    );
    // A mapping naming no disk signal leaves every disk signal without a threshold (kubelet does not fill in defaults then).
    expect(evictionThresholds({ 'memory.available': '100Mi' }, 'e')).toEqual(known({ thresholds: {}, from: "kubespray's e" }));
  });
  it('a string, a number, a list or a boolean is not a mapping: not known, naming where and the value', () => {
    expect(evictionThresholds('nodefs.available<1Gi', 'x:2 eviction_hard')).toEqual(notKnown('x:2 eviction_hard is "nodefs.available<1Gi", not a mapping'));
    expect(evictionThresholds(0, 'x:2 eviction_hard')).toEqual(notKnown('x:2 eviction_hard is 0, not a mapping'));
    expect(evictionThresholds(true, 'x')).toEqual(notKnown('x is true, not a mapping'));
    expect(evictionThresholds([], 'x')).toEqual(notKnown('x is [], not a mapping'));
  });
});

describe('thresholdAmount: a threshold against the total', () => {
  it('thresholds as kubelet reads them: a percentage of the total, or a resource.Quantity; anything else is not judged', () => {
    expect([
      thresholdAmount('10%', 1000),
      thresholdAmount('500Mi', 0),
      thresholdAmount('2G', 0),
      thresholdAmount('1000', 0),
      thresholdAmount('1.5Ki', 0),
    ]).toEqual([100, 500 * 2 ** 20, 2e9, 1000, 1536]);
    expect([thresholdAmount('ten', 1), thresholdAmount('101%', 1), thresholdAmount('%', 1), thresholdAmount('1Zi', 1), thresholdAmount('', 1)]).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
  });
  it('the boundaries of a percentage: 0 % and 100 % are amounts, a negative one is not; spaces around are ignored', () => {
    expect([thresholdAmount('0%', 500), thresholdAmount('100%', 500), thresholdAmount(' 50% ', 500), thresholdAmount('-1%', 500)]).toEqual([0, 500, 250, null]);
  });
  it('every suffix of resource.Quantity, binary and decimal, and what is none (an upper-case K, a negative amount, no number, a space before the suffix: resource.ParseQuantity refuses each)', () => {
    expect(['1Ki', '1Mi', '1Gi', '1Ti', '1Pi', '1Ei'].map((q) => thresholdAmount(q, 0))).toEqual([
      1024, 1048576, 1073741824, 1099511627776, 1125899906842624, 1152921504606846976,
    ]);
    expect(['1k', '1M', '1G', '1T', '1P', '1E'].map((q) => thresholdAmount(q, 0))).toEqual([1000, 1e6, 1e9, 1e12, 1e15, 1e18]);
    expect([thresholdAmount('1K', 0), thresholdAmount('-1Gi', 0), thresholdAmount('Gi', 0), thresholdAmount('1 Gi', 0)]).toEqual([null, null, null, null]);
  });
});
