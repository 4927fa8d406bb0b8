// The proxy kubeadm's HTTPProxy checks see: kubeadm's process environment, which under kubespray is the
// play's `environment:` (kubespray's plays set `proxy_disable_env`, every proxy variable empty) over the
// SSH session's (pam_env reads /etc/environment at login). Go's net/http reads HTTPS_PROXY, then
// https_proxy, and NO_PROXY, then no_proxy, and takes an empty value as unset
// (golang.org/x/net/http/httpproxy FromEnvironment, getEnvAny). Pure.

/** One NAME=VALUE of /etc/environment, with its line. */
export interface EnvLine {
  name: string;
  value: string;
  line: number;
}

/**
 * /etc/environment as pam_env reads it (environment(5): simple NAME=VALUE pairs on separate lines, `#`
 * comments; pam_env skips a leading `export ` and strips one pair of matching quotes). A line that is none
 * of these sets nothing.
 */
export function readEnvironmentFile(text: string): EnvLine[] {
  const out: EnvLine[] = [];
  text.split('\n').forEach((raw, i) => {
    let l = raw.trim();
    if (l === '' || l.startsWith('#')) return;
    if (l.startsWith('export ')) l = l.slice('export '.length).trimStart();
    const eq = l.indexOf('=');
    if (eq <= 0) return;
    const name = l.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return;
    let value = l.slice(eq + 1);
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0]) value = value.slice(1, -1);
    out.push({ name, value, line: i + 1 });
  });
  return out;
}

/** A variable kubeadm's process has, and where it comes from. */
export interface EnvValue {
  value: string;
  where: string;
}

/** Go's getEnvAny: the first of `names` with a non-empty value. */
export function firstSet(env: ReadonlyMap<string, EnvValue>, names: readonly string[]): EnvValue | null {
  for (const n of names) {
    const v = env.get(n);
    if (v !== undefined && v.value !== '') return v;
  }
  return null;
}

export const HTTPS_PROXY_VARS = ['HTTPS_PROXY', 'https_proxy'] as const;
export const NO_PROXY_VARS = ['NO_PROXY', 'no_proxy'] as const;

/**
 * kubeadm's environment: the session's variables (from /etc/environment) with the play's on top (Ansible sets
 * a task's environment over the login shell's; a variable set to '' stays, and Go takes it as unset).
 */
export function kubeadmEnvironment(session: EnvLine[], sessionFile: string, play: Record<string, unknown> | null, playWhere: string): Map<string, EnvValue> {
  const env = new Map<string, EnvValue>();
  for (const l of session) env.set(l.name, { value: l.value, where: `${sessionFile}:${l.line}` });
  for (const [name, value] of Object.entries(play ?? {}))
    env.set(name, { value: value === null || value === undefined ? '' : String(value), where: playWhere });
  return env;
}
