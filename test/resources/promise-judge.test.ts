// The boot judge (promise-judge.ts) assembled from a registry's promise
// kinds: each promise judged by the kind its provider declared, a kind no
// provider declares said loudly, a kind two providers declare refused.
import { describe, expect, it } from 'vitest';
import { judgePromise, promiseJudge, promiseKinds } from '../../src/resources/promise-judge.js';
import type { AnyProvider } from '../../src/resources/index.js';
import type { PromiseKind, Promised } from '../../src/promises.js';

const kind = (verdict: string | null): PromiseKind => ({ describe: (p) => p.subject, judge: () => verdict });
const provider = (kinds: Record<string, PromiseKind>) => ({ type: 'T', promiseKinds: kinds }) as unknown as AnyProvider;
const promise = (k: string): Promised => ({ id: `${k}:x`, kind: k, subject: 'x', expect: 'y' });

describe('promiseKinds', () => {
  it("the shipped registry's kinds, one per promising resource", () => {
    expect([...promiseKinds().keys()].sort()).toEqual(['module', 'path-absent', 'port', 'swap', 'sysctl', 'unit-down']);
  });

  it('a kind two providers declare is a registry defect, named with both', () => {
    expect(() => promiseKinds({ A: provider({ k: kind(null) }), B: provider({ k: kind(null) }) })).toThrow('promise kind k is declared by both A and B');
  });
});

describe('promiseJudge', () => {
  it("judges by the promise's own kind", () => {
    const judge = promiseJudge({ A: provider({ ok: kind(null) }), B: provider({ bad: kind('broken') }), C: provider({}) });
    expect(judge(promise('ok'), {})).toBeNull();
    expect(judge(promise('bad'), {})).toBe('broken');
  });

  it('a kind the registry does not know is never taken as held', () => {
    expect(promiseJudge({})(promise('time-sync'), {})).toBe('a promise of kind time-sync this judge cannot check');
  });

  it('the shipped judge holds a booted host to the shipped kinds: a port a tier saw listening, a sysctl read back', () => {
    const port: Promised = { id: 'port:6443', kind: 'port', subject: '6443', expect: 'free' };
    expect(judgePromise(port, { ports: new Map([[6443, ['pid 1 (x)']]]) })).toBe('port 6443 is listening (pid 1 (x))');
    const fwd: Promised = { id: 'sysctl:net.ipv4.ip_forward', kind: 'sysctl', subject: 'net.ipv4.ip_forward', expect: '1' };
    expect(judgePromise(fwd, { sysctl: { 'net.ipv4.ip_forward': '1' } })).toBeNull();
  });
});
