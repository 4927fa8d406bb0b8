// Who fixes what at the edges the first mutation run of the kubespray group
// found unpinned: a loop the audit cannot evaluate, one name with a value per
// loop item, a half that is present while another task for it is unsure, and
// Jinja2 attribute lookups on a loop item that is a string. Expectations are
// ansible-core's and Jinja2's behaviour, written out by hand.
import { describe, expect, it } from 'vitest';
import { expandItem } from '../src/kubespray/tasks.js';
import { N, audit } from './helpers/kubespray-fixture.js';

const SWAPOFF = '- name: Swap off\n  ansible.builtin.command: /sbin/swapoff -a\n';
const PERSIST = '- name: Persist\n  ansible.builtin.copy:\n    dest: /etc/modules-load.d/k8s.conf\n    content: "br_netfilter\\n"\n';

describe('edges', () => {
  it('a loop that cannot be evaluated fails the task in Ansible: its arguments are not credited, even ones that evaluate', async () => {
    const t = '- name: Load\n  community.general.modprobe:\n    name: "{{ netfilter }}"\n  loop: "{{ not_defined_list }}"\n';
    const w = await audit('', t + PERSIST, { [`${N}/defaults/main.yml`]: '---\nnetfilter: br_netfilter\n' });
    expect(w.br_netfilter.who).toBe('unknown');
    expect(w.br_netfilter.evidence.map((e) => e.does)).toEqual(['persists br_netfilter in /etc/modules-load.d/k8s.conf']);
  });

  it('one name with a value per loop item: Ansible sets it once per item, the last item last', async () => {
    const t = '- name: Forward\n  ansible.posix.sysctl:\n    name: net.ipv4.ip_forward\n    value: "{{ item }}"\n  loop: ["0", "1"]\n';
    const w = await audit(t);
    expect(w.ip_forward.who).toBe('kubespray');
    expect(w.sysctl_keys.map((k) => [k.key, k.value])).toEqual([['net.ipv4.ip_forward', '0'], ['net.ipv4.ip_forward', '1']]);
  });

  it('a missing half with no task for it is the operator\'s, whatever is unsure about the half that is there', async () => {
    const w = await audit(SWAPOFF + SWAPOFF.replace('Swap off', 'Swap off again') + '  when: maybe_swap\n');
    expect(w.swap.who).toBe('operator');
    expect(w.swap.reason).toBe('swap is turned off but no task masks swap.target or removes fstab swap entries, so it comes back at reboot');
    expect(w.warnings).toEqual([]);
  });

  it('the evidence shows a modprobe command without the blanks around it', async () => {
    // One blank before: ansible-core's split_args fails on two ("Unable to parse argument string").
    const w = await audit('', '- name: L\n  ansible.builtin.shell: " modprobe br_netfilter  "\n' + PERSIST);
    expect(w.br_netfilter.evidence.map((e) => e.does)).toEqual(['runs modprobe br_netfilter', 'persists br_netfilter in /etc/modules-load.d/k8s.conf']);
  });

  it('"{{ item.length }}" over strings: a Python str has no attribute length, so Jinja2 gives undefined', () => {
    expect(expandItem('{{ item.length }}', ['abc', 'de'])).toEqual([undefined, undefined]);
    expect(expandItem('{{ item.length }}', [{ length: 3 }])).toEqual([3]);
  });
});
