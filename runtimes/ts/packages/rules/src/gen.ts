// Code generation for the scalar core of the language: conditions, equality with constants,
// comparisons and variables of the environment, compiled with new Function into one function
// whose call sites are monomorphic (a tree of closures calls through megamorphic sites). Anything
// else, or a host that forbids new Function (a Content-Security-Policy without 'unsafe-eval'),
// keeps the closures; both give the same results (conformance, differential fuzzing).

import type { JSONObject, JSONValue } from "./json.js";
import { deepEqual, duplicateMember } from "./json.js";
import { compareCodePoints, EvaluationError, charge, nullOutcome } from "./expr.js";

type Roots = JSONObject;

let allowed: boolean | null = null;

/**
 * Turns code generation off (or back on, where new Function works): a host whose
 * Content-Security-Policy forbids eval gets the closures anyway; tests run both ways.
 */
export function setCodeGeneration(enabled: boolean): void {
  allowed = enabled ? null : false;
}

function canGenerate(): boolean {
  if (allowed === null) {
    try {
      allowed = new Function("return 1")() === 1;
    } catch {
      allowed = false;
    }
  }
  return allowed;
}

const condOps = new Set(["and", "or", "not"]);
const cmpOps = new Set(["<", "<=", ">", ">="]);

/** The operators whose applications may be generated. */
export const GENERATED_OPS: ReadonlySet<string> = new Set(["and", "or", "not", "==", "!=", "<", "<=", ">", ">=", "startsWith", "endsWith", "concat"]);

/** Reports whether generate would compile raw (without compiling it). */
export function generable(raw: JSONValue, isLocal: (name: string) => boolean): boolean {
  return canGenerate() && build(raw, "", isLocal) !== null;
}

/** Returns a function of the roots for a scalar expression, or null when it is outside the subset. */
export function generate(raw: JSONValue, ptr: string, isLocal: (name: string) => boolean): ((r: Roots, f: Budgeted) => JSONValue) | null {
  if (!canGenerate()) return null;
  const b = build(raw, ptr, isLocal);
  if (b === null) return null;
  try {
    const make = new Function("M", "S", "C", "E", "O", "P", "W", "K", `return function generated(r, f) { ${b.decl} return ${b.body}; };`);
    return make(member, step, cond, deepEqual, order, b.ptrs, affix, join);
  } catch {
    return null;
  }
}

function build(raw: JSONValue, ptr: string, isLocal: (name: string) => boolean): { body: string; decl: string; ptrs: string[] } | null {
  let temps = 0;
  let nodes = 0;
  const ptrs: string[] = [];
  const P = (p: string) => {
    ptrs.push(p);
    return `P[${ptrs.length - 1}]`;
  };
  const scalar = (v: JSONValue) => v === null || typeof v === "boolean" || typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
  const code = (n: JSONValue, p: string): string | null => {
    nodes++;
    if (scalar(n)) return JSON.stringify(n);
    if (n === null || typeof n !== "object" || Array.isArray(n) || duplicateMember(n) !== undefined) return null;
    const keys = Object.keys(n);
    if (keys.length === 1 && keys[0] === "var") {
      const path = n.var;
      if (typeof path !== "string") return null;
      const segs = path.split(".");
      if (segs.some((s) => s === "" || s === "__proto__") || isLocal(segs[0])) return null;
      // a named property read (a monomorphic inline cache), inherited functions read as absent
      const t = `t${temps++}`;
      let c = `((${t} = r[${JSON.stringify(segs[0])}]) === undefined || typeof ${t} === "function" ? null : ${t})`;
      for (const s of segs.slice(1)) c = /^[0-9]+$/.test(s) ? `S(${c}, ${JSON.stringify(s)}, ${Number(s)})` : `S(${c}, ${JSON.stringify(s)}, -1)`;
      return c;
    }
    if (keys.length !== 2 || typeof n.op !== "string" || !Array.isArray(n.args)) return null;
    const op = n.op;
    const args = n.args;
    if (condOps.has(op)) {
      if (args.length < 1 || (op === "not" && args.length !== 1)) return null;
      const parts: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const c = code(args[i], `${p}/args/${i}`);
        if (c === null) return null;
        const t = `t${temps++}`;
        parts.push(`((${t} = ${c}) === true || (${t} !== false && ${t} !== null && C(${t}, ${P(p)}, ${JSON.stringify(op)})))`);
      }
      if (op === "not") return `!${parts[0]}`;
      return `(${parts.join(op === "and" ? " && " : " || ")})`;
    }
    if ((op === "==" || op === "!=") && args.length === 2) {
      const a = code(args[0], `${p}/args/0`);
      const b = code(args[1], `${p}/args/1`);
      if (a === null || b === null) return null;
      const neg = op === "!=" ? "!" : "";
      if (scalar(args[1])) return `${neg}(${a} === ${b})`;
      if (scalar(args[0])) return `${neg}(${b} === ${a})`;
      return `${neg}E(${a}, ${b})`;
    }
    if ((op === "startsWith" || op === "endsWith") && args.length === 2) {
      const a = code(args[0], `${p}/args/0`);
      const b = code(args[1], `${p}/args/1`);
      if (a === null || b === null) return null;
      const x = `t${temps++}`;
      const y = `t${temps++}`;
      return `((${x} = ${a}), (${y} = ${b}), typeof ${x} === "string" && typeof ${y} === "string" ? ${x}.${op}(${y}) : W(${x}, ${y}, ${P(p)}, ${JSON.stringify(op)}))`;
    }
    if (op === "concat" && args.length >= 1) {
      const parts: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const c = code(args[i], `${p}/args/${i}`);
        if (c === null) return null;
        parts.push(c);
      }
      if (parts.length === 2) {
        const x = `t${temps++}`;
        const y = `t${temps++}`;
        const z = `t${temps++}`;
        return `((${x} = ${parts[0]}), (${y} = ${parts[1]}), typeof ${x} === "string" && typeof ${y} === "string" ? ((${z} = ${x} + ${y}).length > 64 ? K([${z}], ${P(p)}, f) : ${z}) : K([${x}, ${y}], ${P(p)}, f))`;
      }
      return `K([${parts.join(", ")}], ${P(p)}, f)`;
    }
    if (cmpOps.has(op) && args.length === 2) {
      const a = code(args[0], `${p}/args/0`);
      const b = code(args[1], `${p}/args/1`);
      if (a === null || b === null) return null;
      const x = `t${temps++}`;
      const y = `t${temps++}`;
      return `((${x} = ${a}), (${y} = ${b}), typeof ${x} === "number" && typeof ${y} === "number" ? ${x} ${op} ${y} : O(${x}, ${y}, ${P(p)}, ${JSON.stringify(op)}))`;
    }
    return null;
  };
  const body = code(raw, ptr);
  if (body === null || nodes < 3) return null;
  const decl = temps ? `let ${Array.from({ length: temps }, (_, i) => `t${i}`).join(", ")};` : "";
  return { body, decl, ptrs };
}

