// Schedules: the list with next firings and last results, create and edit with a cron helper whose
// next ten firings come from the server (GET /api/schedules/next?cron=…, the scheduler's own
// computation, so DST decisions match), pause with a note, resume, run now, and the history of
// firings with missed ones and their reasons (docs/schedules.md).
import { useEffect, useMemo, useState, type FormEvent } from "react";
import { Link, Route, Routes, useNavigate, useParams, useSearchParams } from "react-router-dom";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schema } from "../api";
import { canWrite, useAuth } from "../auth";
import { ErrorBox, Field, Loading, PageTitle, StatusBadge, formatTime } from "../components/ui";
import { useWorkspaces } from "./Home";

type Schedule = Schema<"Schedule">;
type Upcoming = Schema<"UpcomingRun">;
type Overlap = Schema<"ScheduleOverlap">;

const overlaps: { value: Overlap; text: string }[] = [
  { value: "skip", text: "skip: a firing while a run is active is missed" },
  { value: "buffer_one", text: "buffer one: one firing waits for the active run" },
  { value: "buffer_all", text: "buffer all: every firing waits, one after the other" },
  { value: "cancel_other", text: "cancel other: cancel the active runs and start" },
  { value: "allow_all", text: "allow all: start regardless" },
];

/** What a firing's reason means (docs/schedules.md). */
export const reasons: Record<string, string> = {
  on_time: "on time",
  catch_up: "caught up after downtime",
  buffered: "waited for the previous run",
  manual: "run now",
  forced: "run now, forced past the overlap policy",
  downtime: "missed: later than the catch-up window (the server was down)",
  catch_up_cap: "missed: older than the most a catch-up starts",
  overlap: "missed: a run of the schedule was active",
  buffer_full: "missed: a firing was already waiting",
  paused: "missed: the schedule was paused",
};

const presets: { label: string; cron: string }[] = [
  { label: "Every hour", cron: "0 * * * *" },
  { label: "Every day at 02:30", cron: "30 2 * * *" },
  { label: "Weekdays at 06:00", cron: "0 6 * * 1-5" },
  { label: "Mondays at 09:00", cron: "0 9 * * mon" },
  { label: "First of the month", cron: "0 0 1 * *" },
  { label: "Every 15 minutes", cron: "*/15 * * * *" },
];

function zones(): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (k: string) => string[] };
  try {
    return ["UTC", ...(intl.supportedValuesOf?.("timeZone") ?? [])];
  } catch {
    return ["UTC"];
  }
}

const yearAhead = () => new Date(Date.now() + 365 * 86_400_000).toISOString();

export function SchedulesPage() {
  return (
    <Routes>
      <Route index element={<ScheduleList />} />
      <Route path="new" element={<ScheduleEditor />} />
      <Route path=":id" element={<ScheduleDetail />} />
      <Route path=":id/edit" element={<ScheduleEditor />} />
    </Routes>
  );
}

/** Whether the caller may change schedules of a project (editor or admin of its workspace). */
function useWritable() {
  const { me } = useAuth();
  const ws = useWorkspaces();
  const projects = useQuery({ queryKey: ["projects"], queryFn: () => unwrap(api.GET("/api/projects", { params: { query: { limit: 200 } } })) });
  const writable = (slug: string) => {
    const p = projects.data?.items.find((x) => x.slug === slug);
    return !!p && canWrite(me, ws.data?.items.find((w) => w.slug === p.workspace.slug)?.role);
  };
  return { writable, projects: projects.data?.items ?? [], anyWritable: (projects.data?.items ?? []).some((p) => writable(p.slug)) };
}

