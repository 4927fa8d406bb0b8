// facts.source: ansible — the lab's own way: `ansible -i <inventory> <node>
// -m setup`, run from the kubespray directory so its ansible.cfg applies.
import type { TargetHost } from '../host.js';
import { HostError } from '../errors.js';
import type { Facts } from './linux.js';

/**
 * Pulls the JSON document out of an ad-hoc run's output
 * ("node1 | SUCCESS => { ... }") and takes the six fields from ansible_facts.
 */
export function parseSetupOutput(stdout: string, node: string): Facts {
  const marker = new RegExp(`^${escapeRe(node)} \\| (SUCCESS|CHANGED|FAILED!|UNREACHABLE!) => `, 'm');
  const m = marker.exec(stdout);
  if (!m) throw new Error(`no "${node} | SUCCESS => " line in the output of ansible -m setup`);
  const jsonText = extractJson(stdout.slice(m.index + m[0].length));
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(jsonText) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`the setup output for ${node} is not JSON: ${(e as Error).message}`);
  }
  if (m[1] !== 'SUCCESS' && m[1] !== 'CHANGED') {
    throw new Error(`ansible -m setup on ${node}: ${m[1]} ${String(doc.msg ?? '').trim()}`);
  }
  const f = doc.ansible_facts as Record<string, unknown> | undefined;
  if (!f) throw new Error(`the setup output for ${node} has no ansible_facts`);
  const def = f.ansible_default_ipv4 as Record<string, unknown> | undefined;
  const need = <T>(key: string, type: 'number' | 'string'): T => {
    const v = f[key];
    if (typeof v !== type) throw new Error(`ansible_facts.${key} is missing or not a ${type}`);
    return v as T;
  };
  return {
    memtotal_mb: need<number>('ansible_memtotal_mb', 'number'),
    processor_vcpus: need<number>('ansible_processor_vcpus', 'number'),
    distribution: need<string>('ansible_distribution', 'string'),
    distribution_version: need<string>('ansible_distribution_version', 'string'),
    kernel: need<string>('ansible_kernel', 'string'),
    default_ipv4: typeof def?.address === 'string' ? def.address : null,
    // Everything setup reported, under the names ansible_facts uses (kubespray's conditions read many).
    extra: Object.fromEntries(Object.entries(f).map(([k, v]) => [k.replace(/^ansible_/, ''), v])),
  };
}

/** The first balanced {...} value at the start of text (strings and escapes respected). */
function extractJson(text: string): string {
  const start = text.indexOf('{');
  if (start < 0) return text;
  let depth = 0;
  let inStr = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inStr) {
      if (c === '\\') i++;
      else if (c === '"') inStr = false;
    } else if (c === '"') inStr = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return text.slice(start);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export interface AnsibleFactsOptions {
  /** Kubespray checkout (target path), the working directory. */
  dir: string;
  inventory: string;
  node: string;
}

export async function gatherAnsibleFacts(host: TargetHost, o: AnsibleFactsOptions): Promise<Facts> {
  host.assertLive('ansible -m setup');
  // The minimal ad-hoc callback prints "node | SUCCESS => {json}"; force it in
  // case ansible.cfg or the environment asks for another stdout callback.
  const r = await host.run('ansible', ['-i', o.inventory, o.node, '-m', 'setup'], {
    cwd: (await host.locate(o.dir, { follow: true })).abs,
    env: { ANSIBLE_LOAD_CALLBACK_PLUGINS: '0', ANSIBLE_NOCOLOR: '1', ANSIBLE_FORCE_COLOR: '0' },
    timeoutMs: 300_000,
  });
  try {
    return parseSetupOutput(r.stdout, o.node);
  } catch (e) {
    const tail = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-3).join(' | ');
    throw new HostError(`${r.command} (in ${o.dir}) exited ${r.exitCode}: ${(e as Error).message}${tail ? `: ${tail}` : ''}`, 'ansible');
  }
}
