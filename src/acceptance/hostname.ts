// Hostname: kubeadm init and join warn when the node name is not a
// Kubernetes qualified name, or does not resolve (kubelet then cannot start
// the static pods by that name). The name is kubespray's, not the host's:
// nodeRegistration.name is kube_override_hostname, inventory_hostname by
// default. kubeadm is a static Go binary, whose resolver reads /etc/hosts and
// then DNS (nss modules such as myhostname are not consulted), so the lookup
// here does the same. Warnings only: the install goes on.
import type { Checker } from './checker.js';
import { pass } from './checker.js';

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** k8s.io/apimachinery/pkg/util/validation IsQualifiedName: its messages, empty when valid. */
export function qualifiedNameProblems(value: string): string[] {
  const parts = value.split('/');
  if (parts.length > 2) return [`a qualified name ${QUALIFIED_NAME_MSG}, with an optional DNS subdomain prefix and '/'`];
  const errs: string[] = [];
  const name = parts.at(-1)!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix === '') errs.push('prefix part must be non-empty');
    else {
      if (prefix.length > 253) errs.push('prefix part must be no more than 253 characters');
      if (!DNS1123_SUBDOMAIN.test(prefix))
        errs.push(
          "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        );
    }
  }
  if (name === '') errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  if (!QUALIFIED_NAME.test(name)) errs.push(`name part ${QUALIFIED_NAME_MSG}`);
  return errs;
}

export const hostnameCheck: Checker = {
  name: 'Hostname',
  runsOn: 'every node',
  source: 'cmd/kubeadm/app/preflight/checks.go HostnameCheck.Check (addCommonChecks, nodeRegistration.name)',
  check(f) {
    if (!f.nodeName.known) return { skipped: f.nodeName.reason };
    const name = f.nodeName.value;
    const warnings = qualifiedNameProblems(name).map((m) => `invalid node name format ${JSON.stringify(name)}: ${m}`);
    if (!f.nodeNameLookup.known) return warnings.length > 0 ? { warnings, errors: [] } : { skipped: f.nodeNameLookup.reason };
    const l = f.nodeNameLookup.value;
    if (!l.resolves) warnings.push(`hostname "${name}" could not be reached (${l.how})`);
    return warnings.length > 0 ? { warnings, errors: [] } : pass();
  },
};
