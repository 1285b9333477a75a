// GoRules Zen (its Rust core, through the Node binding of @gorules/zen-engine) on the signup
// comparison of bench/signup_test.go: the fixture's rules written as one Zen decision (an
// expression node), the same 11 golden requests, checked against their golden findings and states
// before timing. Prints one JSON line: the mean time per evaluation through the binding
// (await decision.evaluate, as a Node host calls it) and by Zen's own engine timer (the
// `performance` it reports, which leaves out the binding's conversions).
//
// It also times, by Zen's timer, two one-expression decisions on the same requests: a member
// read (what any decision costs) and one `matches` (Zen 0.54 compiles the pattern on every
// call, which is most of the signup decision's time).
//
//   node compare.mjs [evaluations]     (bash bench/zen.sh runs it pinned to one core, alternated)
import { readFileSync } from "node:fs";
import { ZenEngine } from "@gorules/zen-engine";

const count = Number(process.argv[2] ?? "3000");
const fixture = new URL("../../conformance/fixtures/signup/", import.meta.url);

// One expression per line; `$.x` reads an earlier expression of the node. Messages follow the
// fixture's catalogs: en, and fr for fr and fr-* (keys fr lacks fall back to en).
const expressions = [
  ["email", "data.account.email"],
  ["password", "data.account.password"],
  ["birth", "data.profile.birthDate"],
  ["fr", 'locale == "fr" or startsWith(locale ?? "", "fr-")'],
  ["emailBlank", 'len(trim($.email ?? "")) == 0'],
  ["birthIsDate", '$.birth != null and matches($.birth, "^[0-9]{4}-[0-9]{2}-[0-9]{2}$") and d($.birth).isValid()'],
  ["origEmail", "original.account.email"],
  ["findings", `filter([
    $.emailBlank ? {rule: "email-required", code: "EMAIL_REQUIRED", severity: "error", field: "account.email",
      location: {page: "signup", section: "account"}, message: $.fr ? "account.email est obligatoire." : "account.email is required."} : null,
    not $.emailBlank and not matches($.email, "^[^@ ]+@[^@ ]+[.][a-zA-Z]{2,}$") ? {rule: "email-format", code: "EMAIL_INVALID",
      severity: "error", field: "account.email", location: {},
      message: $.fr ? \`\${$.email} n'est pas une adresse e-mail valide.\` : \`\${$.email} is not a valid e-mail address.\`} : null,
    len($.password ?? "") < 8 ? {rule: "password-length", code: "PASSWORD_TOO_SHORT", severity: "error", field: "account.password",
      location: {page: "signup", section: "account"},
      message: $.fr ? "Le mot de passe doit compter au moins 8 caractères." : "The password needs at least 8 characters."} : null,
    data.account.passwordConfirm != $.password ? {rule: "password-match", code: "PASSWORD_MISMATCH", severity: "error",
      field: "account.passwordConfirm", location: {page: "signup", section: "account", component: "passwordConfirm"},
      message: $.fr ? "Les mots de passe ne correspondent pas." : "The passwords do not match."} : null,
    not matches(data.account.username ?? "", "^[a-z][a-z0-9_]{2,19}$") ? {rule: "username-format", code: "USERNAME_INVALID",
      severity: "error", field: "account.username", location: {page: "signup", section: "account"},
      message: "A user name has 3 to 20 lower-case letters, digits or '_', starting with a letter."} : null,
    len(trim($.birth ?? "")) > 0 and not $.birthIsDate ? {rule: "birthdate-invalid", code: "BIRTHDATE_INVALID", severity: "error",
      field: "profile.birthDate", location: {page: "signup", section: "profile"}, message: \`\${$.birth} is not a date.\`} : null,
    $.birthIsDate and d(ctx.today).diff(d($.birth), "year") < 18 ? {rule: "age-minimum", code: "AGE_TOO_LOW", severity: "error",
      field: "profile.birthDate", location: {page: "signup", section: "profile"},
      message: $.fr ? "Vous devez avoir au moins 18 ans." : "You must be at least 18 years old."} : null,
    data.consent.terms != true ? {rule: "terms-accepted", code: "TERMS_REQUIRED", severity: "error", field: "consent.terms",
      location: {page: "signup", section: "consent", component: "termsCheckbox"},
      message: $.fr ? "Veuillez accepter les conditions." : "Please accept the terms."} : null,
    data.consent.newsletter == true and len(trim(data.profile.firstName ?? "")) == 0 ? {rule: "newsletter-name",
      code: "NEWSLETTER_NAME", severity: "info", location: {page: "signup", section: "consent"},
      message: "Tell us your first name to personalise the newsletter."} : null,
    len(trim($.origEmail ?? "")) > 0 and $.origEmail != $.email ? {rule: "email-changed", code: "EMAIL_CHANGED",
      severity: "warning", field: "account.email", location: {page: "signup", section: "account"},
      message: \`The e-mail address changes from \${$.origEmail} to \${$.email}.\`} : null
  ], # != null)`],
  ["states", 'data.account.kind == "business" ? {"profile.company": {hidden: false, required: true}, "profile.vatNumber": {hidden: false}} : {}'],
];

