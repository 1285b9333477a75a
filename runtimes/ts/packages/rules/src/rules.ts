// The rule layer: loading bundles and manifests into a RuleSet, compiling source rulesets into
// bundles, the request shape check and evaluation (evaluation.md).

import {
  JSONObject, JSONValue, JSONSyntaxError, canonicalJSON, depth, duplicateAt, duplicateMember, hasMember, indentedJSON, isObject,
  memberNames, parseJSON, ptrToken, isScalarText,
} from "./json.js";
import { dict } from "./json.js";
import {
  Compiled, Compiler, CustomOperator, DEFAULT_BUDGET, Diagnostic, EvaluationError, MAX_ENV_DEPTH, canonicalValue, compareCodePoints, runWith,
} from "./expr.js";
import * as num from "./num.js";
import {
  Channel, LEVELS, Model, Part, RulesetRef, bundleOf, checksumInput, fieldTypes, manifestOf, parseTemplate, readManifestBody,
  readSource, sortDiagnostics, validTag,
} from "./ruleset.js";
import { sha256Hex } from "./sha256.js";

export type { Channel, RulesetRef };

/** The custom operators a host registers: a Map or a plain object of name → implementation. */
export type Operators = ReadonlyMap<string, CustomOperator> | Readonly<Record<string, CustomOperator>>;

function opMap(ops: Operators | undefined): Map<string, CustomOperator> {
  if (!ops) return new Map();
  if (ops instanceof Map) return new Map(ops);
  return new Map(Object.entries(ops as Record<string, CustomOperator>));
}

/** A load that failed: the first diagnostic's code and pointer, and every diagnostic. */
export class LoadError extends Error {
  readonly code: string;
  readonly pointer: string;
  constructor(readonly diagnostics: Diagnostic[]) {
    super(diagnostics.length ? `${diagnostics[0].code} at ${JSON.stringify(diagnostics[0].pointer)}: ${diagnostics[0].message}` : "load failed");
    this.name = "LoadError";
    this.code = diagnostics[0]?.code ?? "INTERNAL";
    this.pointer = diagnostics[0]?.pointer ?? "";
  }
}

/** A channel requested from a ruleset that lacks it (CHANNEL_UNAVAILABLE). */
export class ChannelError extends Error {
  readonly code = "CHANNEL_UNAVAILABLE";
  readonly pointer = "";
  constructor(channel: string) {
    super(`the ruleset has no ${channel} channel`);
    this.name = "ChannelError";
  }
}

/** An evaluation request refused by the shape check (BAD_REQUEST), thrown by evaluate. */
export class RequestError extends Error {
  readonly code = "BAD_REQUEST";
  constructor(readonly pointer: string, message: string) {
    super(message);
    this.name = "RequestError";
  }
}

/**
 * A document handed over as values, not text (spec/v1/README.md, "Text"): every string and member
 * name must be a sequence of Unicode scalar values, else RequestError (BAD_REQUEST) at its
 * pointer. Text is checked by parseJSON instead.
 */
export function checkHostValue(v: unknown, ptr = ""): void {
  if (typeof v === "string") {
    if (!isScalarText(v)) throw new RequestError(ptr, "a string that is not a sequence of Unicode scalar values (a lone surrogate)");
    return;
  }
  if (typeof v !== "object" || v === null) return;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) checkHostValue(v[i], `${ptr}/${i}`);
    return;
  }
  for (const k of Object.keys(v)) {
    const p = `${ptr}/${ptrToken(k)}`;
    if (!isScalarText(k)) throw new RequestError(p, "a member name that is not a sequence of Unicode scalar values (a lone surrogate)");
    checkHostValue((v as Record<string, unknown>)[k], p);
  }
}

/** A problem of an evaluation request: the pointer of the offending member and a message. */
export interface RequestProblem {
  pointer: string;
  message: string;
}

// --- the request shape check (evaluation.md §1) ----------------------------------------------

const REQUEST_MEMBERS = ["actor", "ctx", "data", "locale", "original", "ruleset", "view"];
const enc = new TextEncoder();

/** Returns the UTF-8 length of s; ASCII needs no encoding. */
function utf8Length(s: string): number {
  return /^[\x00-\x7f]*$/.test(s) ? s.length : enc.encode(s).length;
}

/** Finds the first number beyond double range, member named twice, lone surrogate or non-JSON
 * value inside v, in document order. */
