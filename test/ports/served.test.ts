// What a unit serves, read from a fixture root's configuration as the server
// itself would: each expected service, port and line is worked out by hand
// from the files written here.
import { afterEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { configuredServices, serverKind, servesOthers, unitCgroupDir, unitServes } from '../../src/ports/served.js';
import type { TargetFs } from '../../src/host.js';
import { parseCgroup } from '../../src/systemd/cgroup.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
});

function root(files: Record<string, string>): Host {
  const r = fs.mkdtempSync(path.join(os.tmpdir(), 'served-'));
  roots.push(r);
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.join(r, path.dirname(f)), { recursive: true });
    fs.writeFileSync(path.join(r, f), text);
  }
  return new Host({ root: r });
}

const SERVICES = 'echo 7/tcp\necho 7/udp\ndiscard 9/tcp sink null\n';

describe('configuredServices', () => {
  it('inetd: every entry of inetd.conf with its port, the one serving a wanted port marked', async () => {
    const host = root({
      '/etc/services': SERVICES,
      '/etc/inetd.conf':
        '# inetd.conf\ndiscard stream tcp nowait root internal\necho dgram udp wait root internal\n10250 stream tcp nowait nobody /bin/cat cat\n',
    });
    const r = await configuredServices(host, 'inetd', new Set([10250]));
    expect(r.problems).toEqual([]);
    expect(r.services.map((s) => [s.name, s.port, s.proto, s.line, s.wanted])).toEqual([
      ['discard', 9, 'tcp', 2, false],
      ['echo', 7, 'udp', 3, false],
      ['10250', 10250, 'tcp', 4, true],
    ]);
    expect(r.services[2]!.text).toBe('10250 stream tcp nowait nobody /bin/cat cat');
  });

  it('inetd: a service /etc/services does not name is a problem with its file and line, not a silent gap', async () => {
    const host = root({ '/etc/services': SERVICES, '/etc/inetd.conf': 'kubelet stream tcp nowait root /bin/cat cat\n' });
    const r = await configuredServices(host, 'inetd', new Set([10250]));
    expect(r.services.map((s) => [s.name, s.port])).toEqual([['kubelet', null]]);
    expect(r.problems).toEqual(['/etc/inetd.conf:1: service kubelet is not in /etc/services, so its port is unknown']);
  });

  it('xinetd: the blocks of xinetd.conf and its includedir, without the disabled ones and the skipped files', async () => {
    const host = root({
      '/etc/services': SERVICES,
      '/etc/xinetd.conf': 'defaults\n{\n}\nincludedir /etc/xinetd.d\n',
      '/etc/xinetd.d/echo': 'service echo\n{\n\tsocket_type = stream\n\tdisable = no\n}\n',
      '/etc/xinetd.d/kubeish': 'service kubeish\n{\n\ttype = UNLISTED\n\tsocket_type = stream\n\tport = 10250\n}\n',
      '/etc/xinetd.d/discard': 'service discard\n{\n\tsocket_type = stream\n\tdisable = yes\n}\n',
      '/etc/xinetd.d/echo.dpkg-old': 'service echo\n{\n\tsocket_type = dgram\n}\n',
    });
    const r = await configuredServices(host, 'xinetd', new Set([10250]));
    expect(r.problems).toEqual([]);
    expect(r.services.map((s) => [s.name, s.port, s.proto, s.file, s.line, s.disableLine, s.endLine, s.wanted])).toEqual([
      ['echo', 7, 'tcp', '/etc/xinetd.d/echo', 1, 4, 5, false],
      ['kubeish', 10250, 'tcp', '/etc/xinetd.d/kubeish', 1, null, 6, true],
    ]);
  });

  it('supervisor: every program with its file and line', async () => {
    const host = root({
      '/etc/supervisor/supervisord.conf': '[include]\nfiles = conf.d/*.conf\n',
      '/etc/supervisor/conf.d/a.conf': '[program:api]\ncommand=/usr/bin/api 10250\n\n[program:worker]\ncommand=/usr/bin/worker\n',
    });
    const r = await configuredServices(host, 'supervisor', new Set([10250]));
    expect(r.services.map((s) => [s.name, s.file, s.line])).toEqual([
      ['api', '/etc/supervisor/conf.d/a.conf', 2],
      ['worker', '/etc/supervisor/conf.d/a.conf', 5],
    ]);
  });
});

