// A command runner that answers only the commands a test lists (the facts'
// uname and route lookups, say) and fails every other one with 127.
import type { CommandRunner } from '../../src/host.js';

export function cannedRunner(out: Record<string, string>): CommandRunner {
  return async (cmd, args) => {
    const key = [cmd, ...args].join(' ');
    return { command: key, exitCode: key in out ? 0 : 127, stdout: out[key] ?? '', stderr: '' };
  };
}
