import { test } from "node:test";
import assert from "node:assert/strict";
import {
  Engine, LoadError, RequestError, RuleSet, bundle, jsonFinite, patternProblem, requestProblem, suiteOperators, ChannelError,
} from "../index.js";
import { repoFile } from "./paths.js";

const signupBundle = repoFile("conformance/fixtures/signup/signup.bundle.json");
const checkoutBundle = repoFile("conformance/fixtures/checkout/checkout.bundle.json");

function source(fixture: string): unknown {
  const suite = JSON.parse(repoFile(`conformance/compiler/${fixture}.json`));
  return suite.cases[0].input.source;
}

test("bundle() writes the fixtures' bundles byte for byte", () => {
  for (const f of ["signup", "checkout", "loan", "insurance", "addressbook"]) {
    const b = bundle(source(f));
    assert.equal(b.text, repoFile(`conformance/fixtures/${f}/${f}.bundle.json`), f);
  }
});

test("RuleSet.fromBundle evaluates a request and reports findings in order", () => {
  const rs = RuleSet.fromBundle(signupBundle);
  assert.deepEqual(rs.channels, ["client", "server"]);
  const r = rs.evaluate({ data: { account: { email: "ana" } }, ctx: { today: "2025-06-15" } });
  assert.equal(r.ruleset.id, "signup");
  assert.ok(r.findings.length > 0);
  assert.ok(r.findings.every((f) => typeof f.message === "string" && f.location !== undefined));
});

test("fromManifest loads one channel; another channel is CHANNEL_UNAVAILABLE", () => {
  const client = RuleSet.fromBundle(signupBundle).manifest("client");
  const rs = RuleSet.fromManifest(client);
  assert.deepEqual(rs.channels, ["client"]);
  assert.throws(() => rs.manifest("server"), ChannelError);
  assert.throws(() => RuleSet.fromManifest(client, { channel: "server" }), ChannelError);
});

test("missingOperators lists declared operators the host has not registered; their rules fail closed", () => {
  const without = RuleSet.fromBundle(checkoutBundle);
  assert.deepEqual(without.requiredOperators, ["x-luhn"]);
  assert.deepEqual(without.missingOperators, ["x-luhn"]);
  const withOp = RuleSet.fromBundle(checkoutBundle, { operators: { "x-luhn": suiteOperators.get("x-luhn")! } });
  assert.deepEqual(withOp.missingOperators, []);
  const req = { data: { payment: { cardNumber: "4111111111111111" } } };
  const failed = without.evaluate(req).findings.filter((f) => f.code === "RULE_FAILED" && f.message.includes("OPERATOR_UNAVAILABLE"));
  assert.ok(failed.length > 0);
  assert.equal(withOp.evaluate(req).findings.filter((f) => f.message.includes("OPERATOR_UNAVAILABLE")).length, 0);
});

test("a failing custom operator fails its rule closed with OPERATOR_FAILED", () => {
  const rs = RuleSet.fromBundle(checkoutBundle, { operators: { "x-luhn": () => { throw new Error("boom"); } } });
  const r = rs.evaluate({ data: { payment: { method: "card", cardNumber: "4111111111111111" } } });
  assert.ok(r.findings.some((f) => f.code === "RULE_FAILED" && f.message.includes("OPERATOR_FAILED")));
});

test("requestProblem returns the problem without throwing; evaluate throws RequestError", () => {
  const cases: [unknown, string | null][] = [
    [{ data: {} }, null],
    [{}, ""],
    [{ data: [] }, "/data"],
    [{ data: {}, extra: 1 }, "/extra"],
    [{ data: { x: Number.NaN } }, "/data/x"],
    [{ data: {}, locale: "en_GB" }, "/locale"],
    [{ data: {}, view: { page: "" } }, "/view/page"],
    ["{\"data\": {}, \"data\": {}}", "/data"],
    ["not json", ""],
  ];
  for (const [req, ptr] of cases) {
    const p = requestProblem(req);
    assert.equal(p === null ? null : p.pointer, ptr, JSON.stringify(req));
  }
  let deep: unknown = 1;
  for (let i = 0; i < 65; i++) deep = [deep];
  assert.equal(requestProblem({ data: { d: deep } })?.pointer, "/data");
  const rs = RuleSet.fromBundle(signupBundle);
  assert.throws(() => rs.evaluate({ data: [] } as never), (e: unknown) => e instanceof RequestError && e.pointer === "/data");
  assert.throws(() => rs.evaluate({ data: {}, ruleset: "other" }), RequestError);
});

