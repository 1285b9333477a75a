// End-to-end test of the review inbox and the agent jobs pages: the system Chromium driven by
// playwright-core against a real sdods on a real PostgreSQL. Started by TestWebUIInboxEndToEnd
// (impl/server/app), which seeds a project "shop" whose button's selector changed (healed in two
// runs) and two visual baselines that the last run failed, and passes the server's URL and the
// administrator's credentials.
//
// It starts the heal agent with the form generated from the kind's schema (a value out of range is
// refused in the form first), follows the job's events live, opens its proposal in the inbox, sees
// it verified with its diff, heal scores and screenshots, accepts it and reads the feature back
// through the API; then it accepts one visual baseline and rejects the other with a reason (a
// rejection without one is refused). axe-core checks every page it visits.
import { chromium } from "playwright-core";
import { AxeBuilder } from "@axe-core/playwright";
import path from "node:path";

const base = process.env.SDODS_URL;
const email = process.env.SDODS_E2E_EMAIL;
const password = process.env.SDODS_E2E_PASSWORD;
if (!base || !email || !password) throw new Error("SDODS_URL, SDODS_E2E_EMAIL and SDODS_E2E_PASSWORD must be set");
const executablePath = process.env.SDODS_CHROMIUM || "/usr/bin/chromium";
const failures = [];
let step = "start";
// The renamed button keeps its test id, the strongest alternative the runner records, so that is
// what the heal finds; in the feature its double quotes become single ones (a step argument is
// between double quotes).
const title = 'send.feature: replace #submit with [data-testid="submit-btn"]';
const healed = "[data-testid='submit-btn']";

function check(cond, msg) {
  if (!cond) {
    failures.push(`${step}: ${msg}`);
    console.error(`FAIL ${step}: ${msg}`);
  }
}

