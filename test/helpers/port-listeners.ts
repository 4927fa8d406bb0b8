// Listeners a PortFree test opens itself on ephemeral ports, and a command
// runner that records and answers systemctl without running anything, so no
// unit on this machine can be stopped or disabled.
import net from 'node:net';
import { afterEach } from 'vitest';
import type { CommandRunner, RunOptions } from '../../src/host.js';
import type { PortFreeSpec } from '../../src/resources/port-free/spec.js';
import type { LivePortsObserved, PortFreeObserved } from '../../src/ports/observed.js';
import { scratchContext } from './door.js';

export interface Call {
  cmd: string;
  args: string[];
}

const servers: net.Server[] = [];

export async function listen(host: string, ipv6Only = false, port = 0): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer((s) => s.end());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, ipv6Only, exclusive: true }, () => resolve());
  });
  servers.push(server);
  return { server, port: (server.address() as net.AddressInfo).port };
}

export function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

export async function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/** Closes every listener a test of the calling file opened, after each test. */
export function closeListenersAfterEach(): void {
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => (s.listening ? close(s) : Promise.resolve())));
  });
}

/** A runner that records and answers systemctl; nothing is ever executed. */
export function recorder(
  answer: (c: Call) => { exitCode: number; stdout?: string } | Promise<{ exitCode: number; stdout?: string }> = () => ({ exitCode: 1 }),
) {
  const calls: Call[] = [];
  const runner: CommandRunner = async (cmd: string, args: string[], _opts: RunOptions) => {
    calls.push({ cmd, args });
    const a = await answer({ cmd, args });
    return { command: [cmd, ...args].join(' '), exitCode: a.exitCode, stdout: a.stdout ?? '', stderr: a.exitCode === 0 ? '' : 'refused by test' };
  };
  return { calls, runner };
}

export function spec(ports: number[], extra: Partial<PortFreeSpec> = {}): PortFreeSpec {
  return { type: 'PortFree', ports, protected_units: [], stop_spawner_units: [], mask: false, timeout_seconds: 5, disable_units: [], ...extra };
}

export function live(o: PortFreeObserved): LivePortsObserved {
  if (o.mode !== 'live') throw new Error('expected a live observation');
  return o;
}

/** An apply context on a scratch door, with the progress lines it printed. */
export const progressContext = async () => {
  const lines: string[] = [];
  return { lines, ctx: await scratchContext((m: string) => void lines.push(m)) };
};
