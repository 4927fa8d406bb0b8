// The CLI's Io for in-process runs: output captured, and no command may run
// (every test here is offline or fakes what it needs).
import type { Io } from '../../src/reconcile/run.js';

export function captureIo(isRoot?: boolean): { value: Io; stdout: () => string; stderr: () => string } {
  let stdout = '';
  let stderr = '';
  const value: Io = {
    stdout: { write: (s: string) => (stdout += s), isTTY: false },
    stderr: { write: (s: string) => (stderr += s), isTTY: false },
    env: {},
    isRoot: isRoot === undefined ? undefined : () => isRoot,
    runner: async (cmd) => {
      throw new Error(`no command may run in this test, got ${cmd}`);
    },
  };
  return { value, stdout: () => stdout, stderr: () => stderr };
}
