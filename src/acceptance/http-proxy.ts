// HTTPProxy and HTTPProxyCIDR: kubeadm init (and join --control-plane) warns when its connection to the
// node's API address, or to the first address of the service or pod range, would go through a proxy
// (cmd/kubeadm/app/preflight/checks.go HTTPProxyCheck, HTTPProxyCIDRCheck: http.ProxyFromEnvironment on an
// https URL). Under kubespray kubeadm's environment is its play's: with every https proxy variable empty (or
// unset in the login environment too) no connection uses a proxy and both pass. With a proxy set, whether
// NO_PROXY excludes those addresses is Go's matching on values this tool does not evaluate: unknown, naming
// where the proxy comes from.
import type { Checker, CheckOutcome, AcceptanceFacts } from './checker.js';
import { pass } from './checker.js';

function judge(f: AcceptanceFacts, what: string): CheckOutcome {
  if (!f.kubeadmProxy.known) return { skipped: f.kubeadmProxy.reason };
  const p = f.kubeadmProxy.value;
  if (p.https === null) return pass();
  const no = p.noProxy === null ? 'NO_PROXY is unset' : `NO_PROXY is ${JSON.stringify(p.noProxy.value)} (${p.noProxy.where})`;
  return {
    unknown: `kubeadm runs with the https proxy ${JSON.stringify(p.https.value)} (${p.https.where}; ${p.how}); whether ${no} excludes ${what} is not judged here`,
  };
}

export const httpProxyCheck: Checker = {
  name: 'HTTPProxy',
  runsOn: 'control-plane',
  source: 'cmd/kubeadm/app/preflight/checks.go HTTPProxyCheck (InitNodeChecks: https to the API advertise address)',
  check: (f) => judge(f, "the node's API address"),
};

export const httpProxyCidrCheck: Checker = {
  name: 'HTTPProxyCIDR',
  runsOn: 'control-plane',
  source: 'cmd/kubeadm/app/preflight/checks.go HTTPProxyCIDRCheck (InitNodeChecks: the service and pod subnets)',
  check: (f) => judge(f, 'the service and pod ranges (kube_service_addresses, kube_pods_subnet)'),
};
