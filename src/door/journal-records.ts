// What one line of a run's journal holds: the record shapes the door writes
// (journal.ts) and the checker reads back (journal-check.ts): types, and the
// one name a record holds that the door makes (a set-aside name).

/** How an entry on disk looked before an action replaced or removed it. */
export type PriorEntry =
  | { entry: 'absent' }
  | { entry: 'file'; backup: string | null; mode: number; uid: number; gid: number; sha256: string }
  | { entry: 'symlink'; link: string; backup?: string };

/** Runtime steps (live only), each with what undoing it needs. */
export type RuntimeStep =
  | { step: 'sysctl'; key: string; path: string; before: string | null; value: string }
  | { step: 'swapoff'; device: string }
  | { step: 'swapon'; device: string }
  | { step: 'modprobe'; module: string }
  // `user`: the units are that user's (systemctl --user -M USER@); with
  // route 'private', asked as UID:GID on the manager's private socket.
  | ({ step: 'unit-stop'; units: string[] } & UserOf)
  | ({ step: 'unit-start'; units: string[] } & UserOf)
  // SIGTERM to every process left in the units' cgroups after a stop (KillMode=process or none); the unit-stop's undo starts them again.
  | ({ step: 'unit-kill'; units: string[] } & UserOf)
  | ({ step: 'unit-disable'; units: string[] } & UserOf)
  | ({ step: 'unit-mask'; units: string[] } & UserOf)
  | ({ step: 'daemon-reload' } & UserOf)
  // A Docker container stopped for a port (stop_containers): its restart policy before `docker update --restart=no`,
  // so the undo sets it back and starts the container again (container-start).
  | { step: 'container-stop'; runtime: 'docker'; id: string; restart: DockerRestartName }
  | { step: 'container-start'; runtime: 'docker'; id: string; restart: DockerRestartName };

/** A Docker restart policy's name as `docker update --restart=` takes it. */
export type DockerRestartName = 'no' | 'always' | 'unless-stopped' | 'on-failure';

export interface UserOf {
  user?: string;
  route?: 'private';
  uid?: number;
  gid?: number;
}

/** What a unit-disable or unit-mask changed under /etc/systemd/system, read before and after. */
export interface LinkDelta {
  removed: Array<{ path: string; link: string }>;
  added: Array<{ path: string; link: string }>;
}

/** What was set aside, as measured just before the move. */
export interface AsideIdentity {
  entry: 'file' | 'dir';
  bytes: number;
  files: number;
  dev: string;
  ino: string;
}

interface Stamp {
  seq: number;
  at: string;
}

export type JournalRecord = Stamp &
  (
    | { kind: 'begin'; mode: 'apply' | 'rollback'; run: string; pid: number; root: string; live: boolean; tool: string; rollback_of?: string }
    | { kind: 'mkdir'; path: string; mode: number }
    | { kind: 'write'; path: string; prior: PriorEntry; mode: number; uid: number; gid: number; sha256: string; tmp: string; report: boolean }
    | { kind: 'remove'; path: string; prior: PriorEntry }
    | { kind: 'link'; path: string; link: string; prior: PriorEntry; tmp: string }
    | { kind: 'rmdir'; path: string; mode: number; uid: number; gid: number }
    // A file or directory tree renamed to `to` (asideName) beside it, never deleted; bytes and files counted while
    // walking it, dev and ino (decimal: 64-bit) of its top entry so a rollback renames back only that entry.
    | ({ kind: 'aside'; path: string; to: string } & AsideIdentity)
    // A rollback renaming an entry set aside by run `of` back to `path`.
    | ({ kind: 'unaside'; path: string; from: string } & AsideIdentity)
    // A file something this run installs writes later, outside the door (a unit's stamp at the next boot):
    // nothing changes when it is journaled; a rollback puts `prior` back at `path` (absent: removes it).
    | { kind: 'later'; path: string; by: string; prior: PriorEntry }
    | { kind: 'runtime'; action: RuntimeStep }
    | { kind: 'done'; of: number; result?: LinkDelta }
    | { kind: 'failed'; of: number; error: string }
    | { kind: 'end'; status: 'ok' | 'failed' | 'interrupted'; note?: string }
  );

type Body<R> = R extends Stamp ? Omit<R, 'seq' | 'at'> : never;
export type JournalEntry = Body<JournalRecord>;

/**
 * The name a directory or file is moved aside to (WriteDoor.moveAside): beside
 * it, with the tool's mark and the run's id, so it never collides with what a
 * host already holds and a rollback knows which run set it aside.
 */
export const ASIDE_MARK = '.k8s-host-reconcile-aside-';
export const asideName = (target: string, runId: string): string => `${target}${ASIDE_MARK}${runId}`;
