// Rulesets, bundles and manifests (ruleset.md): the structural reader shared by source rulesets
// (RULESET_INVALID) and manifests (BUNDLE_INVALID), the cross-member checks, the resolved form
// and its checksum, and the compiled bundle.

import { JSONObject, JSONValue, canonicalJSON, duplicateMember, hasMember, isObject, memberNames, ptrToken } from "./json.js";
import { dict } from "./json.js";
import { Diagnostic } from "./expr.js";

export const LEVELS = ["page", "screen", "section", "component"] as const;
export const SCOPES = ["project", "module", ...LEVELS];
export const BASES = ["string", "number", "integer", "boolean", "date", "datetime", "object", "array"];
export const STATE_PROPS = ["hidden", "disabled", "required", "readOnly", "value"];
const RULESET_MEMBERS = ["id", "version", "description", "defaultLocale", "types", "entities", "functions", "operators", "rules", "stateRules", "locales"];

export type Channel = "server" | "client";

export interface Target {
  page?: string;
  screen?: string;
  section?: string;
  component?: string;
  fields?: string[];
  type?: string;
}

export interface Rule {
  ptr: string;
  id: string;
  description?: string;
  scope: string;
  channels: Channel[];
  severity: string;
  code: string;
  target: Target;
  when: JSONValue;
  key: string;
  params: { name: string; expr: JSONValue }[];
}

export interface StateRule {
  ptr: string;
  id: string;
  description?: string;
  scope: string;
  channels: Channel[];
  target: Target;
  when: JSONValue;
  effects: { field: string; props: { name: string; expr: JSONValue }[] }[];
}

export interface Model {
  ptr: string;
  id: string;
  version: string;
  description?: string;
  defaultLocale: string;
  types: { name: string; base: string; description?: string }[];
  entities: { name: string; path: string; many: boolean; description?: string; fields: { field: string; type: string; ptr: string }[] }[];
  functions: JSONObject;
  functionDescriptions: Map<string, JSONValue>;
  operators: { name: string; description?: string }[];
  rules: Rule[];
  stateRules: StateRule[];
  locales: { tag: string; messages: Map<string, string> }[];
}

/** Thrown to stop a source's schema validation at its first problem. */
class StopSchema extends Error {}

const enc = new TextEncoder();
/** Returns the UTF-8 length of s (limits are in bytes); ASCII needs no encoding. */
function bytes(s: string): number {
  return /^[\x00-\x7f]*$/.test(s) ? s.length : enc.encode(s).length;
}

/** Reports whether s is a language tag of ruleset.md §1. */
export function validTag(s: string): boolean {
  return s.length <= 35 && /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(s);
}

function validName(s: string): boolean {
  return s.length <= 128 && /^[A-Za-z][A-Za-z0-9_]*$/.test(s);
}

/** Reports whether s is a dot path: segments separated by '.', none empty. */
export function validPath(s: string): boolean {
  return s !== "" && s.split(".").every((x) => x !== "");
}

function kind(v: JSONValue | undefined): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  return `a ${typeof v}`;
}

/** A template part: literal text or a placeholder. */
export type Part = { text: string; param: boolean };

/** Parses a message template; returns its parts or the problem (ruleset.md §5). */
export function parseTemplate(s: string): Part[] | string {
  const parts: Part[] = [];
  let text = "";
  for (let i = 0; i < s.length; ) {
    const c = s[i];
    if (c === "{" && s[i + 1] === "{") {
      text += "{";
      i += 2;
    } else if (c === "}" && s[i + 1] === "}") {
      text += "}";
      i += 2;
    } else if (c === "}") return "a lone '}' (write '}}')";
    else if (c === "{") {
      const j = s.indexOf("}", i + 1);
      if (j < 0) return "an unclosed '{' (write '{{' for a brace)";
      const name = s.slice(i + 1, j);
      if (!validName(name)) return "a placeholder must be {name}: a letter, then letters, digits or '_'";
      if (text) parts.push({ text, param: false });
      text = "";
      parts.push({ text: name, param: true });
      i = j + 1;
    } else {
      text += c;
      i++;
    }
  }
  if (text) parts.push({ text, param: false });
  return parts;
}

