// /proc/PID/cgroup -> owning unit, against systemd's own rule. No program on
// this machine applies the rule without a booted systemd (systemd-cgls and
// systemd-cgtop need the running manager; busctl and systemd-analyze have no
// offline cgroup lookup), so each expectation is stated from the rule in
// systemd's src/basic/cgroup-util.c and src/basic/unit-name.c:
//
// - cg_path_get_unit: skip_slices() skips every leading element that, after
//   cg_unescape(), is a valid plain unit name ending in ".slice"; the next
//   element, cg_unescape()d, is the unit if unit_name_is_valid() accepts it
//   (plain or instance) and it is no slice; otherwise there is no unit.
// - cg_unescape drops one leading '_': cg_escape writes "_NAME" for a name
//   that starts with '_' or '.', or whose part before the last dot is a cgroup
//   controller's name (cpu, io, memory, pids, ...), or "cgroup.*", so that it
//   cannot clash with the kernel's own files.
// - unit_name_is_valid: the characters before the suffix are [0-9A-Za-z:-_.\]
//   plus '@' (the first '@' starts the instance), and the suffix after the
//   last dot is a unit type (service, socket, scope, slice, mount, ...).
// - cg_path_get_user_unit: skip slices, then require user@UID.service (UID
//   all digits, parse_uid), then apply cg_path_get_unit to the rest.
// - /proc/PID/cgroup (proc(5), cgroups(7)): "hierarchy-ID:controller-list:path"
//   lines; "0::PATH" is the unified hierarchy; v1's named systemd hierarchy
//   has the list "name=systemd".
//
// The paths are the ones systemd makes: systemd-escape gives "\x2d" for '-' in
// a name component of a slice or machine ("system-serial\x2dgetty.slice",
// "machine-qemu\x2d1\x2ddebian.scope"). Container runtimes name their scopes
// and trees themselves (moby "docker-ID.scope" and cgroupfs "/docker/ID";
// podman "libpod-ID.scope", "libpod-conmon-ID.scope", "/libpod_parent";
// containerd's CRI "cri-containerd-ID.scope"; CRI-O "crio-ID.scope",
// "crio-conmon-ID.scope"; machined "machine-NAME.scope"; systemd-nspawn@.service;
// kubelet's cgroupfs "/kubepods/..."; LXC "/lxc/NAME", "/lxc.payload.NAME").
import { describe, expect, it } from 'vitest';
import { containerScopeOf, parseCgroup } from '../../src/systemd/cgroup.js';

const ID = '3f4e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f';
const v2 = (p: string) => parseCgroup(`0::${p}\n`)!;

describe('cg_path_get_unit: the unit after the slices', () => {
  it('escaped names: cg_unescape drops the "_" systemd writes for a name that could clash with a kernel file', () => {
    // A service named io.service lives in "_io.service" ("io" is a controller), as does a slice named cpu.slice.
    expect(v2('/system.slice/_io.service')).toMatchObject({ unit: 'io.service', unitKind: 'service', slice: 'system.slice', container: null });
    expect(v2('/_cpu.slice/_memory.service')).toMatchObject({ unit: 'memory.service', slice: 'cpu.slice' });
    expect(v2('/system.slice/__private.service')).toMatchObject({ unit: '_private.service' });
    expect(v2('/user.slice/user-1000.slice/user@1000.service/app.slice/_pids.service')).toMatchObject({ unit: 'user@1000.service', userUnit: 'pids.service' });
  });

  it('systemd-escape in slice and instance names: "\\x2d" stays part of the name', () => {
    expect(v2('/system.slice/system-getty.slice/getty@tty1.service')).toMatchObject({ unit: 'getty@tty1.service', slice: 'system-getty.slice' });
    expect(v2('/system.slice/system-serial\\x2dgetty.slice/serial-getty@ttyS0.service')).toMatchObject({
      unit: 'serial-getty@ttyS0.service',
      slice: 'system-serial\\x2dgetty.slice',
    });
  });

  it('an element that unit_name_is_valid refuses is no unit: the process is only in the slice', () => {
    // '+' is no unit name character; "service-x" is no unit type.
    expect(v2('/system.slice/agent+old.service')).toMatchObject({ unit: null, unitKind: null, slice: 'system.slice' });
    expect(v2('/system.slice/agent.service-x')).toMatchObject({ unit: null, slice: 'system.slice' });
    // The kernel prints the directory's name as it is: a trailing blank belongs to it, and no unit name holds one.
    expect(parseCgroup('0::/system.slice/agent.service \n')).toMatchObject({ unit: null, slice: 'system.slice' });
  });

  it('kubepods slices are ordinary slices: the container scope below them is the unit', () => {
    expect(v2(`/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0c8b.slice/crio-${ID}.scope`)).toMatchObject({
      unit: `crio-${ID}.scope`,
      unitKind: 'scope',
      slice: 'kubepods-burstable-pod0c8b.slice',
    });
  });
});