function badValue(v: unknown, ptr: string, seen: number): RequestProblem | null {
  if (v === null || typeof v === "boolean") return null;
  if (typeof v === "number") return Number.isFinite(v) ? null : { pointer: ptr, message: "a number beyond the range of a double" };
  if (typeof v === "string") return isScalarText(v) ? null : { pointer: ptr, message: "a string that is not a sequence of Unicode scalar values (a lone surrogate)" };
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = badValue(v[i], `${ptr}/${i}`, seen + 1);
      if (p) return p;
    }
    return null;
  }
  if (typeof v === "object" && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)) {
    const names = memberNames(v as object);
    const at = duplicateAt(v as object);
    for (let j = 0; j <= names.length; j++) {
      if (j === at) {
        const dup = duplicateMember(v as object)!;
        return { pointer: `${ptr}/${ptrToken(dup)}`, message: `member ${JSON.stringify(dup)} appears more than once` };
      }
      if (j === names.length) break;
      const k = names[j];
      if (!isScalarText(k)) return { pointer: `${ptr}/${ptrToken(k)}`, message: "a member name that is not a sequence of Unicode scalar values (a lone surrogate)" };
      const p = badValue((v as Record<string, unknown>)[k], `${ptr}/${ptrToken(k)}`, seen + 1);
      if (p) return p;
    }
    return null;
  }
  return { pointer: ptr, message: `not a JSON value (${typeof v})` };
}

const surrogates = /[\uD800-\uDFFF]/;

