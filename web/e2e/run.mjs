// End-to-end test of the web UI: the system Chromium (never a downloaded browser), driven by
// playwright-core, against a real sdods on a real PostgreSQL. Started by TestWebUIEndToEnd
// (impl/server/app), which serves sdods and passes its URL in SDODS_URL.
//
// It walks a new user's path: first-run setup, a workspace and a project, a feature written with a
// deliberate error that the editor marks at the right line, then fixed and saved, a run started and
// followed live to its end, the scenario's detail, an API token created and used from outside the
// browser (then revoked), and a viewer who sees no write action. axe-core checks every page.
// With SDODS_UI_SCREENSHOTS=<dir> it also writes screenshots of the main pages there.
import { chromium } from "playwright-core";
import { AxeBuilder } from "@axe-core/playwright";
import { mkdirSync } from "node:fs";
import path from "node:path";

const base = process.env.SDODS_URL;
const target = process.env.SDODS_E2E_TARGET;
if (!target) throw new Error("SDODS_E2E_TARGET is not set");
if (!base) throw new Error("SDODS_URL is not set");
const executablePath = process.env.SDODS_CHROMIUM || "/usr/bin/chromium";
const shots = process.env.SDODS_UI_SCREENSHOTS;
if (shots) mkdirSync(shots, { recursive: true });

const admin = { email: "admin@example.com", name: "Ada Admin", password: "a long admin password" };
const viewer = { email: "viewer@example.com", name: "Vic Viewer", password: "a long viewer password" };
const failures = [];
let step = "start";

function check(cond, msg) {
  if (!cond) {
    failures.push(`${step}: ${msg}`);
    console.error(`FAIL ${step}: ${msg}`);
  }
}

