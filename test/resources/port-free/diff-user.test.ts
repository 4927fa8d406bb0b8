// PortFree's diff for a port held inside a per-user manager (user@UID.service): placements read from
// /proc/PID/cgroup lines as systemd writes them, the unit facts as `systemctl --user show` answers.
// The expected sentences are written out by hand from the rules the plan promises: the holder must
// be the user unit's own process (MainPID) or its unit named in stop_spawner_units; a protected unit,
// an unknown account or an unread origin is an operator line; mask: auto masks only when something
// would start the unit again; the stop goes through `systemctl --user -M USER@`.
import { describe, expect, it } from 'vitest';
import { diffUserPort } from '../../../src/resources/port-free/diff-user.js';
import { parseCgroup } from '../../../src/systemd/cgroup.js';
import type { PortFreeSpec } from '../../../src/resources/port-free/spec.js';
import type { BusyPort, LivePortsObserved, PortHolder, UserUnitFacts } from '../../../src/ports/observed.js';
import type { UnitFacts } from '../../../src/ports/identity.js';
import type { ProcInfo } from '../../../src/ports/proc.js';
import type { UserAccount } from '../../../src/ports/user-manager.js';

const spec = (over: Partial<PortFreeSpec> = {}): PortFreeSpec =>
  ({ type: 'PortFree', ports: [6443], protected_units: [], stop_spawner_units: [], mask: 'auto', timeout_seconds: 10, ...over }) as PortFreeSpec;
const proc = (pid: number, ppid: number, comm: string, argv: string[]): ProcInfo => ({ pid, ppid, comm, argv, exe: argv[0]!, uid: 1000 }) as ProcInfo;
const API = proc(4242, 900, 'api', ['/home/alice/bin/api', '--port', '6443']);
const holder = (over: Partial<PortHolder> = {}): PortHolder => ({
  pid: 4242,
  comm: 'api',
  placement: parseCgroup('0::/user.slice/user-1000.slice/user@1000.service/app.slice/api.service\n'),
  ancestry: { chain: [API, proc(900, 1, 'systemd', ['/lib/systemd/systemd', '--user'])], complete: true },
  mainHoldsSocket: true,
  ...over,
});
const busy = (holders: PortHolder[]): BusyPort => ({ port: 6443, listeners: [], holders, activation: null });
const facts = (over: Partial<UnitFacts> = {}): UnitFacts => ({
  unit: 'api.service',
  error: null,
  mainPid: 4242,
  type: 'simple',
  pidFile: null,
  pidFilePid: null,
  pidFileError: null,
  execStart: [],
  execError: null,
  main: API,
  ...over,
});
const alice: UserAccount = { name: 'alice', uid: 1000, gid: 1000, home: '/home/alice', lingers: true };
const entry = (over: Partial<UserUnitFacts> = {}): UserUnitFacts => ({
  uid: 1000,
  unit: 'api.service',
  account: alice,
  route: 'bus',
  facts: facts(),
  comeback: { group: ['api.service'], reasons: [], unknown: null },
  ...over,
});
const observed = (e: UserUnitFacts | null): LivePortsObserved =>
  ({
    mode: 'live',
    busy: [],
    selfUnit: null,
    unreadablePids: 0,
    units: {},
    crontabs: null,
    uids: {},
    supervisor: null,
    ...(e ? { userUnits: { '1000:api.service': e } } : {}),
  }) as LivePortsObserved;
const HEAD = 'port 6443 (TCP) is listening';
const base = { port: 6443, unit: null, pid: 4242 };
const diff = (s: PortFreeSpec, e: UserUnitFacts | null, holders: PortHolder[] = [holder()]) => diffUserPort(s, observed(e), busy(holders), HEAD, base);

describe('diffUserPort: which ports are its to judge', () => {
  it('a holder in a system service, a container, outside any unit or unread is not a user port', () => {
    expect(diff(spec(), entry(), [holder({ placement: parseCgroup('0::/system.slice/nginx.service\n') })])).toBeNull();
    expect(diff(spec(), entry(), [holder({ placement: null })])).toBeNull();
    expect(diff(spec(), entry(), [])).toBeNull();
    // A user manager's own process, outside any user unit.
    expect(diff(spec(), entry(), [holder({ placement: parseCgroup('0::/user.slice/user-1000.slice/user@1000.service/init.scope\n') })])).toBeNull();
    // A user scope, not a service.
    expect(
      diff(spec(), entry(), [holder({ placement: parseCgroup('0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-foo.scope\n') })]),
    ).toBeNull();
  });

  it('holders in two different user services, or no facts read for the service: not judged here', () => {
    const other = holder({ pid: 5000, placement: parseCgroup('0::/user.slice/user-1000.slice/user@1000.service/app.slice/web.service\n') });
    expect(diff(spec(), entry(), [holder(), other])).toBeNull();
    expect(diff(spec(), null)).toBeNull();
  });
});