interface Mode {
  code: "RULESET_INVALID" | "BUNDLE_INVALID";
  manifest: boolean;
  stopAtFirst: boolean;
}

class Reader {
  /** structural problems (the schema's) */
  readonly schema: Diagnostic[] = [];
  /** problems of the checks that follow the schema */
  readonly checks: Diagnostic[] = [];
  bodyPtr = "";
  constructor(readonly mode: Mode) {}

  errf(pointer: string, message: string): void {
    this.schema.push({ code: this.mode.code, pointer, message });
    if (this.mode.stopAtFirst) throw new StopSchema();
  }

  check(code: string, pointer: string, message: string): void {
    this.checks.push({ code, pointer, message });
  }

  fields(n: JSONValue | undefined, ptr: string, what: string, allowed: string[], required: string[], extra: string[] = []): Map<string, JSONValue> | null {
    if (!isObject(n)) {
      this.errf(ptr, `${what} must be an object, got ${kind(n)}`);
      return null;
    }
    const out = new Map<string, JSONValue>();
    for (const k of memberNames(n)) {
      if (!allowed.includes(k)) {
        if (extra.includes(k)) continue;
        this.errf(`${ptr}/${ptrToken(k)}`, `unknown member ${JSON.stringify(k)} in ${what} (allowed: ${allowed.join(", ")})`);
        continue;
      }
      out.set(k, n[k]);
    }
    const dup = duplicateMember(n);
    if (dup !== undefined) this.errf(`${ptr}/${ptrToken(dup)}`, `member ${JSON.stringify(dup)} appears more than once`);
    for (const r of required) if (!out.has(r)) this.errf(ptr, `${what} lacks the required member ${JSON.stringify(r)}`);
    return out;
  }

  str(n: JSONValue | undefined, ptr: string, what: string, max = 0): string | undefined {
    if (n === undefined) return undefined;
    if (typeof n !== "string") {
      this.errf(ptr, `${what} must be a string, got ${kind(n)}`);
      return undefined;
    }
    if (n === "") {
      this.errf(ptr, `${what} must not be empty`);
      return undefined;
    }
    if (max > 0 && bytes(n) > max) {
      this.errf(ptr, `${what} must be at most ${max} bytes`);
      return undefined;
    }
    return n;
  }

  /** description: any string, empty included */
  desc(n: JSONValue | undefined, ptr: string): string | undefined {
    if (n === undefined) return undefined;
    if (typeof n !== "string") {
      this.errf(ptr, `description must be a string, got ${kind(n)}`);
      return undefined;
    }
    return n;
  }

  members(n: JSONValue | undefined, ptr: string, what: string, dupCode?: string): [string, JSONValue][] {
    if (n === undefined) return [];
    if (!isObject(n)) {
      this.errf(ptr, `${what} must be an object, got ${kind(n)}`);
      return [];
    }
    const dup = duplicateMember(n);
    if (dup !== undefined) {
      // the specific code wins over RULESET_INVALID (ruleset.md §2: a field bound twice)
      if (dupCode) this.check(dupCode, `${ptr}/${ptrToken(dup)}`, `${JSON.stringify(dup)} appears more than once in ${what}`);
      else this.errf(`${ptr}/${ptrToken(dup)}`, `${JSON.stringify(dup)} appears more than once in ${what}`);
    }
    return memberNames(n).map((k) => [k, n[k]]);
  }

  items(n: JSONValue | undefined, ptr: string, what: string): JSONValue[] {
    if (n === undefined) return [];
    if (!Array.isArray(n)) {
      this.errf(ptr, `${what} must be an array, got ${kind(n)}`);
      return [];
    }
    return n;
  }

