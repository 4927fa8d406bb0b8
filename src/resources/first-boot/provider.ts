// FirstBoot: what an offline apply (--root) installs so that the image
// finishes at its first boot the work only a running system can do. It is
// not a desired-state resource: the engine adds it in image mode when
// `first_boot` is apply or verify and the plan leaves such work. Everything
// goes through the write door, so the journal has it and --rollback removes it.
import type { TargetFs } from '../../host.js';
import type { ByteString } from '../../bytes.js';
import { utf8Bytes } from '../../bytes.js';
import type { Change, Provider } from '../types.js';
import { FIRST_BOOT_UNIT, IMAGE_BUNDLE, IMAGE_DESIRED, PACKAGED_PROGRAM, STAMP, UNIT_PATH, WANTS_LINK, firstBootUnit } from './unit.js';
import { firstBootSpec, type FirstBootSpec } from './spec.js';

export type { FirstBootSpec };

export interface FirstBootObserved {
  /** /usr/bin/k8s-host-reconcile is in the image (the Debian package): nothing to copy. */
  packaged: boolean;
  /** Where node was found in the image, or null. */
  node: string | null;
  bundle: ByteString | null;
  desired: ByteString | null;
  unit: ByteString | null;
  /** Text of the .wants link, or null. */
  wants: string | null;
  stamp: boolean;
}

export type FirstBootOp = { kind: 'file'; mode: number } | { kind: 'bundle' } | { kind: 'link'; text: string } | { kind: 'remove-stamp' } | { kind: 'none' };

const NODE_PATHS = ['/usr/bin/node', '/usr/local/bin/node', '/bin/node', '/usr/bin/nodejs'];

async function isFileIn(host: TargetFs, target: string): Promise<boolean> {
  try {
    const real = await host.realTarget(target);
    const st = await host.lstat(real);
    return st !== null && st.isFile();
  } catch {
    return false;
  }
}

/** The unit's ExecStart program: the packaged one when the image has it, else node and the copied bundle. */
export function execOf(o: Pick<FirstBootObserved, 'packaged'>): string[] {
  return o.packaged ? [PACKAGED_PROGRAM] : ['/usr/bin/env', 'node', IMAGE_BUNDLE];
}

/** Long enough for node under emulation, every candidate's wait and PortFree's own waits. */
export function unitTimeoutSec(spec: Pick<FirstBootSpec, 'candidates' | 'portTimeoutSec'>): number {
  return Math.max(900, spec.portTimeoutSec * (spec.candidates.length + 3) + 300);
}

function fileChange(id: string, path: string, before: ByteString | null, after: ByteString, summary: string, mode = 0o644): Change<FirstBootOp> {
  return { id, action: before === null ? 'create' : 'update', summary, file: { path, before, after }, op: { kind: 'file', mode } };
}

