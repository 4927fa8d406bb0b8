// WireGuard's wg-quick runs its configuration's PreUp and PostUp snippets
// when wg-quick@NAME.service starts at boot (`wg-quick up %i`), each with
// bash's eval after "%i" becomes the interface name: a `sysctl -w` there is a
// boot-time writer like an rc.local line. The reading follows wg-quick's own
// parse_options (wireguard-tools 1.0.20210914, Debian 12 and 13): NAME of
// [a-zA-Z0-9_=+.-]{1,15} is /etc/wireguard/NAME.conf; each line loses
// everything from its first "#"; the key is what precedes the first "=", the
// value what follows it, both without surrounding blanks; keys and the
// "[Interface]" header match case-insensitively, and a key starting with "["
// starts another section. Pure.

/** A snippet wg-quick runs on `up`, with its line in the configuration. */
export interface WgUpHook {
  line: number;
  /** As written: PreUp or PostUp, in the file's own case. */
  key: string;
  /** The snippet with "%i" replaced by the interface name, as execute_hooks evals it. */
  script: string;
}

/** wg-quick's test of an interface name (parse_options). */
const INTERFACE_NAME = /^[a-zA-Z0-9_=+.-]{1,15}$/;

/** The configuration `wg-quick up NAME` reads, or null when NAME is no interface name (wg-quick then takes it as a path). */
export function wgConfigFile(instance: string): string | null {
  return INTERFACE_NAME.test(instance) ? `/etc/wireguard/${instance}.conf` : null;
}

/** bash's [[:space:]] in the C locale wg-quick's unit runs in. */
const trimBlanks = (s: string): string => s.replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, '');

/** The PreUp and PostUp snippets of a wg-quick configuration, in the order wg-quick runs them (every PreUp before every PostUp). */
export function wgQuickUpHooks(text: string, iface: string): WgUpHook[] {
  const pre: WgUpHook[] = [];
  const post: WgUpHook[] = [];
  let inInterface = false;
  const lines = text.split('\n');
  // `read -r line || [[ -n $line ]]`: a last line without "\n" is read too; the empty piece after a final "\n" is not a line.
  if (lines.at(-1) === '') lines.pop();
  for (const [i, raw] of lines.entries()) {
    const stripped = raw.split('#')[0]!;
    const eq = stripped.indexOf('=');
    const key = trimBlanks(eq < 0 ? stripped : stripped.slice(0, eq));
    const value = trimBlanks(eq < 0 ? stripped : stripped.slice(eq + 1));
    if (key.startsWith('[')) inInterface = key.toLowerCase() === '[interface]';
    if (!inInterface) continue;
    const hook = { line: i + 1, key, script: value.split('%i').join(iface) };
    if (key.toLowerCase() === 'preup') pre.push(hook);
    else if (key.toLowerCase() === 'postup') post.push(hook);
  }
  return [...pre, ...post];
}
