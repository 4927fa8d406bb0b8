// Without a kubespray section the host reports (facts) never load the audit's
// Jinja engine: nunjucks is made unloadable here, and the report still comes.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Host } from '../../src/host.js';
import { cannedRunner } from '../helpers/canned-runner.js';
import { kubesprayReport } from '../../src/kubespray/report.js';

vi.mock('nunjucks', () => {
  throw new Error('nunjucks (the kubespray audit) was loaded without a kubespray section');
});

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const runner = cannedRunner({
  'uname -m': 'x86_64\n',
  'uname -r': '6.1.0-31-cloud-amd64\n',
  'ip -4 route get 8.8.8.8': '8.8.8.8 dev eth0 src 192.0.2.10 uid 0\n',
});

describe('the kubespray audit loads only with a checkout configured', () => {
  it('facts without a kubespray section need no Jinja engine', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'lazy-audit-'));
    temps.push(root);
    for (const [p, c] of Object.entries({
      'proc/meminfo': 'MemTotal: 4194304 kB\n',
      'proc/cpuinfo': 'processor\t: 0\n',
      'etc/os-release': 'NAME="Debian GNU/Linux"\nID=debian\nVERSION_ID="12"\n',
    })) {
      await mkdir(path.join(root, path.dirname(p)), { recursive: true });
      await writeFile(path.join(root, p), c);
    }
    const r = await kubesprayReport(new Host({ root, live: true, runner }), {
      source: 'd.yaml',
      reports_dir: '/r',
      facts: { source: 'native' },
      first_boot: 'apply',
      resources: [],
    });
    expect(r.facts).toMatchObject({ memtotal_mb: 4096, distribution: 'Debian', distribution_version: '12', default_ipv4: '192.0.2.10' });
    expect(r.findings.map((f) => f.message)).toContain('no kubespray section in desired-state: minimal_master_memory_mb and who-fixes.json left out');
  });

  it('with a kubespray section and a checkout the audit is loaded (here unloadable, so it fails)', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'lazy-audit-'));
    temps.push(root);
    await mkdir(path.join(root, 'opt/ks/roles/kubernetes/preinstall/defaults'), { recursive: true });
    await writeFile(path.join(root, 'opt/ks/roles/kubernetes/preinstall/defaults/main.yml'), 'minimal_master_memory_mb: 1500\n');
    await expect(
      kubesprayReport(new Host({ root, live: false }), {
        source: 'd.yaml',
        reports_dir: '/r',
        facts: { source: 'native' },
        first_boot: 'apply',
        resources: [],
        kubespray: { dir: '/opt/ks', inventory: '/i.ini', node: 'n' },
      }),
    ).rejects.toThrow(/mocking a module/);
  });

  it('with a kubespray section but no checkout there is nothing to audit: no Jinja engine, one info line naming the keys', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'lazy-audit-'));
    temps.push(root);
    const r = await kubesprayReport(new Host({ root, live: false }), {
      source: 'd.yaml',
      reports_dir: '/r',
      facts: { source: 'native' },
      first_boot: 'apply',
      resources: [],
      kubespray: { dir: '/opt/ks', inventory: '/i.ini', node: 'n' },
    });
    expect(r.findings.map((f) => f.message)).toContain(
      "no kubespray checkout at /opt/ks: minimal_master_memory_mb, who-fixes.json and who fixes each kubeadm check left out; to judge them, set kubespray.dir, kubespray.inventory and kubespray.node in d.yaml to your kubespray checkout, its inventory file and this host's name in it",
    );
  });
});
