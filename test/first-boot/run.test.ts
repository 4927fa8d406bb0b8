// `reconcile --first-boot` on a fixture root treated as a running host: the
// wait for a candidate that binds its port late (the race with an agent
// started in parallel), and the record it leaves (first-boot.json, the stamp,
// its own .wants link removed only on success). /proc is the fixture's;
// systemctl answers come from a fake runner, so nothing on this machine runs.
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host, type CommandRunner } from '../../src/host.js';
import type { DesiredState } from '../../src/desired-state.js';
import type { PortFreeSpec } from '../../src/resources/port-free/spec.js';
import { waitForCandidates } from '../../src/first-boot/wait.js';
import { runFirstBoot } from '../../src/first-boot/run.js';
import { openDoor } from '../helpers/door.js';
import { portFreeSpec } from '../helpers/port-free-spec.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const TCP_HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
/** A LISTEN entry on 0.0.0.0:PORT with socket inode INODE, as /proc/net/tcp prints it. */
const listenLine = (port: number, inode: number) =>
  `   0: 00000000:${port.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0000000000000000 100 0 0 10 0\n`;

/** The link itself (its absolute target exists only inside the image). */
const hasLink = (root: string) => lstatSync(path.join(root, UNIT_LINK.slice(1)), { throwIfNoEntry: false }) !== undefined;

const UNIT_LINK = '/etc/systemd/system/multi-user.target.wants/k8s-host-reconcile-first-boot.service';

function fixture() {
  const root = mkdtempSync(path.join(tmpdir(), 'first-boot-run-'));
  roots.push(root);
  const put = (rel: string, data: string) => {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), data);
  };
  put(
    'etc/systemd/system/agent.service',
    '[Service]\nExecStart=/usr/bin/python3 /opt/agent.py --port 10250\nRestart=always\n[Install]\nWantedBy=multi-user.target\n',
  );
  put('etc/systemd/system/scraper.service', '[Service]\nEnvironment=KUBELET=https://127.0.0.1:10250\nExecStart=/usr/bin/scraper\n');
  put('etc/systemd/system/k8s-host-reconcile-first-boot.service', '[Service]\nType=oneshot\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n');
  mkdirSync(path.dirname(path.join(root, UNIT_LINK.slice(1))), { recursive: true });
  symlinkSync('/etc/systemd/system/k8s-host-reconcile-first-boot.service', path.join(root, UNIT_LINK.slice(1)));
  put('proc/net/tcp', TCP_HEADER);
  put('proc/net/tcp6', TCP_HEADER);
  // The agent's process: its socket fd and its cgroup.
  mkdirSync(path.join(root, 'proc/4242/fd'), { recursive: true });
  symlinkSync('socket:[777]', path.join(root, 'proc/4242/fd/3'));
  put('proc/4242/cgroup', '0::/system.slice/agent.service\n');
  put('proc/4242/comm', 'python3\n');
  mkdirSync(path.join(root, 'run'), { recursive: true });
  return { root, bind: () => put('proc/net/tcp', TCP_HEADER + listenLine(10250, 777)) };
}

function desired(extra: Partial<PortFreeSpec> = {}, firstBoot: DesiredState['first_boot'] = 'apply'): DesiredState {
  return {
    source: 'desired.yaml',
    reports_dir: '/root/ks/preflight',
    facts: { source: 'native' },
    first_boot: firstBoot,
    resources: [portFreeSpec([10250], extra)],
  };
}

/** systemctl show -p ActiveState answers per unit, from a script the test advances. */
function states(script: Record<string, () => string>): CommandRunner {
  return async (cmd, args) => {
    const unit = args.at(-1)!;
    const ok = cmd === 'systemctl' && args[0] === 'show' && args.includes('ActiveState') && unit in script;
    return { command: [cmd, ...args].join(' '), exitCode: ok ? 0 : 1, stdout: ok ? `${script[unit]!()}\n` : '', stderr: '' };
  };
}