/** The common case in one pass without building pointers: is v a clean root of at most `left` levels? */
function clean(v: unknown, left: number): boolean {
  if (v === null || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (typeof v === "string") return !surrogates.test(v) || isScalarText(v);
  if (left === 0 || typeof v !== "object") return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!clean(v[i], left - 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(v);
  if ((proto !== Object.prototype && proto !== null) || duplicateMember(v) !== undefined) return false;
  for (const k in v) if ((surrogates.test(k) && !isScalarText(k)) || !clean((v as Record<string, unknown>)[k], left - 1)) return false;
  return true;
}

/** Checks one environment root: depth at most 64, numbers in range, no member twice. */
export function rootProblem(name: string, v: unknown): RequestProblem | null {
  if (clean(v, MAX_ENV_DEPTH)) return null;
  const ptr = `/${ptrToken(name)}`;
  if (depth(v as JSONValue, MAX_ENV_DEPTH + 1) > MAX_ENV_DEPTH) return { pointer: ptr, message: `${name} is nested more than ${MAX_ENV_DEPTH} deep` };
  return badValue(v, ptr, 0);
}

/**
 * Checks an environment of roots as the protocol's expression command does (protocol.md): a root
 * named twice; then every root's depth (at most 64), in code point order of names; then each
 * root completely (numbers, members named twice, lone surrogates), in the same order.
 */
export function envProblem(env: JSONObject): RequestProblem | null {
  const dup = duplicateMember(env);
  if (dup !== undefined) return { pointer: `/${ptrToken(dup)}`, message: `env root ${dup} appears more than once` };
  const roots = memberNames(env).slice().sort(compareCodePoints);
  for (const r of roots) {
    if (depth(env[r], MAX_ENV_DEPTH + 1) > MAX_ENV_DEPTH) return { pointer: `/${ptrToken(r)}`, message: `env root ${r} is nested more than ${MAX_ENV_DEPTH} deep` };
  }
  for (const r of roots) {
    const p = rootProblem(r, env[r]);
    if (p) return p;
  }
  return null;
}

/**
 * Returns the first problem of an evaluation request (evaluation.md §1), or null when it passes
 * the shape check. The request may be JSON text or a parsed value. Never throws.
 */
export function requestProblem(request: unknown, rulesetId?: string): RequestProblem | null {
  let req: unknown = request;
  if (typeof request === "string") {
    try {
      req = parseJSON(request);
    } catch (e) {
      return { pointer: "", message: `malformed JSON: ${(e as Error).message}` };
    }
  }
  if (!isObject(req)) return { pointer: "", message: "an evaluation request is a JSON object" };
  // unknown or repeated members, in document order
  const names = memberNames(req);
  const dupAt = duplicateAt(req);
  for (let j = 0; j <= names.length; j++) {
    if (j === dupAt) {
      const dup = duplicateMember(req)!;
      return { pointer: `/${ptrToken(dup)}`, message: `member ${JSON.stringify(dup)} appears more than once` };
    }
    if (j < names.length && !REQUEST_MEMBERS.includes(names[j]))
      return { pointer: `/${ptrToken(names[j])}`, message: `unknown member ${JSON.stringify(names[j])} (allowed: ${REQUEST_MEMBERS.join(", ")})` };
  }
  if (!hasMember(req, "data") || (req as Record<string, unknown>).data === undefined) return { pointer: "", message: "data is required" };
  const r = req as Record<string, unknown>;
  for (const k of REQUEST_MEMBERS) {
    if (!hasMember(r, k) || r[k] === undefined) continue;
    const v = r[k];
    const ptr = `/${k}`;
    switch (k) {
      case "actor":
      case "ctx":
      case "data":
      case "original": {
        if (v !== null && !isObject(v)) return { pointer: ptr, message: `${k} must be a JSON object or null` };
        const p = rootProblem(k, v);
        if (p) return p;
        break;
      }
      case "locale":
        if (v === null) break;
        if (typeof v !== "string" || !validTag(v)) return { pointer: ptr, message: "locale must be a language tag of at most 35 characters" };
        break;
      case "ruleset":
        if (typeof v !== "string" || v === "" || utf8Length(v) > 256) return { pointer: ptr, message: "ruleset must be a non-empty string of at most 256 bytes" };
        if (rulesetId !== undefined && v !== rulesetId) return { pointer: ptr, message: `the request names ruleset ${JSON.stringify(v)}, not ${JSON.stringify(rulesetId)}` };
        break;
      case "view": {
        if (v === null) break;
        if (!isObject(v)) return { pointer: ptr, message: "view must be null or an object with page, screen, section or component" };
        for (const vk of memberNames(v)) {
          if (!(LEVELS as readonly string[]).includes(vk)) return { pointer: `${ptr}/${ptrToken(vk)}`, message: `unknown member ${JSON.stringify(vk)} of view` };
          const s = v[vk];
          if (typeof s !== "string" || s === "" || utf8Length(s) > 256) return { pointer: `${ptr}/${vk}`, message: `view.${vk} must be a non-empty string of at most 256 bytes` };
        }
        const vd = duplicateMember(v);
        if (vd !== undefined) return { pointer: `${ptr}/${ptrToken(vd)}`, message: `member ${JSON.stringify(vd)} appears more than once` };
        break;
      }
    }
  }
  return null;
}

// --- loading ---------------------------------------------------------------------------------

interface CompiledRule {
  id: string;
  code: string;
  severity: string;
  scope: string;
  location: JSONObject;
  target: Model["rules"][0]["target"];
  when: Compiled;
  params: { name: string; ev: Compiled }[];
  key: string;
  missing: boolean;
  /** for target fields: each path, split */
  fields: { path: string; segs: Segs }[] | null;
  /** for a target type: the bound fields in the order of ruleset.md §2 (a many entity's path and field) */
  bound: { path: string; many: boolean; field: string; pathSegs: Segs; fieldSegs: Segs }[] | null;
}

interface CompiledState {
  id: string;
  scope: string;
  location: JSONObject;
  when: Compiled | null;
  effects: { field: string; props: { name: string; ev: Compiled }[] }[];
  missing: boolean;
}

interface ChannelRules {
  manifest: JSONObject;
  model: Model;
  rules: CompiledRule[];
  states: CompiledState[];
  catalogs: Map<string, Map<string, Part[]>>;
  defaultLocale: string;
}

/** Options of a load. */
export interface LoadOptions {
  /** custom operator implementations the host registers */
  operators?: Operators;
  /** a channel the ruleset must have (else CHANNEL_UNAVAILABLE) */
  channel?: Channel;
  /** work budget of one rule run (expressions.md §8) */
  budget?: number;
}

function location(t: Model["rules"][0]["target"]): JSONObject {
  const o: JSONObject = {};
  for (const l of LEVELS) if (t[l] !== undefined) o[l] = t[l]!;
  return o;
}

function compileChannel(model: Model, manifest: JSONObject, ptr: string, registered: Map<string, CustomOperator>, diags: Diagnostic[]): ChannelRules {
  const declared = new Set(model.operators.map((o) => o.name));
  const reg = new Map([...registered].filter(([k]) => declared.has(k)));
  const c = new Compiler({ declared, registered: reg });
  c.defineFunctions(model.functions, `${ptr}/functions`, ["description"]);
  const missing = (x: Compiled) => [...x.ops].some((o) => !reg.has(o));
  const rules: CompiledRule[] = model.rules.map((r) => {
    const when = c.expression(r.when, `${r.ptr}/when`);
    const params = r.params.map((p) => ({ name: p.name, ev: c.expression(p.expr, `${r.ptr}/message/params/${ptrToken(p.name)}`) }));
    let bound: CompiledRule["bound"] = null;
    if (!r.target.fields && r.target.type !== undefined) {
      bound = [];
      // RFC 8785 order of entity names and field paths: UTF-16 code units, as sort() compares
      const ents = [...model.entities].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const e of ents) {
        for (const f of e.fields.filter((x) => x.type === r.target.type).map((x) => x.field).sort())
          bound.push(e.many
            ? { path: e.path, many: true, field: f, pathSegs: segs(e.path), fieldSegs: segs(f) }
            : { path: `${e.path}.${f}`, many: false, field: f, pathSegs: segs(`${e.path}.${f}`), fieldSegs: segs(f) });
      }
    }
    return {
      id: r.id, code: r.code, severity: r.severity, scope: r.scope, location: location(r.target), target: r.target, when, params, key: r.key,
      missing: missing(when) || params.some((p) => missing(p.ev)), bound,
      fields: r.target.fields ? r.target.fields.map((f) => ({ path: f, segs: segs(f) })) : null,
    };
  });
  const states: CompiledState[] = model.stateRules.map((r) => {
    const when = r.when === true ? null : c.expression(r.when, `${r.ptr}/when`);
    const effects = r.effects.map((e, j) => ({
      field: e.field,
      props: e.props.map((p) => ({ name: p.name, ev: c.expression(p.expr, `${r.ptr}/effects/${j}/${p.name}`) })),
    }));
    return {
      id: r.id, scope: r.scope, location: location(r.target), when, effects,
      missing: (when !== null && missing(when)) || effects.some((e) => e.props.some((p) => missing(p.ev))),
    };
  });
  diags.push(...c.diags);
  const catalogs = new Map<string, Map<string, Part[]>>();
  for (const cat of model.locales) {
    const m = new Map<string, Part[]>();
    for (const [k, v] of cat.messages) {
      const parts = parseTemplate(v);
      if (typeof parts !== "string") m.set(k, parts);
    }
    catalogs.set(cat.tag.toLowerCase(), m);
  }
  return { manifest, model, rules, states, catalogs, defaultLocale: model.defaultLocale.toLowerCase() };
}

function bad(diags: Diagnostic[], pointer: string, message: string, code = "BUNDLE_INVALID"): void {
  diags.push({ code, pointer, message });
}

/** Checks formatVersion; returns false when the rest must not be read. */
function formatVersion(n: JSONObject, ptr: string, diags: Diagnostic[]): boolean {
  if (!hasMember(n, "formatVersion")) {
    bad(diags, ptr, "formatVersion is missing");
    return false;
  }
  const v = n.formatVersion;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    bad(diags, `${ptr}/formatVersion`, "formatVersion must be a positive integer");
    return false;
  }
  if (v !== 1) {
    bad(diags, `${ptr}/formatVersion`, `formatVersion ${v} is not supported (this runtime reads 1)`, "BUNDLE_UNSUPPORTED");
    return false;
  }
  return true;
}