function ScheduleList() {
  const [params, setParams] = useSearchParams();
  const project = params.get("project") ?? "";
  const status = (params.get("status") ?? "") as "" | "active" | "paused";
  const { projects, anyWritable } = useWritable();
  const list = useQuery({
    queryKey: ["schedules", project, status],
    queryFn: () => unwrap(api.GET("/api/schedules", { params: { query: { project: project || undefined, status: status || undefined, limit: 200 } } })),
  });
  const upcoming = useQuery({
    queryKey: ["schedules", "next", project],
    queryFn: () => unwrap(api.GET("/api/schedules/next", { params: { query: { project: project || undefined, limit: 10 } } })),
  });
  const set = (k: string, v: string) => {
    const next = new URLSearchParams(params);
    if (v) next.set(k, v);
    else next.delete(k);
    setParams(next, { replace: true });
  };
  return (
    <div>
      <PageTitle>Schedules</PageTitle>
      <div className="toolbar">
        {anyWritable ? (
          <Link className="button primary" to={"/schedules/new" + (project ? "?project=" + project : "")}>
            New schedule
          </Link>
        ) : null}
      </div>
      <form className="filters" aria-label="Filter schedules" onSubmit={(e) => e.preventDefault()}>
        <Field label="Project">
          <select value={project} onChange={(e) => set("project", e.target.value)}>
            <option value="">All projects</option>
            {projects.map((p) => (
              <option key={p.slug} value={p.slug}>
                {p.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Status">
          <select value={status} onChange={(e) => set("status", e.target.value)}>
            <option value="">Any</option>
            <option value="active">active</option>
            <option value="paused">paused</option>
          </select>
        </Field>
      </form>
      {list.isPending ? (
        <Loading what="schedules" />
      ) : list.error ? (
        <ErrorBox error={list.error} title="Cannot load the schedules" />
      ) : list.data.items.length === 0 ? (
        <p>No schedule yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Schedule</th>
              <th scope="col">Project</th>
              <th scope="col">When</th>
              <th scope="col">Status</th>
              <th scope="col">Next firing</th>
              <th scope="col">Last result</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((s) => (
              <tr key={s.id}>
                <th scope="row">
                  <Link to={"/schedules/" + s.id}>{s.name}</Link>
                </th>
                <td>{s.project}</td>
                <td>
                  <code>{s.cron}</code> <span className="muted small">{s.timezone}</span>
                </td>
                <td>
                  <StatusBadge status={s.status} />
                  {s.paused?.note ? <div className="muted small">{s.paused.note}</div> : null}
                </td>
                <td>{s.nextRunAt ? formatTime(s.nextRunAt) : "–"}</td>
                <td>
                  {s.lastRunId ? (
                    <>
                      <Link to={"/runs/" + s.lastRunId}>{s.lastRunStatus ? <StatusBadge status={s.lastRunStatus} /> : "run"}</Link>{" "}
                      <span className="muted small">{formatTime(s.lastRunAt)}</span>
                    </>
                  ) : (
                    "–"
                  )}
                  {s.consecutiveFailures > 0 ? <div className="muted small">{s.consecutiveFailures} failed in a row</div> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Coming up</h2>
      {upcoming.isPending ? (
        <Loading what="the next firings" />
      ) : upcoming.error ? (
        <ErrorBox error={upcoming.error} title="Cannot load the next firings" />
      ) : (
        <FiringsTable items={upcoming.data.items} caption="The next firings of the active schedules (7 days)" withSchedule />
      )}
    </div>
  );
}

/** Firings as the server computes them: local time with offset, UTC, and any DST decision. */
function FiringsTable({ items, caption, withSchedule }: { items: Upcoming[]; caption: string; withSchedule?: boolean }) {
  if (items.length === 0) return <p>No firing in this period.</p>;
  return (
    <table className="firings">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">#</th>
          {withSchedule ? <th scope="col">Schedule</th> : null}
          <th scope="col">Local time</th>
          <th scope="col">UTC</th>
          <th scope="col">Daylight saving</th>
        </tr>
      </thead>
      <tbody>
        {items.map((u, i) => (
          <tr key={(u.scheduleId ?? "") + u.at}>
            <td>{i + 1}</td>
            {withSchedule ? (
              <td>
                <Link to={"/schedules/" + u.scheduleId}>{u.scheduleName}</Link> <span className="muted small">{u.project}</span>
              </td>
            ) : null}
            <td>
              <time dateTime={u.at} data-at={u.at}>
                {u.local.replace("T", " ")}
              </time>{" "}
              <span className="muted small">{u.timezone}</span>
            </td>
            <td>{u.at.replace("T", " ").replace(/(\.\d+)?Z$/, " UTC")}</td>
            <td>
              {u.dst === "gap"
                ? `${u.wallTime?.replace("T", " ")} does not exist (clocks spring forward): fires at the end of the gap`
                : u.dst === "fold"
                  ? `${u.wallTime?.replace("T", " ")} occurs twice (clocks fall back): fires at the first only`
                  : "–"}
              {u.startsBy ? <div className="muted small">starts by {formatTime(u.startsBy)} (jitter)</div> : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The next ten firings of an expression in a zone, from the server, as the user types (debounced). */
function CronPreview({ cron, timezone }: { cron: string; timezone: string }) {
  const [debounced, setDebounced] = useState({ cron, timezone });
  useEffect(() => {
    const t = setTimeout(() => setDebounced({ cron, timezone }), 350);
    return () => clearTimeout(t);
  }, [cron, timezone]);
  const q = useQuery({
    queryKey: ["schedules", "preview", debounced],
    enabled: debounced.cron.trim() !== "",
    queryFn: () =>
      unwrap(api.GET("/api/schedules/next", { params: { query: { cron: debounced.cron.trim(), timezone: debounced.timezone || "UTC", limit: 10, until: yearAhead() } } })),
    retry: false,
  });
  return (
    <div className="cron-preview" aria-live="polite">
      <h3>Next ten firings</h3>
      {debounced.cron.trim() === "" ? (
        <p className="muted">Type an expression or choose a preset.</p>
      ) : q.isPending ? (
        <Loading what="the firings" />
      ) : q.error ? (
        <ErrorBox error={q.error} title="The expression cannot be used" />
      ) : (
        <FiringsTable items={q.data.items} caption={`Next firings of ${debounced.cron} in ${debounced.timezone || "UTC"}, as the scheduler computes them`} />
      )}
    </div>
  );
}

function ScheduleEditor() {
  const { id } = useParams();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const { projects, writable } = useWritable();
  const existing = useQuery({
    queryKey: ["schedule", id],
    enabled: !!id,
    queryFn: () => unwrap(api.GET("/api/schedules/{scheduleId}", { params: { path: { scheduleId: id! } } })),
  });
  const [f, setF] = useState({
    project: params.get("project") ?? "",
    name: "",
    cron: "30 2 * * *",
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC",
    environment: "",
    paths: "",
    tags: "",
    overlap: "skip" as Overlap,
    catchUpWindowSeconds: "0",
    catchUpMax: "10",
    jitterSeconds: "0",
    pauseAfterFailures: "",
    paused: false,
    note: "",
  });
  const [loaded, setLoaded] = useState(false);
  useEffect(() => {
    const s = existing.data;
    if (!s || loaded) return;
    setLoaded(true);
    setF((o) => ({
      ...o,
      project: s.project,
      name: s.name,
      cron: s.cron,
      timezone: s.timezone,
      environment: s.run.environment ?? "",
      paths: (s.run.paths ?? []).join("\n"),
      tags: s.run.tags ?? "",
      overlap: s.overlap,
      catchUpWindowSeconds: String(s.catchUpWindowSeconds),
      catchUpMax: String(s.catchUpMax),
      jitterSeconds: String(s.jitterSeconds),
      pauseAfterFailures: s.pauseAfterFailures ? String(s.pauseAfterFailures) : "",
    }));
  }, [existing.data, loaded]);
  const envs = useQuery({
    queryKey: ["envs", f.project],
    enabled: f.project !== "",
    queryFn: () => unwrap(api.GET("/api/projects/{slug}/envs", { params: { path: { slug: f.project } } })),
  });
  const zoneList = useMemo(zones, []);
  const upd = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  const save = useMutation({
    mutationFn: async () => {
      const paths = f.paths
        .split(/[\n,]/)
        .map((p) => p.trim())
        .filter(Boolean);
      const run = { environment: f.environment || undefined, tags: f.tags.trim() || undefined, paths: paths.length ? paths : undefined };
      const timing = {
        overlap: f.overlap,
        catchUpWindowSeconds: Number(f.catchUpWindowSeconds) || 0,
        catchUpMax: Number(f.catchUpMax) || 10,
        jitterSeconds: Number(f.jitterSeconds) || 0,
        pauseAfterFailures: f.pauseAfterFailures ? Number(f.pauseAfterFailures) : undefined,
      };
      if (id) {
        return unwrap(api.PUT("/api/schedules/{scheduleId}", { params: { path: { scheduleId: id } }, body: { name: f.name, cron: f.cron.trim(), timezone: f.timezone, run, ...timing } }));
      }
      return unwrap(
        api.POST("/api/schedules", {
          body: {
            project: f.project,
            name: f.name,
            cron: f.cron.trim(),
            timezone: f.timezone,
            run,
            ...timing,
            status: f.paused ? "paused" : undefined,
            note: f.paused && f.note ? f.note : undefined,
          },
        }),
      );
    },
    onSuccess: (s) => {
      qc.invalidateQueries({ queryKey: ["schedules"] });
      qc.setQueryData(["schedule", s.id], s);
      navigate("/schedules/" + s.id);
    },
  });
  if (id && existing.isPending) return <Loading what="the schedule" />;
  if (id && existing.error) return <ErrorBox error={existing.error} title="Cannot load the schedule" />;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <div>
      <p className="crumbs">
        <Link to="/schedules">Schedules</Link>
      </p>
      <PageTitle>{id ? "Edit schedule" : "New schedule"}</PageTitle>
      <form onSubmit={submit} className="schedule-form">
        <div className="side-by-side">
          <div>
            {id ? (
              <p>
                Project: <strong>{f.project}</strong>
              </p>
            ) : (
              <Field label="Project">
                <select value={f.project} onChange={upd("project")} required>
                  <option value="">Choose a project</option>
                  {projects
                    .filter((p) => writable(p.slug))
                    .map((p) => (
                      <option key={p.slug} value={p.slug}>
                        {p.name}
                      </option>
                    ))}
                </select>
              </Field>
            )}
            <Field label="Name">
              <input value={f.name} onChange={upd("name")} required maxLength={100} />
            </Field>
            <Field label="Cron expression" hint="minute hour day-of-month month day-of-week (six fields: seconds first), or @hourly, @daily, @weekly, @monthly, @yearly">
              <input value={f.cron} onChange={upd("cron")} required maxLength={100} className="mono" spellCheck={false} />
            </Field>
            <div className="presets" role="group" aria-label="Cron presets">
              {presets.map((p) => (
                <button type="button" key={p.cron} onClick={() => setF({ ...f, cron: p.cron })} aria-pressed={f.cron === p.cron}>
                  {p.label}
                </button>
              ))}
            </div>
            <Field label="Time zone" hint="An IANA zone; the cron fields are wall-clock times there.">
              <input value={f.timezone} onChange={upd("timezone")} list="tz-list" maxLength={64} />
            </Field>
            <datalist id="tz-list">
              {zoneList.map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
            <h3>What each run executes</h3>
            <Field label="Environment">
              <select value={f.environment} onChange={upd("environment")}>
                <option value="">The project's default</option>
                {envs.data?.items.map((e) => (
                  <option key={e.name} value={e.name}>
                    {e.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Features and folders" hint="One per line; empty runs every feature.">
              <textarea value={f.paths} onChange={upd("paths")} rows={2} />
            </Field>
            <Field label="Tag expression" hint="e.g. not @wip">
              <input value={f.tags} onChange={upd("tags")} maxLength={1000} />
            </Field>
            <h3>Timing</h3>
            <Field label="While a run of the schedule is active">
              <select value={f.overlap} onChange={upd("overlap")}>
                {overlaps.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.text}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Catch-up window (seconds)" hint="How late a firing may still start after downtime; 0 starts none late.">
              <input type="number" min={0} max={2592000} value={f.catchUpWindowSeconds} onChange={upd("catchUpWindowSeconds")} />
            </Field>
            <Field label="Most firings one catch-up starts">
              <input type="number" min={1} max={1000} value={f.catchUpMax} onChange={upd("catchUpMax")} />
            </Field>
            <Field label="Jitter (seconds)" hint="Each firing starts up to this long after its time.">
              <input type="number" min={0} max={3600} value={f.jitterSeconds} onChange={upd("jitterSeconds")} />
            </Field>
            <Field label="Pause after this many failed runs in a row" hint="Empty: never.">
              <input type="number" min={1} max={1000} value={f.pauseAfterFailures} onChange={upd("pauseAfterFailures")} />
            </Field>
            {!id ? (
              <>
                <label className="check">
                  <input type="checkbox" checked={f.paused} onChange={(e) => setF({ ...f, paused: e.target.checked })} /> Create it paused
                </label>
                {f.paused ? (
                  <Field label="Pause note">
                    <input value={f.note} onChange={upd("note")} maxLength={1000} />
                  </Field>
                ) : null}
              </>
            ) : (
              <p className="muted">Saving restarts the cadence from now; firings that were waiting are dropped.</p>
            )}
          </div>
          <CronPreview cron={f.cron} timezone={f.timezone} />
        </div>
        <ErrorBox error={save.error} title="Cannot save the schedule" />
        <div className="toolbar">
          <button type="submit" className="primary" disabled={save.isPending}>
            {id ? "Save schedule" : "Create schedule"}
          </button>
          <Link to={id ? "/schedules/" + id : "/schedules"}>Cancel</Link>
        </div>
      </form>
    </div>
  );
}

function ScheduleDetail() {
  const { id = "" } = useParams();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const { writable } = useWritable();
  const s = useQuery({ queryKey: ["schedule", id], queryFn: () => unwrap(api.GET("/api/schedules/{scheduleId}", { params: { path: { scheduleId: id } } })) });
  const next = useQuery({
    queryKey: ["schedules", "next", "one", id, s.data?.updatedAt, s.data?.status],
    enabled: !!s.data,
    queryFn: () => unwrap(api.GET("/api/schedules/next", { params: { query: { schedule: id, limit: 10, until: yearAhead() } } })),
  });
  const [note, setNote] = useState("");
  const [catchUp, setCatchUp] = useState(false);
  const [force, setForce] = useState(false);
  const [started, setStarted] = useState<string | null>(null);
  const done = (sc: Schedule) => {
    qc.setQueryData(["schedule", id], sc);
    qc.invalidateQueries({ queryKey: ["schedules"] });
    setNote("");
  };
  const pause = useMutation({
    mutationFn: () => unwrap(api.POST("/api/schedules/{scheduleId}/pause", { params: { path: { scheduleId: id } }, body: { note: note || undefined } })),
    onSuccess: done,
  });
  const resume = useMutation({
    mutationFn: () => unwrap(api.POST("/api/schedules/{scheduleId}/resume", { params: { path: { scheduleId: id } }, body: { note: note || undefined, catchUp } })),
    onSuccess: done,
  });
  const runNow = useMutation({
    mutationFn: () => unwrap(api.POST("/api/schedules/{scheduleId}/run-now", { params: { path: { scheduleId: id } }, body: { force } })),
    onSuccess: (r) => {
      setStarted(r.id);
      qc.invalidateQueries({ queryKey: ["schedule", id] });
    },
  });
  const del = useMutation({
    mutationFn: () => unwrap(api.DELETE("/api/schedules/{scheduleId}", { params: { path: { scheduleId: id } } })),
    onSuccess: () => {
      qc.invalidateQueries({ queryKey: ["schedules"] });
      navigate("/schedules");
    },
  });
  if (s.isPending) return <Loading what="the schedule" />;
  if (s.error) return <ErrorBox error={s.error} title="Cannot load the schedule" />;
  const sc = s.data;
  const canEdit = writable(sc.project);
  return (
    <div>
      <p className="crumbs">
        <Link to="/schedules">Schedules</Link> / <Link to={"/projects/" + sc.project}>{sc.project}</Link>
      </p>
      <PageTitle>{sc.name}</PageTitle>
      <p>
        <StatusBadge status={sc.status} /> <code>{sc.cron}</code> in {sc.timezone}
        {sc.nextRunAt ? <> · next {formatTime(sc.nextRunAt)}</> : null}
        {sc.lastRunId ? (
          <>
            {" "}
            · last run <Link to={"/runs/" + sc.lastRunId}>{sc.lastRunStatus ? <StatusBadge status={sc.lastRunStatus} /> : "run"}</Link> {formatTime(sc.lastRunAt)}
          </>
        ) : null}
        {sc.consecutiveFailures > 0 ? <> · {sc.consecutiveFailures} failed in a row</> : null}
      </p>
      {sc.paused ? (
        <p className="conflict" role="note">
          Paused {formatTime(sc.paused.at)} by {sc.paused.by ? sc.paused.by.displayName : "the scheduler"}
          {sc.paused.note ? <>: “{sc.paused.note}”</> : null}
        </p>
      ) : null}
      <p className="muted">
        Runs {sc.run.paths?.length ? sc.run.paths.join(", ") : "every feature"}
        {sc.run.tags ? " with " + sc.run.tags : ""} in {sc.run.environment ?? "the default environment"}; overlap {sc.overlap}, catch-up window {sc.catchUpWindowSeconds} s
        (at most {sc.catchUpMax}), jitter {sc.jitterSeconds} s{sc.pauseAfterFailures ? `, pauses after ${sc.pauseAfterFailures} failed runs` : ""}.
      </p>
      {canEdit ? (
        <div className="inline-form">
          <Field label={sc.status === "paused" ? "Resume note" : "Pause note"} hint="Optional: why, for the others.">
            <input value={note} onChange={(e) => setNote(e.target.value)} maxLength={1000} />
          </Field>
          <div className="toolbar">
            {sc.status === "paused" ? (
              <>
                <label className="check">
                  <input type="checkbox" checked={catchUp} onChange={(e) => setCatchUp(e.target.checked)} /> Catch up the firings passed while paused
                </label>
                <button type="button" onClick={() => resume.mutate()} disabled={resume.isPending}>
                  Resume
                </button>
              </>
            ) : (
              <button type="button" onClick={() => pause.mutate()} disabled={pause.isPending}>
                Pause
              </button>
            )}
            <label className="check">
              <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} /> Force past the overlap policy
            </label>
            <button type="button" onClick={() => runNow.mutate()} disabled={runNow.isPending}>
              Run now
            </button>
            <Link to={"/schedules/" + id + "/edit"}>Edit</Link>
            <button
              type="button"
              onClick={() => {
                if (window.confirm("Delete the schedule " + sc.name + "? Its runs stay.")) del.mutate();
              }}
            >
              Delete
            </button>
          </div>
          {started ? (
            <p role="status">
              Started <Link to={"/runs/" + started}>a run</Link>.
            </p>
          ) : null}
          <ErrorBox error={pause.error || resume.error} title="Cannot change the schedule" />
          <ErrorBox error={runNow.error} title="Cannot start the run" />
          <ErrorBox error={del.error} title="Cannot delete" />
        </div>
      ) : null}
      <h2>Next firings</h2>
      {sc.status === "paused" ? (
        <p>None while paused.</p>
      ) : next.isPending ? (
        <Loading what="the next firings" />
      ) : next.error ? (
        <ErrorBox error={next.error} title="Cannot load the next firings" />
      ) : (
        <FiringsTable items={next.data.items} caption={`The next ten firings of ${sc.name}`} />
      )}
      <h2>History</h2>
      <History s={sc} />
    </div>
  );
}

function History({ s }: { s: Schedule }) {
  if (s.recentFirings.length === 0) return <p>Nothing fired yet.</p>;
  return (
    <table className="history">
      <caption>The last 20 firings, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Scheduled</th>
          <th scope="col">What happened</th>
          <th scope="col">Run</th>
        </tr>
      </thead>
      <tbody>
        {s.recentFirings.map((f) => (
          <tr key={f.scheduledAt + f.recordedAt + f.status} className={f.status === "missed" ? "missed" : undefined}>
            <td>
              {formatTime(f.scheduledAt)}
              {f.lastScheduledAt && f.lastScheduledAt !== f.scheduledAt ? <> – {formatTime(f.lastScheduledAt)}</> : null}
              {f.manual ? <span className="muted small"> (run now)</span> : null}
            </td>
            <td>
              <StatusBadge status={f.status} />
              {f.missedCount && f.missedCount > 1 ? <> ×{f.missedCount}</> : null} {f.reason ? reasons[f.reason] ?? f.reason : ""}
            </td>
            <td>
              {f.runId ? <Link to={"/runs/" + f.runId}>{f.runStatus ? <StatusBadge status={f.runStatus} /> : "run"}</Link> : "–"}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
