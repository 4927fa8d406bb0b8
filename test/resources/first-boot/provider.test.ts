// The bake (--apply --root) and first_boot: what it installs into an image,
// through the write door, for each mode; systemctl --root is the oracle for
// whether the unit is enabled in the image.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUNDLE, buildBundleBeforeAll, fileWriter, runBundle, systemctlRootText } from '../../helpers/bundle-cli.js';
import { removedAfterEach } from '../../helpers/temp-dirs.js';
import { snapshot } from '../../helpers/snapshot.js';
import { toolOwned } from '../../helpers/lab-image.js';

const UNIT = 'k8s-host-reconcile-first-boot.service';
const roots = removedAfterEach();
buildBundleBeforeAll();

const reconcile = runBundle;

const systemctlRoot = systemctlRootText;

const AGENT =
  '[Unit]\nDescription=agent that binds 10250 some seconds after it starts\n[Service]\nExecStart=/usr/bin/python3 /opt/agent.py --port 10250\nRestart=always\n[Install]\nWantedBy=multi-user.target\n';

/** An image with an agent whose ExecStart names 10250 (a candidate offline), a swap line, and node unless told. */
function image(opts: { firstBoot?: string; node?: boolean; packaged?: boolean } = {}) {
  const root = mkdtempSync(path.join(tmpdir(), 'first-boot-'));
  roots.push(root);
  const put = fileWriter(root);
  put('etc/fstab', 'UUID=1 / ext4 defaults 0 1\n/swapfile none swap sw 0 0\n');
  put('etc/systemd/system/agent.service', AGENT);
  mkdirSync(path.join(root, 'etc/systemd/system/multi-user.target.wants'), { recursive: true });
  spawnSync('ln', ['-s', '/etc/systemd/system/agent.service', path.join(root, 'etc/systemd/system/multi-user.target.wants/agent.service')]);
  for (const d of ['run', 'root']) mkdirSync(path.join(root, d), { recursive: true });
  if (opts.node !== false) put('usr/bin/node', '#!/bin/sh\n', 0o755);
  if (opts.packaged) put('usr/bin/k8s-host-reconcile', '#!/usr/bin/env node\n// the packaged program\n', 0o755);
  const desired = path.join(root, 'desired.yaml');
  writeFileSync(
    desired,
    `# the bake's own file, copied byte for byte\nreports_dir: /root/ks/preflight\n${opts.firstBoot ? `first_boot: ${opts.firstBoot}\n` : ''}resources:\n  - type: SwapOff\n  - type: PortFree\n    ports: [10250]\n    timeout_seconds: 20\n`,
  );
  return { root, desired };
}

const unitText = (root: string) => readFileSync(path.join(root, 'etc/systemd/system', UNIT), 'utf8');
const execStart = (root: string) =>
  unitText(root)
    .split('\n')
    .find((l) => l.startsWith('ExecStart='));

