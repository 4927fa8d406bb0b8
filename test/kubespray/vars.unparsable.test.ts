// A role's defaults file that YAML cannot read stops the role's variables with an error naming the file; it is
// never taken for an absent file, which would leave its variables undefined and the verdicts built on them
// confidently wrong.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { KubesprayCheckout } from '../../src/kubespray/checkout.js';
import { roleDefaultsOf } from '../../src/kubespray/vars.js';
import { buildTree } from '../helpers/tree.js';

const roots: string[] = [];
afterAll(async () => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))));

async function checkout(tree: Record<string, string>): Promise<KubesprayCheckout> {
  const root = await mkdtemp(path.join(tmpdir(), 'vars-unparsable-'));
  roots.push(root);
  buildTree(root, Object.fromEntries(Object.entries(tree).map(([k, v]) => [`ks/${k}`, v])));
  return new KubesprayCheckout(new Host({ root }), '/ks');
}

describe("a role's defaults that do not parse", () => {
  it('main.yml with an unclosed flow sequence: refused, naming the file', async () => {
    const ck = await checkout({ 'roles/r/defaults/main.yml': '---\nkube_proxy_mode: ipvs\nbroken: [\n' });
    await expect(roleDefaultsOf(ck, 'r')).rejects.toThrow('/ks/roles/r/defaults/main.yml');
  });

  it('a good main.yml and a main/ directory beside it are both read', async () => {
    const ck = await checkout({ 'roles/r/defaults/main.yml': '---\na: 1\n', 'roles/r/defaults/main/b.yml': '---\nb: 2\n' });
    expect((await roleDefaultsOf(ck, 'r')).map((d) => [d.name, d.value])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
  });
});
