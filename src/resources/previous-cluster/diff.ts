// PreviousCluster's plan under policy reset, pure: each node unit stopped (live) and disabled (live through
// systemctl, offline its links), its admin unit files set aside, each directory a former node leaves moved
// aside; what only a running system can undo and the door cannot (CRI pods, mounts, CNI interfaces) is an
// operator line with the exact command.
import type { Change } from '../types.js';
import { asideName } from '../../door/journal-records.js';
import type { ResetDir } from '../../former-node/reset-targets.js';
import type { PreviousClusterObserved, ObservedUnit } from './observe.js';
import type { PreviousClusterOp } from './ops.js';
import { humanBytes } from './ops.js';
import { kubeChainCommands } from '../../former-node/kube-chains.js';
import { kubeNftCommands } from '../../former-node/kube-nft-tables.js';
import { absentPromise, PROMISED_UNITS, unitDownPromise } from './promises.js';

type C = Change<PreviousClusterOp>;
const UP = new Set(['active', 'activating', 'reloading', 'refreshing', 'deactivating']);
const asideOf = (p: string) => asideName(p, '<run id>');

function operator(id: string, summary: string, reason: string, withdraws: C['withdraws'] = []): C {
  return { id, action: 'operator', summary, operator: reason, op: { kind: 'operator' }, withdraws };
}

const promisedUnit = (u: string) => (PROMISED_UNITS as readonly string[]).includes(u);

function unitChanges(o: PreviousClusterObserved, u: ObservedUnit): C[] {
  const out: C[] = [];
  if (o.live && u.active !== null && UP.has(u.active))
    out.push({ id: `stop-${u.unit}`, action: 'stop', runtime: true, summary: `stop ${u.unit} (${u.active}; ${u.file})`, op: { kind: 'stop', unit: u.unit } });
  if (u.links.length > 0)
    out.push(
      o.live
        ? {
            id: `disable-${u.unit}`,
            action: 'disable',
            runtime: true,
            summary: `disable ${u.unit}: remove ${u.links.join(', ')}`,
            op: { kind: 'disable', unit: u.unit },
          }
        : {
            id: `disable-${u.unit}`,
            action: 'disable',
            summary: `disable ${u.unit} in the image: remove ${u.links.join(', ')}`,
            op: { kind: 'disable-links', unit: u.unit, links: u.links },
          },
    );
  // A mask already keeps a vendor link from starting the unit: nothing to ask for.
  if (u.vendorLinks.length > 0 && !u.masked)
    out.push(
      operator(
        `vendor-${u.unit}`,
        `${u.unit} is enabled by vendor links (${u.vendorLinks.join(', ')}) that disable cannot remove`,
        `mask it: systemctl${o.live ? '' : ' --root ROOT'} mask ${u.unit}`,
        promisedUnit(u.unit) ? [{ promise: unitDownPromise(u.unit), from: 'boot' }] : [],
      ),
    );
  for (const f of u.files)
    out.push({
      id: `aside-${f}`,
      action: 'move',
      summary: `move ${u.unit}'s ${f.endsWith('.d') ? 'drop-ins' : 'unit file'} ${f} aside to ${asideOf(f)}`,
      op: { kind: 'aside', path: f, unitFile: true },
    });
  return out;
}

/** Whether the door moves `d` aside; else its line is an operator's (a link, not a directory, mounts below it, a package's files in it). */
export function movedByReset(d: ResetDir): boolean {
  return d.kind === 'dir' && d.mounts.length === 0 && d.packageFiles.length === 0;
}

