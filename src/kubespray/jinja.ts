// Jinja2 the way Ansible evaluates it, on nunjucks (a Jinja2 implementation
// for JavaScript) plus the Ansible filters and tests kubespray's preinstall
// and node roles use. Everything that decides a verdict goes through here:
// `when`, `that`, `failed_when`, `changed_when` and templated values.
//
// Undefined is never silently falsy. A name (or key) that is not defined
// becomes a Missing marker; using it for anything but `is defined`,
// `is undefined` or `default` leaves it on the evaluation's record and the
// result is `unknown`, naming what was missing. That is how Ansible behaves
// too: `when: not x` with x undefined is an error, not false.
import nunjucks from 'nunjucks';

// ---- the result of an evaluation -------------------------------------------

export type Eval<T> = { ok: true; value: T } | { ok: false; reason: string; runtime?: RuntimeValue };

export class JinjaUndefinedError extends Error {}

/** A value only known when Ansible runs: a registered result, say. */
export interface RuntimeValue {
  name: string;
  /** Where it is produced, e.g. "roles/x/tasks/main.yml:12 (register)". */
  origin: string;
}

/** Thrown by a resolver for a name whose value exists only at run time. */
export class RuntimeValueError extends Error {
  constructor(readonly value: RuntimeValue) {
    super(`${value.name} is only known at run time (${value.origin})`);
  }
}

/** Looks a top-level name up; undefined when it is not defined. */
export type Resolver = (name: string) => { value: unknown } | undefined;

// ---- Missing ----------------------------------------------------------------

const MISSING = Symbol('missing');
interface MissingInfo {
  path: string;
  parent: MissingInfo | null;
  absolved: boolean;
}

function missingInfo(v: unknown): MissingInfo | undefined {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return undefined;
  try {
    return (v as Record<symbol, MissingInfo | undefined>)[MISSING];
  } catch {
    return undefined;
  }
}

export function isMissing(v: unknown): boolean {
  return missingInfo(v) !== undefined;
}

function makeMissing(path: string, parent: MissingInfo | null): unknown {
  const info: MissingInfo = { path, parent, absolved: false };
  current()?.misses.push(info);
  const fail = (): never => {
    throw new JinjaUndefinedError(`'${path}' is undefined`);
  };
  // One marker per key: nunjucks reads a member twice (typeof check, then value).
  const children = new Map<string, unknown>();
  return new Proxy(Object.create(null) as object, {
    get(_t, key) {
      if (key === MISSING) return info;
      if (key === Symbol.toPrimitive || key === 'toString' || key === 'valueOf') return fail;
      if (typeof key === 'symbol' || key === 'then' || key === 'toJSON') return undefined;
      if (!children.has(key)) children.set(key, makeMissing(`${path}.${key}`, info));
      return children.get(key);
    },
    has: fail,
    ownKeys: fail,
  });
}

function absolve(v: unknown): boolean {
  let info = missingInfo(v);
  if (!info) return false;
  for (let i: MissingInfo | null = info; i; i = i.parent) i.absolved = true;
  return true;
}

// Data handed to templates: objects answer a missing key with a Missing marker.
const WRAPPED = new WeakMap<object, object>();
function wrap(v: unknown, path: string): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || isMissing(v)) return v;
  const cached = WRAPPED.get(v);
  if (cached) return cached;
  const misses = new Map<string, { state: EvalState | undefined; marker: unknown }>();
  const p = new Proxy(v, {
    get(t, key, recv) {
      if (typeof key === 'symbol' || key in t) {
        const got = Reflect.get(t, key, recv);
        return typeof key === 'string' && Object.hasOwn(t, key) ? wrap(got, `${path}['${key}']`) : got;
      }
      if (key === 'then' || key === 'toJSON') return undefined;
      // One marker per key and evaluation: nunjucks reads a member twice (typeof check, then value).
      const hit = misses.get(key);
      if (hit && hit.state === current()) return hit.marker;
      const marker = makeMissing(`${path}['${key}']`, null);
      misses.set(key, { state: current(), marker });
      return marker;
    },
  });
  WRAPPED.set(v, p);
  return p;
}

// ---- evaluation state (templates render synchronously, so a stack is enough) -

interface EvalState {
  resolver: Resolver;
  misses: MissingInfo[];
  outputs: unknown[];
  resolving: string[];
}
const stack: EvalState[] = [];
const current = (): EvalState | undefined => stack[stack.length - 1];