test("load errors carry every diagnostic; schema validation stops at the first problem", () => {
  assert.throws(
    () => bundle({ ruleset: { id: "", version: "", defaultLocale: "en_GB" } }),
    (e: unknown) => e instanceof LoadError && e.code === "RULESET_INVALID" && e.diagnostics.length === 1,
  );
  assert.throws(
    () => bundle({ ruleset: { id: "a", version: "1", defaultLocale: "en", rules: [
      { id: "r1", code: "R1", when: { op: "nope", args: [] }, message: "m" },
      { id: "r2", code: "R2", when: { op: "nada", args: [] }, message: "m" },
    ], locales: { en: { m: "x" } } } }),
    (e: unknown) => e instanceof LoadError && e.diagnostics.length === 2 && e.diagnostics.every((d) => d.code === "OPERATOR_UNKNOWN"),
  );
});

test("Engine: custom operators, functions, code points", () => {
  const engine = new Engine().register("x-double", (n) => (n as number) * 2);
  const e = engine.expression({ op: "x-double", args: [{ fn: "inc", args: [{ var: "n" }] }] }, { functions: { inc: { params: ["v"], body: { op: "+", args: [{ var: "v" }, 1] } } } });
  assert.equal(e.evaluate({ n: 20 }), 42);
  assert.equal(engine.expression({ op: "length", args: ["a😀é"] }).evaluate(), 3);
  assert.equal(engine.expression({ op: "substring", args: ["a😀bc", 1, 2] }).evaluate(), "😀b");
  assert.equal(engine.expression({ op: "<", args: ["\uFFFF", "😀"] }).evaluate(), true);
  assert.equal(engine.expression({ op: "+", args: [0.1, 0.2] }).evaluate(), 0.3);
  assert.throws(() => engine.expression({ op: "x-undeclared", args: [] }, { operators: [] }), LoadError);
});

test("patternProblem and jsonFinite", () => {
  assert.equal(patternProblem("^[a-z]+$"), null);
  assert.equal(patternProblem("(a+)+")?.offset, 4);
  assert.equal(patternProblem("\\s")?.offset, 0);
  assert.equal(jsonFinite({ a: [1, "x", null, true] }), true);
  assert.equal(jsonFinite({ a: Number.POSITIVE_INFINITY }), false);
  assert.equal(jsonFinite([Number.NaN]), false);
  assert.equal(jsonFinite({ d: new Date() }), false);
});

test("a member named __proto__ is a member like any other (checksum as the Go engine computes it)", () => {
  const src = '{"ruleset":{"id":"p","version":"1","defaultLocale":"en","rules":[{"id":"r","code":"R","when":{"op":"==","args":[{"op":"literal","args":[{"__proto__":1}]},{"op":"literal","args":[{"__proto__":1}]}]},"message":"__proto__"}],"locales":{"en":{"__proto__":"x {v}"}}}}';
  const b = bundle(src);
  assert.equal(b.ruleset.checksum, "sha256:5651e9e31c807737f2f38b3f44d411dc1c77530cf891b0c0aaddd503de749604");
  assert.equal(RuleSet.fromBundle(b.text).evaluate({ data: {} }).findings[0].message, "x {v}");
  const e = new Engine().expression({ var: "data.__proto__.a" });
  // JSON.parse makes "__proto__" an own member, which a variable reads; an inherited one it never reads
  assert.equal(e.evaluate(JSON.parse('{"data": {"__proto__": {"a": 7}}}')), 7);
  assert.equal(new Engine().expression({ var: "data.constructor" }).evaluate({ data: {} }), null);
});
