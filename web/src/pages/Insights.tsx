// Insights: trends, flaky scenarios with quarantine, failure clusters, slowest scenarios and steps,
// new failures — per workspace or project, over a window chosen in the URL (so a view is shareable).
// Every figure comes from the statistics API (GET /api/stats/trends, /flaky, /insights; docs/stats.md).
import { useMemo, useState, type FormEvent } from "react";
import { Link, useSearchParams } from "react-router-dom";
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schema } from "../api";
import { canWrite, useAuth } from "../auth";
import { ErrorBox, Field, Loading, PageTitle, formatDuration, formatTime } from "../components/ui";
import { TimeChart } from "../components/Chart";
import { useWorkspaces } from "./Home";

type Flaky = Schema<"FlakyScenario">;
type Quarantine = Schema<"Quarantine">;
type Trends = Schema<"Trends">;
type TrendSummary = Schema<"TrendSummary">;
type TrendChange = Schema<"TrendChange">;

export const windows = [7, 14, 30, 90, 180] as const;
const sortable = [
  "results",
  "flipRate",
  "flakyRate",
  "retryPassRate",
  "failureRate",
  "passRate",
  "health",
  "flakinessVolume",
  "durationLostMs",
  "lastFlakyAt",
] as const;
type SortKey = (typeof sortable)[number];

/** The window of the last `days` days: up to the next UTC midnight, so the server can read its daily rollup. */
export function statsWindow(days: number, now = new Date()) {
  const until = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
  const since = new Date(until.getTime() - days * 86_400_000);
  return { since: since.toISOString(), until: until.toISOString() };
}

const pct = (v: number) => (v * 100).toFixed(v === 0 || v === 1 ? 0 : 1) + " %";
const ms = (v: number) => formatDuration(Math.round(v));
const count = (v: number) => String(Math.round(v));
const dayLabel = (iso: string) => new Date(iso).toISOString().slice(0, 10);
const hourLabel = (iso: string) => new Date(iso).toISOString().slice(0, 16).replace("T", " ") + " UTC";

/** identity of a scenario for quarantine matching: project, feature path, name and example row. */
const qkey = (r: { project: string; featurePath: string; scenario: string; exampleRow?: number }) =>
  [r.project, r.featurePath, r.scenario, r.exampleRow ?? ""].join("\u001f");

