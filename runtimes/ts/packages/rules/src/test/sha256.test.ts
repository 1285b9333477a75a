import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha256Hex } from "../sha256.js";

test("sha256Hex agrees with node:crypto", () => {
  const inputs = ["", "abc", "a".repeat(55), "a".repeat(56), "a".repeat(64), "é😀\u0000", "x".repeat(100000)];
  for (const s of inputs) assert.equal(sha256Hex(s), createHash("sha256").update(s, "utf8").digest("hex"), `length ${s.length}`);
});