// ---- nunjucks set-up --------------------------------------------------------

type NunjucksInternals = typeof nunjucks & {
  runtime: Record<string, (...a: unknown[]) => unknown>;
  compiler: { Compiler: { prototype: Record<string, unknown> } };
  nodes: Record<string, new (...a: unknown[]) => ExprNode>;
  lexer: Record<string, string>;
  parser: { Parser: { prototype: Record<string, unknown> }; parse(src: string): { children: { typename: string; children?: { typename: string }[] }[] } };
  lib: { TemplateError: new (...a: unknown[]) => Error };
};
const nj = nunjucks as NunjucksInternals;

// Python-style members (.get, .items, .keys, True/False/None) as Jinja2 has them.
nj.installJinjaCompat();

// Python's str methods that templates call (x.startswith('v1'), x.split('.')).
const STR_METHODS: Record<string, (s: string, ...a: unknown[]) => unknown> = {
  startswith: (s, p) => (Array.isArray(p) ? p.some((x) => s.startsWith(String(x))) : s.startsWith(String(p))),
  endswith: (s, p) => (Array.isArray(p) ? p.some((x) => s.endsWith(String(x))) : s.endsWith(String(p))),
  strip: (s, c) => (c === undefined ? s.trim() : stripChars(s, String(c), true, true)),
  lstrip: (s, c) => (c === undefined ? s.trimStart() : stripChars(s, String(c), true, false)),
  rstrip: (s, c) => (c === undefined ? s.trimEnd() : stripChars(s, String(c), false, true)),
  lower: (s) => s.toLowerCase(),
  upper: (s) => s.toUpperCase(),
  split: (s, sep, max) => pySplit(s, sep === undefined || sep === null ? undefined : String(sep), max === undefined ? -1 : Number(max)),
  splitlines: (s) => s.split(/\r\n|\r|\n/).filter((l, i, all) => !(i === all.length - 1 && l === '')),
  replace: (s, a, b) => s.split(String(a)).join(String(b)),
  isdigit: (s) => /^\d+$/.test(s),
};

