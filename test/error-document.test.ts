// The --json error document (error-document.ts), built from each kind of
// error and checked two ways: against schema/error.schema.json (the closed
// contract, written by hand, validated with ajv) and field by field against
// what the error holds.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { errorDocument, inputIssue } from '../src/error-document.js';
import { HostError, InputError, ReconcileError, RunAbortedError } from '../src/errors.js';
import { FORMAT_VERSION, TOOL_VERSION } from '../src/version.js';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
const schema = (name: string) => JSON.parse(readFileSync(path.join(repo, 'schema', `${name}.schema.json`), 'utf8'));
// error.schema.json takes its shared definitions from the plan's and apply's schemas.
ajv.addSchema(schema('plan'));
ajv.addSchema(schema('apply'));
const ERROR = ajv.compile(schema('error'));
const valid = (doc: unknown) => (ERROR(doc) ? [] : ERROR.errors!.map((e) => `${e.instancePath} ${e.message}`));

describe('errorDocument', () => {
  it('a plain error: the message twice, no location, nothing applied; valid against the schema', () => {
    const doc = errorDocument('apply', 'another run holds /run/k8s-host-reconcile.lock', new ReconcileError('x'));
    expect(doc).toEqual({
      format_version: FORMAT_VERSION,
      tool: { name: 'k8s-host-reconcile', version: TOOL_VERSION },
      command: 'apply',
      error: 'another run holds /run/k8s-host-reconcile.lock',
      error_detail: { message: 'another run holds /run/k8s-host-reconcile.lock' },
      applied: [],
      failed: [],
    });
    expect(valid(doc)).toEqual([]);
    expect(valid(errorDocument(null, 'unknown option --frob'))).toEqual([]);
  });

  it('a desired state with several mistakes: the first located above, every one in issues, the key only where there is one', () => {
    const e = new InputError([
      { file: 'ds.yaml', line: 4, column: 7, path: 'resources[0].ports[1]', message: 'must be <= 65535' },
      { file: 'ds.yaml', line: 1, column: 1, path: '', message: 'must be a mapping' },
    ]);
    const doc = errorDocument('plan', e.message, e);
    expect(doc.error_detail).toEqual({
      message: e.message,
      file: 'ds.yaml',
      line: 4,
      column: 7,
      key: 'resources[0].ports[1]',
      issues: [
        { message: 'must be <= 65535', file: 'ds.yaml', line: 4, column: 7, key: 'resources[0].ports[1]' },
        { message: 'must be a mapping', file: 'ds.yaml', line: 1, column: 1 },
      ],
    });
    expect(valid(doc)).toEqual([]);
    expect(inputIssue({ file: 'f', line: 1, column: 2, path: '', message: 'm' })).toEqual({ message: 'm', file: 'f', line: 1, column: 2 });
  });

  it('a host error on a path names the file; one on something else (a command) does not', () => {
    expect(errorDocument('apply', 'm', new HostError('m', '/etc/fstab', 'EROFS')).error_detail).toEqual({ message: 'm', file: '/etc/fstab' });
    expect(errorDocument('apply', 'm', new HostError('m', 'systemctl stop a.service')).error_detail).toEqual({ message: 'm' });
  });

  it('a run stopped after changing something carries what it applied and what failed', () => {
    const applied = [{ resource: 'SwapOff', changes: ['comment out /swapfile in /etc/fstab'] }];
    const failed = [{ resource: 'PortFree', message: 'port 6443 came back' }];
    const doc = errorDocument('apply', 'stopped', new RunAbortedError('stopped', applied, failed));
    expect([doc.applied, doc.failed]).toEqual([applied, failed]);
    expect(valid(doc)).toEqual([]);
  });

  it('more detail given by the caller is added; a credential a message quotes is redacted everywhere', () => {
    expect(errorDocument('report', 'm', undefined, { file: '/x/plan.json', key: 'resources' }).error_detail).toEqual({
      message: 'm',
      file: '/x/plan.json',
      key: 'resources',
    });
    const line = '/etc/fstab:3: //nas/share /mnt cifs username=bob,password=hunter2 0 0';
    const doc = errorDocument('plan', line, new HostError(line, '/etc/fstab'));
    expect(JSON.stringify(doc)).not.toContain('hunter2');
    expect(doc.error).toContain('username=bob');
    expect(doc.error_detail.message).toBe(doc.error);
  });
});
