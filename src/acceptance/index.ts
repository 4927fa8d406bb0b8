// The checkers, in kubeadm's order within InitNodeChecks and addCommonChecks;
// then ours, for what breaks after an install that succeeds.
import type { Checker } from './checker.js';
import { numCpuCheck } from './num-cpu.js';
import { memCheck } from './mem.js';
import { fileExistingChecks } from './file-existing.js';
import { systemVerificationCheck } from './system-verification.js';
import { firewalldCheck } from './firewalld.js';
import { hostnameCheck } from './hostname.js';
import { timeSyncCheck } from './time-sync.js';
import { serviceKubeletCheck } from './service-kubelet.js';
import { resolvConfLoopCheck } from './resolv-conf.js';
import { containerRuntimeCollisionCheck } from './runtime-collision.js';
import { freeSpaceCheck } from './free-space.js';
import { networkManagerCniCheck } from './network-manager.js';
import { iptablesForwardDropCheck } from './iptables-forward.js';
import { controlPlanePortsFirewalledCheck } from './control-plane-firewall.js';
import { httpProxyCheck, httpProxyCidrCheck } from './http-proxy.js';

export const CHECKERS: readonly Checker[] = [
  numCpuCheck,
  memCheck,
  firewalldCheck,
  httpProxyCheck,
  httpProxyCidrCheck,
  ...fileExistingChecks,
  systemVerificationCheck,
  hostnameCheck,
  serviceKubeletCheck,
  timeSyncCheck,
  resolvConfLoopCheck,
  containerRuntimeCollisionCheck,
  freeSpaceCheck,
  networkManagerCniCheck,
  iptablesForwardDropCheck,
  controlPlanePortsFirewalledCheck,
];
