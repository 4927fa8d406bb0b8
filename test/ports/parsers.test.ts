// Pure parsers behind PortFree: /proc/net/tcp{,6}, /proc/PID/cgroup, unit
// files, ListenStream=, systemctl output and timespans (fd links, the units that
// mention a port and the protected units are in proc-fd, socket-units and
// protection's own files).
import { describe, expect, it } from 'vitest';
import { busyPorts, parseProcNetTcp } from '../../src/observe/listeners.js';
import { parseCgroup, unitKind } from '../../src/systemd/cgroup.js';
import { listenStreamPort, socketUnitOf, type UnitFile } from '../../src/systemd/socket-unit.js';
import { effectiveList, parseUnitText } from '../../src/systemd/unit-file.js';
import { parseListSockets, parseTimespanMs } from '../../src/systemd/systemctl-output.js';

// Lines as this kernel prints them (captured from node:net listeners).
const TCP = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 0100007F:98EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 34009 1 000000000f102193 100 0 0 10 0',
  '   1: 00000000:280A 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 34008 1 00000000aa9868b1 100 0 0 10 0',
  // An established connection to 10250 is not a listener.
  '   2: 0100007F:280A 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 34100 1 0000000000000000 20 4 30 10 -1',
].join('\n');

const TCP6 = [
  '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 00000000000000000000000000000000:192B 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 34013 1 00000000b8b17bbe 100 0 0 10 0',
  '   1: 00000000000000000000000001000000:0941 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 34011 1 00000000b8945f91 100 0 0 10 0',
  '   2: 0000000000000000FFFF00000100007F:0944 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 34012 1 00000000a2e14740 100 0 0 10 0',
  '   3: 0000000000000000FFFF00000100007F:0944 0000000000000000FFFF00000100007F:9999 06 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 20 4 30 10 -1',
].join('\n');

describe('/proc/net/tcp and tcp6', () => {
  it('reads IPv4 listeners: any and loopback-only, ignoring established sockets', () => {
    expect(parseProcNetTcp(TCP, 'ipv4')).toEqual([
      { family: 'ipv4', address: '127.0.0.1', port: 0x98eb, inode: 34009 },
      { family: 'ipv4', address: '0.0.0.0', port: 10250, inode: 34008 },
    ]);
  });

  it('reads IPv6 listeners: ::, ::1 and a v4-mapped address; TIME_WAIT is skipped', () => {
    expect(parseProcNetTcp(TCP6, 'ipv6')).toEqual([
      { family: 'ipv6', address: '::', port: 6443, inode: 34013 },
      { family: 'ipv6', address: '::1', port: 2369, inode: 34011 },
      { family: 'ipv6', address: '::ffff:7f00:1', port: 2372, inode: 34012 },
    ]);
  });

  it('busy ports come from both families, ascending, once each', () => {
    const all = [...parseProcNetTcp(TCP, 'ipv4'), ...parseProcNetTcp(TCP6, 'ipv6')];
    expect(busyPorts(all, [10259, 10250, 6443, 2379, 2369])).toEqual([2369, 6443, 10250]);
  });
});

