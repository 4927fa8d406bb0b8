// Whether NetworkManager's unmanaged-devices specs cover an interface
// pattern, by the Device List Format of NetworkManager.conf(5): `*` matches
// every device; `interface-name:X` and `interface-name:~X` glob with `*` and
// `?`; `interface-name:=X` and a bare IFNAME match literally; `except:`
// negates and outranks. Covering a glob means every name it can stand for
// matches: said only when that is certain (the same glob, `*`, or a `P*`
// spec whose P begins the pattern's literal head). Specs of another kind
// (mac:, type:, driver:, an except:) may match too: then not known, never no.
import type { Known } from './checker.js';
import { known, notKnown } from './checker.js';

const GLOB = /[*?]/;

/** NM's simple glob (`*` any run, `?` one character; no ranges, no escapes) on one interface name. */
export function globMatches(glob: string, name: string): boolean {
  const re = new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    's',
  );
  return re.test(name);
}

type Spec = { kind: 'all' } | { kind: 'glob'; glob: string } | { kind: 'literal'; name: string } | { kind: 'other'; spec: string };

function parseSpec(s: string): Spec {
  if (s === '*') return { kind: 'all' };
  if (s.startsWith('interface-name:=')) return { kind: 'literal', name: s.slice('interface-name:='.length) };
  if (s.startsWith('interface-name:~')) return { kind: 'glob', glob: s.slice('interface-name:~'.length) };
  if (s.startsWith('interface-name:')) return { kind: 'glob', glob: s.slice('interface-name:'.length) };
  // A bare word with no `prefix:` is an interface name, one with ':' a MAC address or another kind.
  if (!s.includes(':')) return { kind: 'literal', name: s };
  return { kind: 'other', spec: s };
}

/** Whether one positive spec matches every name `pattern` stands for. */
function covers(spec: Spec, pattern: string): boolean {
  if (spec.kind === 'all') return true;
  if (spec.kind === 'literal') return !GLOB.test(pattern) && spec.name === pattern;
  if (spec.kind !== 'glob') return false;
  if (!GLOB.test(pattern)) return globMatches(spec.glob, pattern);
  if (spec.glob === pattern) return true;
  const head = spec.glob.slice(0, -1);
  const patternHead = pattern.slice(0, pattern.search(GLOB));
  return spec.glob.endsWith('*') && !GLOB.test(head) && patternHead.startsWith(head);
}

/** Whether every name `pattern` stands for is unmanaged under `specs`; not known where another kind of spec could decide it. */
export function unmanagedCovers(specs: string[], pattern: string): Known<boolean> {
  const parsed = specs.map(parseSpec);
  const excepts = specs.filter((s) => s.startsWith('except:'));
  if (excepts.length > 0) return notKnown(`unmanaged-devices has ${excepts.join(', ')}, whose match on ${pattern} is not judged here`);
  if (parsed.some((s) => covers(s, pattern))) return known(true);
  const other = parsed.filter((s): s is { kind: 'other'; spec: string } => s.kind === 'other');
  if (other.length > 0) return notKnown(`unmanaged-devices has ${other.map((o) => o.spec).join(', ')}, which may match ${pattern}: not judged here`);
  return known(false);
}
