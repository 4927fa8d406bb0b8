// YAML 1.1 as ansible-core loads it (AnsibleLoader: PyYAML's resolver and
// SafeConstructor), asked of ansible-core itself through
// test/helpers/ansible-language.py; ours must give the same value.
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAnsibleYaml, pyYamlFloat, pyYamlInt } from '../../src/ansible/yaml11.js';
import { ask, shape, unfloat, type Answer } from '../helpers/ansible-language.js';

const SCALARS = [
  'yes',
  'Yes',
  'YES',
  'no',
  'No',
  'NO',
  'on',
  'On',
  'ON',
  'off',
  'Off',
  'OFF',
  'true',
  'True',
  'TRUE',
  'false',
  'False',
  'FALSE',
  'y',
  'Y',
  'n',
  'N',
  'yEs',
  'tRue',
  '~',
  'null',
  'Null',
  'NULL',
  'nULL',
  '',
  '0',
  '-0',
  '+12',
  '017',
  '-017',
  '0o17',
  '09',
  '0x1F',
  '0X1F',
  '0b101',
  '1_000',
  '1:30',
  '-1:30:05',
  '1:30.5',
  '1.5',
  '1.',
  '.5',
  '1e3',
  '1.0e3',
  '1.0e+3',
  '1.0E-2',
  '.inf',
  '-.Inf',
  '.NaN',
  '12.11',
  '1.20',
  '"yes"',
  "'no'",
  '!!str yes',
  '!!bool yes',
  'v1.29.5',
  '0.0.0.0',
  '10.233.0.0/18',
  '6443',
];

// Real kubespray variables rewritten the way users write them in group_vars (cited).
const GROUP_VARS_REWRITES = [
  // roles/kubespray_defaults/defaults/main/main.yml (v2.31.0): kubelet_fail_swap_on: true
  'kubelet_fail_swap_on: no',
  // roles/kubespray-defaults/defaults/main.yaml (v2.20.0): ignore_assert_errors: false
  'ignore_assert_errors: yes',
  // roles/kubernetes/preinstall/defaults/main.yml (v2.25.0): minimal_master_memory_mb: 1500
  'minimal_master_memory_mb: 0o4000',
];

describe('YAML 1.1 as ansible-core loads it', () => {
  let oracle: Answer[];
  beforeAll(async () => {
    oracle = await ask([
      ...SCALARS.map((s) => ({ op: 'yaml' as const, text: `k: ${s}\n` })),
      ...GROUP_VARS_REWRITES.map((text) => ({ op: 'yaml' as const, text })),
    ]);
  }, 60_000);
  it('ansible answered with booleans, nulls, ints, floats and strings among them', () => {
    const types = new Set(oracle.map((a) => (a.ok ? JSON.stringify((a.value as Record<string, unknown>).k ?? null)[0] : 'e')));
    expect(types.size).toBeGreaterThanOrEqual(4);
  });
  SCALARS.forEach((s, i) => {
    it(`k: ${s}`, () => {
      const doc = parseAnsibleYaml(`k: ${s}\n`);
      const a = oracle[i]!;
      expect(a.ok).toBe(true);
      expect(shape(doc.toJSON())).toEqual(unfloat((a as { value: unknown }).value));
    });
  });
  GROUP_VARS_REWRITES.forEach((text, i) => {
    it(`group_vars rewrite: ${text}`, () => {
      expect(shape(parseAnsibleYaml(text).toJSON())).toEqual(unfloat((oracle[SCALARS.length + i] as { value: unknown }).value));
    });
  });
});

describe('the scalar constructors alone', () => {
  it('ints: binary, octal with a leading 0, hex, underscores, base 60', () => {
    expect([pyYamlInt('0b101'), pyYamlInt('017'), pyYamlInt('-0x1F'), pyYamlInt('1_000'), pyYamlInt('-1:30:05'), pyYamlInt('0')]).toEqual([
      5, 15, -31, 1000, -5405, 0,
    ]);
  });
  it('floats: infinities, NaN, base 60, underscores', () => {
    expect(pyYamlFloat('-.Inf')).toBe(-Infinity);
    expect(pyYamlFloat('.NaN')).toBeNaN();
    expect(pyYamlFloat('1:30.5')).toBe(90.5);
    expect(pyYamlFloat('1_000.5')).toBe(1000.5);
  });
});
