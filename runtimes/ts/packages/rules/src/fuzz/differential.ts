// Differential fuzzing against the reference: random expressions (seeded, reproducible) — or, with
// FUZZ_RULES=1, mutated requests of the five fixtures — sent to the Go `rules engine` and to this
// runtime's protocol session; any difference in result, error code or pointer is printed and makes
// the run fail. With FUZZ_TEXT=1, request lines carrying random bytes and escapes (invalid UTF-8,
// encoded and escaped surrogates, pairs, escaped backslashes) and members named twice at random
// levels of env, sent as raw bytes (spec/v1/README.md, "Text" and "Members named twice").
// Usage: [FUZZ_RULES=1|FUZZ_TEXT=1] node packages/rules/dist/fuzz/differential.js RULES_BINARY [count] [seed]

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { ProtocolSession } from "../protocol.js";
import { CORE_OPERATORS } from "../expr.js";
import { setCodeGeneration } from "../gen.js";

if (process.env.SDODS_NO_CODEGEN === "1") setCodeGeneration(false);

const [bin, countArg, seedArg] = process.argv.slice(2);
if (!bin) {
  console.error("usage: differential.js RULES_BINARY [count] [seed]");
  process.exit(2);
}
const count = Number(countArg ?? "2000");
let state = Number(seedArg ?? "20261126") >>> 0;
function rand(): number {
  // mulberry32
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];

const ARITY: Record<string, [number, number]> = {
  "==": [2, 2], "!=": [2, 2], "<": [2, 2], "<=": [2, 2], ">": [2, 2], ">=": [2, 2], between: [3, 3], and: [1, 3], or: [1, 3], not: [1, 1],
  if: [3, 5], coalesce: [1, 3], "+": [2, 3], "-": [1, 2], "*": [2, 3], "/": [2, 2], mod: [2, 2], abs: [1, 1], min: [1, 3], max: [1, 3],
  round: [1, 2], sum: [1, 1], upper: [1, 1], lower: [1, 1], trim: [1, 1], concat: [1, 3], substring: [2, 3], text: [1, 1],
  startsWith: [2, 2], endsWith: [2, 2], matches: [2, 2], length: [1, 1], contains: [2, 2], in: [2, 2], map: [2, 3], filter: [2, 3],
  some: [2, 3], all: [2, 3], typeOf: [1, 1], isEmpty: [1, 1], literal: [1, 1], isDate: [1, 1], yearsBetween: [2, 2], daysBetween: [2, 2], dateAdd: [3, 3],
};
const numbers = [0, 1, -1, 2, 3, 0.1, 0.2, 0.3, 0.30000000000000004, 1.005, -2.5, 2.5, 1e15, 1234567890123445, 123456789012345.6, 1e21, 1e-7, 5e-324, 1e308, -1e308, 100, 7, -7, 0.07, 1.5, 15, -15, 16, 10000001];
const strings = ["", "a", "abc", "ABC", "a😀é", "😀", "\uFFFF", " x\t", "straße", "ÉTÉ K", "2024-02-29", "2023-02-29", "2024-01-31", "2024-01-31T23:30:00.250+01:00", "0001-01-01", "9999-12-31", "2000-02-29T00:00:00Z", "days", "months", "years", "^[a-z]+$", "a.c", "(a+)+", "^a|b$", "[0-9]{2,3}", "\\d+", "x", "it", "item"];
const vars = ["data.n", "data.s", "data.list", "data.d", "data.obj", "data.obj.a", "data.none", "data.list.1", "it", "x", "ctx.today", "data.words", "data.nums.0"];

function leaf(): unknown {
  const r = rand();
  if (r < 0.3) return pick(numbers);
  if (r < 0.55) return pick(strings);
  if (r < 0.62) return pick([true, false, null]);
  if (r < 0.85) return { var: pick(vars) };
  if (r < 0.92) return [pick(numbers), pick(numbers)];
  return { op: "literal", args: [pick([{ a: 1 }, [1, [2]], { b: [1, "x"] }, [], {}])] };
}

function expr(depth: number): unknown {
  if (depth > 3 || rand() < 0.25) return leaf();
  if (rand() < 0.05) return { op: pick(["x-test-sum", "x-test-reverse", "x-luhn"]), args: [expr(depth + 1)] };
  const op = pick(CORE_OPERATORS);
  const [lo, hi] = ARITY[op];
  let n = lo + Math.floor(rand() * (hi - lo + 1));
  if (op === "if" && n % 2 === 0) n++;
  if (op === "literal") return { op, args: [leaf()] };
  if (["map", "filter", "some", "all"].includes(op)) {
    const list = rand() < 0.6 ? { var: pick(["data.list", "data.words", "data.nums", "data.none"]) } : expr(depth + 1);
    return n === 3 ? { op, args: [list, pick(["x", "item", "it"]), expr(depth + 1)] } : { op, args: [list, expr(depth + 1)] };
  }
  return { op, args: Array.from({ length: n }, () => expr(depth + 1)) };
}

