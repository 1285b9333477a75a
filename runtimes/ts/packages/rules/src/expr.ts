// The expression language of expressions.md and operators.md: a load that checks a JSON
// expression (every diagnostic, with its pointer) and compiles it into closures, and an evaluation
// that runs the closures against an environment and fails with exactly one error.

import { JSONObject, JSONValue, deepEqual, duplicateMember, hasMember, isObject, memberNames, ptrToken } from "./json.js";
import { dict } from "./json.js";
import * as num from "./num.js";
import * as dates from "./dates.js";
import { Pattern, PatternError, longerThan } from "./pattern.js";
import { GENERATED_OPS, generable, generate } from "./gen.js";

/** One problem of a load: a stable code, a JSON pointer and a message for people. */
export interface Diagnostic {
  code: string;
  pointer: string;
  message: string;
}

/** An evaluation error: one code, the pointer of the failing application and a message. */
export class EvaluationError extends Error {
  constructor(readonly code: string, readonly pointer: string, message: string) {
    // Rules fail closed by throwing these, often once per evaluation: no stack trace to capture
    // (the pointer says where).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = "EvaluationError";
  }
}

/** A custom operator supplied by the host: JSON values in, a JSON value out (or a throw). */
export type CustomOperator = (...args: JSONValue[]) => JSONValue;

/** The default work budget of one evaluation (expressions.md §8). */
export const DEFAULT_BUDGET = 10_000_000;

/** The limits of expressions.md §8. */
export const MAX_DEPTH = 128;
export const MAX_CALL_CHAIN = 32;
export const MAX_ENV_DEPTH = 64;
export const MAX_SUBJECT = 10000;

interface Frame {
  roots: JSONObject;
  locals: JSONValue[];
  budget: { left: number };
}

type Ev = (f: Frame) => JSONValue;

// The arity table of operators.md: [min, max] (max -1: no bound); "if" also needs an odd count.
const ARITY: Record<string, [number, number]> = {
  "==": [2, 2], "!=": [2, 2], "<": [2, 2], "<=": [2, 2], ">": [2, 2], ">=": [2, 2], between: [3, 3],
  and: [1, -1], or: [1, -1], not: [1, 1], if: [3, -1], coalesce: [1, -1],
  "+": [2, -1], "-": [1, 2], "*": [2, -1], "/": [2, 2], mod: [2, 2], abs: [1, 1], min: [1, -1], max: [1, -1],
  round: [1, 2], sum: [1, 1],
  upper: [1, 1], lower: [1, 1], trim: [1, 1], concat: [1, -1], substring: [2, 3], text: [1, 1],
  startsWith: [2, 2], endsWith: [2, 2], matches: [2, 2],
  length: [1, 1], contains: [2, 2], in: [2, 2],
  map: [2, 3], filter: [2, 3], some: [2, 3], all: [2, 3],
  typeOf: [1, 1], isEmpty: [1, 1], literal: [1, 1],
  isDate: [1, 1], yearsBetween: [2, 2], daysBetween: [2, 2], dateAdd: [3, 3],
};

/** The 45 core operator names. */
export const CORE_OPERATORS: readonly string[] = Object.keys(ARITY);

/**
 * The null rule of operators.md ("Null arguments"), in one place: the 28 strict operators and
 * their null result. A strict operator evaluates every argument left to right (a failing argument
 * is the error); then, if any operand is null, the result is the null result and the other
 * operands are not checked at all (neither type nor value); only without a null are the operands
 * checked and the result computed. The operands are the arguments, except for sum and for min/max
 * given one array, whose operands are the array's elements.
 */
export const NULL_RESULT: Readonly<Record<string, null | false>> = {
  "+": null, "-": null, "*": null, "/": null, mod: null, abs: null, min: null, max: null, round: null, sum: null,
  upper: null, lower: null, trim: null, concat: null, substring: null, text: null, length: null,
  yearsBetween: null, daysBetween: null, dateAdd: null,
  "<": false, "<=": false, ">": false, ">=": false, between: false, startsWith: false, endsWith: false, matches: false,
};

/**
 * The 17 operators that are not strict, by operators.md's groups: (a) null is a value, (b)
 * evaluated lazily (a null condition counts as false; a null array gives map and filter null, some
 * and all false, and the body never runs), (c) a container (contains, in: container null → false,
 * an array container compares elements with null included, else item null → false).
 */
export const NOT_STRICT: Readonly<Record<string, "value" | "lazy" | "container">> = {
  "==": "value", "!=": "value", coalesce: "value", typeOf: "value", isEmpty: "value", isDate: "value", literal: "value",
  and: "lazy", or: "lazy", not: "lazy", if: "lazy", map: "lazy", filter: "lazy", some: "lazy", all: "lazy",
  contains: "container", in: "container",
};

/** The result of a strict operator one of whose operands is null (NULL_RESULT): nothing else is
 * checked. The closures and the generated code both go through it. */
export function nullOutcome(op: string): JSONValue {
  return NULL_RESULT[op];
}

/** Reports whether a name is a custom operator name: x- and at least one more character. */
export function isCustomName(name: string): boolean {
  return name.length > 2 && name.startsWith("x-");
}

function typeName(v: JSONValue): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v === "object" ? "object" : typeof v;
}

function fail(code: string, ptr: string, msg: string): never {
  throw new EvaluationError(code, ptr, msg);
}

function mismatch(ptr: string, op: string, v: JSONValue, want: string): never {
  throw new EvaluationError("EVALUATION_ERROR", ptr, `${op}: expected ${want}, got ${typeName(v)}`);
}

/** Charges n units of the work budget at ptr (EVALUATION_LIMIT when it runs out). */
export function charge(f: { budget: { left: number } }, n: number, ptr: string): void {
  if ((f.budget.left -= n) < 0) fail("EVALUATION_LIMIT", ptr, "the evaluation exceeded its work budget");
}

/** Counts the values of a tree (one per 64 bytes of strings), for the work budget. */
function weight(v: JSONValue): number {
  if (v === null || typeof v !== "object") return typeof v === "string" ? 1 + (v.length >> 6) : 1;
  let n = 1;
  if (Array.isArray(v)) for (const x of v) n += weight(x);
  else for (const k in v) if (hasMember(v, k)) n += weight(v[k]);
  return n;
}