  body(n: JSONValue | undefined, ptr: string, extra: string[]): Model | null {
    this.bodyPtr = ptr;
    const allowed = this.mode.manifest ? RULESET_MEMBERS.slice(2) : RULESET_MEMBERS;
    const required = this.mode.manifest
      ? ["defaultLocale", "types", "entities", "functions", "operators", "rules", "stateRules", "locales"]
      : ["id", "version", "defaultLocale"];
    const m = this.fields(n, ptr, "the ruleset", allowed, required, extra);
    if (!m) return null;
    const rs: Model = {
      ptr, id: "", version: "", defaultLocale: "", types: [], entities: [], functions: {}, functionDescriptions: new Map(),
      operators: [], rules: [], stateRules: [], locales: [],
    };
    if (!this.mode.manifest) {
      rs.id = this.str(m.get("id"), `${ptr}/id`, "id", 256) ?? "";
      rs.version = this.str(m.get("version"), `${ptr}/version`, "version", 64) ?? "";
    }
    rs.description = this.desc(m.get("description"), `${ptr}/description`);
    const loc = this.str(m.get("defaultLocale"), `${ptr}/defaultLocale`, "defaultLocale", 35);
    if (loc !== undefined) {
      if (!validTag(loc)) this.errf(`${ptr}/defaultLocale`, `defaultLocale ${JSON.stringify(loc)} is not a language tag`);
      rs.defaultLocale = loc;
    }
    this.types(m.get("types"), `${ptr}/types`, rs);
    this.entities(m.get("entities"), `${ptr}/entities`, rs);
    this.functions(m.get("functions"), `${ptr}/functions`, rs);
    this.operators(m.get("operators"), `${ptr}/operators`, rs);
    this.rules(m.get("rules"), `${ptr}/rules`, rs);
    this.stateRules(m.get("stateRules"), `${ptr}/stateRules`, rs);
    this.locales(m.get("locales"), `${ptr}/locales`, rs);
    return rs;
  }

  types(n: JSONValue | undefined, ptr: string, rs: Model): void {
    for (const [k, v] of this.members(n, ptr, "types")) {
      const tp = `${ptr}/${ptrToken(k)}`;
      if (!validName(k)) {
        this.errf(tp, `type name ${JSON.stringify(k)} must be a letter followed by letters, digits or '_'`);
        continue;
      }
      const f = this.fields(v, tp, "a type", ["base", "description"], []);
      const t: Model["types"][0] = { name: k, base: "string" };
      if (f) {
        const b = this.str(f.get("base"), `${tp}/base`, "base");
        if (b !== undefined) {
          if (!BASES.includes(b)) this.check("TYPE_UNKNOWN", `${tp}/base`, `base ${JSON.stringify(b)} is not one of ${BASES.join(", ")}`);
          t.base = b;
        }
        t.description = this.desc(f.get("description"), `${tp}/description`);
      }
      rs.types.push(t);
    }
  }

  entities(n: JSONValue | undefined, ptr: string, rs: Model): void {
    for (const [k, v] of this.members(n, ptr, "entities")) {
      const ep = `${ptr}/${ptrToken(k)}`;
      if (!validName(k)) {
        this.errf(ep, `entity name ${JSON.stringify(k)} must be a letter followed by letters, digits or '_'`);
        continue;
      }
      const f = this.fields(v, ep, "an entity", ["path", "many", "description", "fieldTypes"], ["fieldTypes"]);
      if (!f) continue;
      const e: Model["entities"][0] = { name: k, path: k, many: false, fields: [] };
      const p = this.str(f.get("path"), `${ep}/path`, "path");
      if (p !== undefined) {
        if (!validPath(p)) this.errf(`${ep}/path`, `path ${JSON.stringify(p)} must be segments separated by '.', none empty`);
        e.path = p;
      }
      const many = f.get("many");
      if (many !== undefined) {
        if (typeof many !== "boolean") this.errf(`${ep}/many`, "many must be a boolean");
        else e.many = many;
      }
      e.description = this.desc(f.get("description"), `${ep}/description`);
      for (const [fk, fv] of this.members(f.get("fieldTypes"), `${ep}/fieldTypes`, "fieldTypes", "FIELD_TYPE_REBOUND")) {
        const fp = `${ep}/fieldTypes/${ptrToken(fk)}`;
        if (!validPath(fk)) {
          this.errf(fp, `field ${JSON.stringify(fk)} must be segments separated by '.', none empty`);
          continue;
        }
        const tn = this.str(fv, fp, "a field type");
        if (tn === undefined) continue;
        if (!validName(tn)) this.errf(fp, `type name ${JSON.stringify(tn)} must be a letter followed by letters, digits or '_'`);
        e.fields.push({ field: fk, type: tn, ptr: fp });
      }
      rs.entities.push(e);
    }
  }