describe('/proc/PID/cgroup', () => {
  it('cgroup v2: the service is the last element under system.slice', () => {
    const p = parseCgroup('0::/system.slice/node-exporter.service\n')!;
    expect(p).toMatchObject({ hierarchy: 'v2', unit: 'node-exporter.service', unitKind: 'service', slice: 'system.slice', userUnit: null, container: null });
  });

  it('cgroup v2: nested slices and a delegated subgroup below the service', () => {
    expect(parseCgroup('0::/system.slice/monitoring.slice/agent.service\n')).toMatchObject({ unit: 'agent.service', slice: 'monitoring.slice' });
    expect(parseCgroup('0::/system.slice/containerd.service/sub/group\n')).toMatchObject({ unit: 'containerd.service', slice: 'system.slice' });
  });

  it('cgroup v2: a login session scope, init.scope for PID 1, a user manager unit', () => {
    expect(parseCgroup('0::/user.slice/user-1000.slice/session-3.scope\n')).toMatchObject({
      unit: 'session-3.scope',
      unitKind: 'scope',
      slice: 'user-1000.slice',
    });
    expect(parseCgroup('0::/init.scope\n')).toMatchObject({ unit: 'init.scope', unitKind: 'scope', slice: null });
    expect(parseCgroup('0::/user.slice/user-1000.slice/user@1000.service/app.slice/dev-server.service\n')).toMatchObject({
      unit: 'user@1000.service',
      userUnit: 'dev-server.service',
    });
    expect(parseCgroup('0::/user.slice/user-1000.slice/user@1000.service/init.scope\n')).toMatchObject({ unit: 'user@1000.service', userUnit: 'init.scope' });
  });

  it('containers: runtime scopes and non-systemd cgroup trees', () => {
    const id = 'a'.repeat(64);
    expect(parseCgroup(`0::/system.slice/docker-${id}.scope\n`)!.container).toContain(`docker-${id}.scope`);
    expect(parseCgroup(`0::/machine.slice/libpod-${id}.scope/container\n`)!.container).toContain('libpod');
    expect(parseCgroup(`0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/cri-containerd-${id}.scope\n`)!.container).toContain(
      'cri-containerd',
    );
    const docker = parseCgroup(`12:pids:/docker/${id}\n1:name=systemd:/docker/${id}\n0::/\n`)!;
    expect(docker).toMatchObject({ hierarchy: 'v1-systemd', unit: null });
    expect(docker.container).toContain(`/docker/${id}`);
    expect(parseCgroup('0::/lxc.payload.web/system.slice/nginx.service\n')!.container).toContain('lxc.payload.web');
  });

  it('cgroup v1 (legacy): the name=systemd line, not the controllers', () => {
    const text = [
      '11:memory:/system.slice/agent.service',
      '10:cpu,cpuacct:/system.slice/agent.service',
      '4:pids:/system.slice/agent.service',
      '1:name=systemd:/system.slice/agent.service',
    ].join('\n');
    expect(parseCgroup(text)).toMatchObject({ hierarchy: 'v1-systemd', unit: 'agent.service' });
  });

  it('hybrid: "0::/" next to a v1 name=systemd path defers to v1', () => {
    const text = ['1:name=systemd:/user.slice/user-0.slice/session-1.scope', '0::/'].join('\n');
    expect(parseCgroup(text)).toMatchObject({ hierarchy: 'v1-systemd', unit: 'session-1.scope' });
    // Hybrid with the unified tree in use: both agree, v2 is taken.
    expect(parseCgroup('1:name=systemd:/system.slice/a.service\n0::/system.slice/a.service\n')).toMatchObject({ hierarchy: 'v2', unit: 'a.service' });
  });

  it('v1 without a systemd hierarchy: the first controller that names a unit', () => {
    const text = ['4:memory:/process_api/096f35b4', '3:cpu:/system.slice/agent.service', '0::/'].join('\n');
    expect(parseCgroup(text)).toMatchObject({ hierarchy: 'v1-controller', unit: 'agent.service' });
  });

  it('no unit at all: the root cgroup (this sandbox: PID 1 is not systemd)', () => {
    const text = ['9:name=systemd:/', '4:memory:/process_api/096f35b4', '0::/'].join('\n');
    expect(parseCgroup(text)).toMatchObject({ unit: null, container: null, path: '/' });
    expect(parseCgroup('')).toBeNull();
  });

  it('unit kinds', () => {
    expect(unitKind('a.socket')).toBe('socket');
    expect(unitKind('system.slice')).toBe('slice');
    expect(unitKind('getty@tty1.service')).toBe('service');
    expect(unitKind('process_api')).toBeNull();
    expect(unitKind('payload')).toBeNull();
  });
});

