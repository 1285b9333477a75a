import { test } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/** The budget of docs/benchmarks.md: the whole runtime (evaluator and compiler), minified and gzipped. */
const BUDGET_GZIP = 32 * 1024;

test("the browser bundle of the runtime stays under its budget", async () => {
  const entry = fileURLToPath(new URL("../index.js", import.meta.url));
  const out = await build({ entryPoints: [entry], bundle: true, minify: true, write: false, format: "esm", platform: "browser", logLevel: "silent" });
  const js = out.outputFiles[0].contents;
  const gz = gzipSync(js, { level: 9 }).length;
  console.log(`browser bundle: ${js.length} bytes minified, ${gz} bytes gzipped (budget ${BUDGET_GZIP})`);
  assert.ok(gz <= BUDGET_GZIP, `${gz} bytes gzipped, over the budget of ${BUDGET_GZIP}`);
  // no Node built-in may reach the browser bundle
  assert.doesNotMatch(new TextDecoder().decode(js), /from\s*"node:|import\("node:|require\(/);
});
