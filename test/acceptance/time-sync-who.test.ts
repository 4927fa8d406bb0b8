// Who makes time sync run: kubespray when ntp_enabled is true for this node
// (roles/kubernetes/preinstall/defaults/main.yml, false by default in v2.20 and
// v2.24) and its preinstall tasks import 0081-ntp-configurations.yml; the
// operator when it is false; unknown otherwise. On fixture checkouts in
// kubespray's layout, the variables read as for any task of the role.
import { describe, expect, it } from 'vitest';
import { timeSyncWhoFixes } from '../../src/acceptance/time-sync-who.js';
import { fixtureNode } from '../helpers/kubespray-fixture.js';

const DEFAULTS = 'roles/kubernetes/preinstall/defaults/main.yml';
const TASKS = 'roles/kubernetes/preinstall/tasks/main.yml';
const IMPORTS =
  '---\n- name: Packages\n  import_tasks: 0070-system-packages.yml\n\n- name: NTP\n  import_tasks: 0081-ntp-configurations.yml\n  when: ntp_enabled\n';

const node = (files: Record<string, string>) => fixtureNode(files);

describe('timeSyncWhoFixes', () => {
  it("ntp_enabled false (kubespray's default): the operator, with the default's line", async () => {
    const r = await timeSyncWhoFixes(await node({ [DEFAULTS]: '---\n# NTP\nntp_enabled: false\n', [TASKS]: IMPORTS }));
    expect(r).toEqual({
      who: 'operator',
      says: 'kubespray configures no time client (ntp_enabled is false): install and enable one (chrony, systemd-timesyncd), or set ntp_enabled: true in the inventory',
      evidence: [`${DEFAULTS}:3 ntp_enabled`],
    });
  });
  it('ntp_enabled true, templated or not, and the import task there: kubespray, citing both lines', async () => {
    for (const value of ['true', '"{{ 1 == 1 }}"']) {
      const r = await timeSyncWhoFixes(await node({ [DEFAULTS]: `ntp_enabled: ${value}\n`, [TASKS]: IMPORTS }));
      expect(r, value).toEqual({
        who: 'kubespray',
        says: 'kubespray installs, configures and starts an NTP client (ntp_enabled is true)',
        evidence: [`${DEFAULTS}:1 ntp_enabled`, `${TASKS}:5 0081-ntp-configurations.yml`],
      });
    }
  });
  it('unknown, never a guess: true without the import task, a value that is no boolean, the variable not defined', async () => {
    const noImport = await timeSyncWhoFixes(await node({ [DEFAULTS]: 'ntp_enabled: true\n', [TASKS]: '---\n- name: x\n  debug: msg=x\n' }));
    expect(noImport).toEqual({
      who: 'unknown',
      says: `whether kubespray configures a time client cannot be evaluated: ntp_enabled is true (${DEFAULTS}:1 ntp_enabled), but ${TASKS} has no task importing 0081-ntp-configurations.yml`,
      evidence: [],
    });
    const text = await timeSyncWhoFixes(await node({ [DEFAULTS]: 'ntp_enabled: "yes please"\n', [TASKS]: IMPORTS }));
    expect(text.who).toBe('unknown');
    expect(text.says).toContain(`${DEFAULTS}:1 ntp_enabled is "yes please", not a boolean`);
    const none = await timeSyncWhoFixes(await node({ [DEFAULTS]: 'other: 1\n', [TASKS]: IMPORTS }));
    expect(none.says).toBe('whether kubespray configures a time client cannot be evaluated: ntp_enabled is not defined for kubernetes/preinstall');
  });
});