describe('serverKind, unitCgroupDir, servesOthers', () => {
  it('knows the servers by their unit or command name, and nothing else', () => {
    expect([
      serverKind('inetd.service', 'inetd'),
      serverKind('openbsd-inetd.service', null),
      serverKind('foo.service', 'inetutils-inetd'),
      serverKind('xinetd.service', null),
      serverKind('supervisor.service', 'supervisord'),
      serverKind('nginx.service', 'nginx'),
    ]).toEqual(['inetd', 'inetd', 'inetd', 'xinetd', 'supervisor', null]);
  });

  it("gives the unit's own cgroup directory, on v2 and on v1's systemd hierarchy", () => {
    expect(unitCgroupDir(parseCgroup('0::/system.slice/inetd.service\n')!)).toBe('/sys/fs/cgroup/system.slice/inetd.service');
    expect(unitCgroupDir(parseCgroup('0::/system.slice/nginx.service/workers\n')!)).toBe('/sys/fs/cgroup/system.slice/nginx.service');
    expect(unitCgroupDir(parseCgroup('1:name=systemd:/system.slice/inetd.service\n')!)).toBe('/sys/fs/cgroup/systemd/system.slice/inetd.service');
  });

  it('a unit serves others when it has another service, socket or process, not for the wanted service alone', () => {
    const base = { unit: 'inetd.service', server: 'inetd' as const, sockets: [], processes: [], unknown: null };
    const wanted = { by: 'inetd' as const, name: '10250', port: 10250, proto: 'tcp' as const, file: 'f', line: 1, text: 't', wanted: true };
    expect(servesOthers({ ...base, services: [wanted] })).toBe(false);
    expect(servesOthers({ ...base, services: [wanted, { ...wanted, name: 'echo', port: 7, wanted: false }] })).toBe(true);
    expect(servesOthers({ ...base, services: [], processes: [{ pid: 9, comm: 'in.telnetd' }] })).toBe(true);
  });
});

describe('unitServes', () => {
  // A kernel as the unit's cgroup and /proc show it: the unit's processes, their command names.
  const kernel = (procs: Record<string, string>, comms: Record<number, string>): TargetFs =>
    ({
      readKernel: async (t: string) => {
        if (t in procs) return procs[t]!;
        const m = /^\/proc\/(\d+)\/comm$/.exec(t);
        if (m && comms[Number(m[1])]) return `${comms[Number(m[1])]}\n`;
        return null;
      },
      readDir: async () => [],
      readFile: async () => null,
    }) as unknown as TargetFs;
  const placement = parseCgroup('0::/system.slice/wrapper.service\n')!;
  const dir = '/sys/fs/cgroup/system.slice/wrapper.service/cgroup.procs';

  it("leaves out the unit's main process and the listener's ancestors, and names a process that is neither", async () => {
    // sh -c 'tinyd PORT & exec sleep infinity': sleep is MainPID (20), tinyd (21) holds the port; 30 is someone else's helper.
    const host = kernel({ [dir]: '20\n21\n30\n' }, { 20: 'sleep', 21: 'tinyd', 30: 'in.telnetd' });
    const held = { unit: 'wrapper.service', placement, holders: [{ pid: 21, comm: 'tinyd' }], chain: [20, 21] };
    const sockets = [
      { proto: 'udp' as const, address: '0.0.0.0', port: 5353, family: 'ipv4' as const, inode: 7 },
      { proto: 'tcp' as const, address: '::', port: 8080, family: 'ipv6' as const, inode: 8 },
      { proto: 'tcp' as const, address: '0.0.0.0', port: 9000, family: 'ipv4' as const, inode: 9 },
    ];
    const holders = new Map([
      [7, [30]],
      [8, [21]],
      [9, [99]],
    ]);
    const r = await unitServes(host, held, sockets, holders, new Set([10250]));
    expect(r).toEqual({
      unit: 'wrapper.service',
      server: null,
      services: [],
      // By port: 5353/udp (held by pid 30, in the unit) before 8080/tcp (the holder's own); 9000 is another unit's.
      sockets: [
        { proto: 'udp', address: '0.0.0.0', port: 5353 },
        { proto: 'tcp', address: '[::]', port: 8080 },
      ],
      processes: [{ pid: 30, comm: 'in.telnetd' }],
      unknown: null,
    });
  });

  it('counts the processes cgroup.procs lists as 0 (another PID namespace sharing the cgroup) apart, never as a pid 0', async () => {
    // What a container sees when two containers' systemd put a unit of one name in one shared cgroup: its own
    // holder by pid, the other container's two processes as 0 (kernel/cgroup/cgroup.c: pid_vnr of a task outside
    // the reader's namespace is 0).
    const host = kernel({ [dir]: '0\n37\n0\n' }, { 37: 'systemd-socket-' });
    const r = await unitServes(
      host,
      { unit: 'wrapper.service', placement, holders: [{ pid: 37, comm: 'systemd-socket-' }], chain: [37] },
      [],
      new Map(),
      new Set([6443]),
    );
    expect(r.processes).toEqual([]);
    expect(r.hidden).toBe(2);
    expect(servesOthers(r)).toBe(true);
  });

  it('has no hidden count when every process is visible', async () => {
    const host = kernel({ [dir]: '37\n' }, { 37: 'systemd-socket-' });
    const r = await unitServes(
      host,
      { unit: 'wrapper.service', placement, holders: [{ pid: 37, comm: 'systemd-socket-' }], chain: [37] },
      [],
      new Map(),
      new Set([6443]),
    );
    expect(r).not.toHaveProperty('hidden');
    expect(servesOthers(r)).toBe(false);
  });

  it('names the cgroup it could not read', async () => {
    const host = kernel({}, {});
    const r = await unitServes(host, { unit: 'wrapper.service', placement, holders: [{ pid: 21, comm: 'tinyd' }], chain: [] }, [], new Map(), new Set([10250]));
    expect(r.unknown).toBe(`the processes of wrapper.service could not be listed (${dir.replace('/cgroup.procs', '')}/cgroup.procs)`);
  });
});
