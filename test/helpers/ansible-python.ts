// The python interpreter ansible itself runs under (its launcher's shebang),
// so oracle scripts import the same ansible-core the CLI uses.
import { execaSync } from 'execa';
import { readFileSync } from 'node:fs';

export function ansiblePython(): string {
  const bin = execaSync('sh', ['-c', 'command -v ansible']).stdout.trim();
  const shebang = readFileSync(bin, 'latin1')
    .split('\n')[0]!
    .replace(/^#!\s*/, '')
    .trim();
  return shebang.split(/\s+/)[0]!;
}
