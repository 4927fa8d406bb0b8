// Port holders in a per-user manager (user@UID.service): whose manager it is,
// whether that user lingers (logind starts the manager at boot), how root
// reaches it (`systemctl --user -M USER@`), and what in that user's unit tree
// would start the holder again once `systemctl --user disable` has removed
// its links (those live under ~/.config/systemd/user).
import path from 'node:path';
import type { TargetFs } from '../host.js';
import { linksRemovedBy, readConfigLinks, type ConfigLink } from '../systemd/unit-links.js';
import { loadUnitGraph, userUnitPath } from '../systemd/unit-loader.js';
import { comebackOf, type Comeback } from './stays-free.js';

export interface UserAccount {
  name: string;
  uid: number;
  home: string;
  /** /var/lib/systemd/linger/NAME exists: the manager runs from boot, without a login. */
  lingers: boolean;
}

/** /etc/passwd lines: name, UID and home of each account. Pure. */
export function parsePasswdAccounts(text: string): { name: string; uid: number; home: string }[] {
  const out: { name: string; uid: number; home: string }[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const f = line.split(':');
    const uid = Number(f[2]);
    if (f.length >= 7 && f[0] && f[2] !== '' && Number.isInteger(uid) && f[5]?.startsWith('/')) out.push({ name: f[0], uid, home: f[5] });
  }
  return out;
}

/** The UID of a user manager unit: 1000 for user@1000.service; null for any other name. */
export function userManagerUid(unit: string): number | null {
  const m = /^user@(\d+)\.service$/.exec(unit);
  return m ? Number(m[1]) : null;
}

export const LINGER_DIR = '/var/lib/systemd/linger';

/** The account whose manager `uid` is, read from /etc/passwd, with its linger state; null when no line names the UID. */
export async function accountOf(host: TargetFs, uid: number): Promise<UserAccount | null> {
  const a = parsePasswdAccounts((await host.readFile('/etc/passwd')) ?? '').find((x) => x.uid === uid);
  if (!a) return null;
  return { ...a, lingers: await host.exists(path.posix.join(LINGER_DIR, a.name)) };
}

/** systemctl's arguments to talk to `user`'s manager as root. */
export function userScope(user: string): string[] {
  return ['--user', '-M', `${user}@`];
}

/** The directory `systemctl --user enable/disable/mask` changes. */
export function userConfigDir(home: string): string {
  return path.posix.join(home, '.config/systemd/user');
}

/** Every symlink with a unit name under the user's ~/.config/systemd/user, recursively. */
export async function userConfigLinks(host: TargetFs, home: string): Promise<ConfigLink[]> {
  return readConfigLinks(host, userConfigDir(home));
}

/** Every symlink under the user's config dir with its raw text: what `systemctl --user disable|mask` changes. */
export async function userLinkSnapshot(host: TargetFs, home: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const l of await userConfigLinks(host, home)) {
    const text = await host.readLink(l.path);
    if (text !== null) out.set(l.path, text);
  }
  return out;
}

/**
 * What in the user's unit tree would still start a unit of `group` once
 * `systemctl --user disable GROUP` removed its links, plus, as a fact for the
 * message, when that manager runs at all: at boot when the user lingers,
 * else from the user's next login.
 */
export async function userComeback(host: TargetFs, account: UserAccount, group: string[]): Promise<Comeback> {
  const removed = linksRemovedBy(await userConfigLinks(host, account.home), new Set(group));
  const graph = await loadUnitGraph(host, { dirs: userUnitPath(account.home), without: new Set(removed), names: group });
  return comebackOf(graph, group);
}

/** "alice lingers (/var/lib/systemd/linger/alice): her manager starts at boot" and the opposite. */
export function lingerSentence(a: UserAccount): string {
  const file = path.posix.join(LINGER_DIR, a.name);
  return a.lingers
    ? `${a.name} lingers (${file} exists), so ${a.name}'s manager (user@${a.uid}.service) starts at boot`
    : `${a.name} does not linger (no ${file}), so ${a.name}'s manager (user@${a.uid}.service) starts only when ${a.name} logs in`;
}
