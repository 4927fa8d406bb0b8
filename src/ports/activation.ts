// Socket activation: which .socket unit (and service) a listener held by
// systemd itself belongs to.
import type { TargetHost } from '../host.js';
import { parseListSockets } from '../systemd/systemctl-output.js';
import { systemctlValue } from '../systemd/systemctl-show.js';
import type { SocketActivation } from './observed.js';
import { socketUnitOf, unitFilesOf } from '../systemd/socket-unit.js';
import { socketUnitsForPorts } from './socket-units.js';
import { systemUnitGraph } from '../systemd/system-graph.js';

export async function findActivation(host: TargetHost, port: number, socketFromCgroup: string | null): Promise<SocketActivation | null> {
  let socket: string | null = socketFromCgroup;
  let service: string | null = null;
  let source: SocketActivation['source'] = 'cgroup';
  if (socket === null) {
    // The manager's own view first: it includes generated and transient sockets.
    try {
      // --show-types: a UDP socket on the same port number (ListenDatagram=) prints the same LISTEN address, and
      // only a stream socket holds the TCP port (seen in the boot farm: a relay's udp-relay.socket on 6443/udp was
      // taken for the sockd.socket holding 6443/tcp, so apply stopped the wrong socket).
      const r = await host.run('systemctl', ['list-sockets', '--show-types', '--full', '--no-legend', '--no-pager']);
      const hit = r.exitCode === 0 ? parseListSockets(r.stdout).find((s) => s.port === port && (s.type === null || s.type === 'Stream')) : undefined;
      if (hit) {
        socket = hit.unit;
        service = hit.activates[0] ?? null;
        source = 'systemctl list-sockets';
      }
    } catch {
      // systemctl missing or not talking to a manager: the unit files still tell.
    }
  }
  const units = unitFilesOf(await systemUnitGraph(host));
  if (socket === null) {
    const declared = socketUnitsForPorts(units.values(), [port]);
    if (declared.length === 0) return null;
    socket = declared[0]!.name;
    source = 'unit files';
  }
  if (service === null) {
    const file = units.get(socket);
    // Accept=yes starts one instance per connection: there is no single service to stop.
    service = file ? (socketUnitOf(file).accept ? null : socketUnitOf(file).service) : socket.replace(/\.socket$/, '.service');
  }
  let servicePid: number | null = null;
  if (service !== null) {
    const v = Number(await systemctlValue(host, 'MainPID', service));
    servicePid = Number.isInteger(v) && v > 0 ? v : null;
  }
  return { socket, service, servicePid, source };
}
