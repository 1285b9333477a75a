// Prints the tables of docs/benchmarks.md from the JSON lines of bench.js runs and the outputs of
// Go's BenchmarkFixtureEvaluation (files given as arguments; medians over the rounds).
import { readFileSync } from "node:fs";

interface Row { kind: string; case: string; engine: string; ns: number }
const rows: Row[] = [];
const goNs = new Map<string, number[]>();
for (const file of process.argv.slice(2)) {
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("{")) rows.push(JSON.parse(line));
    const m = /^BenchmarkFixtureEvaluation\/(\w+)\S*\s+\d+\s+([\d.]+) ns\/op/.exec(line);
    if (m) goNs.set(m[1], [...(goNs.get(m[1]) ?? []), Number(m[2])]);
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const ns = (kind: string, c: string, e: string) => median(rows.filter((r) => r.kind === kind && r.case === c && r.engine === e).map((r) => r.ns));
const fmt = (x: number) => (Number.isNaN(x) ? "—" : x >= 100 ? Math.round(x).toLocaleString("en-US").replace(/,/g, " ") : x.toFixed(1));
console.log("| Case | sdods (prepared env) | sdods-checked | json-logic-js | cel-js | zen-engine | closure | sdods ÷ best other | sdods ÷ closure |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const c of ["Boolean", "StartsWith", "Func", "Map"]) {
  const g = (e: string) => ns("expression", c, e);
  const best = Math.min(g("json-logic-js"), g("cel-js"), g("zen-engine"));
  console.log(`| ${c} | ${fmt(g("sdods"))} | ${fmt(g("sdods-checked"))} | ${fmt(g("json-logic-js"))} | ${fmt(g("cel-js"))} | ${fmt(g("zen-engine"))} | ${fmt(g("closure"))} | ${(g("sdods") / best).toFixed(2)} | ${(g("sdods") / g("closure")).toFixed(1)} |`);
}
console.log("\n| Fixture | TypeScript ns/evaluation | evaluations/s | Go ns/evaluation | evaluations/s | TypeScript ÷ Go (evaluations/s) |");
console.log("|---|---:|---:|---:|---:|---:|");
for (const f of ["signup", "checkout", "loan", "insurance", "addressbook"]) {
  const t = ns("fixture", f, "sdods-ts");
  const g = median(goNs.get(f) ?? []);
  console.log(`| ${f} | ${fmt(t)} | ${fmt(1e9 / t)} | ${fmt(g)} | ${fmt(1e9 / g)} | ${(g / t).toFixed(2)} |`);
}
