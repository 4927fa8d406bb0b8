// Pure parsers behind PortFree: /proc/PID/cgroup, unit files and ListenStream= (the kernel's
// listeners, fd links, systemctl output, the units that mention a port and the protected units
// are in their own modules' files).
import { describe, expect, it } from 'vitest';
import { parseCgroup, unitKind } from '../../src/systemd/cgroup.js';
import { listenStreamPort, socketUnitOf } from '../../src/systemd/socket-unit.js';
import { effectiveList } from '../../src/systemd/unit-file.js';
import { etcUnitFile } from '../helpers/unit-file.js';

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
  const unit = etcUnitFile;

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
