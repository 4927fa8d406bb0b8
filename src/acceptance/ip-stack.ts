// Whether the inventory asks kubespray for IPv6 on this node (dual-stack or
// IPv6-only), so that the firewall checks judge the ip6 tables too. kubespray
// master names it `ipv6_stack` (kubespray_defaults/defaults/main/main.yml:
// `ipv6_stack: "{{ enable_dual_stack_networks | default(false) }}"`, beside
// `ipv4_stack: true`); v2.20.0 and v2.24.0 name it `enable_dual_stack_networks`
// (kubespray-defaults, `false`). The first of the two the checkout defines
// for roles/kubernetes/preinstall decides, evaluated with this node's
// variables (inventory, group_vars, host_vars) as Ansible's `| bool` reads it.
import type { KubesprayNode } from '../kubespray/report.js';
import type { CheckOutcome, Known } from './checker.js';
import { known, notKnown } from './checker.js';

/** `asked`: IPv6 pod and node traffic is configured; `why`: the variable and where it is set, for the evidence. */
export interface Ipv6Stack {
  asked: boolean;
  why: string;
}

const ROLE = 'kubernetes/preinstall';
export const IPV6_VARIABLES = ['ipv6_stack', 'enable_dual_stack_networks'] as const;

/** ipv6_stack (or, on older trees, enable_dual_stack_networks) for this node; not known naming the variable and its file:line. */
export async function ipv6StackOf(node: KubesprayNode | undefined): Promise<Known<Ipv6Stack>> {
  if (!node) return notKnown('ipv6_stack cannot be read: no readable kubespray checkout in desired-state');
  const ctx = await node.vars(ROLE).catch((e: Error) => e);
  if (ctx instanceof Error) return notKnown(`ipv6_stack cannot be read: the variables of ${ROLE} cannot be read: ${ctx.message}`);
  for (const name of IPV6_VARIABLES) {
    const def = ctx.get(name);
    if (!def) continue;
    const where = `${def.file}:${def.line}`;
    if ('runtime' in def) return notKnown(`${name} (${where}) is set at run time`);
    const r = ctx.template(`{{ ${name} | bool }}`);
    if (!r.ok) return notKnown(`${name} (${where}) cannot be evaluated: ${r.reason}`);
    if (typeof r.value !== 'boolean') return notKnown(`${name} (${where}) is ${JSON.stringify(r.value)}, not a boolean`);
    return known({ asked: r.value, why: `${name} is ${String(r.value)} for this node (${where})` });
  }
  return notKnown(`neither ${IPV6_VARIABLES.join(' nor ')} is defined for ${ROLE} in this checkout`);
}

/** IPv6 judged because the inventory asks for it (`asked`: why), or because that cannot be told (`untold`: why); null: not judged. */
export type Ipv6Judged = { asked: string } | { untold: string };

/** How a firewall check judges IPv6 for this stack: null when the inventory asks for IPv4 only (or no stack was read). */
export function ipv6Judged(stack: Known<Ipv6Stack> | undefined): Ipv6Judged | null {
  if (stack === undefined) return null;
  if (!stack.known) return { untold: stack.reason };
  return stack.value.asked ? { asked: stack.value.why } : null;
}

const texts = (o: CheckOutcome): string[] => ('unknown' in o ? [o.unknown] : 'skipped' in o ? [] : [...o.errors, ...o.warnings]);

/**
 * The IPv4 outcome with the IPv6 one added: its warnings say why IPv6 is judged (the variable, or why it cannot
 * be read); an unknown in either makes the whole unknown, naming both; an IPv6 pass or skip leaves IPv4's as it is.
 */
export function withIpv6(v4: CheckOutcome, v6: CheckOutcome, judged: Ipv6Judged): CheckOutcome {
  if ('skipped' in v6 || ('warnings' in v6 && v6.warnings.length === 0 && v6.errors.length === 0)) return v4;
  const why = 'asked' in judged ? ` (${judged.asked})` : `; whether the inventory asks for IPv6 cannot be told: ${judged.untold}`;
  if ('unknown' in v6 || 'unknown' in v4)
    return { unknown: [...texts(v4), ...('unknown' in v6 ? [`IPv6: ${v6.unknown}`] : texts(v6).map((t) => `${t}${why}`))].join('; ') };
  const base = 'skipped' in v4 ? { warnings: [], errors: [] } : v4;
  return { warnings: [...base.warnings, ...v6.warnings.map((w) => `${w}${why}`)], errors: [...base.errors, ...v6.errors.map((e) => `${e}${why}`)] };
}
