import { useEffect, useMemo, useRef, useState, type FormEvent } from "react";
import { Link, useNavigate, useParams, useSearchParams } from "react-router-dom";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, readEvents, unwrap, type Schema } from "../api";
import { useAuth, canWrite } from "../auth";
import { ErrorBox, Field, Loading, PageTitle, StatusBadge, formatTime } from "../components/ui";
import { SchemaFields, initialValues, toInput, type FormValues, type JsonSchema } from "../components/SchemaForm";
import { useWorkspaces } from "./Home";

type AgentJob = Schema<"AgentJob">;
type AgentJobEvent = Schema<"AgentJobEvent">;
const jobStatuses = ["queued", "running", "succeeded", "failed", "cancelled"] as const;
const finished = new Set(["succeeded", "failed", "cancelled"]);

export function useKinds() {
  return useQuery({ queryKey: ["agent-kinds"], queryFn: () => unwrap(api.GET("/api/agents/kinds")), staleTime: 60_000 });
}

function useProjects() {
  return useQuery({ queryKey: ["projects"], queryFn: () => unwrap(api.GET("/api/projects", { params: { query: { limit: 200 } } })) });
}

/** Agent jobs, newest first (filters in the URL), and the form that starts one (for those who may). */
export function AgentJobsPage() {
  const [params, setParams] = useSearchParams();
  const project = params.get("project") || undefined;
  const kind = (params.get("kind") || undefined) as AgentJob["kind"] | undefined;
  const status = (params.get("status") || undefined) as AgentJob["status"] | undefined;
  const jobs = useQuery({
    queryKey: ["agent-jobs", project, kind, status],
    queryFn: () => unwrap(api.GET("/api/agents/jobs", { params: { query: { project, kind, status, limit: 50 } } })),
    refetchInterval: (q) => (q.state.data?.items.some((j) => !finished.has(j.status)) ? 2000 : false),
  });
  const kinds = useKinds();
  const projects = useProjects();
  const setFilter = (name: string, v: string) => {
    const next = new URLSearchParams(params);
    if (v) next.set(name, v);
    else next.delete(name);
    setParams(next);
  };
  return (
    <div>
      <PageTitle>Agent jobs</PageTitle>
      <p className="muted">
        Agents look at a project's runs and propose changes; what they propose waits in the <Link to="/inbox">review inbox</Link>.
      </p>
      <StartJob />
      <section aria-labelledby="jobs-h">
        <h2 id="jobs-h">Jobs</h2>
        <form className="filters" aria-label="Filter jobs" onSubmit={(e) => e.preventDefault()}>
          <Field label="Project">
            <select value={project ?? ""} onChange={(e) => setFilter("project", e.target.value)}>
              <option value="">All projects</option>
              {projects.data?.items.map((p) => (
                <option key={p.slug} value={p.slug}>
                  {p.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Kind">
            <select value={kind ?? ""} onChange={(e) => setFilter("kind", e.target.value)}>
              <option value="">All kinds</option>
              {kinds.data?.items.map((k) => (
                <option key={k.name} value={k.name}>
                  {k.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Status">
            <select value={status ?? ""} onChange={(e) => setFilter("status", e.target.value)}>
              <option value="">Any status</option>
              {jobStatuses.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </Field>
        </form>
        {jobs.isPending ? <Loading what="jobs" /> : null}
        <ErrorBox error={jobs.error} title="Cannot list jobs" />
        {jobs.data && jobs.data.items.length === 0 ? <p>No job matches.</p> : null}
        {jobs.data && jobs.data.items.length > 0 ? (
          <table aria-label="Agent jobs">
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">Status</th>
                <th scope="col">Project</th>
                <th scope="col">Started by</th>
                <th scope="col">Created</th>
                <th scope="col">Proposals</th>
                <th scope="col">Summary</th>
              </tr>
            </thead>
            <tbody>
              {jobs.data.items.map((j) => (
                <tr key={j.id}>
                  <td>
                    <Link to={"/agents/jobs/" + j.id}>
                      {j.kind} {j.id.slice(0, 8)}
                    </Link>
                  </td>
                  <td>
                    <StatusBadge status={j.status} /> {finished.has(j.status) ? "" : j.progress + "%"}
                  </td>
                  <td>{j.project}</td>
                  <td>{j.createdBy?.displayName ?? "the system"}</td>
                  <td>{formatTime(j.createdAt)}</td>
                  <td>{j.proposalIds.length ? <Link to={`/inbox?jobId=${j.id}&status=all`}>{j.proposalIds.length}</Link> : 0}</td>
                  <td>{j.error ?? j.summary ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </section>
    </div>
  );
}

/** The form that starts a job: a project and kind, then the kind's input as a form generated from its schema. */
function StartJob() {
  const { me } = useAuth();
  const ws = useWorkspaces();
  const projects = useProjects();
  const kinds = useKinds();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [project, setProject] = useState("");
  const [kindName, setKindName] = useState("");
  const [values, setValues] = useState<FormValues>({});
  const [maxSeconds, setMaxSeconds] = useState("");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const writableProjects = useMemo(() => {
    const role = new Map((ws.data?.items ?? []).map((w) => [w.slug, w.role]));
    return (projects.data?.items ?? []).filter((p) => canWrite(me, role.get(p.workspace.slug)));
  }, [projects.data, ws.data, me]);
  const kind = kinds.data?.items.find((k) => k.name === kindName);
  const schema = (kind?.inputSchema ?? {}) as JsonSchema;
  if (!projects.data || !kinds.data) return kinds.error ? <ErrorBox error={kinds.error} title="Cannot list agent kinds" /> : null;
  if (writableProjects.length === 0) return null;
  const chooseKind = (name: string) => {
    setKindName(name);
    const k = kinds.data.items.find((x) => x.name === name);
    setValues(initialValues((k?.inputSchema ?? {}) as JsonSchema));
    setErrors({});
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    const errs: Record<string, string> = {};
    if (!project) errs["#project"] = "Choose a project.";
    if (!kind) errs["#kind"] = "Choose a kind.";
    const { input, errors: inputErrors } = toInput(schema, values);
    Object.assign(errs, inputErrors);
    let budget: number | undefined;
    if (maxSeconds.trim() !== "") {
      budget = Number(maxSeconds);
      if (!Number.isInteger(budget) || budget < 1 || budget > 3600) errs["#maxSeconds"] = "The time budget must be a whole number of seconds from 1 to 3600.";
    }
    setErrors(errs);
    if (Object.keys(errs).length) return;
    setBusy(true);
    try {
      const job = await unwrap(api.POST("/api/agents/jobs", { body: { project, kind: kindName as AgentJob["kind"], input, maxSeconds: budget } }));
      await qc.invalidateQueries({ queryKey: ["agent-jobs"] });
      navigate("/agents/jobs/" + job.id);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const count = Object.keys(errors).length;
  return (
    <section aria-labelledby="start-h" className="inline-form">
      <h2 id="start-h">Start a job</h2>
      <form onSubmit={submit} noValidate aria-label="Start an agent job">
        <Field label="Project">
          <select value={project} onChange={(e) => setProject(e.target.value)} aria-invalid={errors["#project"] ? true : undefined}>
            <option value="">Choose…</option>
            {writableProjects.map((p) => (
              <option key={p.slug} value={p.slug}>
                {p.name}
              </option>
            ))}
          </select>
        </Field>
        {errors["#project"] ? <p className="field-error">{errors["#project"]}</p> : null}
        <Field label="Kind" hint={kind?.description}>
          <select value={kindName} onChange={(e) => chooseKind(e.target.value)} aria-invalid={errors["#kind"] ? true : undefined}>
            <option value="">Choose…</option>
            {kinds.data.items.map((k) => (
              <option key={k.name} value={k.name} disabled={!k.enabled}>
                {k.name}
                {k.enabled ? "" : " (not configured)"}
              </option>
            ))}
          </select>
        </Field>
        {errors["#kind"] ? <p className="field-error">{errors["#kind"]}</p> : null}
        {kind ? (
          <fieldset className="schema-form">
            <legend>Input of {kind.name}</legend>
            <SchemaFields schema={schema} values={values} onChange={setValues} errors={errors} idPrefix={"input-" + kind.name} />
            <p className="muted">Needs the scopes {kind.scopes.join(", ")}.</p>
          </fieldset>
        ) : null}
        <Field label="Time budget (seconds)" hint="default 300, at most 3600">
          <input type="number" min={1} max={3600} value={maxSeconds} onChange={(e) => setMaxSeconds(e.target.value)} aria-invalid={errors["#maxSeconds"] ? true : undefined} />
        </Field>
        {errors["#maxSeconds"] ? <p className="field-error">{errors["#maxSeconds"]}</p> : null}
        <p role="status" className={count ? "field-error" : "sr-only"}>
          {count ? `${count} field(s) need attention.` : ""}
        </p>
        <ErrorBox error={error} title="The job was not started" />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Starting…" : "Start job"}
        </button>
      </form>
    </section>
  );
}

/**
 * Follows a job's event stream (history first, then live) until its end event, reconnecting with
 * Last-Event-ID when cut off; the job is reloaded as events arrive.
 */
function useJobEvents(jobId: string, active: boolean) {
  const qc = useQueryClient();
  const [events, setEvents] = useState<AgentJobEvent[]>([]);
  const [live, setLive] = useState<"idle" | "live" | "ended">("idle");
  const [streamError, setStreamError] = useState<unknown>(null);
  useEffect(() => {
    if (!active) return;
    const ctrl = new AbortController();
    let lastId: string | undefined;
    const seen = new Set<number>();
    (async () => {
      for (let attempt = 0; !ctrl.signal.aborted && attempt < 20; attempt++) {
        try {
          const r = await api.GET("/api/agents/jobs/{jobId}/events", {
            params: { path: { jobId }, header: lastId ? ({ "Last-Event-ID": lastId } as never) : undefined },
            parseAs: "stream",
            signal: ctrl.signal,
          });
          if (!r.response.ok || !r.data) {
            await unwrap(Promise.resolve(r));
            return;
          }
          setLive("live");
          setStreamError(null);
          let ended = false;
          await readEvents(
            r.data as ReadableStream<Uint8Array>,
            (ev) => {
              if (ev.id) lastId = ev.id;
              let data: AgentJobEvent;
              try {
                data = JSON.parse(ev.data);
              } catch {
                return;
              }
              if (seen.has(data.sequence)) return;
              seen.add(data.sequence);
              setEvents((l) => (l.length > 2000 ? [...l.slice(-1500), data] : [...l, data]));
              void qc.invalidateQueries({ queryKey: ["agent-job", jobId] });
              if (data.type === "end") {
                ended = true;
                setLive("ended");
                void qc.invalidateQueries({ queryKey: ["agent-jobs"] });
                void qc.invalidateQueries({ queryKey: ["proposals"] });
                ctrl.abort();
              }
            },
            ctrl.signal,
          );
          if (ended) return;
        } catch (e) {
          if (ctrl.signal.aborted) return;
          setStreamError(e);
        }
        await new Promise((res) => setTimeout(res, 1000));
      }
    })();
    return () => ctrl.abort();
  }, [jobId, active, qc]);
  return { events, live, streamError };
}

/** One job: its status and progress, its events live, cancel, and the proposals it made (linked to the inbox). */
export function AgentJobPage() {
  const { jobId = "" } = useParams();
  const { me } = useAuth();
  const ws = useWorkspaces();
  const qc = useQueryClient();
  const job = useQuery({ queryKey: ["agent-job", jobId], queryFn: () => unwrap(api.GET("/api/agents/jobs/{jobId}", { params: { path: { jobId } } })) });
  // The stream is followed from the first load (a finished job's history is replayed, then it ends).
  const { events, live, streamError } = useJobEvents(jobId, !!job.data);
  const proposals = useQuery({
    queryKey: ["proposals", "job", jobId, job.data?.proposalIds.length],
    queryFn: () => unwrap(api.GET("/api/proposals", { params: { query: { jobId, limit: 200 } } })),
    enabled: !!job.data && job.data.proposalIds.length > 0,
  });
  const project = useQuery({
    queryKey: ["project", job.data?.project],
    queryFn: () => unwrap(api.GET("/api/projects/{slug}", { params: { path: { slug: job.data!.project } } })),
    enabled: !!job.data,
  });
  const [cancelError, setCancelError] = useState<unknown>(null);
  const [cancelling, setCancelling] = useState(false);
  const logBox = useRef<HTMLOListElement>(null);
  useEffect(() => {
    if (logBox.current) logBox.current.scrollTop = logBox.current.scrollHeight;
  }, [events.length]);
  if (job.isPending) return <Loading what="the job" />;
  if (job.error) return <ErrorBox error={job.error} title="Cannot load the job" />;
  const j = job.data;
  const role = ws.data?.items.find((w) => w.slug === project.data?.workspace.slug)?.role;
  const writable = !!project.data && canWrite(me, role);
  const cancel = async () => {
    setCancelling(true);
    setCancelError(null);
    try {
      await unwrap(api.POST("/api/agents/jobs/{jobId}/cancel", { params: { path: { jobId } } }));
      await qc.invalidateQueries({ queryKey: ["agent-job", jobId] });
    } catch (e) {
      setCancelError(e);
    } finally {
      setCancelling(false);
    }
  };
  const byId = new Map((proposals.data?.items ?? []).map((p) => [p.id, p]));
  return (
    <div>
      <p className="crumbs">
        <Link to="/agents">Agent jobs</Link> / <Link to={"/projects/" + j.project}>{j.project}</Link>
      </p>
      <PageTitle>{`Agent job ${j.kind} ${j.id.slice(0, 8)}`}</PageTitle>
      <div className="run-head">
        <span aria-live="polite" data-testid="job-status">
          <StatusBadge status={j.status} />
        </span>
        <span>
          <label htmlFor="job-progress">Progress</label>{" "}
          <progress id="job-progress" max={100} value={j.progress}>
            {j.progress}%
          </progress>{" "}
          {j.progress}%
        </span>
        <span>
          {j.createdBy ? "started by " + j.createdBy.displayName : "started by the system"} · {formatTime(j.createdAt)}
        </span>
        <span role="status" className="live">
          {live === "live" ? "● Live" : live === "ended" ? "Finished" : ""}
        </span>
      </div>
      {j.summary ? <p data-testid="job-summary">{j.summary}</p> : null}
      {j.error ? (
        <p className="error" data-testid="job-error">
          {j.error}
        </p>
      ) : null}
      {!finished.has(j.status) && writable ? (
        <p>
          <button type="button" onClick={cancel} disabled={cancelling}>
            {cancelling ? "Cancelling…" : "Cancel job"}
          </button>
        </p>
      ) : null}
      <ErrorBox error={cancelError} title="Cannot cancel" />
      <ErrorBox error={streamError} title="The live stream was interrupted" />
      <details>
        <summary>Input</summary>
        <pre>{JSON.stringify(j.input, null, 2)}</pre>
      </details>
      <section aria-labelledby="props-h">
        <h2 id="props-h">Proposals</h2>
        {j.proposalIds.length === 0 ? <p className="muted">{finished.has(j.status) ? "The job proposed nothing." : "None yet."}</p> : null}
        <ul>
          {j.proposalIds.map((id) => {
            const p = byId.get(id);
            return (
              <li key={id}>
                <Link to={"/inbox/" + id}>{p ? p.title : "Proposal " + id.slice(0, 8)}</Link> {p ? <StatusBadge status={p.status} /> : null}
              </li>
            );
          })}
        </ul>
      </section>
      <section aria-labelledby="events-h">
        <h2 id="events-h">Events</h2>
        <ol className="log" ref={logBox} aria-label="Job events" tabIndex={0}>
          {events.map((e) => (
            <li key={e.sequence} className={"ev-" + e.type.replace(".", "-")}>
              <span className="muted">{new Date(e.at).toLocaleTimeString()}</span> <strong>{e.type}</strong>{" "}
              {e.type === "job.status" || e.type === "end" ? e.status + (e.message ? ": " + e.message : "") : null}
              {e.type === "progress" ? `${e.progress}% ${e.message ?? ""}` : null}
              {e.type === "log" ? e.message : null}
              {e.type === "proposal" && e.proposalId ? (
                <>
                  {e.message ?? ""} <Link to={"/inbox/" + e.proposalId}>open proposal</Link>
                </>
              ) : null}
            </li>
          ))}
        </ol>
      </section>
    </div>
  );
}