describe('cg_path_get_user_unit: only below user@UID.service', () => {
  it('the user unit after user@UID.service and its slices, when it is a valid unit name', () => {
    expect(v2('/user.slice/user-1000.slice/user@1000.service/app.slice/agent.service-x')).toMatchObject({ unit: 'user@1000.service', userUnit: null });
    expect(v2('/user.slice/user-1000.slice/user@1000.service/session.slice/dbus.socket')).toMatchObject({ userUnit: 'dbus.socket' });
  });

  it('a unit-named subgroup of any other service is no user unit', () => {
    // A delegated service that made a subgroup with a unit's name.
    expect(v2('/system.slice/builder.service/job.scope')).toMatchObject({ unit: 'builder.service', userUnit: null });
    // An instance of a template "backup-user@.service": skip_user_manager wants "user@" at the start.
    expect(v2('/system.slice/system-backup\\x2duser.slice/backup-user@1000.service/job.scope')).toMatchObject({
      unit: 'backup-user@1000.service',
      userUnit: null,
    });
    // An instance of user@.service whose instance is no UID (parse_uid refuses "1000.service-x").
    expect(v2('/user.slice/user-1000.slice/user@1000.service-x.service/app.slice/agent.service')).toMatchObject({
      unit: 'user@1000.service-x.service',
      userUnit: null,
    });
  });
});

describe('/proc/PID/cgroup lines', () => {
  it('a line without three fields is no cgroup line', () => {
    expect(parseCgroup('0:/system.slice/agent.service\n')).toBeNull();
    expect(parseCgroup('/system.slice/agent.service\n')).toBeNull();
    expect(parseCgroup('0:/system.slice/agent.service\n0::/system.slice/real.service\n')).toMatchObject({ hierarchy: 'v2', unit: 'real.service' });
  });

  it('docker on a host without systemd (cgroup v1, cgroupfs driver): the controllers name /docker/ID', () => {
    const p = parseCgroup([`12:memory:/docker/${ID}`, `11:cpu,cpuacct:/docker/${ID}`, `3:pids:/docker/${ID}`, '0::/'].join('\n'))!;
    expect(p).toMatchObject({ hierarchy: 'v1-controller', unit: null });
    expect(p.container).toContain(`/docker/${ID}`);
  });
});

