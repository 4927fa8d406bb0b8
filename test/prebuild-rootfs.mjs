#!/usr/bin/env node
// Builds every cached root file system the VM suite and the boot farm boot
// (the qemu bases of test/vm/lib/base.mjs, one per suite and package list
// the scenarios name; the farm's tree of test/boot/lib/rootfs.mjs, which the
// nspawn tier shares), one after another. CI starts it in the background
// before `npm test`: the unit tests leave a core idle most of the time, and a
// cold mmdebstrap build is mostly one dpkg at a time. test:vm and test:boot
// wait for a build in progress (lib/util.mjs buildOnce) instead of starting
// their own. Warm caches: nothing to do. A failed build is only reported
// here; the suite that needs it builds it again and fails there.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { basePath, ensureBase } from './vm/lib/base.mjs';
import { ensureLower } from './boot/lib/rootfs.mjs';
import { ensureLayer, LAYERS } from './boot/lib/layer.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const say = (m) => process.stderr.write(`[prebuild] ${m}\n`);

const scenarios = path.join(HERE, 'vm/scenarios');
const bases = new Map();
for (const name of fs.readdirSync(scenarios).sort()) {
  const file = path.join(scenarios, name, 'expect.mjs');
  if (!fs.existsSync(file)) continue;
  const { guest } = await import(file);
  if ((guest.tier ?? 'qemu') === 'nspawn') continue;
  const packages = guest.packages ?? [];
  bases.set(basePath(guest.suite, packages), [guest.suite, packages]);
}

const t0 = Date.now();
let failed = 0;
const step = async (what, build) => {
  const t = Date.now();
  try {
    await build();
    say(`${what}: ready after ${((Date.now() - t) / 1000).toFixed(0)} s`);
  } catch (e) {
    failed++;
    say(`${what}: ${e.message}`);
  }
};
// In the order the suites need them: the VM suite starts with its qemu
// scenarios; its nspawn tier (last in its queue) and the boot farm boot the farm's tree.
for (const [suite, packages] of bases.values()) await step(`VM base ${suite ?? 'bookworm'}${packages.length ? ` + ${packages.join(' ')}` : ''}`, () => ensureBase(suite, packages));
await step('boot farm root file system', () => ensureLower(say));
// The package layers some farm entries boot on (lib/layer.mjs), on that root.
for (const name of Object.keys(LAYERS)) await step(`boot farm layer ${name}`, async () => ensureLayer(await ensureLower(say), name, say));
say(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s${failed ? `, ${failed} failed` : ''}`);
process.exitCode = failed ? 1 : 0;
