// A small example form: the signup fixture's client manifest, fetched from the rule server by the
// manifest client (cached in localStorage), evaluated in the browser by the useRules hook as the
// user types. Built with esbuild (see README.md); the browser test of @sdods/rule-server runs it
// in Chromium.

import { createElement as h, useState } from "react";
import { createRoot } from "react-dom/client";
import { ManifestClient } from "@sdods/rules/manifest-client";
import { useRules } from "@sdods/rules/react";

const client = new ManifestClient({ baseUrl: location.origin, ruleset: "signup", store: localStorage, refreshInterval: 0 });

function Form() {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const data = { account: { email, password, passwordConfirm: password, username: "ana_l", kind: "private" }, consent: { terms: true } };
  const r = useRules({ client, data, ctx: { today: "2025-06-15" } });
  const messages = (field: string) => (r.byField[field] ?? []).map((f, i) => h("p", { key: i, className: "finding", "data-code": f.code }, f.message));
  return h(
    "form",
    { id: "signup" },
    r.stale ? h("p", { id: "stale" }, "offline: using the last rules") : null,
    h("p", { id: "status" }, r.ready ? `ready ${r.evaluations}` : "loading"),
    h("label", null, "E-mail ", h("input", { id: "email", value: email, onChange: (e: { target: { value: string } }) => setEmail(e.target.value) })),
    h("div", { id: "email-findings" }, messages("account.email")),
    h("label", null, "Password ", h("input", { id: "password", type: "password", value: password, onChange: (e: { target: { value: string } }) => setPassword(e.target.value) })),
    h("div", { id: "password-findings" }, messages("account.password")),
  );
}

createRoot(document.getElementById("root")!).render(h(Form));
