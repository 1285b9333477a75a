// The rules spec/v1 settled after the seed, checked against the text itself where it is a table:
// operators.md "Null arguments" and spec/v1/README.md "Text" and "Members named twice".
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  CORE_OPERATORS, Engine, LoadError, NOT_STRICT, NULL_RESULT, ProtocolSession, RequestError, RuleSet, bundle, decodeUTF8,
  parseJSON, requestProblem, setCodeGeneration, JSONSyntaxError,
} from "../index.js";
import { repoFile } from "./paths.js";

/** The rows of a markdown table under the heading, as [first cell, operators in backquotes]. */
function nullTables(): Map<string, string[]> {
  const md = repoFile("spec/v1/operators.md");
  const section = md.slice(md.indexOf("## Null arguments"), md.indexOf("\n## ", md.indexOf("## Null arguments") + 3));
  const rows = new Map<string, string[]>();
  for (const line of section.split("\n")) {
    const m = /^\| ([^|]+) \| (`.*`) \|$/.exec(line);
    if (m) rows.set(m[1].trim(), [...m[2].matchAll(/`([^`]+)`/g)].map((x) => x[1]));
  }
  return rows;
}

test("NULL_RESULT and NOT_STRICT are operators.md's two tables, covering the 45 operators once", () => {
  const rows = nullTables();
  const strictNull = rows.get("null")!;
  const strictFalse = rows.get("false")!;
  assert.equal(strictNull.length + strictFalse.length, 28);
  const table: Record<string, null | false> = {};
  for (const op of strictNull) table[op] = null;
  for (const op of strictFalse) table[op] = false;
  assert.deepEqual({ ...NULL_RESULT }, table);
  const groups: Record<string, string> = { "(a) null is a value": "value", "(b) evaluated lazily": "lazy", "(c) a container": "container" };
  const notStrict: Record<string, string> = {};
  for (const [row, g] of Object.entries(groups)) for (const op of rows.get(row)!) notStrict[op] = g;
  assert.equal(Object.keys(notStrict).length, 17);
  assert.deepEqual({ ...NOT_STRICT }, notStrict);
  assert.deepEqual([...Object.keys(table), ...Object.keys(notStrict)].sort(), [...CORE_OPERATORS].sort());
});

const MIN_ARITY: Record<string, number> = {
  "+": 2, "-": 2, "*": 2, "/": 2, mod: 2, min: 2, max: 2, round: 2, concat: 2, substring: 3, yearsBetween: 2, daysBetween: 2,
  dateAdd: 3, "<": 2, "<=": 2, ">": 2, ">=": 2, between: 3, startsWith: 2, endsWith: 2, matches: 2,
};

// an argument of the wrong type for every strict operator, and a pattern that is not portable
const WRONG = { op: "literal", args: [{ k: [1] }] };

for (const codegen of [true, false]) {
  test(`strict operators: null decides, the other operands are not checked (code generation ${codegen ? "on" : "off"})`, () => {
    setCodeGeneration(codegen);
    try {
      const e = new Engine();
      const value = (expr: unknown, env = {}) => e.expression(expr).evaluate(env);
      for (const [op, result] of Object.entries(NULL_RESULT)) {
        const n = MIN_ARITY[op] ?? 1;
        // null at every place, every other argument of the wrong type; as a constant and from a variable
        for (let at = 0; at < n; at++) {
          for (const nul of [null, { var: "nothing" }]) {
            const args = Array.from({ length: n }, (_, i) => (i === at ? nul : WRONG));
            assert.equal(value({ op, args }), result, `${op} null at ${at} of ${n}`);
          }
        }
      }
      // the operands of sum and of min/max given one array are its elements
      assert.equal(value({ op: "sum", args: [{ op: "literal", args: [[null, "a"]] }] }), null);
      assert.equal(value({ op: "min", args: [{ op: "literal", args: [["a", null]] }] }), null);
      assert.equal(value({ op: "max", args: [{ var: "xs" }] }, { xs: [true, null] }), null);
      assert.throws(() => value({ op: "sum", args: ["a"] }), /sum/);
      // a computed pattern that is not portable is not looked at beside a null subject
      const bad = { op: "concat", args: ["(a+)", "+"] };
      assert.equal(value({ op: "matches", args: [null, bad] }), false);
      assert.throws(() => value({ op: "matches", args: ["a", bad] }), /matches/);
      // an argument that fails to evaluate comes first
      assert.throws(() => value({ op: "+", args: [{ op: "<", args: [1, "a"] }, null] }), /</);
      // without a null, the type is checked
      assert.throws(() => value({ op: "startsWith", args: ["a", 1] }), /startsWith/);
      // containers (not strict): container null → false; an array compares null; else item null → false
      assert.equal(value({ op: "contains", args: [null, 1] }), false);
      assert.equal(value({ op: "contains", args: [{ op: "literal", args: [[null]] }, null] }), true);
      assert.equal(value({ op: "contains", args: [1, null] }), false);
      assert.equal(value({ op: "in", args: [null, true] }), false);
      assert.throws(() => value({ op: "contains", args: [1, "a"] }), /contains/);
      // lazy: a null array never runs the body
      assert.equal(value({ op: "map", args: [null, WRONG] }), null);
      assert.equal(value({ op: "all", args: [null, { op: "<", args: [1, "a"] }] }), false);
    } finally {
      setCodeGeneration(true);
    }
  });
}

const BAD_UTF8: [string, number[]][] = [
  ["0xFF", [0x61, 0xff, 0x62]],
  ["encoded surrogate ED A0 80", [0x61, 0xed, 0xa0, 0x80]],
  ["encoded low surrogate ED B0 80", [0xed, 0xb0, 0x80]],
  ["overlong C0 AF", [0xc0, 0xaf]],
  ["overlong E0 80 AF", [0xe0, 0x80, 0xaf]],
  ["overlong F0 80 80 AF", [0xf0, 0x80, 0x80, 0xaf]],
  ["truncated E2 82", [0x22, 0xe2, 0x82, 0x22]],
  ["beyond U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
  ["lone continuation byte", [0x80]],
];

test("decodeUTF8 refuses what is not well-formed UTF-8 and names the byte", () => {
  for (const [name, bytes] of BAD_UTF8) {
    assert.throws(() => decodeUTF8(new Uint8Array(bytes)), (e: unknown) => e instanceof JSONSyntaxError && /at byte \d+/.test(e.message), name);
  }
  assert.throws(() => decodeUTF8(new Uint8Array([0x61, 0x62, 0xff])), /at byte 2/);
  const ok = new TextEncoder().encode("é€😀\uFFFF\u{10FFFF}");
  assert.equal(decodeUTF8(ok), "é€😀\uFFFF\u{10FFFF}");
});

test("parseJSON refuses lone surrogates, escaped or not, and keeps pairs", () => {
  for (const text of ['"\\ud800"', '"a\\udc00"', '"\\ud800\\u0041"', '"ab\\uD83D"', '"\\ud83d\\ud83d\\ude00"', '"\\ude00\\ud83d"',
    '{"\\udfff": 1}', '"\uD800"', '"\uDC00x"', '"\uD83D\\ude00"']) {
    assert.throws(() => parseJSON(text), JSONSyntaxError, text);
  }
  assert.equal(parseJSON('"\\ud83d\\ude00"'), "😀");
  assert.equal(parseJSON('"\\uDBFF\\uDFFF"'), "\u{10FFFF}");
  assert.equal(parseJSON('"\\\\ud800"'), "\\ud800");
  assert.equal(parseJSON('"\\ufffd"'), "\uFFFD");
  assert.equal(parseJSON('"😀"'), "😀");
});

test("the protocol answers a line that is not UTF-8 or escapes a lone surrogate with PROTOCOL_INVALID and id null", () => {
  const s = new ProtocolSession();
  const enc = new TextEncoder();
  for (const [name, bytes] of BAD_UTF8) {
    const line = new Uint8Array([...enc.encode('{"id":"x","cmd":"expression","expression":"'), ...bytes, ...enc.encode('"}')]);
    const r = JSON.parse(s.handle(line)!);
    assert.equal(r.id, null, name);
    assert.equal(r.error.code, "PROTOCOL_INVALID", name);
  }
  const r = JSON.parse(s.handle('{"id":"x","cmd":"version","x":"\\ud800"}')!);
  assert.deepEqual([r.id, r.error.code], [null, "PROTOCOL_INVALID"]);
  const ok = JSON.parse(s.handle(enc.encode('{"id":"y","cmd":"expression","expression":{"op":"length","args":["é€😀"]}}'))!);
  assert.deepEqual(ok, { id: "y", result: { value: 3 } });
});

test("each entry point refuses malformed text with its own code at the pointer \"\"", () => {
  const lone = '{"data": {"a": "\\ud800"}}';
  assert.equal(requestProblem(lone)?.pointer, "");
  const rs = RuleSet.fromBundle(repoFile("conformance/fixtures/signup/signup.bundle.json"));
  assert.throws(() => rs.evaluate(lone), (e: unknown) => e instanceof RequestError && e.pointer === "");
  const load = (f: () => unknown, code: string) =>
    assert.throws(f, (e: unknown) => e instanceof LoadError && e.code === code && e.diagnostics[0].pointer === "", code);
  load(() => RuleSet.fromBundle('{"formatVersion": "\\ud800"}'), "BUNDLE_INVALID");
  load(() => RuleSet.fromManifest('{"formatVersion": "\\udc00"}'), "BUNDLE_INVALID");
  load(() => bundle('{"ruleset": {"id": "\\ud800"}}'), "RULESET_INVALID");
  load(() => new Engine().expression('"\\ud800"'), "EXPRESSION_INVALID");
});

test("values handed over by the host: a lone surrogate is BAD_REQUEST at its pointer", () => {
  assert.equal(requestProblem({ data: { a: ["x", "\uD800"] } })?.pointer, "/data/a/1");
  assert.equal(requestProblem({ data: { "b\uDC00": 1 } })?.pointer, "/data/b\uDC00");
  const e = new Engine();
  assert.throws(() => e.expression({ var: "a" }).evaluate({ a: "\uDFFF" }), (x: unknown) => x instanceof RequestError && x.pointer === "/a");
  assert.throws(() => e.expression({ op: "length", args: ["\uD800"] }), (x: unknown) => x instanceof RequestError && x.pointer === "/args/0");
  assert.throws(() => RuleSet.fromBundle({ formatVersion: 1, ruleset: { id: "\uD800" } }), (x: unknown) => x instanceof RequestError && x.pointer === "/ruleset/id");
});

test("members named twice: at every level, the first problem in document order", () => {
  assert.equal(requestProblem('{"data": {"a": {"b": 1, "b": 2}, "c": 1e999}}')?.pointer, "/data/a/b");
  assert.equal(requestProblem('{"data": {"a": {"b": 1, "c": 1e999, "b": 2}}}')?.pointer, "/data/a/c");
  assert.equal(requestProblem('{"data": {"a": [0, {"x": {"y": 1, "y": 1}}]}}')?.pointer, "/data/a/1/x/y");
  // the request's own members: unknown or repeated, whichever comes first
  assert.equal(requestProblem('{"data": {}, "data": {}, "zzz": 1}')?.pointer, "/data");
  assert.equal(requestProblem('{"zzz": 1, "data": {}, "data": {}}')?.pointer, "/zzz");
  const s = new ProtocolSession();
  const answer = (line: string) => JSON.parse(s.handle(line)!).error;
  // a root named twice comes before every root's depth
  const deep = "[".repeat(70) + "]".repeat(70);
  assert.equal(answer(`{"id":1,"cmd":"expression","expression":1,"env":{"z":${deep},"a":1,"a":2}}`).pointer, "/a");
  assert.equal(answer(`{"id":2,"cmd":"expression","expression":1,"env":{"z":${deep},"a":{"b":1,"b":2}}}`).pointer, "/z");
  const manifest = JSON.parse(repoFile("conformance/examples/signup.client.manifest.json"));
  const text = JSON.stringify(manifest).replace('"fieldTypes":{"account.email":"Email"}', '"fieldTypes":{"account.email":"Email","account.email":"Email"}');
  assert.notEqual(text, JSON.stringify(manifest));
  assert.throws(() => RuleSet.fromManifest(text), (e: unknown) => e instanceof LoadError && e.diagnostics.some((d) => d.pointer === "/fieldTypes/account.email"));
});
