import { describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { AuthProvider } from "../auth";
import { answer, apiError, json } from "../testing";

// uPlot asks for the device's pixel ratio through matchMedia when it loads; jsdom has none. jsdom
// has no canvas either, so the chart falls back to its table, the view tests read anyway.
vi.hoisted(() => {
  const w = globalThis as unknown as { matchMedia?: unknown };
  w.matchMedia = () => ({ matches: false, addEventListener() {}, removeEventListener() {}, addListener() {}, removeListener() {} });
  HTMLCanvasElement.prototype.getContext = (() => null) as never;
});
const { InsightsPage, statsWindow } = await import("./Insights");
const { SchedulesPage } = await import("./Schedules");

const user = { id: "u1", email: "ada@example.com", displayName: "Ada", instanceRole: "user", disabled: false, createdAt: "2026-01-01T00:00:00Z", updatedAt: "2026-01-01T00:00:00Z" };

function wrap(ui: ReactNode, path: string) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={qc}>
      <AuthProvider me={{ user: user as never, authMethod: "session", csrfToken: "c" }}>
        <MemoryRouter initialEntries={[path]}>{ui}</MemoryRouter>
      </AuthProvider>
    </QueryClientProvider>,
  );
}

const common = (p: string, role = "editor") => {
  if (p === "/api/workspaces") return json({ items: [{ id: "w1", slug: "default", name: "Default", role, projectCount: 1, memberCount: 1, org: { slug: "o", name: "O" }, createdAt: "", updatedAt: "" }], nextCursor: null });
  if (p === "/api/projects") return json({ items: [{ id: "p1", slug: "shop", name: "Shop", workspace: { slug: "default", name: "Default" }, settings: {}, createdAt: "", updatedAt: "" }], nextCursor: null });
  return null;
};

const summary = (runs: number, passRate: number | null, failures: number, flaky: number, p95: number | null) => ({ runs, passRate, scenarios: runs * 4, scenarioFailures: failures, flaky, runDurationP95Ms: p95 });
const point = (at: string, passed: number, failed: number, flaky: number) => ({
  at,
  runs: passed + failed,
  passed,
  failed,
  errored: 0,
  cancelled: 0,
  timedOut: 0,
  passRate: passed / (passed + failed),
  runDurationP50Ms: 1000,
  runDurationP95Ms: 2000,
  scenarios: { total: 4, passed: 4, failed: 0, skipped: 0 },
  scenarioDurationP50Ms: 250,
  scenarioDurationP95Ms: 900,
  flaky,
});
const flakyRow = {
  identity: "i1",
  project: "shop",
  featurePath: "checkout",
  scenario: "pays",
  results: 6,
  passed: 4,
  failed: 2,
  flips: 4,
  retryPasses: 0,
  flakyResults: 4,
  flipRate: 0.8,
  flakyRate: 4 / 6,
  retryPassRate: 0,
  failureRate: 2 / 6,
  passRate: 4 / 6,
  health: (4 / 6) * 0.2,
  flakinessVolume: 4.8,
  durationLostMs: 4000,
  failureRateLow: 0.097,
  failureRateHigh: 0.7,
  firstFlakyAt: "2026-01-06T10:00:00Z",
  lastFlakyAt: "2026-01-10T10:00:00Z",
  lastRunId: "00000000-0000-0000-0000-0000000000a1",
  failingStep: { keyword: "When", text: 'I click "#pay"', count: 2 },
  failingLocator: { locator: "#pay", count: 2 },
  heals: 3,
};
const insights = {
  generatedAt: "2026-01-12T00:00:00Z",
  window: { since: "2026-01-01T00:00:00Z", until: "2026-02-01T00:00:00Z" },
  slowestScenarios: [{ identity: "i2", project: "shop", featurePath: "checkout", scenario: "ships", results: 6, p50Ms: 1000, p95Ms: 2900 }],
  slowestSteps: [{ keyword: "Given", text: "I open the shop", count: 6, p50Ms: 300, p95Ms: 800 }],
  durationRegressions: [],
  mostFailingSteps: [{ keyword: "When", text: 'I click "#pay"', count: 2 }],
  failureClusters: [
    {
      signature: "order <uuid> not found ¦ When I click",
      count: 2,
      scenarios: 12,
      firstSeenAt: "2026-01-06T10:00:00Z",
      lastSeenAt: "2026-01-09T10:00:00Z",
      new: true,
      example: { identity: "i1", project: "shop", featurePath: "checkout", scenario: "pays" },
      affected: [
        { identity: "i1", project: "shop", featurePath: "checkout", scenario: "pays" },
        { identity: "i4", project: "shop", featurePath: "refunds", scenario: "refund order", exampleRow: 2 },
      ],
    },
  ],
  newFailures: [{ identity: "i3", project: "shop", featurePath: "checkout", scenario: "skips", failures: 1, firstFailedAt: "2026-01-11T10:00:00Z", lastGreenRunId: "00000000-0000-0000-0000-0000000000b2" }],
  becameFlaky: [],
};

