// crontab(5): the manual's own examples, a system crontab's user field, the %
// rule, run-parts(8) names for /etc/cron.d; and where cron reads them (Debian's
// /etc/crontab, /etc/cron.d, /var/spool/cron/crontabs/USER; cronie's
// /var/spool/cron/USER) in a fixture tree.
import { afterAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { cronDName, cronShellCommand, loadCrontabs, parseCrontab, parsePasswd } from '../../src/ports/crontab.js';
import { buildTree, type Tree } from '../helpers/tree.js';

describe('crontab(5)', () => {
  it("the manual's user crontab: environment lines, five time fields, the % rule", () => {
    const text = [
      '# use /bin/bash to run commands, instead of the default /bin/sh',
      'SHELL=/bin/bash',
      'MAILTO = paul',
      '5 0 * * *       $HOME/bin/daily.job >> $HOME/tmp/out 2>&1',
      '0 22 * * 1-5    mail -s "It\'s 10pm" joe%Joe,%%Where are your kids?%',
      '23 0-23/2 * * * echo "run 23 minutes after midn, 2am, 4am ..., everyday"',
      '5 4 * * sun     echo "run at 5 after 4 every sunday"',
      '  @reboot   date +\\%F',
    ].join('\n');
    const { entries, problems } = parseCrontab(text, '/var/spool/cron/crontabs/paul', 'paul');
    expect(problems).toEqual([]);
    expect(entries.map((e) => [e.line, e.schedule, e.user, e.shellCommand])).toEqual([
      [4, '5 0 * * *', 'paul', '$HOME/bin/daily.job >> $HOME/tmp/out 2>&1'],
      [5, '0 22 * * 1-5', 'paul', 'mail -s "It\'s 10pm" joe'],
      [6, '23 0-23/2 * * *', 'paul', 'echo "run 23 minutes after midn, 2am, 4am ..., everyday"'],
      [7, '5 4 * * sun', 'paul', 'echo "run at 5 after 4 every sunday"'],
      [8, '@reboot', 'paul', 'date +%F'],
    ]);
  });
  it('a system crontab names the user; bad lines are problems, not entries', () => {
    const text = [
      '17 *\t* * *\troot    cd / && run-parts --report /etc/cron.hourly',
      '@reboot root python3 -m http.server 2379',
      '@often root true',
      '5 0 * * root',
      '5 0 * *',
      '@daily',
    ].join('\n');
    const { entries, problems } = parseCrontab(text, '/etc/crontab', null);
    expect(entries.map((e) => [e.line, e.schedule, e.user, e.command])).toEqual([
      [1, '17 * * * *', 'root', 'cd / && run-parts --report /etc/cron.hourly'],
      [2, '@reboot', 'root', 'python3 -m http.server 2379'],
    ]);
    expect(problems.map((p) => p.line)).toEqual([3, 4, 5, 6]);
  });
  it('% handling and /etc/cron.d names (run-parts rules)', () => {
    expect(cronShellCommand('a\\%b%stdin%more')).toBe('a%b');
    expect(['legacy-etcd', 'e2scrub_all', 'x.dpkg-old', 'a~', '.hidden'].filter(cronDName)).toEqual(['legacy-etcd', 'e2scrub_all']);
  });
});

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
function treeHost(tree: Tree): { host: Host; root: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'crontabs-'));
  roots.push(root);
  buildTree(root, tree);
  return { host: new Host({ root, live: false }), root };
}

describe('loadCrontabs: where Debian and cronie read crontabs', () => {
  it('/etc/crontab and run-parts names in /etc/cron.d with their user field; spool files owned by their name', async () => {
    const { host } = treeHost({
      'etc/crontab': '@reboot root /usr/local/bin/a\n',
      'etc/cron.d/legacy-etcd': '@reboot etcd /usr/bin/etcd --listen-client-urls http://127.0.0.1:2379\n',
      'etc/cron.d/linked': { link: '/opt/cron-linked' },
      'opt/cron-linked': '*/5 * * * * nobody true\n',
      // Not run-parts names: cron skips them.
      'etc/cron.d/e2scrub.dpkg-old': '@reboot root /usr/bin/skipped\n',
      'etc/cron.d/.placeholder': '@reboot root /usr/bin/skipped\n',
      'var/spool/cron/crontabs/paul': '@reboot python3 -m http.server 6443\n',
      'var/spool/cron/crontabs/tmp.XXXX': '@reboot crontab -e leftover\n',
      // cronie's spool: the crontabs directory itself is a directory there and is not read as a file.
      'var/spool/cron/alice': '0 0 * * * /bin/backup\n',
    });
    const r = await loadCrontabs(host);
    expect(r.entries.map((e) => [e.file, e.line, e.user, e.command]).sort()).toEqual(
      [
        ['/etc/crontab', 1, 'root', '/usr/local/bin/a'],
        ['/etc/cron.d/legacy-etcd', 1, 'etcd', '/usr/bin/etcd --listen-client-urls http://127.0.0.1:2379'],
        ['/etc/cron.d/linked', 1, 'nobody', 'true'],
        ['/var/spool/cron/crontabs/paul', 1, 'paul', 'python3 -m http.server 6443'],
        ['/var/spool/cron/alice', 1, 'alice', '/bin/backup'],
      ].sort(),
    );
    expect(r.read.sort()).toEqual(['/etc/cron.d/legacy-etcd', '/etc/cron.d/linked', '/etc/crontab', '/var/spool/cron/alice', '/var/spool/cron/crontabs/paul']);
    expect([r.problems, r.unreadable]).toEqual([[], []]);
  });
  it('no cron at all: nothing read, nothing unreadable', async () => {
    expect(await loadCrontabs(treeHost({ 'etc/hostname': 'x\n' }).host)).toEqual({ entries: [], problems: [], unreadable: [], read: [] });
  });
  it('a crontab that exists but cannot be read is listed as unreadable, never taken as empty; a bad line is a problem naming its file', async () => {
    const { host, root } = treeHost({ 'etc/cron.d/bad': '@often root true\n', 'var/spool/cron/crontabs/x': '' });
    // A directory where /etc/crontab should be: it exists, and reading it fails.
    buildTree(root, { 'etc/crontab/inner': '' });
    chmodSync(path.join(root, 'etc/crontab'), 0o755);
    const r = await loadCrontabs(host);
    expect(r.unreadable).toEqual(['/etc/crontab']);
    expect(r.problems.map((p) => [p.file, p.line])).toEqual([['/etc/cron.d/bad', 1]]);
  });
});

describe('parsePasswd: passwd(5) user names to UIDs', () => {
  it("Debian's first lines, a comment, an empty line and a line without a numeric UID", () => {
    const text = [
      'root:x:0:0:root:/root:/bin/bash',
      'daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin',
      '# local',
      '',
      'broken:x:abc:1::/:/bin/sh',
      ':x:5:5::/:',
      'etcd:x:998:998::/var/lib/etcd:/usr/sbin/nologin',
    ].join('\n');
    expect([...parsePasswd(text)]).toEqual([
      ['root', 0],
      ['daemon', 1],
      ['etcd', 998],
    ]);
  });
});
