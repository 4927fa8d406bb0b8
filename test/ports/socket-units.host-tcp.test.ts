// A unit that names a control-plane port takes the host's TCP port only when
// its listener is TCP in the host's network namespace. Two that cannot, by
// systemd.exec(5) and systemd.socket(5): a service with PrivateNetwork=yes
// (its own namespace: the kernel keeps a separate port space per network
// namespace), and a relay that systemd hands the port as a UDP socket
// (ListenDatagram=). Neither takes back "port 6443 free at the next boot".
// A private service that a host-namespace .socket starts over TCP gets the
// host's sockets from systemd, so it stays a unit that may hold a port.
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTree, type Tree } from '../helpers/tree.js';
import { notHostTcp, serviceCandidates } from '../../src/ports/socket-units.js';
import { unitFileIn } from '../helpers/unit-file.js';
import { socketUnitOf, type UnitFile } from '../../src/systemd/socket-unit.js';

const BUNDLE = path.resolve('dist/reconcile.mjs');
const LIB = 'usr/lib/systemd/system';
const WANTS = 'etc/systemd/system/multi-user.target.wants';
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const BASE: Tree = {
  'etc/fstab': 'UUID=1 / ext4 defaults 0 1\n',
  [`${LIB}/multi-user.target`]: '[Unit]\nDescription=Multi-User System\n',
  [`${LIB}/sockets.target`]: '[Unit]\nDescription=Sockets\n',
  'etc/systemd/system/default.target': { link: '/usr/lib/systemd/system/multi-user.target' },
  'desired.yaml': 'reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: PortFree\n    ports: [6443, 10250]\n',
};

interface Doc {
  promises: Array<{ id: string; at_boot: boolean; withdrawn_by: Array<{ line: string }> }>;
  resources: Array<{ changes: Array<{ id: string; action: string; summary: string }> }>;
}

function plan(tree: Tree): Doc {
  const root = mkdtempSync(path.join(tmpdir(), 'host-tcp-'));
  roots.push(root);
  buildTree(root, { ...BASE, ...tree });
  const r = spawnSync(process.execPath, [BUNDLE, '--plan', '--json', '-f', path.join(root, 'desired.yaml'), '--root', root], { encoding: 'utf8' });
  expect([0, 2], r.stderr).toContain(r.status);
  return JSON.parse(r.stdout) as Doc;
}

const port = (d: Doc, n: number) => d.promises.find((p) => p.id === `port:${n}`)!;
const enabled = (name: string): Tree => ({ [`${WANTS}/${name}`]: { link: `/${LIB}/${name}` } });

const SANDBOX =
  '[Unit]\nDescription=API sandbox\n\n[Service]\nPrivateNetwork=yes\nExecStart=/usr/bin/socat TCP-LISTEN:6443,fork,reuseaddr EXEC:/usr/bin/cat\n\n[Install]\nWantedBy=multi-user.target\n';
const RELAY_SOCKET = '[Unit]\nDescription=UDP relay\n\n[Socket]\nListenDatagram=0.0.0.0:6443\n\n[Install]\nWantedBy=sockets.target\n';
const RELAY_SERVICE = '[Unit]\nDescription=UDP relay\n\n[Service]\nExecStart=/usr/bin/socat ACCEPT-FD:3 UDP:192.0.2.10:6443\n';
// The control: the same agent as the other port tests, binding 10250 itself in the host's namespace.
const MONITOR = '[Service]\nExecStart=/usr/bin/node-monitor --port 10250\n\n[Install]\nWantedBy=multi-user.target\n';