const surrogate = /[\uD800-\uDFFF]/;

/** Compares two strings by code points (not UTF-16 units): negative, zero or positive. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x !== y) {
      // surrogates (astral code points) sort after U+E000–U+FFFF
      if (x >= 0xd800) x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      if (y >= 0xd800) y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
      return x - y;
    }
  }
  return a.length - b.length;
}

function cpLength(s: string): number {
  if (!surrogate.test(s)) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) i++;
    n++;
  }
  return n;
}

function cpSubstring(s: string, start: number, len: number | null): string {
  if (!surrogate.test(s)) {
    const n = s.length;
    let st = start < 0 ? Math.max(n + start, 0) : start;
    if (st > n) st = n;
    const end = len === null ? n : Math.min(n, st + len);
    return s.slice(st, end);
  }
  const cps = Array.from(s);
  const n = cps.length;
  let st = start < 0 ? Math.max(n + start, 0) : start;
  if (st > n) st = n;
  const end = len === null ? n : Math.min(n, st + len);
  return cps.slice(st, end).join("");
}

const asciiSpace = /^[\t\n\v\f\r ]+|[\t\n\v\f\r ]+$/g;

function cond(v: JSONValue, ptr: string, op: string): boolean {
  if (v === true) return true;
  if (v === false || v === null) return false;
  return mismatch(ptr, op, v, "a condition (true, false or null)");
}

function isInt(v: number): boolean {
  return Number.isInteger(v);
}

function arith<T>(ptr: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof num.NumberRangeError) fail("EVALUATION_ERROR", ptr, e.message);
    throw e;
  }
}

function dateArg(v: JSONValue, ptr: string, op: string): dates.DateValue {
  if (typeof v !== "string") return mismatch(ptr, op, v, "a date string");
  const d = dates.parseDate(v);
  if (!d) fail("EVALUATION_ERROR", ptr, `${op}: ${JSON.stringify(v)} is not a valid date or date-time`);
  return d;
}

/** Returns v with every number canonical (numbers.md §4); throws at ptr beyond double range. */
export function canonicalValue(v: JSONValue, ptr: string): JSONValue {
  if (typeof v === "number") {
    const c = num.canon(v);
    if (!Number.isFinite(c)) fail("EVALUATION_ERROR", ptr, "a number beyond the range of a double on the way out");
    return c;
  }
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) {
    let out: JSONValue[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const c = canonicalValue(v[i], ptr);
      if (c !== v[i] && out === null) out = v.slice(0, i);
      if (out) out.push(c);
    }
    return out ?? v;
  }
  let out: JSONObject | null = null;
  for (const k of Object.keys(v)) {
    const c = canonicalValue(v[k], ptr);
    if (c !== v[k] && out === null) {
      out = dict();
      for (const j of Object.keys(v)) out[j] = v[j];
    }
    if (out) out[k] = c;
  }
  return out ?? v;
}

/** Checks a value returned by a custom operator: a JSON value with finite numbers. */
function jsonResult(v: unknown, depth = 0): JSONValue | undefined {
  if (depth > 1000) return undefined;
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number") return Number.isFinite(v) ? (v === 0 ? 0 : v) : undefined;
  if (Array.isArray(v)) {
    const out: JSONValue[] = [];
    for (const x of v) {
      const c = jsonResult(x, depth + 1);
      if (c === undefined) return undefined;
      out.push(c);
    }
    return out;
  }
  if (typeof v === "object" && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)) {
    const out: JSONObject = dict();
    for (const k of Object.keys(v as object)) {
      const c = jsonResult((v as Record<string, unknown>)[k], depth + 1);
      if (c === undefined) return undefined;
      out[k] = c;
    }
    return out;
  }
  return undefined;
}

// --- the compiler ---------------------------------------------------------------------------

interface Scope {
  names: Map<string, number>;
  parent: Scope | null;
}

interface FrameLayout {
  size: number;
}

interface FnInfo {
  name: string;
  ptr: string;
  params: string[];
  body: JSONValue | undefined;
  valid: boolean;
  ev: Ev | null;
  layout: FrameLayout;
  calls: Set<string>;
  ops: Set<string>;
}

/** What a compiled expression needs: the custom operators it reaches (through calls too). */
export interface Compiled {
  ev: Ev;
  ops: Set<string>;
  frameSize: number;
}

/** Options of a load. */
export interface LoadOptions {
  /** custom operators declared (by the ruleset or the host) */
  declared: ReadonlySet<string>;
  /** implementations the host registers */
  registered: ReadonlyMap<string, CustomOperator>;
}

/** The compiler of one document: its functions and any number of expressions. */
export class Compiler {
  readonly diags: Diagnostic[] = [];
  private readonly fns = new Map<string, FnInfo>();
  private readonly patternCache = new Map<string, Pattern | PatternError>();
  private inGenerated = false;

  constructor(private readonly opts: LoadOptions) {}

  report(code: string, pointer: string, message: string): void {
    this.diags.push({ code, pointer, message });
  }