function stripChars(s: string, chars: string, left: boolean, right: boolean): string {
  let a = 0;
  let b = s.length;
  while (left && a < b && chars.includes(s[a]!)) a++;
  while (right && b > a && chars.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}

function pySplit(s: string, sep: string | undefined, max: number): string[] {
  if (sep === undefined) {
    const words = s.trim().split(/\s+/).filter(Boolean);
    return max < 0 || words.length <= max ? words : [...words.slice(0, max), s.trim().split(/\s+/).slice(max).join(' ')];
  }
  const parts = s.split(sep);
  return max < 0 || parts.length <= max + 1 ? parts : [...parts.slice(0, max), parts.slice(max).join(sep)];
}

const FORBIDDEN_MEMBERS = new Set(['constructor', '__proto__', 'prototype', '__defineGetter__', '__lookupGetter__']);
{
  const rt = nj.runtime;
  const memberLookup = rt.memberLookup!;
  // Kubespray trees are untrusted input: no way from a template to JS internals.
  rt.memberLookup = function (this: unknown, obj: unknown, key: unknown, ...rest: unknown[]) {
    if (typeof key === 'string' && FORBIDDEN_MEMBERS.has(key)) throw new Error(`access to ${key} is not allowed`);
    if (isMissing(obj)) return (obj as Record<string, unknown>)[String(key)];
    if (typeof obj === 'string' && typeof key === 'string' && Object.hasOwn(STR_METHODS, key)) return STR_METHODS[key]!.bind(null, obj);
    // dict.get must not see the Missing markers wrapped objects answer with.
    if (key === 'get' && obj && typeof obj === 'object' && !Array.isArray(obj)) {
      return (k: unknown, d: unknown = null) => (Object.hasOwn(obj, String(k)) ? (obj as Record<string, unknown>)[String(k)] : d);
    }
    return memberLookup.call(this, obj, key, ...rest);
  };
  const suppressValue = rt.suppressValue!;
  // Output keeps the native value (Ansible's single-expression templates return it) and prints like Python.
  rt.suppressValue = function (this: unknown, val: unknown, autoescape: unknown) {
    current()?.outputs.push(val);
    return suppressValue.call(this, pythonStr(val), autoescape);
  };
  // nunjucks 3.2.4 emits a test's arguments without commas, so `x is version('1.2', '>=')`
  // does not compile; emit them as a comma-separated list, as a call does.
  const proto = nj.compiler.Compiler.prototype as Record<string, unknown> & {
    _emit(s: string): void;
    compile(n: unknown, f: unknown): void;
    _compileAggregate(n: unknown, f: unknown, start: string, end: string): void;
  };
  proto.compileIs = function (this: typeof proto, node: { left: unknown; right: { name?: { value: string }; value?: string; args?: { children: unknown[] } } }, frame: unknown) {
    const right = node.right.name ? node.right.name.value : node.right.value;
    this._emit(`env.getTest(${JSON.stringify(right)}).call(context, `);
    this.compile(node.left, frame);
    if (node.right.args && node.right.args.children.length > 0) {
      this._emit(',');
      this._compileAggregate(node.right.args, frame, '', '');
    }
    this._emit(') === true');
  };

  // Jinja2 comparisons: Python equality ('1' != 1, [1] == [1]) and chains (1 < x < 3
  // is 1 < x and x < 3), where nunjucks emits JavaScript's == and a < b < c.
  proto.compileCompare = function (this: typeof proto, node: { expr: unknown; ops: { type: string; expr: unknown }[] }, frame: unknown) {
    this._emit('runtime.pyCompare([');
    this.compile(node.expr, frame);
    for (const op of node.ops) {
      this._emit(',');
      this.compile(op.expr, frame);
    }
    this._emit(`], ${JSON.stringify(node.ops.map((o) => o.type))})`);
  };
  rt.pyCompare = ((operands: unknown[], ops: string[]) => {
    for (let i = 0; i < ops.length; i++) if (!pyCompare(operands[i], ops[i]!, operands[i + 1])) return false;
    return true;
  }) as (...a: unknown[]) => unknown;

  // Jinja2 tests take one argument without parentheses (`x is divisibleby 2`), and
  // `none`, `true`, `false` are test names there, not literals.
  const lx = nj.lexer;
  const N = nj.nodes;
  const pp = nj.parser.Parser.prototype as Record<string, unknown> & {
    parseCompare(): ExprNode;
    parsePrimary(noPostfix?: boolean): ExprNode;
    parsePostfix(n: ExprNode): ExprNode;
    skipSymbol(s: string): boolean;
    nextToken(): { type: string; value: string; lineno: number; colno: number } | null;
    peekToken(): { type: string; value: string } | null;
    pushToken(t: unknown): void;
  };
  pp.parseIs = function (this: typeof pp) {
    let node = this.parseCompare();
    if (!this.skipSymbol('is')) return node;
    const not = this.skipSymbol('not');
    const tok = this.nextToken();
    if (!tok) throw new Error('expected a test name');
    let test: ExprNode;
    if (tok.type === lx.TOKEN_SYMBOL || tok.type === lx.TOKEN_NONE || tok.type === lx.TOKEN_BOOLEAN) {
      const name = new N.Symbol!(tok.lineno, tok.colno, tok.type === lx.TOKEN_SYMBOL ? tok.value : String(tok.value).toLowerCase());
      const next = this.peekToken();
      if (next?.type === lx.TOKEN_LEFT_PAREN) {
        test = this.parsePostfix(name);
      } else if (
        next &&
        [lx.TOKEN_SYMBOL, lx.TOKEN_STRING, lx.TOKEN_INT, lx.TOKEN_FLOAT, lx.TOKEN_LEFT_BRACKET, lx.TOKEN_LEFT_CURLY, lx.TOKEN_BOOLEAN, lx.TOKEN_NONE].includes(next.type) &&
        !(next.type === lx.TOKEN_SYMBOL && ['else', 'or', 'and', 'if', 'is', 'in', 'not'].includes(next.value))
      ) {
        const arg = this.parsePrimary();
        test = new N.FunCall!(tok.lineno, tok.colno, name, new N.NodeList!(tok.lineno, tok.colno, [arg]));
      } else test = name;
    } else {
      this.pushToken(tok);
      test = this.parseCompare();
    }
    node = new N.Is!(node.lineno, node.colno, node, test);
    return not ? new N.Not!(node.lineno, node.colno, node) : node;
  };
}

function pyEq(a: unknown, b: unknown): boolean {
  need(a, '==');
  need(b, '==');
  const num = (x: unknown) => typeof x === 'number' || typeof x === 'boolean';
  if (num(a) && num(b)) return Number(a) === Number(b);
  if (a === null || b === null || a === undefined || b === undefined) return a === b || (a == null && b == null);
  if (typeof a !== typeof b) return false;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => pyEq(x, b[i]));
  if (typeof a === 'object') {
    const ka = Object.keys(a as object);
    const kb = Object.keys(b as object);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b as object, k) && pyEq((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}

function pyOrder(a: unknown, b: unknown): number {
  need(a, 'comparison');
  need(b, 'comparison');
  const num = (x: unknown) => typeof x === 'number' || typeof x === 'boolean';
  if (num(a) && num(b)) return Number(a) - Number(b);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (!pyEq(a[i], b[i])) return pyOrder(a[i], b[i]);
    return a.length - b.length;
  }
  throw new TypeError(`'<' not supported between ${pyType(a)} and ${pyType(b)}`);
}

function pyType(v: unknown): string {
  return v === null ? 'NoneType' : Array.isArray(v) ? 'list' : typeof v === 'string' ? 'str' : typeof v === 'number' ? (Number.isInteger(v) ? 'int' : 'float') : typeof v === 'boolean' ? 'bool' : 'dict';
}

function pyCompare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case '==': case '===': return pyEq(a, b);
    case '!=': case '!==': return !pyEq(a, b);
    case '<': return pyOrder(a, b) < 0;
    case '<=': return pyOrder(a, b) <= 0;
    case '>': return pyOrder(a, b) > 0;
    case '>=': return pyOrder(a, b) >= 0;
    default: throw new Error(`unknown comparison ${op}`);
  }
}

