// What the operator reads for each kind of schema violation, checked as the
// whole list of messages (not "contains"): one message per key, at the key
// itself for an unknown or malformed key name and at the value otherwise,
// worded from the schema's own x-message where it has one
// (schema/desired-state.schema.json) and from the JSON type names otherwise.
// Each document here has exactly one thing wrong, so the expected list is the
// one message the desired-state reference (docs/desired-state.md) promises for it.
import { describe, expect, it } from 'vitest';
import { parseDesiredState } from '../../src/reconcile/load.js';
import { humanPath, validateAgainstSchema } from '../../src/reconcile/validate.js';
import { InputError } from '../../src/errors.js';
import { errorsOf as errorsOfFile } from '../helpers/desired-state-errors.js';

const F = 'ds.yaml';

const errorsOf = (text: string): string[] => errorsOfFile(text, F);

const head = 'reports_dir: /r\nresources:\n';

describe('one message per violation, at file:line:col of the key or value', () => {
  const cases: Array<[string, string, string[]]> = [
    // Types: the article follows the type name (an object, an array, a boolean, an integer).
    ['resources that is a mapping', 'reports_dir: /r\nresources: {}\n', [`${F}:2:12 resources: must be an array`]],
    ['a document that is a list', '- a\n', [`${F}:1:1 must be an object`]],
    ['a resource that is a number', `${head}  - 5\n`, [`${F}:3:5 resources[0]: must be an object`]],
    ['a boolean given as text', `${head}  - type: SwapOff\n    mask_swap_target: yes please\n`, [`${F}:4:23 resources[0].mask_swap_target: must be a boolean`]],
    ['settings that is a list', `${head}  - type: SysctlFile\n    settings: []\n`, [`${F}:4:15 resources[0].settings: must be an object`]],
    ['ports that is one number', `${head}  - type: PortFree\n    ports: 6443\n`, [`${F}:4:12 resources[0].ports: must be an array`]],
    ['a fractional timeout', `${head}  - type: PortFree\n    timeout_seconds: 1.5\n`, [`${F}:4:22 resources[0].timeout_seconds: must be an integer`]],
    // A sysctl value is an integer or a string (anyOf), whatever else it is.
    [
      'a sysctl value that is a boolean',
      `${head}  - type: SysctlFile\n    settings:\n      net.ipv4.ip_forward: true\n`,
      [`${F}:5:28 resources[0].settings["net.ipv4.ip_forward"]: must be an integer or a string`],
    ],
    // x-message of the schema wins over ajv's generic wording, for the value's own keyword.
    [
      'a name that is not a label',
      `${head}  - type: PortFree\n    name: "a b"\n`,
      [`${F}:4:11 resources[0].name: must be a plain label: 1 to 63 of letters, digits, '_', '.' and '-'`],
    ],
    [
      'reports_dir that is a number',
      'reports_dir: 5\nresources: []\n',
      [`${F}:1:14 reports_dir: must be an absolute path without '..', and not a system directory`],
    ],
    ['first_boot outside its enum', 'reports_dir: /r\nfirst_boot: maybe\nresources: []\n', [`${F}:2:13 first_boot: must be one of "apply", "verify", "off"`]],
    // Unknown keys point at the key; a key that is not an identifier is quoted, with its JSON-pointer escapes undone.
    [
      'an unknown key with / and ~',
      `${head}  - type: SwapOff\n    "a/b~c": 1\n`,
      [`${F}:4:5 resources[0]["a/b~c"]: unknown key (allowed: type, name, mask_swap_target, remove_swap_files, neutralise_scripts)`],
    ],
    ['an unknown key under facts', 'reports_dir: /r\nfacts:\n  source: ansible\n  x: 1\nresources: []\n', [`${F}:4:3 facts.x: unknown key (allowed: source)`]],
    ['a missing reports_dir', 'resources: []\n', [`${F}:1:1 missing required key "reports_dir"`]],
    ['an empty document', 'null\n', [`${F}:1:1 the document is empty; expected a mapping with reports_dir and resources`]],
  ];
  for (const [name, text, expected] of cases) {
    it(name, () => expect(errorsOf(text)).toEqual(expected));
  }

  it('a sysctl key with slashes is named in brackets, as written', () => {
    expect(errorsOf(`${head}  - type: SysctlFile\n    settings:\n      net/ipv4/ip_forward: [1]\n`)).toEqual([
      `${F}:5:28 resources[0].settings["net/ipv4/ip_forward"]: must be an integer or a string`,
    ]);
  });

  it('a key name the schema refuses is reported at the key, not at its value', () => {
    // '=' cannot be in a sysctl key (sysctl.d splits the line there); one message for it.
    const errors = errorsOf(`${head}  - type: SysctlFile\n    settings:\n      "a=b": 1\n`);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^${F}:5:7 resources\\[0\\]\\.settings\\["a=b"\\]: `));
  });

  it('several violations in one resource each get their own message', () => {
    expect(errorsOf(`${head}  - type: PortFree\n    timeout_seconds: 0\n    mask: sometimes\n`)).toEqual([
      `${F}:4:22 resources[0].timeout_seconds: must be >= 1`,
      `${F}:5:11 resources[0].mask: must be one of true, false, "auto"`,
    ]);
  });
});

describe('validateAgainstSchema on its own', () => {
  it('fills the defaults into the data it was given and reports nothing', () => {
    const data: Record<string, unknown> = { reports_dir: '/r', resources: [{ type: 'SwapOff' }] };
    expect(validateAgainstSchema(data)).toEqual([]);
    expect(data.facts).toEqual({ source: 'native' });
    expect(data.first_boot).toBe('apply');
    expect(data.resources).toEqual([{ type: 'SwapOff', mask_swap_target: true, remove_swap_files: false }]);
  });

  it('an undefined document is the empty one', () => {
    expect(validateAgainstSchema(undefined)).toEqual([
      { pointer: [], path: '', message: 'the document is empty; expected a mapping with reports_dir and resources', atKey: false },
    ]);
  });

  it('an unknown key carries its pointer and points at the key', () => {
    expect(validateAgainstSchema({ reports_dir: '/r', resources: [], 'x/y': 1 })).toEqual([
      {
        pointer: ['x/y'],
        path: '["x/y"]',
        message: 'unknown key (allowed: reports_dir, reports_mode, kubespray, facts, first_boot, accept, resources)',
        atKey: true,
      },
    ]);
  });

  it('a value error points at the value, with the pointer into the document', () => {
    expect(validateAgainstSchema({ reports_dir: '/r', resources: [{ type: 'PortFree', ports: [1, 70000] }] })).toEqual([
      { pointer: ['resources', '0', 'ports', '1'], path: 'resources[0].ports[1]', message: 'must be an integer 1..65535', atKey: false },
    ]);
  });

  it('a sysctl key the schema refuses is a key-name problem, at the key', () => {
    expect(validateAgainstSchema({ reports_dir: '/r', resources: [{ type: 'SysctlFile', settings: { 'a=b': 1 } }] })).toEqual([
      { pointer: ['resources', '0', 'settings', 'a=b'], path: 'resources[0].settings["a=b"]', message: 'is not a valid key name', atKey: true },
    ]);
  });

  it('an empty sysctl string fails both branches of integer-or-string: one summary, not the branch errors', () => {
    expect(validateAgainstSchema({ reports_dir: '/r', resources: [{ type: 'SysctlFile', settings: { 'a.b': '' } }] })).toEqual([
      { pointer: ['resources', '0', 'settings', 'a.b'], path: 'resources[0].settings["a.b"]', message: 'must be an integer or a string', atKey: false },
    ]);
  });

  it('a value wrong in two ways gets one message, the first: a fractional timeout below the minimum', () => {
    expect(validateAgainstSchema({ reports_dir: '/r', resources: [{ type: 'PortFree', timeout_seconds: 0.5 }] })).toEqual([
      { pointer: ['resources', '0', 'timeout_seconds'], path: 'resources[0].timeout_seconds', message: 'must be an integer', atKey: false },
    ]);
  });

  it("a sysctl key with '~' keeps it in the path of its value's error (JSON pointer ~0 undone)", () => {
    expect(validateAgainstSchema({ reports_dir: '/r', resources: [{ type: 'SysctlFile', settings: { 'a~b': true } }] })).toContainEqual({
      pointer: ['resources', '0', 'settings', 'a~b'],
      path: 'resources[0].settings["a~b"]',
      message: 'must be an integer or a string',
      atKey: false,
    });
  });

  it('a resource without a type is told the key it misses, once', () => {
    expect(validateAgainstSchema({ reports_dir: '/r', resources: [{ mask: true }] })).toEqual([
      { pointer: ['resources', '0'], path: 'resources[0]', message: 'missing required key "type"', atKey: false },
    ]);
  });
});

describe('humanPath', () => {
  it('writes JSON-pointer segments the way docs/desired-state.md names keys', () => {
    expect(humanPath([])).toBe('');
    expect(humanPath(['resources', '2', 'ports', '0'])).toBe('resources[2].ports[0]');
    expect(humanPath(['facts', 'source'])).toBe('facts.source');
    expect(humanPath(['resources', '0', 'mask_swap-x9'])).toBe('resources[0].mask_swap-x9');
    expect(humanPath(['_a'])).toBe('_a');
    // Not an identifier: quoted in brackets, at the start as elsewhere.
    expect(humanPath(['9lives'])).toBe('["9lives"]');
    expect(humanPath(['resources', '0', 'settings', 'net.ipv4.ip_forward'])).toBe('resources[0].settings["net.ipv4.ip_forward"]');
    expect(humanPath(['a', '-b'])).toBe('a["-b"]');
    expect(humanPath(['a', 'b c'])).toBe('a["b c"]');
    expect(humanPath(['a', 'x1y'])).toBe('a.x1y');
    expect(humanPath(['a', '1x'])).toBe('a["1x"]');
    expect(humanPath(['resources', '12', 'modules', '3'])).toBe('resources[12].modules[3]');
  });
});