  /**
   * Reads and compiles function definitions (expressions.md §5) found at ptr: an object
   * {name: {params, body}}. extraMembers lists members a definition may carry besides
   * params and body (a ruleset's description).
   */
  defineFunctions(defs: JSONObject, ptr: string, extraMembers: string[] = []): void {
    const dup = duplicateMember(defs);
    if (dup !== undefined) this.report("FUNCTION_REDEFINED", `${ptr}/${ptrToken(dup)}`, `function ${dup} is defined twice`);
    for (const name of memberNames(defs)) {
      const fp = `${ptr}/${ptrToken(name)}`;
      const d = defs[name];
      const info: FnInfo = { name, ptr: fp, params: [], body: undefined, valid: true, ev: null, layout: { size: 0 }, calls: new Set(), ops: new Set() };
      this.fns.set(name, info);
      if (!isObject(d)) {
        this.report("FUNCTION_INVALID", fp, `function ${name}: a definition is an object {params, body}`);
        info.valid = false;
        continue;
      }
      const ddup = duplicateMember(d);
      if (ddup !== undefined) {
        this.report("FUNCTION_INVALID", `${fp}/${ptrToken(ddup)}`, `function ${name}: member ${ddup} appears twice`);
        info.valid = false;
      }
      for (const k of memberNames(d)) {
        if (k === "params" || k === "body" || extraMembers.includes(k)) continue;
        this.report("FUNCTION_INVALID", `${fp}/${ptrToken(k)}`, `function ${name}: unknown member ${k}`);
        info.valid = false;
      }
      if (!hasMember(d, "params")) {
        this.report("FUNCTION_INVALID", fp, `function ${name}: params is missing`);
        info.valid = false;
      } else if (!Array.isArray(d.params)) {
        this.report("FUNCTION_INVALID", `${fp}/params`, `function ${name}: params must be an array of names`);
        info.valid = false;
      } else {
        const seen = new Set<string>();
        d.params.forEach((p, i) => {
          if (typeof p !== "string" || p === "" || p.includes(".") || seen.has(p)) {
            this.report("FUNCTION_INVALID", `${fp}/params/${i}`, `function ${name}: parameter ${i} must be a distinct non-empty name without '.'`);
            info.valid = false;
            return;
          }
          seen.add(p);
          info.params.push(p);
        });
      }
      if (!hasMember(d, "body")) {
        this.report("FUNCTION_INVALID", fp, `function ${name}: body is missing`);
        info.valid = false;
      } else info.body = d.body;
    }
    // compile every body, even of functions no expression calls
    for (const info of this.fns.values()) {
      if (info.body === undefined) continue;
      const scope: Scope = { names: new Map(), parent: null };
      info.params.forEach((p, i) => scope.names.set(p, i));
      info.layout.size = info.params.length;
      const ctx: Ctx = { layout: info.layout, calls: info.calls, ops: info.ops };
      info.ev = this.compile(info.body, `${info.ptr}/body`, scope, 1, ctx);
    }
    this.checkCalls();
  }

  private checkCalls(): void {
    // cycles: a function on any cycle of the call graph is recursive
    const names = [...this.fns.keys()];
    const onCycle = new Set<string>();
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    let counter = 0;
    const strong = (v: string) => {
      index.set(v, counter);
      low.set(v, counter);
      counter++;
      stack.push(v);
      onStack.add(v);
      for (const w of this.fns.get(v)!.calls) {
        if (!this.fns.has(w)) continue;
        if (!index.has(w)) {
          strong(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) === index.get(v)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== v);
        if (comp.length > 1 || this.fns.get(v)!.calls.has(v)) for (const c of comp) onCycle.add(c);
      }
    };
    for (const n of names) if (!index.has(n)) strong(n);
    for (const n of names) {
      if (onCycle.has(n)) this.report("FUNCTION_RECURSIVE", this.fns.get(n)!.ptr, `function ${n} reaches itself through calls`);
    }
    // longest chain of nested calls, counted in functions
    const chain = new Map<string, number>();
    const len = (n: string): number => {
      const c = chain.get(n);
      if (c !== undefined) return c;
      chain.set(n, 1);
      let best = 0;
      for (const w of this.fns.get(n)!.calls) {
        if (!this.fns.has(w) || onCycle.has(w)) continue;
        best = Math.max(best, len(w));
      }
      chain.set(n, best + 1);
      return best + 1;
    };
    const called = new Set<string>();
    for (const n of names) if (!onCycle.has(n)) for (const w of this.fns.get(n)!.calls) called.add(w);
    for (const n of names) {
      if (onCycle.has(n)) continue;
      if (len(n) > MAX_CALL_CHAIN && !(called.has(n) && [...names].some((m) => !onCycle.has(m) && this.fns.get(m)!.calls.has(n) && len(m) > MAX_CALL_CHAIN)))
        this.report("EXPRESSION_TOO_DEEP", this.fns.get(n)!.ptr, `function ${n} starts a chain of more than ${MAX_CALL_CHAIN} nested calls`);
    }
    // transitive custom operators
    const opsOf = new Map<string, Set<string>>();
    const collect = (n: string, seen: Set<string>): Set<string> => {
      const done = opsOf.get(n);
      if (done) return done;
      const out = new Set(this.fns.get(n)!.ops);
      seen.add(n);
      for (const w of this.fns.get(n)!.calls) {
        if (!this.fns.has(w) || seen.has(w)) continue;
        for (const o of collect(w, seen)) out.add(o);
      }
      opsOf.set(n, out);
      return out;
    };
    for (const n of names) this.fns.get(n)!.ops = collect(n, new Set());
  }

  /** Compiles an expression at ptr (diagnostics are collected in diags). */
  expression(raw: JSONValue, ptr: string): Compiled {
    const layout = { size: 0 };
    const ctx: Ctx = { layout, calls: new Set(), ops: new Set() };
    const ev = this.compile(raw, ptr, { names: new Map(), parent: null }, 1, ctx);
    const ops = new Set(ctx.ops);
    for (const c of ctx.calls) {
      const f = this.fns.get(c);
      if (f) for (const o of f.ops) ops.add(o);
    }
    return { ev, ops, frameSize: layout.size };
  }