/** str() of a value as Python would print it, for text output. */
export function pythonStr(v: unknown): unknown {
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (Array.isArray(v) || (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype)) return pythonRepr(v);
  return v;
}

function pythonRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (Array.isArray(v)) return `[${v.map(pythonRepr).join(', ')}]`;
  if (typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${pythonRepr(k)}: ${pythonRepr(x)}`).join(', ')}}`;
  return String(v);
}

const env = new nunjucks.Environment(null, { autoescape: false });

// Names come from the caller's resolver; nunjucks asks `name in globals` first.
const defaultGlobals = { ...(env as unknown as { globals: Record<string, unknown> }).globals };
(env as unknown as { globals: object }).globals = new Proxy(defaultGlobals, {
  has(t, name) {
    return typeof name === 'string' && (name in t || current() !== undefined);
  },
  get(t, name) {
    if (typeof name !== 'string') return undefined;
    const st = current();
    if (st) {
      if (st.resolving.includes(name)) throw new Error(`recursive loop detected in template for ${name}`);
      st.resolving.push(name);
      try {
        const r = st.resolver(name);
        if (r) return wrap(r.value, name);
      } catch (e) {
        if (e instanceof RuntimeValueError) lastRuntime = e;
        throw e;
      } finally {
        st.resolving.pop();
      }
    }
    if (name in t) return t[name];
    if (name === 'True') return true;
    if (name === 'False') return false;
    if (name === 'None') return null;
    return makeMissing(name, null);
  },
});

// ---- Ansible filters and tests ----------------------------------------------

function need(v: unknown, what: string): unknown {
  if (isMissing(v)) throw new JinjaUndefinedError(`'${missingInfo(v)!.path}' is undefined (${what})`);
  return v;
}

/** ansible.builtin.bool */
export function toBool(v: unknown): boolean {
  need(v, 'bool');
  if (typeof v === 'boolean') return v;
  if (v === null || v === undefined) return false;
  const s = String(v).toLowerCase().trim();
  return ['yes', 'on', '1', 'true', 'y', 't'].includes(s) || v === 1;
}