describe("diffUserPort: the user service's own process", () => {
  it('is stopped and disabled through the user bus, with the proof, the route and whether the manager starts at boot', () => {
    const c = diff(spec(), entry())!;
    expect(c.action).toBe('stop');
    expect(c.runtime).toBe(true);
    expect(c.summary).toBe(
      `${HEAD} held by pid 4242 (api) in user unit api.service of user@1000.service; ` +
        `pid 4242 is MainPID of api.service (alice's manager): stop and disable api.service through systemctl --user -M alice@; ` +
        `alice lingers (/var/lib/systemd/linger/alice exists), so alice's manager (user@1000.service) starts at boot`,
    );
    expect(c.op).toMatchObject({
      kind: 'stop',
      port: 6443,
      pid: 4242,
      comm: 'api',
      unit: 'api.service',
      units: ['api.service'],
      socket: null,
      mask: false,
      user: { name: 'alice', uid: 1000, gid: 1000, home: '/home/alice', lingers: true, route: 'bus' },
    });
    expect(c.op).not.toHaveProperty('comeback');
  });

  it('without a user bus the route is the manager socket, and a user who does not linger starts it at login only', () => {
    const c = diff(spec(), entry({ route: 'private', account: { ...alice, lingers: false } }))!;
    expect(c.summary).toContain(
      "through systemctl --user run as alice on alice's manager socket /run/user/1000/systemd/private (no user D-Bus); alice does not linger (no /var/lib/systemd/linger/alice), so alice's manager (user@1000.service) starts only when alice logs in",
    );
    expect(c.op).toMatchObject({ user: { route: 'private', lingers: false } });
  });

  it('mask: auto masks when the user tree would start it again, and says why', () => {
    const c = diff(spec(), entry({ comeback: { group: ['api.service'], reasons: ['api.service is wanted by default.target'], unknown: null } }))!;
    expect(c.summary).toContain('stop, disable and mask api.service through systemctl --user -M alice@ (api.service is wanted by default.target)');
    expect(c.op).toMatchObject({ mask: true, comeback: ['api.service is wanted by default.target'] });
  });

  it('mask: auto masks when the tree could not be read, naming it unknown', () => {
    const unread = diff(spec(), entry({ comeback: null }))!;
    expect(unread.summary).toContain('stop, disable and mask api.service through systemctl --user -M alice@ (unknown: the user unit tree was not read)');
    const partial = diff(spec(), entry({ comeback: { group: ['api.service'], reasons: [], unknown: 'default.target not found' } }))!;
    expect(partial.summary).toContain('(unknown: default.target not found)');
    expect(partial.op).toMatchObject({ mask: true });
  });

  it('mask: false with a reason to come back warns that verification will fail; mask: true always masks', () => {
    const reasons = { group: ['api.service'], reasons: ['api.service is wanted by default.target'], unknown: null };
    const no = diff(spec({ mask: false }), entry({ comeback: reasons }))!;
    expect(no.summary).toContain(
      'stop and disable api.service through systemctl --user -M alice@; but api.service is wanted by default.target: it would start again, so apply will fail verification (mask: auto or true masks it)',
    );
    expect(no.op).toMatchObject({ mask: false });
    const yes = diff(spec({ mask: true }), entry())!;
    expect(yes.summary).toContain('stop, disable and mask api.service through systemctl --user -M alice@; alice lingers');
    expect(yes.op).toMatchObject({ mask: true });
  });
});

describe('diffUserPort: an operator line instead of a stop', () => {
  it('a UID with no account', () => {
    const c = diff(spec(), entry({ account: null }))!;
    expect(c.action).toBe('operator');
    expect(c.operator).toBe('UID 1000 has no account; stop it as that user with systemctl --user');
    expect(c.withdraws).toEqual([{ promise: 'port:6443', from: 'apply' }]);
    expect(c.op).toEqual({ kind: 'operator', port: 6443, unit: 'api.service', pid: 4242 });
    // What systemctl said, when it failed, is the reason.
    expect(diff(spec(), entry({ account: null, facts: facts({ error: 'Failed to connect to bus' }) }))!.operator).toBe(
      'Failed to connect to bus; stop it as that user with systemctl --user',
    );
  });

  it('a protected user unit is never stopped', () => {
    const c = diff(spec({ protected_units: ['api.service'] }), entry())!;
    expect(c.action).toBe('operator');
    expect(c.operator).toBe("api.service is listed in protected_units (api.service) (in alice's manager); it is never stopped automatically");
  });

  it("a holder whose origin was not read, or that is not the unit's own process", () => {
    expect(diff(spec(), entry(), [holder({ ancestry: null })])!.operator).toBe("pid 4242's origin in api.service was not read");
    const notOwn = diff(spec(), entry({ facts: facts({ mainPid: 4000, main: proc(4000, 900, 'sh', ['/bin/sh', '-c', 'sleep 1']) }) }), [
      holder({ mainHoldsSocket: false }),
    ])!;
    expect(notOwn.action).toBe('operator');
    expect(notOwn.operator).toMatch(
      /^pid 4242 is not alice's api\.service's own process: .+\. A unit is never stopped on a guess; name api\.service in stop_spawner_units to stop it anyway$/,
    );
  });

  it('stop_spawner_units naming the unit lets a spawned holder be stopped, saying so', () => {
    const c = diff(spec({ stop_spawner_units: ['api.service'] }), entry({ facts: facts({ mainPid: 4000, main: proc(4000, 900, 'sh', ['/bin/sh']) }) }), [
      holder({ mainHoldsSocket: false }),
    ])!;
    expect(c.action).toBe('stop');
    expect(c.summary).toMatch(/pid 4242 is not api\.service's own process \(.+\), but stop_spawner_units names api\.service: stop and disable api\.service/);
  });
});
