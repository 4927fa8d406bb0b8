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
import { isIPv6 } from 'node:net';
import nunjucks from 'nunjucks';
import {
  NotModelled,
  ipaddr,
  ipwrap,
  pyExpand,
  pyFindall,
  pyJsonDumps,
  pyRegex,
  pyReplace,
  pySplit,
  pySplitlines,
  pyStrip,
  pySub,
  pyUnicodeEscape,
} from './python.js';
import { parseAnsibleYaml } from './yaml11.js';

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

const LOOKUP_GLOBALS: ReadonlySet<string> = new Set(['lookup', 'query', 'q']);

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

// String literals as Jinja2 reads them (jinja2.lexer: the body between the quotes
// through Python's unicode-escape codec), where nunjucks keeps only \n \t \r and
// drops every other backslash. Ansible's Templar first doubles the backslashes of
// string literals inside {{ }} when the template has both '{{' and a backslash
// (ansible.template._escape_backslashes), so there the literal keeps its
// backslashes as written: regex_replace('^v([0-9])+', 'v\\1') sees \1.
{
  type Tok = { type: string; value: string };
  const sample = (nj.lexer as unknown as { lex(src: string, o: object): object }).lex('', {});
  const tk = Object.getPrototypeOf(sample) as Record<string, unknown> & {
    nextToken(): Tok | null;
  };
  const lx0 = nj.lexer as unknown as Record<string, string>;
  const nextToken = tk.nextToken;
  type Self = { str: string; inVar?: boolean; isFinished(): boolean; current(): string; forward(): void };
  tk.nextToken = function (this: Self) {
    const t = nextToken.call(this);
    if (t?.type === lx0.TOKEN_VARIABLE_START) this.inVar = true;
    else if (t?.type === lx0.TOKEN_VARIABLE_END || t?.type === lx0.TOKEN_BLOCK_START) this.inVar = false;
    return t;
  };
  tk._parseString = function (this: Self, delimiter: string): string {
    this.forward();
    let raw = '';
    let escapedQuote = false;
    while (!this.isFinished() && this.current() !== delimiter) {
      const c = this.current();
      raw += c;
      this.forward();
      if (c === '\\' && !this.isFinished()) {
        if (this.current() === delimiter) escapedQuote = true;
        raw += this.current();
        this.forward();
      }
    }
    if (this.isFinished()) throw new SyntaxError('unexpected end of string');
    this.forward();
    raw = raw.replace(/\r\n|\r|\n/g, '\n');
    if (this.inVar && this.str.includes('{{') && this.str.includes('\\')) {
      // Doubled, a \' no longer escapes the quote: Jinja2 would split the literal there.
      if (escapedQuote) throw new NotModelled('a quote escaped with a backslash inside {{ }}: Ansible doubles the backslash and the literal ends there');
      return raw;
    }
    return pyUnicodeEscape(raw);
  };
}

