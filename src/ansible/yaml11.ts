// YAML as Ansible reads playbooks, roles, inventories and vars files: YAML 1.1
// through PyYAML's resolver (ansible.parsing.yaml.loader.AnsibleLoader is
// PyYAML's Parser + Resolver with a SafeConstructor). The `yaml` package's own
// 1.1 schema is close but not the same: it takes y/n as booleans, `09` as an
// int and `1e3` as a float, where PyYAML keeps all three strings. So the plain
// scalar types here are PyYAML's implicit resolvers, regex for regex, and its
// SafeConstructor's conversions.
import { LineCounter, parseDocument } from 'yaml';
import type { ParseOptions, DocumentOptions, SchemaOptions, Tags } from 'yaml';

type ScalarTag = Extract<Tags[number], { test?: RegExp }>;

// yaml/resolver.py (PyYAML 6), Resolver.add_implicit_resolver: the same patterns.
const BOOL_TRUE = /^(?:yes|Yes|YES|true|True|TRUE|on|On|ON)$/;
const BOOL_FALSE = /^(?:no|No|NO|false|False|FALSE|off|Off|OFF)$/;
const NULL = /^(?:~|null|Null|NULL|)$/;
const INT = /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/;
const FLOAT =
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

/** SafeConstructor.construct_yaml_bool (an explicit `!!bool` tag reaches it with any case). */
function pyYamlBool(text: string, onError: (msg: string) => void): boolean {
  const v = text.toLowerCase();
  if (['yes', 'true', 'on'].includes(v)) return true;
  if (!['no', 'false', 'off'].includes(v)) onError(`not a YAML 1.1 boolean: ${text}`);
  return false;
}

/** SafeConstructor.construct_yaml_int */
export function pyYamlInt(text: string): number {
  let v = text.replace(/_/g, '');
  let sign = 1;
  if (v[0] === '-') sign = -1;
  if (v[0] === '-' || v[0] === '+') v = v.slice(1);
  if (v === '0') return 0;
  if (v.startsWith('0b')) return sign * parseInt(v.slice(2), 2);
  if (v.startsWith('0x')) return sign * parseInt(v.slice(2), 16);
  if (v[0] === '0') return sign * parseInt(v, 8);
  if (v.includes(':')) return sign * sexagesimal(v);
  return sign * parseInt(v, 10);
}

/** SafeConstructor.construct_yaml_float */
export function pyYamlFloat(text: string): number {
  let v = text.replace(/_/g, '').toLowerCase();
  let sign = 1;
  if (v[0] === '-') sign = -1;
  if (v[0] === '-' || v[0] === '+') v = v.slice(1);
  if (v === '.inf') return sign * Infinity;
  if (v === '.nan') return NaN;
  if (v.includes(':')) return sign * sexagesimal(v);
  return sign * Number(v);
}

function sexagesimal(v: string): number {
  // "1:30:05" is ((1*60)+30)*60+5: digits read from the right in base 60.
  const parts = v.split(':').map(Number).reverse();
  let base = 1;
  let out = 0;
  for (const p of parts) {
    out += p * base;
    base *= 60;
  }
  return out;
}

const PYYAML_SCALARS: ScalarTag[] = [
  { tag: 'tag:yaml.org,2002:null', default: true, test: NULL, resolve: () => null, identify: (v) => v === null || v === undefined },
  { tag: 'tag:yaml.org,2002:bool', default: true, test: BOOL_TRUE, resolve: pyYamlBool, identify: (v) => v === true },
  { tag: 'tag:yaml.org,2002:bool', default: true, test: BOOL_FALSE, resolve: pyYamlBool, identify: (v) => v === false },
  { tag: 'tag:yaml.org,2002:int', default: true, test: INT, resolve: (s: string) => pyYamlInt(s), identify: (v) => Number.isInteger(v) },
  { tag: 'tag:yaml.org,2002:float', default: true, test: FLOAT, resolve: (s: string) => pyYamlFloat(s), identify: (v) => typeof v === 'number' },
];
const REPLACED = new Set(['tag:yaml.org,2002:null', 'tag:yaml.org,2002:bool', 'tag:yaml.org,2002:int', 'tag:yaml.org,2002:float']);

/** Options for `yaml` that read a file as ansible-core does (YAML 1.1, PyYAML's scalar types). */
export const ANSIBLE_YAML: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.1',
  merge: true,
  uniqueKeys: false,
  customTags: (tags: Tags) => [...PYYAML_SCALARS, ...tags.filter((t) => !(typeof t === 'object' && 'tag' in t && REPLACED.has(t.tag) && 'test' in t))],
};

/** One Ansible YAML file with positions (`%YAML` directives in the text still win). */
export function parseAnsibleYaml(text: string, lineCounter?: LineCounter): ReturnType<typeof parseDocument> {
  return parseDocument(text, { ...ANSIBLE_YAML, ...(lineCounter ? { lineCounter } : {}) });
}
