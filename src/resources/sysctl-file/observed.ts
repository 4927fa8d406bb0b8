// What SysctlFile observes, and its change operations.
import type { SysctlParseIssue } from '../../sysctl/parse.js';
import type { SysctlModel, SysctlTree, SysctlVerdict } from '../../sysctl/order.js';
import type { RehearsedValues } from '../../sysctl/rehearsal.js';
import type { SysctlConflict } from '../../sysctl/conflicts.js';
import type { ObservedSysctlTree } from '../../sysctl/observe.js';

export interface SysctlFileObserved {
  live: boolean;
  /** Where /etc really is (itself when it is no link). */
  etcReal?: string;
  owned: {
    path: string;
    /** Content as read (through a symlink); null when absent or masked. */
    content: string | null;
    /** Raw symlink text when the path is a symlink (a /dev/null mask, or a link elsewhere). */
    link: string | null;
  };
  tree: SysctlTree;
  /** sysctl.d directories that exist and are read. */
  dirs: string[];
  /** Lines both programs skip with a warning. */
  issues: SysctlParseIssue[];
  /** Entries systemd-sysctl and sysctl --system skip (a directory, a dangling link, a loop). */
  skipped: ObservedSysctlTree['skipped'];
  /** What each program would set the wanted keys to, from the files as they are now. */
  verdicts: Record<SysctlModel, SysctlVerdict[]>;
  /** Live only: canonical key -> value in the running kernel; null when the key does not exist. */
  runtime: Record<string, string | null> | null;
  /** The boot rehearsal (live, as root): what the real programs make of the files with the planned changes. */
  rehearsal: SysctlRehearsal | null;
}

/** A line the rehearsal blames by bisection: leaving it out makes the key come out right. */
export interface RehearsalCulprit {
  key: string;
  wanted: string;
  models: SysctlModel[];
  /** The entry the line is read through, and its 1-based line. */
  file: string;
  line: number;
  realPath: string;
  text: string;
  /** What the key comes out as with the line in place. */
  value: string | null;
}

export type SysctlRehearsal =
  | { status: 'skipped'; reason: string }
  | {
      status: 'ran';
      /** Wall time of the whole rehearsal, bisection included. */
      ms: number;
      runs: number;
      programs: { boot: string; system: string };
      /** Keys left to the engine, each with why. */
      notRehearsed: Array<{ key: string; reason: string }>;
      /** What the rehearsal starts from: a value unlike the wanted one at boot; the wanted one (set by apply) before sysctl --system. */
      start: Record<string, string>;
      /** The engine's prediction with the planned changes (null: nothing sets the key). */
      engine: RehearsedValues;
      /** The real programs with the engine's planned changes. */
      enginePlan: RehearsedValues;
      culprits: RehearsalCulprit[];
      /** The real programs with every planned change, the culprits' resolutions included. */
      final: RehearsedValues;
      /** Keys still wrong with every planned change and no line to blame. */
      unexplained: Array<{ key: string; model: SysctlModel; value: string | null }>;
    };

export type SysctlOp =
  | { kind: 'owned'; path: string; content: string; replaceLink: boolean }
  | {
      kind: 'resolve';
      /** File written: the conflicting file itself (under /etc) or a same-named /etc/sysctl.d override. */
      target: string;
      /** The effective entry the lines come from. */
      source: string;
      /** The target is a symlink to a vendor file that becomes a regular file. */
      replaceLink: boolean;
      lines: number[];
      content: string;
      conflicts: SysctlConflict[];
    }
  | { kind: 'conflict'; conflict: SysctlConflict }
  | { kind: 'owned-not-read'; problem: string }
  | { kind: 'runtime'; key: string; value: string }
  | { kind: 'deferred'; values: Record<string, string> };
