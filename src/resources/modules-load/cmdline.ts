// ModulesLoad's kernel command line lines: a module_blacklist= or
// modprobe.blacklist= entry naming a wanted module is the boot loader's
// configuration, which a person edits and regenerates; each is an operator
// line naming the file and line. Pure.
import type { Change } from '../types.js';
import type { CmdlineObserved, BootCmdlineBlock } from '../../modprobe/observe.js';
import type { CmdlineBlock } from '../../modprobe/kernel-cmdline.js';
import { GRUB_DEFAULT, KERNEL_CMDLINE } from '../../modprobe/boot-cmdline.js';
import { modulePromise } from './promises.js';

export type CmdlineOp = { kind: 'none' };

/** The fact a loaded module is (resources/modules-load.ts's moduleFact, repeated to keep this file free of the provider). */
const fact = (m: string) => `module:${m}`;

function effect(b: CmdlineBlock): string {
  const via = b.via ? ` (through ${b.via}, which it needs)` : '';
  return b.kind === 'kernel'
    ? `the kernel refuses to load ${b.module}${via}`
    : `systemd-modules-load skips ${b.module} (libkmod's blacklist; a manual modprobe still loads it)`;
}

function where(b: BootCmdlineBlock): string {
  if (b.piece === null) return b.loader === 'grub' ? `the GRUB command line (${GRUB_DEFAULT} and its grub.d files)` : KERNEL_CMDLINE;
  return `${b.piece.file}:${b.piece.line}${b.piece.variable ? ` (${b.piece.variable})` : ''}`;
}

function fix(b: BootCmdlineBlock): string {
  const what = b.block.entry === b.block.word.slice(b.block.word.indexOf('=') + 1) ? `\`${b.block.word}\`` : `${b.block.entry} from \`${b.block.word}\``;
  const regen = b.loader === 'grub' ? 'run update-grub' : "reinstall the kernel entries (kernel-install add, or your boot loader's tool)";
  return `remove ${what} at ${where(b)}, ${regen}, and reboot`;
}

export function cmdlineChanges(o: CmdlineObserved | undefined, loaded: ReadonlySet<string>): Change<CmdlineOp>[] {
  if (o === undefined) return [];
  const changes: Change<CmdlineOp>[] = [];
  const bootBlocked = new Set(o.boot.map((b) => b.block.module));

  // The next boot: every entry in a boot loader's configuration.
  for (const b of o.boot) {
    changes.push({
      id: `cmdline-boot:${b.loader}:${b.block.kind}:${b.block.module}`,
      action: 'operator',
      summary: `at boot ${effect(b.block)}: \`${b.block.word}\` on the kernel command line at ${where(b)}`,
      operator: fix(b),
      op: { kind: 'none' },
      // The next boot's command line: the module may load now, not at the next boot; the other modules are untouched.
      withdraws: [{ promise: modulePromise(b.block.module), from: 'boot' }],
    });
  }
  for (const u of o.unknown) {
    changes.push({
      id: `cmdline-unknown:${u.file}:${u.line}`,
      action: 'operator',
      summary: `unknown: whether the next boot's kernel command line stops a wanted module cannot be judged: ${u.file}:${u.line}: ${u.message}`,
      operator: `${u.file}:${u.line}: check that it adds no module_blacklist= or modprobe.blacklist= naming a wanted module, or write the command line as a literal`,
      op: { kind: 'none' },
    });
  }

  // Now: the running kernel's own command line.
  for (const b of o.running?.blocks ?? []) {
    if (loaded.has(b.module)) continue;
    const nowBlocked = b.kind === 'kernel';
    if (!nowBlocked && bootBlocked.has(b.module)) continue; // modprobe loads it now; the boot line above covers the boot
    if (!nowBlocked && o.loaders.length > 0) continue; // the boot configuration no longer has it: gone at the next boot
    const next =
      o.loaders.length === 0
        ? `and none of ${o.searched.join(', ')} sets it: find where the boot loader sets the command line, remove it there, and reboot`
        : bootBlocked.has(b.module)
          ? 'until the boot configuration above is fixed and the host rebooted'
          : 'until a reboot (the boot configuration read here no longer has it)';
    changes.push({
      id: `cmdline-now:${b.kind}:${b.module}`,
      action: 'operator',
      summary: `${nowBlocked ? `modprobe ${b.module} would fail now` : `at boot systemd-modules-load would skip ${b.module}`}: ${effect(b)}, as the running kernel's command line (/proc/cmdline) has \`${b.word}\``,
      operator: `\`${b.word}\` is on the running kernel's command line ${next}`,
      op: { kind: 'none' },
      unmet: nowBlocked ? [fact(b.module)] : [],
      // The kernel refuses it now; libkmod's blacklist only skips it at boot (modprobe by name still loads it now).
      withdraws: [{ promise: modulePromise(b.module), from: nowBlocked ? 'apply' : 'boot' }],
    });
  }
  return changes;
}

/** Modules the running kernel refuses now (module_blacklist= on /proc/cmdline): no modprobe is planned for them. */
export function refusedNow(o: CmdlineObserved | undefined): Set<string> {
  return new Set((o?.running?.blocks ?? []).filter((b) => b.kind === 'kernel').map((b) => b.module));
}
