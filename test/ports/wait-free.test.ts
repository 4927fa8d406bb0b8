// After PortFree stops a unit: the restart delay its manager reports
// (RestartUSec=, as `systemctl show` prints it), and the wait until each port
// is free and has stayed free that long, on this machine's own /proc/net/tcp
// with listeners this test opens and closes on loopback.
import { describe, expect, it } from 'vitest';
import net from 'node:net';
import { Host } from '../../src/host.js';
import { restartDelayMs, waitFree } from '../../src/ports/wait-free.js';
import { cannedRunner } from '../helpers/canned-runner.js';

const LIVE = new Host({ root: '/', live: true });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function listen(port = 0): Promise<net.Server> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
  return s;
}
const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;
const close = (s: net.Server) => new Promise<void>((r) => s.close(() => r()));

describe('restartDelayMs: the longest RestartUSec= of the units', () => {
  it("systemd's own forms (100ms, 5s, 1min 30s); a unit systemctl cannot show counts for nothing", async () => {
    const host = new Host({
      root: '/',
      live: true,
      runner: cannedRunner({
        'systemctl show -p RestartUSec --value a.service': '100ms\n',
        'systemctl show -p RestartUSec --value b.service': '1min 30s\n',
        'systemctl show -p RestartUSec --value c.service': '5s\n',
      }),
    });
    expect(await restartDelayMs(host, ['a.service', 'b.service', 'c.service'])).toBe(90_000);
    expect(await restartDelayMs(host, ['a.service', 'gone.service'])).toBe(100);
    expect(await restartDelayMs(host, [])).toBe(0);
  });
  it('through a user manager, the systemctl it is given', async () => {
    const host = new Host({
      root: '/',
      live: true,
      runner: cannedRunner({ 'runuser -u paul -- systemctl --user show -p RestartUSec --value x.service': '2s\n' }),
    });
    expect(await restartDelayMs(host, ['x.service'], { cmd: 'runuser', args: ['-u', 'paul', '--', 'systemctl', '--user'] })).toBe(2000);
  });
});

describe('waitFree', () => {
  it('a port nobody listens on is done once it has been free for its hold', async () => {
    const s = await listen();
    const port = portOf(s);
    await close(s);
    const t0 = Date.now();
    expect(await waitFree(LIVE, new Map([[port, 300]]), 5000, () => {})).toEqual(new Map());
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(300);
    expect(took).toBeLessThan(3000);
  });
  it('a port still listening at the timeout fails with how long it waited; progress names it each second', async () => {
    const s = await listen();
    const port = portOf(s);
    const said: string[] = [];
    try {
      expect(await waitFree(LIVE, new Map([[port, 200]]), 1500, (m) => said.push(m))).toEqual(new Map([[port, `port ${port} still listening after 1.5s`]]));
    } finally {
      await close(s);
    }
    expect(said.length).toBeGreaterThanOrEqual(1);
    expect(said[0]).toMatch(new RegExp(`^PortFree: waiting \\(\\d+s of 1\\.5s\\): ${port} still listening$`));
  });
  it('a port that was free and then listens again (something restarts it) is told apart', async () => {
    const s = await listen();
    const port = portOf(s);
    await close(s);
    let again: net.Server | null = null;
    const restart = sleep(500).then(async () => {
      again = await listen(port);
    });
    try {
      const failed = await waitFree(LIVE, new Map([[port, 5000]]), 2000, () => {});
      expect(failed).toEqual(new Map([[port, `port ${port} was free and then listening again: something restarts it`]]));
    } finally {
      await restart;
      if (again) await close(again);
    }
  });
  it('free when the timeout runs out but short of its hold: not a failure, and progress says how short', async () => {
    const s = await listen();
    const port = portOf(s);
    await close(s);
    const said: string[] = [];
    expect(await waitFree(LIVE, new Map([[port, 60_000]]), 600, (m) => said.push(m))).toEqual(new Map());
    expect(said.at(-1)).toMatch(new RegExp(`^PortFree: port ${port} free for only \\d\\.\\ds of its 60\\.0s hold when the timeout ran out$`));
  });
});
