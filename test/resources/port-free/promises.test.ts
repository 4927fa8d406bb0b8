// PortFree's promise kind (promises.ts): one promise per port, worded
// "port N free", broken by a listener a tier saw, with what it saw holding
// it; an operator line that withdraws it names the holder (held).
import { describe, expect, it } from 'vitest';
import { PORT_KIND, portPromise } from '../../../src/resources/port-free/promises.js';
import type { Promised } from '../../../src/promises.js';

const p: Promised = { id: portPromise(6443), kind: 'port', subject: '6443', expect: 'free' };

describe('the port promise', () => {
  it('is named and worded by its port, and its withdrawals name a holder', () => {
    expect(portPromise(6443)).toBe('port:6443');
    expect(PORT_KIND.describe(p)).toBe('port 6443 free');
    expect(PORT_KIND.held).toBe(true);
  });

  it('holds while nothing listens on the port; a listener breaks it, naming its holders', () => {
    expect(PORT_KIND.judge(p, { ports: new Map([[10250, ['kubelet']]]) })).toBeNull();
    expect(PORT_KIND.judge(p, { ports: new Map([[6443, ['pid 812 (kube-apiserver)', 'unit kubelet.service']]]) })).toBe(
      'port 6443 is listening (pid 812 (kube-apiserver); unit kubelet.service)',
    );
    expect(PORT_KIND.judge(p, { ports: new Map([[6443, []]]) })).toBe('port 6443 is listening (no process shown)');
  });

  it('no port observation: nothing to judge', () => {
    expect(PORT_KIND.judge(p, {})).toBeNull();
  });
});