function readRef(n: JSONValue | undefined, ptr: string, diags: Diagnostic[]): RulesetRef | null {
  if (!isObject(n)) {
    bad(diags, ptr, "ruleset must be an object {id, version, checksum}");
    return null;
  }
  const out: Partial<RulesetRef> = {};
  let ok = true;
  const dup = duplicateMember(n);
  if (dup !== undefined) {
    bad(diags, `${ptr}/${ptrToken(dup)}`, `member ${JSON.stringify(dup)} appears more than once`);
    ok = false;
  }
  for (const k of memberNames(n)) {
    if (k !== "id" && k !== "version" && k !== "checksum") {
      bad(diags, `${ptr}/${ptrToken(k)}`, `unknown member ${JSON.stringify(k)} in the ruleset reference`);
      ok = false;
      continue;
    }
    const v = n[k];
    if (typeof v !== "string" || v === "") {
      bad(diags, `${ptr}/${k}`, `${k} must be a non-empty string`);
      ok = false;
      continue;
    }
    out[k] = v;
  }
  if (!out.id || !out.version || !out.checksum) {
    if (ok) bad(diags, ptr, "the ruleset reference needs id, version and checksum");
    return null;
  }
  if (!/^sha256:[0-9a-f]{64}$/.test(out.checksum)) {
    bad(diags, `${ptr}/checksum`, "checksum must be sha256: followed by 64 lower-case hex digits");
    return null;
  }
  return ok ? (out as RulesetRef) : null;
}