describe("insights", () => {
  it("shows trends with their change and table views, sorts the flaky table on the server, quarantines and releases", async () => {
    const flakyQueries: URLSearchParams[] = [];
    let quarantined: Record<string, unknown> | null = null;
    let released = false;
    answer(async (req) => {
      const u = new URL(req.url);
      const p = u.pathname;
      const c = common(p);
      if (c) return c;
      if (p === "/api/stats/trends")
        return json({
          bucket: "day",
          timeZone: "UTC",
          window: { since: u.searchParams.get("since"), until: u.searchParams.get("until") },
          points: [point("2026-01-05T00:00:00Z", 3, 1, 1), point("2026-01-06T00:00:00Z", 4, 0, 0)],
          summary: summary(8, 0.875, 3, 1, 2000),
          previous: summary(4, 0.5, 5, 2, 2500),
          change: { runs: 4, passRate: 0.375, scenarioFailures: -2, flaky: -1, runDurationP95Ms: -500 },
        });
      if (p === "/api/stats/flaky") {
        flakyQueries.push(u.searchParams);
        return json({ items: [flakyRow], nextCursor: null });
      }
      if (p === "/api/stats/insights") return json(insights);
      if (p === "/api/projects/shop/quarantine" && req.method === "GET")
        return json({
          items:
            quarantined && !released
              ? [{ id: "q1", identity: "i1", project: "shop", featurePath: "checkout", scenario: "pays", owner: quarantined.owner, reason: quarantined.reason, cleanStreak: 0, active: true, createdAt: "2026-01-12T00:00:00Z" }]
              : [],
          nextCursor: null,
          export: { list: "", namePattern: "", tagExpression: "" },
        });
      if (p === "/api/projects/shop/quarantine" && req.method === "POST") {
        quarantined = await req.json();
        return json({ id: "q1", identity: "i1", project: "shop", featurePath: "checkout", scenario: "pays", owner: "x", reason: "y", cleanStreak: 0, active: true, createdAt: "" }, 201);
      }
      if (p === "/api/projects/shop/quarantine/q1" && req.method === "DELETE") {
        released = true;
        return new Response(null, { status: 204 });
      }
      return apiError(404, "not_found", "no " + p);
    });
    wrap(
      <Routes>
        <Route path="/insights" element={<InsightsPage />} />
      </Routes>,
      "/insights?project=shop&days=30",
    );
    const u = userEvent.setup();
    // Period over period: this window, the previous one and the change, better or worse.
    const sum = await screen.findByRole("table", { name: "This window against the previous one" });
    const passRow = within(sum).getByRole("row", { name: /Pass rate/ });
    expect(passRow).toHaveTextContent("87.5 %");
    expect(passRow).toHaveTextContent("50.0 %");
    expect(passRow).toHaveTextContent("+37.5 % (better)");
    expect(within(sum).getByRole("row", { name: /Scenario failures/ })).toHaveTextContent("−2 (better)");
    // Every chart has its data as a table. This DOM has no 2D canvas, so each chart falls back to
    // its table, with no toggle; the toggle between chart and table is tested in Chromium
    // (web/e2e/insights.mjs).
    const runs = await screen.findByRole("figure", { name: "Runs by status" });
    await waitFor(() => expect(within(runs).getByRole("row", { name: /2026-01-05/ })).toHaveTextContent("2026-01-0531000"));
    expect(within(runs).queryByRole("button", { name: /Show table/ })).toBeNull();
    const pass = screen.getByRole("figure", { name: "Pass rate" });
    await waitFor(() => expect(within(pass).getByRole("row", { name: /2026-01-05/ })).toHaveTextContent("75.0 %"));
    // The flaky table: every metric, the failing step and locator, heals.
    const flakyTable = await screen.findByRole("region", { name: /Flaky scenarios table/ });
    const row = within(flakyTable).getByRole("row", { name: /pays/ });
    for (const text of ["80.0 %", "4 flips", "66.7 %", "33.3 %", "9.7 %–70.0 %", "4.80", "4.0 s", 'When I click "#pay"', "#pay"]) expect(row).toHaveTextContent(text);
    expect(flakyQueries[0].get("sort")).toBe("flakyRate");
    expect(flakyQueries[0].get("project")).toBe("shop");
    expect(flakyQueries[0].get("since")).toBe(statsWindow(30).since);
    // Sorting asks the server.
    await u.click(screen.getByRole("button", { name: "Health" }));
    await waitFor(() => expect(flakyQueries.at(-1)?.get("sort")).toBe("health"));
    expect(flakyQueries.at(-1)?.get("order")).toBe("desc");
    expect(screen.getByRole("columnheader", { name: /Health/ })).toHaveAttribute("aria-sort", "descending");
    await u.click(screen.getByRole("button", { name: /Health/ }));
    await waitFor(() => expect(flakyQueries.at(-1)?.get("order")).toBe("asc"));
    // Quarantine with owner, reason, expiry and release-after.
    await u.click(screen.getByRole("button", { name: "Quarantine pays" }));
    const form = screen.getByRole("form", { name: "Quarantine pays" });
    await u.clear(within(form).getByLabelText("Owner"));
    await u.type(within(form).getByLabelText("Owner"), "team-checkout");
    await u.type(within(form).getByLabelText("Reason"), "flips on the payment button");
    await u.type(within(form).getByLabelText("Expires on"), "2026-03-01");
    await u.type(within(form).getByLabelText("Release after clean results"), "5");
    await u.click(within(form).getByRole("button", { name: "Quarantine scenario" }));
    await waitFor(() =>
      expect(quarantined).toEqual({
        featurePath: "checkout",
        scenario: "pays",
        owner: "team-checkout",
        reason: "flips on the payment button",
        expiresAt: "2026-03-01T23:59:59.000Z",
        releaseAfter: 5,
      }),
    );
    await screen.findByText("quarantined");
    await u.click(screen.getByRole("button", { name: "Release pays" }));
    await waitFor(() => expect(released).toBe(true));
    await screen.findByRole("button", { name: "Quarantine pays" });
    // Clusters, slowest, new failures.
    const cluster = screen.getByRole("row", { name: /order <uuid> not found/ });
    expect(cluster).toHaveTextContent("new");
    // The cluster lists its scenarios (project, feature path, name, example row) and how many more there are.
    const affected = within(within(cluster).getByRole("list", { name: "Scenarios affected by order <uuid> not found ¦ When I click" })).getAllByRole("listitem");
    expect(affected.map((li) => li.textContent)).toEqual(["pays shop · checkout", "refund order (row 2) shop · refunds"]);
    expect(cluster).toHaveTextContent("and 10 more");
    expect(screen.getByRole("row", { name: /ships/ })).toHaveTextContent("2.9 s");
    expect(screen.getByRole("row", { name: /I open the shop/ })).toHaveTextContent("800 ms");
    expect(within(screen.getByRole("row", { name: /skips/ })).getByRole("link", { name: "the run" })).toHaveAttribute("href", "/runs/00000000-0000-0000-0000-0000000000b2");
  }, 60_000);

  it("offers no quarantine to a viewer and shows the server's refusal", { timeout: 30_000 }, async () => {
    answer((req) => {
      const p = new URL(req.url).pathname;
      const c = common(p, "viewer");
      if (c) return c;
      if (p === "/api/stats/flaky") return json({ items: [flakyRow], nextCursor: null });
      if (p === "/api/projects/shop/quarantine") return json({ items: [], export: { list: "", namePattern: "", tagExpression: "" } });
      return apiError(400, "validation_failed", "the window is longer than 366 days", "choose a shorter window");
    });
    wrap(
      <Routes>
        <Route path="/insights" element={<InsightsPage />} />
      </Routes>,
      "/insights",
    );
    await screen.findByRole("row", { name: /pays/ });
    expect(screen.queryByRole("button", { name: /Quarantine/ })).toBeNull();
    expect((await screen.findAllByText("the window is longer than 366 days")).length).toBe(2);
  });
});