  functions(n: JSONValue | undefined, ptr: string, rs: Model): void {
    if (n === undefined) return;
    if (!isObject(n)) {
      this.errf(ptr, `functions must be an object, got ${kind(n)}`);
      return;
    }
    // definitions are checked by the expression compiler (FUNCTION_* codes); only the
    // description is the ruleset's
    rs.functions = n;
    for (const k of memberNames(n)) {
      const d = n[k];
      if (isObject(d) && hasMember(d, "description")) {
        if (typeof d.description !== "string") this.errf(`${ptr}/${ptrToken(k)}/description`, "description must be a string");
        rs.functionDescriptions.set(k, d.description);
      }
    }
  }

  operators(n: JSONValue | undefined, ptr: string, rs: Model): void {
    for (const [k, v] of this.members(n, ptr, "operators")) {
      const op = `${ptr}/${ptrToken(k)}`;
      if (!(k.startsWith("x-") && k.length > 2)) {
        this.errf(op, `custom operator ${JSON.stringify(k)} must be named x-...`);
        continue;
      }
      const f = this.fields(v, op, "an operator declaration", ["description"], []);
      rs.operators.push({ name: k, description: f ? this.desc(f.get("description"), `${op}/description`) : undefined });
    }
  }

  channels(n: JSONValue | undefined, ptr: string): Channel[] {
    if (n === undefined) return ["server", "client"];
    const out: Channel[] = [];
    const items = this.items(n, ptr, "channels");
    if (Array.isArray(n) && n.length === 0) this.errf(ptr, "channels must list at least one channel");
    items.forEach((it, i) => {
      const ip = `${ptr}/${i}`;
      const s = this.str(it, ip, "a channel");
      if (s === undefined) return;
      if (s !== "server" && s !== "client") {
        this.errf(ip, `channel ${JSON.stringify(s)} is not server or client`);
        return;
      }
      if (out.includes(s)) {
        this.errf(ip, `channel ${JSON.stringify(s)} is listed twice`);
        return;
      }
      out.push(s);
    });
    return out.includes("server") && out.includes("client") ? ["server", "client"] : out;
  }

  target(n: JSONValue | undefined, ptr: string, state: boolean): Target {
    const t: Target = {};
    if (n === undefined) return t;
    const allowed = state ? [...LEVELS] : [...LEVELS, "fields", "type"];
    const f = this.fields(n, ptr, "a target", allowed, []);
    if (!f) return t;
    for (const l of LEVELS) {
      const s = this.str(f.get(l), `${ptr}/${l}`, l, 256);
      if (s !== undefined) t[l] = s;
    }
    const fv = f.get("fields");
    if (fv !== undefined) {
      const fields: string[] = [];
      if (Array.isArray(fv) && fv.length === 0) this.errf(`${ptr}/fields`, "fields must list at least one field");
      this.items(fv, `${ptr}/fields`, "fields").forEach((it, i) => {
        const ip = `${ptr}/fields/${i}`;
        const s = this.str(it, ip, "a field");
        if (s === undefined) return;
        if (!validPath(s)) {
          this.errf(ip, `field ${JSON.stringify(s)} must be segments separated by '.', none empty`);
          return;
        }
        if (fields.includes(s)) {
          this.errf(ip, `field ${JSON.stringify(s)} is listed twice`);
          return;
        }
        fields.push(s);
      });
      t.fields = fields;
    }
    const ty = this.str(f.get("type"), `${ptr}/type`, "type");
    if (ty !== undefined) {
      if (!validName(ty)) this.errf(`${ptr}/type`, `type name ${JSON.stringify(ty)} must be a letter followed by letters, digits or '_'`);
      t.type = ty;
      if (fv !== undefined) this.errf(ptr, "a target names fields or a type, not both");
    }
    return t;
  }