  private compile(n: JSONValue, ptr: string, sc: Scope, depth: number, ctx: Ctx): Ev {
    if (depth > MAX_DEPTH) {
      this.report("EXPRESSION_TOO_DEEP", ptr, `the expression is nested more than ${MAX_DEPTH} deep`);
      return () => null;
    }
    if (n === null || typeof n !== "object") {
      if (typeof n === "number" && !Number.isFinite(n)) {
        this.report("NUMBER_OUT_OF_RANGE", ptr, "a number beyond the range of a double");
        return () => null;
      }
      return () => n;
    }
    if (Array.isArray(n)) {
      const items = n.map((x, i) => this.compile(x, `${ptr}/${i}`, sc, depth + 1, ctx));
      const len = items.length;
      return (f) => {
        charge(f, len + 1, ptr);
        const out = new Array<JSONValue>(len);
        for (let i = 0; i < len; i++) out[i] = items[i](f);
        return out;
      };
    }
    if (duplicateMember(n) !== undefined) {
      this.report("EXPRESSION_INVALID", ptr, `member ${duplicateMember(n)} appears twice`);
      return () => null;
    }
    const keys = Object.keys(n);
    if (keys.length === 1 && keys[0] === "var") return this.variable(n.var, ptr, sc);
    if (keys.length === 2 && hasMember(n, "args") && (hasMember(n, "op") || hasMember(n, "fn"))) {
      const isOp = hasMember(n, "op");
      const name = isOp ? n.op : n.fn;
      if (typeof name !== "string") {
        this.report("EXPRESSION_INVALID", `${ptr}/${isOp ? "op" : "fn"}`, `${isOp ? "op" : "fn"} must be a string`);
        return () => null;
      }
      if (!Array.isArray(n.args)) {
        this.report("EXPRESSION_INVALID", `${ptr}/args`, "args must be an array");
        return () => null;
      }
      if (isOp && !this.inGenerated && GENERATED_OPS.has(name)) {
        const isLocal = (nm: string) => {
          for (let s: Scope | null = sc; s; s = s.parent) if (s.names.has(nm)) return true;
          return false;
        };
        if (generable(n, isLocal)) {
          // the closures are compiled anyway, for the diagnostics and as the fallback
          const before = this.diags.length;
          this.inGenerated = true;
          const ev = this.op(name, n.args, ptr, sc, depth, ctx);
          this.inGenerated = false;
          const g = this.diags.length === before ? generate(n, ptr, isLocal) : null;
          return g ? (f) => g(f.roots, f) : ev;
        }
      }
      return isOp ? this.op(name, n.args, ptr, sc, depth, ctx) : this.call(name, n.args, ptr, sc, depth, ctx);
    }
    this.report("EXPRESSION_INVALID", ptr, `not an expression: an object must be exactly {var}, {op, args} or {fn, args} (members: ${keys.sort().join(", ") || "none"})`);
    return () => null;
  }

  private variable(path: JSONValue, ptr: string, sc: Scope): Ev {
    if (typeof path !== "string") {
      this.report("EXPRESSION_INVALID", `${ptr}/var`, "var must be a string");
      return () => null;
    }
    const segs = path.split(".");
    if (segs.some((s) => s === "")) {
      this.report("VARIABLE_INVALID", `${ptr}/var`, `the variable path ${JSON.stringify(path)} has an empty segment`);
      return () => null;
    }
    let slot = -1;
    for (let s: Scope | null = sc; s; s = s.parent) {
      const k = s.names.get(segs[0]);
      if (k !== undefined) {
        slot = k;
        break;
      }
    }
    const root = segs[0];
    const rest = segs.slice(1).map((s) => ({ s, idx: /^[0-9]+$/.test(s) ? Number(s) : -1 }));
    // A member read: JSON values hold no functions, so a function is something inherited from
    // Object.prototype (a host's plain object) and reads as absent; __proto__ needs hasOwn.
    const get = (o: JSONObject, k: string): JSONValue => {
      if (k === "__proto__") return hasMember(o, k) ? o[k] : null;
      const v = o[k];
      return v === undefined || typeof v === "function" ? null : v;
    };
    const step = (v: JSONValue): JSONValue => {
      for (const { s, idx } of rest) {
        if (v === null || typeof v !== "object") return null;
        if (Array.isArray(v)) {
          if (idx < 0 || idx >= v.length) return null;
          v = v[idx];
        } else v = get(v, s);
        if (v === undefined) return null;
      }
      return v;
    };
    if (slot >= 0) {
      if (rest.length === 0) return (f) => f.locals[slot];
      return (f) => step(f.locals[slot]);
    }
    if (root === "__proto__") return (f) => step(get(f.roots, root));
    if (rest.length === 0)
      return (f) => {
        const v = f.roots[root];
        return v === undefined || typeof v === "function" ? null : v;
      };
    if (rest.length === 1 && rest[0].s !== "__proto__") {
      const { s, idx } = rest[0];
      return (f) => {
        const v = f.roots[root];
        if (v === null || typeof v !== "object") return null;
        if (Array.isArray(v)) return idx < 0 || idx >= v.length ? null : (v[idx] ?? null);
        const w = v[s];
        return w === undefined || typeof w === "function" ? null : w;
      };
    }
    return (f) => {
      const v = f.roots[root];
      return v === undefined || typeof v === "function" ? null : step(v);
    };
  }

  private call(name: string, raw: JSONValue[], ptr: string, sc: Scope, depth: number, ctx: Ctx): Ev {
    const fn = this.fns.get(name);
    const args = raw.map((a, i) => this.compile(a, `${ptr}/args/${i}`, sc, depth + 1, ctx));
    if (!fn) {
      this.report("FUNCTION_UNKNOWN", `${ptr}/fn`, `no function named ${name}`);
      return () => null;
    }
    ctx.calls.add(name);
    if (fn.valid && args.length !== fn.params.length) {
      this.report("FUNCTION_ARITY", `${ptr}/args`, `function ${name} takes ${fn.params.length} arguments, got ${args.length}`);
      return () => null;
    }
    const n = args.length;
    return (f) => {
      charge(f, 1 + n, ptr);
      const locals = new Array<JSONValue>(Math.max(fn.layout.size, n));
      for (let i = 0; i < n; i++) locals[i] = args[i](f);
      const body = fn.ev;
      if (!body) return null;
      return body({ roots: f.roots, locals, budget: f.budget });
    };
  }

  private constantPattern(raw: JSONValue): string | null {
    if (typeof raw === "string") return raw;
    if (isObject(raw) && duplicateMember(raw) === undefined && Object.keys(raw).length === 2 && raw.op === "literal" && Array.isArray(raw.args) && raw.args.length === 1 && typeof raw.args[0] === "string")
      return raw.args[0];
    return null;
  }