describe('a listener in its own network namespace, or on UDP, does not hold the host TCP port', () => {
  it('PrivateNetwork=yes on 6443: the promise holds at the next boot; the host-namespace agent on 10250 still takes its port back', () => {
    const d = plan({
      [`${LIB}/api-sandbox.service`]: SANDBOX,
      ...enabled('api-sandbox.service'),
      [`${LIB}/node-monitor.service`]: MONITOR,
      ...enabled('node-monitor.service'),
    });
    expect(port(d, 6443)).toMatchObject({ at_boot: true, withdrawn_by: [] });
    expect(port(d, 10250).at_boot).toBe(false);
    expect(d.resources.flatMap((r) => r.changes).map((c) => c.id)).toEqual(['candidate-node-monitor.service']);
  });

  it('a .socket with ListenDatagram=6443 starting a relay that names 6443: the promise holds', () => {
    const d = plan({
      [`${LIB}/udp-relay.socket`]: RELAY_SOCKET,
      [`${LIB}/udp-relay.service`]: RELAY_SERVICE,
      'etc/systemd/system/sockets.target.wants/udp-relay.socket': { link: `/${LIB}/udp-relay.socket` },
      [`${LIB}/multi-user.target.wants/sockets.target`]: { link: '../sockets.target' },
    });
    expect(port(d, 6443)).toMatchObject({ at_boot: true, withdrawn_by: [] });
  });

  it('PrivateNetwork=yes but started by a host-namespace .socket on TCP: it still may hold the port', () => {
    const d = plan({
      [`${LIB}/api-sandbox.service`]: SANDBOX,
      ...enabled('api-sandbox.service'),
      [`${LIB}/api-sandbox.socket`]: '[Socket]\nListenStream=8443\n\n[Install]\nWantedBy=sockets.target\n',
    });
    expect(port(d, 6443).at_boot).toBe(false);
  });
});

describe('notHostTcp, unit by unit', () => {
  const unit = (name: string, text: string): UnitFile => unitFileIn(`/${LIB}`, name, text);
  const sockets = (...u: UnitFile[]) => u.map((file) => ({ file, unit: socketUnitOf(file) }));

  it('names the line that decides, and keeps every unit that may listen on the host', () => {
    expect(notHostTcp(unit('a.service', SANDBOX), 6443, [])).toBe(
      `it runs in a network namespace of its own (PrivateNetwork=yes at /${LIB}/a.service:5), so a listener of its own is not on the host's port 6443`,
    );
    // systemd's booleans; the last accepted value wins.
    expect(notHostTcp(unit('a.service', '[Service]\nPrivateNetwork=true\nPrivateNetwork=no\nExecStart=/x 6443\n'), 6443, [])).toBeNull();
    expect(
      notHostTcp(unit('a.service', '[Service]\nPrivateNetwork=no\nPrivateNetwork=bogus\nPrivateNetwork=on\nExecStart=/x 6443\n'), 6443, []),
    ).not.toBeNull();
    // A named namespace of ip netns is not the host's; /proc/1/ns/net is.
    expect(notHostTcp(unit('a.service', '[Service]\nNetworkNamespacePath=/run/netns/lab\nExecStart=/x 6443\n'), 6443, [])).not.toBeNull();
    expect(notHostTcp(unit('a.service', '[Service]\nNetworkNamespacePath=/proc/1/ns/net\nExecStart=/x 6443\n'), 6443, [])).toBeNull();
    const relay = unit('udp-relay.service', RELAY_SERVICE);
    expect(notHostTcp(relay, 6443, sockets(unit('udp-relay.socket', RELAY_SOCKET)))).toBe(
      `udp-relay.socket starts it and hands it port 6443 as a UDP socket (ListenDatagram=0.0.0.0:6443 at /${LIB}/udp-relay.socket:5), with no stream socket`,
    );
    // A datagram socket on another port explains nothing; a stream socket beside the datagram one hands it TCP.
    expect(notHostTcp(relay, 6443, sockets(unit('udp-relay.socket', '[Socket]\nListenDatagram=5353\n')))).toBeNull();
    expect(notHostTcp(relay, 6443, sockets(unit('udp-relay.socket', '[Socket]\nListenDatagram=6443\nListenStream=6443\n')))).toBeNull();
    // Not the socket that starts it (Service= names another service).
    expect(notHostTcp(relay, 6443, sockets(unit('x.socket', '[Socket]\nListenDatagram=6443\nService=other.service\n')))).toBeNull();
  });

  it('serviceCandidates leaves out exactly those units', () => {
    const all = [
      unit('a.service', SANDBOX),
      unit('udp-relay.service', RELAY_SERVICE),
      unit('udp-relay.socket', RELAY_SOCKET),
      unit('node-monitor.service', MONITOR.replace('10250', '6443')),
    ];
    expect(serviceCandidates(all, [6443]).map((c) => c.unit)).toEqual(['node-monitor.service']);
  });
});
