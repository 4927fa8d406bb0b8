// Credentials in what the tool shows. A file the tool rewrites or shows
// (/etc/fstab above all: a CIFS mount's `password=` and `credentials=`
// options) reaches the plan document, plan.json and result.json, the text
// plan and its diffs. Every such value is replaced by SENSITIVE before it
// gets there, and the change is marked `redacted: true`, as Terraform marks a
// sensitive value. The write door and the journal keep the exact bytes:
// apply writes them and rollback restores them (in runs/<id>/, 0600 files in
// a 0700 directory). Pure.
//
// A credential is a `key=value` or `key: value` whose key (case-insensitive)
// is one of EXACT_KEYS or contains one of KEY_PARTS, or a URL's user:password@.
// docs/safety.md ("Secrets in what the tool shows") lists the same words.

/** What a redacted value or line shows instead. */
export const SENSITIVE = '(sensitive value)';

/** Keys that are a credential only as the whole key (`pass=x`, not `passno=` or `compass=`). */
export const EXACT_KEYS: readonly string[] = ['pass', 'pwd', 'cred', 'psk'];

/** Keys that are a credential when they contain one of these (`smbpassword=`, `client_secret=`, `access_token=`, `secretfile=`). */
export const KEY_PARTS: readonly string[] = [
  'password',
  'passwd',
  'passphrase',
  'credential', // credentials= (mount.cifs), credential=
  'secret', // secret= and secretfile= (ceph)
  'token',
  'apikey',
  'api_key',
  'api-key',
  'private_key',
  'private-key',
];

// A key and its separator, the value not consumed: a key inside another's value (`username=u,password=x`) is found too.
// A key starts a line or follows a blank, a list or query separator, a bracket or a quote, never a path's "/":
// in "/etc/sysctl.d/50-secret.conf: permission denied" the file name is no key.
const KEY_VALUE = /(^|[\s,;({["'?&])([A-Za-z0-9_.-]+)["']?[ \t]*[=:][ \t]*(?=[^\s,;])/g;
const USERINFO = /([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/\s:@]*:)([^@\s/]+)(@)/g;

export function sensitiveKey(key: string): boolean {
  const k = key.toLowerCase();
  return EXACT_KEYS.includes(k) || KEY_PARTS.some((p) => k.includes(p));
}

/** Where each credential's value starts in `line` (after its `key=`). */
function secretValues(line: string): number[] {
  const starts: number[] = [];
  for (const m of line.matchAll(KEY_VALUE)) if (sensitiveKey(m[2]!)) starts.push(m.index + m[0].length);
  return starts;
}

/** Whether one line holds a credential. */
export function holdsSecret(line: string): boolean {
  USERINFO.lastIndex = 0;
  return USERINFO.test(line) || secretValues(line).length > 0;
}

/** One line with each credential's value replaced; a value runs to the next blank (an escaped `,,` inside it is covered). */
export function redactValues(line: string): string {
  let out = '';
  let at = 0;
  for (const start of secretValues(line)) {
    if (start < at) continue; // inside a value already hidden
    const end = line.slice(start).search(/\s/);
    out += line.slice(at, start) + SENSITIVE;
    at = end < 0 ? line.length : start + end;
  }
  out += line.slice(at);
  return out.replace(USERINFO, (_all, head: string, _pw: string, tail: string) => `${head}${SENSITIVE}${tail}`);
}

/** fstab(5)'s files: the mount options are the fourth field, the credentials' only place besides a URL in the first. */
const isFstab = (path: string): boolean => /(^|\/)fstab$/.test(path) || /\/fstab\.d\/[^/]+$/.test(path);

/**
 * One line of `path` that holds a credential, redacted; `mark` names what is
 * hidden (the same text always the same mark within one change, so a diff of
 * two redacted texts still shows which lines changed). An fstab entry keeps
 * its device, mount point, type, dump and pass fields and hides its whole
 * options field (fields are blank-separated, blanks inside escaped as \040,
 * so the field is exact); any other line, a comment included, is hidden whole.
 */
function redactLine(path: string, line: string, mark: (hidden: string) => string): string {
  const cr = line.endsWith('\r') ? '\r' : '';
  const body = cr ? line.slice(0, -1) : line;
  if (isFstab(path) && !/^\s*#/.test(body)) {
    const fields = [...body.matchAll(/\S+/g)];
    if (fields.length >= 4) {
      let out = body;
      // Right to left, so earlier offsets stay valid.
      for (const i of [3, 0]) {
        const f = fields[i]!;
        const shown = i === 3 ? mark(f[0]) : redactValues(f[0]);
        out = out.slice(0, f.index) + shown + out.slice(f.index! + f[0].length);
      }
      if (!holdsSecret(out)) return out + cr;
    }
  }
  return mark(body) + cr;
}

/**
 * A file's before and after text as a document shows them: every line that
 * holds a credential redacted, the others exactly as they are. What is
 * hidden is numbered across both texts, `(sensitive value 1)`, the same
 * hidden text the same number: a line that changed shows as changed.
 */
export function redactFileTexts(
  path: string,
  texts: { before: string | null; after: string | null },
): { before: string | null; after: string | null; redacted: boolean } {
  const seen = new Map<string, number>();
  const mark = (hidden: string): string => {
    if (!seen.has(hidden)) seen.set(hidden, seen.size + 1);
    return `(sensitive value ${seen.get(hidden)})`;
  };
  const one = (text: string | null): string | null => {
    if (text === null) return null;
    const lines = text.split('\n');
    if (!lines.some(holdsSecret)) return text;
    return lines.map((l) => (holdsSecret(l) ? redactLine(path, l, mark) : l)).join('\n');
  };
  const before = one(texts.before);
  const after = one(texts.after);
  return { before, after, redacted: seen.size > 0 };
}

/** Any string of a document (a finding, a note, a failure's message), each credential's value redacted. */
export function redactString(s: string): string {
  return s
    .split('\n')
    .map((l) => (holdsSecret(l) ? redactValues(l) : l))
    .join('\n');
}

/** Every string in a JSON value redacted (object keys are the tool's own and stay). */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redactString(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v);
    return out as T;
  }
  return value;
}