  private pattern(source: string): Pattern | PatternError {
    let p = this.patternCache.get(source);
    if (!p) {
      try {
        p = Pattern.compile(source);
      } catch (e) {
        if (!(e instanceof PatternError)) throw e;
        p = e;
      }
      this.patternCache.set(source, p);
    }
    return p;
  }

  private op(name: string, raw: JSONValue[], ptr: string, sc: Scope, depth: number, ctx: Ctx): Ev {
    const ar = ARITY[name];
    if (!ar || !hasMember(ARITY, name)) {
      if (!isCustomName(name)) {
        this.report("OPERATOR_UNKNOWN", `${ptr}/op`, `unknown operator ${name}`);
        return () => null;
      }
      if (!this.opts.declared.has(name)) {
        this.report("OPERATOR_UNDECLARED", `${ptr}/op`, `custom operator ${name} is not declared`);
        return () => null;
      }
      ctx.ops.add(name);
      const args = raw.map((a, i) => this.compile(a, `${ptr}/args/${i}`, sc, depth + 1, ctx));
      return this.custom(name, args, ptr);
    }
    const [min, max] = ar;
    if (raw.length < min || (max >= 0 && raw.length > max) || (name === "if" && raw.length % 2 === 0)) {
      this.report("OPERATOR_ARITY", `${ptr}/args`, `${name} does not take ${raw.length} arguments`);
      return () => null;
    }
    if (name === "literal") {
      const v = this.literal(raw[0], `${ptr}/args/0`, depth + 1);
      return () => v;
    }
    if (name === "map" || name === "filter" || name === "some" || name === "all") return this.iteration(name, raw, ptr, sc, depth, ctx);
    if (name === "matches") {
      const src = this.constantPattern(raw[1]);
      if (src !== null) {
        const p = this.pattern(src);
        if (p instanceof PatternError) {
          this.report("PATTERN_NOT_PORTABLE", `${ptr}/args/1`, p.message);
          return () => null;
        }
        const subj = this.compile(raw[0], `${ptr}/args/0`, sc, depth + 1, ctx);
        // the pattern argument is a constant: still checked for depth like any argument
        this.compile(raw[1], `${ptr}/args/1`, sc, depth + 1, ctx);
        return (f) => {
          const s = subj(f);
          charge(f, 3, ptr);
          if (s === null) return false;
          if (typeof s !== "string") return mismatch(ptr, name, s, "a string");
          charge(f, s.length >> 6, ptr);
          if (longerThan(s, MAX_SUBJECT)) fail("EVALUATION_ERROR", ptr, `matches: the subject is longer than ${MAX_SUBJECT} code points`);
          return p.test(s);
        };
      }
    }
    const args = raw.map((a, i) => this.compile(a, `${ptr}/args/${i}`, sc, depth + 1, ctx));
    const consts = raw.map((a) => (a === null || (typeof a !== "object" && (typeof a !== "number" || Number.isFinite(a))) ? a : undefined));
    return this.core(name, args, ptr, consts);
  }

  private literal(v: JSONValue, ptr: string, depth: number): JSONValue {
    if (depth > MAX_DEPTH) {
      this.report("EXPRESSION_TOO_DEEP", ptr, `the expression is nested more than ${MAX_DEPTH} deep`);
      return null;
    }
    if (v === null || typeof v !== "object") {
      if (typeof v === "number" && !Number.isFinite(v)) this.report("NUMBER_OUT_OF_RANGE", ptr, "a number beyond the range of a double");
      return v;
    }
    if (Array.isArray(v)) return v.map((x, i) => this.literal(x, `${ptr}/${i}`, depth + 1));
    const dup = duplicateMember(v);
    if (dup !== undefined) this.report("EXPRESSION_INVALID", ptr, `member ${dup} appears twice`);
    const out: JSONObject = dict();
    for (const k of memberNames(v)) out[k] = this.literal(v[k], `${ptr}/${ptrToken(k)}`, depth + 1);
    return out;
  }

  private iteration(name: string, raw: JSONValue[], ptr: string, sc: Scope, depth: number, ctx: Ctx): Ev {
    const list = this.compile(raw[0], `${ptr}/args/0`, sc, depth + 1, ctx);
    let bind = "it";
    let bodyAt = 1;
    if (raw.length === 3) {
      bodyAt = 2;
      const nm = raw[1];
      if (typeof nm !== "string" || nm === "" || nm.includes(".")) {
        this.report("EXPRESSION_INVALID", `${ptr}/args/1`, `${name}: the element name must be a string literal name (non-empty, without '.')`);
        return () => null;
      }
      bind = nm;
    }
    const slot = ctx.layout.size++;
    const inner: Scope = { names: new Map([[bind, slot]]), parent: sc };
    const body = this.compile(raw[bodyAt], `${ptr}/args/${bodyAt}`, inner, depth + 1, ctx);
    // not strict (NOT_STRICT, lazy): a null array gives map and filter null, some and all false
    const nullResult = name === "map" || name === "filter" ? null : false;
    const check = (f: Frame): JSONValue[] | null => {
      const v = list(f);
      charge(f, 1, ptr);
      if (v === null) return null;
      if (!Array.isArray(v)) return mismatch(ptr, name, v, "an array");
      charge(f, v.length, ptr);
      return v;
    };
    switch (name) {
      case "map":
        return (f) => {
          const xs = check(f);
          if (xs === null) return nullResult;
          const out = new Array<JSONValue>(xs.length);
          for (let i = 0; i < xs.length; i++) {
            f.locals[slot] = xs[i];
            out[i] = body(f);
          }
          return out;
        };
      case "filter":
        return (f) => {
          const xs = check(f);
          if (xs === null) return nullResult;
          const out: JSONValue[] = [];
          for (let i = 0; i < xs.length; i++) {
            f.locals[slot] = xs[i];
            if (cond(body(f), ptr, name)) out.push(xs[i]);
          }
          return out;
        };
      case "some":
        return (f) => {
          const xs = check(f);
          if (xs === null) return nullResult;
          for (let i = 0; i < xs.length; i++) {
            f.locals[slot] = xs[i];
            if (cond(body(f), ptr, name)) return true;
          }
          return false;
        };
      default:
        return (f) => {
          const xs = check(f);
          if (xs === null) return nullResult;
          for (let i = 0; i < xs.length; i++) {
            f.locals[slot] = xs[i];
            if (!cond(body(f), ptr, name)) return false;
          }
          return true;
        };
    }
  }

