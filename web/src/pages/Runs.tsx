import { useState, type FormEvent } from "react";
import { Link, useNavigate, useSearchParams } from "react-router-dom";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api";
import { ErrorBox, Field, Loading, PageTitle, StatusBadge, formatDuration, formatTime } from "../components/ui";

const statuses = ["queued", "running", "passed", "failed", "errored", "cancelled", "timed_out"] as const;
const triggers = ["api", "ui", "schedule", "process", "integration", "mcp", "agent"] as const;
const filterNames = ["project", "since", "until"] as const;
/** Filters that take several values: name=a&name=b is any of them, notName=a&notName=b none of them. */
const listNames = ["branch", "tag", "trigger"] as const;
type ListName = (typeof listNames)[number];
type Status = (typeof statuses)[number];
const notName = (n: ListName) => ("not" + n[0].toUpperCase() + n.slice(1)) as "notBranch" | "notTag" | "notTrigger";

/** One multi-value filter as the form edits it: the values, and whether they are excluded. */
export type ListFilter = { values: string[]; not: boolean };

/** What the filter bar shows: the single-value fields, the statuses, and each multi-value filter. */
export type RunFilters = Record<(typeof filterNames)[number], string> & {
  status: string[];
  statusNot: boolean;
} & Record<ListName, ListFilter>;

/** The filters named by a URL's query (the view is shareable: the URL is its whole state). */
export function readFilters(params: URLSearchParams): RunFilters {
  const f = Object.fromEntries(filterNames.map((n) => [n, params.get(n) ?? ""])) as unknown as RunFilters;
  f.status = params.getAll("status");
  f.statusNot = params.get("statusNot") === "1";
  for (const n of listNames) {
    const any = params.getAll(n).filter(Boolean);
    const none = params.getAll(notName(n)).filter(Boolean);
    f[n] = any.length === 0 && none.length > 0 ? { values: none, not: true } : { values: any, not: false };
  }
  return f;
}

/** The URL query of filters, the inverse of readFilters. */
export function writeFilters(f: RunFilters): URLSearchParams {
  const next = new URLSearchParams();
  for (const n of filterNames) if (f[n]) next.set(n, f[n]);
  for (const s of f.status) next.append("status", s);
  if (f.statusNot && f.status.length) next.set("statusNot", "1");
  for (const n of listNames) for (const v of f[n].values) if (v) next.append(f[n].not ? notName(n) : n, v);
  return next;
}

/** Splits what was typed in a multi-value field (commas separate values). */
export function splitValues(s: string): string[] {
  return s
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean);
}

/**
 * The statuses a view asks for: any of those chosen (status=a&status=b), or with statusNot=1 any
 * but those (the complement, which the API's "any of" filter then answers).
 */
export function statusFilter(params: URLSearchParams): Status[] | undefined {
  const chosen = params.getAll("status").filter((s): s is Status => (statuses as readonly string[]).includes(s));
  if (chosen.length === 0) return undefined;
  return params.get("statusNot") === "1" ? statuses.filter((s) => !chosen.includes(s)) : chosen;
}

/** The query of GET /api/runs for a URL: the multi-value filters pass through as the API's own. */
export function runsQuery(params: URLSearchParams) {
  const list = (n: string) => {
    const v = params.getAll(n).filter(Boolean);
    return v.length ? v : undefined;
  };
  const since = params.get("since");
  const until = params.get("until");
  return {
    project: params.get("project") || undefined,
    status: statusFilter(params),
    branch: list("branch"),
    notBranch: list("notBranch"),
    tag: list("tag"),
    notTag: list("notTag"),
    trigger: list("trigger") as never,
    notTrigger: list("notTrigger") as never,
    since: since ? new Date(since).toISOString() : undefined,
    until: until ? new Date(until).toISOString() : undefined,
  };
}