const firing = (at: string, local: string, extra: Record<string, unknown> = {}) => ({ at, local, timezone: "America/New_York", ...extra });

describe("schedules", () => {
  it("previews the next ten firings from the server as the expression changes, then creates", async () => {
    const previews: URLSearchParams[] = [];
    let created: Record<string, unknown> | null = null;
    answer(async (req) => {
      const u = new URL(req.url);
      const p = u.pathname;
      const c = common(p);
      if (c) return c;
      if (p === "/api/projects/shop/envs") return json({ items: [{ name: "staging", variables: [], createdAt: "", updatedAt: "" }], nextCursor: null });
      if (p === "/api/schedules/next" && u.searchParams.get("cron")) {
        previews.push(u.searchParams);
        if (u.searchParams.get("cron") === "0 25 * * *") return apiError(400, "validation_failed", "the cron expression does not parse: column 3 (hour): 25 is out of range 0-23", "query parameter cron");
        const items = [firing("2027-03-14T07:00:00Z", "2027-03-14T03:00:00-04:00", { dst: "gap", wallTime: "2027-03-14T02:30:00" })];
        for (let i = 1; i < 10; i++) items.push(firing(`2027-03-${14 + i}T06:30:00Z`, `2027-03-${14 + i}T02:30:00-04:00`));
        return json({ items, nextCursor: "x" });
      }
      if (p === "/api/schedules" && req.method === "POST") {
        created = await req.json();
        return json({ id: "s1", project: "shop", name: "nightly", cron: "30 2 * * *", timezone: "America/New_York", status: "active", run: {}, overlap: "skip", catchUpWindowSeconds: 0, catchUpMax: 10, jitterSeconds: 0, consecutiveFailures: 0, recentFirings: [], createdAt: "", updatedAt: "" }, 201);
      }
      if (p === "/api/schedules/s1") return json({ id: "s1", project: "shop", name: "nightly", cron: "30 2 * * *", timezone: "America/New_York", status: "active", run: {}, overlap: "skip", catchUpWindowSeconds: 0, catchUpMax: 10, jitterSeconds: 0, consecutiveFailures: 0, recentFirings: [], createdAt: "", updatedAt: "" });
      if (p === "/api/schedules/next") return json({ items: [], nextCursor: null });
      return apiError(404, "not_found", "no " + p);
    });
    wrap(
      <Routes>
        <Route path="/schedules/*" element={<SchedulesPage />} />
      </Routes>,
      "/schedules/new?project=shop",
    );
    const u = userEvent.setup();
    await u.type(await screen.findByLabelText("Name"), "nightly");
    const cron = screen.getByLabelText("Cron expression");
    await u.clear(cron);
    await u.type(cron, "0 25 * * *");
    const tz = screen.getByLabelText("Time zone");
    await u.clear(tz);
    await u.type(tz, "America/New_York");
    await waitFor(() => expect(screen.getByRole("alert")).toHaveTextContent(/column 3 \(hour\): 25 is out of range/), { timeout: 15_000 });
    await u.click(screen.getByRole("button", { name: "Every day at 02:30" }));
    const table = await screen.findByRole("table", { name: /Next firings of 30 2 \* \* \* in America\/New_York/ }, { timeout: 15_000 });
    expect(within(table).getAllByRole("row")).toHaveLength(11);
    expect(within(table).getAllByRole("row")[1]).toHaveTextContent("2027-03-14 02:30:00 does not exist");
    const last = previews.at(-1)!;
    expect([last.get("cron"), last.get("timezone"), last.get("limit")]).toEqual(["30 2 * * *", "America/New_York", "10"]);
    await u.selectOptions(screen.getByLabelText("Environment"), "staging");
    await u.click(screen.getByRole("button", { name: "Create schedule" }));
    await waitFor(() => expect(created).toMatchObject({ project: "shop", name: "nightly", cron: "30 2 * * *", timezone: "America/New_York", run: { environment: "staging" }, overlap: "skip" }));
    await screen.findByRole("heading", { name: "nightly" });
  }, 60_000);

  it("pauses with a note, resumes, runs now and shows missed firings with their reasons", async () => {
    const calls: { path: string; body: unknown }[] = [];
    let status = "active";
    const sched = () => ({
      id: "s1",
      project: "shop",
      name: "nightly",
      cron: "30 2 * * *",
      timezone: "UTC",
      status,
      paused: status === "paused" ? { at: "2026-01-12T00:00:00Z", by: { id: "u1", email: "ada@example.com", displayName: "Ada" }, note: "release freeze" } : undefined,
      run: {},
      overlap: "skip",
      catchUpWindowSeconds: 0,
      catchUpMax: 10,
      jitterSeconds: 0,
      consecutiveFailures: 0,
      recentFirings: [
        { scheduledAt: "2026-01-11T02:30:00Z", recordedAt: "2026-01-11T02:30:00Z", manual: false, status: "started", reason: "on_time", runId: "00000000-0000-0000-0000-0000000000c3", runStatus: "passed" },
        { scheduledAt: "2026-01-08T02:30:00Z", lastScheduledAt: "2026-01-10T02:30:00Z", recordedAt: "2026-01-11T02:29:00Z", manual: false, status: "missed", reason: "downtime", missedCount: 3 },
      ],
      createdAt: "",
      updatedAt: status,
    });
    answer(async (req) => {
      const u = new URL(req.url);
      const p = u.pathname;
      const c = common(p);
      if (c) return c;
      if (p === "/api/schedules/s1") return json(sched());
      if (p === "/api/schedules/next") return json({ items: status === "active" ? [firing("2026-01-13T02:30:00Z", "2026-01-13T02:30:00Z", { scheduleId: "s1", scheduleName: "nightly", project: "shop" })] : [], nextCursor: null });
      if (req.method === "POST") {
        calls.push({ path: p, body: await req.json().catch(() => null) });
        if (p.endsWith("/pause")) status = "paused";
        if (p.endsWith("/resume")) status = "active";
        if (p.endsWith("/run-now")) return json({ id: "00000000-0000-0000-0000-0000000000d4", status: "queued" }, 202);
        return json(sched());
      }
      return apiError(404, "not_found", "no " + p);
    });
    wrap(
      <Routes>
        <Route path="/schedules/*" element={<SchedulesPage />} />
      </Routes>,
      "/schedules/s1",
    );
    const u = userEvent.setup();
    await screen.findByRole("heading", { name: "nightly" });
    const history = screen.getByRole("table", { name: /last 20 firings/ });
    expect(within(history).getAllByRole("row")[2]).toHaveTextContent("missed ×3 missed: later than the catch-up window");
    expect(await screen.findByRole("table", { name: "The next ten firings of nightly" })).toHaveTextContent("2026-01-13");
    await u.type(screen.getByLabelText("Pause note"), "release freeze");
    await u.click(screen.getByRole("button", { name: "Pause" }));
    await screen.findByText(/Paused .* by Ada/);
    expect(screen.getByRole("note")).toHaveTextContent("release freeze");
    expect(JSON.stringify(calls)).toBe(JSON.stringify([{ path: "/api/schedules/s1/pause", body: { note: "release freeze" } }]));
    await u.click(screen.getByRole("checkbox", { name: /Catch up/ }));
    await u.click(screen.getByRole("button", { name: "Resume" }));
    await waitFor(() => expect(calls[1]).toEqual({ path: "/api/schedules/s1/resume", body: { catchUp: true } }));
    await u.click(screen.getByRole("button", { name: "Run now" }));
    expect(await screen.findByRole("link", { name: "a run" })).toHaveAttribute("href", "/runs/00000000-0000-0000-0000-0000000000d4");
    expect(calls[2]).toEqual({ path: "/api/schedules/s1/run-now", body: { force: false } });
  }, 60_000);
});
