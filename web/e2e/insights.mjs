// End-to-end test of the insights and schedules pages: the system Chromium, driven by
// playwright-core, against a real sdods on a real PostgreSQL. Started by
// TestWebUIInsightsAndSchedules (impl/server/app), which seeds a flaky history in the project
// "shop" by ingesting JUnit results through the API and passes the server's URL (SDODS_URL), the
// administrator's password (SDODS_E2E_PASSWORD) and an API token (SDODS_E2E_TOKEN) that this
// script uses to compare what the UI shows with what the API answers.
//
// (a) a schedule created in the UI: the ten next firings its cron helper shows, and those of the
//     saved schedule, equal GET /api/schedules/next; (b) a flaky scenario quarantined from the
//     flaky table is quarantined for the API; (c) the insights page's charts and their table views
//     show the seeded data. axe-core checks every page.
import { chromium } from "playwright-core";
import { AxeBuilder } from "@axe-core/playwright";
import { mkdirSync } from "node:fs";
import path from "node:path";

const base = process.env.SDODS_URL;
const password = process.env.SDODS_E2E_PASSWORD;
const token = process.env.SDODS_E2E_TOKEN;
if (!base || !password || !token) throw new Error("SDODS_URL, SDODS_E2E_PASSWORD and SDODS_E2E_TOKEN must be set");
const executablePath = process.env.SDODS_CHROMIUM || "/usr/bin/chromium";
const shots = process.env.SDODS_UI_SCREENSHOTS;
if (shots) mkdirSync(shots, { recursive: true });
const failures = [];
let step = "start";

async function shot(page, name) {
  if (!shots) return;
  await page.waitForLoadState("networkidle").catch(() => {});
  await page.screenshot({ path: path.join(shots, name + ".png"), fullPage: false });
}

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