function toInt(v: unknown, dflt: unknown = 0, base: unknown = 10): number {
  need(v, 'int');
  if (typeof v === 'number') return Math.trunc(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  const s = String(v).trim();
  const n = Number(base) === 10 ? (/^[+-]?\d+$/.test(s) ? parseInt(s, 10) : /^[+-]?\d*\.\d+$/.test(s) ? Math.trunc(Number(s)) : NaN) : parseInt(s, Number(base));
  return Number.isNaN(n) ? Number(dflt) : n;
}

/** distutils LooseVersion components, as ansible's version test (loose) compares them. */
function looseParts(v: string): (number | string)[] {
  return v
    .split(/(\d+|[a-z]+|\.)/i)
    .filter((p) => p !== '' && p !== '.')
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

export function compareVersions(a: string, b: string): number {
  const x = looseParts(a);
  const y = looseParts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (i >= x.length) return -1;
    if (i >= y.length) return 1;
    const p = x[i]!;
    const q = y[i]!;
    if (p === q) continue;
    if (typeof p === typeof q) return p < q ? -1 : 1;
    // Python 3 cannot order int and str; ansible reports an error.
    throw new Error(`cannot compare versions ${a} and ${b}`);
  }
  return 0;
}

function versionTest(value: unknown, version: unknown, operator: unknown = 'eq'): boolean {
  need(value, 'version');
  need(version, 'version');
  const c = compareVersions(String(value), String(version));
  switch (String(operator)) {
    case '==': case '=': case 'eq': return c === 0;
    case '!=': case '<>': case 'ne': return c !== 0;
    case '<': case 'lt': return c < 0;
    case '<=': case 'le': return c <= 0;
    case '>': case 'gt': return c > 0;
    case '>=': case 'ge': return c >= 0;
    default: throw new Error(`invalid version operator ${String(operator)}`);
  }
}

function defaultFilter(v: unknown, dflt: unknown = '', boolean: unknown = false): unknown {
  if (absolve(v) || v === undefined) return dflt;
  if (boolean === true && !v) return dflt;
  return v;
}

function iterable(v: unknown, what: string): unknown[] {
  need(v, what);
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return [...v];
  if (v && typeof v === 'object') return Object.keys(v);
  throw new Error(`${what}: not iterable`);
}

function attr(o: unknown, path: string): unknown {
  let x = o;
  for (const k of path.split('.')) x = x && typeof x === 'object' ? (x as Record<string, unknown>)[k] : undefined;
  return x;
}

function callTest(name: string, v: unknown, args: unknown[]): boolean {
  const t = (env as unknown as { getTest(n: string): (...a: unknown[]) => unknown }).getTest(name);
  return t.call(null, v, ...args) === true;
}

function kwargs(args: unknown[]): { pos: unknown[]; kw: Record<string, unknown> } {
  const last = args[args.length - 1] as Record<string, unknown> | undefined;
  if (last && typeof last === 'object' && (last as { __keywords?: boolean }).__keywords) {
    const { __keywords, ...kw } = last;
    void __keywords;
    return { pos: args.slice(0, -1), kw };
  }
  return { pos: args, kw: {} };
}

const FILTERS: Record<string, (...a: unknown[]) => unknown> = {
  bool: (v) => toBool(v),
  int: (v, d, b) => toInt(v, d, b),
  float: (v) => Number(need(v, 'float')),
  string: (v) => String(pythonStr(need(v, 'string'))),
  default: defaultFilter,
  d: defaultFilter,
  mandatory: (v) => need(v, 'mandatory'),
  length: (v) => iterable(v, 'length').length,
  count: (v) => iterable(v, 'count').length,
  list: (v) => [...iterable(v, 'list')],
  unique: (v) => [...new Set(iterable(v, 'unique'))],
  union: (a, b) => [...new Set([...iterable(a, 'union'), ...iterable(b, 'union')])],
  intersect: (a, b) => iterable(a, 'intersect').filter((x) => iterable(b, 'intersect').includes(x)),
  difference: (a, b) => iterable(a, 'difference').filter((x) => !iterable(b, 'difference').includes(x)),
  flatten: (v) => iterable(v, 'flatten').flat(Infinity),
  ternary: (v, yes, no) => (need(v, 'ternary') ? yes : no),
  version_compare: versionTest,
  to_json: (v) => JSON.stringify(need(v, 'to_json')),
  dict2items: (v) => Object.entries(need(v, 'dict2items') as object).map(([key, value]) => ({ key, value })),
  items2dict: (v) => Object.fromEntries(iterable(v, 'items2dict').map((x) => [attr(x, 'key'), attr(x, 'value')])),
  map: (v, ...args) => {
    const xs = iterable(v, 'map');
    const { pos, kw } = kwargs(args);
    if (typeof kw.attribute === 'string') return xs.map((x) => attr(x, kw.attribute as string) ?? kw.default);
    const f = (env as unknown as { getFilter(n: string): (...a: unknown[]) => unknown }).getFilter(String(pos[0]));
    return xs.map((x) => f(x, ...pos.slice(1)));
  },
  select: (v, test = 'truthy', ...args) => iterable(v, 'select').filter((x) => (test === 'truthy' ? !!x : callTest(String(test), x, args))),
  reject: (v, test = 'truthy', ...args) => iterable(v, 'reject').filter((x) => !(test === 'truthy' ? !!x : callTest(String(test), x, args))),
  selectattr: (v, a, test, ...args) =>
    iterable(v, 'selectattr').filter((x) => (test === undefined ? !!attr(x, String(a)) : callTest(String(test), attr(x, String(a)), args))),
  rejectattr: (v, a, test, ...args) =>
    iterable(v, 'rejectattr').filter((x) => !(test === undefined ? !!attr(x, String(a)) : callTest(String(test), attr(x, String(a)), args))),
  regex_replace: (v, re, rep = '') => String(need(v, 'regex_replace')).replace(new RegExp(String(re), 'g'), String(rep).replace(/\\(\d)/g, '$$$1')),
  regex_search: (v, re) => new RegExp(String(re)).exec(String(need(v, 'regex_search')))?.[0] ?? null,
  basename: (v) => String(need(v, 'basename')).split('/').pop(),
  dirname: (v) => String(need(v, 'dirname')).replace(/\/[^/]*$/, ''),
};
for (const [name, f] of Object.entries(FILTERS)) env.addFilter(name, f as (...a: unknown[]) => unknown);

const TESTS: Record<string, (...a: unknown[]) => boolean> = {
  defined: (v) => !absolve(v) && v !== undefined,
  undefined: (v) => absolve(v) || v === undefined,
  none: (v) => need(v, 'none') === null,
  version: (v, ver, op) => versionTest(v, ver, op),
  version_compare: (v, ver, op) => versionTest(v, ver, op),
  in: (v, seq) => iterable(seq, 'in').includes(need(v, 'in')),
  contains: (seq, v) => iterable(seq, 'contains').includes(need(v, 'contains')),
  subset: (a, b) => iterable(a, 'subset').every((x) => iterable(b, 'subset').includes(x)),
  superset: (a, b) => iterable(b, 'superset').every((x) => iterable(a, 'superset').includes(x)),
  match: (v, re) => new RegExp(`^(?:${String(re)})`).test(String(need(v, 'match'))),
  search: (v, re) => new RegExp(String(re)).test(String(need(v, 'search'))),
  regex: (v, re) => new RegExp(String(re)).test(String(need(v, 'regex'))),
  string: (v) => typeof need(v, 'string') === 'string',
  number: (v) => typeof need(v, 'number') === 'number',
  boolean: (v) => typeof need(v, 'boolean') === 'boolean',
  truthy: (v) => !!need(v, 'truthy'),
  falsy: (v) => !need(v, 'falsy'),
};
for (const [name, f] of Object.entries(TESTS)) (env as unknown as { addTest(n: string, f: unknown): void }).addTest(name, f);

// ---- entry points -------------------------------------------------------------

const compiled = new Map<string, nunjucks.Template>();
function template(src: string): nunjucks.Template {
  let t = compiled.get(src);
  if (!t) {
    t = new nunjucks.Template(src, env, undefined, true);
    compiled.set(src, t);
  }
  return t;
}

function message(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  // nunjucks prefixes "(unknown path)" and wraps the cause in "Error: ...".
  return m.replace(/^\(unknown path\)\s*(\[Line \d+, Column \d+\]\s*)?/, '').replace(/^\s*(Template render error: )?/, '').replace(/\n\s*/g, ' ').replace(/^(\w*Error): /, '').trim();
}

function runtimeCause(e: unknown): RuntimeValueError | undefined {
  for (let x: unknown = e, i = 0; x && i < 5; x = (x as { cause?: unknown }).cause, i++) {
    if (x instanceof RuntimeValueError) return x;
  }
  const m = e instanceof Error ? e.message : '';
  const hit = lastRuntime && m.includes(lastRuntime.message) ? lastRuntime : undefined;
  return hit;
}
let lastRuntime: RuntimeValueError | undefined;

function run<T>(resolver: Resolver, fn: (st: EvalState) => T): Eval<T> {
  const outer = current();
  const st: EvalState = { resolver, misses: [], outputs: [], resolving: outer ? outer.resolving : [] };
  stack.push(st);
  try {
    const value = fn(st);
    const unused = st.misses.filter((m) => !m.absolved && !st.misses.some((c) => c.parent === m && c.absolved));
    if (unused.length > 0) return { ok: false, reason: `'${unused[0]!.path}' is undefined` };
    if (outer) outer.misses.push(...st.misses.filter((m) => !m.absolved));
    return { ok: true, value };
  } catch (e) {
    const rt = runtimeCause(e);
    return rt ? { ok: false, reason: rt.message, runtime: rt.value } : { ok: false, reason: message(e) };
  } finally {
    stack.pop();
  }
}

/** True when a value has Jinja2 template syntax. */
export function isTemplate(v: unknown): v is string {
  return typeof v === 'string' && (v.includes('{{') || v.includes('{%'));
}

/** Whether a template string is exactly one {{ expression }} (Ansible then keeps its native type). */
function singleExpression(src: string): boolean {
  try {
    const root = nj.parser.parse(src);
    if (root.children.length !== 1) return false;
    const out = root.children[0]!;
    return out.typename === 'Output' && out.children?.length === 1 && out.children[0]!.typename !== 'TemplateData';
  } catch {
    return false;
  }
}

/**
 * Templates a value as Ansible does: strings with {{ }} are rendered, a
 * string that is one expression keeps the expression's type, lists and maps
 * are templated item by item.
 */
export function templateValue(value: unknown, resolver: Resolver): Eval<unknown> {
  return run(resolver, () => templateInner(value));
}

function templateInner(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(templateInner);
  if (value && typeof value === 'object' && !isMissing(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, templateInner(v)]));
  }
  if (!isTemplate(value)) return value;
  const st = current()!;
  const before = st.outputs.length;
  const text = template(value).render({});
  const outs = st.outputs.splice(before);
  if (singleExpression(value) && outs.length === 1) {
    const v = outs[0];
    need(v, 'template');
    return v;
  }
  return text;
}

