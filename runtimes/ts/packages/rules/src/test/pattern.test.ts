import { test } from "node:test";
import assert from "node:assert/strict";
import { Pattern, patternProblem } from "../pattern.js";
import { repoFile } from "./paths.js";

interface Cases {
  accept: { pattern: string; match: string[]; noMatch: string[] }[];
  refuse: { pattern: string; offset: number }[];
}

const cases: Cases = JSON.parse(repoFile("engine/pattern/testdata/cases.json"));

test("accepted patterns match what the shared cases say", () => {
  for (const c of cases.accept) {
    assert.equal(patternProblem(c.pattern), null, `pattern ${JSON.stringify(c.pattern)} should be accepted`);
    const p = Pattern.compile(c.pattern);
    for (const s of c.match) assert.equal(p.test(s), true, `${JSON.stringify(c.pattern)} should match ${JSON.stringify(s)}`);
    for (const s of c.noMatch) assert.equal(p.test(s), false, `${JSON.stringify(c.pattern)} should not match ${JSON.stringify(s)}`);
  }
});

test("refused patterns are refused at the offset the shared cases say", () => {
  const wrong: string[] = [];
  for (const c of cases.refuse) {
    const p = patternProblem(c.pattern);
    if (p === null || p.offset !== c.offset) wrong.push(`${JSON.stringify(c.pattern)}: want ${c.offset}, got ${p === null ? "accepted" : p.offset}`);
  }
  assert.deepEqual(wrong, []);
});

test("matching is linear: the pathological ^(?:a|a)*b takes steps proportional to the subject", () => {
  const p = Pattern.compile("^(?:a|a)*b");
  const steps = (n: number) => p.testCounting("a".repeat(n)).steps;
  const s1 = steps(1000);
  const s2 = steps(2000);
  const s4 = steps(4000);
  assert.equal(p.testCounting("a".repeat(26)).match, false);
  // doubling the subject at most doubles the work (a backtracking engine multiplies it by 2^n)
  assert.ok(s2 <= 2 * s1 + 100, `steps ${s1} → ${s2}`);
  assert.ok(s4 <= 2 * s2 + 100, `steps ${s2} → ${s4}`);
  // and the bound of patterns.md §7: states × (subject length + 1)
  const q = Pattern.compile("^(?:a?){30}a{30}$");
  const r = q.testCounting("a".repeat(30));
  assert.equal(r.match, true);
  assert.ok(r.steps < 200 * 31, `steps ${r.steps}`);
});

test("the lazy DFA and the automaton simulation agree on random subjects", () => {
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
  let compared = 0;
  for (const c of cases.accept) {
    const p = Pattern.compile(c.pattern);
    const alphabet = Array.from(c.pattern + c.match.join("") + c.noMatch.join("") + "a\n😀");
    for (let k = 0; k < 30; k++) {
      let s = "";
      const len = Math.floor(rand() * 12);
      for (let i = 0; i < len; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
      assert.equal(p.test(s), p.testCounting(s).match, `${JSON.stringify(c.pattern)} on ${JSON.stringify(s)}`);
      compared++;
    }
  }
  assert.ok(compared > 1000);
});
