import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyContext, openDoor } from '../../helpers/door.js';
import { existsSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host, type CommandRunner, type RunOptions } from '../../../src/host.js';
import { makeSwapFile } from '../../helpers/swap.js';
import { HostError } from '../../../src/errors.js';
import type { SwapOffSpec } from '../../../src/resources/swap-off/spec.js';
import { applySwap, diffSwap, observeSwap, swapOffProvider } from '../../../src/resources/swap-off/provider.js';
import type { SwapObserved } from '../../../src/resources/swap-off/observed.js';
import { FSTAB_MARKER } from '../../../src/swap/fstab.js';
import { PROVIDERS } from '../../../src/resources/index.js';
import { buildTree, type Tree } from '../../helpers/tree.js';

const SPEC: SwapOffSpec = { type: 'SwapOff', mask_swap_target: true, remove_swap_files: false };
const RUN = '/var/backups/test';
const BACKUPS = `${RUN}/backup`;

// Deliberately without a final newline, with tabs, a CRLF-free mix of 4- and 6-field swap lines.
const FSTAB = [
  '# /etc/fstab: static file system information.',
  'UUID=0a1b2c3d-1111 /               ext4    errors=remount-ro 0       1',
  '# swap was on /dev/sda5 during installation',
  'UUID=9f8e7d6c-aaaa none            swap    sw              0       0',
  '/swapfile\tnone\tswap\tsw\t0\t0',
  '#/oldswap none swap sw 0 0',
  'LABEL=SWAP2 none swap defaults',
  'tmpfs /tmp tmpfs defaults 0 0',
].join('\n');

const SWAP_UNIT = '[Unit]\nDescription=Extra swap\n\n[Swap]\nWhat=/dev/disk/by-label/extra\n\n[Install]\nWantedBy=swap.target\n';

let root: string;

const build = (files: Tree): void => buildTree(root, files);
const read = (p: string) => readFileSync(path.join(root, p), 'utf8');

interface Call {
  cmd: string;
  args: string[];
}
function recorder(onRun?: (c: Call) => void): { calls: Call[]; runner: CommandRunner } {
  const calls: Call[] = [];
  const runner: CommandRunner = async (cmd: string, args: string[], _o: RunOptions) => {
    calls.push({ cmd, args });
    onRun?.({ cmd, args });
    return { command: [cmd, ...args].join(' '), exitCode: 0, stdout: '', stderr: '' };
  };
  return { calls, runner };
}