describe('first_boot: apply (the default in image mode)', () => {
  it('a candidate is first-boot work: the bake exits 0, installs the bundle, the desired state and an enabled one-shot unit', () => {
    const { root, desired } = image();
    expect(systemctlRoot(root, 'is-enabled', UNIT)).not.toBe('enabled');
    const plan = reconcile(['--plan', '-f', desired, '--root', root]);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toMatch(/… at first boot: wait \(up to 20 s\) for agent\.service, which may listen on 10250 .*\[deferred to boot\]/);
    expect(plan.stdout).not.toContain('operator action required');

    const a = reconcile(['--apply', '-f', desired, '--root', root]);
    expect({ code: a.code, err: a.stderr.split('\n').filter((l) => /error/.test(l)) }).toEqual({ code: 0, err: [] });
    expect(systemctlRoot(root, 'is-enabled', UNIT)).toBe('enabled');
    expect(readFileSync(path.join(root, 'usr/local/lib/k8s-host-reconcile/reconcile.mjs'))).toEqual(readFileSync(BUNDLE));
    expect(readFileSync(path.join(root, 'etc/k8s-host-reconcile/desired-state.yaml'))).toEqual(readFileSync(desired));
    expect(execStart(root)).toBe(
      'ExecStart=/usr/bin/env node /usr/local/lib/k8s-host-reconcile/reconcile.mjs --first-boot -f /etc/k8s-host-reconcile/desired-state.yaml',
    );
    // Started after the candidate it waits for, before any container runtime or kubelet.
    expect(unitText(root)).toMatch(/^After=local-fs\.target .*agent\.service$/m);
    expect(unitText(root)).toMatch(/^Before=.*containerd\.service.*kubelet\.service/m);
    expect(unitText(root)).toContain('ConditionPathExists=!/var/lib/k8s-host-reconcile/first-boot.done');
    // The bake leaves the agent to the first boot: still enabled in the image.
    expect(systemctlRoot(root, 'is-enabled', 'agent.service')).toBe('enabled');

    const again = reconcile(['--plan', '--json', '-f', desired, '--root', root]);
    expect(again.code).toBe(0);
    const fb = JSON.parse(again.stdout).resources.find((r: { type: string }) => r.type === 'FirstBoot');
    expect(fb.changes.map((c: { id: string; deferred: boolean }) => [c.id, c.deferred])).toEqual([['first-boot', true]]);
  });

  it('every file it installed is journaled: --rollback leaves the image as it was, unit not enabled', () => {
    const { root, desired } = image();
    const original = snapshot(root, toolOwned);
    expect(reconcile(['--apply', '-f', desired, '--root', root]).code).toBe(0);
    expect(snapshot(root, toolOwned)).not.toEqual(original);
    const r = reconcile(['--rollback', '-f', desired, '--root', root]);
    expect(r.code).toBe(0);
    expect(snapshot(root, toolOwned)).toEqual(original);
    expect(systemctlRoot(root, 'is-enabled', UNIT)).not.toBe('enabled');
  });

  it('an image without node gets an operator line, not a unit that cannot start', () => {
    const { root, desired } = image({ node: false });
    const a = reconcile(['--apply', '-f', desired, '--root', root]);
    expect(a.code).toBe(1);
    expect(a.stdout).toMatch(
      /the first boot needs node in the image[^\n]*\[operator action required\]\n\s+install Debian's nodejs \(>= 18\) or the k8s-host-reconcile \.deb/,
    );
  });

  it('with the .deb in the image (/usr/bin/k8s-host-reconcile) the unit runs it and no bundle is copied', () => {
    const { root, desired } = image({ packaged: true, node: false });
    const a = reconcile(['--apply', '-f', desired, '--root', root]);
    expect(a.code).toBe(0);
    expect(execStart(root)).toBe('ExecStart=/usr/bin/k8s-host-reconcile --first-boot -f /etc/k8s-host-reconcile/desired-state.yaml');
    expect(existsSync(path.join(root, 'usr/local/lib/k8s-host-reconcile/reconcile.mjs'))).toBe(false);
    expect(systemctlRoot(root, 'is-enabled', UNIT)).toBe('enabled');
  });

  it("a stamp left by an earlier first boot of the tree is removed, so this image's first boot runs", () => {
    const { root, desired } = image();
    mkdirSync(path.join(root, 'var/lib/k8s-host-reconcile'), { recursive: true });
    writeFileSync(path.join(root, 'var/lib/k8s-host-reconcile/first-boot.done'), 'old\n');
    const plan = reconcile(['--plan', '-f', desired, '--root', root]);
    expect(plan.stdout).toContain('remove /var/lib/k8s-host-reconcile/first-boot.done, left by an earlier first boot');
    expect(reconcile(['--apply', '-f', desired, '--root', root]).code).toBe(0);
    expect(existsSync(path.join(root, 'var/lib/k8s-host-reconcile/first-boot.done'))).toBe(false);
  });
});

describe('first_boot: verify and off', () => {
  it('verify installs the same unit (the mode is read from the copied desired state); the bake exits 0', () => {
    const { root, desired } = image({ firstBoot: 'verify' });
    const a = reconcile(['--apply', '-f', desired, '--root', root]);
    expect(a.code).toBe(0);
    expect(a.stdout).toContain('runs reconcile --plan (verify: the unit fails when anything is pending)');
    expect(readFileSync(path.join(root, 'etc/k8s-host-reconcile/desired-state.yaml'), 'utf8')).toContain('first_boot: verify\n');
    expect(systemctlRoot(root, 'is-enabled', UNIT)).toBe('enabled');
  });

  it('off keeps the old behaviour: the candidate is an operator line, the bake exits 1, nothing is installed', () => {
    const { root, desired } = image({ firstBoot: 'off' });
    const a = reconcile(['--apply', '-f', desired, '--root', root]);
    expect(a.code).toBe(1);
    expect(a.stdout).toMatch(
      /\d+\. PortFree: agent\.service may listen on 10250 at boot .*\[operator action required\]\n\s+a service that names the port is only a candidate; add agent\.service to disable_units/,
    );
    expect(existsSync(path.join(root, 'etc/systemd/system', UNIT))).toBe(false);
    expect(existsSync(path.join(root, 'etc/k8s-host-reconcile'))).toBe(false);
    expect(existsSync(path.join(root, 'usr/local/lib/k8s-host-reconcile'))).toBe(false);
  });
});
