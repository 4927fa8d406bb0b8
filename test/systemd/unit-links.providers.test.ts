// Offline unit disable/mask (PortFree and SwapOff on a --root tree) must leave
// exactly the tree `systemctl --root=DIR disable|mask` leaves. Each fixture is
// built twice; our provider's observe/diff/apply runs on one copy, the real
// systemctl on the other, and the two trees are compared entry by entry.
// systemctl is only ever run with --root on a temp directory.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { applyContext } from '../helpers/door.js';
import { portFreeSpec } from '../helpers/port-free-spec.js';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { Host, type CommandRunner } from '../../src/host.js';
import type { PortFreeSpec } from '../../src/resources/port-free/spec.js';
import type { SwapOffSpec } from '../../src/resources/swap-off/spec.js';
import { portFreeProvider } from '../../src/resources/port-free/provider.js';
import { swapOffProvider } from '../../src/resources/swap-off/provider.js';
import { disableLinks, linksRemovedBy, templateOf, type ConfigLink } from '../../src/systemd/unit-links.js';

const LIB = 'usr/lib/systemd/system';
const ETC = 'etc/systemd/system';
const BACKUPS = '/var/backups/reconcile/run1';

const roots: string[] = [];

/** systemctl, always confined to a temp tree: never this machine's units. */
async function systemctlRoot(root: string, ...args: string[]): Promise<void> {
  if (!root.startsWith(os.tmpdir() + path.sep)) throw new Error(`refusing systemctl outside a temp tree: ${root}`);
  const r = await execa('systemctl', [`--root=${root}`, ...args], { reject: false });
  if (r.exitCode !== 0) throw new Error(`systemctl --root=${root} ${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`);
}

beforeAll(async () => {
  // No skip: CI installs systemd, and without it this suite proves nothing.
  const r = await execa('systemctl', ['--version'], { reject: false });
  if (r.exitCode !== 0)
    throw new Error(`systemctl is required for test/systemd/unit-links.providers.test.ts (apt-get install systemd): ${r.stderr || r.message}`);
});

afterEach(async () => {
  for (const r of roots.splice(0)) await fs.rm(r, { recursive: true, force: true });
});

async function put(root: string, p: string, text: string): Promise<void> {
  await fs.mkdir(path.dirname(path.join(root, p)), { recursive: true });
  await fs.writeFile(path.join(root, p), text);
}

async function link(root: string, target: string, at: string): Promise<void> {
  await fs.mkdir(path.dirname(path.join(root, at)), { recursive: true });
  await fs.symlink(target, path.join(root, at));
}

/** Every entry of the tree but /var (our backups): directories, files with content, symlinks with their text. */
async function snapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string): Promise<void> => {
    for (const e of await fs.readdir(path.join(root, rel), { withFileTypes: true })) {
      const r = path.posix.join(rel, e.name);
      if (r === 'var') continue; // our backups (under /var/backups) are no part of the comparison
      if (e.isSymbolicLink()) out[r] = `-> ${await fs.readlink(path.join(root, r))}`;
      else if (e.isDirectory()) {
        out[r] = 'dir';
        await walk(r);
      } else out[r] = `file ${await fs.readFile(path.join(root, r), 'utf8')}`;
    }
  };
  await walk('');
  return out;
}

/** Two identical trees built by `make` (which may itself run `systemctl --root enable`). */
async function twin(make: (root: string) => Promise<void>): Promise<{ ours: string; theirs: string }> {
  const ours = await fs.mkdtemp(path.join(os.tmpdir(), 'unit-links-ours-'));
  const theirs = await fs.mkdtemp(path.join(os.tmpdir(), 'unit-links-systemctl-'));
  roots.push(ours, theirs);
  await make(ours);
  await make(theirs);
  expect(await snapshot(ours)).toEqual(await snapshot(theirs));
  return { ours, theirs };
}

const refuse: CommandRunner = async (cmd, args) => {
  throw new Error(`offline provider ran ${cmd} ${args.join(' ')}`);
};
const offlineHost = (root: string) => new Host({ root, runner: refuse });