  scope(n: JSONValue | undefined, ptr: string, t: Target): string {
    if (n === undefined) {
      let s = "project";
      for (const l of LEVELS) if (t[l] !== undefined) s = l;
      return s;
    }
    const s = this.str(n, ptr, "scope");
    if (s === undefined) return "project";
    if (!SCOPES.includes(s)) {
      this.check("SCOPE_INVALID", ptr, `scope ${JSON.stringify(s)} is not one of ${SCOPES.join(", ")}`);
      return s;
    }
    if ((LEVELS as readonly string[]).includes(s) && t[s as (typeof LEVELS)[number]] === undefined)
      this.check("SCOPE_INVALID", ptr, `scope ${s} is a level the target does not name`);
    return s;
  }

  rules(n: JSONValue | undefined, ptr: string, rs: Model): void {
    const members = ["id", "description", "scope", "channels", "severity", "code", "target", "when", "message"];
    this.items(n, ptr, "rules").forEach((it, i) => {
      const rp = `${ptr}/${i}`;
      const f = this.fields(it, rp, "a rule", members, ["id", "code", "when", "message"]);
      if (!f) return;
      const r: Rule = { ptr: rp, id: "", scope: "project", channels: [], severity: "error", code: "", target: {}, when: null, key: "", params: [] };
      r.id = this.str(f.get("id"), `${rp}/id`, "id", 256) ?? "";
      r.description = this.desc(f.get("description"), `${rp}/description`);
      const c = this.str(f.get("code"), `${rp}/code`, "code");
      if (c !== undefined) {
        if (!/^[A-Z][A-Z0-9_.]*$/.test(c) || c.length > 128) this.errf(`${rp}/code`, `code ${JSON.stringify(c)} must be upper-case letters, digits, '_' or '.', starting with a letter`);
        else if (c === "RULE_FAILED") this.errf(`${rp}/code`, "code RULE_FAILED is reserved for rules that fail closed");
        r.code = c;
      }
      const sev = this.str(f.get("severity"), `${rp}/severity`, "severity");
      if (sev !== undefined) {
        if (!["error", "warning", "info"].includes(sev)) this.errf(`${rp}/severity`, `severity ${JSON.stringify(sev)} is not error, warning or info`);
        r.severity = sev;
      }
      r.channels = this.channels(f.get("channels"), `${rp}/channels`);
      r.target = this.target(f.get("target"), `${rp}/target`, false);
      r.scope = this.scope(f.get("scope"), `${rp}/scope`, r.target);
      r.when = f.get("when") ?? null;
      this.message(f.get("message"), `${rp}/message`, r);
      rs.rules.push(r);
    });
  }

