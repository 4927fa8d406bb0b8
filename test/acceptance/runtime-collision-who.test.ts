// What kubespray does about a container runtime already on the host, from a
// hand-written checkout in kubespray's layout (roles/container-engine as
// v2.24.0 shapes it, abridged): a removal task naming the Debian package, the
// template task writing /etc/containerd/config.toml, and the stat of
// /run/ostree-booted answered from the facts. Expected verdicts and the
// file:line citations are read off the fixture texts by hand.
import { describe, expect, it } from 'vitest';
import type { RuntimeCollisionFacts } from '../../src/acceptance/checker.js';
import { runtimeCollisionWhoFixes } from '../../src/acceptance/runtime-collision-who.js';
import { fixtureNode } from '../helpers/kubespray-fixture.js';

const CE = 'roles/container-engine';
const RUNC_TASKS =
  '---\n- name: Runc | check if fedora coreos\n  stat:\n    path: /run/ostree-booted\n  register: ostree\n\n' +
  '- name: Runc | set is_ostree\n  set_fact:\n    is_ostree: "{{ ostree.stat.exists }}"\n\n' +
  '- name: Runc | Uninstall runc package managed by package manager\n  package:\n    name: "{{ runc_package_name }}"\n    state: absent\n  when:\n    - not is_ostree\n';
const CONFIG_TASK_TEXT =
  '---\n- name: Containerd | Copy containerd config file\n  template:\n    src: config.toml.j2\n    dest: "{{ containerd_cfg_dir }}/config.toml"\n';
const RUNC_REMOVAL = `${CE}/runc/tasks/main.yml:11 Runc | Uninstall runc package managed by package manager`;
const CONFIG_TASK = `${CE}/containerd/tasks/main.yml:2 Containerd | Copy containerd config file`;
const MANAGER = `${CE}/containerd/defaults/main.yml:2 container_manager`;

function files(o: { manager?: string; deploy?: string; containerdTasks?: string; runcTasks?: string; noContainerd?: boolean } = {}) {
  const f: Record<string, string> = {
    [`${CE}/containerd/defaults/main.yml`]: `---\ncontainer_manager: ${o.manager ?? 'containerd'}\ndeploy_container_engine: ${o.deploy ?? 'true'}\ncontainerd_cfg_dir: /etc/containerd\n`,
    [`${CE}/containerd/meta/main.yml`]: '---\ndependencies:\n  - role: container-engine/runc\n',
    [`${CE}/containerd/tasks/main.yml`]: o.containerdTasks ?? CONFIG_TASK_TEXT,
    [`${CE}/runc/defaults/main.yml`]: '---\nrunc_package_name: runc\n',
    [`${CE}/runc/tasks/main.yml`]: o.runcTasks ?? RUNC_TASKS,
  };
  if (o.noContainerd) {
    for (const k of Object.keys(f)) if (k.startsWith(`${CE}/containerd/`) && !k.endsWith('defaults/main.yml')) delete f[k];
  }
  return f;
}
const pkg = (name: string, depends: string[] = []) => ({ name, status: 'install ok installed', line: 1, depends });
const facts = (o: Partial<RuntimeCollisionFacts> = {}): RuntimeCollisionFacts => ({
  packages: [],
  systemdCgroupFalse: null,
  exists: { '/run/ostree-booted': false },
  ...o,
});

describe('runtimeCollisionWhoFixes: a Debian runtime package', () => {
  it('runc on a host without /run/ostree-booted: kubespray removes it, citing the task and container_manager', async () => {
    expect(await runtimeCollisionWhoFixes(await fixtureNode(files()), facts({ packages: [pkg('runc')] }))).toEqual({
      who: 'kubespray',
      says: `kubespray removes Debian's runc (${RUNC_REMOVAL})`,
      evidence: [MANAGER, RUNC_REMOVAL],
    });
  });
  it('on an ostree host the stat says exists, the removal is skipped: the operator purges it', async () => {
    const r = await runtimeCollisionWhoFixes(await fixtureNode(files()), facts({ packages: [pkg('runc')], exists: { '/run/ostree-booted': true } }));
    expect(r.who).toBe('operator');
    expect(r.says).toBe("no task of kubespray's container-engine roles removes Debian's runc on this node: purge it (apt purge runc) before the install");
  });
  it("containerd depends on runc, which kubespray removes: unknown (apt's dependants are not judged)", async () => {
    const r = await runtimeCollisionWhoFixes(await fixtureNode(files()), facts({ packages: [pkg('containerd', ['runc', 'libc6'])] }));
    expect(r.who).toBe('unknown');
    expect(r.says).toContain(`${RUNC_REMOVAL} removes runc, which containerd depends on (whether apt takes containerd with it is not judged)`);
  });
  it('a package no task names and none of whose dependencies are removed: the operator', async () => {
    const r = await runtimeCollisionWhoFixes(await fixtureNode(files()), facts({ packages: [pkg('docker.io', ['adduser'])] }));
    expect(r.who).toBe('operator');
  });
  it('one package kubespray removes and one it does not: the operator is the worst of them', async () => {
    const r = await runtimeCollisionWhoFixes(await fixtureNode(files()), facts({ packages: [pkg('runc'), pkg('docker.io')] }));
    expect(r.who).toBe('operator');
    expect(r.says.split('; ')).toHaveLength(2);
    expect(r.evidence).toEqual([MANAGER, RUNC_REMOVAL]);
  });
  it('a removal over a loop of names, comma-separated in one item: each name counts', async () => {
    const runcTasks =
      '---\n- name: Remove old engines\n  package:\n    name: "{{ item }}"\n    state: absent\n  loop:\n    - "runc, docker.io"\n    - containerd\n';
    for (const name of ['runc', 'docker.io', 'containerd']) {
      const r = await runtimeCollisionWhoFixes(await fixtureNode(files({ runcTasks })), facts({ packages: [pkg(name)] }));
      expect(r, name).toMatchObject({ who: 'kubespray', evidence: [MANAGER, `${CE}/runc/tasks/main.yml:2 Remove old engines`] });
    }
  });
  it('state present is not a removal', async () => {
    const runcTasks = '---\n- name: Install runc\n  package:\n    name: runc\n    state: present\n';
    const r = await runtimeCollisionWhoFixes(await fixtureNode(files({ runcTasks })), facts({ packages: [pkg('runc')] }));
    expect(r.who).toBe('operator');
  });
  it('a removal whose names cannot be evaluated: unknown, naming the task', async () => {
    const runcTasks = '---\n- name: Remove it\n  package:\n    name: "{{ never_defined }}"\n    state: absent\n';
    const r = await runtimeCollisionWhoFixes(await fixtureNode(files({ runcTasks })), facts({ packages: [pkg('runc')] }));
    expect(r.who).toBe('unknown');
    expect(r.says).toContain(`${CE}/runc/tasks/main.yml:2 Remove it: its package names cannot be evaluated`);
  });
});