async function apiGet(p) {
  const r = await fetch(base + p, { headers: { Authorization: "Bearer " + token } });
  if (!r.ok) throw new Error(`GET ${p}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** The instants (data-at) of the firings a table lists, in order. */
async function firingsShown(table) {
  return table.locator("time[data-at]").evaluateAll((els) => els.map((e) => e.getAttribute("data-at")));
}

const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: "UTC" });
const page = await context.newPage();
page.setDefaultTimeout(20_000);
const consoleErrors = [];
page.on("console", (m) => {
  if (m.type() === "error") consoleErrors.push(m.text());
});
page.on("pageerror", (e) => consoleErrors.push(String(e)));

try {
  step = "sign in";
  await page.goto(base + "/");
  await page.getByLabel("Email").fill("admin@example.com");
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor();

  // (c) Insights with the seeded history: charts, their table views, the change against the
  // previous window, clusters, slowest and new failures.
  step = "insights";
  await page.getByRole("link", { name: "Insights" }).click();
  await page.getByRole("heading", { name: "Insights", level: 1 }).waitFor();
  await page.getByLabel("Project").selectOption("shop");
  await page.getByLabel("Minimum results").fill("4");
  await page.getByRole("button", { name: "Apply" }).click();
  const win = await page.evaluate(() => {
    const now = new Date();
    const until = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
    return { since: new Date(until.getTime() - 30 * 86_400_000).toISOString(), until: until.toISOString() };
  });
  const t = await apiGet(`/api/stats/trends?project=shop&bucket=day&tz=UTC&since=${encodeURIComponent(win.since)}&until=${encodeURIComponent(win.until)}`);
  check(t.points.length >= 6, `the API has the seeded days (${t.points.length} points)`);
  await page.getByRole("figure", { name: "Pass rate" }).locator("canvas").first().waitFor();
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, "insights");
  for (const name of ["Pass rate", "Runs by status", "Duration p50 and p95", "Flaky results (passed after a retry)"]) {
    const fig = page.getByRole("figure", { name });
    await fig.waitFor();
    const canvas = fig.locator("canvas");
    check((await canvas.count()) >= 1, `${name} is drawn on a canvas`);
    const label = await fig.getByRole("img").getAttribute("aria-label");
    check(label?.startsWith(`${name}: ${t.points.length} points`), `${name}'s aria label says what it shows: ${label}`);
    await fig.getByRole("button", { name: `Show table of ${name}` }).click();
    const rows = fig.locator("tbody tr");
    check((await rows.count()) === t.points.length, `${name}'s table has one row per point (${await rows.count()} vs ${t.points.length})`);
  }
  // Runs by status as a table equals the API's points.
  const statusRows = await page
    .getByRole("figure", { name: "Runs by status" })
    .locator("tbody tr")
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("th,td")].map((c) => c.textContent.trim())));
  for (let i = 0; i < t.points.length; i++) {
    const p = t.points[i];
    const want = [p.at.slice(0, 10), String(p.passed), String(p.failed), String(p.errored), String(p.timedOut), String(p.cancelled)];
    check(JSON.stringify(statusRows[i]) === JSON.stringify(want), `runs by status row ${i}: ${JSON.stringify(statusRows[i])}, the API ${JSON.stringify(want)}`);
  }
  const summary = page.getByRole("table", { name: "This window against the previous one" });
  check((await summary.getByRole("row", { name: /^Runs/ }).innerText()).includes(String(t.summary.runs)), "the summary shows the window's runs");
  check(
    (await summary.getByRole("row", { name: /^Runs/ }).innerText()).includes("+" + String(t.change.runs)),
    `the summary shows the change against the previous window (+${t.change.runs})`,
  );
  await page.getByRole("heading", { name: "Failure clusters" }).waitFor();
  check(await page.getByRole("row", { name: /order <uuid> not found/ }).isVisible(), "the failure cluster of pays is listed with its masked signature");
  // The cluster lists its affected scenarios, those the API answers, in its order.
  const ins = await apiGet(`/api/stats/insights?project=shop&since=${encodeURIComponent(win.since)}&until=${encodeURIComponent(win.until)}`);
  const paysCluster = ins.failureClusters.find((c) => c.signature.startsWith("order <uuid> not found"));
  const affected = await page
    .getByRole("row", { name: /order <uuid> not found/ })
    .getByRole("list", { name: /^Scenarios affected by order <uuid> not found/ })
    .getByRole("listitem")
    .allInnerTexts();
  check(
    paysCluster !== undefined &&
      paysCluster.affected.length > 0 &&
      affected.length === paysCluster.affected.length &&
      paysCluster.affected.every((a, i) => affected[i].startsWith(a.scenario) && affected[i].includes(a.project + " · " + a.featurePath)),
    `the cluster lists its affected scenarios: ${JSON.stringify(affected)}, the API ${JSON.stringify(paysCluster?.affected)}`,
  );
  check(await page.getByRole("heading", { name: "Slowest scenarios" }).isVisible(), "slowest scenarios are shown");
  await axe(page, "insights");

  // (b) Quarantine a flaky scenario from the table, see it quarantined through the API.
  step = "quarantine";
  const flaky = page.getByRole("region", { name: /Flaky scenarios table/ });
  const paysRow = flaky.getByRole("row", { name: /pays/ });
  await paysRow.waitFor();
  check((await paysRow.innerText()).includes("80.0 %"), "pays shows its flip rate 4/5");
  await flaky.getByRole("button", { name: "Health" }).click();
  await page.waitForURL(/sort=health/);
  // The header follows the URL once the page has re-rendered with the new sort: poll it briefly.
  const healthHeader = flaky.getByRole("columnheader", { name: /Health/ });
  let healthSort = await healthHeader.getAttribute("aria-sort");
  for (let i = 0; i < 50 && healthSort !== "descending"; i++) {
    await page.waitForTimeout(100);
    healthSort = await healthHeader.getAttribute("aria-sort");
  }
  check(healthSort === "descending", `sorted by health (aria-sort ${healthSort}, at ${page.url()})`);
  await paysRow.getByRole("button", { name: "Quarantine pays" }).click();
  const form = page.getByRole("form", { name: "Quarantine pays" });
  await form.getByLabel("Owner").fill("team-checkout");
  await form.getByLabel("Reason").fill("flips on the payment service");
  await form.getByLabel("Release after clean results").fill("3");
  await axe(page, "insights with the quarantine form");
  await form.getByRole("button", { name: "Quarantine scenario" }).click();
  await paysRow.getByText("quarantined").waitFor();
  const ql = await apiGet("/api/projects/shop/quarantine");
  const q = ql.items.find((i) => i.scenario === "pays" && i.featurePath === "checkout");
  check(!!q && q.active && q.owner === "team-checkout" && q.reason === "flips on the payment service" && q.releaseAfter === 3, "the API lists pays quarantined: " + JSON.stringify(ql.items));
  check(ql.export.tagExpression === "not @quarantined", "the export's tag expression is set");

  // (a) A schedule created in the UI: its cron helper's ten next firings equal the API's, and
  // so do those of the saved schedule.
  step = "schedule";
  await page.getByRole("link", { name: "Schedules" }).click();
  await page.getByRole("heading", { name: "Schedules", level: 1 }).waitFor();
  await axe(page, "schedules");
  await page.getByRole("link", { name: "New schedule" }).click();
  await page.getByRole("heading", { name: "New schedule" }).waitFor();
  await page.getByLabel("Project").selectOption("shop");
  await page.getByLabel("Name").fill("nightly checkout");
  await page.getByLabel("Cron expression").fill("0 25 * * *");
  await page.getByLabel("Time zone").fill("America/New_York");
  await page.getByRole("alert").filter({ hasText: "column 3 (hour)" }).waitFor();
  await page.getByLabel("Cron expression").fill("30 2 * * 0");
  const preview = page.getByRole("table", { name: /Next firings of 30 2 \* \* 0 in America\/New_York/ });
  await preview.waitFor();
  const shownPreview = await firingsShown(preview);
  const until = new Date(Date.now() + 365 * 86_400_000).toISOString();
  const apiPreview = await apiGet(`/api/schedules/next?cron=${encodeURIComponent("30 2 * * 0")}&timezone=America/New_York&limit=10&until=${encodeURIComponent(until)}`);
  check(shownPreview.length === 10, `the helper shows ten firings (${shownPreview.length})`);
  check(JSON.stringify(shownPreview) === JSON.stringify(apiPreview.items.map((i) => i.at)), `the helper's firings ${shownPreview} equal the API's ${apiPreview.items.map((i) => i.at)}`);
  await axe(page, "new schedule with the cron helper");
  await page.getByRole("button", { name: "Create schedule" }).click();
  await page.getByRole("heading", { name: "nightly checkout", level: 1 }).waitFor();
  const scheduleId = new URL(page.url()).pathname.split("/").pop();
  const next = page.getByRole("table", { name: "The next ten firings of nightly checkout" });
  await next.waitFor();
  const shownNext = await firingsShown(next);
  const apiNext = await apiGet(`/api/schedules/next?schedule=${scheduleId}&limit=10&until=${encodeURIComponent(until)}`);
  check(shownNext.length === 10, `the schedule shows ten firings (${shownNext.length})`);
  check(JSON.stringify(shownNext) === JSON.stringify(apiNext.items.map((i) => i.at)), `the schedule's firings ${shownNext} equal the API's ${apiNext.items.map((i) => i.at)}`);
  check(JSON.stringify(shownNext) === JSON.stringify(shownPreview), "the saved schedule fires when its preview said");
  await axe(page, "schedule");
  await shot(page, "schedule");
  // Pause with a note, then resume: the API agrees.
  await page.getByLabel("Pause note").fill("release freeze");
  await page.getByRole("button", { name: "Pause" }).click();
  await page.getByRole("note").filter({ hasText: "release freeze" }).waitFor();
  const paused = await apiGet("/api/schedules/" + scheduleId);
  check(paused.status === "paused" && paused.paused?.note === "release freeze", "the API has it paused with the note");
  await axe(page, "paused schedule");
  await page.getByRole("button", { name: "Resume" }).click();
  await page.getByRole("button", { name: "Pause" }).waitFor();
  const resumed = await apiGet("/api/schedules/" + scheduleId);
  check(resumed.status === "active", "the API has it active again");
  await page.getByRole("link", { name: "Schedules" }).first().click();
  const listRow = page.getByRole("row", { name: /^nightly checkout shop/ });
  await listRow.waitFor();
  check((await listRow.innerText()).includes("30 2 * * 0"), "the list shows the schedule with its expression");

  step = "console";
  const unexpected = consoleErrors.filter((e) => !/400|401|403|404|409|Failed to load resource/.test(e));
  check(unexpected.length === 0, "no script error in the console: " + unexpected.join(" | "));
} catch (e) {
  failures.push(`${step}: ${e?.stack ?? e}`);
  console.error(`FAIL ${step}:`, e);
  try {
    await page.screenshot({ path: path.join(process.env.SDODS_E2E_ARTIFACTS || ".", "e2e-insights-failure.png"), fullPage: true });
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
console.log("insights and schedules end-to-end: all checks passed");
