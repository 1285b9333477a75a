// The React hook rendered by React DOM into jsdom, under Vitest (vitest.config.ts).
import { test, expect } from "vitest";
import { readFileSync } from "node:fs";
import * as React from "react";
import { createRoot } from "react-dom/client";
import { useRules } from "../src/react.js";
import { RuleSet } from "../src/index.js";
import { ManifestClient } from "../src/manifest-client.js";
import http from "node:http";

(globalThis as Record<string, unknown>).IS_REACT_ACT_ENVIRONMENT = true;
document.body.innerHTML = "<div id=root></div>";

const repoFile = (path: string) => readFileSync(new URL("../../../../../" + path, import.meta.url), "utf8");

const manifest = RuleSet.fromBundle(repoFile("conformance/fixtures/signup/signup.bundle.json")).manifest("client");
const ctx = { today: "2025-06-15" };

let last: ReturnType<typeof useRules> | null = null;

function Form(props: { data: Record<string, unknown>; locale?: string }) {
  const r = useRules({ manifest, data: props.data as never, ctx, locale: props.locale ?? null });
  last = r;
  return React.createElement(
    "ul",
    null,
    r.findings.map((f, i) => React.createElement("li", { key: i, "data-field": f.field ?? "" }, f.message)),
  );
}

test("useRules renders findings per field and evaluates only when an input changes", async () => {
  const root = createRoot(document.getElementById("root")!);
  const bad = { account: { email: "ana", password: "x", passwordConfirm: "y" } };
  await React.act(async () => root.render(React.createElement(Form, { data: bad })));
  const items = [...document.querySelectorAll("li")];
  expect(items.length).toBeGreaterThan(0);
  expect(items.some((li) => li.dataset.field === "account.email")).toBe(true);
  expect(last!.ready).toBe(true);
  expect(last!.stale).toBe(false);
  expect(last!.byField["account.email"]?.length).toBeGreaterThan(0);
  const n = last!.evaluations;
  // same inputs (same objects): no evaluation
  await React.act(async () => root.render(React.createElement(Form, { data: bad })));
  expect(last!.evaluations).toBe(n);
  // a new record: one more evaluation, different findings
  const good = {
    account: { email: "ana@example.com", password: "s3cret-pass", passwordConfirm: "s3cret-pass", username: "ana_l", kind: "private" },
    profile: { birthDate: "1990-04-01", firstName: "Ana" }, consent: { terms: true, newsletter: false },
  };
  await React.act(async () => root.render(React.createElement(Form, { data: good })));
  expect(last!.evaluations).toBe(n + 1);
  expect(last!.findings.length).toBe(0);
  expect(document.querySelectorAll("li").length).toBe(0);
  // the locale is an input too
  await React.act(async () => root.render(React.createElement(Form, { data: bad, locale: "fr" })));
  expect(last!.evaluations).toBe(n + 2);
  expect(last!.findings.some((f) => /obligatoire|valide|passe/.test(f.message))).toBe(true);
  await React.act(async () => root.unmount());
});

test("useRules follows a manifest client: the stored copy, marked stale, while the endpoint answers 503", async () => {
  // a real HTTP endpoint: the manifest with its ETag, then 503 once "down"
  const text = JSON.stringify(manifest);
  let down = false;
  const server = http.createServer((req, res) => {
    if (down) {
      res.writeHead(503, { "Content-Type": "application/json" });
      return void res.end('{"error":{"code":"NOT_READY","message":"down","hint":"wait"}}');
    }
    res.writeHead(200, { "Content-Type": "application/json", ETag: '"m1"' });
    res.end(text);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    localStorage.clear();
    const first = new ManifestClient({ baseUrl, ruleset: "signup", store: localStorage, refreshInterval: 0 });
    expect((await first.get()).stale).toBe(false);
    down = true;
    // a new page load: the copy in localStorage, revalidation fails
    const client = new ManifestClient({ baseUrl, ruleset: "signup", store: localStorage, refreshInterval: 0 });
    let state: ReturnType<typeof useRules> | null = null;
    function ClientForm() {
      state = useRules({ client, data: { account: { email: "ana" } }, ctx });
      return React.createElement("p", { id: "status" }, state.ready ? `${state.findings.length} findings${state.stale ? " (stale)" : ""}` : "loading");
    }
    const el = document.createElement("div");
    document.body.appendChild(el);
    const root = createRoot(el);
    await React.act(async () => root.render(React.createElement(ClientForm)));
    await React.act(async () => {
      await client.get();
    });
    expect(state!.ready).toBe(true);
    expect(state!.stale).toBe(true);
    expect(state!.error?.message).toMatch(/503/);
    expect(state!.byField["account.email"]?.length).toBeGreaterThan(0);
    expect(el.querySelector("#status")!.textContent).toMatch(/^[1-9]\d* findings \(stale\)$/);
    await React.act(async () => root.unmount());
  } finally {
    server.close();
  }
});