describe('runtimeCollisionWhoFixes: a config.toml with SystemdCgroup = false', () => {
  const cfg = facts({ systemdCgroupFalse: 'plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options' });
  it("kubespray's template task writes it anew", async () => {
    expect(await runtimeCollisionWhoFixes(await fixtureNode(files()), cfg)).toEqual({
      who: 'kubespray',
      says: `kubespray writes /etc/containerd/config.toml anew from its template (${CONFIG_TASK})`,
      evidence: [MANAGER, CONFIG_TASK],
    });
  });
  it('a task writing another dest, or none: the operator', async () => {
    const containerdTasks = CONFIG_TASK_TEXT.replace('{{ containerd_cfg_dir }}/config.toml', '/etc/containerd/other.toml');
    const r = await runtimeCollisionWhoFixes(await fixtureNode(files({ containerdTasks })), cfg);
    expect(r).toMatchObject({ who: 'operator', says: expect.stringContaining('set SystemdCgroup = true there or remove it') });
  });
  it('the task skipped on this node (when false): the operator', async () => {
    const containerdTasks = `${CONFIG_TASK_TEXT}  when: false\n`;
    expect((await runtimeCollisionWhoFixes(await fixtureNode(files({ containerdTasks })), cfg)).who).toBe('operator');
  });
  it("the template's dest cannot be evaluated: unknown", async () => {
    const containerdTasks = CONFIG_TASK_TEXT.replace('{{ containerd_cfg_dir }}', '{{ nowhere_defined }}');
    const r = await runtimeCollisionWhoFixes(await fixtureNode(files({ containerdTasks })), cfg);
    expect(r.who).toBe('unknown');
    expect(r.says).toContain("'s dest cannot be evaluated");
  });
});

describe('runtimeCollisionWhoFixes: the engine kubespray installs', () => {
  it('container_manager crio: unknown, naming where it is set', async () => {
    const r = await runtimeCollisionWhoFixes(await fixtureNode(files({ manager: 'crio' })), facts({ packages: [pkg('runc')] }));
    expect(r).toEqual({
      who: 'unknown',
      says: `what kubespray does about it cannot be evaluated: container_manager is "crio" (${MANAGER}): only kubespray's containerd is evaluated here`,
      evidence: [MANAGER],
    });
  });
  it('deploy_container_engine false: kubespray installs none, the operator', async () => {
    const r = await runtimeCollisionWhoFixes(await fixtureNode(files({ deploy: 'false' })), facts({ packages: [pkg('runc')] }));
    expect(r).toEqual({
      who: 'operator',
      says: `kubespray installs no container engine on this node (deploy_container_engine is false, ${CE}/containerd/defaults/main.yml:3 deploy_container_engine)`,
      evidence: [`${CE}/containerd/defaults/main.yml:3 deploy_container_engine`],
    });
  });
  it('container_manager not defined at all: unknown', async () => {
    const f = files();
    f[`${CE}/containerd/defaults/main.yml`] = '---\ndeploy_container_engine: true\n';
    const r = await runtimeCollisionWhoFixes(await fixtureNode(f), facts({ packages: [pkg('runc')] }));
    expect(r).toMatchObject({ who: 'unknown', says: expect.stringContaining('container_manager is not defined for container-engine/containerd') });
  });
  it('deploy_container_engine templated from an undefined variable: unknown with the reason', async () => {
    const r = await runtimeCollisionWhoFixes(await fixtureNode(files({ deploy: '"{{ undefined_var }}"' })), facts({ packages: [pkg('runc')] }));
    expect(r.who).toBe('unknown');
    expect(r.says).toContain(`deploy_container_engine (${CE}/containerd/defaults/main.yml:3)`);
  });
});
