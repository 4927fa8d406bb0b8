// modules.dep (depmod(8)): "path/mod.ko[.xz]: dep1.ko dep2.ko ...", with the
// full transitive list. Needed because modprobe runs the install command of a
// dependency too: `install bridge /bin/false` stops br_netfilter as surely as
// `install br_netfilter /bin/false`. (A blacklist of a dependency does not.)
import { canonicalModuleName } from '../observe/modules.js';

function nameOf(p: string): string {
  return canonicalModuleName((p.split('/').pop() ?? '').replace(/\.ko(\.[a-z0-9]+)?$/, ''));
}

/** module -> its dependencies (transitive, as depmod writes them). */
export function parseModulesDep(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const deps = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(nameOf);
    out.set(nameOf(line.slice(0, colon).trim()), deps);
  }
  return out;
}

/** For each dependency of a wanted module, the wanted modules that need it; merged over kernels. */
export function dependenciesOf(wanted: string[], depMaps: Array<Map<string, string[]>>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const w of wanted.map(canonicalModuleName)) {
    for (const deps of depMaps) {
      for (const d of deps.get(w) ?? []) {
        const by = out.get(d) ?? [];
        if (!by.includes(w)) out.set(d, [...by, w]);
      }
    }
  }
  return out;
}
