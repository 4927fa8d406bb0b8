// Port holders in a per-user manager (user@UID.service): whose manager it is,
// whether that user lingers (logind starts the manager at boot), how root
// reaches it (`systemctl --user -M USER@` over the user's D-Bus session bus;
// on hosts without one, no dbus-user-session, systemctl run as that user on
// the manager's own private socket), and what in that user's unit tree
// would start the holder again once `systemctl --user disable` has removed
// its links (those live under ~/.config/systemd/user).
import path from 'node:path';
import type { TargetFs } from '../host.js';
import { linksRemovedBy, readConfigLinks, type ConfigLink } from '../systemd/unit-links.js';
import { loadUnitGraph } from '../systemd/unit-loader.js';
import { userConfigDir, userUnitPath } from '../systemd/unit-dirs.js';
import { comebackOf, type Comeback } from './stays-free.js';
import type { Systemctl } from '../systemd/systemctl-show.js';

export interface UserAccount {
  name: string;
  uid: number;
  /** The primary group (/etc/passwd's fourth field). */
  gid: number;
  home: string;
  /** /var/lib/systemd/linger/NAME exists: the manager runs from boot, without a login. */
  lingers: boolean;
}

/** /etc/passwd lines: name, UID and home of each account. Pure. */
export function parsePasswdAccounts(text: string): { name: string; uid: number; gid: number; home: string }[] {
  const out: { name: string; uid: number; gid: number; home: string }[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const f = line.split(':');
    const uid = Number(f[2]);
    const gid = Number(f[3]);
    if (f.length >= 7 && f[0] && f[2] !== '' && f[3] !== '' && Number.isInteger(uid) && uid >= 0 && Number.isInteger(gid) && gid >= 0 && f[5]?.startsWith('/'))
      out.push({ name: f[0], uid, gid, home: f[5] });
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

/**
 * How root reaches a user's manager. `bus`: `systemctl --user -M USER@`,
 * through the system bus to the user's session bus ($XDG_RUNTIME_DIR/bus,
 * which only dbus-user-session provides). `private`: systemctl run as that
 * user (UID, GID and its groups) with XDG_RUNTIME_DIR=/run/user/UID, which
 * talks to the manager's own socket $XDG_RUNTIME_DIR/systemd/private; only the
 * user herself may connect there, so it is asked as her, never as root.
 */
export type UserRoute = 'bus' | 'private';

/** `systemctl --user -M USER@`: the user's manager through the user's session bus. */
export function busSystemctl(name: string): Systemctl {
  return { cmd: 'systemctl', args: ['--user', '-M', `${name}@`] };
}

/** What a route needs to know of the user. */
export interface UserManagerRef {
  name: string;
  uid: number;
  gid: number;
  home: string;
  route: UserRoute;
}

export function runtimeDir(uid: number): string {
  return `/run/user/${uid}`;
}

/** systemctl through `u`'s route, as an argument array (never a shell string). */
export function userSystemctl(u: UserManagerRef): Systemctl {
  if (u.route === 'bus') return busSystemctl(u.name);
  const env = [`HOME=${u.home}`, `XDG_RUNTIME_DIR=${runtimeDir(u.uid)}`, 'PATH=/usr/sbin:/usr/bin:/sbin:/bin'];
  return { cmd: 'setpriv', args: [`--reuid=${u.uid}`, `--regid=${u.gid}`, '--init-groups', 'env', '-i', ...env, 'systemctl', '--user'] };
}

/**
 * The route to `uid`'s manager: the manager's private socket when there is no
 * session bus socket (/run/user/UID/bus) and the private socket is there,
 * owned by UID (a socket of another owner is not that user's manager's);
 * else the bus, whose own error then says why it cannot be reached.
 */
export async function userRouteOf(host: TargetFs, uid: number): Promise<UserRoute> {
  const bus = await host.lstat(path.posix.join(runtimeDir(uid), 'bus'));
  if (bus?.isSocket()) return 'bus';
  const own = await host.lstat(path.posix.join(runtimeDir(uid), 'systemd/private'));
  return own?.isSocket() && own.uid === uid ? 'private' : 'bus';
}

/** "systemctl --user -M alice@" or "systemctl --user as alice on /run/user/1000/systemd/private", for plans. */
export function describeRoute(u: UserManagerRef): string {
  return u.route === 'bus'
    ? `systemctl --user -M ${u.name}@`
    : `systemctl --user run as ${u.name} on ${u.name}'s manager socket ${runtimeDir(u.uid)}/systemd/private (no user D-Bus)`;
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