const portSpec = (extra: Partial<PortFreeSpec>): PortFreeSpec => portFreeSpec([2379, 2380, 6443, 10250, 10257, 10259], extra);

async function portFreeOffline(root: string, spec: PortFreeSpec): Promise<string[]> {
  const h = offlineHost(root);
  const changes = portFreeProvider.diff(spec, await portFreeProvider.observe(h, spec), { live: false });
  await portFreeProvider.apply(h, spec, changes, await applyContext(h, BACKUPS));
  // Converged: a second plan has nothing left to do.
  const again = portFreeProvider.diff(spec, await portFreeProvider.observe(offlineHost(root), spec), { live: false });
  expect(again.filter((c) => !c.operator)).toEqual([]);
  return changes.map((c) => `${c.id}:${c.action}`);
}

async function swapOffOffline(root: string, spec: SwapOffSpec): Promise<string[]> {
  const h = offlineHost(root);
  const changes = swapOffProvider.diff(spec, await swapOffProvider.observe(h, spec), { live: false });
  await swapOffProvider.apply(h, spec, changes, await applyContext(h, BACKUPS));
  const again = swapOffProvider.diff(spec, await swapOffProvider.observe(offlineHost(root), spec), { live: false });
  expect(again.filter((c) => !c.operator)).toEqual([]);
  return changes.map((c) => `${c.id}:${c.action}`);
}

const service = (install: string) => `[Unit]\nDescription=fixture\n\n[Service]\nExecStart=/usr/bin/true\n\n[Install]\n${install}\n`;

interface PortCase {
  name: string;
  make(root: string): Promise<void>;
  spec: Partial<PortFreeSpec>;
  /** The units the live path would hand to `systemctl disable` (and `mask`). */
  units: string[];
  /** Our plan, so a case cannot pass by doing nothing on both sides. */
  plan: string[];
  maskPlan?: string[];
}

