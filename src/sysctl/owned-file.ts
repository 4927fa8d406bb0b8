// The sysctl.d file SysctlFile owns, and the text edits it makes to others:
// a conflicting line commented out under a marker, or an /etc override copy.
// Pure.
import { resourceName } from '../desired-state.js';
import { normalizeSysctlKey } from '../observe/sysctl-live.js';
import type { SysctlConfFile } from './order.js';

export const TOOL_NAME = 'k8s-host-reconcile';

/** Wanted settings, canonical key -> value, in the spec's order. */
/** What the owned file is made from: the resource's name (for its header) and the wanted settings. */
export interface OwnedSysctlSettings {
  type: string;
  name?: string;
  settings: Record<string, string | number>;
}

export function wantedSettings(spec: Pick<OwnedSysctlSettings, 'settings'>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(spec.settings)) out.set(normalizeSysctlKey(k), String(v));
  return out;
}

export function renderOwnedFile(spec: OwnedSysctlSettings): string {
  const lines = [`# Managed by ${TOOL_NAME} (${resourceName(spec)}); edits here are overwritten.`];
  for (const [k, v] of wantedSettings(spec)) lines.push(`${k} = ${v}`);
  return lines.join('\n') + '\n';
}

export function disabledMarker(ownedPath: string): string {
  return `# disabled by ${TOOL_NAME}: conflicts with ${ownedPath}`;
}

/**
 * Comments out the given 1-based lines, each under a marker line. Every
 * other byte (line endings, a missing final newline) is kept.
 */
export function commentOutLines(content: string, lines: number[], marker: string): string {
  const parts = content.split('\n');
  const wanted = new Set(lines);
  return parts
    .map((text, i) => {
      if (!wanted.has(i + 1)) return text;
      const cr = text.endsWith('\r') ? '\r' : '';
      return `${marker}${cr}\n# ${text}`;
    })
    .join('\n');
}

/** The header of a same-named /etc/sysctl.d copy that overrides a vendor entry. */
export function overrideHeader(source: SysctlConfFile): string {
  return (
    `# Copy of ${source.realPath === source.path ? source.path : `${source.path} (${source.realPath})`} made by ${TOOL_NAME}:\n` +
    `# the same name in /etc/sysctl.d overrides it, so its other settings keep applying\n` +
    `# while a conflicting line stays disabled. Package updates to the original do not reach this copy.\n`
  );
}

/** The module whose loading creates a key's /proc/sys entry, for the keys Kubernetes hosts need. */
export function moduleFor(key: string): string | null {
  if (key.startsWith('net.bridge.')) return 'br_netfilter';
  if (key.startsWith('net.netfilter.nf_conntrack') || key.startsWith('net.nf_conntrack')) return 'nf_conntrack';
  if (key.startsWith('net.ipv6.')) return 'ipv6';
  return null;
}