interface ReadManifest {
  channel: Channel;
  ref: RulesetRef;
  model: Model;
  json: JSONObject;
  ptr: string;
}

function readManifest(n: JSONValue | undefined, ptr: string, diags: Diagnostic[]): ReadManifest | null {
  if (!isObject(n)) {
    bad(diags, ptr, "a manifest must be a JSON object");
    return null;
  }
  if (!formatVersion(n, ptr, diags)) return null;
  let channel: Channel | null = null;
  const ch = n.channel;
  if (ch !== "server" && ch !== "client") bad(diags, `${ptr}/channel`, 'channel must be "server" or "client"');
  else channel = ch;
  const ref = readRef(n.ruleset, `${ptr}/ruleset`, diags);
  const r = readManifestBody(n, ptr);
  diags.push(...r.diags);
  if (!r.model) return null;
  const model = r.model;
  if (ref) {
    model.id = ref.id;
    model.version = ref.version;
  }
  const ft = n.fieldTypes;
  if (!isObject(ft)) bad(diags, `${ptr}/fieldTypes`, "fieldTypes must be an object");
  else if (duplicateMember(ft) !== undefined)
    bad(diags, `${ptr}/fieldTypes/${ptrToken(duplicateMember(ft)!)}`, `member ${JSON.stringify(duplicateMember(ft))} appears more than once`);
  else if (r.diags.length === 0 && canonicalJSON(ft) !== canonicalJSON(fieldTypes(model)))
    bad(diags, `${ptr}/fieldTypes`, "fieldTypes does not match the fieldTypes of the entities");
  if (channel) {
    for (const ru of model.rules) if (!ru.channels.includes(channel)) bad(diags, `${ru.ptr}/channels`, `the rule does not belong to channel ${channel}`);
    for (const ru of model.stateRules) if (!ru.channels.includes(channel)) bad(diags, `${ru.ptr}/channels`, `the state rule does not belong to channel ${channel}`);
  }
  if (!ref || !channel) return null;
  return { channel, ref, model, json: n, ptr };
}

function toValue(doc: unknown): JSONValue {
  if (typeof doc === "string") {
    try {
      return parseJSON(doc);
    } catch (e) {
      throw new LoadError([{ code: "BUNDLE_INVALID", pointer: "", message: `malformed JSON: ${(e as JSONSyntaxError).message}` }]);
    }
  }
  checkHostValue(doc);
  return doc as JSONValue;
}

/** The result of an evaluation (evaluation.md §7). */
export interface EvaluationResult {
  ruleset: RulesetRef;
  findings: Finding[];
  states: Record<string, Record<string, JSONValue>>;
}

/** One finding (evaluation.md §4). */
export interface Finding {
  code: string;
  severity: string;
  message: string;
  field?: string;
  rule: string;
  location: { page?: string; screen?: string; section?: string; component?: string };
}

/** An evaluation request (evaluation.md §1). */
export interface EvaluationRequest {
  ruleset?: string;
  data: JSONObject | null;
  original?: JSONObject | null;
  actor?: JSONObject | null;
  ctx?: JSONObject | null;
  view?: { page?: string; screen?: string; section?: string; component?: string } | null;
  locale?: string | null;
}

/** A loaded ruleset: one or two channels, ready to evaluate. */
export class RuleSet {
  /** the custom operators the ruleset declares, sorted */
  readonly requiredOperators: string[];
  /** the declared custom operators the host has not registered, sorted */
  readonly missingOperators: string[];
  private readonly budget: number;

  private constructor(readonly ref: RulesetRef, private readonly chans: Map<Channel, ChannelRules>, registered: Map<string, CustomOperator>, budget: number) {
    const any = [...chans.values()][0];
    this.requiredOperators = any.model.operators.map((o) => o.name).sort();
    this.missingOperators = this.requiredOperators.filter((o) => !registered.has(o));
    this.budget = budget;
  }

  /** The channels of the ruleset, sorted. */
  get channels(): Channel[] {
    return [...this.chans.keys()].sort();
  }

