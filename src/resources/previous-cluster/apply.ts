// PreviousCluster's apply: every step through the door, in the plan's order. Units are stopped and
// disabled with the same journaled runtime steps PortFree takes (unit-stop, unit-disable with the links
// systemctl changed), offline their links are removed as `systemctl --root disable` would; files and
// directories are moved aside, never deleted, and a live manager reloads once after unit files went.
import type { Host } from '../../host.js';
import type { Change, ApplyContext, ApplyOutcome } from '../types.js';
import { linkDelta, removeUnitLinks, unitLinkSnapshot } from '../../systemd/unit-links.js';
import { rcLinkSnapshot } from '../../systemd/sysv.js';
import { humanBytes, type PreviousClusterOp } from './ops.js';

async function linkSnapshot(host: Host): Promise<Map<string, string>> {
  return new Map([...(await unitLinkSnapshot(host)), ...(await rcLinkSnapshot(host))]);
}

async function applyOne(host: Host, op: PreviousClusterOp, ctx: ApplyContext): Promise<boolean> {
  const { door } = ctx;
  if (op.kind === 'stop') {
    ctx.progress(`PreviousCluster: systemctl stop ${op.unit}`);
    await door.runtime({ step: 'unit-stop', units: [op.unit] }, () => host.runChecked('systemctl', ['stop', op.unit]));
  } else if (op.kind === 'disable') {
    const before = await linkSnapshot(host);
    await door.runtime(
      { step: 'unit-disable', units: [op.unit] },
      () => host.runChecked('systemctl', ['disable', op.unit]),
      async () => linkDelta(before, await linkSnapshot(host)),
    );
  } else if (op.kind === 'disable-links') {
    await removeUnitLinks(door, op.links);
  } else if (op.kind === 'aside') {
    // PortFree, applied first, may have masked the unit: its file set aside by PortFree, a link in its place, never moved.
    if (op.unitFile && (await host.lstat(op.path))?.isSymbolicLink()) {
      ctx.progress(`PreviousCluster: ${op.path} is a link now (masked since the plan): left as it is`);
      return false;
    }
    const moved = await door.moveAside(op.path);
    if (moved)
      ctx.progress(`PreviousCluster: moved ${op.path} aside to ${moved.to} (${moved.files} file${moved.files === 1 ? '' : 's'}, ${humanBytes(moved.bytes)})`);
    return op.unitFile && moved !== null;
  }
  return false;
}

export async function applyPreviousCluster(host: Host, changes: Change<PreviousClusterOp>[], ctx: ApplyContext): Promise<ApplyOutcome | void> {
  const errors: string[] = [];
  const failed: string[] = [];
  let reload = false;
  for (const c of changes) {
    try {
      if (await applyOne(host, c.op, ctx)) reload = true;
    } catch (e) {
      errors.push(`${c.summary}: ${(e as Error).message}`);
      failed.push(c.id);
    }
  }
  // The manager still knows a unit whose file went until it reloads (and would start it for a dependency).
  if (reload && host.live) await ctx.door.runtime({ step: 'daemon-reload' }, () => host.runChecked('systemctl', ['daemon-reload']));
  if (errors.length > 0) return { error: errors.join('; '), failedChanges: failed };
}
