// A desired state file that is not there (src/reconcile/load.ts's readDesiredStateFile). Apart from
// load.test.ts because it changes the working directory, which Stryker's vitest runner (worker threads)
// does not allow: the validate and grammar mutation groups run load.test.ts, not this file.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readDesiredStateFile } from '../../src/reconcile/load.js';

describe('a desired state that is not there', () => {
  it('names -f and the package default, and for a relative name the directory it looked in', () => {
    const cwd = process.cwd();
    const tmp = mkdtempSync(path.join(tmpdir(), 'load-missing-'));
    try {
      process.chdir(tmp);
      expect(() => readDesiredStateFile('desired-state.yaml')).toThrow(
        `desired-state.yaml:1:1 no such file (looked for in ${realpathSync(tmp)}); name the desired state with -f FILE (the package installs one at /etc/k8s-host-reconcile/desired-state.yaml)`,
      );
      expect(() => readDesiredStateFile(path.join(tmp, 'x.yaml'))).toThrow(
        `${path.join(tmp, 'x.yaml')}:1:1 no such file; name the desired state with -f FILE (the package installs one at /etc/k8s-host-reconcile/desired-state.yaml)`,
      );
    } finally {
      process.chdir(cwd);
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
