// The boot-script scan reads every command of an enabled unit's Exec*=
// value: systemd runs "a ; b" as two commands (systemd.service(5) "Command
// lines"; `systemd --test` shows both, test/systemd/exec-command.test.ts), so
// a module removal after a harmless first command is a hit too, and "\;" is
// an argument, not a separator.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { scanBootScripts } from '../../src/boot-scripts/scan.js';
import { buildTree } from '../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function unitHost(exec: string): Host {
  const root = mkdtempSync(path.join(tmpdir(), 'unit-commands-'));
  roots.push(root);
  buildTree(root, {
    'usr/lib/systemd/system/multi-user.target': '[Unit]\nDescription=Multi-User\n',
    'etc/systemd/system/prep.service': `[Service]\nType=oneshot\n${exec}\n[Install]\nWantedBy=multi-user.target\n`,
    'etc/systemd/system/multi-user.target.wants/prep.service': { link: '/etc/systemd/system/prep.service' },
  });
  return new Host({ root, live: false });
}

describe("an enabled unit's Exec*= value of several commands", () => {
  it('both commands of "a ; b" are read: the sysctl write and the module removal', async () => {
    const s = await scanBootScripts(unitHost('ExecStartPre=/sbin/sysctl -w net.ipv4.ip_forward=0 ; /sbin/modprobe -r br_netfilter\nExecStart=/bin/true'));
    const kinds = s.hits.map((h) => [h.file, h.line, h.action.kind]);
    expect(kinds).toEqual([
      ['/etc/systemd/system/prep.service', 3, 'sysctl-write'],
      ['/etc/systemd/system/prep.service', 3, 'module-remove'],
    ]);
  });

  it('"\\;" is the argument ";": the words after it belong to the same command', async () => {
    const s = await scanBootScripts(unitHost('ExecStart=/bin/echo \\; /sbin/modprobe -r br_netfilter'));
    expect(s.hits).toEqual([]);
  });
});
