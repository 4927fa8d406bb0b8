// Accepted findings in the fleet report: read from each host's document,
// checked against its accepted_findings, counted apart from the verdicts and
// shown in the table, the CSV, the JSON and the HTML. A finding kubespray
// stops on fails its host though it was accepted. Hand-written documents.
import { describe, expect, it } from 'vitest';
import { readHostDocument, type HostSummary } from '../../src/report/document.js';
import { countsLine, fleetDocument, renderCsv, renderTable } from '../../src/report/formats.js';
import { renderHtml } from '../../src/report/html.js';

const FORMER = 'this host was a Kubernetes node (1 piece of evidence: /etc/kubernetes/kubelet.conf)';
const CPU = 'kubeadm init (and join --control-plane) preflight: [ERROR NumCPU]: the number of available CPUs 1 is less than the required 2';

const planDoc = (findings: object[], extra: object = {}) =>
  JSON.stringify({
    format_version: '1.0',
    tool: { name: 'k8s-host-reconcile', version: '0.1.0' },
    mode: 'plan',
    live: true,
    root: '/',
    before_state: null,
    pending_changes: 0,
    operator_required: 0,
    kubespray_preflight_failures: findings.filter((f) => (f as { stops?: boolean }).stops).length,
    accepted_findings: findings.filter((f) => (f as { accepted?: boolean }).accepted).length,
    resources: [],
    promises: [],
    findings,
    ...extra,
  });

const formerNode = { level: 'warning', unknown: true, check: 'FormerNode', message: FORMER };
const acceptedFormer = { ...formerNode, accepted: true, accepted_by: ['--accept'], accepted_note: 'accepted here only: …' };
const acceptedCpu = {
  level: 'error',
  stops: true,
  check: 'NumCPU',
  message: CPU,
  accepted: true,
  accepted_by: ['/etc/k8s-host-reconcile/desired-state.yaml:9'],
  accepted_note: 'accepted here only: …',
};

function summary(text: string, host: string): HostSummary {
  const r = readHostDocument(text, host, `${host}/reconcile.json`);
  if (!r.ok) throw new Error(JSON.stringify(r.issue));
  return r.summary;
}

describe('accepted findings in the fleet report', () => {
  const ready = summary(planDoc([acceptedFormer]), 'node-a');
  const failed = summary(planDoc([acceptedCpu]), 'node-b');
  const unknown = summary(planDoc([formerNode]), 'node-c');

  it('an accepted unknown is no unknown: the host is ready, with the finding listed as accepted', () => {
    expect(ready).toMatchObject({ verdict: 'ready', unknowns: [], errors: [], accepted: [`FormerNode (--accept): ${FORMER}`] });
    expect(unknown).toMatchObject({ verdict: 'unknown', unknowns: [FORMER], accepted: [] });
  });

  it('an accepted finding kubespray stops on still fails the host, and says it was accepted', () => {
    expect(failed.verdict).toBe('failed');
    expect(failed.errors).toEqual([`kubespray's preflight stops (accepted here: NumCPU (/etc/k8s-host-reconcile/desired-state.yaml:9)): ${CPU}`]);
    expect(failed.accepted).toEqual([`NumCPU (/etc/k8s-host-reconcile/desired-state.yaml:9): ${CPU}`]);
  });

  it('counts accepted findings apart from the verdicts, in the table, the CSV and the JSON', () => {
    const hosts = [ready, failed, unknown];
    expect(countsLine(hosts)).toBe('3 hosts: 1 failed, 1 unknown, 1 ready; 2 findings accepted on 2 hosts');
    const table = renderTable(hosts).split('\n');
    expect(table[0]).toBe('HOST    VERDICT  CHANGES  OPERATOR  UNKNOWNS  ACCEPTED');
    expect(table).toContain('node-a  ready    0        0         0         1');
    expect(table).toContain(`    a FormerNode (--accept): ${FORMER}`);
    expect(table).toContain(`    a NumCPU (/etc/k8s-host-reconcile/desired-state.yaml:9): ${CPU}`);
    const csv = renderCsv(hosts).split('\r\n');
    expect(csv[0]).toBe('host,verdict,mode,changes,operator_count,unknown_count,operator_lines,unknowns,errors,accepted_count,accepted,file');
    expect(csv.find((l) => l.startsWith('node-a,'))).toBe(`node-a,ready,plan,0,0,0,,,,1,FormerNode (--accept): ${FORMER},node-a/reconcile.json`);
    const json = fleetDocument(hosts);
    expect(json.accepted).toEqual({ findings: 2, hosts: 2 });
    expect(json.counts).toMatchObject({ failed: 1, unknown: 1, ready: 1 });
    expect(json.hosts.find((h) => h.host === 'node-c')!.accepted).toEqual([]);
  });

  it('the HTML has an accepted column with each accepted finding', () => {
    const html = renderHtml([ready, unknown]);
    expect(html).toContain(
      '<button type="button">unknowns</button></th><th data-col="6" data-type="number" aria-sort="none"><button type="button">accepted</button></th>',
    );
    expect(html).toContain(`<td class="accepted-findings" data-key="1"><div class="accepted"><bdi>FormerNode (--accept): ${FORMER}</bdi></div></td>`);
    expect(html).toContain('2 hosts: 1 unknown, 1 ready; 1 finding accepted on 1 host;');
  });

  it('refuses a document whose accepted_findings does not match, or an accepted finding without a check name or accepted_by', () => {
    const issue = (text: string) => {
      const r = readHostDocument(text, 'h', 'h/reconcile.json');
      return r.ok ? null : r.issue;
    };
    expect(issue(planDoc([acceptedFormer], { accepted_findings: 0 }))).toEqual({
      field: 'accepted_findings',
      message: 'says 0, but findings has 1 finding(s) with accepted: true',
    });
    const { check: _, ...noCheck } = acceptedFormer;
    expect(issue(planDoc([noCheck]))).toEqual({ field: 'findings[0].check', message: 'missing' });
    const { accepted_by: __, ...noBy } = acceptedFormer;
    expect(issue(planDoc([noBy]))).toEqual({ field: 'findings[0].accepted_by', message: 'missing' });
    expect(issue(planDoc([{ ...acceptedFormer, accepted: 'yes' }]))).toEqual({
      field: 'findings[0].accepted',
      message: 'expected true or false, found a string',
    });
    // A document written before accepted_findings existed is still read.
    const old = JSON.parse(planDoc([formerNode]));
    delete old.accepted_findings;
    expect(issue(JSON.stringify(old))).toBeNull();
  });
});
