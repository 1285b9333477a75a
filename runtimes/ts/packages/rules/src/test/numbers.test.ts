import { test } from "node:test";
import assert from "node:assert/strict";
import * as num from "../num.js";

test("decimal arithmetic of numbers.md §5", () => {
  const cases: [string, number | null, number][] = [
    ["0.1 + 0.2", num.add(0.1, 0.2), 0.3],
    ["1.1 × 1.1", num.mul(1.1, 1.1), 1.21],
    ["0.07 × 100", num.mul(0.07, 100), 7],
    ["2 / 3", num.div(2, 3), 0.666666666666667],
    ["round(1.005, 2)", num.roundPlaces(1.005, 2), 1.01],
    ["mod(0.3, 0.1)", num.mod(0.3, 0.1), 0],
    ["1e15 + 1", num.add(1e15, 1), 1000000000000000],
    ["1e15 + 15", num.add(1e15, 15), 1000000000000020],
    ["mod(-7, 3)", num.mod(-7, 3), -1],
    ["mod(7, -3)", num.mod(7, -3), 1],
    ["mod(5.5, 2)", num.mod(5.5, 2), 1.5],
    ["round(-2.5)", num.roundPlaces(-2.5, 0), -3],
    ["round(1234.5, -2)", num.roundPlaces(1234.5, -2), 1200],
    ["0.3 / 0.1", num.div(0.3, 0.1), 3],
    ["-1 / 3", num.div(-1, 3), -0.333333333333333],
  ];
  for (const [name, got, want] of cases) assert.equal(got, want, name);
  assert.equal(num.div(1, 0), null);
  assert.throws(() => num.add(1e308, 1e308), num.NumberRangeError);
});

test("canonical text of numbers.md §3 and §4, ties to even", () => {
  const cases: [number, string][] = [
    [1234567890123445, "1234567890123440"],
    [1234567890123455, "1234567890123460"],
    [0.30000000000000004, "0.3"],
    [1e21, "1e+21"],
    [1.5e-7, "1.5e-7"],
    [5e-324, "4.94065645841247e-324"],
    [100000000000000000000, "100000000000000000000"],
    [0.000001, "0.000001"],
    [-0.1, "-0.1"],
  ];
  for (const [x, want] of cases) assert.equal(num.numText(x), want, String(x));
  assert.throws(() => num.numText(1.7976931348623157e308), num.NumberRangeError);
});