describe("container runtimes' own names", () => {
  const unitOf = (slice: string, name: string) => v2(`/${slice}/${name}`);

  it('the names the runtimes make are containers', () => {
    for (const [slice, name] of [
      ['system.slice', `docker-${ID}.scope`],
      ['machine.slice', `libpod-${ID}.scope`],
      ['machine.slice', `libpod-conmon-${ID}.scope`],
      ['system.slice', `cri-containerd-${ID}.scope`],
      ['system.slice', `crio-${ID}.scope`],
      ['system.slice', `crio-conmon-${ID}.scope`],
      ['machine.slice', 'machine-qemu\\x2d1\\x2ddebian.scope'],
      ['machine.slice', 'systemd-nspawn@debian.service'],
    ]) {
      const p = unitOf(slice!, name!);
      expect(p.unit, name).toBe(name);
      expect(p.container, name).toContain(name);
    }
    // nspawn's payload below the service is still the container's.
    expect(v2('/machine.slice/systemd-nspawn@web.service/payload/system.slice/nginx.service')).toMatchObject({ unit: 'systemd-nspawn@web.service' });
    expect(v2('/machine.slice/systemd-nspawn@web.service/payload/system.slice/nginx.service').container).not.toBeNull();
  });

  it("a unit whose name only contains a runtime's name is the admin's own unit", () => {
    // Valid unit names the runtimes never make: a prefix before theirs, or more after their suffix.
    for (const name of [
      `backup-docker-${ID}.scope`,
      `docker-${ID}.scope-cleanup.service`,
      `old-libpod-${ID}.scope`,
      `libpod-${ID}.scope-gc.service`,
      `my-cri-containerd-${ID}.scope`,
      `cri-containerd-${ID}.scope-gc.service`,
      `old-crio-${ID}.scope`,
      `crio-${ID}.scope-gc.service`,
      'vm-machine-web.scope',
      'machine-web.scope-watch.service',
      'my-systemd-nspawn@web.service',
      'systemd-nspawn@web.service-log.socket',
    ]) {
      const p = unitOf('system.slice', name);
      expect(p.unit, name).toBe(name);
      expect(p.container, name).toBeNull();
    }
  });

  it("cgroup trees outside systemd: the runtimes' exact top names are containers, other hand-made trees are not", () => {
    for (const top of [
      `/docker/${ID}`,
      '/kubepods/besteffort/pod0c8b/abc',
      '/lxc/web',
      '/lxc.payload.web',
      '/machine/qemu-1-debian.libvirt-qemu',
      '/libpod_parent/libpod-abc',
      '/podruntime/runtime',
    ]) {
      expect(v2(top).container, top).toContain(top);
    }
    for (const top of [
      '/dockerd-test/x',
      '/ci-docker/x',
      '/legacy-kubepods/x',
      '/old-lxc.payload.web',
      '/nolxc/x',
      '/lxcfs/x',
      '/virtual-machine/x',
      '/machines/x',
      '/old-libpod_parent/x',
      '/libpod_parent2/x',
      '/my-podruntime/x',
    ]) {
      expect(v2(top), top).toMatchObject({ unit: null, container: null });
    }
  });
});

describe('containerScopeOf', () => {
  // Scope names as the runtimes make them: dockerd's and runc's systemd driver "docker-<64 hex>.scope", podman's
  // "libpod-<id>.scope" and conmon's "libpod-conmon-<id>.scope", containerd's CRI "cri-containerd-<id>.scope",
  // cri-o's "crio-<id>.scope" and "crio-conmon-<id>.scope".
  const ID = '4f2a9c1b7e3d5a6f8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a';
  it('gives the runtime and the id of a container scope', () => {
    expect(containerScopeOf(`docker-${ID}.scope`)).toEqual({ runtime: 'docker', id: ID });
    expect(containerScopeOf(`libpod-${ID}.scope`)).toEqual({ runtime: 'libpod', id: ID });
    expect(containerScopeOf(`libpod-conmon-${ID}.scope`)).toEqual({ runtime: 'libpod', id: ID });
    expect(containerScopeOf(`cri-containerd-${ID}.scope`)).toEqual({ runtime: 'cri-containerd', id: ID });
    expect(containerScopeOf(`crio-conmon-${ID}.scope`)).toEqual({ runtime: 'crio', id: ID });
  });
  it('is null for anything else', () => {
    expect(containerScopeOf('docker.service')).toBeNull();
    expect(containerScopeOf('docker-abc.scope')).toBeNull(); // fewer than 12 hex digits
    expect(containerScopeOf(`docker-conmon-${ID}.scope`)).toBeNull(); // docker has no conmon
    expect(containerScopeOf(`docker-${ID}.service`)).toBeNull();
    expect(containerScopeOf('machine-web.scope')).toBeNull(); // a container, but no runtime's id
  });
});
