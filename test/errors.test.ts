// Errors as values (errors.ts): each class's message, the context it keeps,
// and the one short cause an fs error is given. The fs errors are real ones,
// made by the calls that raise them on a temp directory.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HostError, InputError, ReconcileError, RunAbortedError, VerifyError, describeFsError, formatInputIssue } from '../src/errors.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const caught = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('no error');
};

describe('the error classes', () => {
  it('each is a ReconcileError named after its class', () => {
    const all = [
      new ReconcileError('m'),
      new HostError('m', '/etc/x', 'EACCES'),
      new InputError([]),
      new VerifyError('r', []),
      new RunAbortedError('m', [], []),
    ];
    for (const e of all) {
      expect(e).toBeInstanceOf(ReconcileError);
      expect(e).toBeInstanceOf(Error);
      expect(e.name).toBe(e.constructor.name);
    }
    expect(new HostError('cannot read', '/etc/x', 'EACCES')).toMatchObject({ message: 'cannot read', subject: '/etc/x', code: 'EACCES' });
    expect(new HostError('m', 's').code).toBeUndefined();
  });

  it('InputError: one line per issue as file:line:column path: message; the document itself has no path', () => {
    const issues = [
      { file: 'ds.yaml', line: 4, column: 7, path: 'resources[0].ports[1]', message: 'must be <= 65535' },
      { file: 'ds.yaml', line: 1, column: 1, path: '', message: 'must be a mapping' },
    ];
    expect(formatInputIssue(issues[0]!)).toBe('ds.yaml:4:7 resources[0].ports[1]: must be <= 65535');
    expect(formatInputIssue(issues[1]!)).toBe('ds.yaml:1:1 must be a mapping');
    const e = new InputError(issues);
    expect(e.message).toBe('ds.yaml:4:7 resources[0].ports[1]: must be <= 65535\nds.yaml:1:1 must be a mapping');
    expect(e.issues).toBe(issues);
  });

  it('VerifyError names the resource and what is left; RunAbortedError carries what was applied and what failed', () => {
    expect(new VerifyError('k8s-sysctl', ['set a', 'set b']).message).toBe('k8s-sysctl: not converged after apply: set a; set b');
    const applied = [{ resource: 'SwapOff', changes: ['comment out /swapfile'] }];
    const failed = [{ resource: 'PortFree', message: 'port 6443 came back' }];
    expect(new RunAbortedError('stopped', applied, failed)).toMatchObject({ message: 'stopped', applied, failed });
  });
});

describe('describeFsError', () => {
  it('real errors: the cause in words with its code', () => {
    const d = mkdtempSync(path.join(tmpdir(), 'errors-'));
    dirs.push(d);
    expect(describeFsError(caught(() => readFileSync(path.join(d, 'none'))))).toBe('no such file or directory (ENOENT)');
    mkdirSync(path.join(d, 'dir'));
    expect(describeFsError(caught(() => readFileSync(path.join(d, 'dir'))))).toBe('is a directory (EISDIR)');
    writeFileSync(path.join(d, 'f'), '');
    expect(describeFsError(caught(() => readFileSync(path.join(d, 'f', 'x'))))).toBe('a component of the path is not a directory (ENOTDIR)');
    expect(describeFsError(caught(() => mkdirSync(path.join(d, 'dir'))))).toBe('already exists (EEXIST)');
    writeFileSync(path.join(d, 'dir', 'x'), '');
    expect(describeFsError(caught(() => rmdirSync(path.join(d, 'dir'))))).toBe('directory not empty (ENOTEMPTY)');
  });

  it('a code it has no words for is the code; no code is the message', () => {
    expect(describeFsError(Object.assign(new Error('x'), { code: 'ETXTBSY' }))).toBe('ETXTBSY');
    expect(describeFsError(new Error('plain'))).toBe('plain');
    expect(describeFsError('a string')).toBe('a string');
    expect(describeFsError(null)).toBe('null');
  });
});