const PORT_CASES: PortCase[] = [
  {
    name: 'WantedBy=multi-user.target (vendor unit in /usr/lib, link in /etc)',
    make: async (r) => {
      await put(r, `${LIB}/agent.service`, service('WantedBy=multi-user.target'));
      await systemctlRoot(r, 'enable', 'agent.service');
    },
    spec: { disable_units: ['agent.service'] },
    units: ['agent.service'],
    plan: ['disable-agent.service:disable'],
    maskPlan: ['disable-agent.service:disable', 'mask-agent.service:mask'],
  },
  {
    name: 'RequiredBy= (a .requires directory)',
    make: async (r) => {
      await put(r, `${LIB}/needed.service`, service('RequiredBy=multi-user.target'));
      await systemctlRoot(r, 'enable', 'needed.service');
    },
    spec: { disable_units: ['needed.service'] },
    units: ['needed.service'],
    plan: ['disable-needed.service:disable'],
  },
  {
    name: 'Alias= (a top-level alias link in /etc)',
    make: async (r) => {
      await put(r, `${LIB}/agent.service`, service('WantedBy=multi-user.target\nAlias=node-agent.service'));
      await systemctlRoot(r, 'enable', 'agent.service');
    },
    spec: { disable_units: ['agent.service'] },
    units: ['agent.service'],
    plan: ['disable-agent.service:disable'],
  },
  {
    name: 'disable_units names the alias, not the unit',
    make: async (r) => {
      await put(r, `${LIB}/agent.service`, service('WantedBy=multi-user.target\nAlias=node-agent.service'));
      await systemctlRoot(r, 'enable', 'agent.service');
    },
    spec: { disable_units: ['node-agent.service'] },
    units: ['node-agent.service'],
    plan: ['disable-node-agent.service:disable'],
  },
  {
    name: 'a socket on 10250 (WantedBy=sockets.target) and its service (WantedBy=multi-user.target)',
    make: async (r) => {
      await put(r, `${LIB}/kubelet-proxy.socket`, '[Socket]\nListenStream=10250\n\n[Install]\nWantedBy=sockets.target\n');
      await put(r, `${LIB}/kubelet-proxy.service`, service('WantedBy=multi-user.target'));
      await systemctlRoot(r, 'enable', 'kubelet-proxy.socket', 'kubelet-proxy.service');
    },
    spec: {},
    units: ['kubelet-proxy.socket', 'kubelet-proxy.service'],
    plan: ['disable-kubelet-proxy.socket:disable', 'disable-kubelet-proxy.service:disable'],
  },
  {
    name: 'a socket whose [Install] has Also= its service',
    make: async (r) => {
      await put(r, `${LIB}/etcd-lite.socket`, '[Socket]\nListenStream=127.0.0.1:2379\n\n[Install]\nWantedBy=sockets.target\nAlso=etcd-lite.service\n');
      await put(r, `${LIB}/etcd-lite.service`, service('WantedBy=multi-user.target'));
      await systemctlRoot(r, 'enable', 'etcd-lite.socket');
    },
    spec: {},
    units: ['etcd-lite.socket', 'etcd-lite.service'],
    plan: ['disable-etcd-lite.socket:disable', 'disable-etcd-lite.service:disable'],
  },
  {
    name: 'Also= of a plain service listed in disable_units',
    make: async (r) => {
      await put(r, `${LIB}/bundle.service`, service('WantedBy=multi-user.target\nAlso=helper.service'));
      await put(r, `${LIB}/helper.service`, service('WantedBy=timers.target'));
      await systemctlRoot(r, 'enable', 'bundle.service');
    },
    spec: { disable_units: ['bundle.service'] },
    units: ['bundle.service'],
    plan: ['disable-bundle.service:disable'],
  },
  {
    name: 'linked into two targets',
    make: async (r) => {
      await put(r, `${LIB}/agent.service`, service('WantedBy=multi-user.target graphical.target'));
      await systemctlRoot(r, 'enable', 'agent.service');
    },
    spec: { disable_units: ['agent.service'] },
    units: ['agent.service'],
    plan: ['disable-agent.service:disable'],
  },
  {
    name: 'one template instance (foo@bar.service) of two',
    make: async (r) => {
      await put(r, `${LIB}/tunnel@.service`, '[Service]\nExecStart=/usr/bin/tunnel %i\n\n[Install]\nWantedBy=multi-user.target\nDefaultInstance=main\n');
      await systemctlRoot(r, 'enable', 'tunnel@.service', 'tunnel@bar.service');
    },
    spec: { disable_units: ['tunnel@bar.service'] },
    units: ['tunnel@bar.service'],
    plan: ['disable-tunnel@bar.service:disable'],
  },
  {
    name: 'the template itself (every instance link goes)',
    make: async (r) => {
      await put(r, `${LIB}/tunnel@.service`, '[Service]\nExecStart=/usr/bin/tunnel %i\n\n[Install]\nWantedBy=multi-user.target\nDefaultInstance=main\n');
      await systemctlRoot(r, 'enable', 'tunnel@.service', 'tunnel@bar.service');
    },
    spec: { disable_units: ['tunnel@.service'] },
    units: ['tunnel@.service'],
    plan: ['disable-tunnel@.service:disable'],
  },
  {
    name: 'hand-made links: relative, renamed, outside a .wants dir, plus /run and vendor links disable keeps',
    make: async (r) => {
      await put(r, `${LIB}/agent.service`, service('WantedBy=multi-user.target'));
      await link(r, '../../../../usr/lib/systemd/system/agent.service', `${ETC}/multi-user.target.wants/agent.service`);
      await link(r, '/usr/lib/systemd/system/agent.service', `${ETC}/custom.target.wants/renamed.service`);
      await link(r, '/usr/lib/systemd/system/agent.service', `${ETC}/odd-dir/agent.service`);
      await link(r, '/usr/lib/systemd/system/agent.service', `run/systemd/system/multi-user.target.wants/agent.service`);
      await link(r, '../agent.service', `${LIB}/multi-user.target.wants/agent.service`);
      await put(r, `${LIB}/other.service`, service('WantedBy=multi-user.target'));
      await link(r, '/usr/lib/systemd/system/other.service', `${ETC}/multi-user.target.wants/other.service`);
    },
    spec: { disable_units: ['agent.service'] },
    units: ['agent.service'],
    plan: ['disable-agent.service:disable', 'disable-agent.service-vendor:operator'],
  },
  {
    name: 'a linked unit file (outside the search path, linked into /etc)',
    make: async (r) => {
      await put(r, 'opt/agent/agent.service', service('WantedBy=multi-user.target'));
      await link(r, '/opt/agent/agent.service', `${ETC}/agent.service`);
      await link(r, '/etc/systemd/system/agent.service', `${ETC}/multi-user.target.wants/agent.service`);
    },
    spec: { disable_units: ['agent.service'] },
    units: ['agent.service'],
    // Disable unlinks /etc/systemd/system/agent.service itself, so the mask link has room.
    plan: ['disable-agent.service:disable'],
  },
  {
    name: 'an already masked unit with a stale .wants link (disable leaves a masked unit alone)',
    make: async (r) => {
      await put(r, `${LIB}/agent.service`, service('WantedBy=multi-user.target'));
      await systemctlRoot(r, 'enable', 'agent.service');
      await systemctlRoot(r, 'mask', 'agent.service');
    },
    spec: { disable_units: ['agent.service'] },
    units: ['agent.service'],
    plan: [],
    maskPlan: [],
  },
];

