// Reads JSON Lines {"logic": L, "data": D} on standard input and writes one JSON line per case:
// {"ok": RESULT} (undefined written as {"undefined": true}) or {"error": MESSAGE}.
// Numbers are written by JSON.stringify, so NaN and the infinities come out as null, as any JSON
// consumer of json-logic-js sees them; {"nonfinite": true} marks them for the comparison.
"use strict";
const jsonLogic = require("json-logic-js");
const readline = require("readline");
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
const out = [];
function hasNonFinite(v) {
  if (typeof v === "number") return !Number.isFinite(v);
  if (Array.isArray(v)) return v.some(hasNonFinite);
  if (v !== null && typeof v === "object") return Object.values(v).some(hasNonFinite);
  return false;
}
const origLog = console.log;
console.log = function () {}; // the log operation prints; keep stdout for results
rl.on("line", (line) => {
  if (line === "") return;
  const c = JSON.parse(line);
  let r;
  try {
    const v = jsonLogic.apply(c.logic, c.data);
    if (v === undefined) r = { undefined: true };
    else if (typeof v === "function") r = { error: "function value" };
    else r = { ok: v, nonfinite: hasNonFinite(v) };
  } catch (e) {
    r = { error: String(e && e.message ? e.message : e) };
  }
  out.push(JSON.stringify(r));
});
rl.on("close", () => {
  process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
  void origLog;
});