  /** Loads a bundle (JSON text or value); throws LoadError or ChannelError. */
  static fromBundle(bundle: unknown, opts: LoadOptions = {}): RuleSet {
    const n = toValue(bundle);
    const diags: Diagnostic[] = [];
    if (!isObject(n)) throw new LoadError([{ code: "BUNDLE_INVALID", pointer: "", message: "a bundle must be a JSON object" }]);
    if (!formatVersion(n, "", diags)) throw new LoadError(diags);
    for (const k of memberNames(n)) {
      if (!["formatVersion", "ruleset", "server", "client"].includes(k)) bad(diags, `/${ptrToken(k)}`, `unknown member ${JSON.stringify(k)} in a bundle`);
    }
    const dup = duplicateMember(n);
    if (dup !== undefined) bad(diags, `/${ptrToken(dup)}`, `member ${JSON.stringify(dup)} appears more than once`);
    const ref = readRef(n.ruleset, "/ruleset", diags);
    const read: ReadManifest[] = [];
    for (const ch of ["server", "client"] as Channel[]) {
      if (!hasMember(n, ch)) {
        bad(diags, "", `the bundle lacks the ${ch} manifest`);
        continue;
      }
      const m = readManifest(n[ch], `/${ch}`, diags);
      if (!m) continue;
      if (m.channel !== ch) bad(diags, `/${ch}/channel`, `the ${ch} manifest says channel ${m.channel}`);
      if (ref && (m.ref.id !== ref.id || m.ref.version !== ref.version || m.ref.checksum !== ref.checksum))
        bad(diags, `/${ch}/ruleset`, `the ${ch} manifest names a different ruleset than the bundle`);
      read.push(m);
    }
    if (diags.length > 0 || !ref) throw new LoadError(sortDiagnostics(diags));
    return RuleSet.build(ref, read, opts);
  }

  /** Loads one channel's manifest (JSON text or value); throws LoadError or ChannelError. */
  static fromManifest(manifest: unknown, opts: LoadOptions = {}): RuleSet {
    const n = toValue(manifest);
    const diags: Diagnostic[] = [];
    const m = readManifest(n, "", diags);
    if (diags.length > 0 || !m) throw new LoadError(sortDiagnostics(diags.length ? diags : [{ code: "BUNDLE_INVALID", pointer: "", message: "not a manifest" }]));
    return RuleSet.build(m.ref, [m], opts);
  }

  private static build(ref: RulesetRef, read: ReadManifest[], opts: LoadOptions): RuleSet {
    const registered = opMap(opts.operators);
    const diags: Diagnostic[] = [];
    const chans = new Map<Channel, ChannelRules>();
    for (const m of read) chans.set(m.channel, compileChannel(m.model, m.json, m.ptr, registered, diags));
    if (diags.length > 0) throw new LoadError(sortDiagnostics(diags));
    if (opts.channel && !chans.has(opts.channel)) throw new ChannelError(opts.channel);
    const declared = new Set(read[0].model.operators.map((o) => o.name));
    return new RuleSet(ref, chans, new Map([...registered].filter(([k]) => declared.has(k))), opts.budget ?? DEFAULT_BUDGET);
  }

  /** Returns the manifest of a channel as JSON; throws ChannelError when the ruleset lacks it. */
  manifest(channel: Channel): JSONObject {
    const c = this.chans.get(channel);
    if (!c) throw new ChannelError(channel);
    return c.manifest;
  }

  /** Returns the problem of a request for this ruleset, or null (see requestProblem). */
  requestProblem(request: unknown): RequestProblem | null {
    return requestProblem(request, this.ref.id);
  }

  /**
   * Evaluates a request on a channel (default: server, or the only channel of a manifest).
   * Throws RequestError when the request fails the shape check and ChannelError for a
   * channel the ruleset lacks; never throws once the request passed.
   */
  evaluate(request: EvaluationRequest | JSONObject | string, channel?: Channel): EvaluationResult {
    const req = typeof request === "string" ? (() => {
      try {
        return parseJSON(request);
      } catch (e) {
        throw new RequestError("", `malformed JSON: ${(e as Error).message}`);
      }
    })() : request;
    const p = requestProblem(req, this.ref.id);
    if (p) throw new RequestError(p.pointer, p.message);
    const ch = channel ?? (this.chans.has("server") ? "server" : [...this.chans.keys()][0]);
    const c = this.chans.get(ch);
    if (!c) throw new ChannelError(ch);
    return evaluateChannel(this.ref, c, req as JSONObject, this.budget);
  }
}

function get(o: JSONObject, k: string): JSONValue {
  return hasMember(o, k) ? (o[k] ?? null) : null;
}

/** A dot path split once: each segment with its array index (-1 when not a run of digits). */
type Segs = { s: string; i: number }[];

function segs(path: string): Segs {
  return path.split(".").map((s) => ({ s, i: /^[0-9]+$/.test(s) ? Number(s) : -1 }));
}

