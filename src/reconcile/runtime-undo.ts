// The undo of a run's runtime records, which needs what the door does not know: systemctl, the user managers
// the run reached, /etc/passwd. The door's rollback planner (door/rollback-plan.ts) hands each runtime record
// here, in the order it reads the journal, and asks for the daemon-reloads at the end.
import type { Host } from '../host.js';
import type { JournalRecord, LinkDelta, UserOf } from '../door/journal.js';
import { linkSteps, type RuntimeUndoer, type UndoSink } from '../door/rollback-plan.js';
import { SYSTEM_SYSTEMCTL, systemctlArgv, type Systemctl } from '../systemd/systemctl-show.js';
import { busSystemctl, parsePasswdAccounts, userSystemctl } from '../ports/user-manager.js';

type RecordOf<K extends JournalRecord['kind']> = Extract<JournalRecord, { kind: K }>;

/** One per rollback: it remembers whose user managers must reload. */
export class SystemdRuntimeUndo implements RuntimeUndoer {
  /** Users whose unit links the run changed: their managers reload. */
  private readonly userReloads = new Map<string, UserOf>();

  undo(u: UndoSink, s: RecordOf<'runtime'>['action'], result: LinkDelta | undefined): Promise<void> {
    return undoRuntime(u, this.userReloads, s, result);
  }

  finish(u: UndoSink): Promise<void> {
    return reloadSteps(u, this.userReloads);
  }
}

async function undoRuntime(u: UndoSink, userReloads: Map<string, UserOf>, s: RecordOf<'runtime'>['action'], result: LinkDelta | undefined): Promise<void> {
  const { host } = u;
  if (!u.runtimeOk) {
    if (s.step !== 'daemon-reload')
      u.notes.push(
        `${s.step} ${'units' in s ? s.units.join(' ') : 'device' in s ? s.device : 'module' in s ? s.module : 'key' in s ? s.key : 'id' in s ? s.id.slice(0, 12) : ''}: runtime state is put back only on the live host the run changed; offline only files and links are restored`,
      );
    return;
  }
  if (s.step === 'sysctl') {
    const before = s.before;
    if (before === null) u.notes.push(`${s.key}: its value before the run is unknown`);
    else
      u.steps.push({
        summary: `set ${s.key} back to ${before}`,
        act: (door) => door.runtime({ step: 'sysctl', key: s.key, path: s.path, before: null, value: before }, () => host.writeKernel(s.path, before)),
      });
  } else if (s.step === 'swapoff') {
    u.steps.push({
      summary: `swapon ${s.device}`,
      phase: 'runtime',
      act: (door) => door.runtime({ step: 'swapon', device: s.device }, async () => void (await host.runChecked('swapon', [s.device]))),
    });
  } else if (s.step === 'modprobe') {
    u.notes.push(`module ${s.module} stays loaded: unloading it (br_netfilter above all) can cut the host's networking`);
  } else if (s.step === 'container-stop') {
    // The container comes back as it was: its restart policy first (docker update), then started.
    u.steps.push({
      summary: `docker update --restart=${s.restart} ${s.id.slice(0, 12)} && docker start ${s.id.slice(0, 12)}`,
      phase: 'runtime',
      act: (door) =>
        door.runtime({ step: 'container-start', runtime: 'docker', id: s.id, restart: s.restart }, async () => {
          await host.runChecked('docker', ['update', `--restart=${s.restart}`, s.id]);
          await host.runChecked('docker', ['start', s.id]);
        }),
    });
  } else if (s.step === 'unit-stop') {
    const via = await managerOf(host, s);
    const summary = `start ${s.units.join(' ')}${s.user ? ` (${s.user}'s manager)` : ''}`;
    if (typeof via === 'string') u.steps.push({ summary, phase: 'runtime', conflict: via });
    else
      u.steps.push({
        summary,
        phase: 'runtime',
        act: (door) =>
          door.runtime(
            { step: 'unit-start', units: s.units, ...userOf(s) },
            async () => void (await host.runChecked(...systemctlArgv(via, ['start', ...s.units]))),
          ),
      });
  } else if (s.step === 'daemon-reload') {
    // The run reloaded after changing unit files through the door (a mask over an admin's unit file): so does the undo.
    if (s.user) userReloads.set(s.user, userOf(s));
    else u.unitLinksChanged = true;
  } else if (s.step === 'unit-disable' || s.step === 'unit-mask') {
    if (s.user) userReloads.set(s.user, userOf(s));
    else u.unitLinksChanged = true;
    u.steps.push(...linkSteps(result, `systemctl ${s.step === 'unit-mask' ? 'mask' : 'disable'} ${s.units.join(' ')}`));
  }
}

/** The daemon-reloads the undone unit links need: the system manager's, and each user's whose links changed. */
async function reloadSteps(u: UndoSink, userReloads: Map<string, UserOf>): Promise<void> {
  const { host } = u;
  if (!u.runtimeOk) return;
  if (u.unitLinksChanged) {
    u.steps.push({
      summary: 'systemctl daemon-reload',
      phase: 'reload',
      act: (door) => door.runtime({ step: 'daemon-reload' }, async () => void (await host.runChecked('systemctl', ['daemon-reload']))),
    });
  }
  for (const [user, who] of userReloads) {
    const via = await managerOf(host, who);
    if (typeof via === 'string') u.steps.push({ summary: `daemon-reload of ${user}'s manager`, phase: 'reload', conflict: via });
    else
      u.steps.push({
        summary: `${systemctlArgv(via, ['daemon-reload']).flat().join(' ')}`,
        phase: 'reload',
        act: (door) => door.runtime({ step: 'daemon-reload', ...who }, async () => void (await host.runChecked(...systemctlArgv(via, ['daemon-reload'])))),
      });
  }
}

/** The user part of a journaled step, as it is journaled again by the undo. */
function userOf(s: UserOf): UserOf {
  return s.user ? { user: s.user, ...(s.route === 'private' ? { route: s.route, uid: s.uid, gid: s.gid } : {}) } : {};
}

/**
 * How to ask the manager a journaled step went to: the system's, the user's
 * through -M USER@, or (route 'private') as the user on the manager's own socket.
 * The journal is untrusted input: a private route is taken only for an account
 * /etc/passwd still has with that name, UID and GID; else the step is a
 * conflict naming why.
 */
async function managerOf(host: Host, s: UserOf): Promise<Systemctl | string> {
  if (!s.user) return SYSTEM_SYSTEMCTL;
  if (s.route !== 'private') return busSystemctl(s.user);
  const a = parsePasswdAccounts((await host.readFile('/etc/passwd')) ?? '').find((x) => x.name === s.user);
  if (!a || a.uid !== s.uid || a.gid !== s.gid)
    return `the run reached ${s.user}'s manager as UID ${String(s.uid)}:${String(s.gid)}, which /etc/passwd no longer says ${s.user} is; do it by hand as that user`;
  return userSystemctl({ ...a, route: 'private' });
}
