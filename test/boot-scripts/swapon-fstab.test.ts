// `swapon -a` turns on the swap lines of /etc/fstab and nothing else
// (swapon(8) of util-linux: "-a: all devices marked as swap in /etc/fstab
// are made available, except for those with the noauto option"; -e only
// skips devices that do not exist). So a boot script's `swapon -a` is judged
// against fstab as the plan leaves it: with SwapOff's own rewrite of the
// file, nothing is left for it to turn on, and "swap off at the next boot"
// holds. open-iscsi's stock activate-storage.sh (Debian 12's package, byte
// for byte: test/fixtures/debian-packages/) is the case the issue names.
// A swapon naming a device or file is still a line that takes swap back.
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTree } from '../helpers/tree.js';
import { execActions, readShellScript } from '../../src/boot-scripts/shell-lines.js';
import { swapConcern } from '../../src/resources/swap-off/boot-scripts.js';
import type { BootScriptHit } from '../../src/boot-scripts/scan.js';

const BUNDLE = path.resolve('dist/reconcile.mjs');
const OPEN_ISCSI = path.resolve('test/fixtures/debian-packages/open-iscsi_2.1.8-1+deb12u1');
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

interface Doc {
  promises: Array<{ id: string; at_boot: boolean; withdrawn_by: Array<{ line: string }> }>;
  resources: Array<{ type: string; changes: Array<{ id: string; action: string; summary: string }> }>;
}

/** A root with open-iscsi installed as its package installs it and enabled (its [Install] WantedBy=sysinit.target), and `fstab`. */
function iscsiRoot(fstab: string, extra: Record<string, string> = {}): string {
  const root = mkdtempSync(path.join(tmpdir(), 'swapon-a-'));
  roots.push(root);
  cpSync(OPEN_ISCSI, root, { recursive: true });
  buildTree(root, {
    'etc/fstab': fstab,
    'etc/systemd/system/sysinit.target.wants/open-iscsi.service': { link: '/lib/systemd/system/open-iscsi.service' },
    'desired.yaml': 'reports_dir: /root/ks/preflight\nfirst_boot: off\nresources:\n  - type: SwapOff\n',
    ...extra,
  });
  return root;
}

function plan(root: string): Doc {
  const r = spawnSync(process.execPath, [BUNDLE, '--plan', '--json', '-f', path.join(root, 'desired.yaml'), '--root', root], { encoding: 'utf8' });
  expect([0, 2], r.stderr).toContain(r.status);
  return JSON.parse(r.stdout) as Doc;
}

const swapPromise = (d: Doc) => d.promises.find((p) => p.id === 'swap:off')!;
const scriptLines = (d: Doc) => d.resources.flatMap((r) => r.changes).filter((c) => c.id.startsWith('boot-script:'));

describe("open-iscsi's activate-storage.sh (swapon -a -e) against the fstab the plan leaves", () => {
  it('the stock script is read and its swapon -a -e found (inside if ... fi, under ExecStart= of open-iscsi.service)', () => {
    const text = spawnSync('cat', [path.join(OPEN_ISCSI, 'lib/open-iscsi/activate-storage.sh')], { encoding: 'utf8' }).stdout;
    const hits = readShellScript(text).commands.filter((c) => c.actions.some((a) => a.kind === 'swapon'));
    expect(hits.map((c) => c.words)).toEqual([['swapon', '-a', '-e']]);
    expect(hits[0]!.actions).toEqual([{ kind: 'swapon', argv: ['swapon', '-a', '-e'], fstabOnly: true }]);
  });

  it('fstab with a swap line the plan comments out: swapon -a turns nothing on, swap stays off at the next boot', () => {
    const doc = plan(iscsiRoot('UUID=1 / ext4 defaults 0 1\n/swapfile none swap sw 0 0\n'));
    expect(doc.resources[0]!.changes.map((c) => c.id)).toContain('fstab');
    expect(scriptLines(doc)).toEqual([]);
    expect(swapPromise(doc)).toMatchObject({ at_boot: true, withdrawn_by: [] });
  });

  it('fstab with no swap line at all (nothing to change): the same', () => {
    const doc = plan(iscsiRoot('UUID=1 / ext4 defaults 0 1\n# /swapfile none swap sw 0 0\n'));
    expect(scriptLines(doc)).toEqual([]);
    expect(swapPromise(doc)).toMatchObject({ at_boot: true, withdrawn_by: [] });
  });

  it('a swapon naming a file at boot still takes swap back (rc.local beside the stock script)', () => {
    const root = iscsiRoot('UUID=1 / ext4 defaults 0 1\n', { 'etc/rc.local': '#!/bin/sh\nswapon /swapfile\nexit 0\n' });
    chmodSync(path.join(root, 'etc/rc.local'), 0o755);
    const doc = plan(root);
    expect(scriptLines(doc).map((c) => c.id)).toEqual(['boot-script:/etc/rc.local:2']);
    expect(swapPromise(doc).at_boot).toBe(false);
    expect(swapPromise(doc).withdrawn_by.map((w) => w.line)).toEqual(['boot-script:/etc/rc.local:2']);
  });
});