  message(n: JSONValue | undefined, ptr: string, r: Rule & { keyPtr?: string }): void {
    if (n === undefined) return;
    if (typeof n === "string") {
      r.key = this.str(n, ptr, "message") ?? "";
      r.keyPtr = ptr;
      return;
    }
    const f = this.fields(n, ptr, "a message", ["key", "params"], ["key"]);
    if (!f) return;
    r.key = this.str(f.get("key"), `${ptr}/key`, "key") ?? "";
    r.keyPtr = `${ptr}/key`;
    for (const [k, v] of this.members(f.get("params"), `${ptr}/params`, "params")) {
      if (!validName(k)) {
        this.errf(`${ptr}/params/${ptrToken(k)}`, `parameter name ${JSON.stringify(k)} must be a letter followed by letters, digits or '_'`);
        continue;
      }
      r.params.push({ name: k, expr: v });
    }
    r.params.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  stateRules(n: JSONValue | undefined, ptr: string, rs: Model): void {
    this.items(n, ptr, "stateRules").forEach((it, i) => {
      const rp = `${ptr}/${i}`;
      const f = this.fields(it, rp, "a state rule", ["id", "description", "scope", "channels", "target", "when", "effects"], ["id", "effects"]);
      if (!f) return;
      const r: StateRule = { ptr: rp, id: "", scope: "project", channels: [], target: {}, when: true, effects: [] };
      r.id = this.str(f.get("id"), `${rp}/id`, "id", 256) ?? "";
      r.description = this.desc(f.get("description"), `${rp}/description`);
      r.channels = this.channels(f.get("channels"), `${rp}/channels`);
      r.target = this.target(f.get("target"), `${rp}/target`, true);
      r.scope = this.scope(f.get("scope"), `${rp}/scope`, r.target);
      if (f.has("when")) r.when = f.get("when")!;
      const ev = f.get("effects");
      if (Array.isArray(ev) && ev.length === 0) this.errf(`${rp}/effects`, "effects must list at least one effect");
      this.items(ev, `${rp}/effects`, "effects").forEach((en, j) => {
        const ep = `${rp}/effects/${j}`;
        const ef = this.fields(en, ep, "an effect", ["field", ...STATE_PROPS], ["field"]);
        if (!ef) return;
        const e: StateRule["effects"][0] = { field: "", props: [] };
        const s = this.str(ef.get("field"), `${ep}/field`, "field");
        if (s !== undefined) {
          if (!validPath(s)) this.errf(`${ep}/field`, `field ${JSON.stringify(s)} must be segments separated by '.', none empty`);
          e.field = s;
        }
        for (const p of STATE_PROPS) if (ef.has(p)) e.props.push({ name: p, expr: ef.get(p)! });
        if (e.props.length === 0) this.errf(ep, `an effect sets at least one of ${STATE_PROPS.join(", ")}`);
        r.effects.push(e);
      });
      rs.stateRules.push(r);
    });
  }

  locales(n: JSONValue | undefined, ptr: string, rs: Model): void {
    const seen = new Set<string>();
    for (const [k, v] of this.members(n, ptr, "locales")) {
      const cp = `${ptr}/${ptrToken(k)}`;
      if (!validTag(k)) {
        this.errf(cp, `locale ${JSON.stringify(k)} is not a language tag`);
        continue;
      }
      const low = k.toLowerCase();
      if (seen.has(low)) {
        this.check(this.mode.code, cp, `locale ${JSON.stringify(k)} is declared more than once`);
        continue;
      }
      seen.add(low);
      const cat = { tag: k, messages: new Map<string, string>() };
      for (const [mk, mv] of this.members(v, cp, "a catalog")) {
        const mp = `${cp}/${ptrToken(mk)}`;
        if (mk === "") {
          this.errf(mp, "a message key must not be empty");
          continue;
        }
        if (typeof mv !== "string") {
          this.errf(mp, `a message template must be a string, got ${kind(mv)}`);
          continue;
        }
        const t = parseTemplate(mv);
        if (typeof t === "string") {
          this.check(this.mode.code, mp, `template: ${t}`);
          continue;
        }
        cat.messages.set(mk, mv);
      }
      rs.locales.push(cat);
    }
  }

  /** The checks across members (ruleset.md §2, §3, §5). */
  cross(rs: Model): void {
    const types = new Set(rs.types.map((t) => t.name));
    const bound = new Map<string, string>();
    for (const e of rs.entities) {
      for (const f of e.fields) {
        if (!types.has(f.type)) this.check("TYPE_UNKNOWN", f.ptr, `type ${JSON.stringify(f.type)} is not declared`);
        const key = `${e.path}${e.many ? ".[]" : ""}.${f.field}`;
        if (bound.has(key)) {
          this.check("FIELD_TYPE_REBOUND", f.ptr, `field ${key} is already bound at ${bound.get(key)}`);
          continue;
        }
        bound.set(key, f.ptr);
      }
    }
    const ids = new Set<string>();
    const checkID = (id: string, ptr: string) => {
      if (id === "") return;
      if (ids.has(id)) this.check(this.mode.code, ptr, `rule id ${JSON.stringify(id)} is used more than once`);
      ids.add(id);
    };
    const def = rs.locales.find((c) => c.tag.toLowerCase() === rs.defaultLocale.toLowerCase());
    if (!def && rs.defaultLocale !== "" && rs.rules.length > 0)
      this.check(this.mode.code, `${rs.ptr}/defaultLocale`, `the default locale ${rs.defaultLocale} has no catalog in locales`);
    for (const r of rs.rules as (Rule & { keyPtr?: string })[]) {
      checkID(r.id, `${r.ptr}/id`);
      if (r.target.type !== undefined && !types.has(r.target.type)) this.check("TYPE_UNKNOWN", `${r.ptr}/target/type`, `type ${JSON.stringify(r.target.type)} is not declared`);
      if (def && r.key !== "" && !def.messages.has(r.key))
        this.check(this.mode.code, r.keyPtr ?? `${r.ptr}/message`, `message ${JSON.stringify(r.key)} is not in the catalog of the default locale ${def.tag}`);
    }
    for (const r of rs.stateRules) checkID(r.id, `${r.ptr}/id`);
  }
}

/** Sorts diagnostics by pointer (errors.md): array indexes as numbers, else code points. */
export function sortDiagnostics(ds: Diagnostic[]): Diagnostic[] {
  const split = (p: string) => (p === "" ? [] : p.slice(1).split("/"));
  const cmp = (a: Diagnostic, b: Diagnostic) => {
    const x = split(a.pointer);
    const y = split(b.pointer);
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i] === y[i]) continue;
      const nx = /^(0|[1-9][0-9]*)$/.test(x[i]);
      const ny = /^(0|[1-9][0-9]*)$/.test(y[i]);
      if (nx && ny) return Number(x[i]) - Number(y[i]);
      return x[i] < y[i] ? -1 : 1; // UTF-16 order; equal to code point order for these tokens in practice
    }
    return x.length - y.length;
  };
  return ds.map((d, i) => ({ d, i })).sort((a, b) => cmp(a.d, b.d) || a.i - b.i).map((x) => x.d);
}

