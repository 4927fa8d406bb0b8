// How a unit's property is asked of a manager: the argument vector for the
// system manager or a user's, and systemctlValue's answers through a runner
// that records every call (no systemctl runs).
import { describe, expect, it } from 'vitest';
import { Host, type CommandRunner } from '../../src/host.js';
import { SYSTEM_SYSTEMCTL, systemctlArgv, systemctlValue } from '../../src/systemd/systemctl-show.js';

describe('systemctlArgv', () => {
  it("puts the manager's arguments before the verb, and copies them", () => {
    const via = { cmd: 'systemctl', args: ['--user', '-M', 'alice@'] };
    const [cmd, args] = systemctlArgv(via, ['show', 'x.service']);
    expect([cmd, args]).toEqual(['systemctl', ['--user', '-M', 'alice@', 'show', 'x.service']]);
    args.push('changed');
    expect(via.args).toEqual(['--user', '-M', 'alice@']);
    expect(systemctlArgv(SYSTEM_SYSTEMCTL, ['is-active', 'a.service'])).toEqual(['systemctl', ['is-active', 'a.service']]);
  });
});

describe('systemctlValue', () => {
  it('systemctlValue asks `systemctl [scope] show -p PROP --value UNIT` and trims; a failure or a missing systemctl is null', async () => {
    const calls: string[][] = [];
    const answers: Record<string, Awaited<ReturnType<CommandRunner>> | Error> = {
      'a.service': { command: 'systemctl', exitCode: 0, stdout: ' 100ms\n', stderr: '' },
      'b.service': { command: 'systemctl', exitCode: 1, stdout: 'ignored\n', stderr: 'Unit b.service could not be found.' },
      'c.service': new Error('spawn systemctl ENOENT'),
    };
    const runner: CommandRunner = async (cmd, args) => {
      calls.push([cmd, ...args]);
      const a = answers[args[args.length - 1]!]!;
      if (a instanceof Error) throw a;
      return a;
    };
    const host = new Host({ root: '/nonexistent-fixture', live: true, runner });
    expect(await systemctlValue(host, 'RestartUSec', 'a.service', { cmd: 'systemctl', args: ['--user', '-M', 'alice@'] })).toBe('100ms');
    expect(await systemctlValue(host, 'RestartUSec', 'b.service')).toBeNull();
    expect(await systemctlValue(host, 'MainPID', 'c.service')).toBeNull();
    expect(calls[0]).toEqual(['systemctl', '--user', '-M', 'alice@', 'show', '-p', 'RestartUSec', '--value', 'a.service']);
    expect(calls[1]).toEqual(['systemctl', 'show', '-p', 'RestartUSec', '--value', 'b.service']);
  });
});