/**
 * A conditional (`when`, `that`, `failed_when`, ...) the way Ansible's
 * Conditional evaluates one: a bare expression inside {% if %}, after
 * templating it when it still holds {{ }} (old style). Booleans and None pass
 * through as Ansible's literal forms.
 */
export function evaluateCondition(cond: unknown, resolver: Resolver): Eval<boolean> {
  if (typeof cond === 'boolean') return { ok: true, value: cond };
  if (cond === null || cond === undefined || cond === '') return { ok: true, value: true };
  return run(resolver, () => {
    let expr = String(cond);
    if (isTemplate(expr)) {
      const t = templateInner(expr);
      if (typeof t === 'boolean') return t;
      expr = String(pythonStr(t));
    }
    const out = template(`{% if ${expr} %}True{% else %}False{% endif %}`).render({});
    return out === 'True';
  });
}

/** A bare expression's native value (the right side of `x >= minimal_master_memory_mb`, say). */
export function evaluateExpression(expr: string, resolver: Resolver): Eval<unknown> {
  return run(resolver, () => templateInner(`{{ ${expr} }}`));
}

// ---- reading expressions with the grammar --------------------------------------

export interface ExprNode {
  typename: string;
  [k: string]: unknown;
}

/** The parsed expression of a condition, or null when it does not parse. */
export function parseExpression(expr: string): ExprNode | null {
  try {
    const root = nj.parser.parse(`{{ ${expr} }}`) as unknown as { children: { children: ExprNode[] }[] };
    return root.children[0]?.children[0] ?? null;
  } catch {
    return null;
  }
}

/** Child nodes of a nunjucks AST node. */
export function childNodes(n: ExprNode): ExprNode[] {
  const out: ExprNode[] = [];
  for (const [k, v] of Object.entries(n)) {
    if (k === 'typename' || k === 'parent') continue;
    if (Array.isArray(v)) for (const x of v) if (x && typeof x === 'object' && 'typename' in x) out.push(x as ExprNode);
    if (v && typeof v === 'object' && 'typename' in (v as object)) out.push(v as ExprNode);
  }
  return out;
}