function dirChange(d: ResetDir): C {
  const withdraws = [{ promise: absentPromise(d.path), from: 'apply' as const }];
  if (d.kind === 'link')
    return operator(
      `aside-${d.path}`,
      `${d.path} is a symbolic link to ${d.link}`,
      `the door moves no link: move its target aside by hand, then remove the link (rm ${d.path})`,
      withdraws,
    );
  if (d.kind === 'other')
    return operator(`aside-${d.path}`, `${d.path} is not a directory`, `look at it and move it aside by hand (mv ${d.path} ${d.path}.old)`, withdraws);
  if (d.mounts.length > 0)
    return operator(
      `aside-${d.path}`,
      `${d.path} has file systems mounted below it (${d.mounts.join(', ')}); a rename would carry them along`,
      `unmount them, then apply again: ${[...d.mounts]
        .reverse()
        .map((m) => `umount ${m}`)
        .join('; ')}`,
      withdraws,
    );
  if (d.packageFiles.length > 0)
    return operator(
      `aside-${d.path}`,
      `${d.path} holds files of Debian packages (${d.packageFiles.map((f) => `${f.path} of ${f.package}`).join(', ')}); moving it aside would take them from their packages`,
      `move aside by hand only the files the former node left there, keeping the packages' own (the directory is not moved)`,
      withdraws,
    );
  const size = `${d.files} file${d.files === 1 ? '' : 's'}, ${humanBytes(d.bytes)}${d.partial ? ' at least (not walked to the end)' : ''}`;
  return {
    id: `aside-${d.path}`,
    action: 'move',
    summary: `move ${d.path} aside to ${asideOf(d.path)} (${size})`,
    op: { kind: 'aside', path: d.path, unitFile: false },
  };
}

/** Live: what the door does not undo, left to a person with the exact command. */
function liveOperatorLines(o: PreviousClusterObserved): C[] {
  if (!o.live) return [];
  const out: C[] = [];
  const sandboxes = o.evidence.find((e) => e.path.endsWith('/io.containerd.grpc.v1.cri/sandboxes'));
  if (sandboxes)
    out.push(
      operator(
        'cri-pods',
        `pods of the former node may still run (${sandboxes.path})`,
        'stop and remove every CRI pod and its containers (this tool cannot undo it, so it does not): crictl rmp --all --force',
      ),
    );
  const nets = o.evidence.filter((e) => e.path.startsWith('/sys/class/net/')).map((e) => e.path.slice('/sys/class/net/'.length));
  if (nets.length > 0)
    out.push(
      operator(
        'cni-interfaces',
        `network interfaces a CNI plugin or kube-proxy made: ${nets.join(', ')}`,
        `delete them (not undone by --rollback): ${nets.map((n) => `ip link delete ${n}`).join('; ')}`,
      ),
    );
  for (const c of o.chains) {
    if (!('chains' in c)) continue;
    const commands = kubeChainCommands(c.program, c.chains);
    if (commands.length > 0)
      out.push(
        operator(
          `${c.program}-chains`,
          `${c.program} chains kube-proxy or a CNI plugin made: ${[...c.chains.chains].map(([t, n]) => `${n.join(', ')} (${t})`).join('; ')}`,
          `remove them and the rules that jump to them, leaving every other rule (not undone by --rollback): ${commands.join('; ')}`,
        ),
      );
  }
  const nft = o.nftTables !== null && 'tables' in o.nftTables ? o.nftTables.tables : [];
  if (nft.length > 0)
    out.push(
      operator(
        'nft-tables',
        `nftables tables kube-proxy's nftables mode made: ${nft.map((t) => `${t.family} ${t.name}`).join(', ')}`,
        `delete them with everything in them, leaving every other table (not undone by --rollback; kubespray's reset.yml does not remove them): ${kubeNftCommands(nft).join('; ')}`,
      ),
    );
  return out;
}

export function diffPreviousCluster(o: PreviousClusterObserved): C[] {
  if (o.policy === 'report') return [];
  const units = o.units.flatMap((u) => unitChanges(o, u));
  // Stops first, then disables, then the unit files: the manager is asked about a unit while its file is there.
  const order = (c: C) => (c.op.kind === 'stop' ? 0 : c.op.kind === 'disable' || c.op.kind === 'disable-links' ? 1 : 2);
  return [...units.sort((a, b) => order(a) - order(b)), ...o.dirs.map(dirChange), ...liveOperatorLines(o)];
}
