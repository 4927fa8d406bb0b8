import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseDesiredState, readDesiredStateFile } from '../../src/reconcile/load.js';
import { InputError } from '../../src/errors.js';
import { errorsOf as errorsOfFile } from '../helpers/desired-state-errors.js';

const good = readFileSync(new URL('../../desired-state.yaml', import.meta.url), 'utf8');
const F = 'desired-state.yaml';

function lineOf(text: string, needle: string): number {
  const i = text.indexOf(needle);
  if (i < 0) throw new Error(`fixture lost ${needle}`);
  return text.slice(0, i).split('\n').length;
}

const errorsOf = (text: string): string[] => errorsOfFile(text, F);

describe('desired-state.yaml', () => {
  it('the default file is valid and gets the lab values', () => {
    const d = parseDesiredState(good, F);
    expect(d.reports_dir).toBe('/root/ks/preflight');
    expect(d.kubespray).toEqual({ dir: '/opt/ks/kubespray', inventory: '/root/ks/inventory/lab/inventory.ini', node: 'node1' });
    expect(d.resources.map((r) => r.type)).toEqual(['SwapOff', 'ModulesLoad', 'SysctlFile', 'PortFree']);
    const ports = d.resources.find((r) => r.type === 'PortFree');
    expect(ports).toMatchObject({ ports: [2379, 2380, 6443, 10250, 10257, 10259], disable_units: [] });
  });

  it('fills schema defaults for omitted keys', () => {
    const d = parseDesiredState('reports_dir: /r\nresources:\n  - type: SwapOff\n  - type: ModulesLoad\n  - type: SysctlFile\n  - type: PortFree\n', F);
    expect(d.facts).toEqual({ source: 'native' });
    expect(d.resources[0]).toEqual({ type: 'SwapOff', mask_swap_target: true, remove_swap_files: false });
    expect(d.resources[1]).toEqual({ type: 'ModulesLoad', file: '/etc/modules-load.d/k8s.conf', modules: ['overlay', 'br_netfilter'] });
    expect(d.resources[2]).toMatchObject({ file: '/etc/sysctl.d/k8s.conf', conflict_policy: 'resolve', settings: { 'net.ipv4.ip_forward': 1 } });
    expect(d.resources[3]).toMatchObject({ ports: [2379, 2380, 6443, 10250, 10257, 10259], timeout_seconds: 30, mask: 'auto', stop_spawner_units: [] });
  });

  // Each malformed document must give its own message with file:line:column and the key's path.
  const cases: Array<{ name: string; text: string; expected: (t: string) => string }> = [
    {
      name: 'port out of range',
      text: good.replace('ports: [2379,', 'ports: [0,'),
      expected: (t) => `${F}:${lineOf(t, 'ports: [0')}:13 resources[3].ports[0]: must be an integer 1..65535`,
    },
    {
      name: 'port that is not a number',
      text: good.replace('6443, 10250', '6443, http'),
      expected: (t) => `${F}:${lineOf(t, 'http')}:31 resources[3].ports[3]: must be an integer 1..65535`,
    },
    {
      name: 'mask other than true, false or auto',
      text: good.replace('    mask: auto', '    mask: sometimes'),
      expected: (t) => `${F}:${lineOf(t, 'mask: sometimes')}:11 resources[3].mask: must be one of true, false, "auto"`,
    },
    {
      name: 'unknown key in a resource',
      text: good.replace('    mask: auto', '    mask: auto\n    colour: red'),
      expected: (t) =>
        `${F}:${lineOf(t, 'colour')}:5 resources[3].colour: unknown key (allowed: type, name, ports, protected_units, stop_spawner_units, mask, stop_shared_holders, stop_containers, timeout_seconds, disable_units)`,
    },
    {
      name: 'unknown top-level key',
      text: good + 'verbose: true\n',
      expected: (t) =>
        `${F}:${lineOf(t, 'verbose')}:1 verbose: unknown key (allowed: reports_dir, reports_mode, kubespray, facts, first_boot, accept, resources)`,
    },
    {
      name: 'unknown resource type',
      text: good.replace('type: SwapOff', 'type: SwapOf'),
      expected: (t) => `${F}:${lineOf(t, 'SwapOf')}:11 resources[0].type: must be one of "SwapOff", "SysctlFile", "ModulesLoad", "PortFree", "PreviousCluster"`,
    },
    {
      name: 'relative reports_dir',
      text: good.replace('reports_dir: /root/ks/preflight', 'reports_dir: root/ks'),
      expected: (t) => `${F}:${lineOf(t, 'reports_dir')}:14 reports_dir: must be an absolute path without '..'`,
    },
    {
      name: 'bad conflict policy',
      text: good.replace('conflict_policy: resolve', 'conflict_policy: ignore'),
      expected: (t) => `${F}:${lineOf(t, 'conflict_policy')}:22 resources[2].conflict_policy: must be one of "resolve", "fail"`,
    },
    {
      name: 'sysctl value that is a list',
      text: good.replace('net.ipv4.ip_forward: 1', 'net.ipv4.ip_forward: [1]'),
      expected: (t) => `${F}:${lineOf(t, 'net.ipv4.ip_forward')}:28 resources[2].settings["net.ipv4.ip_forward"]: must be an integer or a string`,
    },
    {
      name: 'missing kubespray node',
      text: good.replace('  node: node1\n', ''),
      expected: (t) => `${F}:${lineOf(t, '  dir: /opt')}:3 kubespray: missing required key "node"`,
    },
    {
      name: 'module name with a space',
      text: good.replace('modules: [overlay, br_netfilter]', 'modules: [overlay, "br netfilter"]'),
      expected: (t) => `${F}:${lineOf(t, 'br netfilter')}:24 resources[1].modules[1]: must be a module name (letters, digits, '_' and '-')`,
    },
    {
      name: 'timeout as a string',
      text: good.replace('timeout_seconds: 30', 'timeout_seconds: "30"'),
      expected: (t) => `${F}:${lineOf(t, 'timeout_seconds')}:22 resources[3].timeout_seconds: must be an integer`,
    },
    {
      name: 'stop_spawner_units with a pattern',
      text: good.replace('stop_spawner_units: []', 'stop_spawner_units: [cron*]'),
      expected: (t) => `${F}:${lineOf(t, 'cron*')}:26 resources[3].stop_spawner_units[0]: must be an exact service name (NAME.service, no patterns)`,
    },
    {
      name: 'sysctl file outside /etc/sysctl.d',
      text: good.replace('file: /etc/sysctl.d/k8s.conf', 'file: /etc/sysctl.conf'),
      expected: (t) => `${F}:${lineOf(t, 'file: /etc/sysctl.conf')}:11 resources[2].file: must be a file /etc/sysctl.d/NAME.conf`,
    },
    {
      name: 'duplicate resource',
      text: good + '\n  - type: SwapOff\n',
      expected: (t) => `${F}:${t.split('\n').length - 1}:5 resources[4]: duplicates resources[0] (same type); give one of them a distinct name or merge them`,
    },
    {
      name: 'a resource without a type',
      text: good.replace('  - type: SwapOff\n    mask_swap_target', '  - mask_swap_target'),
      expected: (t) => `${F}:${lineOf(t, '  - mask_swap_target')}:5 resources[0]: missing required key "type"`,
    },
    {
      name: 'YAML syntax error',
      text: 'reports_dir: /r\nresources: [\n',
      expected: () => `${F}:3:1 Flow sequence in block collection must be sufficiently indented and end with a ]`,
    },
    {
      name: 'duplicate key',
      text: 'reports_dir: /a\nreports_dir: /b\nresources: []\n',
      expected: () => `${F}:2:1 Map keys must be unique`,
    },
    {
      name: 'empty document',
      text: '# nothing\n',
      expected: () => `${F}:1:1 the document is empty; expected a mapping with reports_dir and resources`,
    },
  ];

  for (const c of cases) {
    it(`rejects: ${c.name}`, () => {
      const errors = errorsOf(c.text);
      expect(errors).toContain(c.expected(c.text));
    });
  }

  it('gives every malformed case a distinct message', () => {
    const first = cases.map((c) => errorsOf(c.text)[0]);
    expect(new Set(first).size).toBe(cases.length);
  });

  it('reports several problems at once, in file order', () => {
    const t = good.replace('ports: [2379,', 'ports: [0,').replace('type: SwapOff', 'type: Nope');
    const errors = errorsOf(t);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/resources\[0\]\.type/);
    expect(errors[1]).toMatch(/resources\[3\]\.ports\[0\]/);
  });
});