// Python's str methods that templates call (x.startswith('v1'), x.split('.')).
const STR_METHODS: Record<string, (s: string, ...a: unknown[]) => unknown> = {
  startswith: (s, p) => (Array.isArray(p) ? p.some((x) => s.startsWith(String(x))) : s.startsWith(String(p))),
  endswith: (s, p) => (Array.isArray(p) ? p.some((x) => s.endsWith(String(x))) : s.endsWith(String(p))),
  strip: (s, c) => pyStrip(s, c === undefined || c === null ? undefined : String(c), true, true),
  lstrip: (s, c) => pyStrip(s, c === undefined || c === null ? undefined : String(c), true, false),
  rstrip: (s, c) => pyStrip(s, c === undefined || c === null ? undefined : String(c), false, true),
  lower: (s) => s.toLowerCase(),
  upper: (s) => s.toUpperCase(),
  split: (s, sep, max) => pySplit(s, sep === undefined || sep === null ? undefined : String(sep), max === undefined ? -1 : Number(max)),
  splitlines: (s) => pySplitlines(s),
  replace: (s, a, b, n) => pyReplace(s, String(a), String(b), n === undefined ? -1 : Number(n)),
  isdigit: (s) => /^\d+$/.test(s),
};

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
  const callWrap = rt.callWrap as (...a: unknown[]) => unknown;
  // d.keys() on an undefined d: Jinja2 says the name is undefined, not that a member is no function.
  rt.callWrap = function (this: unknown, obj: unknown, ...rest: unknown[]) {
    const miss = missingInfo(obj);
    // lookup()/query()/q() are Ansible's globals: plugins run on the controller (env, file, pipe, ...), not modelled.
    if (miss && !miss.parent && LOOKUP_GLOBALS.has(miss.path)) {
      const args = Array.isArray(rest[2]) ? (rest[2] as unknown[]) : [];
      miss.absolved = true;
      throw new NotModelled(
        `${miss.path}(${args.length > 0 ? JSON.stringify(args[0]) : ''}, ...): an Ansible lookup plugin runs on the controller; not modelled`,
      );
    }
    if (miss) throw new JinjaUndefinedError(`'${miss.parent?.path ?? miss.path}' is undefined`);
    return callWrap.call(this, obj, ...rest);
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
  proto.compileIs = function (
    this: typeof proto,
    node: { left: unknown; right: { name?: { value: string }; value?: string; args?: { children: unknown[] } } },
    frame: unknown,
  ) {
    const right = node.right.name ? node.right.name.value : node.right.value;
    this._emit(`env.getTest(${JSON.stringify(right)}).call(context, `);
    this.compile(node.left, frame);
    if (node.right.args && node.right.args.children.length > 0) {
      this._emit(',');
      this._compileAggregate(node.right.args, frame, '', '');
    }
    this._emit(') === true');
  };

  // Python truth (an empty list or dict is false) for if, not, and, or and
  // inline if, where nunjucks emits JavaScript's: `when: []` is false in Ansible.
  const P = proto as typeof proto & { _emitLine(s: string): void; _withScopedSyntax(f: () => void): void; _compileExpression(n: unknown, f: unknown): void };
  P.compileIf = function (this: typeof P, node: { cond: unknown; body: unknown; else_: unknown }, frame: unknown, async?: boolean) {
    this._emit('if(runtime.pyTruth(');
    this._compileExpression(node.cond, frame);
    this._emitLine(')) {');
    this._withScopedSyntax(() => {
      this.compile(node.body, frame);
      if (async) this._emit('cb()');
    });
    if (node.else_ || async) {
      this._emitLine('}\nelse {');
      this._withScopedSyntax(() => {
        if (node.else_) this.compile(node.else_, frame);
        if (async) this._emit('cb()');
      });
    }
    this._emitLine('}');
  };
  P.compileNot = function (this: typeof P, node: { target: unknown }, frame: unknown) {
    this._emit('!runtime.pyTruth(');
    this.compile(node.target, frame);
    this._emit(')');
  };
  P.compileInlineIf = function (this: typeof P, node: { cond: unknown; body: unknown; else_: unknown }, frame: unknown) {
    this._emit('(runtime.pyTruth(');
    this.compile(node.cond, frame);
    this._emit(')?');
    this.compile(node.body, frame);
    this._emit(':');
    if (node.else_ !== null) this.compile(node.else_, frame);
    else this._emit('""');
    this._emit(')');
  };
  for (const [name, fn] of [
    ['compileAnd', 'pyAnd'],
    ['compileOr', 'pyOr'],
  ] as const) {
    P[name] = function (this: typeof P, node: { left: unknown; right: unknown }, frame: unknown) {
      this._emit(`runtime.${fn}(`);
      this.compile(node.left, frame);
      this._emit(', () => (');
      this.compile(node.right, frame);
      this._emit('))');
    };
  }
  rt.pyTruth = ((v: unknown) => pyTruth(v)) as (...a: unknown[]) => unknown;
  rt.pyAnd = ((a: unknown, b: () => unknown) => (pyTruth(a) ? b() : a)) as (...a: unknown[]) => unknown;
  rt.pyOr = ((a: unknown, b: () => unknown) => (pyTruth(a) ? a : b())) as (...a: unknown[]) => unknown;
  // `x in y` as Python: a substring, an equal item, a key.
  rt.inOperator = ((key: unknown, seq: unknown) => pyIn(key, seq)) as (...a: unknown[]) => unknown;

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
  // Jinja2's parse_condexpr: the else branch is itself a conditional expression,
  // so `'a' if x else 'b' if y else 'c'` parses (nunjucks stops after the first else).
  const ppi = pp as typeof pp & { parseOr(): ExprNode; parseInlineIf(): ExprNode };
  ppi.parseInlineIf = function (this: typeof ppi): ExprNode {
    let node = this.parseOr();
    while (this.skipSymbol('if')) {
      const cond = this.parseOr();
      const body = node;
      node = new N.InlineIf!(body.lineno, body.colno);
      node.body = body;
      node.cond = cond;
      node.else_ = this.skipSymbol('else') ? this.parseInlineIf() : null;
    }
    return node;
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
        [lx.TOKEN_SYMBOL, lx.TOKEN_STRING, lx.TOKEN_INT, lx.TOKEN_FLOAT, lx.TOKEN_LEFT_BRACKET, lx.TOKEN_LEFT_CURLY, lx.TOKEN_BOOLEAN, lx.TOKEN_NONE].includes(
          next.type,
        ) &&
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

/** Python's bool(): empty strings, lists and dicts are false. Undefined is an error, as in Ansible. */
export function pyTruth(v: unknown): boolean {
  need(v, '');
  if (Array.isArray(v)) return v.length > 0;
  if (v && typeof v === 'object') return Object.keys(v).length > 0;
  return !!v;
}

/** Python's `x in seq`. */
function pyIn(x: unknown, seq: unknown): boolean {
  need(seq, '');
  need(x, '');
  if (typeof seq === 'string') {
    if (typeof x !== 'string') throw new TypeError(`'in <string>' requires string as left operand, not ${pyType(x)}`);
    return seq.includes(x);
  }
  if (Array.isArray(seq)) return seq.some((e) => pyEq(e, x));
  if (seq && typeof seq === 'object') {
    if (x !== null && typeof x === 'object') throw new TypeError(`unhashable type: '${pyType(x)}'`);
    return Object.keys(seq).some((k) => pyEq(k, x));
  }
  throw new TypeError(`argument of type '${pyType(seq)}' is not iterable`);
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
    return (
      ka.length === kb.length && ka.every((k) => Object.hasOwn(b as object, k) && pyEq((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    );
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

/** The Python type name ansible-core would print for a value loaded from YAML. */
export function pyType(v: unknown): string {
  return v === null
    ? 'NoneType'
    : Array.isArray(v)
      ? 'list'
      : typeof v === 'string'
        ? 'str'
        : typeof v === 'number'
          ? Number.isInteger(v)
            ? 'int'
            : 'float'
          : typeof v === 'boolean'
            ? 'bool'
            : 'dict';
}

function pyCompare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case '==':
    case '===':
      return pyEq(a, b);
    case '!=':
    case '!==':
      return !pyEq(a, b);
    case '<':
      return pyOrder(a, b) < 0;
    case '<=':
      return pyOrder(a, b) <= 0;
    case '>':
      return pyOrder(a, b) > 0;
    case '>=':
      return pyOrder(a, b) >= 0;
    default:
      throw new Error(`unknown comparison ${op}`);
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
  if (typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${pythonRepr(k)}: ${pythonRepr(x)}`)
      .join(', ')}}`;
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
  if (isMissing(v)) throw new JinjaUndefinedError(`'${missingInfo(v)!.path}' is undefined${what ? ` (${what})` : ''}`);
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
  const n =
    Number(base) === 10 ? (/^[+-]?\d+$/.test(s) ? parseInt(s, 10) : /^[+-]?\d*\.\d+$/.test(s) ? Math.trunc(Number(s)) : NaN) : parseInt(s, Number(base));
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
    case '==':
    case '=':
    case 'eq':
      return c === 0;
    case '!=':
    case '<>':
    case 'ne':
      return c !== 0;
    case '<':
    case 'lt':
      return c < 0;
    case '<=':
    case 'le':
      return c <= 0;
    case '>':
    case 'gt':
      return c > 0;
    case '>=':
    case 'ge':
      return c >= 0;
    default:
      throw new Error(`invalid version operator ${String(operator)}`);
  }
}

function defaultFilter(v: unknown, dflt: unknown = '', boolean: unknown = false): unknown {
  if (absolve(v) || v === undefined) return dflt;
  if (boolean === true && !pyTruth(v)) return dflt;
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
  if (last && typeof last === 'object' && Object.hasOwn(last, '__keywords') && (last as { __keywords?: boolean }).__keywords === true) {
    const { __keywords, ...kw } = last;
    void __keywords;
    return { pos: args.slice(0, -1), kw };
  }
  return { pos: args, kw: {} };
}

/** Python's str() of a value. */
function pyStr(v: unknown): string {
  need(v, 'str');
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf';
  return String(pythonStr(v));
}

function regexOpts(kw: Record<string, unknown>): { ignorecase: boolean; multiline: boolean } {
  return { ignorecase: kw.ignorecase === true, multiline: kw.multiline === true };
}

/** Jinja2's sort key: strings compare case-insensitively unless case_sensitive. */
function sortKey(x: unknown, caseSensitive: boolean): unknown {
  return !caseSensitive && typeof x === 'string' ? x.toLowerCase() : x;
}

/** Jinja2 do_unique (Ansible's unique calls it): first of each, case-insensitive by default. */
function uniqueOf(xs: unknown[], caseSensitive: boolean, attribute?: string): unknown[] {
  const out: unknown[] = [];
  const seen: unknown[] = [];
  for (const x of xs) {
    const k = sortKey(attribute ? attr(x, attribute) : x, caseSensitive);
    if (!seen.some((s) => pyEq(s, k))) {
      seen.push(k);
      out.push(x);
    }
  }
  return out;
}

/** ansible's combine: later dicts win; recursive merges nested dicts; list_merge as documented. */
function combine(...args: unknown[]): unknown {
  const { pos, kw } = kwargs(args);
  const unknownKw = Object.keys(kw).filter((k) => k !== 'recursive' && k !== 'list_merge');
  if (unknownKw.length > 0) throw new Error(`'${unknownKw[0]}' is an invalid keyword argument for combine`);
  const recursive = kw.recursive === true;
  const listMerge = String(kw.list_merge ?? 'replace');
  if (!['replace', 'keep', 'append', 'prepend'].includes(listMerge)) throw new NotModelled(`combine list_merge=${listMerge} is not modelled`);
  const dicts = pos
    .flatMap((d) => (Array.isArray(d) ? d : [d]))
    .map((d) => {
      need(d, 'combine');
      if (!d || typeof d !== 'object' || Array.isArray(d)) throw new Error(`failed to combine variables, expected dicts but got a '${pyType(d)}'`);
      return d as Record<string, unknown>;
    });
  const merge = (a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...a };
    for (const [k, v] of Object.entries(b)) {
      const old = out[k];
      if (recursive && old && v && typeof old === 'object' && typeof v === 'object' && !Array.isArray(old) && !Array.isArray(v))
        out[k] = merge(old as Record<string, unknown>, v as Record<string, unknown>);
      else if (Array.isArray(old) && Array.isArray(v) && listMerge !== 'replace')
        out[k] = listMerge === 'keep' ? old : listMerge === 'append' ? [...old, ...v] : [...v, ...old];
      else out[k] = v;
    }
    return out;
  };
  return dicts.reduce((acc, d) => merge(acc, d), {} as Record<string, unknown>);
}

function b64decode(v: unknown): string {
  const s = pyStr(v);
  const clean = s.replace(/[^A-Za-z0-9+/=]/g, '');
  if (clean.replace(/=+$/, '').length % 4 === 1) throw new Error('Invalid base64-encoded string');
  const bytes = Buffer.from(clean, 'base64');
  const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  return text;
}

function indent(v: unknown, ...args: unknown[]): string {
  const { pos, kw } = kwargs(args);
  const width = kw.width ?? pos[0] ?? 4;
  const first = kw.first ?? pos[1] ?? false;
  const blank = kw.blank ?? pos[2] ?? false;
  const pad = typeof width === 'string' ? width : ' '.repeat(Number(width));
  // jinja2 3.1 do_indent, its trailing-newline quirk included.
  const lines = pySplitlines(pyStr(v) + '\n');
  let rv: string;
  if (pyTruth(blank)) rv = lines.join('\n' + pad);
  else {
    const [head = '', ...rest] = lines;
    rv = head + (rest.length > 0 ? '\n' + rest.map((l) => (l ? pad + l : l)).join('\n') : '');
  }
  return pyTruth(first) ? pad + rv : rv;
}

function sortFilter(v: unknown, ...args: unknown[]): unknown[] {
  const { pos, kw } = kwargs(args);
  const reverse = pyTruth(kw.reverse ?? pos[0] ?? false);
  const cs = pyTruth(kw.case_sensitive ?? pos[1] ?? false);
  const attribute = (kw.attribute ?? pos[2]) as string | undefined;
  const xs = [...iterable(v, 'sort')];
  const key = (x: unknown) => sortKey(attribute !== undefined && attribute !== null ? attr(x, String(attribute)) : x, cs);
  // Python's sort is stable; reverse=True keeps equal items in their order too.
  const sorted = xs.map((x, i) => ({ x, i })).sort((a, b) => pyOrder(key(a.x), key(b.x)) * (reverse ? -1 : 1) || a.i - b.i);
  return sorted.map((e) => e.x);
}

function joinFilter(v: unknown, d: unknown = '', attribute?: unknown): string {
  const xs = iterable(v, 'join');
  return xs.map((x) => pyStr(attribute !== undefined && attribute !== null ? attr(x, String(attribute)) : x)).join(pyStr(d));
}

function firstLast(v: unknown, last: boolean): unknown {
  const xs = iterable(v, last ? 'last' : 'first');
  if (xs.length === 0) return makeMissing(`(${last ? 'last' : 'first'} of an empty sequence)`, null);
  return last ? xs[xs.length - 1] : xs[0];
}

function minMax(v: unknown, max: boolean, ...args: unknown[]): unknown {
  const { kw } = kwargs(args);
  if (Object.keys(kw).length > 0) throw new NotModelled(`${max ? 'max' : 'min'} with arguments is not modelled`);
  const xs = iterable(v, max ? 'max' : 'min');
  if (xs.length === 0) throw new Error(`${max ? 'max' : 'min'}() arg is an empty sequence`);
  return xs.reduce((a, b) => (max ? (pyOrder(b, a) > 0 ? b : a) : pyOrder(b, a) < 0 ? b : a));
}

function regexSearch(v: unknown, re: unknown, ...args: unknown[]): unknown {
  const { pos, kw } = kwargs(args);
  const m = pyRegex(pyStr(re), regexOpts(kw)).exec(pyStr(v));
  if (pos.length === 0) return m ? m[0] : null;
  const groups = pos.map((g) => {
    const x = /^\\(?:g<(\w+)>|(\d+))$/.exec(String(g));
    if (!x) throw new Error(`Unknown argument ${String(g)}`);
    return x[1] ?? x[2]!;
  });
  if (!m) return null;
  return groups.map((g) => pyExpand(/^\d+$/.test(g) ? `\\${g}` : `\\g<${g}>`, m));
}

// Filters Ansible ships (Jinja2's and ansible-core's) that decide nothing here or
// cannot be computed the same way: named so the reason is clear, never guessed.
const NOT_MODELLED_FILTERS = [
  'attr',
  'batch',
  'center',
  'dictsort',
  'e',
  'escape',
  'filesizeformat',
  'forceescape',
  'format',
  'groupby',
  'pprint',
  'random',
  'slice',
  'striptags',
  'title',
  'tojson',
  'truncate',
  'urlencode',
  'urlize',
  'wordwrap',
  'xmlattr',
  'checksum',
  'comment',
  'expanduser',
  'expandvars',
  'fileglob',
  'hash',
  'human_readable',
  'human_to_bytes',
  'password_hash',
  'realpath',
  'relpath',
  'shuffle',
  'strftime',
  'subelements',
  'to_datetime',
  'to_nice_yaml',
  'to_uuid',
  'to_yaml',
  'unvault',
  'vault',
  'urlsplit',
  'urldecode',
  'log',
  'pow',
  'root',
  'symmetric_difference',
  'zip',
  'zip_longest',
  'from_yaml_all',
  'md5',
  'sha1',
  'regex_escape',
  'path_join',
  'splitext',
  'win_basename',
  'win_dirname',
  'win_splitdrive',
  'to_nice_json',
];
// Filters from collections outside ansible-core (ansible.utils, community.general): not modelled.
const COLLECTION_FILTERS = [
  'ansible.utils.ipv4',
  'ansible.utils.ipv6',
  'ansible.utils.fact_diff',
  'ansible.netcommon.ipaddr',
  'ipv4',
  'ipv6',
  'json_query',
  'community.general.json_query',
  'fact_diff',
];

const FILTERS: Record<string, (...a: unknown[]) => unknown> = {
  // Python's type name. A string's depends on where it came from (AnsibleUnicode
  // read from YAML, str from a template, AnsibleUnsafeText from a module) and a
  // whole number's on whether Python held 1 or 1.0, a sequence's and a mapping's
  // on what made it (list, tuple, dict_keys; dict, HostVars): all untold by a JS value.
  type_debug: (v) => {
    need(v, 'type_debug');
    if (v === null) return 'NoneType';
    if (typeof v === 'boolean') return 'bool';
    if (typeof v === 'number' && !Number.isInteger(v)) return 'float';
    if (Array.isArray(v)) throw new NotModelled('type_debug of a sequence (list, tuple, dict_keys, ...) is not modelled');
    if (v && typeof v === 'object') throw new NotModelled('type_debug of a mapping (dict, HostVars, ...) is not modelled');
    if (typeof v === 'string') throw new NotModelled('type_debug of a string (str, AnsibleUnicode or AnsibleUnsafeText by where it came from) is not modelled');
    if (typeof v === 'number') throw new NotModelled('type_debug of a whole number (int, or float if Python held 1.0) is not modelled');
    throw new NotModelled('type_debug of this value is not modelled');
  },
  bool: (v) => toBool(v),
  int: (v, d, b) => toInt(v, d, b),
  float: (v, d = 0) => {
    need(v, 'float');
    if (typeof v === 'number') return v;
    if (typeof v === 'boolean') return v ? 1 : 0;
    const s = pyStr(v).trim().replace(/_/g, '');
    if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s)) return Number(s);
    if (/^[+-]?(inf|infinity)$/i.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
    if (/^[+-]?nan$/i.test(s)) return NaN;
    return d;
  },
  string: (v) => pyStr(v),
  default: defaultFilter,
  d: defaultFilter,
  mandatory: (v) => need(v, 'mandatory'),
  length: (v) => iterable(v, 'length').length,
  count: (v) => iterable(v, 'count').length,
  list: (v) => [...iterable(v, 'list')],
  unique: (v, ...args) => {
    const { pos, kw } = kwargs(args);
    return uniqueOf(iterable(v, 'unique'), pyTruth(kw.case_sensitive ?? pos[0] ?? false), (kw.attribute ?? pos[1]) as string | undefined);
  },
  union: (a, b) => uniqueOf([...iterable(a, 'union'), ...iterable(b, 'union')], true),
  intersect: (a, b) =>
    uniqueOf(
      iterable(a, 'intersect').filter((x) => iterable(b, 'intersect').some((y) => pyEq(x, y))),
      true,
    ),
  difference: (a, b) =>
    uniqueOf(
      iterable(a, 'difference').filter((x) => !iterable(b, 'difference').some((y) => pyEq(x, y))),
      true,
    ),
  flatten: (v, ...args) => {
    // ansible's flatten(mylist, levels=None, skip_nulls=True): None, 'None' and 'null' dropped at every level it flattens.
    const { pos, kw } = kwargs(args);
    const levels = kw.levels ?? pos[0] ?? null;
    const skip = pyTruth(kw.skip_nulls ?? pos[1] ?? true);
    const go = (xs: unknown[], depth: number | null): unknown[] =>
      xs.flatMap((x) => {
        if (skip && (x === null || x === 'None' || x === 'null')) return [];
        if (Array.isArray(x) && (depth === null || depth >= 1)) return go(x, depth === null ? null : depth - 1);
        return [x];
      });
    return go(iterable(v, 'flatten'), levels === null ? null : Number(levels));
  },
  ternary: (v, yes, no, none) => (need(v, 'ternary') === null && none !== undefined ? none : pyTruth(v) ? yes : no),
  to_json: (v, ...args) => {
    const { kw } = kwargs(args);
    if (Object.keys(kw).some((k) => k !== 'ensure_ascii')) throw new NotModelled('to_json with json.dumps options is not modelled');
    return pyJsonDumps(need(v, 'to_json'), { ensureAscii: kw.ensure_ascii === undefined ? true : pyTruth(kw.ensure_ascii) });
  },
  from_json: (v) => JSON.parse(pyStr(v)),
  from_yaml: (v) => {
    if (typeof need(v, 'from_yaml') !== 'string') return v;
    const doc = parseAnsibleYaml(v as string);
    if (doc.errors.length > 0) throw new Error(doc.errors[0]!.message.split('\n')[0]);
    return doc.toJSON();
  },
  dict2items: (v) => {
    need(v, 'dict2items');
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`dict2items requires a dictionary, got ${pyType(v)} instead.`);
    return Object.entries(v).map(([key, value]) => ({ key, value }));
  },
  items2dict: (v) => Object.fromEntries(iterable(v, 'items2dict').map((x) => [attr(x, 'key'), attr(x, 'value')])),
  items: (v) => Object.entries(need(v, 'items') as object).map(([k, x]) => [k, x]),
  map: (v, ...args) => {
    const xs = iterable(v, 'map');
    const { pos, kw } = kwargs(args);
    if (typeof kw.attribute === 'string')
      return xs.map((x) => {
        const a = attr(x, kw.attribute as string);
        return a === undefined ? ('default' in kw ? kw.default : makeMissing(`(item).${String(kw.attribute)}`, null)) : a;
      });
    const f = (env as unknown as { getFilter(n: string): (...a: unknown[]) => unknown }).getFilter(String(pos[0]));
    return xs.map((x) => f(x, ...pos.slice(1)));
  },
  select: (v, test, ...args) => iterable(v, 'select').filter((x) => (test === undefined ? pyTruth(x) : callTest(String(test), x, args))),
  reject: (v, test, ...args) => iterable(v, 'reject').filter((x) => !(test === undefined ? pyTruth(x) : callTest(String(test), x, args))),
  selectattr: (v, a, test, ...args) =>
    iterable(v, 'selectattr').filter((x) => (test === undefined ? pyTruth(attr(x, String(a))) : callTest(String(test), attr(x, String(a)), args))),
  rejectattr: (v, a, test, ...args) =>
    iterable(v, 'rejectattr').filter((x) => !(test === undefined ? pyTruth(attr(x, String(a))) : callTest(String(test), attr(x, String(a)), args))),
  regex_replace: (v, re = '', rep = '', ...args) => {
    const { kw } = kwargs(args);
    return pySub(pyRegex(pyStr(re), regexOpts(kw)), pyStr(rep), pyStr(v), kw.count === undefined ? 0 : Number(kw.count));
  },
  regex_search: regexSearch,
  regex_findall: (v, re, ...args) => pyFindall(pyRegex(pyStr(re), regexOpts(kwargs(args).kw)), pyStr(v)),
  basename: (v) => pyStr(v).split('/').pop(),
  dirname: (v) => {
    const s = pyStr(v);
    const i = s.lastIndexOf('/') + 1;
    const head = s.slice(0, i);
    return head && head !== '/'.repeat(head.length) ? head.replace(/\/+$/, '') : head;
  },
  split: (v, sep, max) => pySplit(pyStr(v), sep === undefined || sep === null ? undefined : pyStr(sep), max === undefined ? -1 : Number(max)),
  join: joinFilter,
  lower: (v) => pyStr(v).toLowerCase(),
  upper: (v) => pyStr(v).toUpperCase(),
  capitalize: (v) => {
    const s = pyStr(v);
    return s.slice(0, 1).toUpperCase() + s.slice(1).toLowerCase();
  },
  trim: (v, chars) => pyStrip(pyStr(v), chars === undefined || chars === null ? undefined : pyStr(chars), true, true),
  replace: (v, a, b, n) => pyReplace(pyStr(v), pyStr(a), pyStr(b), n === undefined || n === null ? -1 : Number(n)),
  first: (v) => firstLast(v, false),
  last: (v) => firstLast(v, true),
  reverse: (v) => (typeof need(v, 'reverse') === 'string' ? [...(v as string)].reverse().join('') : [...iterable(v, 'reverse')].reverse()),
  sort: sortFilter,
  min: (v, ...a) => minMax(v, false, ...a),
  max: (v, ...a) => minMax(v, true, ...a),
  sum: (v, ...args) => {
    const { pos, kw } = kwargs(args);
    const a = kw.attribute ?? pos[0];
    const start = kw.start ?? pos[1] ?? 0;
    return iterable(v, 'sum').reduce<number>((acc, x) => acc + Number(need(a !== undefined && a !== null ? attr(x, String(a)) : x, 'sum')), Number(start));
  },
  abs: (v) => Math.abs(Number(need(v, 'abs'))),
  round: (v, precision = 0, method = 'common') => {
    const p = 10 ** Number(precision);
    const x = Number(need(v, 'round')) * p;
    const r = method === 'ceil' ? Math.ceil(x) : method === 'floor' ? Math.floor(x) : method === 'common' ? Math.sign(x) * Math.round(Math.abs(x)) : NaN;
    if (Number.isNaN(r)) throw new Error('method must be common, ceil or floor');
    return r / p;
  },
  wordcount: (v) => (pyStr(v).match(/\w+/gu) ?? []).length,
  safe: (v) => v,
  combine,
  b64decode: (v) => b64decode(v),
  b64encode: (v) => Buffer.from(pyStr(v), 'utf8').toString('base64'),
  quote: (v) => {
    const s = pyStr(v);
    return s === '' ? "''" : /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'"'"'`)}'`;
  },
  indent,
  // extract(item, container, morekeys): container[item][k1][k2]..., each step a Jinja2 getitem.
  extract: (item, container, more) => {
    const keys = [item, ...(more === undefined || more === null ? [] : Array.isArray(more) ? more : [more])];
    let v: unknown = container;
    for (const k of keys) {
      need(v, 'extract');
      const x = v as Record<string, unknown>;
      v =
        v && typeof v === 'object' && Object.hasOwn(v, String(k))
          ? x[String(k)]
          : Array.isArray(v) && typeof k === 'number'
            ? v[k < 0 ? v.length + k : k]
            : makeMissing(`(extract ${String(k)})`, null);
    }
    return v;
  },
};
for (const name of NOT_MODELLED_FILTERS) {
  FILTERS[name] = () => {
    throw new NotModelled(`filter ${name} is not modelled`);
  };
}
// ansible.utils.ipwrap (also found by its short name when the collection is installed), for the values netaddr reads plainly.
FILTERS['ansible.utils.ipwrap'] = (v, ...args) => {
  if (args.length > 0) throw new NotModelled('ipwrap with a query is not modelled');
  return ipwrap(need(v, 'ipwrap'), isIPv6);
};
FILTERS.ipwrap = FILTERS['ansible.utils.ipwrap'];
FILTERS['ansible.utils.ipaddr'] = (v, q, ...rest) => {
  if (rest.length > 0) throw new NotModelled('ipaddr with a version argument is not modelled');
  return ipaddr(need(v, 'ipaddr'), q === undefined ? '' : q);
};
FILTERS.ipaddr = FILTERS['ansible.utils.ipaddr'];
for (const name of COLLECTION_FILTERS) {
  FILTERS[name] = () => {
    throw new NotModelled(`filter ${name} (from a collection outside ansible-core) is not modelled`);
  };
}
// The builtin collection's names (ansible.builtin.split) are the same filters.
for (const name of Object.keys(FILTERS)) if (!name.includes('.')) FILTERS[`ansible.builtin.${name}`] = FILTERS[name]!;
// nunjucks' own filters differ from Jinja2's (replace takes a regex, sort a different key): only ours exist.
(env as unknown as { filters: Record<string, unknown> }).filters = {};
for (const [name, f] of Object.entries(FILTERS)) env.addFilter(name, f as (...a: unknown[]) => unknown);

function resultTest(name: string, v: unknown, key: string, invert = false): boolean {
  need(v, name);
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`The '${name}' test expects a dictionary`);
  const x = pyTruth((v as Record<string, unknown>)[key] ?? false);
  return invert ? !x : x;
}

const TESTS: Record<string, (...a: unknown[]) => boolean> = {
  defined: (v) => !absolve(v) && v !== undefined,
  undefined: (v) => absolve(v) || v === undefined,
  none: (v) => need(v, 'none') === null,
  true: (v) => need(v, 'true') === true,
  false: (v) => need(v, 'false') === false,
  boolean: (v) => typeof need(v, 'boolean') === 'boolean',
  string: (v) => typeof need(v, 'string') === 'string',
  number: (v) => typeof need(v, 'number') === 'number' || typeof v === 'boolean',
  integer: (v) => typeof need(v, 'integer') === 'number' && Number.isInteger(v),
  mapping: (v) => {
    need(v, 'mapping');
    return !!v && typeof v === 'object' && !Array.isArray(v);
  },
  sequence: (v) => {
    need(v, 'sequence');
    return typeof v === 'string' || (!!v && typeof v === 'object');
  },
  iterable: (v) => {
    need(v, 'iterable');
    return typeof v === 'string' || (!!v && typeof v === 'object');
  },
  lower: (v) => {
    const s = pyStr(v);
    return s.toLowerCase() === s && s.toUpperCase() !== s;
  },
  upper: (v) => {
    const s = pyStr(v);
    return s.toUpperCase() === s && s.toLowerCase() !== s;
  },
  divisibleby: (v, n) => Number(need(v, 'divisibleby')) % Number(need(n, 'divisibleby')) === 0,
  even: (v) => Number(need(v, 'even')) % 2 === 0,
  odd: (v) => Math.abs(Number(need(v, 'odd')) % 2) === 1,
  eq: (a, b) => pyEq(a, b),
  equalto: (a, b) => pyEq(a, b),
  '==': (a, b) => pyEq(a, b),
  ne: (a, b) => !pyEq(a, b),
  '!=': (a, b) => !pyEq(a, b),
  lt: (a, b) => pyOrder(a, b) < 0,
  lessthan: (a, b) => pyOrder(a, b) < 0,
  '<': (a, b) => pyOrder(a, b) < 0,
  le: (a, b) => pyOrder(a, b) <= 0,
  '<=': (a, b) => pyOrder(a, b) <= 0,
  gt: (a, b) => pyOrder(a, b) > 0,
  greaterthan: (a, b) => pyOrder(a, b) > 0,
  '>': (a, b) => pyOrder(a, b) > 0,
  ge: (a, b) => pyOrder(a, b) >= 0,
  '>=': (a, b) => pyOrder(a, b) >= 0,
  sameas: (a, b) => {
    need(a, 'sameas');
    need(b, 'sameas');
    if (a === null || b === null || typeof a === 'boolean' || typeof b === 'boolean') return a === b;
    throw new NotModelled('sameas (Python identity) of values other than None, True and False is not modelled');
  },
  in: (v, seq) => pyIn(v, seq),
  version: (v, ver, op) => versionTest(v, ver, op),
  version_compare: (v, ver, op) => versionTest(v, ver, op),
  contains: (seq, v) => pyIn(v, seq),
  subset: (a, b) => iterable(a, 'subset').every((x) => iterable(b, 'subset').some((y) => pyEq(x, y))),
  superset: (a, b) => iterable(b, 'superset').every((x) => iterable(a, 'superset').some((y) => pyEq(x, y))),
  any: (v) => iterable(v, 'any').some(pyTruth),
  all: (v) => iterable(v, 'all').every(pyTruth),
  match: (v, re, ...args) => {
    const r = pyRegex(String(re), regexOpts(kwargs(args).kw));
    const m = r.exec(pyStr(v));
    return !!m && m.index === 0;
  },
  search: (v, re, ...args) => pyRegex(String(re), regexOpts(kwargs(args).kw)).test(pyStr(v)),
  regex: (v, re, ...args) => {
    const { kw } = kwargs(args);
    const r = pyRegex(String(re), regexOpts(kw));
    const m = r.exec(pyStr(v));
    return kw.match_type === 'match' ? !!m && m.index === 0 : kw.match_type === 'fullmatch' ? !!m && m.index === 0 && m[0].length === pyStr(v).length : !!m;
  },
  truthy: (v, ...args) => (kwargs(args).kw.convert_bool === true ? toBool(v) : pyTruth(v)),
  falsy: (v, ...args) => !(kwargs(args).kw.convert_bool === true ? toBool(v) : pyTruth(v)),
  failed: (v) => resultTest('failed', v, 'failed'),
  failure: (v) => resultTest('failure', v, 'failed'),
  succeeded: (v) => resultTest('succeeded', v, 'failed', true),
  success: (v) => resultTest('success', v, 'failed', true),
  successful: (v) => resultTest('successful', v, 'failed', true),
  changed: (v) => resultTest('changed', v, 'changed'),
  change: (v) => resultTest('change', v, 'changed'),
  skipped: (v) => resultTest('skipped', v, 'skipped'),
  skip: (v) => resultTest('skip', v, 'skipped'),
};
// Tests that look at the controller's file system, vaults or Python objects.
for (const name of [
  'callable',
  'escaped',
  'filter',
  'test',
  'float',
  'nan',
  'exists',
  'file',
  'directory',
  'link',
  'mount',
  'abs',
  'is_abs',
  'same_file',
  'samefile',
  'vault_encrypted',
  'finished',
  'started',
  'unreachable',
  'reachable',
  'isnan',
]) {
  if (!(name in TESTS))
    TESTS[name] = () => {
      throw new NotModelled(`test ${name} is not modelled`);
    };
}
for (const name of Object.keys(TESTS)) if (/^\w+$/.test(name)) TESTS[`ansible.builtin.${name}`] = TESTS[name]!;
(env as unknown as { tests: Record<string, unknown> }).tests = {};
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
  return m
    .replace(/^\(unknown path\)\s*(\[Line \d+, Column \d+\]\s*)?/, '')
    .replace(/^\s*(Template render error: )?/, '')
    .replace(/\n\s*/g, ' ')
    .replace(/^(\w*Error): /, '')
    .trim();
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
