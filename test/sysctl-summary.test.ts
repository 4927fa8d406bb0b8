// --json carries the ordering engine's verdicts, so pipelines (and the VM
// suite) can compare the prediction with the kernel after a boot.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../src/cli.js';

let work: string;
beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), 'sysctl-summary-'));
  const root = path.join(work, 'root');
  mkdirSync(path.join(root, 'etc/sysctl.d'), { recursive: true });
  writeFileSync(path.join(root, 'etc/sysctl.conf'), 'net.ipv4.ip_forward = 1\n');
  symlinkSync('../sysctl.conf', path.join(root, 'etc/sysctl.d/99-sysctl.conf'));
  writeFileSync(path.join(root, 'etc/sysctl.d/security-baseline.conf'), '# baseline\nnet.ipv4.ip_forward = 0\n');
  writeFileSync(path.join(work, 'desired.yaml'), 'reports_dir: /r\nresources:\n  - type: SysctlFile\n    settings:\n      net.ipv4.ip_forward: 1\n');
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

describe('plan --json observed verdicts', () => {
  it('predicts each model: 0 at boot (a later file), 1 after sysctl --system (sysctl.conf last)', async () => {
    let out = '';
    const code = await main(['--plan', '--json', '--root', path.join(work, 'root'), '-f', path.join(work, 'desired.yaml')], {
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: () => true },
      env: {},
    });
    expect(code).toBe(2);
    const observed = JSON.parse(out).resources[0].observed;
    expect(observed.runtime).toBeNull();
    expect(observed.verdicts.boot).toEqual([
      { key: 'net.ipv4.ip_forward', value: '0', via: 'explicit', winner: '/etc/sysctl.d/security-baseline.conf:2' },
    ]);
    expect(observed.verdicts.system).toEqual([{ key: 'net.ipv4.ip_forward', value: '1', via: 'explicit', winner: '/etc/sysctl.conf:1' }]);
  });
});
