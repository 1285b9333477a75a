import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { createRuleServer } from "../index.js";

const root = fileURLToPath(new URL("../../../../../../", import.meta.url));
const example = join(root, "runtimes/ts/examples/signup-form");
const signupBundle = readFileSync(join(root, "conformance/fixtures/signup/signup.bundle.json"), "utf8");

test("the example form validates in Chromium with the hook, and keeps working from the cached manifest when the server is down", async () => {
  const app = await build({
    entryPoints: [join(example, "app.ts")], bundle: true, write: false, format: "esm", platform: "browser",
    define: { "process.env.NODE_ENV": '"production"' }, logLevel: "silent",
  });
  const js = app.outputFiles[0].text;
  const html = readFileSync(join(example, "index.html"), "utf8");
  const rules = createRuleServer({ allowOpen: true, rulesets: [{ bundle: signupBundle }] });
  await rules.reload();
  let down = false;
  const site = http.createServer((req, res) => {
    if (req.url === "/" || req.url === "/index.html") {
      res.writeHead(200, { "Content-Type": "text/html" });
      return res.end(html);
    }
    if (req.url === "/app.js") {
      res.writeHead(200, { "Content-Type": "text/javascript" });
      return res.end(js);
    }
    if (down) {
      res.writeHead(503, { "Content-Type": "application/json" });
      return res.end('{"error":{"code":"NOT_READY","message":"down","hint":"wait"}}');
    }
    rules.server.emit("request", req, res);
  });
  await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(site.address() as { port: number }).port}/`;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector("#status:text-matches('ready')");
    await page.fill("#email", "ana");
    await page.waitForSelector("#email-findings .finding[data-code='EMAIL_INVALID']");
    await page.fill("#email", "ana@example.com");
    await page.waitForFunction(() => document.querySelectorAll("#email-findings .finding").length === 0);
    assert.equal(await page.locator("#stale").count(), 0);
    // the manifest endpoint goes down: a new page load still validates, from localStorage, marked stale
    down = true;
    await page.reload();
    await page.waitForSelector("#stale");
    await page.fill("#email", "bob");
    await page.waitForSelector("#email-findings .finding[data-code='EMAIL_INVALID']");
  } finally {
    await browser.close();
    site.close();
  }
});