export function InsightsPage() {
  const [params, setParams] = useSearchParams();
  const workspace = params.get("workspace") ?? "";
  const project = params.get("project") ?? "";
  const days = Number(params.get("days")) || 30;
  const bucket = (params.get("bucket") ?? "day") as "hour" | "day" | "week";
  const set = (k: string, v: string) => setAll({ [k]: v });
  const setAll = (kv: Record<string, string>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(kv)) {
      if (v) next.set(k, v);
      else next.delete(k);
      if (k === "workspace") next.delete("project");
    }
    setParams(next, { replace: true });
  };
  const ws = useWorkspaces();
  const projects = useQuery({ queryKey: ["projects"], queryFn: () => unwrap(api.GET("/api/projects", { params: { query: { limit: 200 } } })) });
  const wsSlug = ws.data?.items.find((w) => w.id === workspace)?.slug;
  const projectChoices = (projects.data?.items ?? []).filter((p) => !workspace || p.workspace.slug === wsSlug);
  const win = useMemo(() => statsWindow(days), [days]);
  const scope = { project: project || undefined, workspace: workspace || undefined, since: win.since, until: win.until };

  return (
    <div>
      <PageTitle>Insights</PageTitle>
      <form className="filters" aria-label="Scope and window" onSubmit={(e) => e.preventDefault()}>
        <Field label="Workspace">
          <select value={workspace} onChange={(e) => set("workspace", e.target.value)}>
            <option value="">All your workspaces</option>
            {ws.data?.items.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Project">
          <select value={project} onChange={(e) => set("project", e.target.value)}>
            <option value="">All projects</option>
            {projectChoices.map((p) => (
              <option key={p.slug} value={p.slug}>
                {p.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Window">
          <select value={String(days)} onChange={(e) => set("days", e.target.value)}>
            {windows.map((d) => (
              <option key={d} value={d}>
                Last {d} days
              </option>
            ))}
          </select>
        </Field>
        <Field label="Points per">
          <select value={bucket} onChange={(e) => set("bucket", e.target.value)}>
            <option value="hour">hour</option>
            <option value="day">day</option>
            <option value="week">week</option>
          </select>
        </Field>
      </form>
      <p className="muted">
        From {dayLabel(win.since)} to {dayLabel(win.until)} (UTC, end exclusive), compared with the {days} days before.
      </p>
      <TrendsSection scope={scope} bucket={bucket} />
      <FlakySection scope={scope} params={params} set={setAll} />
      <InsightsSection scope={scope} />
    </div>
  );
}

type Scope = { project?: string; workspace?: string; since: string; until: string };

function TrendsSection({ scope, bucket }: { scope: Scope; bucket: "hour" | "day" | "week" }) {
  const q = useQuery({
    queryKey: ["stats", "trends", scope, bucket],
    queryFn: () => unwrap(api.GET("/api/stats/trends", { params: { query: { ...scope, bucket, tz: "UTC" } } })),
  });
  return (
    <section aria-labelledby="trends-h">
      <h2 id="trends-h">Trends</h2>
      {q.isPending ? <Loading what="trends" /> : q.error ? <ErrorBox error={q.error} title="Cannot load the trends" /> : <TrendCharts t={q.data} />}
    </section>
  );
}

function TrendCharts({ t }: { t: Trends }) {
  const at = useMemo(() => t.points.map((p) => p.at), [t]);
  const fx = t.bucket === "hour" ? hourLabel : dayLabel;
  const passRate = useMemo(() => [{ label: "Pass rate", values: t.points.map((p) => p.passRate), color: "#1a7f37" }], [t]);
  const byStatus = useMemo(
    () => [
      { label: "Passed", values: t.points.map((p) => p.passed), color: "#1a7f37", bars: true },
      { label: "Failed", values: t.points.map((p) => p.failed), color: "#c62828" },
      { label: "Errored", values: t.points.map((p) => p.errored), color: "#8e24aa" },
      { label: "Timed out", values: t.points.map((p) => p.timedOut), color: "#b26a00" },
      { label: "Cancelled", values: t.points.map((p) => p.cancelled), color: "#5f6b7a" },
    ],
    [t],
  );
  const durations = useMemo(
    () => [
      { label: "Run p50", values: t.points.map((p) => p.runDurationP50Ms), color: "#1f5fbf" },
      { label: "Run p95", values: t.points.map((p) => p.runDurationP95Ms), color: "#c62828" },
      { label: "Scenario p50", values: t.points.map((p) => p.scenarioDurationP50Ms), color: "#00838f" },
      { label: "Scenario p95", values: t.points.map((p) => p.scenarioDurationP95Ms), color: "#b26a00" },
    ],
    [t],
  );
  const flaky = useMemo(() => [{ label: "Flaky results", values: t.points.map((p) => p.flaky), color: "#b26a00", bars: true }], [t]);
  return (
    <>
      <ChangeSummary summary={t.summary} previous={t.previous} change={t.change} />
      <div className="charts">
        <TimeChart title="Pass rate" at={at} series={passRate} format={pct} formatX={fx} />
        <TimeChart title="Runs by status" at={at} series={byStatus} format={count} formatX={fx} integer />
        <TimeChart title="Duration p50 and p95" at={at} series={durations} format={ms} formatX={fx} />
        <TimeChart title="Flaky results (passed after a retry)" at={at} series={flaky} format={count} formatX={fx} integer />
      </div>
    </>
  );
}

/** This window against the previous one of the same length: value, previous value and change. */
function ChangeSummary({ summary, previous, change }: { summary: TrendSummary; previous: TrendSummary; change: TrendChange }) {
  const rows: { label: string; now: number | null; before: number | null; delta: number | null; fmt: (v: number) => string; better: "up" | "down" }[] = [
    { label: "Runs", now: summary.runs, before: previous.runs, delta: change.runs, fmt: count, better: "up" },
    { label: "Pass rate", now: summary.passRate, before: previous.passRate, delta: change.passRate, fmt: pct, better: "up" },
    { label: "Scenario failures", now: summary.scenarioFailures, before: previous.scenarioFailures, delta: change.scenarioFailures, fmt: count, better: "down" },
    { label: "Flaky results", now: summary.flaky, before: previous.flaky, delta: change.flaky, fmt: count, better: "down" },
    { label: "Run duration p95", now: summary.runDurationP95Ms, before: previous.runDurationP95Ms, delta: change.runDurationP95Ms, fmt: ms, better: "down" },
  ];
  return (
    <table className="summary">
      <caption>This window against the previous one</caption>
      <thead>
        <tr>
          <th scope="col">Figure</th>
          <th scope="col">This window</th>
          <th scope="col">Previous window</th>
          <th scope="col">Change</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => {
          const good = r.delta === null || r.delta === 0 ? "" : (r.delta > 0) === (r.better === "up") ? "better" : "worse";
          return (
            <tr key={r.label}>
              <th scope="row">{r.label}</th>
              <td>{r.now === null ? "–" : r.fmt(r.now)}</td>
              <td>{r.before === null ? "–" : r.fmt(r.before)}</td>
              <td className={"change " + good}>
                {r.delta === null ? "–" : (r.delta > 0 ? "+" : r.delta < 0 ? "−" : "±") + r.fmt(Math.abs(r.delta))}
                {good ? <span className="sr-only"> ({good})</span> : null}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

const columns: { key: SortKey | null; label: string; title?: string }[] = [
  { key: null, label: "Scenario" },
  { key: "results", label: "Results", title: "n: passed and failed results" },
  { key: null, label: "Passed / failed" },
  { key: "flipRate", label: "Flip rate", title: "flips / (n − 1)" },
  { key: "flakyRate", label: "Flaky rate", title: "results that flip or pass on a retry / n" },
  { key: "retryPassRate", label: "Retry passes", title: "passes after a retry in the same run / n" },
  { key: "failureRate", label: "Failure rate", title: "failed / n with its Wilson 95 % interval" },
  { key: "passRate", label: "Pass rate" },
  { key: "health", label: "Health", title: "pass rate × (1 − flip rate)" },
  { key: "flakinessVolume", label: "Volume", title: "flip rate × n" },
  { key: "durationLostMs", label: "Time lost" },
  { key: "lastFlakyAt", label: "Flaky between" },
  { key: null, label: "Failing step and locator" },
  { key: null, label: "Heals" },
  { key: null, label: "Quarantine" },
];

function FlakySection({ scope, params, set }: { scope: Scope; params: URLSearchParams; set: (kv: Record<string, string>) => void }) {
  const { me } = useAuth();
  const sort = (params.get("sort") ?? "flakyRate") as SortKey;
  const order = (params.get("order") ?? "desc") as "asc" | "desc";
  const minResults = Number(params.get("minResults")) || 10;
  const all = params.get("all") === "1";
  const [minDraft, setMinDraft] = useState(String(minResults));
  const q = useInfiniteQuery({
    queryKey: ["stats", "flaky", scope, sort, order, minResults, all],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET("/api/stats/flaky", {
          params: { query: { ...scope, sort, order, minResults, flakyOnly: !all, limit: 50, cursor: pageParam } },
        }),
      ),
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const rows = q.data?.pages.flatMap((p) => p.items) ?? [];
  const projectSlugs = [...new Set(rows.map((r) => r.project))].sort();
  const ws = useWorkspaces();
  const projects = useQuery({ queryKey: ["projects"], queryFn: () => unwrap(api.GET("/api/projects", { params: { query: { limit: 200 } } })) });
  const writableProject = (slug: string) => {
    const p = projects.data?.items.find((x) => x.slug === slug);
    const role = ws.data?.items.find((w) => w.slug === p?.workspace.slug)?.role;
    return !!p && canWrite(me, role);
  };
  const quarantines = useQuery({
    queryKey: ["quarantines", projectSlugs],
    enabled: projectSlugs.length > 0,
    queryFn: async () => {
      // Every open quarantine of each project, page after page.
      const openQuarantines = async (slug: string) => {
        const items: Quarantine[] = [];
        let cursor: string | undefined;
        do {
          const page = await unwrap(api.GET("/api/projects/{slug}/quarantine", { params: { path: { slug }, query: { limit: 200, cursor } } }));
          items.push(...page.items.map((i) => ({ ...i, project: slug })));
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        return items;
      };
      const lists = await Promise.all(projectSlugs.map(openQuarantines));
      return new Map(lists.flat().filter((qq) => qq.active).map((qq) => [qkey(qq), qq] as const));
    },
  });
  const [quarantining, setQuarantining] = useState<Flaky | null>(null);
  const sortBy = (k: SortKey) => {
    set({ sort: k, order: k === sort && order === "desc" ? "asc" : "desc" });
  };

  return (
    <section aria-labelledby="flaky-h">
      <h2 id="flaky-h">Flaky scenarios</h2>
      <form
        className="filters"
        aria-label="Flaky scenarios filter"
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          set({ minResults: minDraft });
        }}
      >
        <Field label="Minimum results" hint="Scenarios with fewer passed or failed results in the window are left out.">
          <input type="number" min={2} max={10000} value={minDraft} onChange={(e) => setMinDraft(e.target.value)} />
        </Field>
        <label className="check">
          <input type="checkbox" checked={all} onChange={(e) => set({ all: e.target.checked ? "1" : "" })} /> Every scenario, not only flaky ones
        </label>
        <button type="submit">Apply</button>
      </form>
      {q.isPending ? (
        <Loading what="flaky scenarios" />
      ) : q.error ? (
        <ErrorBox error={q.error} title="Cannot load the flaky scenarios" />
      ) : rows.length === 0 ? (
        <p>No flaky scenario in this window (with at least {minResults} results).</p>
      ) : (
        <div className="wide" tabIndex={0} role="region" aria-label="Flaky scenarios table, scrolls sideways">
          <table className="flaky">
            <caption className="sr-only">Flaky scenarios, sorted by {sort} {order === "desc" ? "descending" : "ascending"}</caption>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th
                    scope="col"
                    key={c.label}
                    title={c.title}
                    aria-sort={c.key && c.key === sort ? (order === "desc" ? "descending" : "ascending") : undefined}
                  >
                    {c.key ? (
                      <button type="button" className="link" onClick={() => sortBy(c.key as SortKey)}>
                        {c.label}
                        {c.key === sort ? (order === "desc" ? " ▼" : " ▲") : ""}
                      </button>
                    ) : (
                      c.label
                    )}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => {
                const qq = quarantines.data?.get(qkey(r));
                return (
                  <tr key={r.identity}>
                    <th scope="row">
                      <Link to={"/runs/" + r.lastRunId}>{r.scenario}</Link>
                      {r.exampleRow !== undefined ? <span className="muted"> (row {r.exampleRow})</span> : null}
                      <div className="muted small">
                        {r.project} · {r.featurePath}
                      </div>
                    </th>
                    <td>{r.results}</td>
                    <td>
                      {r.passed} / {r.failed}
                    </td>
                    <td>
                      {pct(r.flipRate)} <span className="muted small">({r.flips} flips)</span>
                    </td>
                    <td>
                      {pct(r.flakyRate)} <span className="muted small">({r.flakyResults})</span>
                    </td>
                    <td>
                      {pct(r.retryPassRate)} <span className="muted small">({r.retryPasses})</span>
                    </td>
                    <td>
                      {pct(r.failureRate)}{" "}
                      <span className="muted small">
                        ({pct(r.failureRateLow)}–{pct(r.failureRateHigh)})
                      </span>
                    </td>
                    <td>{pct(r.passRate)}</td>
                    <td>{pct(r.health)}</td>
                    <td>{r.flakinessVolume.toFixed(2)}</td>
                    <td>{formatDuration(r.durationLostMs)}</td>
                    <td className="small">{r.firstFlakyAt ? formatTime(r.firstFlakyAt) + " – " + formatTime(r.lastFlakyAt) : "–"}</td>
                    <td className="small">
                      {r.failingStep ? (
                        <>
                          <code>
                            {r.failingStep.keyword} {r.failingStep.text}
                          </code>{" "}
                          ×{r.failingStep.count}
                        </>
                      ) : (
                        "–"
                      )}
                      {r.failingLocator ? (
                        <div>
                          locator <code>{r.failingLocator.locator}</code> ×{r.failingLocator.count}
                        </div>
                      ) : null}
                    </td>
                    <td>{r.heals}</td>
                    <td>
                      <QuarantineCell row={r} q={qq} writable={writableProject(r.project)} onQuarantine={() => setQuarantining(r)} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {q.hasNextPage ? (
        <button type="button" onClick={() => q.fetchNextPage()} disabled={q.isFetchingNextPage}>
          More scenarios
        </button>
      ) : null}
      {quarantining ? <QuarantineForm row={quarantining} onDone={() => setQuarantining(null)} /> : null}
    </section>
  );
}

function QuarantineCell({ row, q, writable, onQuarantine }: { row: Flaky; q?: Quarantine; writable: boolean; onQuarantine: () => void }) {
  const qc = useQueryClient();
  const release = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/projects/{slug}/quarantine/{quarantineId}", { params: { path: { slug: row.project, quarantineId: q!.id } } })),
    onSuccess: () => qc.invalidateQueries({ queryKey: ["quarantines"] }),
  });
  if (q) {
    return (
      <div className="small">
        <span className="badge status-pending">quarantined</span> by {q.owner}
        {q.expiresAt ? <> until {formatTime(q.expiresAt)}</> : null}
        <div className="muted">{q.reason}</div>
        {writable ? (
          <button type="button" onClick={() => release.mutate()} disabled={release.isPending}>
            Release<span className="sr-only"> {row.scenario}</span>
          </button>
        ) : null}
        <ErrorBox error={release.error} title="Cannot release" />
      </div>
    );
  }
  return writable ? (
    <button type="button" onClick={onQuarantine}>
      Quarantine<span className="sr-only"> {row.scenario}</span>
    </button>
  ) : (
    <span className="muted">–</span>
  );
}

function QuarantineForm({ row, onDone }: { row: Flaky; onDone: () => void }) {
  const { me } = useAuth();
  const qc = useQueryClient();
  const [owner, setOwner] = useState(me.user.email);
  const [reason, setReason] = useState("");
  const [expires, setExpires] = useState("");
  const [releaseAfter, setReleaseAfter] = useState("");
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST("/api/projects/{slug}/quarantine", {
          params: { path: { slug: row.project } },
          body: {
            featurePath: row.featurePath,
            scenario: row.scenario,
            exampleRow: row.exampleRow,
            owner,
            reason,
            expiresAt: expires ? new Date(expires + "T23:59:59Z").toISOString() : undefined,
            releaseAfter: releaseAfter ? Number(releaseAfter) : undefined,
          },
        }),
      ),
    onSuccess: () => {
      qc.invalidateQueries({ queryKey: ["quarantines"] });
      onDone();
    },
  });
  return (
    <form
      className="inline-form"
      aria-label={"Quarantine " + row.scenario}
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <h3>
        Quarantine “{row.scenario}” <span className="muted small">({row.project} · {row.featurePath})</span>
      </h3>
      <p className="muted">Its failures stop failing runs while it is quarantined; it still runs and its results are recorded.</p>
      <Field label="Owner" hint="Who answers for the scenario while it is quarantined.">
        <input value={owner} onChange={(e) => setOwner(e.target.value)} required maxLength={256} />
      </Field>
      <Field label="Reason">
        <textarea value={reason} onChange={(e) => setReason(e.target.value)} required maxLength={2000} rows={2} />
      </Field>
      <Field label="Expires on" hint="Optional: the quarantine stops applying at the end of this day (UTC).">
        <input type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
      </Field>
      <Field label="Release after clean results" hint="Optional: release it after this many passed results in a row.">
        <input type="number" min={1} max={1000} value={releaseAfter} onChange={(e) => setReleaseAfter(e.target.value)} />
      </Field>
      <ErrorBox error={create.error} title="Cannot quarantine" />
      <div className="toolbar">
        <button type="submit" className="primary" disabled={create.isPending}>
          Quarantine scenario
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function InsightsSection({ scope }: { scope: Scope }) {
  const q = useQuery({ queryKey: ["stats", "insights", scope], queryFn: () => unwrap(api.GET("/api/stats/insights", { params: { query: scope } })) });
  if (q.isPending) return <Loading what="insights" />;
  if (q.error) return <ErrorBox error={q.error} title="Cannot load the insights" />;
  const d = q.data;
  const ref = (r: { project: string; featurePath: string; scenario: string; exampleRow?: number }) => (
    <>
      {r.scenario}
      {r.exampleRow !== undefined ? " (row " + r.exampleRow + ")" : ""} <span className="muted small">{r.project} · {r.featurePath}</span>
    </>
  );
  return (
    <>
      <section aria-labelledby="new-h">
        <h2 id="new-h">New failures since the last green run</h2>
        {d.newFailures.length === 0 ? (
          <p>None: every scenario that passed in its project's last passed run has not failed since.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Scenario</th>
                <th scope="col">Failures since</th>
                <th scope="col">First failed</th>
                <th scope="col">Last green run</th>
              </tr>
            </thead>
            <tbody>
              {d.newFailures.map((f) => (
                <tr key={f.identity}>
                  <th scope="row">{ref(f)}</th>
                  <td>{f.failures}</td>
                  <td>{formatTime(f.firstFailedAt)}</td>
                  <td>
                    <Link to={"/runs/" + f.lastGreenRunId}>the run</Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="clusters-h">
        <h2 id="clusters-h">Failure clusters</h2>
        {d.failureClusters.length === 0 ? (
          <p>No failure in this window.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Signature</th>
                <th scope="col">Failures</th>
                <th scope="col">Scenarios</th>
                <th scope="col">First seen</th>
                <th scope="col">Last seen</th>
                <th scope="col">Affected scenarios</th>
              </tr>
            </thead>
            <tbody>
              {d.failureClusters.map((c) => (
                <tr key={c.signature}>
                  <th scope="row">
                    <code>{c.signature}</code> {c.new ? <span className="badge status-failed">new</span> : null}
                  </th>
                  <td>{c.count}</td>
                  <td>{c.scenarios}</td>
                  <td>{formatTime(c.firstSeenAt)}</td>
                  <td>{formatTime(c.lastSeenAt)}</td>
                  <td>
                    {/* at most 10, most failures first (docs/stats.md); no page shows one identity's history, so plain text */}
                    <ul className="affected" aria-label={"Scenarios affected by " + c.signature}>
                      {c.affected.map((a) => (
                        <li key={a.project + "\u001f" + a.identity}>{ref(a)}</li>
                      ))}
                    </ul>
                    {c.scenarios > c.affected.length ? (
                      <span className="muted small">and {c.scenarios - c.affected.length} more</span>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="slow-h">
        <h2 id="slow-h">Slowest scenarios</h2>
        {d.slowestScenarios.length === 0 ? (
          <p>No results in this window.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Scenario</th>
                <th scope="col">Results</th>
                <th scope="col">p50</th>
                <th scope="col">p95</th>
              </tr>
            </thead>
            <tbody>
              {d.slowestScenarios.map((s) => (
                <tr key={s.identity}>
                  <th scope="row">{ref(s)}</th>
                  <td>{s.results}</td>
                  <td>{ms(s.p50Ms)}</td>
                  <td>{ms(s.p95Ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <h3>Slowest steps</h3>
        {d.slowestSteps.length === 0 ? (
          <p>No step durations in this window.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Step</th>
                <th scope="col">Count</th>
                <th scope="col">p50</th>
                <th scope="col">p95</th>
              </tr>
            </thead>
            <tbody>
              {d.slowestSteps.map((s) => (
                <tr key={s.keyword + s.text}>
                  <th scope="row">
                    <code>
                      {s.keyword} {s.text}
                    </code>
                  </th>
                  <td>{s.count}</td>
                  <td>{ms(s.p50Ms)}</td>
                  <td>{ms(s.p95Ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {d.durationRegressions.length > 0 ? (
          <>
            <h3>Slower than the previous window</h3>
            <table>
              <thead>
                <tr>
                  <th scope="col">Scenario</th>
                  <th scope="col">p50 now</th>
                  <th scope="col">p50 before</th>
                  <th scope="col">Change</th>
                </tr>
              </thead>
              <tbody>
                {d.durationRegressions.map((s) => (
                  <tr key={s.identity}>
                    <th scope="row">{ref(s)}</th>
                    <td>{ms(s.p50Ms)}</td>
                    <td>{ms(s.previousP50Ms)}</td>
                    <td>+{ms(s.deltaMs)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        ) : null}
      </section>
      <section aria-labelledby="steps-h">
        <h2 id="steps-h">Steps that fail most</h2>
        {d.mostFailingSteps.length === 0 ? (
          <p>No failing step in this window.</p>
        ) : (
          <ul>
            {d.mostFailingSteps.map((s) => (
              <li key={s.keyword + s.text}>
                <code>
                  {s.keyword} {s.text}
                </code>{" "}
                ×{s.count}
              </li>
            ))}
          </ul>
        )}
        {d.becameFlaky.length > 0 ? (
          <>
            <h3>Became flaky in this window</h3>
            <ul>
              {d.becameFlaky.map((s) => (
                <li key={s.identity}>{ref(s)}</li>
              ))}
            </ul>
          </>
        ) : null}
      </section>
    </>
  );
}
