// The first-boot unit (first-boot/unit.ts), loaded by systemd's own loader
// (`systemd --test` over a temp tree, test/helpers/systemd-oracle.ts): it is
// pulled into the boot transaction by its .wants link, ordered after the
// modules, sysctls, the network and the candidates the bake found, before
// every container runtime and kubelet, runs once (the stamp), and its
// ExecStart= words reach the program as they were given. systemd expands
// "%%" to "%" as it loads the unit and keeps "$$" until it runs the command
// (systemd.service(5), "Command lines"), so its dump shows "\$\$" for a
// word's one "$"; the dump quotes a word as shell_maybe_quote does.
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { FIRST_BOOT_UNIT, RUNTIMES, STAMP, UNIT_PATH, WANTS_LINK, firstBootUnit } from '../../../src/resources/first-boot/unit.js';
import { oracle, unitTree } from '../../helpers/systemd-oracle.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

async function loaded(text: string) {
  const root = unitTree(roots, 'first-boot-unit-', {
    [UNIT_PATH.slice(1)]: text,
    [WANTS_LINK.slice(1)]: { link: `../${FIRST_BOOT_UNIT}` },
    'usr/lib/systemd/system/api.service': '[Service]\nExecStart=/bin/true\n',
  });
  const o = await oracle(root);
  const u = o.units.get(FIRST_BOOT_UNIT);
  if (!u) throw new Error('systemd did not load the unit');
  const line = (prefix: string) => u.lines.filter((l) => l.startsWith(prefix));
  return { o, u, line };
}

describe('firstBootUnit, as systemd loads it', () => {
  it('starts at boot by its .wants link, once, ordered between the host setup and the runtimes', async () => {
    const { o, u, line } = await loaded(firstBootUnit({ exec: ['/usr/bin/k8s-host-reconcile'], after: ['api.service'], timeoutSec: 900 }));
    expect(u.load).toBe('loaded');
    expect(o.jobs.has(FIRST_BOOT_UNIT)).toBe(true);
    expect(u.deps.get('WantedBy')).toEqual(['multi-user.target']);
    expect(
      line('After: ')
        .filter((l) => l.endsWith('(origin-file)'))
        .map((l) => l.split(' ')[1])
        .sort(),
    ).toEqual(
      [
        'api.service',
        'local-fs.target',
        'network.target',
        'system.slice',
        'systemd-journald.socket',
        'systemd-modules-load.service',
        'systemd-sysctl.service',
      ].sort(),
    );
    expect(
      line('Before: ')
        .filter((l) => l.endsWith('(origin-file)'))
        .map((l) => l.split(' ')[1])
        .sort(),
    ).toEqual([...RUNTIMES].sort());
    // The candidates are ordered after, never pulled in: a unit the bake found may be one the first boot disables.
    expect(u.deps.get('Wants') ?? []).not.toContain('api.service');
    expect(line('ConditionPathExists: ')).toEqual([`ConditionPathExists: !${STAMP} untested`]);
    expect(line('Type: ')).toEqual(['Type: oneshot']);
    expect(line('RemainAfterExit: ')).toEqual(['RemainAfterExit: yes']);
    expect(line('TimeoutStartSec: ')).toEqual(['TimeoutStartSec: 15min']);
    expect(line('Environment: ')).toEqual(['Environment: NO_COLOR=1']);
    expect(line('\tCommand Line: ')).toEqual(['\tCommand Line: /usr/bin/k8s-host-reconcile --first-boot -f /etc/k8s-host-reconcile/desired-state.yaml']);
  });

  it('ExecStart= words with blanks, quotes, backslashes, "%" and "$" reach the program unchanged', async () => {
    const { line } = await loaded(firstBootUnit({ exec: ['/usr/bin/node', '/opt/my dir/re$conc%ile.mjs', 'a"b', 'c\\d', "it's"], after: [], timeoutSec: 60 }));
    expect(line('\tCommand Line: ')).toEqual([
      `\tCommand Line: /usr/bin/node "/opt/my dir/re\\$\\$conc%ile.mjs" "a\\"b" "c\\\\d" "it's" --first-boot -f /etc/k8s-host-reconcile/desired-state.yaml`,
    ]);
    expect(line('TimeoutStartSec: ')).toEqual(['TimeoutStartSec: 1min']);
  });

  it('without candidates it is ordered after the host setup alone', async () => {
    const { line } = await loaded(firstBootUnit({ exec: ['/usr/bin/k8s-host-reconcile'], after: [], timeoutSec: 90 }));
    expect(line('After: ').map((l) => l.split(' ')[1])).not.toContain('api.service');
    expect(line('After: ').map((l) => l.split(' ')[1])).toContain('systemd-sysctl.service');
  });
});