/** The result of reading a source document: the model, or the diagnostics. */
export interface ReadResult {
  model: Model | null;
  diags: Diagnostic[];
}

/**
 * Reads a source ruleset document {"ruleset": {...}}. Schema validation stops at the first
 * problem and reports only that one; the checks after it report everything they find.
 */
export function readSource(doc: JSONValue): ReadResult {
  const r = new Reader({ code: "RULESET_INVALID", manifest: false, stopAtFirst: true });
  let model: Model | null = null;
  try {
    const top = r.fields(doc, "", "the document", ["ruleset", "$schema"], ["ruleset"]);
    if (!top) return { model: null, diags: r.schema };
    const s = top.get("$schema");
    if (s !== undefined && typeof s !== "string") r.errf("/$schema", "$schema must be a string");
    model = r.body(top.get("ruleset"), "/ruleset", []);
  } catch (e) {
    if (e instanceof StopSchema) return { model: null, diags: r.schema };
    throw e;
  }
  if (!model) return { model: null, diags: r.schema };
  r.cross(model);
  return { model, diags: r.checks };
}

/** Reads the body of a manifest at ptr (BUNDLE_INVALID for structure, every problem reported). */
export function readManifestBody(n: JSONValue, ptr: string): ReadResult {
  const r = new Reader({ code: "BUNDLE_INVALID", manifest: true, stopAtFirst: false });
  const model = r.body(n, ptr, ["formatVersion", "channel", "ruleset", "fieldTypes"]);
  if (model) r.cross(model);
  return { model, diags: [...r.schema, ...r.checks] };
}

// --- the resolved form ------------------------------------------------------------------------

function target(t: Target): JSONObject {
  const o: JSONObject = {};
  for (const l of LEVELS) if (t[l] !== undefined) o[l] = t[l]!;
  if (t.fields && t.fields.length > 0) o.fields = t.fields;
  if (t.type !== undefined) o.type = t.type;
  return o;
}

