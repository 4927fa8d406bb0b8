// A journal read back is checked record by record before it decides anything
// (journal-check.ts). The accepted journals are the ones the real WriteDoor
// writes on a fixture root, compared with JSON.parse of their lines; the
// refused ones are hand-written lines, each breaking one rule the door keeps
// (its temp and backup names, the places a run may touch, systemd's unit name
// grammar, the order of records), and each must name the file and the line.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { WriteDoor } from '../../src/door/door.js';
import { checkJournal, JournalError, RUN_ID, type JournalPlace } from '../../src/door/journal-check.js';
import { utf8Bytes } from '../../src/bytes.js';

const RUNS = '/var/lib/rt/runs';
const PLACE: JournalPlace = { file: `${RUNS}/r1/journal`, runId: 'r1', reportsDir: '/var/lib/rt', runsDir: RUNS };

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'journal-check-'));
  mkdirSync(path.join(root, 'etc/sysctl.d'), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The journal text a real door run leaves: a new file, an edited file, a link replaced, a removal, a runtime step. */
async function doorJournal(): Promise<string> {
  writeFileSync(path.join(root, 'etc/sysctl.d/10-old.conf'), 'vm.swappiness=60\n');
  writeFileSync(path.join(root, 'etc/gone.conf'), 'x\n');
  symlinkSync('/dev/null', path.join(root, 'etc/linked'));
  const door = await WriteDoor.open(new Host({ root }), { runDir: `${RUNS}/r1`, runId: 'r1', mode: 'apply', tool: 'test' });
  await door.writeFile({ path: '/etc/sysctl.d/99-k8s.conf', expect: null, content: utf8Bytes('net.ipv4.ip_forward = 1\n') });
  await door.writeFile({ path: '/etc/sysctl.d/10-old.conf', expect: utf8Bytes('vm.swappiness=60\n'), content: utf8Bytes('vm.swappiness=0\n') });
  await door.symlink('/etc/linked', '/etc/elsewhere');
  await door.remove('/etc/gone.conf');
  await door.runtime({ step: 'modprobe', module: 'br_netfilter' }, async () => undefined);
  await door.end('ok');
  return readFileSync(path.join(root, RUNS, 'r1/journal'), 'utf8');
}

/** A line of a journal, as the door writes it: seq and time first. */
const line = (seq: number, body: Record<string, unknown>) => JSON.stringify({ seq, at: '2026-01-01T00:00:00.000Z', ...body });
const BEGIN = line(1, { kind: 'begin', mode: 'apply', run: 'r1', pid: 4242, root: '/', live: true, tool: 'k8s-host-reconcile 1.0' });
const journalOf = (...lines: string[]) => lines.join('\n') + '\n';

/** The JournalError a journal gets: its line and detail. */
function refusal(text: string, place = PLACE): { line: number; detail: string; message: string } {
  try {
    checkJournal(text, place);
  } catch (e) {
    if (!(e instanceof JournalError)) throw e;
    return { line: e.line, detail: e.detail, message: e.message };
  }
  throw new Error('the journal was accepted');
}

/** A journal of begin and one more record; the refusal of that record. */
const second = (body: Record<string, unknown>) => refusal(journalOf(BEGIN, line(2, body)));

const SHA = 'a'.repeat(64);
const write = (over: Record<string, unknown> = {}) => ({
  kind: 'write',
  path: '/etc/x.conf',
  prior: { entry: 'absent' },
  mode: 0o644,
  uid: 0,
  gid: 0,
  sha256: SHA,
  tmp: '/etc/.x.conf.reconcile-r1-0a1b2c3d',
  report: false,
  ...over,
});
const runtime = (action: Record<string, unknown>) => ({ kind: 'runtime', action });

describe('checkJournal on what the door writes', () => {
  it('accepts a real door run: every record as its line parses, with its line number, not torn, end ok', async () => {
    const text = await doorJournal();
    const lines = text.split('\n').filter((l) => l !== '');
    const j = checkJournal(text, PLACE);
    expect(j.records).toEqual(lines.map((l) => JSON.parse(l)));
    expect(j.lines).toEqual(lines.map((_, i) => i + 1));
    expect(j.torn).toBe(false);
    expect(j.end).toBe('ok');
    // The run did what the test asked: begin, five actions each with its done, end.
    expect(j.records.map((r) => r.kind)).toEqual(['begin', 'write', 'done', 'write', 'done', 'link', 'done', 'remove', 'done', 'runtime', 'done', 'end']);
  });

  it('a last line cut short is torn and never read; the records before it stand and the run has no end', async () => {
    const text = await doorJournal();
    const cut = text.split('\n').slice(0, 3).join('\n') + '\n{"seq":4,"at":"20';
    const j = checkJournal(cut, PLACE);
    expect(j.torn).toBe(true);
    expect(j.records.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(j.end).toBeNull();
  });

  it('an empty journal and blank lines are no records', () => {
    expect(checkJournal('', PLACE)).toEqual({ records: [], lines: [], torn: false, end: null });
    const j = checkJournal(journalOf(BEGIN, '', line(2, { kind: 'end', status: 'interrupted', note: 'killed' })), PLACE);
    expect(j.lines).toEqual([1, 3]);
    expect(j.end).toBe('interrupted');
  });

  it('the run ids the door makes match RUN_ID; a path, an option or an empty id do not', () => {
    for (const ok of ['r1', '20260101T000000Z-1a2b', 'A'.repeat(128)]) expect(RUN_ID.test(ok)).toBe(true);
    for (const no of ['', '-r1', '../r1', 'r 1', 'r1/x', 'A'.repeat(129)]) expect(RUN_ID.test(no)).toBe(false);
  });
});

describe('checkJournal refuses, naming the file and the line', () => {
  it('a line that is not JSON: the message names file:line and says nothing was changed', () => {
    const r = refusal(journalOf(BEGIN, '{"seq":2,'));
    expect(r.line).toBe(2);
    expect(r.message).toBe(`${PLACE.file}:2: not a JSON record; nothing was changed (move the run directory ${RUNS}/r1 aside to go on without it)`);
  });

  it('the order of records: begin first and once, seq by one, nothing after end', () => {
    expect(refusal(journalOf(line(1, { kind: 'end', status: 'ok' })))).toMatchObject({ line: 1, detail: 'the first record is end, not begin' });
    expect(refusal(journalOf(BEGIN, BEGIN.replace('"seq":1', '"seq":2')))).toMatchObject({ line: 2, detail: 'a second begin record' });
    expect(refusal(journalOf(BEGIN, line(3, { kind: 'end', status: 'ok' })))).toMatchObject({ line: 2, detail: 'seq 3 does not follow seq 1' });
    expect(refusal(journalOf(BEGIN, line(2, { kind: 'end', status: 'ok' }), line(3, { kind: 'end', status: 'ok' })))).toMatchObject({
      line: 3,
      detail: 'a record after the end record',
    });
  });

  it('outcomes: only of an earlier action, only once, and a link result only of a unit-disable or unit-mask', () => {
    const w = line(2, write());
    expect(refusal(journalOf(BEGIN, w, line(3, { kind: 'done', of: 1 })))).toMatchObject({ line: 3, detail: 'done of record 1, which is not an action' });
    expect(refusal(journalOf(BEGIN, w, line(3, { kind: 'done', of: 2 }), line(4, { kind: 'failed', of: 2, error: 'x' })))).toMatchObject({
      line: 4,
      detail: 'a second outcome of record 2',
    });
    // `of` is bounded by the record's own seq: an outcome of a later record.
    expect(refusal(journalOf(BEGIN, w, line(3, { kind: 'done', of: 3 }))).detail).toBe('of must be an integer from 1 to 2, not 3');
    const result = { removed: [{ path: '/etc/systemd/system/multi-user.target.wants/a.service', link: '/lib/systemd/system/a.service' }], added: [] };
    expect(refusal(journalOf(BEGIN, w, line(3, { kind: 'done', of: 2, result })))).toMatchObject({
      line: 3,
      detail: 'a link result for record 2, which is not a unit-disable or unit-mask',
    });
    const disable = line(2, runtime({ step: 'unit-disable', units: ['a.service'] }));
    const j = checkJournal(journalOf(BEGIN, disable, line(3, { kind: 'done', of: 2, result })), PLACE);
    expect(j.records[2]).toMatchObject({ kind: 'done', of: 2, result });
  });

  it("begin: this run's id, rollback_of only on a rollback and a run id", () => {
    expect(refusal(journalOf(BEGIN.replace('"run":"r1"', '"run":"r2"'))).detail).toBe('run "r2" is not this run\'s id r1 (its directory\'s name)');
    const rb = (mode: string, of: string) => line(1, { kind: 'begin', mode, run: 'r1', pid: 1, root: '/', live: true, tool: 't', rollback_of: of });
    expect(checkJournal(journalOf(rb('rollback', 'r0')), PLACE).records[0]).toMatchObject({ rollback_of: 'r0' });
    expect(refusal(journalOf(rb('apply', 'r0'))).detail).toBe('rollback_of "r0" is not the id of a run this rollback undid');
    expect(refusal(journalOf(rb('rollback', '../r0'))).detail).toBe('rollback_of "../r0" is not the id of a run this rollback undid');
    expect(refusal(journalOf(BEGIN.replace('"pid":4242', '"pid":0'))).detail).toBe('pid must be an integer from 1 to 4194304, not 0');
    expect(refusal(journalOf(BEGIN.replace('"root":"/"', '"root":"/srv/img/"'))).detail).toContain('is not a normalised path');
  });

  it('keys: a missing one and an unexpected one', () => {
    const { sha256: _dropped, ...noSha } = write();
    expect(second(noSha).detail).toBe('write has no "sha256"');
    expect(second(write({ exec: 'rm -rf /' })).detail).toBe('write has an unexpected key "exec"');
    expect(second({ kind: 'chmod', path: '/etc/x' }).detail).toContain('kind must be one of begin, mkdir, write');
  });

  it('paths: absolute, normalised, not /, not in a kernel file system nor the runs directory; a report only in the reports directory', () => {
    expect(second(write({ path: 'etc/x.conf' })).detail).toBe('path "etc/x.conf" is not an absolute path');
    expect(second(write({ path: '/etc/../root/.ssh/authorized_keys' })).detail).toContain('is not a normalised path');
    expect(second({ kind: 'mkdir', path: '/', mode: 0o755 }).detail).toBe('path is / itself');
    expect(second({ kind: 'mkdir', path: '/etc/', mode: 0o755 }).detail).toContain('is not a normalised path');
    expect(second({ kind: 'mkdir', path: '/proc/sys/vm', mode: 0o755 }).detail).toBe(
      'path /proc/sys/vm lies in /proc, a kernel file system no run writes files in',
    );
    expect(second({ kind: 'mkdir', path: '/sys', mode: 0o755 }).detail).toContain('lies in /sys');
    // /device is not /dev: a prefix is not a parent.
    expect(checkJournal(journalOf(BEGIN, line(2, { kind: 'mkdir', path: '/device', mode: 0o755 })), PLACE).records).toHaveLength(2);
    expect(second({ kind: 'mkdir', path: `${RUNS}/r0/backup`, mode: 0o700 }).detail).toBe(
      `path ${RUNS}/r0/backup lies in the runs directory ${RUNS}, which no run edits`,
    );
    expect(second({ kind: 'mkdir', path: `/${'a'.repeat(4096)}`, mode: 0o755 }).detail).toBe('path is longer than PATH_MAX (4096)');
    const report = (p: string) => write({ path: p, report: true, tmp: `${path.posix.dirname(p)}/.${path.posix.basename(p)}.reconcile-r1-1` });
    expect(checkJournal(journalOf(BEGIN, line(2, report('/var/lib/rt/plan.json'))), PLACE).records[1]).toMatchObject({ report: true });
    expect(second(report('/etc/plan.json')).detail).toBe('path /etc/plan.json is a report outside the reports directory /var/lib/rt');
    expect(second(report('/var/lib/rt')).detail).toBe('path /var/lib/rt is a report outside the reports directory /var/lib/rt');
  });

  it("temp names: this run's door's, beside the target, with 1 to 8 hex digits", () => {
    const t = (tmp: string) => second(write({ tmp }));
    expect(checkJournal(journalOf(BEGIN, line(2, write({ tmp: '/etc/.x.conf.reconcile-r1-f' }))), PLACE).records).toHaveLength(2);
    expect(t('/etc/.x.conf.reconcile-r2-0a1b2c3d').detail).toBe(
      "tmp /etc/.x.conf.reconcile-r2-0a1b2c3d is not a temp name this run's door makes for /etc/x.conf (/etc/.x.conf.reconcile-r1-<hex>)",
    );
    expect(t('/tmp/.x.conf.reconcile-r1-0a1b2c3d').detail).toContain('is not a temp name');
    expect(t('/etc/.x.conf.reconcile-r1-0a1b2c3d9').detail).toContain('is not a temp name');
    expect(t('/etc/.x.conf.reconcile-r1-0A1B').detail).toContain('is not a temp name');
    expect(t('/etc/.x.conf.reconcile-r1-').detail).toContain('is not a temp name');
  });

  it("prior entries: a file's backup name, its sha256 and mode; a symlink's non-empty text; a remove of something there", () => {
    const file = (over: Record<string, unknown>) =>
      write({ prior: { entry: 'file', backup: 'backup/etc/x.conf', mode: 0o600, uid: 0, gid: 0, sha256: SHA, ...over } });
    expect(checkJournal(journalOf(BEGIN, line(2, file({}))), PLACE).records[1]).toMatchObject({ prior: { backup: 'backup/etc/x.conf' } });
    expect(checkJournal(journalOf(BEGIN, line(2, file({ backup: null }))), PLACE).records[1]).toMatchObject({ prior: { backup: null } });
    expect(second(file({ backup: 'backup/etc/shadow' })).detail).toBe(
      'prior.backup "backup/etc/shadow" is not the backup name of /etc/x.conf (backup/etc/x.conf)',
    );
    expect(second(file({ sha256: 'A'.repeat(64) })).detail).toContain('prior.sha256');
    expect(second(file({ mode: 0o10000 })).detail).toBe('prior.mode must be an integer from 0 to 4095, not 4096');
    expect(checkJournal(journalOf(BEGIN, line(2, file({ mode: 0o7777, uid: 0xfffffffe }))), PLACE).records).toHaveLength(2);
    expect(second(file({ uid: 0xffffffff })).detail).toBe('prior.uid must be an integer from 0 to 4294967294, not 4294967295');
    expect(second(file({ gid: 1.5 })).detail).toBe('prior.gid must be an integer from 0 to 4294967294, not 1.5');
    expect(second(write({ prior: { entry: 'symlink', link: '' } })).detail).toBe('prior.link is empty');
    expect(second(write({ prior: { entry: 'absent', backup: 'backup/etc/x.conf' } })).detail).toBe('prior has an unexpected key "backup"');
    expect(second({ kind: 'remove', path: '/etc/x.conf', prior: { entry: 'absent' } }).detail).toBe('a remove of /etc/x.conf whose prior entry is absent');
    expect(second(write({ sha256: 'abc' })).detail).toBe('sha256 "abc" is not a sha256 in hex');
  });

  it('strings: a type named, a NUL byte refused', () => {
    expect(second(write({ path: null })).detail).toBe('path must be a string, not null');
    expect(second(write({ path: ['/etc/x'] })).detail).toBe('path must be a string, not an array');
    expect(second(write({ path: '/etc/x\0y' })).detail).toBe('path contains a NUL byte');
    expect(second(write({ report: 'no' })).detail).toBe('report must be true or false, not "no"');
  });

  it('runtime steps: a sysctl under /proc/sys, swap devices as paths, module and unit names by their grammar', () => {
    const ok = (action: Record<string, unknown>) => checkJournal(journalOf(BEGIN, line(2, runtime(action))), PLACE).records[1];
    const no = (action: Record<string, unknown>) => second(runtime(action)).detail;
    expect(ok({ step: 'sysctl', key: 'net.ipv4.ip_forward', path: '/proc/sys/net/ipv4/ip_forward', before: null, value: '1' })).toMatchObject({
      action: { before: null },
    });
    expect(no({ step: 'sysctl', key: 'k', path: '/etc/k', before: '0', value: '1' })).toBe('action.path /etc/k is not under /proc/sys');
    expect(no({ step: 'swapoff', device: '-a' })).toBe('action.device "-a" is not an absolute path');
    expect(ok({ step: 'swapon', device: '/swapfile' })).toMatchObject({ action: { device: '/swapfile' } });
    expect(no({ step: 'modprobe', module: '-r' })).toBe('action.module "-r" is not a module name');
    expect(no({ step: 'modprobe', module: 'a/b' })).toBe('action.module "a/b" is not a module name');
    expect(ok({ step: 'unit-stop', units: ['kubelet.service', 'getty@tty1.service', 'a\\x2db.mount'] })).toMatchObject({ action: { step: 'unit-stop' } });
    expect(no({ step: 'unit-stop', units: ['--now.service'] })).toBe('action.units[0] "--now.service" is not a unit name');
    expect(no({ step: 'unit-mask', units: ['kubelet'] })).toBe('action.units[0] "kubelet" is not a unit name');
    expect(no({ step: 'unit-mask', units: ['../x.service'] })).toBe('action.units[0] "../x.service" is not a unit name');
    expect(no({ step: 'unit-disable', units: [] })).toBe('action.units must be a non-empty list of unit names');
    expect(no({ step: 'reboot' })).toContain('action.step must be one of sysctl, swapoff');
    expect(no({ step: 'daemon-reload', units: ['a.service'] })).toBe('action has an unexpected key "units"');
  });

  it('a container step: docker only, a full 64-hex id (never an option), a restart policy docker update takes', () => {
    const ID = 'ab'.repeat(32);
    const ok = (action: Record<string, unknown>) => checkJournal(journalOf(BEGIN, line(2, runtime(action))), PLACE).records[1];
    const no = (action: Record<string, unknown>) => second(runtime(action)).detail;
    expect(ok({ step: 'container-stop', runtime: 'docker', id: ID, restart: 'always' })).toMatchObject({
      action: { step: 'container-stop', id: ID, restart: 'always' },
    });
    expect(ok({ step: 'container-start', runtime: 'docker', id: ID, restart: 'no' })).toMatchObject({ action: { step: 'container-start' } });
    expect(no({ step: 'container-stop', runtime: 'docker', id: '--all', restart: 'always' })).toBe('action.id "--all" is not a container id');
    expect(no({ step: 'container-stop', runtime: 'docker', id: ID.slice(0, 12), restart: 'always' })).toBe(
      `action.id "${ID.slice(0, 12)}" is not a container id`,
    );
    expect(no({ step: 'container-stop', runtime: 'podman', id: ID, restart: 'always' })).toContain('action.runtime must be one of docker');
    expect(no({ step: 'container-stop', runtime: 'docker', id: ID, restart: 'sometimes' })).toContain('action.restart must be one of no, always');
    expect(no({ step: 'container-stop', runtime: 'docker', id: ID, restart: 'no', units: [] })).toBe('action has an unexpected key "units"');
  });

  it("a user's units: a user name, and uid and gid only on the private route, never root's uid", () => {
    const ok = (extra: Record<string, unknown>) =>
      checkJournal(journalOf(BEGIN, line(2, runtime({ step: 'unit-stop', units: ['a.service'], ...extra }))), PLACE).records[1];
    const no = (extra: Record<string, unknown>) => second(runtime({ step: 'unit-stop', units: ['a.service'], ...extra })).detail;
    expect(ok({ user: 'alice' })).toMatchObject({ action: { user: 'alice' } });
    expect(ok({ user: 'alice', route: 'private', uid: 1000, gid: 1000 })).toMatchObject({ action: { route: 'private', uid: 1000 } });
    expect(ok({ user: 'host$' })).toMatchObject({ action: { user: 'host$' } });
    expect(no({ user: 'Alice' })).toBe('action.user "Alice" is not a user name');
    expect(no({ user: '-alice' })).toBe('action.user "-alice" is not a user name');
    expect(no({ uid: 1000 })).toBe('action.route, uid and gid need action.user');
    expect(no({ user: 'alice', uid: 1000 })).toBe('action.uid and gid belong to route "private"');
    expect(no({ user: 'alice', route: 'bus' })).toBe('action.route must be one of private, not "bus"');
    expect(no({ user: 'alice', route: 'private', uid: 0, gid: 0 })).toBe('action.uid must be an integer from 1 to 4294967294, not 0');
  });

  it("a link result's entries: objects with a host path and its link text", () => {
    const disable = line(2, runtime({ step: 'unit-disable', units: ['a.service'] }));
    const done = (result: unknown) => refusal(journalOf(BEGIN, disable, line(3, { kind: 'done', of: 2, result }))).detail;
    expect(done({ removed: [], added: 'x' })).toBe('result.added must be a list');
    expect(done({ removed: ['x'], added: [] })).toBe('result.removed[0] must be an object');
    expect(done({ removed: [{ path: '/proc/1/x', link: 'y' }], added: [] })).toBe(
      'result.removed[0].path /proc/1/x lies in /proc, a kernel file system no run writes files in',
    );
    expect(done({ removed: [], added: [], extra: [] })).toBe('result has an unexpected key "extra"');
  });
});