async function axe(page, name) {
  await page.waitForLoadState("networkidle").catch(() => {});
  const r = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const bad = r.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  for (const v of bad) {
    check(false, `axe on ${name}: ${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
  }
  console.log(`axe ${name}: ${r.violations.length} violations, ${bad.length} serious or critical`);
}

/** Whether every image matched by the locator has loaded (a broken image has no natural width). */
async function loaded(locator) {
  const n = await locator.count();
  if (n === 0) return false;
  for (let i = 0; i < n; i++) {
    const img = locator.nth(i);
    await img.scrollIntoViewIfNeeded();
    const ok = await img.evaluate((el) => (el.complete ? el.naturalWidth > 0 : new Promise((res) => { el.onload = () => res(el.naturalWidth > 0); el.onerror = () => res(false); })));
    if (!ok) return false;
  }
  return true;
}

/** GET of the API with the page's session (cookies), as JSON. */
async function apiGet(page, p) {
  return page.evaluate(async (u) => {
    const r = await fetch(u, { headers: { Accept: "application/json" } });
    return { status: r.status, body: await r.json() };
  }, p);
}

const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
const page = await context.newPage();
page.setDefaultTimeout(20_000);
const consoleErrors = [];
page.on("console", (m) => {
  if (m.type() === "error") consoleErrors.push(m.text());
});
page.on("pageerror", (e) => consoleErrors.push(String(e)));

try {
  step = "sign in";
  await page.goto(base + "/agents");
  await page.getByRole("heading", { name: "Sign in to sdods" }).waitFor();
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Agent jobs", level: 1 }).waitFor();
  check(new URL(page.url()).pathname === "/agents", "signing in returns to the page asked for: " + page.url());

  // 1. The heal agent started from the UI, with its input form generated from the kind's schema.
  step = "start a heal job";
  const form = page.getByRole("form", { name: "Start an agent job" });
  await form.getByLabel("Project").selectOption("shop");
  await form.getByLabel("Kind").selectOption("heal");
  const occ = form.getByRole("spinbutton", { name: "Min occurrences" });
  await occ.waitFor();
  check((await occ.getAttribute("aria-describedby")) !== null, "the schema's description is the field's hint");
  const hint = await form.locator("#" + (await occ.getAttribute("aria-describedby")).split(" ")[0]).innerText();
  check(/recur/.test(hint) && /1 to 1000/.test(hint), "the hint says what the schema says: " + hint);
  await occ.fill("0");
  await form.getByRole("button", { name: "Start job" }).click();
  const invalid = form.getByRole("alert").filter({ hasText: "Min occurrences must be at least 1" });
  await invalid.waitFor();
  check((await occ.getAttribute("aria-invalid")) === "true", "the field out of range is marked invalid");
  check(new URL(page.url()).pathname === "/agents", "nothing is started while the form is invalid");
  await axe(page, "agent jobs with a form error");
  await occ.fill("2");
  await form.getByRole("button", { name: "Start job" }).click();
  await page.waitForURL(/\/agents\/jobs\/[0-9a-f-]{36}$/);
  const jobId = page.url().split("/").pop();

  // 2. Its events followed live to the end; the proposal linked.
  step = "job events";
  await page.getByRole("heading", { name: /^Agent job heal/ }).waitFor();
  const events = page.getByRole("list", { name: "Job events" });
  await events.locator("li", { hasText: "recurred in at least 2 runs" }).waitFor({ timeout: 60_000 });
  await events.locator("li.ev-proposal").waitFor({ timeout: 120_000 });
  await events.locator("li.ev-end").waitFor({ timeout: 120_000 });
  await page.getByRole("status").filter({ hasText: "Finished" }).waitFor();
  await page.locator('[data-testid="job-status"] .status-succeeded').waitFor({ timeout: 30_000 });
  check(/2 patch\(es\) proposed, 2 verified/.test(await page.getByTestId("job-summary").innerText()), "the job's summary says it proposed and verified two patches");
  const types = await events.locator("li strong").allInnerTexts();
  check(types[0] === "job.status" && types.includes("log") && types.includes("progress") && types.at(-1) === "end", "the events arrive in order: " + JSON.stringify(types));
  const job = await apiGet(page, "/api/agents/jobs/" + jobId);
  check(job.status === 200 && job.body.input?.minOccurrences === 2 && job.body.createdBy?.email === email, "the job has the form's input and its starter: " + JSON.stringify(job.body.input));
  await axe(page, "agent job");
  const propLink = page.getByRole("region", { name: "Proposals" }).getByRole("link", { name: title });
  await propLink.waitFor();
  await propLink.click();

  // 3. The proposal in the inbox: verified, its diff side by side, the heal's evidence.
  step = "heal proposal";
  await page.waitForURL(/\/inbox\/[0-9a-f-]{36}$/);
  const proposalId = page.url().split("/").pop();
  check(job.body.proposalIds?.includes(proposalId) || (await apiGet(page, "/api/agents/jobs/" + jobId)).body.proposalIds.includes(proposalId), "the job links its own proposal");
  await page.getByRole("heading", { name: title, level: 1 }).waitFor();
  await page.locator('[data-testid="proposal-status"] .status-verified').waitFor({ timeout: 60_000 });
  const split = page.getByRole("table", { name: "Change of the feature (side by side)" });
  await split.waitFor();
  const row = split.locator("tr", { has: page.locator(".diff-del") });
  check((await row.count()) === 1, "one changed row");
  check((await row.locator(".diff-del").innerText()).includes('And I click "#submit"'), "the old line on the left");
  check((await row.locator(".diff-add").innerText()).includes(`And I click "${healed}"`), "the new line beside it");
  const scores = page.getByRole("definition").filter({ hasText: "%" });
  check((await scores.count()) >= 2, "the heal scores are shown");
  check((await page.getByTestId("verification").innerText()).includes("passed"), "the verification run passed");
  const vrun = page.getByRole("link", { name: /^Verification run [0-9a-f]{8}$/ });
  check((await vrun.count()) === 1, "the verification run is linked");
  await page.getByRole("img", { name: /^After: screenshot\.png/ }).first().waitFor();
  check(await loaded(page.getByRole("img", { name: /^Before: / })), "the screenshot before (the healed run) loads through the run files API");
  check(await loaded(page.getByRole("img", { name: /^After: / })), "the screenshot after (the verification run) loads");
  check(((await page.getByRole("img", { name: /^After: / }).first().getAttribute("src")) ?? "").includes("/files/artifacts/"), "screenshots come from the run files API");
  await axe(page, "proposal (feature patch)");
  await page.getByRole("radio", { name: "Unified" }).check();
  const unified = page.getByRole("table", { name: "Change of the feature (unified)" });
  await unified.waitFor();
  check((await unified.locator("tr.diff-del").count()) === 1 && (await unified.locator("tr.diff-add").count()) === 1, "the unified view has one line removed and one added");
  // No force for a verified proposal: it is accepted as it is.
  check((await page.getByRole("checkbox", { name: /Force/ }).count()) === 0, "force is not offered for a verified proposal");
  await page.getByRole("button", { name: "Accept" }).click();
  await page.locator('[data-testid="proposal-status"] .status-accepted').waitFor();
  check((await page.getByTestId("decision").innerText()).startsWith("Accepted by"), "the decision is shown");
  const feature = await apiGet(page, "/api/projects/shop/features/send.feature");
  check(feature.status === 200 && feature.body.content.includes(`"${healed}"`) && !feature.body.content.includes('"#submit"'), "the feature file changed: " + JSON.stringify(feature.body.content));
  check((await page.getByRole("button", { name: "Accept" }).count()) === 0, "a decided proposal offers no decision");

  // 3b. The other patch goes stale: its feature is edited by hand before it is accepted.
  step = "stale proposal";
  const verified = await apiGet(page, "/api/proposals?project=shop&kind=feature_patch&status=verified");
  const other = verified.body.items?.find((p) => p.target.featurePath === "other.feature");
  check(!!other, "the second patch is verified: " + JSON.stringify(verified.body.items?.map((p) => p.title)));
  const edited = await page.evaluate(async () => {
    const me = await (await fetch("/api/auth/me")).json();
    const f = await (await fetch("/api/projects/shop/features/other.feature")).json();
    const r = await fetch("/api/projects/shop/features/other.feature", {
      method: "PUT",
      headers: { "Content-Type": "application/json", "If-Match": f.etag, "x-csrf-token": me.csrfToken },
      body: JSON.stringify({ content: f.content + "  # edited by hand\n" }),
    });
    return r.status;
  });
  check(edited === 200, "the feature is edited meanwhile: " + edited);
  await page.goto(base + "/inbox/" + other.id);
  await page.locator('[data-testid="proposal-status"] .status-verified').waitFor();
  await page.getByRole("button", { name: "Accept" }).click();
  const staleNote = page.getByRole("note", { name: "Why this proposal is stale" });
  await staleNote.waitFor();
  await page.locator('[data-testid="proposal-status"] .status-stale').waitFor();
  const why = await staleNote.innerText();
  check(why.includes("other.feature changed after this patch was made") && why.includes("Re-run the job"), "the page says why it is stale and what to do: " + why);
  check((await staleNote.getByRole("link", { name: "Start a new job" }).getAttribute("href")) === "/agents?project=shop", "it links to starting a new job");
  check((await page.getByRole("button", { name: "Accept" }).count()) === 0, "a stale proposal offers no decision");
  await axe(page, "proposal (stale)");

  // 4. The inbox: visual baselines among the proposals, filtered in the URL.
  step = "inbox";
  await page.goto(base + "/inbox?project=shop&kind=baseline_update&minConfidence=0.55");
  await page.getByRole("heading", { name: "Review inbox", level: 1 }).waitFor();
  const table = page.getByRole("table", { name: "Proposals" });
  await table.waitFor();
  const titles = await table.locator("tbody tr td:first-child").allInnerTexts();
  check(titles.length === 2 && titles.some((t) => t.startsWith("visual baseline checkout")) && titles.some((t) => t.startsWith("visual baseline header")), "the two failed baselines, not the new ones: " + JSON.stringify(titles));
  check((await page.getByLabel("Kind").inputValue()) === "baseline_update" && (await page.getByLabel("Confidence at least").inputValue()) === "0.55", "the filters are read from the URL");
  await axe(page, "inbox");
  // The filters set in the form land in the URL.
  await page.getByLabel("Kind").selectOption("feature_patch");
  await page.getByLabel("State").selectOption("accepted");
  await page.getByLabel("Confidence at least").fill("");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await table.locator("tbody tr", { hasText: title }).waitFor();
  const u = new URL(page.url());
  check(u.searchParams.get("kind") === "feature_patch" && u.searchParams.get("status") === "accepted" && u.searchParams.get("project") === "shop", "the filters are in the URL: " + page.url());

  // 5. A failed baseline accepted in the inbox.
  step = "accept a baseline";
  await page.goto(base + "/inbox?project=shop&kind=baseline_update&minConfidence=0.55");
  await table.getByRole("link", { name: /^visual baseline checkout/ }).click();
  await page.getByRole("heading", { name: /^visual baseline checkout/, level: 1 }).waitFor();
  await page.getByRole("img", { name: "Difference of checkout" }).waitFor();
  check(await loaded(page.getByRole("img", { name: /^(Baseline|Capture|Difference) of checkout$/ })), "baseline, capture and difference load");
  check(/pixel\(s\) differ/.test(await page.getByRole("region", { name: "Evidence" }).innerText()), "the mismatch figures are shown");
  await axe(page, "proposal (visual baseline)");
  await page.getByRole("button", { name: "Accept" }).click();
  await page.locator('[data-testid="proposal-status"] .status-accepted').waitFor();

  // 6. The other rejected, a reason required.
  step = "reject a baseline";
  await page.goto(base + "/inbox?project=shop&kind=baseline_update&minConfidence=0.55");
  await table.locator("tbody tr").first().waitFor();
  check((await table.locator("tbody tr").count()) === 1, "the accepted baseline left the open inbox");
  await table.getByRole("link", { name: /^visual baseline header/ }).click();
  await page.getByRole("heading", { name: /^visual baseline header/, level: 1 }).waitFor();
  await page.getByRole("button", { name: "Reject" }).click();
  await page.getByRole("alert").filter({ hasText: "the reason is required" }).waitFor();
  check((await page.getByLabel(/Reason to reject/).getAttribute("aria-invalid")) === "true", "the empty reason is marked invalid");
  await axe(page, "proposal with a reason missing");
  await page.getByLabel(/Reason to reject/).fill("the red header is the bug, not the new look");
  await page.getByRole("button", { name: "Reject" }).click();
  await page.locator('[data-testid="proposal-status"] .status-rejected').waitFor();
  check((await page.getByTestId("decision").innerText()).includes("the red header is the bug"), "the reason is shown");
  const rejected = await apiGet(page, "/api/proposals?project=shop&status=rejected");
  check(rejected.body.items?.length === 1 && rejected.body.items[0].reason === "the red header is the bug, not the new look", "the API has the rejection with its reason");
  const accepted = await apiGet(page, "/api/proposals?project=shop&status=accepted");
  check(accepted.body.items?.length === 2, "two accepted: the patch and the checkout baseline: " + accepted.body.items?.map((p) => p.title).join(", "));

  // 7. The jobs list shows the job with its proposal linked.
  step = "jobs list";
  await page.goto(base + "/agents?project=shop");
  const jobs = page.getByRole("table", { name: "Agent jobs" });
  await jobs.getByRole("link", { name: "heal " + jobId.slice(0, 8) }).waitFor();
  await jobs.getByRole("link", { name: "2", exact: true }).click();
  await page.getByRole("table", { name: "Proposals" }).getByRole("link", { name: title }).waitFor();
  check(new URL(page.url()).searchParams.get("jobId") === jobId, "the job's proposals are an inbox view: " + page.url());
  await axe(page, "inbox of one job");

  // Keyboard and a 1024-pixel-wide window on the new pages: focus on the heading, nothing overflows
  // (the header has two more links now).
  step = "keyboard and width";
  await page.setViewportSize({ width: 1024, height: 768 });
  for (const p of ["/inbox", "/agents", "/agents/jobs/" + jobId, "/inbox/" + proposalId]) {
    await page.goto(base + p);
    await page.locator("h1").first().waitFor();
    await page.waitForLoadState("networkidle").catch(() => {});
    check(await page.evaluate(() => document.activeElement?.tagName === "H1"), `${p} moves focus to its heading`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 0, `${p} fits a 1024-pixel-wide window (overflows by ${overflow}px)`);
  }

  step = "console";
  const unexpected = consoleErrors.filter((e) => !/401|403|404|409|Failed to load resource/.test(e));
  check(unexpected.length === 0, "no script error in the console: " + unexpected.join(" | "));
} catch (e) {
  failures.push(`${step}: ${e?.stack ?? e}`);
  console.error(`FAIL ${step}:`, e);
  try {
    await page.screenshot({ path: path.join(process.env.SDODS_E2E_ARTIFACTS || ".", "e2e-inbox-failure.png"), fullPage: true });
    console.error("console errors:", consoleErrors.join("\n"));
    console.error("page at failure:", page.url(), "\n", (await page.locator("main").innerText().catch(() => "")).slice(0, 3000));
  } catch {}
} finally {
  await browser.close();
}
if (failures.length) {
  console.error(`${failures.length} failure(s):\n` + failures.join("\n"));
  process.exit(1);
}
console.log("inbox and agent jobs end-to-end: all checks passed");