const env = {
  data: { n: 5, s: "abc", list: [1, 2, 3], d: "2024-02-29", obj: { a: 1 }, words: ["b", "a😀", ""], nums: [0.1, 0.2, null] },
  ctx: { today: "2025-06-15" },
};

/** Mutates a request: random members of data set to random values or removed; a view, a locale. */
function mutate(v: unknown, depth: number): unknown {
  if (v === null || typeof v !== "object") return rand() < 0.3 ? pick([...numbers, ...strings, null, true, [], {}]) : v;
  if (Array.isArray(v)) {
    const out = v.map((x) => mutate(x, depth + 1));
    if (rand() < 0.1) out.push(mutate(out[0] ?? null, depth + 1));
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const r = rand();
    if (r < 0.08) continue;
    out[k] = r < 0.15 ? pick([...numbers, ...strings, null, [1, 2], { a: 1 }]) : mutate(x, depth + 1);
  }
  return out;
}

async function rules(go: ReturnType<typeof spawn>, lines: AsyncIterator<string>, session: ProtocolSession): Promise<number> {
  const { readFileSync } = await import("node:fs");
  const { fileURLToPath } = await import("node:url");
  const root = fileURLToPath(new URL("../../../../../../", import.meta.url));
  let diffs = 0;
  let id = 0;
  const both = async (req: Record<string, unknown>) => {
    const line = JSON.stringify({ id: id++, ...req });
    go.stdin!.write(line + "\n");
    const a = JSON.parse((await lines.next()).value as string);
    const b = JSON.parse(session.handle(line)!);
    return { line, a, b };
  };
  const fixtures = ["signup", "checkout", "loan", "insurance", "addressbook"];
  const per = Math.ceil(count / fixtures.length);
  for (const f of fixtures) {
    const b = JSON.parse(readFileSync(`${root}conformance/fixtures/${f}/${f}.bundle.json`, "utf8"));
    const golden = JSON.parse(readFileSync(`${root}conformance/fixtures/${f}/evaluations.json`, "utf8"));
    const loaded = await both({ cmd: "load", bundle: b });
    if (loaded.a.error || loaded.b.error) throw new Error(`load ${f}: ${JSON.stringify(loaded)}`);
    for (let i = 0; i < per; i++) {
      const t = pick(golden.tests as { request: Record<string, unknown>; channel?: string }[]);
      const req = { ...t.request, data: mutate(t.request.data ?? {}, 0) } as Record<string, unknown>;
      if (rand() < 0.2) req.locale = pick(["fr", "fr-CA", "de", "EN", "en-GB-x-y"]);
      if (rand() < 0.2) req.view = { page: pick(["signup", "payment", "income", "contacts", "loan", "cart"]) };
      const r = await both({ cmd: "evaluate", ruleset: b.ruleset.id, channel: t.channel ?? "server", request: req });
      const norm = (x: { result?: unknown; error?: { code: string; pointer?: string } }) =>
        JSON.stringify(x.error ? { code: x.error.code, pointer: x.error.pointer ?? "" } : sortKeys(x.result));
      if (norm(r.a) !== norm(r.b)) {
        diffs++;
        if (diffs <= 10) console.log(`DIFF ${r.line}\n  go: ${JSON.stringify(r.a.error ?? r.a.result)}\n  ts: ${JSON.stringify(r.b.error ?? r.b.result)}`);
      }
    }
  }
  return diffs;
}

// pieces of a JSON string's content, as bytes: well-formed and malformed UTF-8, and escapes
const PIECES: number[][] = [
  [0x61], [0x7a], [0xc3, 0xa9], [0xe2, 0x82, 0xac], [0xf0, 0x9f, 0x98, 0x80], [0xef, 0xbf, 0xbf], [0xf4, 0x8f, 0xbf, 0xbf],
  [0xff], [0x80], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xed, 0xb0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80],
  [0xf0, 0x9f, 0x98], [0xc2],
  ...["\\ud800", "\\udc00", "\\uD83D", "\\ude00", "\\ud83d\\ude00", "\\uDBFF\\uDFFF", "\\\\ud800", "\\ufffd", "\\u0041", "\\n"].map((e) => [...Buffer.from(e)]),
];

