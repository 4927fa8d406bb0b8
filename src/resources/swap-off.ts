// SwapOff: no swap active now, and none that can come back at boot.
// Boot-time sources (design.md §4 Swap): fstab lines of type swap, native
// .swap units enabled under swap.target, zram-generator config, and
// gpt-auto swap partitions; masking swap.target stops all of them.
import type { TargetFs, TargetHost } from '../host.js';
import type { SwapOffSpec } from '../desired-state.js';
import type { Change, Provider } from './types.js';
import type { WriteDoor } from '../door/door.js';
import { readMeminfo } from '../observe/meminfo.js';
import { commentOutLines, disabledByUs, parseFstab, swapEntries, type FstabEntry } from '../swap/fstab.js';
import { parseProcSwaps, type ActiveSwap } from '../swap/proc-swaps.js';
import { isSwapTargetMasked, readEnabledSwapUnits, SWAP_TARGET } from '../swap/units.js';
import { removeUnitLinks } from '../systemd/unit-links.js';
import { readZramDevices } from '../swap/zram.js';
import { SIGNATURE_SPAN, swapSignature } from '../swap/signature.js';
import { swapConcern, withBootScripts } from './boot-script-hook.js';
import { SWAP_PROMISE } from '../promises.js';
import type { RefusedSwapFile, SwapObserved } from './swap-off/observed.js';

export const FSTAB = '/etc/fstab';

export type SwapOp =
  | { kind: 'swapoff'; device: string }
  | { kind: 'fstab'; lines: number[] }
  | { kind: 'disable-unit'; unit: string; links: string[] }
  | { kind: 'mask-swap-target' }
  | { kind: 'remove-swap-file'; path: string }
  | { kind: 'none' };

function describeEntry(e: FstabEntry): string {
  return `line ${e.line}: ${e.spec}`;
}

/** Why `p` (named as swap by `source`) must not be deleted; null when it is a swap file we may delete, undefined when there is nothing to judge. */
async function swapFileRefusal(host: TargetFs, p: string): Promise<string | null | undefined> {
  // Devices and partitions are swap too, but never files to delete: nothing to refuse either.
  if (!p.startsWith('/') || p === '/dev' || p.startsWith('/dev/')) return undefined;
  const st = await host.lstat(p);
  if (st === null) return undefined;
  if (st.isSymbolicLink()) return `is a symlink (to ${(await host.readLink(p)) ?? '?'}); only a regular file is deleted, never what a link points at`;
  if (!st.isFile()) return `is ${st.isDirectory() ? 'a directory' : st.isBlockDevice() ? 'a block device' : 'not a regular file'}`;
  if (st.nlink > 1) return `has ${st.nlink} hard links; deleting one name would free nothing and the content is shared`;
  const head = await host.readHead(p, SIGNATURE_SPAN);
  if (head === null) return 'is not a regular file';
  const sig = swapSignature(head);
  return sig.swap ? null : sig.reason;
}

export async function observeSwap(host: TargetFs): Promise<SwapObserved> {
  let active: ActiveSwap[] | null = null;
  let swapTotalKb: number | null = null;
  let memTotalKb: number | null = null;
  if (host.live) {
    active = parseProcSwaps((await host.readKernel('/proc/swaps')) ?? '');
    const meminfo = await readMeminfo(host);
    swapTotalKb = meminfo.get('SwapTotal') ?? 0;
    memTotalKb = meminfo.get('MemTotal') ?? null;
  }
  const content = await host.readBytes(FSTAB);
  const swap = content === null ? [] : swapEntries(parseFstab(content));
  const disabled = content === null ? [] : disabledByUs(content);

  const units = await readEnabledSwapUnits(host);
  // Where each candidate is named as swap: fstab (active or commented out by us), a .swap unit, /proc/swaps.
  const candidates = new Map<string, string>();
  const name = (p: string, why: string) => candidates.has(p) || candidates.set(p, why);
  for (const e of swap) if (e.device.kind === 'path') name(e.device.value, `${FSTAB}:${e.line}`);
  for (const e of disabled) if (e.device.kind === 'path') name(e.device.value, `${FSTAB}:${e.line} (commented out)`);
  for (const u of units) if (u.what?.startsWith('/')) name(u.what, u.unit);
  for (const a of active ?? []) if (a.type === 'file') name(a.filename, '/proc/swaps');
  const swapFiles: string[] = [];
  const refusedSwapFiles: RefusedSwapFile[] = [];
  for (const [p, source] of [...candidates].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const refusal = await swapFileRefusal(host, p);
    if (refusal === null) swapFiles.push(p);
    else if (refusal !== undefined) refusedSwapFiles.push({ path: p, source, reason: refusal });
  }

  return {
    live: host.live,
    active,
    swapTotalKb,
    memTotalKb,
    fstab: { path: FSTAB, content, swap, disabled },
    units,
    zram: await readZramDevices(host),
    swapTargetMasked: await isSwapTargetMasked(host),
    swapFiles,
    refusedSwapFiles,
  };
}

