// Checks of the desired state that need the host: done before anything is
// observed for the plan, and reported like the other desired-state problems
// (file:line:col path: message), because the fix is in the desired state.
// What each check is about comes from the providers' traits (claims, hostChecks).
import path from 'node:path';
import type { Host } from '../host.js';
import type { DesiredState } from '../desired-state.js';
import { InputError } from '../errors.js';
import type { InputIssue } from '../errors.js';
import { PROVIDERS, type ProviderRegistry } from '../resources/index.js';

/**
 * Links Debian's packages ship in the directories we own files in. Replacing
 * one with our file would silently stop the file it points at from applying
 * at boot. The dpkg database, when the root has one, names any other.
 */
export const PACKAGE_LINKS: Record<string, { package: string; target: string; applies: string }> = {
  '/etc/sysctl.d/99-sysctl.conf': { package: 'procps', target: '../sysctl.conf', applies: '/etc/sysctl.conf' },
  '/etc/modules-load.d/modules.conf': { package: 'kmod', target: '../modules', applies: '/etc/modules' },
};

/** Packages whose dpkg file list names `target` (a path on the target). */
async function dpkgOwners(host: Host, target: string): Promise<string[]> {
  const entries = (await host.readDir('/var/lib/dpkg/info')) ?? [];
  const out: string[] = [];
  for (const e of entries) {
    if (!e.name.endsWith('.list')) continue;
    let text: string | null;
    try {
      text = await host.readFile(`/var/lib/dpkg/info/${e.name}`);
    } catch {
      continue; // an unreadable list cannot name the file; the known table still applies
    }
    if (text !== null && text.split('\n').some((l) => l === target)) out.push(e.name.slice(0, -'.list'.length).replace(/:.*$/, ''));
  }
  return out;
}

async function packageLinkProblem(host: Host, file: string): Promise<string | null> {
  const link = await host.readLink(file);
  if (link === null || path.posix.normalize(link) === '/dev/null') return null;
  const known = PACKAGE_LINKS[path.posix.normalize(file)];
  const owners = await dpkgOwners(host, path.posix.normalize(file));
  if (!known && owners.length === 0) return null;
  const pkg = owners.length > 0 ? owners.join(', ') : known!.package;
  const applies =
    known && path.posix.normalize(link) === path.posix.normalize(known.target) ? known.applies : path.posix.resolve(path.posix.dirname(file), link);
  return `${file} is ${pkg}'s link to ${link}: replacing it with our file would stop ${applies} from applying at boot; choose another file name (e.g. k8s.conf)`;
}

/**
 * Every file a resource claims must not be a package's link; then each
 * provider's own checks (hostChecks), in the desired state's order.
 */
export async function hostInputIssues(host: Host, desired: DesiredState, registry: ProviderRegistry = PROVIDERS): Promise<InputIssue[]> {
  const where = desired.where ?? ((pointer: string[]) => ({ file: desired.source, line: 1, column: 1, path: pointer.join('.'), message: '' }));
  const out: InputIssue[] = [];
  const promised = desired.resources.flatMap((r) => registry[r.type]?.promised?.(r) ?? []);
  for (const [i, r] of desired.resources.entries()) {
    const provider = registry[r.type];
    for (const claim of provider?.claims?.(r) ?? []) {
      if (claim.kind !== 'file') continue;
      const problem = await packageLinkProblem(host, claim.subject);
      if (problem) out.push({ ...where(['resources', String(i), ...claim.at]), message: problem });
    }
    for (const issue of (await provider?.hostChecks?.(host, r, { promised })) ?? []) {
      out.push({ ...where(['resources', String(i), ...issue.at], issue.atKey), message: issue.message });
    }
  }
  return out;
}

export async function assertHostInputs(host: Host, desired: DesiredState, registry: ProviderRegistry = PROVIDERS): Promise<void> {
  const issues = await hostInputIssues(host, desired, registry);
  if (issues.length > 0) throw new InputError(issues);
}
