// PortFree's operator line (ops.ts operatorChange): what a person must do for
// one port takes back that port's promise from apply on, the promise as the
// provider itself lists it for the spec; a line about a unit alone (offline:
// no port is known to be its) takes back none by itself.
import { describe, expect, it } from 'vitest';
import { operatorChange } from '../../../src/resources/port-free/ops.js';
import { portFreeProvider } from '../../../src/resources/port-free/provider.js';
import type { PortFreeSpec } from '../../../src/resources/port-free/spec.js';

const spec: PortFreeSpec = {
  type: 'PortFree',
  ports: [6443, 10250],
  protected_units: [],
  stop_spawner_units: [],
  mask: false,
  timeout_seconds: 5,
  disable_units: [],
};
const promiseOf = (port: number) => portFreeProvider.promised!(spec).find((p) => p.subject === String(port))!.id;

describe('operatorChange', () => {
  it("about a port: an operator change whose reason is the operator line, withdrawing that port's promise from apply", () => {
    const c = operatorChange('port-6443', 'port 6443 held by pid 7 (api)', 'stop it yourself', { port: 6443, unit: 'api.service', pid: 7 });
    expect(c).toEqual({
      id: 'port-6443',
      action: 'operator',
      summary: 'port 6443 held by pid 7 (api)',
      operator: 'stop it yourself',
      op: { kind: 'operator', port: 6443, unit: 'api.service', pid: 7 },
      withdraws: [{ promise: promiseOf(6443), from: 'apply' }],
    });
    expect(promiseOf(6443)).not.toBe(promiseOf(10250));
  });

  it('about a unit with no port: no withdrawal of its own', () => {
    const c = operatorChange('unit-x', 'x.service names 6443', 'disable it', { port: null, unit: 'x.service', pid: null });
    expect(c.withdraws).toBeUndefined();
    expect('withdraws' in c).toBe(false);
    expect(c.op).toEqual({ kind: 'operator', port: null, unit: 'x.service', pid: null });
  });
});
