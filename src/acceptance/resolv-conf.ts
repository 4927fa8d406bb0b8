// ResolvConfLoop: not a kubeadm check, what breaks at the first pod. CoreDNS's
// Corefile as kubespray writes it forwards what is not the cluster's to
// /etc/resolv.conf (`forward . /etc/resolv.conf` unless upstream_dns_servers
// is set), and its pods run with dnsPolicy Default: that file is the one
// kubelet's resolvConf names, copied into the pod. When its nameservers are
// all loopback (127.0.0.53, systemd-resolved's stub, or a local dnsmasq at
// 127.0.0.1), inside the pod's network namespace they are CoreDNS itself: its
// loop plugin sees its own probe come back and stops the pod
// (CrashLoopBackOff), and nothing in the cluster resolves outside names.
//
// The file is read the way its two consumers read it, not as glibc does:
// kubelet (pkg/kubelet/network/dns/dns.go parseResolvConf) takes the second
// field of every trimmed line whose first field is `nameserver`, skipping
// lines that start with `#` (a `;` line has `;` as its first field, so it is
// skipped too), and keeps the first three (formDNSNameserversFitsLimits,
// validation.MaxDNSNameservers); CoreDNS (miekg/dns ClientConfigFromReader)
// then keeps those that parse as IP addresses.
import { isIPv4, isIPv6 } from 'node:net';
import type { Checker } from './checker.js';
import { notJudged, pass } from './checker.js';

/** kubelet's limit on a pod's nameservers (k8s.io/kubernetes pkg/apis/core/validation MaxDNSNameservers). */
export const MAX_POD_NAMESERVERS = 3;

/** The nameserver values kubelet copies into a pod with dnsPolicy Default, in order, at most three. */
export function kubeletNameservers(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    // Go's strings.TrimSpace and strings.Fields: Unicode white space; resolv.conf is ASCII in practice.
    const trimmed = line.trim();
    if (trimmed.startsWith('#')) continue;
    const fields = trimmed.split(/\s+/).filter((f) => f !== '');
    if (fields[0] === 'nameserver' && fields.length >= 2) out.push(fields[1]!);
  }
  return out.slice(0, MAX_POD_NAMESERVERS);
}

/** An address as CoreDNS's resolver reads a nameserver value (an IPv6 address may carry a %zone); null when it is not one. */
export function nameserverAddress(value: string): string | null {
  // node's isIPv6 takes a %zone itself: the address is what comes before it.
  const zone = value.indexOf('%');
  if (zone >= 0) return zone > 0 && isIPv6(value.slice(0, zone)) && !value.slice(0, zone).includes('.') ? value.slice(0, zone) : null;
  return isIPv4(value) || isIPv6(value) ? value : null;
}

/** 127.0.0.0/8, ::1, and an IPv4-mapped 127.x (Go's IP.IsLoopback, which CoreDNS's own address is compared as). */
export function isLoopback(address: string): boolean {
  if (isIPv4(address)) return address.split('.')[0] === '127';
  if (!isIPv6(address)) return false;
  // The URL parser writes an IPv6 address in its one canonical form (RFC 5952: ::1, ::ffff:7f00:1 for ::ffff:127.0.0.1).
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  if (canonical === '::1') return true;
  const groups = canonical.startsWith('::ffff:') ? canonical.slice('::ffff:'.length).split(':') : [];
  return groups.length === 2 && groups[0]!.length === 4 && groups[0]!.startsWith('7f');
}

/** What CoreDNS would forward to: the addresses among kubelet's nameservers. */
export function podForwardAddresses(text: string): string[] {
  return kubeletNameservers(text)
    .map(nameserverAddress)
    .filter((a): a is string => a !== null);
}

/** Whether CoreDNS would forward to itself: at least one address, every one loopback. */
export const onlyLoopback = (addresses: string[]): boolean => addresses.length > 0 && addresses.every(isLoopback);

export const resolvConfLoopCheck: Checker = {
  name: 'ResolvConfLoop',
  runsOn: 'every node',
  breaksLater: "CoreDNS forwards to /etc/resolv.conf's nameservers, which in its pod are CoreDNS itself: its loop plugin stops it",
  source:
    "kubespray roles/kubernetes-apps/ansible/templates/coredns-config.yml.j2 (forward . /etc/resolv.conf) and coredns-deployment.yml.j2 (dnsPolicy: Default); CoreDNS's loop plugin (plugin/loop/README.md)",
  check(f) {
    if (!f.resolvConf.known) return notJudged(f.resolvConf);
    const r = f.resolvConf.value;
    if (!onlyLoopback(r.addresses)) return pass();
    const via = r.real !== r.path ? ` (a link to ${r.real})` : '';
    return {
      warnings: [
        `${r.path}${via} has only loopback nameservers (${r.addresses.join(', ')}): pods with dnsPolicy Default, CoreDNS's among them, would forward to themselves`,
      ],
      errors: [],
    };
  },
};
