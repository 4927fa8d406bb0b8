// The provider registry (index.ts): the shipped types, and which of them a
// desired state may name (every provider but those the engine derives).
import { describe, expect, it } from 'vitest';
import { PROVIDERS, desiredTypes, type AnyProvider } from '../../src/resources/index.js';

describe('the registry', () => {
  it('ships seven providers, each under its own type, frozen', () => {
    expect(Object.keys(PROVIDERS)).toEqual(['SwapOff', 'SysctlFile', 'ModulesLoad', 'PortFree', 'PreviousCluster', 'FirstBoot', 'BootWatch']);
    for (const [type, p] of Object.entries(PROVIDERS)) expect(p.type).toBe(type);
    expect(Object.isFrozen(PROVIDERS)).toBe(true);
  });

  it('desiredTypes: the types a desired state may name; FirstBoot and BootWatch are derived from the run', () => {
    expect(desiredTypes()).toEqual(['SwapOff', 'SysctlFile', 'ModulesLoad', 'PortFree', 'PreviousCluster']);
    const p = (derive: boolean) => ({ type: 'X', ...(derive ? { derive: () => null } : {}) }) as unknown as AnyProvider;
    expect(desiredTypes({ B: p(false), D: p(true), A: p(false) })).toEqual(['B', 'A']);
    expect(desiredTypes({})).toEqual([]);
  });
});