async function axe(page, name) {
  // Let the page settle (queries answered) before checking it.
  await page.waitForLoadState("networkidle").catch(() => {});
  const r = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  const bad = r.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  for (const v of bad) {
    check(false, `axe on ${name}: ${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
  }
  console.log(`axe ${name}: ${r.violations.length} violations, ${bad.length} serious or critical`);
}

async function shot(page, name) {
  if (!shots) return;
  await page.waitForLoadState("networkidle").catch(() => {});
  await page.screenshot({ path: path.join(shots, name + ".png"), fullPage: false });
}

const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
const page = await context.newPage();
page.setDefaultTimeout(20_000);
const consoleErrors = [];
page.on("console", (m) => {
  if (m.type() === "error") consoleErrors.push(m.text());
});
page.on("pageerror", (e) => consoleErrors.push(String(e)));

try {
  // 1. First run: the setup form, then signed in as the administrator.
  step = "setup";
  await page.goto(base + "/");
  await page.getByRole("heading", { name: "Set up sdods" }).waitFor();
  await axe(page, "setup");
  await shot(page, "setup");
  await page.getByLabel("Email").fill(admin.email);
  await page.getByLabel("Display name").fill(admin.name);
  await page.getByLabel("Password").fill("short");
  await page.getByRole("button", { name: "Create administrator" }).click();
  // The browser refuses a short password itself (minLength); the server's own answer is shown when it refuses.
  await page.getByLabel("Password").fill(admin.password);
  await page.getByRole("button", { name: "Create administrator" }).click();
  await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor();
  check(await page.getByText(admin.name).isVisible(), "the administrator's name is shown once signed in");

  // 2. A workspace and a project.
  step = "workspace and project";
  await page.getByLabel("Workspace name").fill("Demo team");
  await page.getByRole("button", { name: "Create workspace" }).click();
  await page.getByRole("link", { name: "Demo team" }).waitFor();
  await page.getByLabel("Project name").fill("Shop");
  await page.getByLabel("Workspace", { exact: true }).selectOption({ label: "Demo team" });
  await page.getByRole("button", { name: "Create project" }).click();
  await page.getByRole("heading", { name: "Shop", level: 1 }).waitFor();
  check(page.url().endsWith("/projects/shop"), "the new project opens: " + page.url());
  await page.goto(base + "/");
  await page.getByRole("link", { name: "Shop" }).waitFor();
  await axe(page, "projects");
  await shot(page, "projects");
  // An error of the server is shown with its message: the same slug again.
  await page.getByLabel("Project name").fill("Shop");
  await page.getByRole("button", { name: "Create project" }).click();
  const dup = page.getByRole("alert");
  await dup.waitFor();
  check((await dup.innerText()).length > 30, "a refused create shows the server's message: " + (await dup.innerText()));
  await page.getByRole("link", { name: "Shop" }).click();

  // 3. A feature with a deliberate error on line 5, marked there as the user types.
  step = "feature editor";
  await page.getByLabel("New feature path").fill("checkout/pay");
  await page.getByRole("button", { name: "New feature" }).click();
  await page.getByRole("heading", { name: /checkout\/pay\.feature/ }).waitFor();
  const editor = page.locator(".cm-content");
  await editor.click();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.press("Delete");
  const broken = ["Feature: Payment", "", "  Scenario: Pays", "    Given I wait 1 second", "    Whenn I pay", "    Then I log \"paid\"", ""].join("\n");
  await page.keyboard.insertText(broken);
  const diag = page.locator(".diagnostics li.diag-error").first();
  await diag.waitFor();
  check((await diag.getAttribute("data-line")) === "5", "the error is reported on line 5: " + (await diag.innerText()));
  // The editor marks line 5 (the fifth .cm-line) with an error range, and the gutter has a marker.
  const marked = await page.evaluate(() => {
    const lines = [...document.querySelectorAll(".cm-content .cm-line")];
    return lines.map((l, i) => (l.querySelector(".cm-lintRange-error") ? i + 1 : 0)).filter(Boolean);
  });
  check(marked.length === 1 && marked[0] === 5, "the editor underlines line 5 only: " + JSON.stringify(marked));
  check((await page.locator(".cm-lint-marker-error").count()) >= 1, "the gutter shows an error marker");
  await axe(page, "feature editor with an error");
  await shot(page, "feature-editor");

  // Step completion: after "And " the project's steps are offered.
  await page.keyboard.press("ControlOrMeta+End");
  await page.keyboard.type("    And I wa");
  const option = page.locator(".cm-tooltip-autocomplete li", { hasText: "I wait {float} second(s)" });
  await option.first().waitFor();
  await page.keyboard.press("Escape");

  // Fix it: the diagnostics clear; save (a new file: created).
  const good = [
    "Feature: Payment",
    "",
    "  Scenario: Pays",
    "    Given I wait 3 seconds",
    "    When I log \"paying now\"",
    "    Then I log \"paid\"",
    "",
  ].join("\n");
  await editor.click();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.insertText(good);
  await page.locator(".diagnostics li.diag-error").first().waitFor({ state: "detached" });
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByText(/^Saved at/).waitFor();
  await page.getByRole("link", { name: "pay.feature" }).waitFor();

  // 4. A run started from the UI and followed live to its end.
  step = "run";
  await page.getByRole("link", { name: "Start a run" }).click();
  await page.getByRole("button", { name: "Start run" }).click();
  await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
  const runId = page.url().split("/").pop();
  await page.getByText("● Live").waitFor();
  const sawLive = true;
  await page.locator(".log li", { hasText: "paying now" }).waitFor({ timeout: 60_000 });
  await page.getByText("Finished").waitFor({ timeout: 60_000 });
  await page.locator('[data-testid="run-status"] .status-passed').waitFor({ timeout: 30_000 });
  check(sawLive, "the run was shown live");
  await page.getByRole("link", { name: "Pays" }).waitFor();
  await axe(page, "run");
  await shot(page, "run");
  check((await page.getByRole("link", { name: "HTML report" }).getAttribute("href")) === `/reports/${runId}/`, "the HTML report is linked");
  await page.getByRole("link", { name: "Pays" }).click();
  await page.getByRole("heading", { name: "Pays", level: 1 }).waitFor();
  check(await page.getByText("I wait 3 seconds").isVisible(), "the scenario's steps are shown");
  await axe(page, "scenario");
  await page.goto(base + "/runs?project=shop&status=passed");
  await page.getByRole("link", { name: runId.slice(0, 8) }).waitFor();
  check(await page.getByRole("checkbox", { name: "passed" }).isChecked(), "the filter is read from the URL");
  await axe(page, "runs");
  await shot(page, "runs");
  await page.goto(base + "/runs?project=shop&status=failed&status=errored");
  await page.getByText("No run matches.").waitFor();
  // NOT: none of failed, errored (set in the form; the view lands in the URL).
  await page.getByLabel("Status is").selectOption("not");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await page.getByRole("link", { name: runId.slice(0, 8) }).waitFor();
  check(new URL(page.url()).searchParams.get("statusNot") === "1", "the NOT filter is kept in the URL: " + page.url());

  // 4b. A visual check: an environment pointing at the test's application, a first run whose
  // capture becomes the baseline, the page changed, a second run that fails the check, accepted.
  step = "visual check";
  await page.goto(base + "/projects/shop/environments");
  await page.getByLabel("Environment name").fill("local");
  await page.getByLabel("Base URL").fill(target);
  await page.getByRole("button", { name: "Create environment" }).click();
  await page.getByRole("heading", { name: "local", level: 3 }).waitFor();
  await axe(page, "environments");
  await page.goto(base + "/projects/shop/features/ui/look.feature?new=1");
  await editor.click();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.insertText(
    ["Feature: Look", "  Scenario: Checkout looks right", "    Given the viewport is 640x400", '    When I open "/"', '    Then the page matches the baseline "checkout"', ""].join("\n"),
  );
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByText(/^Saved at/).waitFor();
  const visualRun = async (want) => {
    await page.goto(base + "/projects/shop/run?path=ui/look.feature");
    await page.getByLabel("Environment").selectOption("local");
    await page.getByRole("button", { name: "Start run" }).click();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
    await page.locator(`[data-testid="run-status"] .status-${want}`).waitFor({ timeout: 90_000 });
  };
  await visualRun("passed");
  await page.getByRole("heading", { name: "Visual checks" }).waitFor();
  check((await page.getByRole("img", { name: "Screenshot visual-checkout.png" }).count()) === 1, "the live log shows the capture");
  await fetch(target + "/flip", { method: "POST" });
  await visualRun("failed");
  await page.getByRole("img", { name: "Difference of checkout" }).waitFor();
  check(await page.getByRole("img", { name: "Baseline of checkout" }).isVisible(), "the baseline is shown beside the capture");
  await axe(page, "run with a failed visual check");
  await page.getByRole("heading", { name: "Visual checks" }).scrollIntoViewIfNeeded();
  await shot(page, "visual-check");
  await page.getByRole("button", { name: "Accept checkout" }).click();
  await page.getByText(/^Accepted/).waitFor();
  await page.locator(".visual .status-accepted").waitFor();
  await visualRun("passed");
  // The scenario's history beside it: passed, failed, passed (newest first).
  await page.getByRole("link", { name: "Checkout looks right" }).click();
  const history = page.getByRole("table", { name: "Last results of this scenario" });
  await history.locator("tbody tr").nth(2).waitFor();
  const results = await history.locator("tbody tr td:nth-child(2)").allInnerTexts();
  check(JSON.stringify(results) === JSON.stringify(["passed", "failed", "passed"]), "the history lists the three runs: " + JSON.stringify(results));
  await axe(page, "scenario with history");
  await shot(page, "scenario");

  // Settings and lint: the rules with toggles; switching one off is saved.
  step = "settings";
  await page.goto(base + "/projects/shop/settings");
  const rule = page.getByRole("checkbox", { name: /trailing-whitespace/ });
  await rule.waitFor();
  await rule.uncheck();
  await page.getByRole("button", { name: "Save settings" }).click();
  await page.getByText("Saved.").waitFor();
  await page.reload();
  await page.getByRole("checkbox", { name: /trailing-whitespace/ }).waitFor();
  check(!(await page.getByRole("checkbox", { name: /trailing-whitespace/ }).isChecked()), "a switched-off lint rule stays off");
  await axe(page, "settings and lint");

  // A dataset uploaded as a CSV file and previewed.
  step = "dataset";
  await page.goto(base + "/projects/shop/datasets");
  await page.getByLabel("CSV or JSON file").setInputFiles({ name: "cards.csv", mimeType: "text/csv", buffer: Buffer.from("card,amount\n4111,10\n5500,20\n") });
  await page.getByRole("button", { name: "Upload dataset" }).click();
  await page.getByRole("button", { name: "cards" }).click();
  await page.getByRole("cell", { name: "5500" }).waitFor();
  check((await page.getByRole("columnheader", { name: "amount" }).count()) === 1, "the preview has the file's columns");
  await axe(page, "datasets");

  // A process and a users-pool account.
  step = "processes and pool";
  await page.goto(base + "/projects/shop/processes");
  await page.getByLabel("Process name").fill("pay-once");
  await page.getByLabel("Steps").fill('Given I log "paying <amount>"');
  await page.getByRole("button", { name: "Create process" }).click();
  await page.getByRole("heading", { name: "pay-once", level: 3 }).waitFor();
  await axe(page, "processes");
  await page.goto(base + "/projects/shop/pool");
  await page.getByLabel("Username", { exact: true }).fill("buyer1");
  await page.getByLabel("Account password").fill("s3cret-buyer");
  await page.getByRole("button", { name: "Add account" }).click();
  await page.getByRole("cell", { name: "buyer1", exact: true }).waitFor();
  check((await page.getByText("s3cret-buyer").count()) === 0, "the pool password is not shown");
  await axe(page, "users pool");

  // A feature recorded from a HAR file, reviewed in the editor, then saved.
  step = "record";
  await page.goto(base + "/projects/shop");
  const har = {
    log: {
      version: "1.2",
      creator: { name: "e2e", version: "1" },
      entries: [
        {
          startedDateTime: new Date().toISOString(),
          time: 1,
          request: { method: "GET", url: target + "/api/orders", httpVersion: "HTTP/1.1", headers: [], queryString: [], cookies: [], headersSize: -1, bodySize: 0 },
          response: { status: 200, statusText: "OK", httpVersion: "HTTP/1.1", headers: [], cookies: [], content: { size: 11, mimeType: "application/json", text: '{"ok":true}' }, redirectURL: "", headersSize: -1, bodySize: 0 },
          cache: {},
          timings: { send: 0, wait: 1, receive: 0 },
        },
      ],
    },
  };
  await page.getByLabel("Scenario name").fill("Checkout page answers");
  await page.getByLabel("Save as").fill("recorded/checkout");
  await page.getByLabel("HAR file or browser actions (JSON)").setInputFiles({ name: "checkout.har", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(har)) });
  await page.getByRole("button", { name: "Record draft" }).click();
  await page.getByRole("heading", { name: /recorded\/checkout\.feature/ }).waitFor();
  await page.locator(".cm-content", { hasText: "GET" }).waitFor();
  check((await page.locator(".cm-content").innerText()).includes("Checkout page answers"), "the draft is in the editor for review");
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByText(/^Saved at/).waitFor();
  await page.getByRole("link", { name: "checkout.feature" }).waitFor();

  // A webhook: saved, its secret not shown back.
  step = "integrations";
  await page.goto(base + "/projects/shop/integrations");
  await page.getByLabel("Webhook URL").fill(target + "/hook");
  await page.getByLabel("Signing secret").fill("hook-secret-value");
  await page.getByRole("button", { name: "Save webhook" }).click();
  await page.getByText("signed (secret set)").waitFor();
  check((await page.getByText("hook-secret-value").count()) === 0, "the webhook secret is not shown");
  await axe(page, "integrations");

  // Keyboard and a 1024-pixel-wide window: the first Tab reaches the skip link, nothing overflows.
  step = "keyboard and width";
  await page.setViewportSize({ width: 1024, height: 768 });
  for (const p of ["/", "/runs", "/projects/shop/features/checkout/pay.feature", "/runs/" + runId, "/account"]) {
    await page.goto(base + p);
    await page.locator("h1").first().waitFor();
    await page.waitForLoadState("networkidle").catch(() => {});
    // Focus is on the page's heading (a screen reader announces the new page), Tab goes on into it.
    const onHeading = await page.evaluate(() => document.activeElement?.tagName === "H1");
    check(onHeading, `${p} moves focus to its heading`);
    await page.keyboard.press("Tab");
    const next = await page.evaluate(() => !!document.activeElement?.closest("main") && document.activeElement?.tagName !== "H1");
    check(next, `Tab from the heading of ${p} reaches the page's first control`);
    // From the top of the document the first Tab reaches the skip link.
    await page.evaluate(() => {
      document.body.tabIndex = -1;
      document.body.focus();
      document.body.removeAttribute("tabindex");
    });
    await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => document.activeElement?.textContent ?? "");
    check(focused.trim() === "Skip to content", `the first Tab on ${p} reaches the skip link, not ${focused.slice(0, 40)}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 0, `${p} fits a 1024-pixel-wide window (overflows by ${overflow}px)`);
  }
  await page.setViewportSize({ width: 1280, height: 860 });

  // 5. An API token, created in the UI, shown once, used from outside the browser, revoked.
  step = "token";
  await page.getByRole("link", { name: "Account" }).click();
  await page.getByRole("heading", { name: "API tokens" }).waitFor();
  await page.getByLabel("Token name").fill("ci");
  await page.getByRole("button", { name: "Create token" }).click();
  const token = await page.getByTestId("new-token").innerText();
  check(/^amx_[A-Za-z0-9_-]{43,}$/.test(token), "the token is shown: " + token.slice(0, 8));
  await axe(page, "account");
  await shot(page, "account");
  const used = await fetch(base + "/api/runs?project=shop", { headers: { Authorization: "Bearer " + token } });
  const usedBody = await used.json();
  check(used.status === 200 && usedBody.items?.some((r) => r.id === runId), `the token lists the run: ${used.status}`);
  await page.getByRole("button", { name: "Revoke token ci" }).click();
  await page.getByRole("button", { name: "Revoke token ci" }).waitFor({ state: "detached" });
  const revoked = await fetch(base + "/api/runs", { headers: { Authorization: "Bearer " + token } });
  check(revoked.status === 401, "a revoked token is refused: " + revoked.status);

  // 6. A viewer: created by the admin, added to the workspace as viewer, sees no write action.
  step = "viewer";
  await page.getByRole("link", { name: "Users" }).click();
  await page.getByRole("heading", { name: "Users", level: 1 }).waitFor();
  await axe(page, "users");
  await page.getByLabel("Email").fill(viewer.email);
  await page.getByLabel("Display name").fill(viewer.name);
  await page.getByLabel("Initial password").fill(viewer.password);
  await page.getByRole("button", { name: "Create user" }).click();
  await page.getByRole("cell", { name: viewer.email, exact: true }).waitFor();
  await page.getByRole("button", { name: "Add to Default" }).waitFor();
  await shot(page, "users");
  await page.goto(base + "/workspaces/demo-team");
  await page.getByRole("heading", { name: "Demo team" }).waitFor();
  await page.getByLabel("User").selectOption({ label: `${viewer.name} (${viewer.email})` });
  await page.getByLabel("Role", { exact: true }).selectOption("viewer");
  await page.getByRole("button", { name: "Add member" }).click();
  await page.getByRole("cell", { name: viewer.email, exact: true }).waitFor();
  await axe(page, "workspace");
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { name: "Sign in to sdods" }).waitFor();
  await axe(page, "sign-in");
  await shot(page, "sign-in");
  await page.getByLabel("Email").fill(viewer.email);
  await page.getByLabel("Password").fill("wrong password!");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").waitFor();
  await page.getByLabel("Password").fill(viewer.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor();
  await page.getByRole("link", { name: "Shop" }).waitFor();
  check((await page.getByRole("button", { name: "Create project" }).count()) === 0, "a viewer has no Create project");
  check((await page.getByRole("button", { name: "Create workspace" }).count()) === 0, "a viewer has no Create workspace");
  check((await page.getByRole("link", { name: "Users" }).count()) === 0, "a viewer has no Users page");
  await page.getByRole("link", { name: "Shop" }).click();
  await page.getByRole("link", { name: "pay.feature" }).click();
  await page.getByText("Read only: your role cannot change features.").waitFor();
  check((await page.getByRole("button", { name: "Save" }).count()) === 0, "a viewer has no Save");
  check((await page.getByRole("button", { name: "New feature" }).count()) === 0, "a viewer has no New feature");
  check((await page.getByRole("link", { name: "Start a run" }).count()) === 0, "a viewer has no Start a run");
  await axe(page, "feature (viewer)");
  await page.goto(base + "/projects/shop/environments");
  await page.getByRole("heading", { name: "Environments" }).waitFor();
  check((await page.getByRole("button", { name: "Create environment" }).count()) === 0, "a viewer has no Create environment");
  await page.goto(base + "/projects/shop/settings");
  await page.getByRole("checkbox", { name: /trailing-whitespace/ }).waitFor();
  check((await page.getByRole("button", { name: "Save settings" }).count()) === 0, "a viewer has no Save settings");
  await page.goto(base + "/runs/" + runId);
  await page.getByRole("link", { name: "Pays" }).waitFor();
  await axe(page, "environments (viewer)");
  await page.goto(base + "/runs/" + runId);
  await page.getByRole("link", { name: "Pays" }).waitFor();
  check((await page.getByRole("button", { name: /Cancel|Accept/ }).count()) === 0, "a viewer has no Cancel or Accept");

  step = "console";
  const unexpected = consoleErrors.filter((e) => !/401|403|404|409|Failed to load resource/.test(e));
  check(unexpected.length === 0, "no script error in the console: " + unexpected.join(" | "));
} catch (e) {
  failures.push(`${step}: ${e?.stack ?? e}`);
  console.error(`FAIL ${step}:`, e);
  try {
    await page.screenshot({ path: path.join(process.env.SDODS_E2E_ARTIFACTS || ".", "e2e-failure.png"), fullPage: true });
    console.error("console errors:", consoleErrors.join("\n"));
    console.error("page at failure:", page.url(), "\n", (await page.locator("main").innerText().catch(() => "")).slice(0, 2000));
  } catch {}
} finally {
  await browser.close();
}
if (failures.length) {
  console.error(`${failures.length} failure(s):\n` + failures.join("\n"));
  process.exit(1);
}
console.log("web UI end-to-end: all checks passed");
