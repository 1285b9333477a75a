// Benchmarks of the TypeScript runtime (never timed tests): the four expression cases of the Go
// comparison against json-logic-js, @marcbachmann/cel-js, zen-engine's expression evaluator and a
// hand-written closure, and evaluations per second of the five conformance fixtures.
// Run: node packages/rules/dist/bench/bench.js [seconds per case] (make bench-typescript).
// Prints JSON lines, then markdown tables (bench/run.sh adds the Go runtime's numbers).

import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Engine, RuleSet } from "../index.js";
import type { JSONObject, JSONValue } from "../index.js";

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL("../../../../../../", import.meta.url));
const seconds = Number(process.argv[2] ?? "1");
/** BENCH_ONLY=fixtures or expressions runs one half (bench.sh interleaves rounds with Go's). */
const only = process.env.BENCH_ONLY ?? "";

/** Runs fn in batches for about `seconds` and returns the median ns per call of 5 slices. */
function measure(fn: () => unknown): number {
  for (let i = 0; i < 20000; i++) fn(); // warm up the JIT
  const slices: number[] = [];
  const sliceMs = (seconds * 1000) / 5;
  for (let s = 0; s < 5; s++) {
    let n = 0;
    const start = process.hrtime.bigint();
    const end = start + BigInt(Math.round(sliceMs * 1e6));
    let now = start;
    while (now < end) {
      for (let i = 0; i < 1000; i++) fn();
      n += 1000;
      now = process.hrtime.bigint();
    }
    slices.push(Number(now - start) / n);
  }
  slices.sort((a, b) => a - b);
  return slices[2];
}

type Case = { name: string; engines: Record<string, () => unknown>; want: unknown };

function cases(): Case[] {
  const env = { Origin: "MOW", Country: "RU", Value: 100, Adults: 1, name: "/groups/foo/bar", group: "foo", array: Array.from({ length: 100 }, (_, i) => i + 1) };
  const out: Case[] = [];
  // sdods
  const engine = new Engine().register("x-join", (a, b) => (a as string) + (b as string));
  const penv = engine.prepareEnv(env as unknown as JSONObject);
  const sd = {
    Boolean: engine.expression({ op: "and", args: [
      { op: "or", args: [{ op: "==", args: [{ var: "Origin" }, "MOW"] }, { op: "==", args: [{ var: "Country" }, "RU"] }] },
      { op: "or", args: [{ op: ">=", args: [{ var: "Value" }, 100] }, { op: "==", args: [{ var: "Adults" }, 1] }] }] }),
    StartsWith: engine.expression({ op: "startsWith", args: [{ var: "name" }, { op: "concat", args: ["/groups/", { var: "group" }] }] }),
    Func: engine.expression({ op: "x-join", args: ["hello", ", world"] }),
    Map: engine.expression({ op: "map", args: [{ var: "array" }, { op: "*", args: [{ var: "it" }, 2] }] }),
  };
  // json-logic-js
  const jl = require("json-logic-js");
  jl.add_operation("startsWith", (a: string, b: string) => a.startsWith(b));
  jl.add_operation("join", (a: string, b: string) => a + b);
  const jlRules = {
    Boolean: { and: [{ or: [{ "==": [{ var: "Origin" }, "MOW"] }, { "==": [{ var: "Country" }, "RU"] }] }, { or: [{ ">=": [{ var: "Value" }, 100] }, { "==": [{ var: "Adults" }, 1] }] }] },
    StartsWith: { startsWith: [{ var: "name" }, { cat: ["/groups/", { var: "group" }] }] },
    Func: { join: ["hello", ", world"] },
    Map: { map: [{ var: "array" }, { "*": [{ var: "" }, 2] }] },
  };
  // cel-js
  // eslint-disable-next-line @typescript-eslint/no-var-requires
  const cel = require("@marcbachmann/cel-js");
  const celEnv = new cel.Environment({ unlistedVariablesAreDyn: true }).registerFunction("join(string, string): string", (a: string, b: string) => a + b);
  const celEnvValues = { ...env, Value: 100n, Adults: 1n, array: env.array.map((x) => BigInt(x)) };
  const celProg = {
    Boolean: celEnv.parse('(Origin == "MOW" || Country == "RU") && (Value >= 100 || Adults == 1)'),
    StartsWith: celEnv.parse('name.startsWith("/groups/" + group)'),
    Func: celEnv.parse('join("hello", ", world")'),
    Map: celEnv.parse("array.map(x, x * 2)"),
  };
  // zen-engine (no custom functions in its expression language: Func is the concatenation itself)
  const zen = require("@gorules/zen-engine");
  const zenExpr = {
    Boolean: '(Origin == "MOW" or Country == "RU") and (Value >= 100 or Adults == 1)',
    StartsWith: 'startsWith(name, "/groups/" + group)',
    Func: '"hello" + ", world"',
    Map: "map(array, # * 2)",
  };
  // hand-written closures, the floor
  const hand = {
    Boolean: (e: typeof env) => (e.Origin === "MOW" || e.Country === "RU") && (e.Value >= 100 || e.Adults === 1),
    StartsWith: (e: typeof env) => e.name.startsWith("/groups/" + e.group),
    Func: (_e: typeof env) => "hello" + ", world",
    Map: (e: typeof env) => e.array.map((x) => x * 2),
  };
  const wants: Record<string, unknown> = { Boolean: true, StartsWith: true, Func: "hello, world", Map: env.array.map((x) => x * 2) };
  for (const name of ["Boolean", "StartsWith", "Func", "Map"] as const) {
    out.push({
      name,
      want: wants[name],
      engines: {
        sdods: () => sd[name].evaluatePrepared(penv),
        "sdods-checked": () => sd[name].evaluate(env as unknown as JSONObject),
        "json-logic-js": () => jl.apply(jlRules[name], env),
        "cel-js": () => celProg[name](celEnvValues),
        "zen-engine": () => zen.evaluateExpressionSync(zenExpr[name], env),
        closure: () => hand[name](env),
      },
    });
  }
  return out;
}