/** Runs, newest first, with filters kept in the URL so that a view can be shared. */
export function RunsPage() {
  const [params, setParams] = useSearchParams();
  const cursor = params.get("cursor") ?? undefined;
  const query = runsQuery(params);
  const runs = useQuery({
    queryKey: ["runs", query, cursor],
    queryFn: () => unwrap(api.GET("/api/runs", { params: { query: { limit: 50, cursor, ...query } } })),
    refetchInterval: (q) => (q.state.data?.items.some((r) => r.status === "queued" || r.status === "running") ? 3000 : false),
  });
  const [draft, setDraft] = useState(() => readFilters(params));
  // The text typed in the branch and tag fields, split into values when the filters are applied.
  const [typed, setTyped] = useState({ branch: draft.branch.values.join(", "), tag: draft.tag.values.join(", ") });
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setParams(
      writeFilters({
        ...draft,
        branch: { ...draft.branch, values: splitValues(typed.branch) },
        tag: { ...draft.tag, values: splitValues(typed.tag) },
      }),
    );
  };
  const isSelect = (n: ListName) => (
    <select aria-label={n[0].toUpperCase() + n.slice(1) + " is"} value={draft[n].not ? "not" : "any"} onChange={(e) => setDraft({ ...draft, [n]: { ...draft[n], not: e.target.value === "not" } })}>
      <option value="any">is any of</option>
      <option value="not">is none of</option>
    </select>
  );
  return (
    <div>
      <PageTitle>Runs</PageTitle>
      <form onSubmit={apply} aria-label="Filter runs" className="filters">
        <Field label="Project">
          <input value={draft.project} onChange={(e) => setDraft({ ...draft, project: e.target.value })} />
        </Field>
        <fieldset className="statuses">
          <legend>Status</legend>
          <select aria-label="Status is" value={draft.statusNot ? "not" : "any"} onChange={(e) => setDraft({ ...draft, statusNot: e.target.value === "not" })}>
            <option value="any">is any of</option>
            <option value="not">is none of</option>
          </select>
          {statuses.map((s) => (
            <label key={s}>
              <input
                type="checkbox"
                checked={draft.status.includes(s)}
                onChange={(e) => setDraft({ ...draft, status: e.target.checked ? [...draft.status, s] : draft.status.filter((x) => x !== s) })}
              />{" "}
              {s.replace("_", " ")}
            </label>
          ))}
        </fieldset>
        <fieldset className="statuses">
          <legend>Branch</legend>
          {isSelect("branch")}
          <input aria-label="Branches" placeholder="main, release" value={typed.branch} onChange={(e) => setTyped({ ...typed, branch: e.target.value })} />
        </fieldset>
        <fieldset className="statuses">
          <legend>Tag</legend>
          {isSelect("tag")}
          <input aria-label="Tags" placeholder="@smoke, @slow" value={typed.tag} onChange={(e) => setTyped({ ...typed, tag: e.target.value })} />
        </fieldset>
        <fieldset className="statuses">
          <legend>Trigger</legend>
          {isSelect("trigger")}
          {triggers.map((s) => (
            <label key={s}>
              <input
                type="checkbox"
                checked={draft.trigger.values.includes(s)}
                onChange={(e) =>
                  setDraft({
                    ...draft,
                    trigger: { ...draft.trigger, values: e.target.checked ? [...draft.trigger.values, s] : draft.trigger.values.filter((x) => x !== s) },
                  })
                }
              />{" "}
              {s}
            </label>
          ))}
        </fieldset>
        <Field label="Since">
          <input type="datetime-local" value={draft.since} onChange={(e) => setDraft({ ...draft, since: e.target.value })} />
        </Field>
        <Field label="Until">
          <input type="datetime-local" value={draft.until} onChange={(e) => setDraft({ ...draft, until: e.target.value })} />
        </Field>
        <button type="submit">Apply filters</button>
      </form>
      {runs.isPending ? <Loading what="runs" /> : null}
      <ErrorBox error={runs.error} title="Cannot list runs" />
      {runs.data && runs.data.items.length === 0 ? <p>No run matches.</p> : null}
      {runs.data && runs.data.items.length > 0 ? (
        <table>
          <caption className="sr-only">Runs</caption>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Project</th>
              <th scope="col">Status</th>
              <th scope="col">Scenarios</th>
              <th scope="col">Trigger</th>
              <th scope="col">Branch</th>
              <th scope="col">Duration</th>
              <th scope="col">Started</th>
            </tr>
          </thead>
          <tbody>
            {runs.data.items.map((r) => (
              <tr key={r.id}>
                <td>
                  <Link to={"/runs/" + r.id}>{r.label || r.id.slice(0, 8)}</Link>
                </td>
                <td>{r.project}</td>
                <td>
                  <StatusBadge status={r.status} />
                </td>
                <td>
                  {r.counts.passed}/{r.counts.total} passed{r.counts.failed ? `, ${r.counts.failed} failed` : ""}
                </td>
                <td>{r.trigger}</td>
                <td>{r.branch}</td>
                <td>{formatDuration(r.durationMs)}</td>
                <td>{formatTime(r.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {runs.data?.nextCursor ? (
        <p>
          <Link
            to={"?" + new URLSearchParams([...params.entries()].filter(([k]) => k !== "cursor").concat([["cursor", runs.data.nextCursor]])).toString()}
          >
            Older runs
          </Link>
        </p>
      ) : null}
    </div>
  );
}

/** Starts a run of a project: all features, some paths, or a tag expression, in an environment. */
export function StartRun({ project }: { project: string }) {
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [paths, setPaths] = useState(params.get("path") ?? "");
  const [tags, setTags] = useState("");
  const [environment, setEnvironment] = useState("");
  const [variables, setVariables] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const envs = useQuery({ queryKey: ["envs", project], queryFn: () => unwrap(api.GET("/api/projects/{slug}/envs", { params: { path: { slug: project } } })) });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const vars: Record<string, string> = {};
      for (const line of variables.split("\n")) {
        const i = line.indexOf("=");
        if (i > 0) vars[line.slice(0, i).trim()] = line.slice(i + 1);
      }
      const list = paths
        .split(/[\n,]/)
        .map((s) => s.trim())
        .filter(Boolean);
      const r = await unwrap(
        api.POST("/api/runs", {
          body: {
            project,
            paths: list.length ? list : undefined,
            tags: tags || undefined,
            environment: environment || undefined,
            variables: Object.keys(vars).length ? vars : undefined,
          },
        }),
      );
      navigate("/runs/" + r.id);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} aria-label="Start a run" className="inline-form">
      <h2>Start a run</h2>
      <Field label="Features or folders" hint="One per line or comma-separated; all features when empty.">
        <textarea rows={2} value={paths} onChange={(e) => setPaths(e.target.value)} />
      </Field>
      <Field label="Tag expression" hint="e.g. @smoke and not @wip">
        <input value={tags} onChange={(e) => setTags(e.target.value)} />
      </Field>
      <Field label="Environment">
        <select value={environment} onChange={(e) => setEnvironment(e.target.value)}>
          <option value="">none</option>
          {(envs.data?.items ?? []).map((en) => (
            <option key={en.name}>{en.name}</option>
          ))}
        </select>
      </Field>
      <Field label="Variables" hint="NAME=value, one per line.">
        <textarea rows={2} value={variables} onChange={(e) => setVariables(e.target.value)} />
      </Field>
      <ErrorBox error={envs.error ?? error} title="Cannot start the run" />
      <button type="submit" className="primary" disabled={busy}>
        {busy ? "Starting…" : "Start run"}
      </button>
    </form>
  );
}
