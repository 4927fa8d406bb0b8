// TimeSync: not a kubeadm check; a warning when no time client runs or starts at boot.
import { describe, expect, it } from 'vitest';
import { timeSyncCheck } from '../../src/acceptance/time-sync.js';
import { known, notKnown } from '../../src/acceptance/checker.js';
import { passingFacts as facts } from '../helpers/acceptance-facts.js';

describe('TimeSync: not a kubeadm check; a warning when no time client runs', () => {
  const clients = (c: { unit: string; runs: boolean; how: string }[], container: string | null = null) => facts({ timeSync: known({ container, clients: c }) });
  const WORDS =
    'no time synchronisation: none of chrony.service, systemd-timesyncd.service, ntpsec.service, ntp.service, openntpd.service runs or starts at boot';

  it('marked as ours, with what breaks, and named by the check-name grammar', () => {
    expect(timeSyncCheck.breaksLater).toMatch(/etcd/);
    expect(timeSyncCheck.name).toMatch(/^[A-Za-z][A-Za-z0-9._-]*$/);
  });
  it('none installed: a warning saying so; an installed one that does not run is named with why', () => {
    expect(timeSyncCheck.check(clients([]))).toEqual({ warnings: [`${WORDS} (none is installed)`], errors: [] });
    expect(timeSyncCheck.check(clients([{ unit: 'chrony.service', runs: false, how: 'masked' }]))).toEqual({
      warnings: [`${WORDS} (chrony.service: masked)`],
      errors: [],
    });
  });
  it('any one client that runs passes, whichever it is', () => {
    const off = { unit: 'systemd-timesyncd.service', runs: false, how: 'does not start at boot; systemctl: inactive' };
    expect(timeSyncCheck.check(clients([off, { unit: 'chrony.service', runs: true, how: 'starts at boot' }]))).toEqual({ warnings: [], errors: [] });
  });
  it("a container is not warned: its clock is the host kernel's", () => {
    expect(timeSyncCheck.check(clients([], '/run/systemd/container: "systemd-nspawn"'))).toEqual({ warnings: [], errors: [] });
  });
  it('unit files that cannot be read: skipped with the reason', () => {
    expect(timeSyncCheck.check(facts({ timeSync: notKnown('the unit files cannot be read: EACCES') }))).toEqual({
      skipped: 'the unit files cannot be read: EACCES',
    });
  });
});
