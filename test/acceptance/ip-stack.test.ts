// ipv6StackOf on checkouts in kubespray's layout: master's kubespray_defaults
// (`ipv4_stack: true`, `ipv6_stack: "{{ enable_dual_stack_networks |
// default(false) }}"`, main/main.yml:279-281) and v2.24.0's kubespray-defaults
// (`enable_dual_stack_networks: false`, main/main.yml:216), the values
// written as those trees write them; the fixture's own file sets one for the node.
import { describe, expect, it } from 'vitest';
import { ipv6Judged, ipv6StackOf, withIpv6 } from '../../src/acceptance/ip-stack.js';
import { known, notKnown } from '../../src/acceptance/checker.js';
import { NM, PM, fixtureNode } from '../helpers/kubespray-fixture.js';

const BARE = { [PM]: '---\n[]\n', [NM]: '---\n[]\n' };
const MASTER = 'roles/kubespray_defaults/defaults/main/main.yml';
const V224 = 'roles/kubespray-defaults/defaults/main/main.yml';
const master = (extra = '') => ({ ...BARE, [MASTER]: `---\n${extra}ipv4_stack: true\nipv6_stack: "{{ enable_dual_stack_networks | default(false) }}"\n` });
const v224 = (value: string) => ({ ...BARE, [V224]: `---\nkube_version: v1.28.6\nenable_dual_stack_networks: ${value}\n` });

describe('ipv6StackOf', () => {
  it("master's default: ipv6_stack from enable_dual_stack_networks, false when that is not set", async () => {
    expect(await ipv6StackOf(await fixtureNode(master()))).toEqual(known({ asked: false, why: `ipv6_stack is false for this node (${MASTER}:3)` }));
  });

  it("master with the deprecated enable_dual_stack_networks: true, or ipv6_stack set to a string Ansible's bool reads as true", async () => {
    expect(await ipv6StackOf(await fixtureNode(master('enable_dual_stack_networks: true\n')))).toMatchObject(known({ asked: true }));
    const own = { ...BARE, [MASTER]: '---\nipv6_stack: "yes"\n' };
    expect(await ipv6StackOf(await fixtureNode(own))).toEqual(known({ asked: true, why: `ipv6_stack is true for this node (${MASTER}:2)` }));
  });

  it("v2.24.0's enable_dual_stack_networks, false by default, true when set", async () => {
    expect(await ipv6StackOf(await fixtureNode(v224('false')))).toEqual(
      known({ asked: false, why: `enable_dual_stack_networks is false for this node (${V224}:3)` }),
    );
    expect(await ipv6StackOf(await fixtureNode(v224('true')))).toMatchObject(known({ asked: true }));
  });

  it('a value that cannot be evaluated, or neither variable: not known, naming the variable and its file:line', async () => {
    const r = await ipv6StackOf(await fixtureNode(v224('"{{ undefined_thing }}"')));
    expect(r).toMatchObject({ known: false, reason: expect.stringContaining(`enable_dual_stack_networks (${V224}:3) cannot be evaluated`) });
    expect(await ipv6StackOf(await fixtureNode(BARE))).toMatchObject({ known: false, reason: expect.stringContaining('neither ipv6_stack nor') });
    expect(await ipv6StackOf(undefined)).toMatchObject({ known: false, reason: expect.stringContaining('no readable kubespray checkout') });
  });
});

describe('withIpv6', () => {
  const w4 = { warnings: ['v4 drop'], errors: [] };
  const w6 = { warnings: ['v6 drop'], errors: [] };
  const pass = { warnings: [], errors: [] };
  it('not asked: not judged; asked: its warning with the variable; untold: the warning names why', () => {
    expect(ipv6Judged(known({ asked: false, why: 'x' }))).toBeNull();
    expect(withIpv6(w4, w6, { asked: 'ipv6_stack is true for this node (f:3)' })).toEqual({
      warnings: ['v4 drop', 'v6 drop (ipv6_stack is true for this node (f:3))'],
      errors: [],
    });
    const untold = ipv6Judged(notKnown('ipv6_stack (f:3) cannot be evaluated'))!;
    expect(withIpv6(pass, w6, untold)).toEqual({
      warnings: ['v6 drop; whether the inventory asks for IPv6 cannot be told: ipv6_stack (f:3) cannot be evaluated'],
      errors: [],
    });
  });
  it("an IPv6 pass or skip leaves IPv4's outcome as it is; an unknown makes it unknown, naming both", () => {
    expect(withIpv6(w4, pass, { asked: 'a' })).toBe(w4);
    expect(withIpv6({ skipped: 'offline' }, { skipped: 'offline' }, { asked: 'a' })).toEqual({ skipped: 'offline' });
    expect(withIpv6(w4, { unknown: '/etc/iptables/rules.v6:3: bad' }, { asked: 'a' })).toEqual({ unknown: 'v4 drop; IPv6: /etc/iptables/rules.v6:3: bad' });
  });
});
