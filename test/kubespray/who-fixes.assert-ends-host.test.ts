// A failing assert ends the host today, but who-fixes answers what the roles
// do once kubespray gets past its preflight (issue 44): the verdict stays the
// roles' answer, and each fix after the assert says which assert fails today.
// The failing assert itself is a finding of its own (preflight.ts; its
// ends-the-host semantics are compared with ansible-playbook in
// tasks.walk.test.ts). Line numbers are counted in the fixtures: the fixture
// writes "---" on line 1.
import { describe, expect, it } from 'vitest';
import { formatEvidence } from '../../src/kubespray/who-fixes.js';
import { PM, audit } from '../helpers/kubespray-fixture.js';

const SWAP = '- name: Swap off\n  command: /sbin/swapoff -a\n- name: Mask swap\n  systemd_service:\n    name: swap.target\n    masked: true\n';
const CHECK = '- name: Check\n  assert:\n    that: 1 == 2\n';

describe('a failing assert does not change who fixes what', () => {
  it('the swap tasks after it are still kubespray, and each says which assert fails today', async () => {
    const w = await audit(CHECK + SWAP);
    expect(w.swap.who).toBe('kubespray');
    expect(w.swap.evidence.map(formatEvidence)).toEqual([
      `${PM}:5 "Swap off": runs /sbin/swapoff -a; after the preflight passes (it fails today: the assert at ${PM}:2 "Check" fails (1 == 2), which ends the host)`,
      `${PM}:7 "Mask swap": masks swap.target; after the preflight passes (it fails today: the assert at ${PM}:2 "Check" fails (1 == 2), which ends the host)`,
    ]);
  });

  it('the same verdicts as with the assert passing, for every problem and the sysctl file', async () => {
    const FIXES =
      SWAP +
      '- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "1"\n    sysctl_file: /etc/sysctl.d/99-k.conf\n' +
      '- name: Load\n  community.general.modprobe:\n    name: br_netfilter\n- name: Persist\n  copy:\n    dest: /etc/modules-load.d/k.conf\n    content: br_netfilter\n';
    const failing = await audit(CHECK + FIXES);
    const passing = await audit('- name: Check\n  assert:\n    that: 1 == 1\n' + FIXES);
    const four = (w: typeof failing) => [w.swap.who, w.br_netfilter.who, w.ip_forward.who, w.port_10250.who, w.sysctl_file?.path];
    expect(four(failing)).toEqual(['kubespray', 'kubespray', 'kubespray', 'operator', '/etc/sysctl.d/99-k.conf']);
    expect(four(passing)).toEqual(four(failing));
    expect(passing.swap.evidence.map((e) => e.preflight)).toEqual([undefined, undefined]);
  });

  it('a fix before the assert says nothing about it', async () => {
    const w = await audit(SWAP + CHECK);
    expect(w.swap.who).toBe('kubespray');
    expect(w.swap.evidence.map(formatEvidence)).toEqual([`${PM}:2 "Swap off": runs /sbin/swapoff -a`, `${PM}:4 "Mask swap": masks swap.target`]);
  });

  it('an unnamed assert is named by its line alone', async () => {
    const w = await audit('- assert:\n    that: 1 == 2\n' + SWAP);
    expect(formatEvidence(w.swap.evidence[0]!)).toBe(
      `${PM}:4 "Swap off": runs /sbin/swapoff -a; after the preflight passes (it fails today: the assert at ${PM}:2 fails (1 == 2), which ends the host)`,
    );
  });

  it('a set_fact that sets a variable called that is no assert: the fixes after it carry no preflight', async () => {
    const w = await audit('- name: Fact\n  set_fact:\n    that: false\n' + SWAP);
    expect(w.swap.who).toBe('kubespray');
    expect(w.swap.evidence.map((e) => [e.status, e.preflight])).toEqual([
      [{ runs: 'yes' }, undefined],
      [{ runs: 'yes' }, undefined],
    ]);
  });

  it('ignore_errors that is not a boolean, or cannot be evaluated: the verdict stands, the evidence says why the host may stop', async () => {
    const maybe = await audit(CHECK + '  ignore_errors: maybe\n' + SWAP);
    expect(maybe.swap.who).toBe('kubespray');
    expect(formatEvidence(maybe.swap.evidence[0]!)).toBe(
      `${PM}:6 "Swap off": runs /sbin/swapoff -a; after the preflight passes (it fails today: the assert at ${PM}:2 "Check" fails (1 == 2), which ends the host, unless ignore_errors at ${PM}:5: "maybe" is not a boolean)`,
    );
    const undef = await audit(CHECK + '  ignore_errors: "{{ nope }}"\n' + SWAP);
    expect(undef.swap.who).toBe('kubespray');
    expect(formatEvidence(undef.swap.evidence[0]!)).toContain(`unless ignore_errors at ${PM}:5: 'nope' is undefined)`);
    // ignore_errors that holds lets the host go on: nothing fails today.
    const ignored = await audit(CHECK + '  ignore_errors: "{{ 1 == 1 }}"\n' + SWAP);
    expect([ignored.swap.who, ignored.swap.evidence[0]!.preflight]).toEqual(['kubespray', undefined]);
    const ends = await audit(CHECK + '  ignore_errors: no\n' + SWAP);
    expect([ends.swap.who, ends.swap.evidence[0]!.preflight?.runs]).toEqual(['kubespray', 'no']);
  });

  it('inside a block with only an always section: the verdict stands, the evidence names the block', async () => {
    const w = await audit('- block:\n  - name: Check\n    assert:\n      that: 1 == 2\n  always:\n  - debug: msg=x\n' + SWAP);
    expect(w.swap.who).toBe('kubespray');
    expect(formatEvidence(w.swap.evidence[0]!)).toBe(
      `${PM}:8 "Swap off": runs /sbin/swapoff -a; after the preflight passes (it fails today: the assert at ${PM}:3 "Check" fails (1 == 2), which ends the host, unless the block at ${PM}:2 has rescue or always sections, which decide what runs after it (not modelled))`,
    );
  });
});