describe('offline disable == systemctl --root disable', () => {
  for (const c of PORT_CASES) {
    it(`PortFree: ${c.name}`, async () => {
      const { ours, theirs } = await twin(c.make);
      const before = await snapshot(ours);
      expect(await portFreeOffline(ours, portSpec(c.spec))).toEqual(c.plan);
      await systemctlRoot(theirs, 'disable', ...c.units);
      const want = await snapshot(theirs);
      if (c.plan.some((p) => p.endsWith(':disable'))) expect(want).not.toEqual(before);
      expect(await snapshot(ours)).toEqual(want);
    });
  }

  it('SwapOff: a .swap unit under swap.target.wants and a swapon service', async () => {
    const { ours, theirs } = await twin(async (r) => {
      await put(r, `${ETC}/dev-sdb2.swap`, '[Swap]\nWhat=/dev/sdb2\n\n[Install]\nWantedBy=swap.target\n');
      await put(r, `${LIB}/swapfile.swap`, '[Swap]\nWhat=/swapfile\n\n[Install]\nRequiredBy=swap.target\n');
      await put(r, `${LIB}/zramswap.service`, service('WantedBy=multi-user.target'));
      await systemctlRoot(r, 'enable', 'dev-sdb2.swap', 'swapfile.swap', 'zramswap.service');
    });
    expect(await swapOffOffline(ours, { type: 'SwapOff', mask_swap_target: false, remove_swap_files: false })).toEqual([
      'unit:dev-sdb2.swap:disable',
      'unit:swapfile.swap:disable',
      'unit:zramswap.service:disable',
    ]);
    await systemctlRoot(theirs, 'disable', 'dev-sdb2.swap', 'swapfile.swap', 'zramswap.service');
    expect(await snapshot(ours)).toEqual(await snapshot(theirs));
  });
});

describe('offline mask == systemctl --root disable + mask', () => {
  for (const c of PORT_CASES) {
    it(`PortFree mask: true: ${c.name}`, async () => {
      const { ours, theirs } = await twin(c.make);
      const plan = await portFreeOffline(ours, portSpec({ ...c.spec, mask: true }));
      const expected = c.maskPlan ?? c.plan.flatMap((p) => (p.endsWith(':disable') ? [p, p.replace(/^disable-(.*):disable$/, 'mask-$1:mask')] : []));
      expect(plan).toEqual(expected);
      // The live path runs `systemctl disable U...` then `systemctl mask U...` on what the plan masks.
      await systemctlRoot(theirs, 'disable', ...c.units);
      const masked = plan.filter((p) => p.endsWith(':mask')).map((p) => p.replace(/^mask-(.*):mask$/, '$1'));
      if (masked.length > 0) await systemctlRoot(theirs, 'mask', ...masked);
      expect(await snapshot(ours)).toEqual(await snapshot(theirs));
      for (const u of masked) expect(await fs.readlink(path.join(ours, ETC, u))).toBe('/dev/null');
    });
  }

  it('SwapOff: mask swap.target with its .wants links gone', async () => {
    const { ours, theirs } = await twin(async (r) => {
      await put(r, `${ETC}/dev-sdb2.swap`, '[Swap]\nWhat=/dev/sdb2\n\n[Install]\nWantedBy=swap.target\n');
      await systemctlRoot(r, 'enable', 'dev-sdb2.swap');
    });
    expect(await swapOffOffline(ours, { type: 'SwapOff', mask_swap_target: true, remove_swap_files: false })).toEqual([
      'unit:dev-sdb2.swap:disable',
      'mask:swap.target:mask',
    ]);
    await systemctlRoot(theirs, 'disable', 'dev-sdb2.swap');
    await systemctlRoot(theirs, 'mask', 'swap.target');
    expect(await snapshot(ours)).toEqual(await snapshot(theirs));
    expect(await fs.readlink(path.join(ours, ETC, 'swap.target'))).toBe('/dev/null');
  });
});