describe('first boot: waiting for candidates', () => {
  it('waits for an active candidate that binds its port only later, and reports it listening', async () => {
    const { root, bind } = fixture();
    let polls = 0;
    const host = new Host({
      root,
      live: true,
      runner: states({ 'agent.service': () => (polls < 2 ? 'activating' : 'active'), 'scraper.service': () => 'inactive' }),
    });
    const lines: string[] = [];
    const waited = await waitForCandidates(
      host,
      desired(),
      (m) => lines.push(m),
      async () => {
        // The agent binds 10250 after the third look.
        if (++polls === 3) bind();
      },
    );
    expect(polls).toBe(3);
    expect(waited).toEqual([
      { unit: 'scraper.service', ports: [10250], outcome: 'not running', seconds: 0 },
      expect.objectContaining({ unit: 'agent.service', ports: [10250], outcome: 'listening', port: 10250 }),
    ]);
    expect(lines[0]).toBe('first boot: waiting up to 30 s for agent.service to listen on 10250 or stop');
    expect(lines.at(-1)).toMatch(/^first boot: agent\.service listens on 10250 after [\d.]+ s$/);
  });

  it('a candidate that stops (or crashes for good) ends the wait as gone', async () => {
    const { root } = fixture();
    let polls = 0;
    const host = new Host({
      root,
      live: true,
      runner: states({ 'agent.service': () => (polls < 2 ? 'active' : 'failed'), 'scraper.service': () => 'inactive' }),
    });
    const waited = await waitForCandidates(
      host,
      desired(),
      () => {},
      async () => void polls++,
    );
    expect(waited.find((w) => w.unit === 'agent.service')?.outcome).toBe('gone');
  });

  it('a candidate still running but not listening when the time is up is left alone, with a warning', async () => {
    const { root } = fixture();
    const host = new Host({ root, live: true, runner: states({ 'agent.service': () => 'active', 'scraper.service': () => 'active' }) });
    const lines: string[] = [];
    const waited = await waitForCandidates(
      host,
      desired({ timeout_seconds: 0 }),
      (m) => lines.push(m),
      async () => {},
    );
    expect(waited.map((w) => [w.unit, w.outcome])).toEqual([
      ['agent.service', 'timeout'],
      ['scraper.service', 'timeout'],
    ]);
    expect(lines).toContain(
      'first boot: warning: scraper.service is still running after 0 s and does not listen on 10250; left alone (list it in protected_units if it never binds them)',
    );
  });

  it('a protected candidate is never waited for', async () => {
    const { root } = fixture();
    const host = new Host({ root, live: true, runner: states({ 'agent.service': () => 'active', 'scraper.service': () => 'active' }) });
    const waited = await waitForCandidates(
      host,
      desired({ protected_units: ['agent', 'scraper*'] }),
      () => {},
      async () => {
        throw new Error('must not poll');
      },
    );
    expect(waited).toEqual([]);
  });
});

