// End-to-end test of the trace viewer (/trace/): the system Chromium driven by playwright-core
// against a real sdods on a real PostgreSQL, started by TestTraceViewerEndToEnd (impl/server/app),
// which ran a browser feature twice against a test page: passing, then on a changed page that
// logs a console error, gets a 500 from a fetch and lacks the button the feature clicks.
//
// It checks, for each recorded step of the failing run: the before/after screenshots, the DOM
// snapshot rendered (styles included, no script), the console and the network (with the failed
// request's body); that a snapshot carrying a <script> does not run in the viewer; the trace diff
// against the passing run pointing at the changed step; and axe-core on the viewer.
import { chromium } from "playwright-core";
import { AxeBuilder } from "@axe-core/playwright";

const base = process.env.SDODS_URL;
const failing = process.env.SDODS_E2E_FAILING_RUN;
const passing = process.env.SDODS_E2E_PASSING_RUN;
const shop = process.env.SDODS_E2E_SHOP;
if (!base || !failing || !passing || !shop) throw new Error("SDODS_URL, SDODS_E2E_FAILING_RUN, SDODS_E2E_PASSING_RUN and SDODS_E2E_SHOP must be set");
const executablePath = process.env.SDODS_CHROMIUM || "/usr/bin/chromium";
const failures = [];
let step = "start";

function check(cond, msg) {
  if (!cond) {
    failures.push(`${step}: ${msg}`);
    console.error(`FAIL ${step}: ${msg}`);
  }
}

