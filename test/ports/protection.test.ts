// The units PortFree never stops: this program's own unit, the built-in list
// (the manager, the bus, what carries logins), protected_units, then the
// general-purpose spawners unless stop_spawner_units names them; unit-name
// patterns with * and ?, "ssh" also covering "ssh.service".
import { describe, expect, it } from 'vitest';
import { protectionOf, spawnerKind } from '../../src/ports/protection.js';

describe('protectionOf', () => {
  it('protected units: built-in list, desired-state list, and our own unit', () => {
    const spec = { protected_units: ['monitoring-*', 'keep.service'] };
    expect(protectionOf('init.scope', spec, null)).toContain('built-in');
    expect(protectionOf('systemd-resolved.service', spec, null)).toContain('systemd-*');
    expect(protectionOf('dbus.socket', spec, null)).toContain('built-in');
    expect(protectionOf('ssh.socket', spec, null)).toContain('built-in');
    expect(protectionOf('sshd.service', spec, null)).toContain('built-in');
    expect(protectionOf('monitoring-agent.service', spec, null)).toContain('protected_units');
    expect(protectionOf('keep.service', spec, null)).toContain('protected_units');
    expect(protectionOf('reconcile.service', spec, 'reconcile.service')).toContain('runs in');
    expect(protectionOf('agent.service', spec, 'reconcile.service')).toBeNull();
  });

  it('protected units grown with the spawners: logind and the gettys never; cron, atd, supervisors, runtimes, CI runners unless stop_spawner_units names them', () => {
    const spec = { protected_units: [], stop_spawner_units: ['cron.service', 'docker.service', 'getty@tty1.service'] };
    expect(protectionOf('systemd-logind.service', spec, null)).toContain('(systemd-logind): it keeps every login session');
    expect(protectionOf('getty@tty1.service', spec, null)).toContain('(getty@*): it carries console logins');
    expect(protectionOf('serial-getty@ttyS0.service', spec, null)).toContain('built-in list (serial-getty@*)');
    for (const u of [
      'atd.service',
      'anacron.service',
      'supervisor.service',
      'containerd.service',
      'gitlab-runner.service',
      'actions.runner.org-repo.host.service',
      'pm2-root.service',
    ]) {
      expect(protectionOf(u, spec, null), u).toContain('built-in list of spawners');
      expect(protectionOf(u, spec, null), u).toContain('stop_spawner_units');
    }
    expect(protectionOf('cron.service', { protected_units: [] }, null)).toContain('the cron daemon: it runs every cron job');
    expect(protectionOf('cron.service', spec, null)).toBeNull();
    expect(protectionOf('docker.service', spec, null)).toBeNull();
    // A person's protected_units wins over their own stop_spawner_units.
    expect(protectionOf('cron.service', { ...spec, protected_units: ['cron*'] }, null)).toContain('protected_units');
    expect(protectionOf('cronicle.service', spec, null)).toBeNull();
  });
  it('patterns are globs over the whole name: ? is one character, a dot is a dot, a prefix is not enough', () => {
    const spec = { protected_units: ['agent-?.service', 'a.b'] };
    expect(protectionOf('agent-1.service', spec, null)).toBe('agent-1.service is listed in protected_units (agent-?.service)');
    expect(protectionOf('agent-12.service', spec, null)).toBeNull();
    expect(protectionOf('aXb.service', spec, null)).toBeNull();
    expect(protectionOf('a.b.service', spec, null)).toContain('(a.b)');
    expect(protectionOf('my-sshd.service', {}, null)).toBeNull();
  });
  it('the built-in list wins over protected_units, and our own unit over both, with their own words', () => {
    expect(protectionOf('sshd.service', { protected_units: ['sshd*'] }, null)).toBe(
      'sshd.service is protected by the built-in list (ssh*): it carries every remote login (and, without logind, the processes started in them)',
    );
    expect(protectionOf('init.scope', {}, 'init.scope')).toBe('init.scope is the unit this program runs in');
    expect(protectionOf('-.slice', {}, null)).toBe('-.slice is protected by the built-in list (-.slice): it is the root of the unit tree');
  });
});

describe('spawnerKind', () => {
  it('names what a spawner is; any other unit is null', () => {
    expect(spawnerKind('cron.service')).toContain('cron daemon');
    expect(spawnerKind('cron')).toContain('cron daemon');
    expect(spawnerKind('nginx.service')).toBeNull();
    expect(spawnerKind('cronicle.service')).toBeNull();
  });
});
