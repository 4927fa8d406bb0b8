// ModulesLoad's promise kind (promises.ts): one promise per module, worded
// "NAME loaded", judged against the /sys/module entries a tier with a kernel
// of its own recorded.
import { describe, expect, it } from 'vitest';
import { MODULE_KIND, modulePromise } from '../../../src/resources/modules-load/promises.js';
import type { Promised } from '../../../src/promises.js';

const p: Promised = { id: modulePromise('br_netfilter'), kind: 'module', subject: 'br_netfilter', expect: 'loaded' };

describe('the module promise', () => {
  it('is named and worded by its module', () => {
    expect(modulePromise('overlay')).toBe('module:overlay');
    expect(MODULE_KIND.describe(p)).toBe('br_netfilter loaded');
  });

  it('holds only when the module is seen loaded', () => {
    expect(MODULE_KIND.judge(p, { modules: { br_netfilter: true } })).toBeNull();
    expect(MODULE_KIND.judge(p, { modules: { br_netfilter: false } })).toBe('br_netfilter not loaded (no /sys/module entry)');
    expect(MODULE_KIND.judge(p, { modules: { overlay: true } })).toBe('br_netfilter unread');
    expect(MODULE_KIND.judge({ ...p, subject: 'toString' }, { modules: {} })).toBe('toString unread');
  });

  it('a tier that records no modules (a container) has nothing to judge', () => {
    expect(MODULE_KIND.judge(p, { sysctl: {} })).toBeNull();
  });
});