function same(a: unknown, b: unknown): boolean {
  const norm = (v: unknown): unknown => (typeof v === "bigint" ? Number(v) : Array.isArray(v) ? v.map(norm) : v);
  return JSON.stringify(norm(a)) === JSON.stringify(norm(b));
}

interface Row { kind: string; case: string; engine: string; ns: number }
const rows: Row[] = [];

for (const c of only === "fixtures" ? [] : cases()) {
  for (const [eng, fn] of Object.entries(c.engines)) {
    const got = fn();
    if (!same(got, c.want)) throw new Error(`${c.name}/${eng}: got ${JSON.stringify(got, (_k, v) => (typeof v === "bigint" ? Number(v) : v))}`);
    const ns = measure(fn);
    rows.push({ kind: "expression", case: c.name, engine: eng, ns });
    console.log(JSON.stringify(rows[rows.length - 1]));
  }
}

for (const f of only === "expressions" ? [] : ["signup", "checkout", "loan", "insurance", "addressbook"]) {
  const rs = RuleSet.fromBundle(readFileSync(`${root}conformance/fixtures/${f}/${f}.bundle.json`, "utf8"), {
    operators: { "x-luhn": () => true, "x-test-sum": (...xs: JSONValue[]) => (xs as number[]).reduce((a, b) => a + b, 0) },
  });
  const golden = JSON.parse(readFileSync(`${root}conformance/fixtures/${f}/evaluations.json`, "utf8"));
  const reqs = golden.tests.map((t: { request: JSONObject; channel?: "server" | "client" }) => ({ req: t.request, ch: t.channel ?? "server" }));
  let k = 0;
  const ns = measure(() => {
    const r = reqs[k++ % reqs.length];
    return rs.evaluate(r.req, r.ch);
  });
  rows.push({ kind: "fixture", case: f, engine: "sdods-ts", ns });
  console.log(JSON.stringify(rows[rows.length - 1]));
}

// --- tables: `bench.js report FILE…` reads the JSON lines of several runs and Go's outputs,
// and prints the medians as the tables of docs/benchmarks.md.
