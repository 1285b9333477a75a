// Source rulesets as files: YAML read by spec/v1/ruleset.md §7 (the YAML 1.2 core schema, decided
// here node by node, never by the parser's own typing) and JSON, each into the JSON text the
// runtime compiles, with the line and column of every JSON pointer for diagnostics, and the two
// lint codes (YAML_NOT_PORTABLE, NUMBER_NOT_PORTABLE) the server logs as warnings. The Go rule
// server reads the same files with impl/rules/yamlrules; the Go test TestYAMLReadersAgree
// (impl/rules/ruleserver, with SDODS_RULESERVER=typescript) checks that both read alike.

import { createRequire } from "node:module";
import type * as YAMLModule from "yaml";
import type { Document, LineCounter, Node, Scalar } from "yaml";

// The YAML parser is an optional peer dependency: the server depends only on the runtime, and reads
// YAML sources (and the line and column of JSON ones) when the package yaml is installed beside it.
let yamlModule: typeof YAMLModule | null | undefined;
// The loaded parser; the reader below runs only after yamlParser() returned it.
let Y!: typeof YAMLModule;

/** The yaml package if it is installed, else null. */
export function yamlParser(): typeof YAMLModule | null {
  if (yamlModule === undefined) {
    try {
      yamlModule = createRequire(import.meta.url)("yaml") as typeof YAMLModule;
      Y = yamlModule;
    } catch {
      yamlModule = null;
    }
  }
  return yamlModule;
}

/** Why a YAML source cannot be read without the optional parser. */
export const YAML_PARSER_MISSING =
  "reading YAML sources needs the optional package yaml beside @sdods/rule-server (npm install yaml), or compile them to JSON with rulecheck compile";


/** A problem or a lint finding of a source, at a JSON pointer and a 1-based line and column. */
export interface SourceProblem {
  code: "YAML_INVALID" | "YAML_NOT_PORTABLE" | "NUMBER_NOT_PORTABLE";
  pointer: string;
  line: number;
  column: number;
  message: string;
}

/** A source read into JSON text. */
export interface SourceDocument {
  /** the document as JSON text: members in source order, a member named twice kept twice */
  json: string;
  /** the line and column of the node at pointer, or of its nearest ancestor that has one */
  position(pointer: string): { line: number; column: number };
  /** the portability findings, in document order */
  lint: SourceProblem[];
}

/** The nodes a document may expand to, aliases included (as the Go reader). */
export const MAX_NODES = 1_000_000;

type Pos = { line: number; column: number };

function positionOf(positions: Map<string, Pos>) {
  return (pointer: string): Pos => {
    let p = pointer;
    for (;;) {
      const at = positions.get(p);
      if (at) return at;
      const i = p.lastIndexOf("/");
      if (i < 0) return { line: 1, column: 1 };
      p = p.slice(0, i);
    }
  };
}

const escapeToken = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