async function axe(page, name) {
  await page.waitForLoadState("networkidle").catch(() => {});
  // The DOM snapshot's frame is left out: it is the tested page's markup, not the viewer's, and it is
  // sandboxed without scripts, so axe cannot run in it (Playwright's evaluate there never returns).
  const r = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).exclude("iframe.snapshot").analyze();
  const bad = r.violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  for (const v of bad) {
    check(false, `axe on ${name}: ${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
  }
  console.log(`axe ${name}: ${r.violations.length} violations, ${bad.length} serious or critical`);
}

const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
const page = await context.newPage();
page.setDefaultTimeout(20_000);
const consoleErrors = [];
page.on("pageerror", (e) => consoleErrors.push(String(e)));

try {
  step = "sign in";
  const login = await context.request.post(base + "/api/auth/login", { data: { email: "admin@example.com", password: process.env.SDODS_E2E_PASSWORD } });
  check(login.ok(), `login answered ${login.status()}`);

  step = "trace.json";
  const trace = await (await context.request.get(`${base}/api/runs/${failing}/files/trace.json`)).json();
  const sc = trace.scenarios[0];
  check(sc && sc.status === "failed", `the failing run's scenario is ${sc && sc.status}`);
  check(sc.traces.length === 1 && sc.traces[0].attempt === 1, `one kept trace: ${JSON.stringify(sc.traces)}`);
  const files = sc.traces[0].files;
  const domFile = Object.keys(files).find((n) => n.endsWith("-dom.html"));
  check(domFile, `a DOM snapshot among ${Object.keys(files)}`);
  // The snapshot is served inert: text, sandboxed, never HTML on the API origin.
  const snap = await context.request.get(`${base}/api/runs/${failing}/files/${files[domFile]}`);
  check(snap.headers()["content-type"].startsWith("text/plain"), `snapshot content type ${snap.headers()["content-type"]}`);
  check((snap.headers()["content-security-policy"] || "").includes("sandbox"), "the snapshot is served with a sandboxing CSP");
  const snapText = await snap.text();
  check(!/<script/i.test(snapText) && !/onclick=/i.test(snapText), "the stored snapshot has no script and no event handler");
  check(snapText.includes("rgb(10, 120, 40)") || snapText.includes("rgb(10,120,40)"), "the snapshot carries the page's styles");
  const passTrace = await (await context.request.get(`${base}/api/runs/${passing}/files/trace.json`)).json();
  const pt = passTrace.scenarios[0].traces;
  check(pt.length === 1 && Object.keys(pt[0].files).length === 0, `the passing run kept its manifest only (on_failure): ${JSON.stringify(pt)}`);

  step = "viewer";
  await page.goto(`${base}/trace/?run=${failing}`);
  await page.locator(".row.step").first().waitFor();
  await page.locator(".filmstrip button").first().waitFor();
  check((await page.locator(".filmstrip button").count()) === 2, "the filmstrip has a frame per recorded step (open, click)");
  check((await page.locator(".filmstrip img").count()) === 2, "each frame shows a screenshot");

  for (const i of [0, 1]) {
    step = `step ${i + 1}`;
    await page.locator(`.row.step[data-index="${i}"]`).click();
    await page.locator(".detail h3").filter({ hasText: `${i + 1}.` }).waitFor();
    const after = page.locator(".detail figure.shot-after img");
    await after.waitFor();
    await page.waitForFunction((sel) => { const img = document.querySelector(sel); return img && img.complete && img.naturalWidth > 0; }, ".detail figure.shot-after img");
    if (i > 0) {
      await page.waitForFunction(() => { const img = document.querySelector(".detail figure.shot-before img"); return img && img.complete && img.naturalWidth > 0; });
    }
    const frameEl = page.locator(".detail iframe.snapshot");
    await frameEl.waitFor();
    check((await frameEl.getAttribute("sandbox")) === "", "the snapshot frame is sandboxed without exceptions");
    const frame = frameEl.contentFrame();
    await frame.locator("h1").waitFor();
    const colour = await frame.locator("h1").evaluate((e) => getComputedStyle(e).color);
    check(colour === "rgb(10, 120, 40)", `the snapshot renders with the page's styles (h1 ${colour})`);
    check((await frame.locator("script").count()) === 0, "no script in the rendered snapshot");
    if (i === 1) {
      check(await frame.getByText("Sold out").isVisible(), "the failing step's snapshot shows the changed page");
      const target = await page.locator(".detail pre.target").textContent();
      check(target.includes("not on the page"), `the acted-on element is missing: ${target}`);
    }
    const cons = await page.locator(".detail table.console").textContent();
    const net = await page.locator(".detail table.network").textContent();
    if (i === 0) {
      check(cons.includes("shop loaded"), `the page's console.log is shown: ${cons}`);
      check(net.includes(shop + "/shop") && net.includes("/api/items"), `the page's requests are shown: ${net}`);
      check(net.includes("500"), `the failing fetch's status is shown: ${net}`);
      check(await page.locator(".detail table.network tr.request.failed").count() >= 1, "the failed request is marked");
      check(await page.locator(".detail table.network details pre").filter({ hasText: "items exploded" }).count() === 1, "the failed request's body is shown");
    }
    check(await page.locator(".detail table.console").isVisible() && await page.locator(".detail table.network").isVisible(), "console and network are shown");
  }
  step = "console error";
  const allConsole = [];
  for (const i of [0, 1]) {
    await page.locator(`.row.step[data-index="${i}"]`).click();
    allConsole.push(await page.locator(".detail table.console").textContent());
  }
  check(allConsole.join(" ").includes("items failed: 500"), "the page's console.error is shown at the step it happened in");

  step = "trace diff";
  const diff = page.locator("#diff table.diff-steps");
  await diff.waitFor();
  const changed = page.locator('#diff tr.step-diff[data-index="1"]');
  check(await changed.count() === 1, "the diff lists the changed click step");
  const changedText = await changed.textContent();
  check(changedText.includes("#pay") && changedText.includes('id="pay"') && changedText.includes("(absent)"), `the diff shows the element that went: ${changedText}`);
  check(changedText.includes("passed → failed"), `the diff shows the status change: ${changedText}`);
  const first = await page.locator('#diff tr.step-diff[data-index="0"]').textContent();
  check(first.includes("/api/items 200 → 500"), `the diff shows the network change of the first step: ${first}`);
  check((await diff.textContent()).includes("+ items failed: 500"), "the diff shows the new console error");
  check(await page.locator('.row.step.differs[data-index="1"]').count() === 1, "the changed step is marked in the action list");
  const api = await (await context.request.get(`${base}/api/runs/${failing}/scenarios/${sc.id}/trace-diff`)).json();
  check(api.baseline && api.baseline.runId === passing && api.firstDifference === 0, `the API's diff: ${JSON.stringify(api).slice(0, 300)}`);
  await axe(page, "trace viewer");

  step = "hostile snapshot";
  // A snapshot that carries script anyway (the recorder strips it; the viewer must not rely on that).
  await page.route("**/*-dom.html", (route) => route.fulfill({
    status: 200, contentType: "text/plain; charset=utf-8",
    body: `<!doctype html><html><head><title>snap</title></head><body><p id="hostile">hostile page</p>` +
      `<script>document.body.setAttribute('data-ran','viewer');try{parent.postMessage('ran','*')}catch(e){}</script>` +
      `<img alt="" src="data:," onerror="document.body.setAttribute('data-ran','handler')"></body></html>`,
  }));
  await page.goto(`${base}/trace/?run=${failing}`);
  await page.evaluate(() => { window.__messages = []; window.addEventListener("message", (e) => window.__messages.push(String(e.data))); });
  await page.locator(".filmstrip button").first().waitFor();
  await page.locator('.row.step[data-index="0"]').click();
  const hf = page.locator(".detail iframe.snapshot").contentFrame();
  await hf.locator("#hostile").waitFor();
  await page.waitForTimeout(500);
  const ran = await hf.locator("body").getAttribute("data-ran");
  check(ran === null, `a script of the snapshot ran in the viewer (data-ran=${ran})`);
  check((await page.evaluate(() => window.__messages.length)) === 0, "the snapshot could not message the viewer");
  check(!consoleErrors.length, `no page errors: ${consoleErrors.join("; ")}`);
} catch (e) {
  failures.push(`${step}: ${e && e.stack ? e.stack : e}`);
} finally {
  await browser.close();
}
if (failures.length) {
  console.error(`${failures.length} failure(s):\n` + failures.join("\n"));
  process.exit(1);
}
console.log("trace viewer: ok");
