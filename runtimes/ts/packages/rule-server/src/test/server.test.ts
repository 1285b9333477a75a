import { test } from "node:test";
import http from "node:http";
import net from "node:net";
import assert from "node:assert/strict";
import { readFileSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRuleServer, noneMatch } from "../index.js";

const root = fileURLToPath(new URL("../../../../../../", import.meta.url));
const signupBundle = readFileSync(join(root, "conformance/fixtures/signup/signup.bundle.json"), "utf8");
const loanSource = JSON.parse(readFileSync(join(root, "conformance/compiler/loan.json"), "utf8")).cases[0].input.source;

test("createRuleServer throws synchronously without a token or allowOpen: true", () => {
  assert.throws(() => createRuleServer({ rulesets: [] }), /token/);
  assert.throws(() => createRuleServer({ token: "", rulesets: [] }), /token/);
  assert.throws(() => createRuleServer({ allowOpen: "yes" as unknown as boolean, rulesets: [] }), /token/);
  assert.doesNotThrow(() => createRuleServer({ allowOpen: true, rulesets: [] }));
  assert.doesNotThrow(() => createRuleServer({ token: "t", rulesets: [] }));
});

test("serves bundles, manifests and evaluations over real HTTP, with the token", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rules-"));
  writeFileSync(join(dir, "signup.bundle.json"), signupBundle);
  const s = createRuleServer({ token: "secret-token", rulesDir: dir, rulesets: [{ source: loanSource, name: "loan.json" }] });
  const url = await s.listen();
  try {
    const auth = { Authorization: "Bearer secret-token" };
    assert.equal((await fetch(`${url}/rulesets`)).status, 401);
    const list = (await (await fetch(`${url}/rulesets`, { headers: auth })).json()) as any;
    assert.deepEqual(list.items.map((i: { id: string }) => i.id).sort(), ["loan-application", "signup"]);
    const b = await fetch(`${url}/rulesets/signup/bundle`, { headers: auth });
    assert.equal(b.status, 200);
    assert.equal(await b.text(), signupBundle);
    const etag = b.headers.get("etag")!;
    assert.equal((await fetch(`${url}/rulesets/signup/bundle`, { headers: { ...auth, "If-None-Match": `W/${etag}` } })).status, 304);
    const m = await fetch(`${url}/rulesets/signup/manifest?channel=client`, { headers: auth });
    assert.equal(((await m.json()) as any).channel, "client");
    const ev = await fetch(`${url}/evaluations`, {
      method: "POST", headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify({ ruleset: "signup", data: { account: { email: "ana" } }, ctx: { today: "2025-06-15" } }),
    });
    assert.equal(ev.status, 200);
    const r = (await ev.json()) as any;
    assert.ok(r.findings.length > 0 && r.ruleset.id === "signup");
    const bad = await fetch(`${url}/evaluations`, { method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: '{"ruleset":"signup","data":[]}' });
    assert.equal(bad.status, 400);
    const e = (await bad.json()) as any;
    assert.equal(e.error.code, "BAD_REQUEST");
    assert.ok(e.error.hint);
    assert.equal((await fetch(`${url}/rulesets/%zz/bundle`, { headers: auth })).status, 400);
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
  } finally {
    await s.close();
    rmSync(dir, { recursive: true });
  }
});

