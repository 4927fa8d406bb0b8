// findConflicts: the lines that would beat the owned sysctl.d file, worked by
// hand from sysctl.d(5) and procps: systemd-sysctl at boot and sysctl
// --system read the sysctl.d entries in file-name order, the last assignment
// winning, and sysctl --system then applies /etc/sysctl.conf; the kernel
// couples ip_forward with conf.all.forwarding (couplings.test.ts shows it).
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { findConflicts, modelPhrase } from '../../src/sysctl/conflicts.js';
import { observeSysctlTree } from '../../src/sysctl/observe.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const work = mkdtempSync(path.join(tmpdir(), 'sysctl-conflicts-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const OWNED = '/etc/sysctl.d/90-k8s.conf';
const WANT = new Map([['net.ipv4.ip_forward', '1']]);

async function conflicts(files: Tree) {
  const root = mkdtempSync(path.join(work, 'root-'));
  buildTree(root, { [OWNED.slice(1)]: 'net.ipv4.ip_forward = 1\n', ...files });
  const { tree } = await observeSysctlTree(new Host({ root }));
  return findConflicts(tree, OWNED, WANT).map(({ source: _source, ...c }) => c);
}

describe('findConflicts', () => {
  it('nothing after ours: no conflict, whatever earlier files say', async () => {
    expect(await conflicts({ 'etc/sysctl.d/10-early.conf': 'net.ipv4.ip_forward = 0\n', 'usr/lib/sysctl.d/50-x.conf': 'net.ipv4.ip_forward=0\n' })).toEqual([]);
  });

  it('a later file with another value beats ours under both programs', async () => {
    expect(await conflicts({ 'usr/lib/sysctl.d/99-zz.conf': 'kernel.panic = 1\nnet.ipv4.ip_forward = 0\n' })).toEqual([
      {
        key: 'net.ipv4.ip_forward',
        wanted: '1',
        value: '0',
        file: '/usr/lib/sysctl.d/99-zz.conf',
        line: 2,
        realPath: '/usr/lib/sysctl.d/99-zz.conf',
        models: ['boot', 'system'],
        explanation: `at next boot and after sysctl --system net.ipv4.ip_forward would be 0: /usr/lib/sysctl.d/99-zz.conf:2 sorts after ${OWNED}`,
      },
    ]);
  });

  it('/etc/sysctl.conf beats it only after sysctl --system', async () => {
    const c = await conflicts({ 'etc/sysctl.conf': '# local\nnet.ipv4.ip_forward=0\n' });
    expect(c.map((x) => [x.file, x.line, x.models, x.explanation])).toEqual([
      ['/etc/sysctl.conf', 2, ['system'], 'after sysctl --system net.ipv4.ip_forward would be 0: /etc/sysctl.conf:2 is applied last by sysctl --system'],
    ]);
  });

  it('a later line setting the coupled key beats ours too, and says why', async () => {
    const c = await conflicts({ 'etc/sysctl.d/95-router.conf': 'net.ipv4.conf.all.forwarding = 0\n' });
    expect(c).toHaveLength(1);
    expect(c[0]!.explanation).toBe(
      'at next boot and after sysctl --system net.ipv4.ip_forward would be 0: /etc/sysctl.d/95-router.conf:1 sets net.ipv4.conf.all.forwarding, which the kernel couples with net.ipv4.ip_forward, and is written later',
    );
  });

  it('a later line with our own value is no conflict; one read through a link names both paths', async () => {
    expect(await conflicts({ 'etc/sysctl.d/99-same.conf': 'net.ipv4.ip_forward = 1\n' })).toEqual([]);
    const c = await conflicts({ 'etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' }, 'etc/sysctl.conf': 'net.ipv4.ip_forward = 0\n' });
    expect(c.map((x) => [x.file, x.realPath, x.models])).toEqual([['/etc/sysctl.d/99-sysctl.conf', '/etc/sysctl.conf', ['boot', 'system']]]);
    expect(c[0]!.explanation).toContain('/etc/sysctl.conf:1 (read as /etc/sysctl.d/99-sysctl.conf)');
  });

  it('two later lines: both are found, though the second only beats ours once the first is gone', async () => {
    const c = await conflicts({ 'etc/sysctl.d/95-a.conf': 'net.ipv4.ip_forward = 0\n', 'etc/sysctl.d/96-b.conf': 'net.ipv4.ip_forward = 0\n' });
    expect(c.map((x) => x.file).sort()).toEqual(['/etc/sysctl.d/95-a.conf', '/etc/sysctl.d/96-b.conf']);
  });
});

describe('modelPhrase', () => {
  it('names the programs', () => {
    expect(modelPhrase(['boot'])).toBe('at next boot');
    expect(modelPhrase(['system'])).toBe('after sysctl --system');
    expect(modelPhrase(['system', 'boot'])).toBe('at next boot and after sysctl --system');
  });
});