function usedHost(): void {
  build({
    'etc/fstab': FSTAB,
    swapfile: 'not really pages\n',
    'etc/systemd/system/extra.swap': SWAP_UNIT,
    'etc/systemd/system/swap.target.wants/extra.swap': { link: '/etc/systemd/system/extra.swap' },
    'usr/lib/systemd/zram-generator.conf': '[zram0]\nzram-size = ram / 2\n',
  });
  // remove_swap_files deletes only a file that carries a swap signature.
  makeSwapFile(path.join(root, 'swapfile'));
}

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'swapoff-test-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('SwapOff offline (fixture root)', () => {
  it('is registered', () => {
    expect(PROVIDERS.SwapOff).toBe(swapOffProvider);
  });

  it('observes fstab swap lines, enabled .swap units, zram config and the swap.target mask', async () => {
    usedHost();
    const o = await observeSwap(new Host({ root }));
    expect(o.live).toBe(false);
    expect(o.active).toBeNull();
    expect(o.swapTotalKb).toBeNull();
    expect(o.fstab.swap.map((e) => e.line)).toEqual([4, 5, 7]);
    expect(o.units).toEqual([
      {
        unit: 'extra.swap',
        kind: 'swap-unit',
        links: ['/etc/systemd/system/swap.target.wants/extra.swap'],
        file: '/etc/systemd/system/extra.swap',
        what: '/dev/disk/by-label/extra',
        installedBy: ['swap.target'],
        // The fixture has no default.target: nothing is reached, and disabling leaves nothing that starts it.
        reach: null,
        comeback: [],
      },
    ]);
    expect(o.zram).toEqual([{ device: 'zram0', file: '/usr/lib/systemd/zram-generator.conf', swap: true }]);
    expect(o.swapTargetMasked).toBe(false);
    expect(o.swapFiles).toEqual(['/swapfile']);
  });

  it('plans fstab, unit and mask changes and no runtime step', async () => {
    usedHost();
    const host = new Host({ root });
    const changes = diffSwap(SPEC, await observeSwap(host), { live: false });
    expect(changes.map((c) => [c.id, c.action])).toEqual([
      ['fstab', 'update'],
      ['unit:extra.swap', 'disable'],
      ['mask:swap.target', 'mask'],
    ]);
    expect(changes.some((c) => c.runtime)).toBe(false);
    const fstab = changes[0]!.file!;
    expect(fstab.before).toBe(FSTAB);
    expect(fstab.after).toContain(`${FSTAB_MARKER}\n#/swapfile\tnone\tswap\tsw\t0\t0\n`);
  });

  it('converges: observe -> diff -> apply -> observe gives an empty diff; other bytes and backups kept', async () => {
    usedHost();
    const { calls, runner } = recorder();
    const host = new Host({ root, runner });
    const changes = diffSwap(SPEC, await observeSwap(host), { live: false });
    await swapOffProvider.apply(host, SPEC, changes, await applyContext(host, RUN));

    const after = read('etc/fstab');
    // Drop our marker lines and the "#" we added: the original comes back byte for byte.
    const restored = after
      .split('\n')
      .filter((l) => l !== FSTAB_MARKER)
      .map((l, i) => ([4, 5, 7].includes(i + 1) ? l.slice(1) : l))
      .join('\n');
    expect(restored).toBe(FSTAB);
    expect(after.endsWith('\n')).toBe(false);

    expect(existsSync(path.join(root, 'etc/systemd/system/swap.target.wants/extra.swap'))).toBe(false);
    expect(readlinkSync(path.join(root, 'etc/systemd/system/swap.target'))).toBe('/dev/null');
    expect(existsSync(path.join(root, 'swapfile'))).toBe(true);

    // Backups of everything changed.
    expect(readFileSync(path.join(root, BACKUPS, 'etc/fstab'), 'utf8')).toBe(FSTAB);
    expect(readlinkSync(path.join(root, BACKUPS, 'etc/systemd/system/swap.target.wants/extra.swap'))).toBe('/etc/systemd/system/extra.swap');

    // Offline nothing ran (no daemon-reload on the build machine).
    expect(calls).toEqual([]);

    const again = diffSwap(SPEC, await observeSwap(new Host({ root })), { live: false });
    expect(again).toEqual([]);
    // A second apply of an empty plan leaves the file alone.
    await applySwap(new Host({ root }), again, await openDoor(new Host({ root })));
    expect(read('etc/fstab')).toBe(after);
  });

  it('deletes swap files only when asked, without copying them to the backups', async () => {
    usedHost();
    const spec = { ...SPEC, remove_swap_files: true };
    const host = new Host({ root });
    const changes = diffSwap(spec, await observeSwap(host), { live: false });
    expect(changes.filter((c) => c.action === 'delete').map((c) => c.id)).toEqual(['remove:/swapfile']);
    await applySwap(host, changes, await openDoor(host, RUN));
    expect(existsSync(path.join(root, 'swapfile'))).toBe(false);
    expect(existsSync(path.join(root, BACKUPS, 'swapfile'))).toBe(false);
    // The commented line still names the file, and it is gone: nothing left to do.
    expect(diffSwap(spec, await observeSwap(new Host({ root })), { live: false })).toEqual([]);
  });

  it('disables services that run swapon themselves, wherever they are enabled', async () => {
    build({
      'lib/systemd/system/zramswap.service': '[Service]\nExecStart=/usr/sbin/zramswap start\n[Install]\nWantedBy=multi-user.target\n',
      'etc/systemd/system/multi-user.target.wants/zramswap.service': { link: '/lib/systemd/system/zramswap.service' },
      'etc/systemd/system/multi-user.target.wants/ssh.service': { link: '/lib/systemd/system/ssh.service' },
      // A link to a .swap unit that has no file starts nothing (systemd: not-found), whichever target it is under.
      'etc/systemd/system/local-fs.target.wants/other.swap': { link: '/etc/systemd/system/other.swap' },
    });
    const host = new Host({ root });
    const o = await observeSwap(host);
    expect(o.units.map((u) => [u.unit, u.kind, u.file, u.installedBy])).toEqual([
      ['zramswap.service', 'swap-service', '/lib/systemd/system/zramswap.service', ['multi-user.target']],
    ]);
    const changes = diffSwap(SPEC, o, { live: false });
    expect(changes.find((c) => c.id === 'unit:zramswap.service')!.summary).toContain('masking swap.target does not stop it');
    await applySwap(host, changes, await openDoor(host, RUN));
    expect(existsSync(path.join(root, 'etc/systemd/system/multi-user.target.wants/zramswap.service'))).toBe(false);
    expect(lstatSync(path.join(root, 'etc/systemd/system/multi-user.target.wants/ssh.service')).isSymbolicLink()).toBe(true);
    expect(diffSwap(SPEC, await observeSwap(host), { live: false })).toEqual([]);
  });

  it('never deletes a device named in fstab', async () => {
    build({ 'etc/fstab': '/dev/sdb2 none swap sw 0 0\n', 'dev/sdb2': 'fake device node as a file\n' });
    const o = await observeSwap(new Host({ root }));
    expect(o.swapFiles).toEqual([]);
  });

  it('leaves the mask alone when mask_swap_target is false, and asks the operator about zram', async () => {
    usedHost();
    const spec = { ...SPEC, mask_swap_target: false };
    const changes = diffSwap(spec, await observeSwap(new Host({ root })), { live: false });
    expect(changes.some((c) => c.action === 'mask')).toBe(false);
    const zram = changes.find((c) => c.id === 'zram')!;
    expect(zram.action).toBe('operator');
    expect(zram.operator).toContain('/usr/lib/systemd/zram-generator.conf');
  });

  it('an /etc zram-generator.conf linked to /dev/null disables the vendor config', async () => {
    build({
      'usr/lib/systemd/zram-generator.conf': '[zram0]\n',
      'etc/systemd/zram-generator.conf': { link: '/dev/null' },
      'usr/lib/systemd/zram-generator.conf.d/data.conf': '[zram1]\nmount-point = /var/tmp\n',
    });
    const o = await observeSwap(new Host({ root }));
    expect(o.zram).toEqual([{ device: 'zram1', file: '/usr/lib/systemd/zram-generator.conf.d/data.conf', swap: false }]);
  });

  it('refuses to apply a stale plan when fstab changed since it was observed', async () => {
    usedHost();
    const host = new Host({ root });
    const changes = diffSwap(SPEC, await observeSwap(host), { live: false });
    writeFileSync(path.join(root, 'etc/fstab'), FSTAB + '\n/other none swap sw 0 0\n');
    await expect(
      applySwap(
        host,
        changes.filter((c) => c.id === 'fstab'),
        await openDoor(host, RUN),
      ),
    ).rejects.toBeInstanceOf(HostError);
  });

  it('an empty image has nothing to do', async () => {
    build({ 'etc/hostname': 'x\n' });
    expect(diffSwap(SPEC, await observeSwap(new Host({ root })), { live: false }).map((c) => c.id)).toEqual(['mask:swap.target']);
  });
});

