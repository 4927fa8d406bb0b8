// The checker's shared vocabulary: a fact or why it is not known, and how a
// check that needs an unknown fact is reported (skipped offline, unknown when
// a host file deciding it could not be read), and atLeast, kubeadm's
// "value below the floor is an error" shape (NumCPUCheck, MemCheck).
import { describe, expect, it } from 'vitest';
import type { Known } from '../../src/acceptance/checker.js';
import { atLeast, known, notJudged, notKnown, pass, unreadable } from '../../src/acceptance/checker.js';

describe('known, notKnown and unreadable', () => {
  it('carry the value, or the reason and whether a file could not be read', () => {
    expect(known(0)).toEqual({ known: true, value: 0 });
    expect(known(null)).toEqual({ known: true, value: null });
    expect(notKnown('offline')).toEqual({ known: false, reason: 'offline' });
    expect(unreadable('/etc/resolv.conf:3: bad line')).toEqual({ known: false, reason: '/etc/resolv.conf:3: bad line', unreadable: true });
  });
});

describe('notJudged: skipped for a fact that is simply not there, unknown (loud) for an unreadable file', () => {
  // notJudged takes a fact already found not known, as a check holds it after testing .known.
  const unknownFact = (k: Known<number>) => (k.known ? expect.unreachable('a known fact') : k);
  it('keeps the reason word for word', () => {
    expect(notJudged(unknownFact(notKnown('offline: no live host')))).toEqual({ skipped: 'offline: no live host' });
    expect(notJudged(unknownFact(unreadable('/etc/containerd/config.toml:4: not TOML')))).toEqual({ unknown: '/etc/containerd/config.toml:4: not TOML' });
  });
});

describe('atLeast', () => {
  const err = (v: number) => `only ${v}`;
  it('the floor itself passes, one below is an error with the value in the message', () => {
    expect(atLeast(known(2), 2, err)).toEqual(pass());
    expect(atLeast(known(3), 2, err)).toEqual({ warnings: [], errors: [] });
    expect(atLeast(known(1), 2, err)).toEqual({ warnings: [], errors: ['only 1'] });
    expect(atLeast(known(0), 1, err)).toEqual({ warnings: [], errors: ['only 0'] });
  });
  it('an unknown value is skipped with its reason, and the message is never built', () => {
    let built = 0;
    const counting = (v: number) => `${++built} ${v}`;
    expect(atLeast(notKnown('offline'), 2, counting)).toEqual({ skipped: 'offline' });
    expect(built).toBe(0);
  });
  it("pass() is a fresh result each time, so one check cannot add to another's lists", () => {
    const a = pass();
    a.warnings.push('x');
    expect(pass()).toEqual({ warnings: [], errors: [] });
  });
});
