// The runs page's first load in the system Chromium: signs in, then loads /runs?project=shop
// SDODS_BENCH_LOADS times (default 20), each a fresh navigation, and prints the time from the
// navigation's start until the table's first rows are on screen. Driven by BenchmarkWebUIRunsPage.
import { chromium } from "playwright-core";

const base = process.env.SDODS_URL;
const loads = Number(process.env.SDODS_BENCH_LOADS || 20);
const browser = await chromium.launch({
  executablePath: process.env.SDODS_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
try {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
  await page.goto(base + "/signin");
  await page.getByLabel("Email").fill(process.env.SDODS_EMAIL);
  await page.getByLabel("Password").fill(process.env.SDODS_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor();
  const times = [];
  for (let i = 0; i < loads + 2; i++) {
    await page.goto(base + "/runs?project=shop", { waitUntil: "commit" });
    await page.locator("tbody tr").nth(49).waitFor({ timeout: 30_000 });
    const ms = await page.evaluate(() => performance.now());
    if (i >= 2) times.push(ms); // the first two warm the caches
  }
  times.sort((a, b) => a - b);
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  console.log(JSON.stringify({ loads: times.length, medianMs: q(0.5), p95Ms: q(0.95), maxMs: times[times.length - 1] }));
} finally {
  await browser.close();
}
