// PortFree's live observation and plan (diff-live.ts) on this machine, against
// listeners the test opens itself on ephemeral ports. systemctl never runs for
// real: the Host's command runner is a recorder (test/helpers/port-listeners.ts),
// so no unit on this machine can be stopped or disabled.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Host } from '../../../src/host.js';
import { readListeners } from '../../../src/observe/listeners.js';
import { findSocketHolders } from '../../../src/ports/proc-fd.js';
import { portFreeProvider } from '../../../src/resources/port-free/provider.js';
import { closeListenersAfterEach, connects, listen, live, progressContext, recorder, spec } from '../../helpers/port-listeners.js';

closeListenersAfterEach();

/** IPv4-any, IPv4-loopback and IPv6-only listeners held by this process. */
async function threeListeners() {
  const any4 = await listen('0.0.0.0');
  const lo4 = await listen('127.0.0.1');
  const v6only = await listen('::', true);
  return { any4, lo4, v6only, ports: [any4.port, lo4.port, v6only.port] };
}

describe('PortFree live, on listeners this test opens', () => {
  it('finds IPv4-any, loopback-only and IPv6-only listeners and attributes them to this process', async () => {
    const { any4, lo4, v6only, ports } = await threeListeners();
    const { calls, runner } = recorder();
    const host = new Host({ runner });

    const o = live(await portFreeProvider.observe(host, spec(ports)));
    expect(o.busy.map((b) => b.port)).toEqual([...ports].sort((a, b) => a - b));
    const byPort = new Map(o.busy.map((b) => [b.port, b]));
    expect(byPort.get(any4.port)!.listeners.map((l) => [l.family, l.address])).toEqual([['ipv4', '0.0.0.0']]);
    expect(byPort.get(lo4.port)!.listeners.map((l) => [l.family, l.address])).toEqual([['ipv4', '127.0.0.1']]);
    // ipv6Only: only a tcp6 entry, no IPv4 one.
    expect(byPort.get(v6only.port)!.listeners.map((l) => [l.family, l.address])).toEqual([['ipv6', '::']]);
    const comm = readFileSync('/proc/self/comm', 'utf8').trim();
    for (const b of o.busy) {
      expect(b.holders.map((h) => h.pid)).toEqual([process.pid]);
      expect(b.holders[0]!.comm).toBe(comm);
      expect(b.activation).toBeNull();
    }
    // Nothing here is PID 1, so no systemctl query was needed.
    expect(calls).toEqual([]);
  });

  it('plans operator action for a holder it may not stop, and apply kills nothing', async () => {
    const { any4, lo4, v6only, ports } = await threeListeners();
    const { calls, runner } = recorder();
    const host = new Host({ runner });
    const s = spec(ports);

    const o = await portFreeProvider.observe(host, s);
    const changes = portFreeProvider.diff(s, o, { live: true });
    expect(changes).toHaveLength(3);

    // Whatever unit vitest runs in here (none, a session scope, a container,
    // or a service: then our own, protected), PortFree may not stop it: every
    // port is an operator line naming this process, and nothing is asked of systemctl.
    for (const c of changes) {
      expect(c.action).toBe('operator');
      expect(c.operator).toMatch(new RegExp(`pid ${process.pid}\\b`));
      expect(c.summary).toContain(`pid ${process.pid}`);
      expect(c.summary).toContain(`(${readFileSync('/proc/self/comm', 'utf8').trim()})`);
      expect(c.op).toMatchObject({ kind: 'operator', pid: process.pid });
    }
    expect(changes.find((c) => c.id === `port-${v6only.port}`)!.summary).toContain(`[::]:${v6only.port}`);

    const outcome = await portFreeProvider.apply(host, s, changes, (await progressContext()).ctx);
    expect(outcome).toBeUndefined();
    expect(calls).toEqual([]);
    expect(await connects('127.0.0.1', any4.port)).toBe(true);
    expect(await connects('127.0.0.1', lo4.port)).toBe(true);
    expect(await connects('::1', v6only.port)).toBe(true);
  });

  it('the fd scan stops once every wanted inode has a holder', async () => {
    const a = await listen('127.0.0.1');
    const host = new Host();
    const inode = (await readListeners(host)).find((l) => l.port === a.port)!.inode;
    const r = await findSocketHolders(host, [inode]);
    expect(r.complete).toBe(true);
    expect(r.holders.get(inode)).toEqual([process.pid]);
    // An inode nobody holds: the scan visits everything and reports it incomplete.
    const none = await findSocketHolders(host, [inode, 1]);
    expect(none.complete).toBe(false);
    expect(none.holders.has(1)).toBe(false);
  });
});