test("close drains: a request in flight finishes, then the server stops", async () => {
  const s = createRuleServer({ allowOpen: true, rulesets: [{ bundle: signupBundle }] });
  const url = await s.listen();
  const { port } = new URL(url);
  const body = '{"ruleset":"signup","data":{}}';
  const status = new Promise<number>((resolve, reject) => {
    const req = http.request({ port, host: "127.0.0.1", method: "POST", path: "/evaluations", headers: { "Content-Type": "application/json", "Content-Length": body.length } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.write(body.slice(0, 10)); // in flight: the server has the request, not yet its body
    (async () => {
      while (s.requestsInFlight === 0) await new Promise((r) => setTimeout(r, 5));
      closing = s.close();
      await new Promise((r) => setTimeout(r, 50));
      req.end(body.slice(10));
    })().catch(reject);
  });
  let closing: Promise<boolean> = Promise.resolve(true);
  assert.equal(await status, 200);
  assert.equal(await closing, true);
  await assert.rejects(fetch(`${url}/livez`));
});

test("close takes the connections the kernel has queued before it closes the listener: none is reset", async () => {
  const s = createRuleServer({ allowOpen: true, rulesets: [{ bundle: signupBundle }] });
  const url = await s.listen();
  const body = '{"ruleset":"signup","data":{}}';
  const request = `POST /evaluations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  // Connections the kernel completes while the event loop does not turn: when the drain begins,
  // the server has accepted none of them, as under load, when Node (one accept per turn of its
  // loop) lags behind the kernel. Closing the listener then reset them all.
  const clients = Array.from({ length: 4 }, () => net.connect({ port: Number(new URL(url).port), host: "127.0.0.1" }));
  await new Promise((r) => process.nextTick(r)); // net.connect issues connect(2) on the next tick
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50); // the handshakes complete; the loop stays blocked
  const closing = s.close();
  const answers = clients.map(
    (c) =>
      new Promise<string>((resolve, reject) => {
        let got = "";
        c.on("data", (d) => (got += d));
        c.on("end", () => resolve(got));
        c.on("error", reject);
        c.write(request);
      }),
  );
  for (const a of await Promise.all(answers)) {
    assert.match(a, /^HTTP\/1\.1 200 /);
    assert.match(a, /\r\nconnection: close\r\n/i);
    assert.match(a, /"findings"/);
  }
  assert.equal(await closing, true);
  await assert.rejects(fetch(`${url}/livez`));
});

test("a drain reads what has arrived before it closes a connection as idle, however long the event loop was blocked", async () => {
  const s = createRuleServer({ allowOpen: true, rulesets: [{ bundle: signupBundle }], drainTimeout: 2000 }); // idle grace: 1 s
  const url = await s.listen();
  const body = '{"ruleset":"signup","data":{}}';
  const request = `POST /evaluations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  const c = net.connect({ port: Number(new URL(url).port), host: "127.0.0.1" });
  let got = "";
  c.on("data", (d) => (got += d));
  const ended = new Promise<string>((resolve, reject) => {
    c.on("end", () => resolve(got));
    c.on("error", reject);
  });
  c.write(request);
  while (!got.includes('"findings"')) await new Promise((r) => setTimeout(r, 5));
  got = "";
  const closing = s.close();
  await new Promise((r) => setTimeout(r, 100)); // the drain has seen the connection idle
  // Well within the idle grace the request is sent (the kernel has it at once), and the event
  // loop is then blocked past the grace (a long evaluation, a process without CPU), in its check
  // phase: the next turn runs the due timers, the drain's among them, before the poll phase that
  // reads the request.
  await new Promise<void>((r) =>
    setImmediate(() => {
      c.write(request);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1200);
      r();
    }),
  );
  const a = await ended;
  assert.match(a, /^HTTP\/1\.1 200 /);
  assert.match(a, /\r\nconnection: close\r\n/i);
  assert.equal(await closing, true);
});

test("If-None-Match follows RFC 9110", () => {
  const tag = '"sha256:abc"';
  assert.equal(noneMatch(["*"], tag), true);
  assert.equal(noneMatch([`"a", W/${tag}`], tag), true);
  assert.equal(noneMatch([`, "a",, ${tag} ,`], tag), true);
  assert.equal(noneMatch([`w/${tag}`], tag), false);
  assert.equal(noneMatch([`"a", *`], tag), false);
  assert.equal(noneMatch([`${tag} x`], tag), false);
});

test("text that is not well-formed UTF-8 or escapes a lone surrogate is refused, never repaired (spec/v1 README, Text)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rules-"));
  const bytes = Buffer.from(signupBundle);
  const at = bytes.indexOf("Signup form");
  writeFileSync(join(dir, "signup.bundle.json"), Buffer.concat([bytes.subarray(0, at), Buffer.from([0xed, 0xa0, 0x80]), bytes.subarray(at)]));
  writeFileSync(join(dir, "loan.json"), JSON.stringify(loanSource).replace('"loan-application"', '"loan\\ud800"'));
  const s = createRuleServer({ allowOpen: true, rulesDir: dir, pollInterval: 0 });
  const url = await s.listen();
  try {
    const ready = await fetch(`${url}/readyz`);
    assert.equal(ready.status, 503);
    const problems = ((await ready.json()) as { lastReload: { problems: { file: string; code: string; pointer: string }[] } }).lastReload.problems;
    assert.deepEqual(problems.map((p) => [p.file, p.code, p.pointer]).sort(), [["loan.json", "RULESET_INVALID", ""], ["signup.bundle.json", "BUNDLE_INVALID", ""]]);
    writeFileSync(join(dir, "signup.bundle.json"), signupBundle);
    rmSync(join(dir, "loan.json"));
    assert.equal((await s.reload()).ok, true);
    const post = (body: Blob | string) => fetch(`${url}/evaluations`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
    const enc = (email: number[]) => Buffer.concat([Buffer.from('{"ruleset":"signup","data":{"account":{"email":"a'), Buffer.from(email), Buffer.from('@b.cd"}}}')]);
    for (const bad of [[0xff], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf4, 0x90, 0x80, 0x80]]) {
      const r = await post(new Blob([enc(bad)]));
      assert.equal(r.status, 400, JSON.stringify(bad));
      const e = ((await r.json()) as { error: { code: string; message: string } }).error;
      assert.equal(e.code, "BAD_REQUEST");
      assert.match(e.message, /byte offset 49\)/);
    }
    const lone = await post('{"ruleset":"signup","data":{"account":{"email":"\\udc00@b.cd"}}}');
    assert.equal(lone.status, 400);
    assert.match(((await lone.json()) as { error: { message: string } }).error.message, /lone surrogate escape/);
    assert.equal((await post('{"ruleset":"signup","data":{"account":{"email":"\\ud83d\\ude00@b.cd"}}}')).status, 200);
  } finally {
    await s.close();
    rmSync(dir, { recursive: true });
  }
});