// The same decision with its three patterns replaced by constants: not the same findings, only
// to show what the patterns cost (Zen compiles a pattern at every call of matches).
const withoutPatterns = expressions.map(([k, v]) => [k, v
  .replace(/not matches\(\$\.email, "[^"]*"\)/, "false")
  .replace(/not matches\(data\.account\.username \?\? "", "[^"]*"\)/, "false")
  .replace(/matches\(\$\.birth, "[^"]*"\) and /, "")]);
if (withoutPatterns.some(([, v]) => v.includes("matches("))) throw new Error("a pattern is left");

const decisionOf = (exprs) => new ZenEngine().createDecision({
  nodes: [
    { id: "in", type: "inputNode", name: "request", position: { x: 0, y: 0 } },
    { id: "rules", type: "expressionNode", name: "signup", position: { x: 0, y: 0 },
      content: { expressions: exprs.map(([key, value], i) => ({ id: String(i), key, value })) } },
    { id: "out", type: "outputNode", name: "result", position: { x: 0, y: 0 } },
  ],
  edges: [
    { id: "a", sourceId: "in", targetId: "rules", type: "edge" },
    { id: "b", sourceId: "rules", targetId: "out", type: "edge" },
  ],
});
const decision = decisionOf(expressions);

const oneExpression = (value) => new ZenEngine().createDecision({
  nodes: [
    { id: "in", type: "inputNode", name: "request", position: { x: 0, y: 0 } },
    { id: "e", type: "expressionNode", name: "one", position: { x: 0, y: 0 }, content: { expressions: [{ id: "0", key: "v", value }] } },
    { id: "out", type: "outputNode", name: "result", position: { x: 0, y: 0 } },
  ],
  edges: [{ id: "a", sourceId: "in", targetId: "e", type: "edge" }, { id: "b", sourceId: "e", targetId: "out", type: "edge" }],
});

const golden = JSON.parse(readFileSync(new URL("evaluations.json", fixture), "utf8")).tests
  .filter((t) => (t.channel ?? "server") === "server" && !t.request.view);
if (golden.length !== 11) throw new Error(`${golden.length} requests, want 11`);

const canonical = (v) => JSON.stringify(v, (_k, x) => (x && typeof x === "object" && !Array.isArray(x)
  ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, x[k]])) : x));
for (const t of golden) {
  const { result } = await decision.evaluate(t.request);
  const got = canonical({ findings: result.findings, states: result.states });
  const want = canonical({ findings: t.expected.findings, states: t.expected.states });
  if (got !== want) throw new Error(`${t.id}: Zen gives ${got}\nwant ${want}`);
}

// Zen's timer prints a duration such as "21.3µs" or "1.2ms".
const unit = { ns: 1, "µs": 1e3, us: 1e3, ms: 1e6, s: 1e9 };
const ns = (p) => { const m = /^([\d.]+)\s*(ns|µs|us|ms|s)$/.exec(p); if (!m) throw new Error(`performance ${p}`); return Number(m[1]) * unit[m[2]]; };

// time returns the mean ns per evaluation of d through the binding and by Zen's timer.
async function time(d, n) {
  for (let i = 0; i < Math.min(n, 1000); i++) await d.evaluate(golden[i % golden.length].request); // warm up
  let engineNs = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const r = await d.evaluate(golden[i % golden.length].request);
    engineNs += ns(r.performance);
  }
  return [Number(process.hrtime.bigint() - start) / n, engineNs / n];
}
const [bindingNs, timerNs] = await time(decision, count);
const [, readNs] = await time(oneExpression("data.account.email"), count);
const [, noPatternsNs] = await time(decisionOf(withoutPatterns), count);
const [, matchesNs] = await time(oneExpression('matches(data.account.username ?? "", "^[a-z][a-z0-9_]{2,19}$")'), count);
console.log(JSON.stringify({ engine: "zen", version: "0.54.0", evaluations: count, binding_ns: Math.round(bindingNs),
  engine_timer_ns: Math.round(timerNs), without_patterns_timer_ns: Math.round(noPatternsNs), one_read_timer_ns: Math.round(readNs), one_matches_timer_ns: Math.round(matchesNs) }));