/** Reads a split path from a value with the variable rules of expressions.md §3. */
function readSegs(v: JSONValue, path: Segs): JSONValue {
  for (let k = 0; k < path.length; k++) {
    if (v === null || typeof v !== "object") return null;
    const { s, i } = path[k];
    if (Array.isArray(v)) v = i >= 0 && i < v.length ? v[i] : null;
    else if (s === "__proto__") v = hasMember(v, s) ? v[s] : null;
    else {
      const w = v[s];
      // JSON holds no functions: a function is inherited from Object.prototype, so absent
      v = w === undefined || typeof w === "function" ? null : w;
    }
  }
  return v ?? null;
}

function inView(scope: string, loc: JSONObject, view: JSONObject | null): boolean {
  if (!view || scope === "project" || scope === "module") return true;
  for (const l of LEVELS) {
    const a = hasMember(view, l) ? view[l] : undefined;
    const b = hasMember(loc, l) ? loc[l] : undefined;
    if (a !== undefined && b !== undefined && a !== b) return false;
    if (l === scope) break;
  }
  return true;
}

/** Writes a parameter as text (evaluation.md §4). */
function paramText(v: JSONValue, ptr: string): string {
  if (v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return String(v);
  if (typeof v === "number") {
    try {
      return num.numText(v);
    } catch {
      throw new EvaluationError("EVALUATION_ERROR", ptr, "a number beyond the range of a double on the way out");
    }
  }
  return canonicalJSON(canonicalValue(v, ptr));
}

function evaluateChannel(ref: RulesetRef, c: ChannelRules, req: JSONObject, budget: number): EvaluationResult {
  const data = get(req, "data");
  const base: JSONObject = { data, original: get(req, "original"), actor: get(req, "actor"), ctx: get(req, "ctx") };
  const view = isObject(req.view) ? req.view : null;
  const locale = typeof req.locale === "string" ? req.locale.toLowerCase() : null;
  const chain: string[] = [];
  if (locale) {
    const parts = locale.split("-");
    for (let k = parts.length; k > 0; k--) chain.push(parts.slice(0, k).join("-"));
  }
  chain.push(c.defaultLocale);
  const template = (key: string): Part[] | null => {
    for (const t of chain) {
      const m = c.catalogs.get(t)?.get(key);
      if (m) return m;
    }
    return null;
  };
  const format = (parts: Part[], values: Map<string, string>) =>
    parts.map((p) => (p.param ? (values.has(p.text) ? values.get(p.text)! : `{${p.text}}`) : p.text)).join("");
  const findings: Finding[] = [];
  const failed = (rule: string, reason: string, loc: JSONObject, field: string | null): Finding => {
    const t = template("RULE_FAILED");
    const vals = new Map([["rule", rule], ["reason", reason]]);
    if (field !== null) vals.set("field", field);
    const message = t ? format(t, vals) : `rule ${rule} failed closed: ${reason}`;
    const f: Finding = { code: "RULE_FAILED", severity: "error", rule, message, location: loc };
    if (field !== null) f.field = field;
    return f;
  };
  for (const r of c.rules) {
    if (!inView(r.scope, r.location, view)) continue;
    const runs: (string | null)[] = [];
    const values: JSONValue[] = [];
    if (r.fields) {
      for (const f of r.fields) {
        if (!f.segs.some((x) => x.s === "*")) {
          runs.push(f.path);
          values.push(readSegs(data, f.segs));
          continue;
        }
        // a wildcard field: one run per element of an array at each "*" (ruleset.md §3)
        const expand = (v: JSONValue, k: number, path: string) => {
          for (; k < f.segs.length; k++) {
            const seg = f.segs[k];
            if (seg.s === "*") {
              if (Array.isArray(v)) for (let i = 0; i < v.length; i++) expand(v[i], k + 1, path === "" ? String(i) : `${path}.${i}`);
              return;
            }
            v = readSegs(v, [seg]);
            path = path === "" ? seg.s : `${path}.${seg.s}`;
          }
          runs.push(path);
          values.push(v);
        };
        expand(data, 0, "");
      }
    } else if (r.bound) {
      for (const b of r.bound) {
        if (!b.many) {
          runs.push(b.path);
          values.push(readSegs(data, b.pathSegs));
        } else {
          const list = readSegs(data, b.pathSegs);
          if (Array.isArray(list))
            for (let i = 0; i < list.length; i++) {
              runs.push(`${b.path}.${i}.${b.field}`);
              values.push(readSegs(list[i], b.fieldSegs));
            }
        }
      }
    } else {
      runs.push(null);
      values.push(null);
    }
    for (let k = 0; k < runs.length; k++) {
      const field = runs[k];
      if (r.missing) {
        findings.push(failed(r.id, "OPERATOR_UNAVAILABLE", r.location, field));
        continue;
      }
      const roots: JSONObject = field === null ? base : { data, original: base.original, actor: base.actor, ctx: base.ctx, value: values[k], field };
      const b = { left: budget };
      try {
        const w = runWith(r.when, roots, b);
        if (w === null || w === false) continue;
        if (w !== true) throw new EvaluationError("EVALUATION_ERROR", r.when === undefined ? "" : "", "when is not a boolean or null");
        const values = new Map<string, string>();
        if (field !== null) {
          values.set("field", field);
          values.set("value", paramText(roots.value as JSONValue, ""));
        }
        for (const p of r.params) values.set(p.name, paramText(runWith(p.ev, roots, b), ""));
        const t = template(r.key);
        const f: Finding = { code: r.code, severity: r.severity, message: t ? format(t, values) : r.key, rule: r.id, location: r.location };
        if (field !== null) f.field = field;
        findings.push(f);
      } catch (e) {
        if (!(e instanceof EvaluationError)) throw e;
        findings.push(failed(r.id, e.code, r.location, field));
      }
    }
  }
  const states: Record<string, Record<string, JSONValue>> = dict();
  for (const s of c.states) {
    if (!inView(s.scope, s.location, view)) continue;
    if (s.missing) {
      findings.push(failed(s.id, "OPERATOR_UNAVAILABLE", s.location, null));
      continue;
    }
    const b = { left: budget };
    try {
      const w = s.when ? runWith(s.when, base, b) : true;
      if (w === null || w === false) continue;
      if (w !== true) throw new EvaluationError("EVALUATION_ERROR", "", "when is not a boolean or null");
      const apply: [string, string, JSONValue][] = [];
      for (const e of s.effects) {
        for (const p of e.props) {
          let v = runWith(p.ev, base, b);
          if (p.name === "value") v = canonicalValue(v, "");
          else if (typeof v !== "boolean") throw new EvaluationError("EVALUATION_ERROR", "", `${p.name} must be a boolean`);
          apply.push([e.field, p.name, v]);
        }
      }
      for (const [field, prop, v] of apply) {
        if (!hasMember(states, field)) states[field] = dict();
        states[field][prop] = v;
      }
    } catch (e) {
      if (!(e instanceof EvaluationError)) throw e;
      findings.push(failed(s.id, e.code, s.location, null));
    }
  }
  return { ruleset: { ...ref }, findings, states };
}

// --- the compiler ----------------------------------------------------------------------------

/** A compiled source ruleset: its reference, the bundle as JSON and its bytes as text. */
export interface CompiledBundle {
  ruleset: RulesetRef;
  bundle: JSONObject;
  /** RFC 8785 member order, two-space indentation, final newline (ruleset.md §9) */
  text: string;
}

/** Options of the compiler. */
export interface CompileOptions {
  /** custom operators the host registers (only checks that they load; bundles do not carry code) */
  operators?: Operators;
}

/**
 * Compiles a source ruleset document (JSON text or value) into a bundle. Schema validation stops
 * at the first problem and reports only that one; later load errors are all reported. Throws
 * LoadError.
 */
export function bundle(source: unknown, _opts: CompileOptions = {}): CompiledBundle {
  let doc: JSONValue;
  if (typeof source === "string") {
    try {
      doc = parseJSON(source);
    } catch (e) {
      throw new LoadError([{ code: "RULESET_INVALID", pointer: "", message: `malformed JSON: ${(e as Error).message}` }]);
    }
  } else {
    checkHostValue(source);
    doc = source as JSONValue;
  }
  const r = readSource(doc);
  const diags = [...r.diags];
  if (!r.model) throw new LoadError(sortDiagnostics(diags));
  const model = r.model;
  // expressions, as they are loaded from the source (pointers from the document root)
  compileChannel(model, {}, "/ruleset", new Map(), diags);
  if (diags.length > 0) throw new LoadError(sortDiagnostics(diags));
  const ref: RulesetRef = { id: model.id, version: model.version, checksum: "sha256:" + sha256Hex(checksumInput(model)) };
  const b = bundleOf(model, ref);
  return { ruleset: ref, bundle: b, text: indentedJSON(b) };
}

export { manifestOf };
