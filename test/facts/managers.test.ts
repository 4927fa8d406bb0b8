// ansible_service_mgr and ansible_pkg_mgr (src/facts/managers.ts) against
// ansible-core's own collectors run over each described host
// (test/helpers/ansible-managers.py), and distribution_release against
// Distribution on os-release texts of real releases.
import { execa } from 'execa';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { pkgMgr, serviceMgr } from '../../src/facts/managers.js';
import { ansiblePython } from '../helpers/ansible-python.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
interface HostCase {
  name: string;
  proc1: string | null;
  sbin_init: string | null;
  paths: string[];
  os_family: string;
}
const SYSTEMD = ['/usr/bin/systemctl', '/run/systemd/system/', '/etc/init.d/', '/usr/bin/apt-get'];
const CASES: HostCase[] = [
  { name: 'Debian 12 booted by systemd', proc1: 'systemd\n', sbin_init: '/lib/systemd/systemd', paths: SYSTEMD, os_family: 'Debian' },
  {
    name: 'a container whose pid 1 is bash, systemd installed, not booted',
    proc1: 'bash\n',
    sbin_init: '/lib/systemd/systemd',
    paths: ['/usr/bin/systemctl', '/etc/init.d/', '/usr/bin/apt-get'],
    os_family: 'Debian',
  },
  { name: 'pid 1 "init" with systemd running (canary)', proc1: 'init\n', sbin_init: null, paths: SYSTEMD, os_family: 'Debian' },
  { name: 'pid 1 "init", sysvinit', proc1: 'init\n', sbin_init: null, paths: ['/etc/init.d/', '/usr/bin/apt-get', '/usr/bin/yum'], os_family: 'Debian' },
  { name: 'pid 1 is sh, nothing at all', proc1: 'sh\n', sbin_init: null, paths: [], os_family: 'Archlinux' },
  { name: 'runit-init and pacman', proc1: 'runit-init\n', sbin_init: null, paths: ['/usr/bin/pacman'], os_family: 'Archlinux' },
  { name: 'openrc on Alpine', proc1: 'zsh\n', sbin_init: null, paths: ['/sbin/openrc', '/sbin/apk', '/etc/init.d/'], os_family: 'Alpine' },
  { name: 'upstart', proc1: 'init\n', sbin_init: null, paths: ['/sbin/initctl', '/etc/init/', '/usr/bin/apt-get'], os_family: 'Debian' },
  {
    name: 'Debian with yum and zypper installed',
    proc1: 'systemd\n',
    sbin_init: null,
    paths: ['/usr/bin/yum', '/usr/bin/apt-get', '/usr/bin/zypper'],
    os_family: 'Debian',
  },
  {
    name: 'Debian with rpm installed: ansible asks rpm',
    proc1: 'systemd\n',
    sbin_init: null,
    paths: ['/usr/bin/apt-get', '/usr/bin/rpm'],
    os_family: 'Debian',
  },
  { name: 'no /proc/1/comm: ansible runs ps', proc1: null, sbin_init: null, paths: ['/usr/bin/apt-get'], os_family: 'Debian' },
];

describe('service_mgr and pkg_mgr as ansible-core collects them', () => {
  let oracle: { service_mgr: string | null; pkg_mgr: string | null }[];
  beforeAll(async () => {
    const r = await execa(ansiblePython(), [path.join(HERE, '../helpers/ansible-managers.py')], { input: JSON.stringify(CASES) });
    oracle = JSON.parse(r.stdout);
  }, 60_000);
  CASES.forEach((c, i) => {
    it(c.name, () => {
      const dirs = c.paths.filter((p) => p.endsWith('/'));
      const inputs = {
        proc1Comm: c.proc1 === null || c.proc1.trim() === '' ? null : c.proc1,
        sbinInitLink: c.sbin_init,
        exists: (p: string) => (p.endsWith('/') ? dirs.includes(p) : c.paths.includes(p)),
      };
      // Where ansible would run a command the model does not, the model leaves the fact out (undefined).
      expect({ service_mgr: serviceMgr(inputs) ?? null, pkg_mgr: pkgMgr(inputs, c.os_family) ?? null }).toEqual(oracle[i]);
    });
  });
});
