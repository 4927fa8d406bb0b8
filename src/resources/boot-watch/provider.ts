// BootWatch: what `apply --watch-next-boot` installs so that the next boot is
// watched from the kernel (src/boot-watch/). Not a desired-state resource: the
// engine derives it when the run asks for the watch. Everything goes through
// the write door, so the journal has it and --rollback removes it. Where the
// mechanism is missing (no bpftrace, a running kernel without BTF) it installs
// nothing and says so as an operator line: apply exits 1, and the plan's
// promises stay as they were made.
import type { ByteString } from '../../bytes.js';
import { utf8Bytes } from '../../bytes.js';
import type { TargetFs } from '../../host.js';
import type { BaseSpec, Change, DeriveInput, Provider } from '../types.js';
import { watchScript } from '../../boot-watch/script.js';
import {
  BPFTRACE,
  BTF,
  KEPT_LOG,
  SCRIPT_PATH,
  STOP_UNIT,
  STOP_UNIT_PATH,
  STOP_WANTS,
  WATCH_LOG,
  WATCH_STAMP,
  WATCH_UNIT,
  WATCH_UNIT_PATH,
  WATCH_WANTS,
  stopUnit,
  watchUnit,
} from '../../boot-watch/unit.js';

export interface BootWatchSpec extends BaseSpec {
  type: 'BootWatch';
}

export interface BootWatchObserved {
  bpftrace: boolean;
  /** The running kernel has BTF; null: not a running kernel (--root), checked at boot by the unit itself. */
  btf: boolean | null;
  files: Record<string, ByteString | null>;
  links: Record<string, string | null>;
  stamp: boolean;
}

export type BootWatchOp =
  | { kind: 'file' }
  /** `later`: the file the linked unit writes at the watched boot, outside the door: journaled with the link, so rollback removes it. */
  | { kind: 'link'; text: string; later: { path: string; by: string } }
  | { kind: 'remove-stamp' }
  | { kind: 'none' };

/** Each file the watch installs, with what it must hold. */
const FILES: ReadonlyArray<readonly [string, () => string, string]> = [
  [SCRIPT_PATH, watchScript, 'the tracer (bpftrace program)'],
  [WATCH_UNIT_PATH, watchUnit, 'the watcher unit'],
  [STOP_UNIT_PATH, stopUnit, 'the unit that ends the watch after multi-user.target'],
];
/** Each enabling link, with what its unit writes at the watched boot (the stamp; the kept copy of the record). */
const LINKS: ReadonlyArray<readonly [string, string, { path: string; by: string }]> = [
  [WATCH_WANTS, WATCH_UNIT_PATH, { path: WATCH_STAMP, by: WATCH_UNIT }],
  [STOP_WANTS, STOP_UNIT_PATH, { path: KEPT_LOG, by: STOP_UNIT }],
];

async function isFile(host: TargetFs, p: string): Promise<boolean> {
  try {
    const st = await host.lstat(await host.realTarget(p));
    return st !== null && st.isFile();
  } catch {
    return false;
  }
}

/** The spec when the run asks for the watch; null otherwise. */
export function bootWatchSpec(input: Pick<DeriveInput, 'watchNextBoot'>): BootWatchSpec | null {
  return input.watchNextBoot ? { type: 'BootWatch', name: 'BootWatch' } : null;
}

function missing(o: BootWatchObserved): Change<BootWatchOp> | null {
  const lacks = [...(o.bpftrace ? [] : [`no ${BPFTRACE}`]), ...(o.btf === false ? [`the running kernel has no BTF (${BTF})`] : [])];
  if (lacks.length === 0) return null;
  return {
    id: 'mechanism',
    action: 'operator',
    summary: `the next boot cannot be watched: ${lacks.join(', ')}; nothing is installed and the plan's promises for the next boot stay unchecked by the kernel`,
    operator: o.bpftrace
      ? 'boot a kernel built with CONFIG_DEBUG_INFO_BTF=y (Debian 12 and 13 kernels are), or leave out --watch-next-boot'
      : 'install the bpftrace package (apt-get install bpftrace), or leave out --watch-next-boot',
    op: { kind: 'none' },
  };
}

export const bootWatchProvider: Provider<BootWatchSpec, BootWatchObserved, BootWatchOp> = {
  type: 'BootWatch',
  after: [],
  derive: bootWatchSpec,

  async observe(host) {
    const files: Record<string, ByteString | null> = {};
    for (const [p] of FILES) files[p] = await host.readBytes(p);
    const links: Record<string, string | null> = {};
    for (const [p] of LINKS) links[p] = await host.readLink(p);
    return {
      bpftrace: await isFile(host, BPFTRACE),
      btf: host.live ? await host.exists(BTF) : null,
      files,
      links,
      stamp: await host.exists(WATCH_STAMP),
    };
  },

  diff(_spec, o) {
    const lacking = missing(o);
    if (lacking) return [lacking];
    const changes: Change<BootWatchOp>[] = [];
    for (const [p, content, what] of FILES) {
      const after = utf8Bytes(content());
      const before = o.files[p] ?? null;
      if (before !== after)
        changes.push({
          id: `file:${p}`,
          action: before === null ? 'create' : 'update',
          summary: `${before === null ? 'install' : 'update'} ${what} ${p}`,
          file: { path: p, before, after },
          op: { kind: 'file' },
        });
    }
    // Before the links: the stamp they journal is then absent, and a rollback (in reverse) removes the new stamp before it puts the old one back.
    if (o.stamp)
      changes.push({
        id: 'stamp',
        action: 'delete',
        summary: `remove ${WATCH_STAMP}, left by an earlier watched boot, so the next boot is watched`,
        op: { kind: 'remove-stamp' },
      });
    for (const [link, text, later] of LINKS)
      if (o.links[link] !== text)
        changes.push({
          id: `link:${link}`,
          action: 'create',
          summary: `enable it for the next boot (link ${link} -> ${text}); ${later.by} writes ${later.path} then, which --rollback undoes too (journaled now)`,
          op: { kind: 'link', text, later },
        });
    changes.push({
      id: 'watch',
      action: 'deferred',
      summary: `at the next boot ${WATCH_UNIT} attaches bpftrace before systemd-modules-load and systemd-sysctl and records to ${WATCH_LOG} every write of the promised sysctls, every swapon, every module removal and every bind or listen on the control-plane ports, with pid, cmdline and unit, until 30 s after multi-user.target; then it removes itself, leaving ${WATCH_STAMP} and a copy of the record in ${KEPT_LOG}. A plan on the booted host names the writer of each promise it finds broken`,
      op: { kind: 'none' },
    });
    return changes;
  },

  warnings(_spec, o) {
    return o.btf === null && o.bpftrace
      ? [`the image's kernel is not running: whether it has BTF (${BTF}) is known only at boot; without it the watcher unit fails and says so in its journal`]
      : [];
  },

  async apply(_host, _spec, changes, ctx) {
    for (const c of changes) {
      const op = c.op;
      if (op.kind === 'file') await ctx.door.writeFile({ path: c.file!.path, expect: c.file!.before, content: c.file!.after!, mode: 0o644 });
      else if (op.kind === 'link') {
        await ctx.door.symlink(c.id.slice('link:'.length), op.text);
        await ctx.door.expectLater(op.later.path, op.later.by);
      } else if (op.kind === 'remove-stamp') await ctx.door.remove(WATCH_STAMP);
    }
  },
};