export const firstBootProvider: Provider<FirstBootSpec, FirstBootObserved, FirstBootOp> = {
  type: 'FirstBoot',
  // Independent of the others: a bake that fails elsewhere still says what its first boot would do.
  after: [],
  // Not in the desired state: derived from the plan of the resources that are.
  derive: firstBootSpec,
  // Its .wants link keeps multi-user.target.wants from being emptied (and removed) by a disable only to be
  // created again, so an interrupted bake never leaves that directory missing.
  applyFirst: true,

  async observe(host) {
    const packaged = await isFileIn(host, PACKAGED_PROGRAM);
    let node: string | null = null;
    for (const p of NODE_PATHS) {
      if (await isFileIn(host, p)) {
        node = p;
        break;
      }
    }
    return {
      packaged,
      node,
      bundle: packaged ? null : await host.readBytes(IMAGE_BUNDLE),
      desired: await host.readBytes(IMAGE_DESIRED),
      unit: await host.readBytes(UNIT_PATH),
      wants: await host.readLink(WANTS_LINK),
      stamp: await host.exists(STAMP),
    };
  },

  diff(spec, o) {
    const changes: Change<FirstBootOp>[] = [];
    const verb = spec.mode === 'apply' ? 'reconcile --apply' : 'reconcile --plan (verify: the unit fails when anything is pending)';
    if (!o.packaged && o.node === null) {
      changes.push({
        id: 'node',
        action: 'operator',
        summary: `the first boot needs node in the image (looked for ${NODE_PATHS.join(', ')})`,
        operator: "install Debian's nodejs (>= 18) or the k8s-host-reconcile .deb into the image, or set first_boot: off",
        op: { kind: 'none' },
      });
    }
    if (!o.packaged) {
      if (spec.bundle === null) {
        changes.push({
          id: 'bundle',
          action: 'operator',
          summary: `no single-file program to copy to ${IMAGE_BUNDLE}`,
          operator: 'this run is not the bundle (it runs from the sources); bake with dist/reconcile.mjs (npm run bundle) or /usr/bin/k8s-host-reconcile',
          op: { kind: 'none' },
        });
      } else if (o.bundle !== spec.bundle.bytes) {
        changes.push({
          id: 'bundle',
          action: o.bundle === null ? 'create' : 'update',
          summary: `${o.bundle === null ? 'copy' : 'replace the older copy with'} this program (${spec.bundle.path}, ${spec.bundle.bytes.length} bytes) to ${IMAGE_BUNDLE}`,
          op: { kind: 'bundle' },
        });
      }
    }
    if (o.desired !== spec.desired.bytes) {
      changes.push(
        fileChange(
          'desired',
          IMAGE_DESIRED,
          o.desired,
          spec.desired.bytes,
          `copy the desired state (${spec.desired.source}) to ${IMAGE_DESIRED} for the first boot`,
        ),
      );
    }
    const unit = utf8Bytes(firstBootUnit({ exec: execOf(o), after: spec.candidates, timeoutSec: unitTimeoutSec(spec) }));
    if (o.unit !== unit)
      changes.push(
        fileChange('unit', UNIT_PATH, o.unit, unit, `${o.unit === null ? 'install' : 'update'} ${FIRST_BOOT_UNIT}, which runs ${verb} once at first boot`),
      );
    if (o.wants !== UNIT_PATH) {
      changes.push({
        id: 'enable',
        action: 'create',
        summary: `enable ${FIRST_BOOT_UNIT} for the first boot (link ${WANTS_LINK} -> ${UNIT_PATH})`,
        op: { kind: 'link', text: UNIT_PATH },
      });
    }
    if (o.stamp) {
      changes.push({
        id: 'stamp',
        action: 'delete',
        summary: `remove ${STAMP}, left by an earlier first boot of this tree, so this image's first boot runs`,
        op: { kind: 'remove-stamp' },
      });
    }
    const waits =
      spec.candidates.length > 0
        ? `waits (up to ${spec.portTimeoutSec} s each) until ${spec.candidates.join(', ')} listen${spec.candidates.length === 1 ? 's' : ''} on a wanted port or stop${spec.candidates.length === 1 ? 's' : ''}, then `
        : '';
    changes.push({
      id: 'first-boot',
      action: 'deferred',
      summary: `at first boot ${FIRST_BOOT_UNIT} ${waits}runs ${verb} live: ${spec.work.length > 0 ? spec.work.join('; ') : 'checks the host against the desired state'}; it writes before.json, ports.json and first-boot.json, logs to the journal, and disables itself when it succeeded`,
      op: { kind: 'none' },
    });
    return changes;
  },

  summarize(spec, o) {
    return { mode: spec.mode, packaged: o.packaged, node: o.node, candidates: spec.candidates, exec: execOf(o) };
  },

  async apply(_host, spec, changes, ctx) {
    for (const c of changes) {
      const op = c.op;
      if (op.kind === 'file') await ctx.door.writeFile({ path: c.file!.path, expect: c.file!.before, content: c.file!.after!, mode: op.mode });
      // No stale check: the plan keeps no copy of a megabyte it only replaces with this program.
      else if (op.kind === 'bundle') await ctx.door.writeFile({ path: IMAGE_BUNDLE, content: spec.bundle!.bytes, mode: 0o755 });
      else if (op.kind === 'link') await ctx.door.symlink(WANTS_LINK, op.text);
      else if (op.kind === 'remove-stamp') await ctx.door.remove(STAMP);
    }
  },
};