describe('first boot: the record it leaves', () => {
  const quiet = states({ 'agent.service': () => 'inactive', 'scraper.service': () => 'inactive' });
  const report = (root: string) => JSON.parse(readFileSync(path.join(root, 'root/ks/preflight/first-boot.json'), 'utf8'));

  it("apply converged: first-boot.json, the stamp, and its own .wants link removed, all in the apply's run", async () => {
    const { root } = fixture();
    const host = new Host({ root, live: true, runner: quiet });
    let runDir = '';
    const code = await runFirstBoot(host, desired(), () => {}, {
      tool: 'test',
      plan: async () => {
        throw new Error('apply mode must not plan');
      },
      apply: async (finish) => {
        const door = await openDoor(host);
        runDir = door.runDir;
        writeFileSync(path.join(root, runDir, 'result.json'), JSON.stringify({ failures: [] }));
        const c = await finish(door, 0);
        await door.end(c === 0 ? 'ok' : 'failed');
        return c;
      },
    });
    expect(code).toBe(0);
    expect(report(root)).toMatchObject({
      unit: 'k8s-host-reconcile-first-boot.service',
      mode: 'apply',
      result: 'converged',
      exit: 0,
      run: runDir,
      failures: [],
    });
    expect(existsSync(path.join(root, 'var/lib/k8s-host-reconcile/first-boot.done'))).toBe(true);
    expect(hasLink(root)).toBe(false);
    // The journal of that run has both, so --rollback re-arms the unit.
    const journal = readFileSync(path.join(root, runDir, 'journal'), 'utf8');
    expect(journal).toContain('"path":"/var/lib/k8s-host-reconcile/first-boot.done"');
    expect(journal).toContain(`"path":"${UNIT_LINK}"`);
  });

  it('apply failed: the unit fails, stays enabled, and first-boot.json has the reasons from result.json', async () => {
    const { root } = fixture();
    const host = new Host({ root, live: true, runner: quiet });
    const lines: string[] = [];
    const code = await runFirstBoot(host, desired(), (m) => lines.push(m), {
      tool: 'test',
      plan: async () => 0,
      apply: async (finish) => {
        const door = await openDoor(host);
        writeFileSync(
          path.join(root, door.runDir, 'result.json'),
          JSON.stringify({ failures: [{ resource: 'PortFree', message: 'port 10250 still listening after 30s' }] }),
        );
        const c = await finish(door, 1);
        await door.end('failed');
        return c;
      },
    });
    expect(code).toBe(1);
    expect(report(root)).toMatchObject({ result: 'failed', exit: 1, failures: ['PortFree: port 10250 still listening after 30s'] });
    expect(existsSync(path.join(root, 'var/lib/k8s-host-reconcile/first-boot.done'))).toBe(false);
    expect(hasLink(root)).toBe(true);
    expect(lines).toContain('first boot: failed: PortFree: port 10250 still listening after 30s');
    expect(lines.at(-1)).toBe('first boot (apply): FAILED; details in /root/ks/preflight/first-boot.json');
  });

  it('verify: pending work fails the unit and changes nothing but its record; in sync disables it', async () => {
    const pending = fixture();
    const h1 = new Host({ root: pending.root, live: true, runner: quiet });
    const deps = (planned: number) => ({
      tool: 'test',
      plan: async () => planned,
      apply: async () => {
        throw new Error('verify must not apply');
      },
    });
    expect(await runFirstBoot(h1, desired({}, 'verify'), () => {}, deps(2))).toBe(1);
    expect(report(pending.root)).toMatchObject({ mode: 'verify', result: 'pending', exit: 2 });
    expect(hasLink(pending.root)).toBe(true);

    const clean = fixture();
    const h2 = new Host({ root: clean.root, live: true, runner: quiet });
    expect(await runFirstBoot(h2, desired({}, 'verify'), () => {}, deps(0))).toBe(0);
    expect(report(clean.root)).toMatchObject({ mode: 'verify', result: 'in sync', exit: 0 });
    expect(hasLink(clean.root)).toBe(false);
    expect(existsSync(path.join(clean.root, 'run/k8s-host-reconcile.lock'))).toBe(false);
  });

  it('refuses to run offline', async () => {
    const { root } = fixture();
    await expect(runFirstBoot(new Host({ root }), desired(), () => {}, { tool: 'test', plan: async () => 0, apply: async () => 0 })).rejects.toThrow(
      '--first-boot runs on the booted host',
    );
  });
});

describe('reconcile --first-boot at the CLI edge', () => {
  it('goes alone: with --root, --plan or --apply it is refused before anything runs', async () => {
    const { main } = await import('../../src/cli.js');
    for (const extra of [['--root', '/tmp'], ['--plan'], ['--apply']]) {
      let err = '';
      const code = await main(['--first-boot', ...extra], {
        stdout: { write: () => true },
        stderr: { write: (s: string) => (err += s) },
        env: {},
        runner: async (cmd) => {
          throw new Error(`nothing may run, got ${cmd}`);
        },
      });
      expect(code).toBe(1);
      expect(err).toContain("--first-boot is the image's first-boot run on the booted host; it goes alone");
    }
  });
});
