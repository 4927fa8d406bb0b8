// Which .socket unit holds a busy port for systemd, and the service it
// starts: the cgroup's answer first, else `systemctl list-sockets` (LISTEN
// UNIT ACTIVATES, as systemd 252 prints it; canned here), else the unit files
// (ListenStream=, systemd.socket(5): Service= or the socket's own name,
// none for Accept=yes); the service's MainPID from `systemctl show`.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { findActivation } from '../../src/ports/activation.js';
import { cannedRunner } from '../helpers/canned-runner.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
const LIST = 'systemctl list-sockets --show-types --full --no-legend --no-pager';
const PID = (u: string) => `systemctl show -p MainPID --value ${u}`;
const ETC = 'etc/systemd/system';
function host(tree: Tree, answers: Record<string, string>): Host {
  const root = mkdtempSync(path.join(os.tmpdir(), 'activation-'));
  roots.push(root);
  buildTree(root, { [`${ETC}/default.target`]: '[Unit]\n', ...tree });
  return new Host({ root, live: true, runner: cannedRunner(answers) });
}

describe('findActivation', () => {
  it("list-sockets names the socket and the service it activates; the service's MainPID comes from systemctl show", async () => {
    const h = host({}, { [LIST]: '0.0.0.0:10250               Stream   agent.socket           agent.service\n', [PID('agent.service')]: '4242\n' });
    expect(await findActivation(h, 10250, null)).toEqual({
      socket: 'agent.socket',
      service: 'agent.service',
      servicePid: 4242,
      source: 'systemctl list-sockets',
    });
  });
  // Seen in the boot farm: a relay's ListenDatagram=6443 socket and a ListenStream=6443 one print the same LISTEN
  // address; the datagram one came first and was taken for the holder of the TCP port.
  it('a datagram socket on the same port number is not the holder of the TCP port: the stream socket is', async () => {
    const h = host(
      {},
      {
        [LIST]: [
          '[::]:6443                   Datagram udp-relay.socket       udp-relay.service',
          '[::]:6443                   Stream   sockd.socket           sockd.service',
          '',
        ].join('\n'),
        [PID('sockd.service')]: '0\n',
      },
    );
    expect(await findActivation(h, 6443, null)).toEqual({
      socket: 'sockd.socket',
      service: 'sockd.service',
      servicePid: null,
      source: 'systemctl list-sockets',
    });
  });
  it('the cgroup already named the socket: list-sockets is not asked; the service is the Service= of its file; MainPID 0 is none', async () => {
    const h = host({ [`${ETC}/relay.socket`]: '[Socket]\nListenStream=6443\nService=api-relay.service\n' }, { [PID('api-relay.service')]: '0\n' });
    expect(await findActivation(h, 6443, 'relay.socket')).toEqual({ socket: 'relay.socket', service: 'api-relay.service', servicePid: null, source: 'cgroup' });
  });
  it('list-sockets failing: the unit files decide, by ListenStream= on the port; Accept=yes starts no one service', async () => {
    const h = host(
      {
        [`${ETC}/api.socket`]: '[Socket]\nListenStream=[::]:6443\n',
        [`${ETC}/per-conn.socket`]: '[Socket]\nListenStream=10257\nAccept=yes\n',
      },
      { [PID('api.service')]: '77\n' },
    );
    expect(await findActivation(h, 6443, null)).toEqual({ socket: 'api.socket', service: 'api.service', servicePid: 77, source: 'unit files' });
    expect(await findActivation(h, 10257, null)).toEqual({ socket: 'per-conn.socket', service: null, servicePid: null, source: 'unit files' });
    // No socket anywhere on the port: not socket-activated.
    expect(await findActivation(h, 2379, null)).toBeNull();
  });
  it("a socket with no unit file here (transient, or a generator's): its service by the socket's own name", async () => {
    const h = host({}, {});
    expect(await findActivation(h, 6443, 'gen.socket')).toEqual({ socket: 'gen.socket', service: 'gen.service', servicePid: null, source: 'cgroup' });
  });
});