/** Returns the resolved members shared by the ruleset and its manifests (ruleset.md §8, §9). */
export function resolvedMembers(rs: Model, channel: Channel | null): JSONObject {
  const out: JSONObject = { defaultLocale: rs.defaultLocale };
  if (rs.description) out.description = rs.description;
  const types: JSONObject = dict();
  for (const t of rs.types) {
    const o: JSONObject = { base: t.base };
    if (t.description) o.description = t.description;
    types[t.name] = o;
  }
  out.types = types;
  const ents: JSONObject = dict();
  for (const e of rs.entities) {
    const ft: JSONObject = dict();
    for (const f of e.fields) ft[f.field] = f.type;
    const o: JSONObject = { path: e.path, many: e.many, fieldTypes: ft };
    if (e.description) o.description = e.description;
    ents[e.name] = o;
  }
  out.entities = ents;
  const fns: JSONObject = dict();
  for (const name of memberNames(rs.functions)) {
    const d = rs.functions[name] as JSONObject;
    const o: JSONObject = { params: isObject(d) && Array.isArray(d.params) ? d.params : [], body: isObject(d) ? (d.body ?? null) : null };
    if (rs.functionDescriptions.has(name)) o.description = rs.functionDescriptions.get(name)!;
    fns[name] = o;
  }
  out.functions = fns;
  const ops: JSONObject = dict();
  for (const o of rs.operators) ops[o.name] = o.description ? { description: o.description } : {};
  out.operators = ops;
  out.rules = rs.rules
    .filter((r) => channel === null || r.channels.includes(channel))
    .map((r) => {
      const params: JSONObject = dict();
      for (const p of r.params) params[p.name] = p.expr;
      const o: JSONObject = {
        id: r.id, scope: r.scope, channels: r.channels, severity: r.severity, code: r.code, target: target(r.target),
        when: r.when, message: { key: r.key, params },
      };
      if (r.description) o.description = r.description;
      return o;
    });
  out.stateRules = rs.stateRules
    .filter((r) => channel === null || r.channels.includes(channel))
    .map((r) => {
      const o: JSONObject = {
        id: r.id, scope: r.scope, channels: r.channels, target: target(r.target), when: r.when,
        effects: r.effects.map((e) => {
          const eo: JSONObject = { field: e.field };
          for (const p of e.props) eo[p.name] = p.expr;
          return eo;
        }),
      };
      if (r.description) o.description = r.description;
      return o;
    });
  const locs: JSONObject = dict();
  for (const c of rs.locales) {
    const m: JSONObject = dict();
    for (const [k, v] of c.messages) m[k] = v;
    locs[c.tag] = m;
  }
  out.locales = locs;
  return out;
}

/** Returns the manifest's flat binding map "Entity.field" → type. */
export function fieldTypes(rs: Model): JSONObject {
  const o: JSONObject = dict();
  for (const e of rs.entities) for (const f of e.fields) o[`${e.name}.${f.field}`] = f.type;
  return o;
}

/** Returns the resolved ruleset document {"ruleset": {...}}. */
export function resolved(rs: Model): JSONObject {
  return { ruleset: { id: rs.id, version: rs.version, ...resolvedMembers(rs, null) } };
}

/** A compiled ruleset's reference. */
export interface RulesetRef {
  id: string;
  version: string;
  checksum: string;
}

/** Returns the manifest of one channel. */
export function manifestOf(rs: Model, ref: RulesetRef, channel: Channel): JSONObject {
  return { formatVersion: 1, channel, ruleset: { ...ref }, fieldTypes: fieldTypes(rs), ...resolvedMembers(rs, channel) };
}

/** Returns the bundle of a ruleset. */
export function bundleOf(rs: Model, ref: RulesetRef): JSONObject {
  return { formatVersion: 1, ruleset: { ...ref }, server: manifestOf(rs, ref, "server"), client: manifestOf(rs, ref, "client") };
}

/** Returns the canonical text of the resolved ruleset, the input of the checksum. */
export function checksumInput(rs: Model): string {
  return canonicalJSON(resolved(rs));
}