describe('the disable rules, unit by unit', () => {
  it('templateOf maps an instance to its template and nothing else', () => {
    expect(templateOf('tunnel@bar.service')).toBe('tunnel@.service');
    expect(templateOf('tunnel@.service')).toBeNull();
    expect(templateOf('agent.service')).toBeNull();
  });

  it('linksRemovedBy follows a link to a removed link', () => {
    const l = (p: string, next: string, final: string): ConfigLink => ({ path: p, name: path.posix.basename(p), next, final });
    const links = [
      l('/etc/systemd/system/a.target.wants/agent.service', '/opt/agent.service', '/opt/agent.service'),
      l('/etc/systemd/system/b.target.wants/x.service', '/etc/systemd/system/a.target.wants/agent.service', '/opt/agent.service'),
      l('/etc/systemd/system/c.target.wants/y.service', '/usr/lib/systemd/system/y.service', '/usr/lib/systemd/system/y.service'),
    ];
    expect(linksRemovedBy(links, new Set(['agent.service']))).toEqual([links[0]!.path, links[1]!.path]);
  });

  it('a unit file of its own in /etc: systemctl mask refuses; it is masked as a move out of the search path and systemctl mask would', async () => {
    const { ours, theirs } = await twin(async (r) => {
      await put(r, `${ETC}/agent.service`, service('WantedBy=multi-user.target'));
      await systemctlRoot(r, 'enable', 'agent.service');
    });
    const text = await fs.readFile(path.join(theirs, ETC, 'agent.service'), 'utf8');
    expect(await portFreeOffline(ours, portSpec({ disable_units: ['agent.service'], mask: true }))).toEqual([
      'disable-agent.service:disable',
      'mask-agent.service:mask',
    ]);
    await systemctlRoot(theirs, 'disable', 'agent.service');
    await expect(systemctlRoot(theirs, 'mask', 'agent.service')).rejects.toThrow(/already exists/);
    // The file moved out of the unit search path, then systemctl's own mask.
    await fs.rm(path.join(theirs, ETC, 'agent.service'));
    await systemctlRoot(theirs, 'mask', 'agent.service');
    expect(await snapshot(ours)).toEqual(await snapshot(theirs));
    expect(await fs.readFile(path.join(ours, 'var/lib/k8s-host-reconcile/set-aside', ETC, 'agent.service'), 'utf8')).toBe(text);
  });

  it('disableLinks on a tree matches what systemctl removed from its twin', async () => {
    const { ours, theirs } = await twin(async (r) => {
      await put(r, `${LIB}/agent.service`, service('WantedBy=multi-user.target\nAlias=node-agent.service\nAlso=helper.service'));
      await put(r, `${LIB}/helper.service`, service('RequiredBy=multi-user.target'));
      await systemctlRoot(r, 'enable', 'agent.service');
    });
    const planned = await disableLinks(offlineHost(ours), ['agent.service']);
    const before = await snapshot(theirs);
    await systemctlRoot(theirs, 'disable', 'agent.service');
    const after = await snapshot(theirs);
    const gone = Object.keys(before)
      .filter((k) => !(k in after) && before[k]!.startsWith('->'))
      .map((k) => `/${k}`)
      .sort();
    expect(planned).toEqual(gone);
    expect(gone).toHaveLength(3);
  });
});
