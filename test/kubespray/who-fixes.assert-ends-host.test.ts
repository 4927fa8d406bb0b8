// What a failing assert leaves for the tasks after it: Ansible ends the host
// there, so a fix written later does nothing on it; ignore_errors that cannot
// be judged, or a block whose rescue/always sections decide what runs next,
// leave it unknown, naming the line. (ansible-playbook itself is compared in
// tasks.walk.test.ts; these pin how the verdict reads.) Line numbers are
// counted in the fixtures: the fixture writes "---" on line 1.
import { describe, expect, it } from 'vitest';
import { formatEvidence } from '../../src/kubespray/who-fixes.js';
import { PM, audit } from '../helpers/kubespray-fixture.js';

const SWAP = '- name: Swap off\n  command: /sbin/swapoff -a\n- name: Mask swap\n  systemd_service:\n    name: swap.target\n    masked: true\n';
const CHECK = '- name: Check\n  assert:\n    that: 1 == 2\n';

describe('a failing assert ends the host', () => {
  it('the swap tasks after it do nothing here, and each says which assert ended the host', async () => {
    const w = await audit(CHECK + SWAP);
    expect(w.swap.who).toBe('operator');
    expect(w.swap.evidence.map(formatEvidence)).toEqual([
      `${PM}:5 "Swap off": runs /sbin/swapoff -a; does nothing on this host: ${PM}:2 the assert at ${PM}:2 "Check" fails (1 == 2), which ends the host`,
      `${PM}:7 "Mask swap": masks swap.target; does nothing on this host: ${PM}:2 the assert at ${PM}:2 "Check" fails (1 == 2), which ends the host`,
    ]);
  });

  it('an unnamed assert is named by its line alone', async () => {
    const w = await audit('- assert:\n    that: 1 == 2\n' + SWAP);
    expect(formatEvidence(w.swap.evidence[0]!)).toBe(
      `${PM}:4 "Swap off": runs /sbin/swapoff -a; does nothing on this host: ${PM}:2 the assert at ${PM}:2 fails (1 == 2), which ends the host`,
    );
  });

  it('a set_fact that sets a variable called that is no assert: the fixes after it still run', async () => {
    const w = await audit('- name: Fact\n  set_fact:\n    that: false\n' + SWAP);
    expect(w.swap.who).toBe('kubespray');
    expect(w.swap.evidence.map((e) => e.status)).toEqual([{ runs: 'yes' }, { runs: 'yes' }]);
  });

  it('ignore_errors that is not a boolean, or cannot be evaluated, leaves the tasks after it unknown, naming its line', async () => {
    const maybe = await audit(CHECK + '  ignore_errors: maybe\n' + SWAP);
    expect(maybe.swap.who).toBe('unknown');
    expect(maybe.swap.reason).toBe(
      `the condition ${PM}:2 the assert at ${PM}:2 "Check" fails (1 == 2), which ends the host cannot be evaluated (ignore_errors at ${PM}:5: "maybe" is not a boolean)`,
    );
    const undef = await audit(CHECK + '  ignore_errors: "{{ nope }}"\n' + SWAP);
    expect(undef.swap.who).toBe('unknown');
    expect(undef.swap.reason).toBe(
      `the condition ${PM}:2 the assert at ${PM}:2 "Check" fails (1 == 2), which ends the host cannot be evaluated (ignore_errors at ${PM}:5: 'nope' is undefined)`,
    );
    // Its neighbours: ignore_errors that holds lets the host go on; one that does not ends it.
    expect((await audit(CHECK + '  ignore_errors: "{{ 1 == 1 }}"\n' + SWAP)).swap.who).toBe('kubespray');
    expect((await audit(CHECK + '  ignore_errors: no\n' + SWAP)).swap.who).toBe('operator');
  });

  it('inside a block with only an always section, what runs after it is unknown, naming the block', async () => {
    const w = await audit('- block:\n  - name: Check\n    assert:\n      that: 1 == 2\n  always:\n  - debug: msg=x\n' + SWAP);
    expect(w.swap.who).toBe('unknown');
    expect(w.swap.reason).toBe(
      `the condition ${PM}:3 the assert at ${PM}:3 "Check" fails (1 == 2), which ends the host cannot be evaluated (the block at ${PM}:2 has rescue or always sections, which decide what runs after it (not modelled))`,
    );
  });
});
