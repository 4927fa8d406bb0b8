// Old kubespray releases (v2.16 … v2.23) start every playbook with
// legacy_groups.yml: one play per old group name (`hosts: kube-master`) whose
// group_by task adds its hosts to the new group (`key: kube_control_plane`)
// at run time, so an inventory written with the old names still gets
// kube_control_plane's conditions and group_vars. This reads that playbook
// and applies what it does to the inventory; anything in it beyond a plain
// group name and a literal group_by key is reported, not guessed.
import { isMap, isSeq } from 'yaml';
import type { Node, YAMLMap } from 'yaml';
import type { KubesprayCheckout } from './checkout.js';
import { lineOf, valueOf } from './checkout.js';
import { canonicalModule } from './tasks.js';
import type { Inventory } from './inventory.js';

export const LEGACY_GROUPS_FILES = ['legacy_groups.yml', 'playbooks/legacy_groups.yml'];

export interface LegacyGroups {
  /** The playbook read, relative to the checkout; null when the release has none. */
  file: string | null;
  /** host -> groups group_by adds it to, with the line of the task. */
  added: { host: string; group: string; from: string; line: number }[];
  /** Parts of the playbook that cannot be applied: file, line and why. */
  unknown: { file: string; line: number; reason: string }[];
}

const PLAIN_GROUP = /^[A-Za-z0-9_-]+$/;

/** What legacy_groups.yml does to `inv`; the inventory is changed in place (as group_by changes Ansible's). */
export async function applyLegacyGroups(ck: KubesprayCheckout, inv: Inventory): Promise<LegacyGroups> {
  const out: LegacyGroups = { file: null, added: [], unknown: [] };
  for (const rel of LEGACY_GROUPS_FILES) {
    const f = await ck.yaml(rel);
    if (!f) continue;
    out.file = rel;
    const root = f.doc.contents;
    if (!isSeq(root)) {
      out.unknown.push({ file: rel, line: 1, reason: 'not a list of plays' });
      return out;
    }
    for (const playNode of root.items as Node[]) {
      if (!isMap(playNode)) continue;
      const play = valueOf(f, playNode) as Record<string, unknown>;
      const pline = lineOf(f, playNode);
      const hosts = play.hosts;
      if (typeof hosts !== 'string' || !PLAIN_GROUP.test(hosts)) {
        out.unknown.push({ file: rel, line: pline, reason: `hosts: ${JSON.stringify(hosts)} is not a plain group name` });
        continue;
      }
      const tasksNode = (playNode as YAMLMap).get('tasks', true) as Node | undefined;
      const others = Object.keys(play).filter((k) => !['name', 'hosts', 'gather_facts', 'tags', 'tasks', 'any_errors_fatal', 'become'].includes(k));
      if (others.length > 0) out.unknown.push({ file: rel, line: pline, reason: `play keywords ${others.join(', ')} are not modelled` });
      if (!isSeq(tasksNode)) continue;
      const members = inv.groups.has(hosts) ? membersOf(inv, hosts) : [];
      for (const taskNode of tasksNode.items as Node[]) {
        if (!isMap(taskNode)) continue;
        const task = valueOf(f, taskNode) as Record<string, unknown>;
        const line = lineOf(f, taskNode);
        const moduleKey = Object.keys(task).find((k) => k !== 'name');
        const args = moduleKey ? task[moduleKey] : undefined;
        const key = args && typeof args === 'object' ? (args as Record<string, unknown>).key : undefined;
        if (
          !moduleKey ||
          canonicalModule(moduleKey) !== 'group_by' ||
          Object.keys(task).length > 2 ||
          typeof key !== 'string' ||
          key.includes('{{') ||
          !PLAIN_GROUP.test(key)
        ) {
          out.unknown.push({ file: rel, line, reason: `only a group_by with a literal key is modelled (${JSON.stringify(task)})` });
          continue;
        }
        for (const host of members) {
          addToGroup(inv, host, key);
          out.added.push({ host, group: key, from: hosts, line });
        }
      }
    }
    return out;
  }
  return out;
}

function membersOf(inv: Inventory, group: string): string[] {
  const out = new Set<string>();
  const visit = (g: string, seen: string[]): void => {
    const grp = inv.groups.get(g);
    if (!grp || seen.includes(g)) return;
    for (const h of grp.hosts) out.add(h);
    for (const c of grp.children) visit(c, [...seen, g]);
  };
  visit(group, []);
  return [...out];
}

/** group_by: the group is created under `all` when it is new, and the host is a direct member. */
function addToGroup(inv: Inventory, host: string, group: string): void {
  if (!inv.groups.has(group)) {
    inv.groups.set(group, { name: group, hosts: [], children: [], vars: {}, line: 0 });
    inv.groups.get('all')?.children.push(group);
  }
  const g = inv.groups.get(group)!;
  if (!g.hosts.includes(host)) g.hosts.push(host);
  const h = inv.hosts.get(host);
  if (h && !h.groups.includes(group)) h.groups.push(group);
}