function member(o: JSONObject, k: string): JSONValue {
  const v = o[k];
  return v === undefined || typeof v === "function" ? null : v;
}

function step(v: JSONValue, s: string, i: number): JSONValue {
  if (v === null || typeof v !== "object") return null;
  if (Array.isArray(v)) return i >= 0 && i < v.length ? (v[i] ?? null) : null;
  const w = v[s];
  return w === undefined || typeof w === "function" ? null : w;
}

function cond(v: JSONValue, ptr: string, op: string): boolean {
  if (v === true) return true;
  if (v === false || v === null) return false;
  throw new EvaluationError("EVALUATION_ERROR", ptr, `${op}: expected a condition (true, false or null), got ${typeName(v)}`);
}

// The null rule is read from NULL_RESULT (expr.ts), as the closures do.

function order(x: JSONValue, y: JSONValue, ptr: string, op: string): JSONValue {
  if (x === null || y === null) return nullOutcome(op);
  let c: number;
  if (typeof x === "string" && typeof y === "string") c = compareCodePoints(x, y);
  else throw new EvaluationError("EVALUATION_ERROR", ptr, `${op}: expected numbers or strings of the same type, got ${typeName(x)} and ${typeName(y)}`);
  return op === "<" ? c < 0 : op === "<=" ? c <= 0 : op === ">" ? c > 0 : c >= 0;
}

function typeName(v: JSONValue): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v === "object" ? "object" : typeof v;
}

interface Budgeted {
  budget: { left: number };
}

/** startsWith / endsWith off the fast path: the null rule (null decides, nothing else is checked), or a mismatch. */
function affix(x: JSONValue, y: JSONValue, ptr: string, op: string): JSONValue {
  if (x === null || y === null) return nullOutcome(op);
  // both strings is the fast path: one of them is not a string
  throw new EvaluationError("EVALUATION_ERROR", ptr, `${op}: expected a string, got ${typeName(typeof x !== "string" ? x : y)}`);
}

/** concat off the fast path: null → null, strings or arrays, the budget for what it builds. */
function join(vs: JSONValue[], ptr: string, f: Budgeted): JSONValue {
  if (vs.length === 1 && typeof vs[0] === "string") {
    charge(f, vs[0].length >> 6, ptr); // a long result of the two-string fast path
    return vs[0];
  }
  if (vs.some((v) => v === null)) return nullOutcome("concat");
  if (typeof vs[0] === "string") {
    let out = "";
    for (const v of vs) {
      if (typeof v !== "string") throw new EvaluationError("EVALUATION_ERROR", ptr, `concat: expected a string, got ${typeName(v)}`);
      out += v;
    }
    if (out.length > 64) charge(f, out.length >> 6, ptr);
    return out;
  }
  if (Array.isArray(vs[0])) {
    const out: JSONValue[] = [];
    for (const v of vs) {
      if (!Array.isArray(v)) throw new EvaluationError("EVALUATION_ERROR", ptr, `concat: expected an array, got ${typeName(v)}`);
      for (const x of v) out.push(x);
    }
    charge(f, out.length, ptr);
    return out;
  }
  throw new EvaluationError("EVALUATION_ERROR", ptr, `concat: expected strings or arrays, got ${typeName(vs[0])}`);
}
