// Who clears a former node's leftovers, as kubespray's own roles answer it
// (src/kubespray/reset-audit.ts): reset.yml's reset role, and the roles this
// audit reads for cluster.yml. Pure phrasing of those answers for the
// FormerNode finding: one sentence for the message, one clause per piece of
// evidence.

/** One answer of the audit (src/kubespray/reset-audit.ts ResetAnswer, which reconcile/ hands over): this room reads kubespray's answers, not kubespray. */
export type ResetAnswer =
  { clears: true; by: { file: string; line: number } } | { clears: false } | { clears: 'unknown'; warning: { file: string; line: number; message: string } };

export interface KubesprayClears {
  /** Evidence path -> what reset.yml's reset role does with it. */
  reset: ReadonlyMap<string, ResetAnswer>;
  /** Evidence path -> what cluster.yml's audited roles do with it. */
  cluster: ReadonlyMap<string, ResetAnswer>;
  /** The roles read for cluster.yml, for the text. */
  clusterRoles: readonly string[];
}

const at = (a: ResetAnswer): string =>
  a.clears === true ? `${a.by.file}:${a.by.line}` : a.clears === 'unknown' ? `${a.warning.file}:${a.warning.line}: ${a.warning.message}` : '';

/** What one playbook does with a piece: `playbook` names it, `no` is the words for "does not remove it". */
function said(playbook: string, a: ResetAnswer | undefined, no: string): string {
  if (!a) return '';
  return a.clears === true ? `${playbook} removes it (${at(a)})` : a.clears === false ? `${playbook} ${no}` : `${playbook}: unknown (${at(a)})`;
}

/** The clause for one piece of evidence. */
export function clearsClause(c: KubesprayClears, p: string): string {
  return [said('reset.yml', c.reset.get(p), 'does not remove it'), said('cluster.yml', c.cluster.get(p), 'does not')].filter((x) => x !== '').join('; ');
}

/** The finding's sentence: how much of the evidence each playbook clears. */
export function clearsSentence(c: KubesprayClears, paths: readonly string[]): string {
  const count = (m: ReadonlyMap<string, ResetAnswer>, v: ResetAnswer['clears']) => paths.filter((p) => m.get(p)?.clears === v).length;
  const removed = count(c.reset, true);
  const unknown = count(c.reset, 'unknown');
  const left = paths.filter((p) => c.reset.get(p)?.clears === false);
  const byCluster = count(c.cluster, true);
  const resetPart =
    removed === paths.length
      ? `kubespray's reset.yml removes all ${paths.length} (evaluated from roles/reset for this node)`
      : `kubespray's reset.yml removes ${removed} of ${paths.length}${left.length > 0 ? `, not ${left.join(', ')}` : ''}${unknown > 0 ? `, ${unknown} unknown` : ''} (evaluated from roles/reset for this node)`;
  const clusterPart =
    byCluster === 0 && count(c.cluster, 'unknown') === 0
      ? `cluster.yml clears none of them (no task of ${c.clusterRoles.join(' or ')} removes them), so the install meets them`
      : `cluster.yml's ${c.clusterRoles.join(' and ')} remove ${byCluster} of them${count(c.cluster, 'unknown') > 0 ? `, ${count(c.cluster, 'unknown')} unknown` : ''}`;
  return `${resetPart}; ${clusterPart}`;
}
