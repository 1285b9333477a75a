import { test } from "node:test";
import assert from "node:assert/strict";
import { JSDOM } from "jsdom";
import { repoFile } from "./paths.js";

const dom = new JSDOM("<!doctype html><div id=root></div>");
const g = globalThis as Record<string, unknown>;
g.window = dom.window;
g.document = dom.window.document;
g.navigator = dom.window.navigator;
g.IS_REACT_ACT_ENVIRONMENT = true;

const React = await import("react");
const { createRoot } = await import("react-dom/client");
const { useRules } = await import("../react.js");
const { RuleSet } = await import("../index.js");

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
  assert.ok(items.length > 0, "findings rendered");
  assert.ok(last!.ready && !last!.stale);
  assert.ok(last!.byField["account.email"]?.length, "a finding on account.email");
  const n = last!.evaluations;
  // same inputs (same objects): no evaluation
  await React.act(async () => root.render(React.createElement(Form, { data: bad })));
  assert.equal(last!.evaluations, n);
  // a new record: one more evaluation, different findings
  const good = {
    account: { email: "ana@example.com", password: "s3cret-pass", passwordConfirm: "s3cret-pass", username: "ana_l", kind: "private" },
    profile: { birthDate: "1990-04-01", firstName: "Ana" }, consent: { terms: true, newsletter: false },
  };
  await React.act(async () => root.render(React.createElement(Form, { data: good })));
  assert.equal(last!.evaluations, n + 1);
  assert.equal(last!.findings.length, 0);
  assert.equal(document.querySelectorAll("li").length, 0);
  // the locale is an input too
  await React.act(async () => root.render(React.createElement(Form, { data: bad, locale: "fr" })));
  assert.equal(last!.evaluations, n + 2);
  assert.ok(last!.findings.some((f) => /obligatoire|valide|passe/.test(f.message)), "French messages");
  await React.act(async () => root.unmount());
});
