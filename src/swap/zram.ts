// zram-generator configuration (zram-generator.conf(5)): each [zramN] section
// makes the generator create /dev/zramN and, unless it is given a mount point
// or a non-swap fs-type, a dev-zramN.swap unit wanted by swap.target. Masking
// swap.target keeps those from being pulled in, so this is reported, not edited.
import type { TargetFs } from '../host.js';
import { firstDirWins, listConfDirs } from '../systemd/conf-dirs.js';

/** Main files in precedence order: the first that exists is used (/etc overrides /run overrides /usr). */
const MAIN_FILES = [
  '/etc/systemd/zram-generator.conf',
  '/run/systemd/zram-generator.conf',
  '/usr/local/lib/systemd/zram-generator.conf',
  '/usr/lib/systemd/zram-generator.conf',
];

export interface ZramDevice {
  /** Section name, e.g. "zram0". */
  device: string;
  /** File that defines (or last changes) the section. */
  file: string;
  /** True when the device becomes swap (no mount-point, fs-type absent or "swap"). */
  swap: boolean;
}

/** Sections of one zram-generator file: device -> keys. */
export function parseZramConfig(text: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  let cur: Map<string, string> | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const sec = /^\[(.+)\]$/.exec(line);
    if (sec) {
      const name = sec[1]!.trim();
      cur = out.get(name) ?? new Map();
      out.set(name, cur);
      continue;
    }
    const kv = /^([^=]+?)\s*=\s*(.*)$/.exec(line);
    if (kv && cur) cur.set(kv[1]!, kv[2]!);
  }
  return out;
}

/** Devices the generator would create at boot, merging the main file and .conf.d drop-ins. */
export async function readZramDevices(host: TargetFs): Promise<ZramDevice[]> {
  const files: string[] = [];
  for (const f of MAIN_FILES) {
    const st = await host.lstat(f);
    if (!st) continue;
    // An /etc file that is empty or links to /dev/null disables the vendor default.
    if ((await host.readLink(f)) !== '/dev/null') files.push(f);
    break;
  }
  // Drop-ins from all directories, same-name /etc first, then sorted by name.
  const dropins = (
    await listConfDirs(
      host,
      MAIN_FILES.map((f) => `${f}.d`),
    )
  ).filter((e) => e.name.endsWith('.conf'));
  for (const { path: p } of firstDirWins(dropins, (e) => e.name)) {
    if ((await host.readLink(p)) !== '/dev/null') files.push(p);
  }
  const merged = new Map<string, { file: string; keys: Map<string, string> }>();
  for (const f of files) {
    for (const [dev, keys] of parseZramConfig((await host.readFile(f)) ?? '')) {
      if (!/^zram\d+$/.test(dev)) continue;
      const prev = merged.get(dev);
      merged.set(dev, { file: f, keys: new Map([...(prev?.keys ?? []), ...keys]) });
    }
  }
  return [...merged.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([device, { file, keys }]) => ({
      device,
      file,
      swap: !keys.has('mount-point') && (keys.get('fs-type') ?? 'swap') === 'swap',
    }));
}
