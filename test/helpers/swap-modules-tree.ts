// The small offline tree the CLI suite and the fleet playbook suite both run
// against (`--root`): a Debian fstab with one swap file, and a desired state
// with SwapOff and ModulesLoad. first_boot is off: the tree stands in for a
// host, not an image to prepare for a first boot (test/resources/first-boot/provider.test.ts
// bakes with first boot on).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const FSTAB = [
  '# /etc/fstab: static file system information.',
  'UUID=0a1b2c3d-1111-2222-3333-444455556666 /               ext4    errors=remount-ro 0       1',
  '/swapfile\tnone\tswap\tsw\t0\t0',
  'tmpfs /tmp tmpfs defaults 0 0',
  '',
].join('\n');

export const DESIRED = `reports_dir: /root/ks/preflight
resources:
  - type: SwapOff
  - type: ModulesLoad
    modules: [overlay, br_netfilter]
first_boot: off
`;

/** A fresh temporary `work` with `work/desired.yaml` and the tree `root` (= work/root: etc/fstab, etc/systemd/system). */
export function swapModulesTree(prefix: string): { work: string; root: string } {
  const work = mkdtempSync(path.join(tmpdir(), prefix));
  const root = path.join(work, 'root');
  mkdirSync(path.join(root, 'etc/systemd/system'), { recursive: true });
  writeFileSync(path.join(root, 'etc/fstab'), FSTAB);
  writeFileSync(path.join(work, 'desired.yaml'), DESIRED);
  return { work, root };
}
