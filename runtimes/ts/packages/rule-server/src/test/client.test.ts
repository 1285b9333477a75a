import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { readFileSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ManifestClient, ManifestUnavailableError, type ManifestStore } from "@sdods/rules/manifest-client";
import { createRuleServer } from "../index.js";

const root = fileURLToPath(new URL("../../../../../../", import.meta.url));
const signupBundle = readFileSync(join(root, "conformance/fixtures/signup/signup.bundle.json"), "utf8");

function memoryStore(): ManifestStore & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, getItem: (k) => map.get(k) ?? null, setItem: (k, v) => void map.set(k, v) };
}

test("the manifest client revalidates with If-None-Match and serves a stale copy when the server is down", async () => {
  const statuses: number[] = [];
  const s = createRuleServer({ token: "tok", rulesets: [{ bundle: signupBundle }], log: (e) => e.msg === "request" && statuses.push(e.status as number) });
  const url = await s.listen();
  const store = memoryStore();
  const c = new ManifestClient({ baseUrl: url, ruleset: "signup", token: "tok", store });
  const first = await c.get();
  assert.equal(first.stale, false);
  assert.equal(first.manifest.channel, "client");
  assert.match(first.etag ?? "", /^"sha256:/);
  const second = await c.get();
  assert.equal(second.stale, false);
  assert.deepEqual(second.manifest, first.manifest);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(statuses, [200, 304], "the second fetch is revalidated, not downloaded");
  assert.equal(store.map.size, 1, "the copy is in the store");
  await s.close();
  // the endpoint is down: the cached copy, stale, with the error
  const down = await c.get();
  assert.equal(down.stale, true);
  assert.ok(down.error instanceof Error);
  assert.deepEqual(down.manifest, first.manifest);
  // a new client (a new page load) starts from the store
  const again = new ManifestClient({ baseUrl: url, ruleset: "signup", token: "tok", store });
  assert.equal(again.current()?.stale, true);
  const r = await again.get();
  assert.equal(r.stale, true);
  assert.equal(r.manifest.channel, "client");
  // without any copy, the failure is an error
  await assert.rejects(new ManifestClient({ baseUrl: url, ruleset: "signup" }).get(), ManifestUnavailableError);
});

test("a 5xx answer serves the cached copy as stale; a 4xx is an error", async () => {
  let mode: "ok" | "503" | "401" = "ok";
  const s = createRuleServer({ allowOpen: true, rulesets: [{ bundle: signupBundle }] });
  await s.reload();
  const front = http.createServer((req, res) => {
    if (mode === "503") {
      res.writeHead(503, { "Content-Type": "application/json" });
      return res.end('{"error":{"code":"NOT_READY","message":"down","hint":"wait"}}');
    }
    if (mode === "401") {
      res.writeHead(401, { "Content-Type": "application/json" });
      return res.end('{"error":{"code":"UNAUTHORIZED","message":"no token","hint":"send one"}}');
    }
    s.server.emit("request", req, res);
  });
  await new Promise<void>((r) => front.listen(0, "127.0.0.1", r));
  const { port } = front.address() as { port: number };
  const c = new ManifestClient({ baseUrl: `http://127.0.0.1:${port}`, ruleset: "signup" });
  const seen: boolean[] = [];
  c.subscribe((r) => seen.push(r.stale));
  assert.equal((await c.get()).stale, false);
  mode = "503";
  const stale = await c.get();
  assert.equal(stale.stale, true);
  assert.match(stale.error!.message, /503/);
  mode = "401";
  await assert.rejects(c.get(), /401: no token/);
  mode = "ok";
  assert.equal((await c.get()).stale, false);
  assert.deepEqual(seen, [false, true, false]);
  front.close();
});

test("start() refreshes in the background: a new manifest reaches subscribers", async () => {
  const { bundle } = await import("@sdods/rules");
  const source = JSON.parse(readFileSync(join(root, "conformance/compiler/signup.json"), "utf8")).cases[0].input.source;
  const dir = mkdtempSync(join(tmpdir(), "rules-"));
  writeFileSync(join(dir, "signup.json"), JSON.stringify(source));
  const s = createRuleServer({ allowOpen: true, rulesDir: dir });
  const url = await s.listen();
  const c = new ManifestClient({ baseUrl: url, ruleset: "signup", refreshInterval: 30 });
  const etags: (string | null)[] = [];
  c.subscribe((r) => etags.push(r.etag));
  c.start();
  try {
    while (etags.length === 0) await new Promise((r) => setTimeout(r, 10));
    const next = { ruleset: { ...source.ruleset, version: "9.9.9" } };
    writeFileSync(join(dir, "signup.json"), JSON.stringify(next));
    assert.equal((await s.reload()).ok, true);
    const want = `"${bundle(next).ruleset.checksum}"`;
    const deadline = Date.now() + 5000;
    while (!etags.includes(want) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(etags.slice(-1), [want], "the new manifest arrived without a call to get()");
    assert.equal((c.current()!.manifest.ruleset as { version: string }).version, "9.9.9");
  } finally {
    c.stop();
    await s.close();
    rmSync(dir, { recursive: true });
  }
});

test("the server reloads a changed rules directory by itself (polling)", async () => {
  const source = JSON.parse(readFileSync(join(root, "conformance/compiler/signup.json"), "utf8")).cases[0].input.source;
  const dir = mkdtempSync(join(tmpdir(), "rules-"));
  writeFileSync(join(dir, "signup.json"), JSON.stringify(source));
  const s = createRuleServer({ allowOpen: true, rulesDir: dir, pollInterval: 20 });
  const url = await s.listen();
  try {
    const version = async () => ((await (await fetch(`${url}/rulesets`)).json()) as { items: { version: string }[] }).items[0].version;
    assert.equal(await version(), source.ruleset.version);
    writeFileSync(join(dir, "signup.json"), JSON.stringify({ ruleset: { ...source.ruleset, version: "2.0.0" } }));
    const deadline = Date.now() + 5000;
    while ((await version()) !== "2.0.0" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await version(), "2.0.0");
    // a broken file is refused; the previous rules keep serving
    writeFileSync(join(dir, "signup.json"), "{ not json");
    while (Date.now() < deadline) {
      const r = (await (await fetch(`${url}/readyz`)).json()) as { lastReload: { ok: boolean } };
      if (!r.lastReload.ok) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    assert.equal(await version(), "2.0.0");
  } finally {
    await s.close();
    rmSync(dir, { recursive: true });
  }
});