function textLine(i: number): Buffer {
  const str = () => {
    const out: number[] = [0x22];
    const n = 1 + Math.floor(rand() * 4);
    // mostly well-formed, so that what is accepted is compared too
    for (let k = 0; k < n; k++) out.push(...(rand() < 0.93 ? pick(PIECES.slice(0, 7)) : pick(PIECES)));
    out.push(0x22);
    return Buffer.from(out);
  };
  const lit = (v: string) => Buffer.from(v);
  const obj = (depth: number): Buffer => {
    // an object with a member named twice now and then, and a string of random text
    const members: Buffer[] = [];
    const names = ["a", "b", "c"];
    const n = 1 + Math.floor(rand() * 3);
    for (let k = 0; k < n; k++) {
      const name = rand() < 0.15 ? str() : lit(JSON.stringify(rand() < 0.2 ? "a" : names[k]));
      const v = depth < 2 && rand() < 0.4 ? obj(depth + 1) : rand() < 0.5 ? str() : lit(String(pick([1, 1e999, -2, 0.5])));
      members.push(Buffer.concat([name, lit(":"), v]));
    }
    return Buffer.concat([lit("{"), ...members.flatMap((m, k) => (k ? [lit(","), m] : [m])), lit("}")]);
  };
  const expression = pick([
    () => Buffer.concat([lit('{"op":"length","args":['), str(), lit("]}")]),
    () => Buffer.concat([lit('{"op":"concat","args":['), str(), lit(","), str(), lit("]}")]),
    () => Buffer.concat([lit('{"op":"matches","args":['), str(), lit(',"^a"]}')]),
    () => lit('{"var":"a.b"}'),
    () => lit('{"op":"typeOf","args":[{"var":"c"}]}'),
  ])();
  return Buffer.concat([lit(`{"id":${i},"cmd":"expression","expression":`), expression, lit(',"env":'), obj(0), lit("}")]);
}

async function text(go: ReturnType<typeof spawn>, lines: AsyncIterator<string>, session: ProtocolSession): Promise<number> {
  let diffs = 0;
  const seen = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const line = textLine(i);
    go.stdin!.write(Buffer.concat([line, Buffer.from("\n")]));
    const a = JSON.parse((await lines.next()).value as string);
    const b = JSON.parse(session.handle(line)!);
    const norm = (x: { id: unknown; result?: unknown; error?: { code: string; pointer?: string } }) =>
      JSON.stringify({ id: x.id, ...(x.error ? { code: x.error.code, pointer: x.error.pointer ?? "" } : { result: sortKeys(x.result) }) });
    const outcome = a.error ? a.error.code : "value";
    seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
    if (norm(a) !== norm(b)) {
      diffs++;
      if (diffs <= 10) console.log(`DIFF ${line.toString("base64")}\n  go: ${norm(a)}\n  ts: ${norm(b)}`);
    }
  }
  console.log(`outcomes: ${[...seen].sort().map(([k, v]) => `${k} ${v}`).join(", ")}`);
  return diffs;
}

async function main(): Promise<void> {
  const go = spawn(bin, ["engine"], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: go.stdout! })[Symbol.asyncIterator]();
  const session = new ProtocolSession();
  if (process.env.FUZZ_TEXT === "1") {
    const d = await text(go, lines, session);
    go.stdin!.end();
    console.log(`${count} request lines of random text, ${d} differences`);
    process.exit(d === 0 ? 0 : 1);
  }
  if (process.env.FUZZ_RULES === "1") {
    const d = await rules(go, lines, session);
    go.stdin!.end();
    console.log(`${count} evaluations of mutated fixture requests, ${d} differences`);
    process.exit(d === 0 ? 0 : 1);
  }
  let diffs = 0;
  for (let i = 0; i < count; i++) {
    const req = { id: i, cmd: "expression", expression: expr(0), env, operators: ["x-test-sum", "x-test-reverse", "x-luhn"] };
    const line = JSON.stringify(req);
    go.stdin!.write(line + "\n");
    const goOut = JSON.parse((await lines.next()).value as string);
    const tsOut = JSON.parse(session.handle(line)!);
    const norm = (r: { result?: unknown; error?: { code: string; pointer?: string } }) =>
      JSON.stringify(r.error ? { code: r.error.code, pointer: r.error.pointer ?? "" } : sortKeys(r.result));
    if (norm(goOut) !== norm(tsOut)) {
      diffs++;
      if (diffs <= 20) console.log(`DIFF ${line}\n  go: ${JSON.stringify(goOut.error ?? goOut.result)}\n  ts: ${JSON.stringify(tsOut.error ?? tsOut.result)}`);
    }
  }
  go.stdin!.end();
  console.log(`${count} expressions, ${diffs} differences`);
  process.exit(diffs === 0 ? 0 : 1);
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
  return v;
}

void main();