  private custom(name: string, args: Ev[], ptr: string): Ev {
    const impl = this.opts.registered.get(name);
    const n = args.length;
    return (f) => {
      const vals = new Array<JSONValue>(n);
      let w = 1;
      for (let i = 0; i < n; i++) {
        const v = (vals[i] = args[i](f));
        if (typeof v === "object" && v !== null) w += weight(v);
        else if (typeof v === "string" && v.length > 64) w += v.length >> 6;
      }
      if (w > 1) charge(f, w, ptr);
      if (!impl) fail("OPERATOR_UNAVAILABLE", ptr, `custom operator ${name} is not registered by the host`);
      let out: unknown;
      try {
        out = n === 1 ? impl(vals[0]) : n === 2 ? impl(vals[0], vals[1]) : impl(...vals);
      } catch (e) {
        fail("OPERATOR_FAILED", ptr, `custom operator ${name} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (typeof out === "string" || typeof out === "boolean" || out === null) {
        if (typeof out === "string" && out.length > 64) charge(f, out.length >> 6, ptr);
        return out;
      }
      const r = jsonResult(out);
      if (r === undefined) fail("OPERATOR_FAILED", ptr, `custom operator ${name} returned something that is not a JSON value`);
      if (typeof r === "object" && r !== null) charge(f, weight(r), ptr);
      return r;
    };
  }

  private core(name: string, args: Ev[], ptr: string, consts: (JSONValue | undefined)[]): Ev {
    const n = args.length;
    const a0 = args[0];
    const a1 = args[1];
    const nullResult = NULL_RESULT[name];
    const numArg = (v: JSONValue): number => (typeof v === "number" ? v : mismatch(ptr, name, v, "a number"));
    // a decimal operation of two numbers, with the null rule and the range error
    const binary = (op: (a: number, b: number) => number | null): Ev => (f) => {
      const x = a0(f);
      const y = a1(f);
      if (typeof x === "number" && typeof y === "number") {
        try {
          return op(x, y);
        } catch (e) {
          if (e instanceof num.NumberRangeError) fail("EVALUATION_ERROR", ptr, e.message);
          throw e;
        }
      }
      if (x === null || y === null) return nullOutcome(name);
      numArg(x);
      return numArg(y);
    };
    const strArg = (v: JSONValue): string => {
      if (typeof v !== "string") return mismatch(ptr, name, v, "a string");
      return v;
    };
    // strict: every argument evaluated left to right, then the null rule, then fn
    // Scalar operators are not charged: their count is bounded by the expression's size; the
    // budget counts what grows with the input (elements, calls, long strings, deep values).
    const strict = (fn: (v: JSONValue[]) => JSONValue): Ev =>
      n === 1
        ? (f) => {
            const v = a0(f);
            return v === null ? nullResult : fn([v]);
          }
        : (f) => {
            const vs = new Array<JSONValue>(n);
            let hasNull = false;
            for (let i = 0; i < n; i++) if ((vs[i] = args[i](f)) === null) hasNull = true;
            return hasNull ? nullOutcome(name) : fn(vs);
          };
    const order = (a: JSONValue, b: JSONValue): number => {
      if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : 0;
      if (typeof a === "string" && typeof b === "string") return compareCodePoints(a, b);
      return mismatch(ptr, name, typeof a === "number" || typeof a === "string" ? b : a, "numbers or strings of the same type");
    };
    switch (name) {
      case "==":
      case "!=": {
        const eq = name === "==";
        const c0 = consts[0];
        const c1 = consts[1];
        // a scalar constant on either side: strict equality is deep equality
        if (c1 !== undefined && typeof c1 !== "string") return eq ? (f) => a0(f) === c1 : (f) => a0(f) !== c1;
        if (c0 !== undefined && typeof c0 !== "string") return eq ? (f) => a1(f) === c0 : (f) => a1(f) !== c0;
        if (c1 !== undefined) return (f) => {
          const x = a0(f);
          if (typeof x === "string" && x.length > 64) charge(f, x.length >> 6, ptr);
          return (x === c1) === eq;
        };
        return (f) => {
          const x = a0(f);
          const y = a1(f);
          if ((typeof x === "object" && x !== null) || (typeof y === "object" && y !== null) || (typeof x === "string" && x.length > 64) || (typeof y === "string" && y.length > 64))
            charge(f, 1 + weight(x) + weight(y), ptr);
          return deepEqual(x, y) === eq;
        };
      }
      case "<":
      case "<=":
      case ">":
      case ">=": {
        const test = name === "<" ? (c: number) => c < 0 : name === "<=" ? (c: number) => c <= 0 : name === ">" ? (c: number) => c > 0 : (c: number) => c >= 0;
        const k = consts[1];
        if (typeof k === "number") {
          // a number constant on the right: the common case, without the generic path
          const slow = (x: JSONValue): JSONValue => (x === null ? nullOutcome(name) : test(order(x, k)));
          switch (name) {
            case "<":
              return (f) => { const x = a0(f); return typeof x === "number" ? x < k : slow(x); };
            case "<=":
              return (f) => { const x = a0(f); return typeof x === "number" ? x <= k : slow(x); };
            case ">":
              return (f) => { const x = a0(f); return typeof x === "number" ? x > k : slow(x); };
            default:
              return (f) => { const x = a0(f); return typeof x === "number" ? x >= k : slow(x); };
          }
        }
        return (f) => {
          const x = a0(f);
          const y = a1(f);
          if (x === null || y === null) return nullOutcome(name);
          if (typeof x === "number" && typeof y === "number") return test(x < y ? -1 : x > y ? 1 : 0);
          return test(order(x, y));
        };
      }
      case "between":
        return strict(([x, lo, hi]) => {
          const t = typeof x;
          if ((t !== "number" && t !== "string") || typeof lo !== t || typeof hi !== t)
            return mismatch(ptr, name, t !== "number" && t !== "string" ? x : typeof lo !== t ? lo : hi, "three numbers or three strings");
          return order(lo, x) <= 0 && order(x, hi) <= 0;
        });
      case "and":
        if (n === 2) return (f) => {
          const x = a0(f);
          if (x !== true && !cond(x, ptr, name)) return false;
          const y = a1(f);
          return y === true || cond(y, ptr, name);
        };
        return (f) => {
          for (let i = 0; i < n; i++) if (!cond(args[i](f), ptr, name)) return false;
          return true;
        };
      case "or":
        if (n === 2) return (f) => {
          const x = a0(f);
          if (x === true || cond(x, ptr, name)) return true;
          const y = a1(f);
          return y === true || cond(y, ptr, name);
        };
        return (f) => {
          for (let i = 0; i < n; i++) if (cond(args[i](f), ptr, name)) return true;
          return false;
        };
      case "not":
        return (f) => !cond(a0(f), ptr, name);
      case "if":
        return (f) => {
          for (let i = 0; i + 1 < n; i += 2) if (cond(args[i](f), ptr, name)) return args[i + 1](f);
          return args[n - 1](f);
        };
      case "coalesce":
        return (f) => {
          for (let i = 0; i < n; i++) {
            const v = args[i](f);
            if (v !== null) return v;
          }
          return null;
        };
      case "+":
        if (n === 2) return binary(num.add);
        return strict((vs) => {
          const xs = vs.map(numArg);
          return arith(ptr, () => num.sumAll(xs));
        });
      case "-":
        if (n === 1) return strict(([x]) => arith(ptr, () => num.neg(numArg(x))));
        return binary(num.sub);
      case "*":
        if (n === 2) return binary(num.mul);
        return strict((vs) => {
          const xs = vs.map(numArg);
          return arith(ptr, () => {
            // rounded once: exact products of canonical decimals, then one rounding
            if (xs.length === 2) return num.mul(xs[0], xs[1]);
            return num.mulAll(xs);
          });
        });
      case "/":
        return binary(num.div);
      case "mod":
        return binary(num.mod);
      case "abs":
        return strict(([x]) => Math.abs(numArg(x)));
      case "min":
      case "max": {
        const isMin = name === "min";
        return (f) => {
          charge(f, 1 + n, ptr);
          const vs = args.map((a) => a(f));
          let ops: JSONValue[] = vs;
          if (n === 1 && Array.isArray(vs[0])) {
            ops = vs[0];
            charge(f, ops.length, ptr);
          }
          if (ops.length === 0) return null;
          let hasNull = false;
          for (const v of ops) if (v === null) hasNull = true;
          if (hasNull) return nullOutcome(name);
          let best = numArg(ops[0]);
          for (let i = 1; i < ops.length; i++) {
            const v = numArg(ops[i]);
            if (isMin ? v < best : v > best) best = v;
          }
          return best;
        };
      }
      case "round":
        return strict((vs) => {
          const x = numArg(vs[0]);
          let places = 0;
          if (vs.length === 2) {
            places = numArg(vs[1]);
            if (!isInt(places) || places < -15 || places > 15)
              fail("EVALUATION_ERROR", ptr, "round: places must be an integer from -15 to 15");
          }
          return arith(ptr, () => num.roundPlaces(x, places));
        });
      case "sum":
        return (f) => {
          charge(f, 2, ptr);
          const v = a0(f);
          if (v === null) return nullResult;
          if (!Array.isArray(v)) return mismatch(ptr, name, v, "an array of numbers");
          charge(f, v.length, ptr);
          if (v.some((x) => x === null)) return nullOutcome(name);
          const xs = v.map(numArg);
          return arith(ptr, () => num.sumAll(xs));
        };
      case "upper":
        return strict(([x]) => {
          const s = strArg(x);
          return /[a-z]/.test(s) ? s.replace(/[a-z]+/g, (m) => m.toUpperCase()) : s;
        });
      case "lower":
        return strict(([x]) => {
          const s = strArg(x);
          return /[A-Z]/.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s;
        });
      case "trim":
        return strict(([x]) => strArg(x).replace(asciiSpace, ""));
      case "concat": {
        const join = (f: Frame, vs: JSONValue[]): JSONValue => {
          if (vs.some((v) => v === null)) return nullOutcome(name);
          if (typeof vs[0] === "string") {
            let out = "";
            for (const v of vs) out += strArg(v);
            if (out.length > 64) charge(f, out.length >> 6, ptr);
            return out;
          }
          if (Array.isArray(vs[0])) {
            const out: JSONValue[] = [];
            for (const v of vs) {
              if (!Array.isArray(v)) return mismatch(ptr, name, v, "an array");
              for (const x of v) out.push(x);
            }
            charge(f, out.length, ptr);
            return out;
          }
          return mismatch(ptr, name, vs[0], "strings or arrays");
        };
        if (n === 2)
          return (f) => {
            const x = a0(f);
            const y = a1(f);
            if (typeof x === "string" && typeof y === "string") {
              const out = x + y;
              if (out.length > 64) charge(f, out.length >> 6, ptr);
              return out;
            }
            return join(f, [x, y]);
          };
        return (f) => join(f, args.map((a) => a(f)));
      }
      case "substring":
        return strict((vs) => {
          const s = strArg(vs[0]);
          const st = numArg(vs[1]);
          // operators.md: start from -10^15 to 10^15, length from 0 to 10^15 (exact in any runtime)
          if (!isInt(st) || st < -1e15 || st > 1e15) fail("EVALUATION_ERROR", ptr, "substring: start must be an integer from -1000000000000000 to 1000000000000000");
          let len: number | null = null;
          if (vs.length === 3) {
            len = numArg(vs[2]);
            if (!isInt(len) || len < 0 || len > 1e15) fail("EVALUATION_ERROR", ptr, "substring: length must be an integer from 0 to 1000000000000000");
          }
          return cpSubstring(s, st, len);
        });
      case "text":
        return strict(([x]) => {
          if (typeof x === "string" || typeof x === "boolean") return typeof x === "boolean" ? String(x) : x;
          if (typeof x === "number") return arith(ptr, () => num.numText(x));
          return mismatch(ptr, name, x, "a string, number or boolean");
        });
      case "startsWith":
        return strict(([s, p]) => strArg(s).startsWith(strArg(p)));
      case "endsWith":
        return strict(([s, p]) => strArg(s).endsWith(strArg(p)));
      case "matches":
        // strict: a null subject or pattern decides before either is checked; a computed
        // pattern is then checked (a constant one was checked at load)
        return (f) => {
          charge(f, 3, ptr);
          const s = a0(f);
          const p = a1(f);
          if (s === null || p === null) return nullOutcome(name);
          const subject = strArg(s);
          const c = this.pattern(strArg(p));
          if (c instanceof PatternError) fail("EVALUATION_ERROR", ptr, `matches: ${c.message}`);
          charge(f, subject.length >> 6, ptr);
          if (longerThan(subject, MAX_SUBJECT)) fail("EVALUATION_ERROR", ptr, `matches: the subject is longer than ${MAX_SUBJECT} code points`);
          return c.test(subject);
        };
      case "length":
        return strict(([x]) => {
          if (typeof x === "string") return cpLength(x);
          if (Array.isArray(x)) return x.length;
          if (isObject(x)) return Object.keys(x).length;
          return mismatch(ptr, name, x, "a string, array or object");
        });
      case "contains":
      case "in": {
        // not strict (NOT_STRICT, container): container null → false; an array container
        // compares its elements with the item, null included; otherwise item null → false;
        // otherwise a string container and a string item
        const ci = name === "contains" ? 0 : 1;
        return (f) => {
          const x = a0(f);
          const y = a1(f);
          const container = ci === 0 ? x : y;
          const item = ci === 0 ? y : x;
          charge(f, 1 + weight(container) + weight(item), ptr);
          if (container === null) return false;
          if (Array.isArray(container)) {
            for (const e of container) if (deepEqual(e, item)) return true;
            return false;
          }
          if (item === null) return false;
          if (typeof container !== "string") return mismatch(ptr, name, container, "a string or an array container");
          if (typeof item !== "string") return mismatch(ptr, name, item, "a string item for a string container");
          return container.includes(item);
        };
      }
      case "typeOf":
        return (f) => {
          charge(f, 2, ptr);
          return typeName(a0(f));
        };
      case "isEmpty":
        return (f) => {
          charge(f, 2, ptr);
          const v = a0(f);
          if (v === null || v === "") return true;
          if (Array.isArray(v)) return v.length === 0;
          if (isObject(v)) {
            for (const k in v) if (hasMember(v, k)) return false;
            return true;
          }
          return false;
        };
      case "isDate":
        return (f) => {
          charge(f, 2, ptr);
          const v = a0(f);
          return typeof v === "string" && dates.parseDate(v) !== null;
        };
      case "yearsBetween":
        return strict(([x, y]) => {
          const a = dateArg(x, ptr, name);
          const b = dateArg(y, ptr, name);
          return dates.yearsBetween(a, b);
        });
      case "daysBetween":
        return strict(([x, y]) => {
          const a = dateArg(x, ptr, name);
          const b = dateArg(y, ptr, name);
          return dates.daysBetween(a, b);
        });
      case "dateAdd":
        return strict(([d, k, u]) => {
          const dv = dateArg(d, ptr, name);
          const amount = numArg(k);
          const unit = strArg(u);
          if (unit !== "days" && unit !== "months" && unit !== "years") fail("EVALUATION_ERROR", ptr, `dateAdd: unknown unit ${JSON.stringify(unit)}`);
          if (!isInt(amount) || Math.abs(amount) > 10_000_000) fail("EVALUATION_ERROR", ptr, "dateAdd: the amount must be an integer from -10000000 to 10000000");
          const out = dates.dateAdd(dv, amount, unit);
          if (out === null) fail("EVALUATION_ERROR", ptr, "dateAdd: the result is outside the years 0001-9999");
          return out;
        });
    }
    throw new Error(`operator ${name} has no implementation`);
  }
}

interface Ctx {
  layout: FrameLayout;
  calls: Set<string>;
  ops: Set<string>;
}

/** Runs a compiled expression against environment roots with a work budget. */
export function run(c: Compiled, roots: JSONObject, budget = DEFAULT_BUDGET): JSONValue {
  return c.ev({ roots, locals: c.frameSize ? new Array(c.frameSize) : EMPTY, budget: { left: budget } });
}

/** Runs with a shared budget object (one per rule run). */
export function runWith(c: Compiled, roots: JSONObject, budget: { left: number }): JSONValue {
  return c.ev({ roots, locals: c.frameSize ? new Array(c.frameSize) : EMPTY, budget });
}

const EMPTY: JSONValue[] = [];

// --- the suite's custom operators (expressions.md §6) ----------------------------------------

/** The three custom operators every runtime must be able to register for the conformance suite. */
export const suiteOperators: ReadonlyMap<string, CustomOperator> = new Map<string, CustomOperator>([
  [
    "x-test-reverse",
    (v) => {
      if (v === null) return null;
      if (typeof v === "string") return Array.from(v).reverse().join("");
      if (Array.isArray(v)) return v.slice().reverse();
      throw new Error("x-test-reverse takes a string or an array");
    },
  ],
  [
    "x-test-sum",
    (...xs) => {
      for (const x of xs) if (typeof x !== "number") throw new Error("x-test-sum takes numbers");
      return num.sumAll(xs as number[]);
    },
  ],
  [
    "x-luhn",
    (s) => {
      if (s === null) return false;
      if (typeof s !== "string") throw new Error("x-luhn takes a string");
      if (!/^[0-9]{2,}$/.test(s)) return false;
      let sum = 0;
      for (let i = 0; i < s.length; i++) {
        let d = s.charCodeAt(s.length - 1 - i) - 48;
        if (i % 2 === 1) {
          d *= 2;
          if (d > 9) d -= 9;
        }
        sum += d;
      }
      return sum % 10 === 0;
    },
  ],
]);
