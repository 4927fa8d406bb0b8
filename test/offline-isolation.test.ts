// `--apply --root` converges an image tree and leaves the build machine alone:
// its /etc, swap, modules, sysctls and units are compared before and after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

const repo = path.resolve(new URL('..', import.meta.url).pathname);

function walk(dir: string, out: Map<string, string>): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const p = path.join(dir, n);
    let st: Stats;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    const link = st.isSymbolicLink() ? readlinkSync(p) : '';
    out.set(p, `${st.mode}:${st.size}:${st.mtimeMs}:${link}`);
    if (st.isDirectory()) walk(p, out);
  }
}

function read(p: string): string {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return '<absent>';
  }
}

function buildHostSnapshot() {
  const etc = new Map<string, string>();
  walk('/etc', etc);
  return {
    etc,
    swaps: read('/proc/swaps'),
    modules: read('/proc/modules')
      .split('\n')
      .map((l) => l.split(' ')[0])
      .sort()
      .join(','),
    ipForward: read('/proc/sys/net/ipv4/ip_forward'),
    bridgeNf: read('/proc/sys/net/bridge/bridge-nf-call-iptables'),
  };
}

function write(root: string, rel: string, text: string) {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), text);
}

describe('--apply --root on a tree under /tmp', () => {
  let work: string;
  let root: string;
  beforeAll(async () => {
    await execa('node', ['scripts/bundle.mjs'], { cwd: repo });
    work = mkdtempSync(path.join(tmpdir(), 'offline-'));
    root = path.join(work, 'image');
    // The lab's faults, planted in an image tree.
    write(root, 'etc/fstab', 'UUID=1 / ext4 defaults 0 1\n/swapfile none swap sw 0 0\n');
    write(root, 'etc/sysctl.d/security-baseline.conf', 'net.ipv4.ip_forward = 0\nvm.swappiness = 10\nnet.ipv4.conf.all.log_martians = 1\n');
    write(root, 'etc/sysctl.conf', '# empty\n');
    mkdirSync(path.join(root, 'etc/systemd/system/multi-user.target.wants'), { recursive: true });
    write(
      root,
      'etc/systemd/system/monitoring-agent.service',
      '[Service]\nExecStart=/usr/bin/python3 -m http.server 10250\nRestart=always\n\n[Install]\nWantedBy=multi-user.target\n',
    );
    symlinkSync('/etc/systemd/system/monitoring-agent.service', path.join(root, 'etc/systemd/system/multi-user.target.wants/monitoring-agent.service'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('converges the image and changes nothing on the build machine', async () => {
    const before = buildHostSnapshot();
    const r = await execa('node', [path.join(repo, 'dist/reconcile.mjs'), '--apply', '--root', root, '-f', path.join(repo, 'desired-state.yaml')], {
      reject: false,
    });
    const after = buildHostSnapshot();

    expect(r.stderr).not.toMatch(/internal error/);
    expect(after.swaps).toBe(before.swaps);
    expect(after.modules).toBe(before.modules);
    expect(after.ipForward).toBe(before.ipForward);
    expect(after.bridgeNf).toBe(before.bridgeNf);
    const changed = [...new Set([...before.etc.keys(), ...after.etc.keys()])].filter((k) => before.etc.get(k) !== after.etc.get(k));
    expect(changed).toEqual([]);

    // And the image itself converged.
    expect(read(path.join(root, 'etc/fstab'))).not.toMatch(/^\/swapfile/m);
    expect(read(path.join(root, 'etc/modules-load.d/k8s.conf'))).toMatch(/overlay\nbr_netfilter\n/);
    expect(read(path.join(root, 'etc/sysctl.d/k8s.conf'))).toMatch(/net\.ipv4\.ip_forward\s*=\s*1/);
    expect(read(path.join(root, 'etc/sysctl.d/security-baseline.conf'))).not.toMatch(/^net\.ipv4\.ip_forward\s*=\s*0/m);
    expect(read(path.join(root, 'etc/sysctl.d/security-baseline.conf'))).toMatch(/^vm\.swappiness = 10$/m);
    expect(readlinkSync(path.join(root, 'etc/systemd/system/swap.target'))).toBe('/dev/null');
  });
});