describe('the judgement itself: swap lines left in fstab once the plan is applied', () => {
  const hit = (argv: string[], fstab: string | null): BootScriptHit => {
    const [action] = execActions(argv);
    return {
      source: 'rc.local',
      file: '/etc/rc.local',
      line: 2,
      first: 2,
      last: 2,
      text: argv.join(' '),
      action: action as BootScriptHit['action'],
      runBy: 'rc-local.service runs it at boot',
      neutralisable: true,
      fstab,
    };
  };

  it('a swap line the plan leaves active (its rewrite not planned) is turned on, and named; a noauto line is not', () => {
    const fstab = 'UUID=1 / ext4 defaults 0 1\n/swap-a none swap sw 0 0\n/swap-b none swap noauto 0 0\n';
    expect(swapConcern.judge({ type: 'SwapOff' }, hit(['swapon', '-a', '-e'], fstab), new Map())).toBe(
      'turns swap on (swapon -a -e: /etc/fstab:2 /swap-a stays a swap line once this plan is applied)',
    );
    // The plan's own rewrite of /etc/fstab decides, not the bytes read now.
    expect(
      swapConcern.judge(
        { type: 'SwapOff' },
        hit(['swapon', '-a'], fstab),
        new Map([['/etc/fstab', 'UUID=1 / ext4 defaults 0 1\n#/swap-a none swap sw 0 0\n']]),
      ),
    ).toBeNull();
    expect(swapConcern.judge({ type: 'SwapOff' }, hit(['swapon', '--all', '--ifexists', '-v'], '/swap-b none swap noauto 0 0\n'))).toBeNull();
    expect(swapConcern.judge({ type: 'SwapOff' }, hit(['swapon', '-a'], null))).toBeNull();
  });

  it('swapon -a that also names a device, a label, a UUID or another fstab is judged as any swapon: it turns swap on', () => {
    for (const argv of [
      ['swapon', '-a', '/swapfile'],
      ['swapon', '-a', '-L', 'SWAP'],
      ['swapon', '-aU', '0000'],
      ['swapon', '-a', '-T', '/etc/other.fstab'],
      ['swapon', '-a', '--fstab=/etc/other.fstab'],
      ['swapon', '/swapfile'],
    ]) {
      const h = hit(argv, '');
      expect(h.action).toEqual({ kind: 'swapon', argv });
      expect(swapConcern.judge({ type: 'SwapOff' }, h)).toBe(`turns swap on (${argv.join(' ')})`);
    }
    // Values of -p and -o are not devices.
    expect(hit(['swapon', '-a', '-p', '5', '-o', 'discard'], '').action).toEqual({
      kind: 'swapon',
      argv: ['swapon', '-a', '-p', '5', '-o', 'discard'],
      fstabOnly: true,
    });
    expect(hit(['swapon', '-ae', '-p5', '--discard=once'], '').action).toEqual({
      kind: 'swapon',
      argv: ['swapon', '-ae', '-p5', '--discard=once'],
      fstabOnly: true,
    });
  });
});
