// JSON Schema validation (ajv) of the parsed document, with ajv's errors
// turned into one plain sentence per key. Defaults from the schema are
// filled in here, so the rest of the program sees complete specs.
// The validator is ajv standalone code generated from the schema when the
// bundle is built (scripts/build/desired-state-validator.mjs): no run
// compiles the schema, and ajv's compiler is not in dist/.
import type { ErrorObject } from 'ajv';
import validate from 'virtual:desired-state-validator';

export interface SchemaViolation {
  /** JSON pointer segments into the document. */
  pointer: string[];
  /** Human path, e.g. "resources[2].ports[0]". */
  path: string;
  message: string;
  /** Point at the key itself (an unknown key) rather than its value. */
  atKey: boolean;
}

/** Validates and fills defaults in place. Returns every violation, one per key. */
export function validateAgainstSchema(data: unknown): SchemaViolation[] {
  if (data === null || data === undefined) {
    return [{ pointer: [], path: '', message: 'the document is empty; expected a mapping with reports_dir and resources', atKey: false }];
  }
  if (validate(data)) return [];
  const byPath = new Map<string, SchemaViolation>();
  for (const e of validate.errors ?? []) {
    const v = toViolation(e);
    if (!v) continue;
    const key = `${v.path}\u0000${v.atKey}`;
    const prev = byPath.get(key);
    // One message per key: a custom x-message beats ajv's generic ones.
    if (!prev || hasCustomMessage(e)) byPath.set(key, v);
  }
  return [...byPath.values()];
}

function hasCustomMessage(e: ErrorObject): boolean {
  return typeof (e.parentSchema as Record<string, unknown> | undefined)?.['x-message'] === 'string';
}

function toViolation(e: ErrorObject): SchemaViolation | null {
  // "must match then schema" only repeats the errors of the branch itself.
  if (e.keyword === 'if') return null;
  // Branch failures inside anyOf are summarised by the anyOf error itself.
  if (e.schemaPath.includes('/anyOf/')) return null;
  const pointer = e.instancePath.split('/').slice(1).map(unescapePointer);
  const custom = (e.parentSchema as Record<string, unknown> | undefined)?.['x-message'];
  const p = e.params as Record<string, unknown>;
  const valueKeywords = ['type', 'minimum', 'maximum', 'pattern', 'minLength', 'maxLength'];
  if (typeof custom === 'string' && valueKeywords.includes(e.keyword) && e.propertyName === undefined) {
    return { pointer, path: humanPath(pointer), message: custom, atKey: false };
  }
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(p.additionalProperty);
      const allowed = Object.keys((e.parentSchema as { properties?: object }).properties ?? {});
      return {
        pointer: [...pointer, key],
        path: humanPath([...pointer, key]),
        message: `unknown key${allowed.length ? ` (allowed: ${allowed.join(', ')})` : ''}`,
        atKey: true,
      };
    }
    case 'required':
      return { pointer, path: humanPath(pointer), message: `missing required key "${String(p.missingProperty)}"`, atKey: false };
    case 'enum':
      return {
        pointer,
        path: humanPath(pointer),
        message: `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
        atKey: false,
      };
    case 'const':
      return null; // the discriminating `type` is reported by its enum
    case 'propertyNames':
      return null; // reported by the nested pattern error on the name itself
    case 'pattern':
      if (e.propertyName !== undefined) {
        return { pointer: [...pointer, e.propertyName], path: humanPath([...pointer, e.propertyName]), message: 'is not a valid key name', atKey: true };
      }
      break;
    case 'type': {
      const t = String(p.type);
      return { pointer, path: humanPath(pointer), message: `must be ${/^[aeiou]/.test(t) ? 'an' : 'a'} ${t}`, atKey: false };
    }
    case 'anyOf':
      return { pointer, path: humanPath(pointer), message: describeAnyOf(e), atKey: false };
  }
  const message = typeof custom === 'string' ? custom : `${e.message ?? 'is invalid'}`;
  return { pointer, path: humanPath(pointer), message, atKey: false };
}

function describeAnyOf(e: ErrorObject): string {
  const branches = (e.schema as Array<{ type?: string }>).map((s) => s.type).filter(Boolean);
  return `must be ${branches.map((t) => (t === 'integer' ? 'an integer' : `a ${t}`)).join(' or ')}`;
}

function unescapePointer(s: string): string {
  return s.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** ["resources","2","ports","0"] -> "resources[2].ports[0]" */
export function humanPath(pointer: string[]): string {
  let out = '';
  for (const seg of pointer) {
    if (/^\d+$/.test(seg)) out += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}