const coreInt = /^[-+]?[0-9]+$/;
const coreOct = /^0o[0-7]+$/;
const coreHex = /^0x[0-9a-fA-F]+$/;
const coreFloat = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const coreInf = /^([-+]?\.(inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;

/** Types a plain scalar by the YAML 1.2 core schema; for numbers the JSON text ("" for .inf, .nan). */
export function resolve(s: string): [kind: "null" | "bool" | "int" | "float" | "str", text: string] {
  switch (s) {
    case "": case "~": case "null": case "Null": case "NULL":
      return ["null", "null"];
    case "true": case "True": case "TRUE":
      return ["bool", "true"];
    case "false": case "False": case "FALSE":
      return ["bool", "false"];
  }
  if (coreInt.test(s)) return ["int", jsonInt(s)];
  if (coreOct.test(s)) return ["int", BigInt("0o" + s.slice(2)).toString()];
  if (coreHex.test(s)) return ["int", BigInt("0x" + s.slice(2)).toString()];
  if (coreFloat.test(s)) return ["float", jsonFloat(s)];
  if (coreInf.test(s)) return ["float", ""];
  return ["str", s];
}

function jsonInt(s: string): string {
  const neg = s.startsWith("-");
  const t = s.replace(/^[-+]/, "").replace(/^0+/, "");
  if (t === "") return "0";
  return neg ? "-" + t : t;
}

function jsonFloat(s: string): string {
  const neg = s.startsWith("-");
  const t = s.replace(/^[-+]+/, "");
  const e = t.search(/[eE]/);
  const mant = e < 0 ? t : t.slice(0, e);
  const exp = e < 0 ? "" : t.slice(e + 1);
  const dot = mant.indexOf(".");
  let ip = (dot < 0 ? mant : mant.slice(0, dot)).replace(/^0+/, "");
  const fp = dot < 0 ? "" : mant.slice(dot + 1);
  if (ip === "") ip = "0";
  let out = ip;
  if (fp !== "") out += "." + fp;
  if (exp !== "") out += "e" + exp;
  return neg ? "-" + out : out;
}

const y11Bool = /^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$/;
const y11Int = /^([-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+)$/;
const y11Float = /^([-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$/;
const y11Timestamp = /^([0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)?(([ \t]*)Z|[-+][0-9]{1,2}(:[0-9]{2})?)?)$/;

const kindName = (k: string) => (k === "str" ? "string" : k);

/** Why YAML 1.1 reads the plain scalar s differently from the YAML 1.2 core schema, or "". */
export function portability(s: string): string {
  const [kind12, text12] = resolve(s);
  if (s === "<<") return 'YAML 1.1 reads it as a merge key, YAML 1.2 as the string "<<"';
  if (s === "=") return "YAML 1.1 reads it as a value key, YAML 1.2 as a string";
  if (y11Bool.test(s)) return "YAML 1.1 reads it as a boolean, YAML 1.2 as a string";
  if (y11Timestamp.test(s)) return "YAML 1.1 reads it as a timestamp, YAML 1.2 as a string";
  if (y11Int.test(s)) {
    if (kind12 !== "int") return "YAML 1.1 reads it as an integer, YAML 1.2 as a " + kindName(kind12);
    const v11 = int11(s);
    if (v11 !== text12) return `YAML 1.1 reads it as the integer ${v11}, YAML 1.2 as ${text12}`;
    return "";
  }
  if (y11Float.test(s)) {
    if (kind12 !== "float" && kind12 !== "int") return "YAML 1.1 reads it as a number, YAML 1.2 as a " + kindName(kind12);
    return "";
  }
  if (kind12 === "int" || kind12 === "float") return "YAML 1.2 reads it as a number, YAML 1.1 as a string";
  return "";
}

function int11(s: string): string {
  let t = s.replace(/_/g, "");
  const neg = t.startsWith("-");
  t = t.replace(/^[-+]+/, "");
  let v: bigint;
  if (t.startsWith("0b")) v = t.length > 2 ? BigInt(t) : 0n;
  else if (t.startsWith("0x")) v = t.length > 2 ? BigInt(t) : 0n;
  else if (t.includes(":")) {
    v = 0n;
    for (const part of t.split(":")) v = v * 60n + BigInt(Number.parseInt(part, 10) || 0);
  } else if (t.length > 1 && t[0] === "0") v = BigInt("0o" + t.slice(1));
  else v = BigInt(t);
  return (neg ? -v : v).toString();
}

/** A finite decimal as [digits without leading or trailing zeros, exponent of the last digit]. */
function decimal(s: string): [string, number] {
  const t = s.replace(/^[-+]/, "");
  const e = t.search(/[eE]/);
  const mant = e < 0 ? t : t.slice(0, e);
  let exp = e < 0 ? 0 : Number(t.slice(e + 1));
  const dot = mant.indexOf(".");
  let digits = mant.replace(".", "");
  if (dot >= 0) exp -= mant.length - dot - 1;
  digits = digits.replace(/^0+/, "");
  while (digits.endsWith("0")) {
    digits = digits.slice(0, -1);
    exp++;
  }
  return digits === "" ? ["", 0] : [digits, exp];
}

/** Why a number literal does not travel between runtimes (spec/v1/ruleset.md §7), or "". */
export function numberProblem(text: string): string {
  let t = text.replace(/^[-+]+/, "");
  if (t.startsWith("0x") || t.startsWith("0o")) return "";
  t = t.replace(/_/g, "");
  const [digits] = decimal(t);
  if (digits.length > 15) return `has ${digits.length} significant digits (at most 15 are portable)`;
  const jt = jsonFloat(t);
  const f = Number(jt);
  if (!Number.isFinite(f)) return "is beyond the range of a double";
  const shortest = String(f);
  const [wd, we] = decimal(jt);
  const [gd, ge] = decimal(shortest);
  if (wd !== gd || (wd !== "" && we !== ge)) return `is not held exactly by a double (it reads as ${goFloat(f)})`;
  return "";
}

/** f as Go's strconv.FormatFloat(f, 'g', -1, 64) writes it. */
function goFloat(f: number): string {
  if (f === 0) return "0";
  const [d, e] = decimal(String(f));
  const exp = e + d.length - 1;
  if (exp < -4 || exp >= 21) {
    const m = d.length > 1 ? d[0] + "." + d.slice(1) : d;
    return (f < 0 ? "-" : "") + m + "e" + (exp < 0 ? "-" : "+") + String(Math.abs(exp)).padStart(2, "0");
  }
  return String(f);
}

function clip(s: string): string {
  return s.length > 40 ? s.slice(0, 37) + "..." : s;
}

const CORE = "tag:yaml.org,2002:";

class Reader {
  readonly positions = new Map<string, Pos>();
  readonly problems: SourceProblem[] = [];
  readonly portable: SourceProblem[] = [];
  readonly numbers: { ptr: string; text: string; pos: Pos }[] = [];
  private nodes = 0;

  constructor(private readonly lc: LineCounter, private readonly doc: Document, private readonly src: string) {}

  /** Where a node starts: its first property (anchor or tag) when it has one, as the Go reader. */
  pos(n: { range?: [number, number, number] | null; anchor?: string; tag?: string }): Pos {
    let o = n.range ? n.range[0] : 0;
    if (n.anchor || n.tag) o = this.propsStart(o);
    const p = this.lc.linePos(o);
    return { line: p.line, column: p.col };
  }

  private propsStart(o: number): number {
    const s = this.src;
    for (;;) {
      let j = o;
      while (j > 0 && /[ \t\r\n]/.test(s[j - 1])) j--;
      let k = j;
      while (k > 0 && !/[ \t\r\n,[\]{}]/.test(s[k - 1])) k--;
      if (k === j || (s[k] !== "&" && s[k] !== "!")) return o;
      o = k;
    }
  }

  fail(pointer: string, at: Pos, message: string): void {
    this.problems.push({ code: "YAML_INVALID", pointer, line: at.line, column: at.column, message });
  }

  node(n: unknown, ptr: string, at: Pos, depth: number): string {
    this.nodes++;
    if (this.nodes > MAX_NODES || depth > 10000) {
      if (this.nodes === MAX_NODES + 1 || depth === 10001) this.fail(ptr, at, "the document expands to too many nodes");
      return "null";
    }
    if (!this.positions.has(ptr)) this.positions.set(ptr, at);
    if (n === null || n === undefined) return "null";
    if (Y.isAlias(n)) return this.node(n.resolve(this.doc), ptr, at, depth + 1);
    if (Y.isSeq(n)) {
      if (n.tag && n.tag !== CORE + "seq") this.fail(ptr, this.pos(n), `tag ${tagName(n.tag)} is not in the YAML 1.2 core schema`);
      return "[" + n.items.map((c, i) => this.node(c, `${ptr}/${i}`, this.pos(c as Node), depth + 1)).join(",") + "]";
    }
    if (Y.isMap(n)) {
      if (n.tag && n.tag !== CORE + "map") this.fail(ptr, this.pos(n), `tag ${tagName(n.tag)} is not in the YAML 1.2 core schema`);
      const out: string[] = [];
      for (const pair of n.items) {
        if (!Y.isPair(pair)) continue;
        let k: unknown = pair.key;
        if (Y.isAlias(k)) k = k.resolve(this.doc);
        if (k === null || k === undefined) k = new Y.Scalar(null); // "? " with no key: the null scalar
        if (!Y.isScalar(k)) {
          this.fail(ptr, this.pos(k as Node), "a mapping key must be a scalar");
          continue;
        }
        const key = scalarText(k);
        const mp = ptr + "/" + escapeToken(key);
        this.scalarLint(k, mp);
        out.push(JSON.stringify(key) + ":" + this.node(pair.value, mp, this.pos(k), depth + 1));
      }
      return "{" + out.join(",") + "}";
    }
    if (Y.isScalar(n)) return this.scalar(n, ptr);
    this.fail(ptr, at, "unsupported YAML node");
    return "null";
  }

  scalar(n: Scalar, ptr: string): string {
    const text = scalarText(n);
    if (n.tag) {
      switch (n.tag) {
        case CORE + "str":
          return JSON.stringify(text);
        case CORE + "null":
          return "null";
        case CORE + "bool":
        case CORE + "int":
        case CORE + "float": {
          const [kind, json] = resolve(text);
          const want = n.tag.slice(CORE.length);
          if (kind !== want && !(want === "float" && kind === "int")) {
            this.fail(ptr, this.pos(n), `${JSON.stringify(text)} is not a ${want}`);
            return "null";
          }
          return this.typed(n, ptr, kind, json, text);
        }
        default:
          this.fail(ptr, this.pos(n), `tag ${tagName(n.tag)} is not in the YAML 1.2 core schema`);
          return "null";
      }
    }
    if (n.type !== Y.Scalar.PLAIN) return JSON.stringify(text); // quoted, literal or folded: a string
    this.scalarLint(n, ptr);
    const [kind, json] = resolve(text);
    return this.typed(n, ptr, kind, json, text);
  }

  typed(n: Scalar, ptr: string, kind: string, json: string, text: string): string {
    switch (kind) {
      case "null":
        return "null";
      case "bool":
        return json;
      case "int":
      case "float":
        if (json === "") {
          this.fail(ptr, this.pos(n), `${text} is not a JSON number (infinities and NaN have no JSON form)`);
          return "null";
        }
        this.numbers.push({ ptr, text, pos: this.pos(n) });
        return json;
    }
    return JSON.stringify(text);
  }

  scalarLint(n: Scalar, ptr: string): void {
    if (n.type !== Y.Scalar.PLAIN || n.tag) return;
    const s = scalarText(n);
    const why = portability(s);
    if (why) {
      const p = this.pos(n);
      this.portable.push({ code: "YAML_NOT_PORTABLE", pointer: ptr, line: p.line, column: p.column, message: `unquoted ${JSON.stringify(s)}: ${why}; quote it` });
    }
  }

  lint(): SourceProblem[] {
    const out = [...this.portable];
    for (const n of this.numbers) {
      const why = numberProblem(n.text);
      if (why) out.push({ code: "NUMBER_NOT_PORTABLE", pointer: n.ptr, line: n.pos.line, column: n.pos.column, message: `number ${clip(n.text)} ${why}; write it as a string or with fewer digits` });
    }
    return out.sort((a, b) => a.line - b.line || a.column - b.column);
  }
}

/** The text of a scalar as written (plain) or as its style decodes it (quoted, block). */
function scalarText(n: Scalar): string {
  if (typeof n.source === "string") return n.source;
  return n.value === null || n.value === undefined ? "" : String(n.value);
}

/** A tag as written in YAML: !!str for the core schema's, the tag itself otherwise. */
function tagName(tag: string): string {
  return tag.startsWith(CORE) ? "!!" + tag.slice(CORE.length) : tag;
}

/**
 * Reads a YAML source by the YAML 1.2 core schema. Problems are YAML_INVALID: a syntax error,
 * more than one document, a tag outside the core schema, .inf or .nan, a key that is not a
 * scalar, or a document expanding to more than MAX_NODES nodes.
 */
export function readYAML(src: string): { doc: SourceDocument } | { problems: SourceProblem[] } {
  if (!yamlParser()) return { problems: [{ code: "YAML_INVALID", pointer: "", line: 1, column: 1, message: YAML_PARSER_MISSING }] };
  const lc = new Y.LineCounter();
  const docs = Y.parseAllDocuments(src, { version: "1.2", schema: "core", uniqueKeys: false, merge: false, lineCounter: lc, prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [];
  if (list.length === 0) {
    const errors = (docs as unknown as { errors?: { message: string; pos: [number, number] }[] }).errors ?? [];
    if (errors.length > 0) return { problems: [syntax(lc, errors[0])] };
    return { problems: [{ code: "YAML_INVALID", pointer: "", line: 1, column: 1, message: "the document is empty" }] };
  }
  const first = list[0];
  if (first.errors.length > 0) return { problems: [syntax(lc, first.errors[0])] };
  if (list.length > 1) {
    const second = list[1];
    if (second.errors.length > 0 && second.contents === null) return { problems: [syntax(lc, second.errors[0])] };
    const p = lc.linePos(second.range[0]);
    return { problems: [{ code: "YAML_INVALID", pointer: "", line: p.line, column: p.col, message: "a ruleset file holds one YAML document" }] };
  }
  const r = new Reader(lc, first, src);
  const root = first.contents;
  const json = root === null ? "null" : r.node(root, "", r.pos(root as Node), 0);
  if (r.problems.length > 0) return { problems: r.problems };
  return { doc: { json, position: positionOf(r.positions), lint: r.lint() } };
}

function syntax(lc: LineCounter, e: { message: string; pos: [number, number] }): SourceProblem {
  const p = lc.linePos(e.pos[0]);
  return { code: "YAML_INVALID", pointer: "", line: p.line, column: 1, message: e.message.split("\n")[0] };
}

/**
 * The positions and lint of a JSON source whose text the runtime parses (parseJSON, strict JSON):
 * every pointer's line and column (the member name for object members), and NUMBER_NOT_PORTABLE
 * for its number literals. JSON is read here as YAML 1.2 flow, which it is, for the positions
 * only; null when the reader cannot follow the text (the runtime then reports its own problem).
 */
export function jsonPositions(src: string): SourceDocument | null {
  if (!yamlParser()) return null; // without the parser, JSON sources have no positions nor number lint
  const lc = new Y.LineCounter();
  let docs;
  try {
    docs = Y.parseAllDocuments(src, { version: "1.2", schema: "core", uniqueKeys: false, merge: false, lineCounter: lc, prettyErrors: false });
  } catch {
    return null;
  }
  if (!Array.isArray(docs) || docs.length !== 1 || docs[0].errors.length > 0) return null;
  const r = new Reader(lc, docs[0], src);
  const root = docs[0].contents;
  const json = root === null ? "null" : r.node(root, "", r.pos(root as Node), 0);
  // YAML portability does not apply to JSON: only the numbers are linted
  const lint = r.lint().filter((p) => p.code === "NUMBER_NOT_PORTABLE");
  return { json, position: positionOf(r.positions), lint };
}
