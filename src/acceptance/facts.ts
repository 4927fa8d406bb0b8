// The facts the checkers judge, each read once through the Host: CPUs,
// memory and the kernel release from the facts kubespray's report gathered
// (never read again), the cgroup controllers and a container marker from the
// running kernel (live only), and PATH lookups in the target's tree (which an
// image can answer too). Host files are untrusted: a value that does not
// parse is not known, with the reason.
import type { TargetHost } from '../host.js';
import type { Facts } from '../facts/linux.js';
import { commandFile } from '../facts/command-path.js';
import type { AcceptanceFacts, CgroupFacts, Known } from './checker.js';
import { known, notKnown } from './checker.js';
import { ALL_PROGRAMS } from './file-existing.js';

/**
 * The PATH kubeadm is looked up and runs with: kubespray runs it with
 * "{{ bin_dir }}:{{ ansible_env.PATH }}" (roles/kubernetes/control-plane/tasks/kubeadm-setup.yml),
 * bin_dir being /usr/local/bin by default and ansible_env.PATH root's (sudo's secure_path on Debian).
 */
export const KUBEADM_PATH = '/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin';

/** /sys/fs/cgroup/cgroup.controllers (v2) or /proc/cgroups' enabled column (v1), as the cgroups validator reads them. */
export async function readCgroups(host: TargetHost): Promise<Known<CgroupFacts>> {
  if (!host.live) return notKnown(`offline (--root ${host.root}): the controllers are the running kernel's`);
  // systemd writes this file when PID 1 runs in a container: the controllers are then what the container manager delegates, not the server's.
  const container = await host.readFile('/run/systemd/container').catch(() => null);
  if (container !== null)
    return notKnown(
      `this is a container (/run/systemd/container: ${JSON.stringify(container.trim().slice(0, 40))}): its cgroup controllers are the container manager's delegation, not what kubelet would get on the server`,
    );
  const v2 = await host.readKernel('/sys/fs/cgroup/cgroup.controllers').catch(() => null);
  if (v2 !== null) return known({ version: 2, controllers: v2.split(/\s+/).filter((w) => w !== '') });
  const v1 = await host.readKernel('/proc/cgroups').catch(() => null);
  if (v1 === null) return notKnown('neither /sys/fs/cgroup/cgroup.controllers nor /proc/cgroups can be read');
  const controllers: string[] = [];
  for (const line of v1.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const parts = line.split(/\s+/).filter((w) => w !== '');
    if (parts.length >= 4 && parts[3] !== '0') controllers.push(parts[0]!);
  }
  return known({ version: 1, controllers });
}

/** Each program kubeadm looks up, in KUBEADM_PATH under the root. */
export async function lookUpPrograms(host: TargetHost): Promise<Map<string, Known<string | null>>> {
  const out = new Map<string, Known<string | null>>();
  for (const p of ALL_PROGRAMS) {
    const f = await commandFile(host, p, { PATH: KUBEADM_PATH });
    out.set(p, f.kind === 'file' ? known(f.path) : f.kind === 'missing' ? known(null) : notKnown(f.reason));
  }
  return out;
}

const fromFacts = <T>(facts: Facts | undefined, why: string, pick: (f: Facts) => T): Known<T> => (facts ? known(pick(facts)) : notKnown(why));

/** `facts`: kubespray's report's (undefined offline or when gathering failed); `kubeVersion`: kube_version as the node sees it. */
export async function acceptanceFacts(host: TargetHost, facts: Facts | undefined, kubeVersion: Known<string>): Promise<AcceptanceFacts> {
  const why = host.live ? 'the host facts could not be gathered (see the facts finding)' : `offline (--root ${host.root}): it is the running host's`;
  return {
    cpus: fromFacts(facts, why, (f) => f.processor_vcpus),
    memTotalMb: fromFacts(facts, why, (f) => f.memtotal_mb),
    kernelRelease: fromFacts(facts, why, (f) => f.kernel),
    cgroup: await readCgroups(host),
    programs: await lookUpPrograms(host),
    kubeVersion,
  };
}