describe('SwapOff live branches (fake runner over a fixture tree)', () => {
  const PROC_SWAPS =
    'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/swapfile                               file\t\t1048572\t\t0\t\t-2\n/dev/zram0                              partition\t4038652\t\t1024\t\t100\n';

  it('diff plans a runtime swapoff per active area, first', () => {
    const observed: SwapObserved = {
      live: true,
      active: [
        { filename: '/swapfile', type: 'file', sizeKb: 1048572, usedKb: 0, priority: -2 },
        { filename: '/dev/zram0', type: 'partition', sizeKb: 4038652, usedKb: 1024, priority: 100 },
      ],
      swapTotalKb: 5087224,
      memTotalKb: 4000000,
      fstab: { path: '/etc/fstab', content: null, swap: [], disabled: [] },
      units: [],
      zram: [],
      swapTargetMasked: true,
      swapFiles: ['/swapfile'],
    };
    const changes = diffSwap(SPEC, observed, { live: true });
    expect(changes.map((c) => [c.id, c.action, c.runtime])).toEqual([
      ['swapoff:/swapfile', 'runtime', true],
      ['swapoff:/dev/zram0', 'runtime', true],
    ]);
    // The same observation offline plans nothing at runtime.
    expect(diffSwap(SPEC, observed, { live: false })).toEqual([]);
  });

  it('apply runs swapoff before touching files, then one daemon-reload; observe again is clean', async () => {
    usedHost();
    build({ 'proc/swaps': PROC_SWAPS, 'proc/meminfo': 'MemTotal: 4000000 kB\nSwapTotal: 5087224 kB\n' });
    const swapsFile = path.join(root, 'proc/swaps');
    const events: string[] = [];
    const { calls, runner } = recorder(({ cmd, args }) => {
      // Record what fstab looked like when each command ran.
      events.push(`${cmd} ${args.join(' ')} fstab-edited=${read('etc/fstab') !== FSTAB}`);
      if (cmd === 'swapoff') {
        const kept = readFileSync(swapsFile, 'utf8')
          .split('\n')
          .filter((l) => !l.startsWith(args[0]! + ' '));
        writeFileSync(swapsFile, kept.join('\n'));
      }
    });
    const host = new Host({ root, runner, live: true });
    const o = await observeSwap(host);
    expect(o.swapTotalKb).toBe(5087224);
    expect(o.memTotalKb).toBe(4000000);
    expect(o.active!.map((a) => a.filename)).toEqual(['/swapfile', '/dev/zram0']);
    const changes = diffSwap(SPEC, o, { live: true });
    await applySwap(host, changes, await openDoor(host, RUN));
    expect(calls.map((c) => [c.cmd, ...c.args])).toEqual([
      ['swapoff', '/swapfile'],
      ['swapoff', '/dev/zram0'],
      ['systemctl', 'daemon-reload'],
    ]);
    expect(events.slice(0, 2).every((e) => e.endsWith('fstab-edited=false'))).toBe(true);
    expect(events[2]).toMatch(/fstab-edited=true$/);
    expect(diffSwap(SPEC, await observeSwap(host), { live: true })).toEqual([]);
  });

  it('a failing swapoff is an error naming the command', async () => {
    build({ 'proc/swaps': PROC_SWAPS, 'proc/meminfo': 'SwapTotal: 1 kB\n' });
    const runner: CommandRunner = async (cmd, args) => ({
      command: [cmd, ...args].join(' '),
      exitCode: 255,
      stdout: '',
      stderr: 'swapoff: /swapfile: Cannot allocate memory',
    });
    const host = new Host({ root, runner, live: true });
    const changes = diffSwap(SPEC, await observeSwap(host), { live: true });
    await expect(applySwap(host, changes, await openDoor(host, RUN))).rejects.toThrow(/swapoff \/swapfile exited 255: .*Cannot allocate memory/);
    expect(lstatSync(path.join(root, 'etc'), { throwIfNoEntry: false })).toBeUndefined();
  });

  it('traces each active swap to what turns it on at boot; one nothing explains is an operator line naming what was searched', async () => {
    build({
      'proc/swaps': 'Filename\tType\tSize\tUsed\tPriority\n/dev/sda5 partition 1000 0 -2\n/swap-manual file 1000 0 -3\n',
      'proc/meminfo': 'MemTotal: 4000000 kB\nSwapTotal: 2000 kB\n',
      'etc/fstab': 'UUID=abcd-1 none swap sw 0 0\n',
      // udev's link: the kernel lists the device node, fstab names the UUID.
      'dev/sda5': '',
      'dev/disk/by-uuid/abcd-1': { link: '../../sda5' },
    });
    // The running manager, as `systemctl show` answers for the unit it made for each swap (systemd-escape names it).
    const manager: Record<string, string> = {
      'swap\\x2dmanual.swap': 'LoadState=loaded\nFragmentPath=\nSourcePath=\nWantedBy=\nRequiredBy=\n',
    };
    const { calls, runner } = recorder();
    const answering: CommandRunner = async (cmd, args, o) => {
      await runner(cmd, args, o);
      if (cmd === 'systemd-escape')
        return { command: cmd, exitCode: 0, stdout: `${args[2]!.slice(1).replace(/-/g, '\\x2d').replace(/\//g, '-')}.swap\n`, stderr: '' };
      if (cmd === 'systemctl') return { command: cmd, exitCode: 0, stdout: manager[args[args.length - 1]!] ?? '', stderr: '' };
      return { command: cmd, exitCode: 1, stdout: '', stderr: 'unexpected' };
    };
    const host = new Host({ root, live: true, runner: answering });
    const o = await observeSwap(host);
    expect(calls.map((c) => c.cmd)).toEqual(['systemd-escape', 'systemctl']);
    expect(o.origins).toEqual([
      { filename: '/dev/sda5', by: ['/etc/fstab:1'] },
      { filename: '/swap-manual', by: [], manager: { unit: 'swap\\x2dmanual.swap', fragment: null, source: null, pulledBy: [] } },
    ]);
    const changes = diffSwap(SPEC, o, { live: true });
    const line = changes.find((c) => c.id === 'origin:/swap-manual')!;
    expect(line.action).toBe('operator');
    expect(line.operator).toContain('searched /etc/fstab (1 swap line)');
    expect(line.operator).toContain('boot scripts');
    expect(line.operator).toContain('knows swap\\x2dmanual.swap only from /proc/swaps');
    expect(changes.some((c) => c.id === 'origin:/dev/sda5')).toBe(false);
    // A boot script's swapon of the file explains it: the script's own line is the operator's.
    const scripts = {
      hits: [
        {
          source: 'rc.local',
          file: '/etc/rc.local',
          line: 3,
          first: 3,
          last: 3,
          text: 'swapon /swap-manual',
          action: { kind: 'swapon', argv: ['swapon', '/swap-manual'] },
          runBy: 'rc-local.service runs it at boot',
          neutralisable: true,
        },
      ],
      unknown: [],
      contents: {},
      read: [],
    };
    expect(diffSwap(SPEC, { ...o, bootScripts: scripts } as never, { live: true }).some((c) => c.id.startsWith('origin:'))).toBe(false);
  });

  it("a generator's swap unit that only swap.target pulls in (gpt-auto) is stopped by the mask: no operator line", async () => {
    build({
      'proc/swaps': 'Filename\tType\tSize\tUsed\tPriority\n/dev/vda3 partition 1000 0 -2\n',
      'proc/meminfo': 'MemTotal: 4000000 kB\nSwapTotal: 1000 kB\n',
      'dev/vda3': '',
    });
    const show = 'LoadState=loaded\nFragmentPath=/run/systemd/generator.late/dev-vda3.swap\nSourcePath=\nWantedBy=swap.target\nRequiredBy=\n';
    const runner: CommandRunner = async (cmd) => ({ command: cmd, exitCode: 0, stdout: cmd === 'systemd-escape' ? 'dev-vda3.swap\n' : show, stderr: '' });
    const host = new Host({ root, live: true, runner });
    const masked = diffSwap(SPEC, await observeSwap(host, SPEC), { live: true });
    expect(masked.filter((c) => c.action === 'operator')).toEqual([]);
    // Without the mask nothing stops it: the line names what systemd said.
    const spec = { ...SPEC, mask_swap_target: false };
    const open = diffSwap(spec, await observeSwap(host, spec), { live: true }).find((c) => c.id === 'origin:/dev/vda3')!;
    expect(open.operator).toContain('from /run/systemd/generator.late/dev-vda3.swap, pulled in by swap.target');
  });
});
