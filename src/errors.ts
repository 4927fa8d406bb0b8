// Errors are values with context; the CLI edge turns each into one message.

/** Base for every error the CLI reports as a clear message rather than a stack trace. */
export class ReconcileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Something the machine refused: a file we could not read or write, a command that failed. */
export class HostError extends ReconcileError {
  constructor(
    message: string,
    readonly subject: string,
    /** The errno code behind it (ENOENT, EISDIR, EACCES...), when there is one. */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** One problem in desired-state.yaml, located by file:line:column and the key's path. */
export interface InputIssue {
  file: string;
  line: number;
  column: number;
  /** e.g. "resources[2].ports[0]"; empty for the document itself. */
  path: string;
  message: string;
}

export function formatInputIssue(i: InputIssue): string {
  return `${i.file}:${i.line}:${i.column} ${i.path ? i.path + ': ' : ''}${i.message}`;
}

/** desired-state.yaml is unusable; nothing on the host was touched. */
export class InputError extends ReconcileError {
  constructor(readonly issues: InputIssue[]) {
    super(issues.map(formatInputIssue).join('\n'));
  }
}

/** A resource's changes were applied but observing again still shows a difference. */
export class VerifyError extends ReconcileError {
  constructor(
    readonly resource: string,
    readonly remaining: string[],
  ) {
    super(`${resource}: not converged after apply: ${remaining.join('; ')}`);
  }
}

/** A run stopped after changing something: what was applied and what failed travel with the cause. */
export class RunAbortedError extends ReconcileError {
  constructor(
    message: string,
    readonly applied: Array<{ resource: string; changes: string[] }>,
    readonly failed: Array<{ resource: string; message: string }>,
  ) {
    super(message);
  }
}

const ERRNO_TEXT: Record<string, string> = {
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many levels of symbolic links',
  EXDEV: 'crosses a file system boundary',
  ENOTDIR: 'a component of the path is not a directory',
  EISDIR: 'is a directory',
  ENOENT: 'no such file or directory',
  EEXIST: 'already exists',
  ENOTEMPTY: 'directory not empty',
  EIO: 'input/output error',
};

/** One short cause for an fs error: "read-only file system (EROFS)", never a stack. */
export function describeFsError(e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code && ERRNO_TEXT[code]) return `${ERRNO_TEXT[code]} (${code})`;
  if (code) return code;
  return (e as Error)?.message ?? String(e);
}