export function diffSwap(spec: SwapOffSpec, o: SwapObserved, ctx: { live: boolean }): Change<SwapOp>[] {
  const changes: Change<SwapOp>[] = [];

  // Runtime first: swapoff each active area (live only; offline nothing runs).
  if (ctx.live && o.active) {
    for (const a of o.active) {
      changes.push({
        id: `swapoff:${a.filename}`,
        action: 'runtime',
        runtime: true,
        summary: `swapoff ${a.filename} (${a.type}, ${a.sizeKb} kB, ${a.usedKb} kB used)`,
        op: { kind: 'swapoff', device: a.filename },
      });
    }
  }

  if (o.fstab.content !== null && o.fstab.swap.length > 0) {
    const lines = o.fstab.swap.map((e) => e.line);
    changes.push({
      id: 'fstab',
      action: 'update',
      summary: `comment out ${lines.length} swap line${lines.length > 1 ? 's' : ''} in ${o.fstab.path} (${o.fstab.swap.map(describeEntry).join(', ')})`,
      file: { path: o.fstab.path, before: o.fstab.content, after: commentOutLines(o.fstab.content, lines) },
      op: { kind: 'fstab', lines },
    });
  }

  for (const u of o.units) {
    changes.push({
      id: `unit:${u.unit}`,
      action: 'disable',
      summary: `disable ${u.unit}${u.what ? ` (${u.what})` : ''}${u.kind === 'swap-service' ? ' (runs swapon itself; masking swap.target does not stop it)' : ''}: remove ${u.links.join(', ')}`,
      op: { kind: 'disable-unit', unit: u.unit, links: u.links },
    });
  }

  if (spec.mask_swap_target && !o.swapTargetMasked) {
    changes.push({
      id: 'mask:swap.target',
      action: 'mask',
      summary: `mask swap.target (${SWAP_TARGET} -> /dev/null) so no swap source is pulled in at boot`,
      op: { kind: 'mask-swap-target' },
    });
  }

  const zramSwap = o.zram.filter((z) => z.swap);
  if (zramSwap.length > 0 && !spec.mask_swap_target && !o.swapTargetMasked) {
    changes.push({
      id: 'zram',
      action: 'operator',
      summary: `zram-generator will create swap on ${zramSwap.map((z) => `/dev/${z.device}`).join(', ')} at boot`,
      operator: `zram-generator config (${[...new Set(zramSwap.map((z) => z.file))].join(', ')}) makes swap at boot and swap.target is not masked: set mask_swap_target: true or remove the config`,
      op: { kind: 'none' },
    });
  }

  if (spec.remove_swap_files) {
    for (const r of o.refusedSwapFiles ?? []) {
      changes.push({
        id: `remove-refused:${r.path}`,
        action: 'operator',
        summary: `not deleting ${r.path} (named as swap by ${r.source}): it ${r.reason}`,
        operator: `${r.source} names ${r.path} as swap, but it ${r.reason}; remove_swap_files deletes only swap files: check that entry`,
        op: { kind: 'none' },
      });
    }
    for (const p of o.swapFiles) {
      changes.push({
        id: `remove:${p}`,
        action: 'delete',
        summary: `delete swap file ${p}`,
        op: { kind: 'remove-swap-file', path: p },
      });
    }
  }
  return changes;
}

const ORDER: Record<SwapOp['kind'], number> = {
  swapoff: 0,
  fstab: 1,
  'disable-unit': 2,
  'mask-swap-target': 3,
  'remove-swap-file': 4,
  none: 5,
};

export async function applySwap(host: TargetHost, changes: Change<SwapOp>[], door: WriteDoor): Promise<void> {
  // swapoff before deleting a file; config changes in any order, then one daemon-reload.
  const todo = [...changes].sort((a, b) => ORDER[a.op.kind] - ORDER[b.op.kind]);
  let unitsChanged = false;
  for (const c of todo) {
    const op = c.op;
    switch (op.kind) {
      case 'swapoff':
        await door.runtime({ step: 'swapoff', device: op.device }, () => host.runChecked('swapoff', [op.device]));
        break;
      case 'fstab':
        if (c.file && c.file.after !== null) await door.writeFile({ path: c.file.path, expect: c.file.before, content: c.file.after });
        break;
      case 'disable-unit':
        await removeUnitLinks(door, op.links);
        unitsChanged = true;
        break;
      case 'mask-swap-target':
        await door.symlink(SWAP_TARGET, '/dev/null');
        unitsChanged = true;
        break;
      case 'remove-swap-file':
        // The pages of a swap file are nothing to restore, and copying gigabytes could fill the disk.
        await door.remove(op.path, { backup: false });
        break;
      case 'none':
        break;
    }
  }
  if (unitsChanged && host.live) await door.runtime({ step: 'daemon-reload' }, () => host.runChecked('systemctl', ['daemon-reload']));
}

const swapOffOwn: Provider<SwapOffSpec, SwapObserved, SwapOp> = {
  type: 'SwapOff',
  after: [],
  promised: () => [{ id: SWAP_PROMISE, kind: 'swap', subject: 'swap', expect: 'off' }],
  observe: (host) => observeSwap(host),
  diff: (spec, observed, ctx) => diffSwap(spec, observed, ctx),
  apply: (host, _spec, changes, ctx) => applySwap(host, changes, ctx.door),
};

/** With the boot-script scan (issue 17): script lines that would undo this resource at boot. */
export const swapOffProvider = withBootScripts(swapOffOwn, swapConcern);