describe('unit files', () => {
  const unit = (name: string, text: string, ...dropIns: string[]): UnitFile => ({
    name,
    fragment: `/etc/systemd/system/${name}`,
    masked: false,
    directives: [
      ...parseUnitText(text, `/etc/systemd/system/${name}`),
      ...dropIns.flatMap((t, i) => parseUnitText(t, `/etc/systemd/system/${name}.d/${i}.conf`)),
    ],
  });

  it('ListenStream= forms', () => {
    expect(listenStreamPort('10250')).toBe(10250);
    expect(listenStreamPort('0.0.0.0:10250')).toBe(10250);
    expect(listenStreamPort('127.0.0.1:6443')).toBe(6443);
    expect(listenStreamPort('[::]:10250')).toBe(10250);
    expect(listenStreamPort('[::1]:2379')).toBe(2379);
    // The scope follows the port (systemd's in_addr_port_ifindex_name_from_string_auto); inside the brackets systemd refuses it.
    expect(listenStreamPort('[fe80::1]:2380%eth0')).toBe(2380);
    expect(listenStreamPort('[fe80::1%eth0]:2380')).toBeNull();
    expect(listenStreamPort('/run/agent.sock')).toBeNull();
    expect(listenStreamPort('@abstract')).toBeNull();
    expect(listenStreamPort('vsock:2:1234')).toBeNull();
    expect(listenStreamPort('70000')).toBeNull();
  });

  it('parses sections, comments and continuations; a socket names its service', () => {
    const s = socketUnitOf(
      unit(
        'agent.socket',
        '# comment\n[Unit]\nDescription=x\n\n[Socket]\nListenStream=[::]:10250\nListenStream=/run/agent.sock\n; other comment\nBindIPv6Only=both\n[Install]\nWantedBy=sockets.target\n',
      ),
    );
    expect(s.listens.map((l) => [l.port, l.directive.line])).toEqual([[10250, 6]]);
    expect(s.service).toBe('agent.service');
    expect(socketUnitOf(unit('a.socket', '[Socket]\nListenStream=10250\nService=other.service\n')).service).toBe('other.service');
    expect(socketUnitOf(unit('b.socket', '[Socket]\nListenStream=10250\nAccept=yes\n')).service).toBe('b@.service');
  });

  it('drop-ins extend lists and an empty assignment resets them', () => {
    const u = unit('agent.socket', '[Socket]\nListenStream=10250\n', '[Socket]\nListenStream=\nListenStream=0.0.0.0:6443\n');
    expect(socketUnitOf(u).listens.map((l) => l.port)).toEqual([6443]);
    expect(effectiveList(u.directives, 'Socket', 'ListenStream').map((d) => d.file)).toEqual(['/etc/systemd/system/agent.socket.d/0.conf']);
  });
});

describe('unit-file lines systemd passes over (conf-parser.c)', () => {
  it("a line with no '=' or no key is no directive; a byte-order mark counts only at the start of the file", () => {
    const d = parseUnitText('\ufeff[Unit]\nWantsx\n=b.service\nDescription=a\ufeffb\n', '/etc/systemd/system/x.service');
    expect(d.map((x) => [x.section, x.key, x.value, x.line])).toEqual([['Unit', 'Description', 'a\ufeffb', 4]]);
    expect(parseUnitText('[Unit]\nDescription=a\ufeffb\n', '/etc/systemd/system/y.service')[0]!.value).toBe('a\ufeffb');
  });
});

describe('systemctl output and policy', () => {
  it('list-sockets lines', () => {
    const out = [
      '/run/dbus/system_bus_socket dbus.socket            dbus.service',
      '[::]:22                     ssh.socket             ssh.service',
      '0.0.0.0:10250               agent.socket           agent.service',
      '[::]:10259                  idle.socket',
    ].join('\n');
    const p = parseListSockets(out);
    expect(p.find((s) => s.port === 10250)).toEqual({ listen: '0.0.0.0:10250', port: 10250, unit: 'agent.socket', activates: ['agent.service'] });
    expect(p.find((s) => s.unit === 'dbus.socket')!.port).toBeNull();
    expect(p.find((s) => s.port === 10259)!.activates).toEqual([]);
  });

  it('list-sockets: ACTIVATES is the third column on; a socket path that ends in ".service" is no activated unit', () => {
    const p = parseListSockets(
      '/run/odd/api.service        odd.socket             odd.service,odd-helper.service\n[fe80::1]:2380%eth0 peer.socket peer.service',
    );
    expect(p[0]).toEqual({ listen: '/run/odd/api.service', port: null, unit: 'odd.socket', activates: ['odd.service', 'odd-helper.service'] });
    // systemctl prints a scope after the port (sockaddr_pretty).
    expect(p[1]!.port).toBe(2380);
  });

  it('RestartUSec timespans', () => {
    expect(parseTimespanMs('100ms')).toBe(100);
    expect(parseTimespanMs('5s')).toBe(5000);
    expect(parseTimespanMs('1min 30s')).toBe(90_000);
    expect(parseTimespanMs('2')).toBe(2000);
    expect(parseTimespanMs('500us')).toBe(1);
    expect(parseTimespanMs('')).toBeNull();
    expect(parseTimespanMs('soon')).toBeNull();
  });
});
