import { useState, type FormEvent } from "react";
import { Link, useNavigate, useSearchParams } from "react-router-dom";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api";
import { ErrorBox, Field, Loading, PageTitle, StatusBadge, formatDuration, formatTime } from "../components/ui";

const statuses = ["queued", "running", "passed", "failed", "errored", "cancelled", "timed_out"] as const;
const triggers = ["api", "ui", "schedule", "process", "integration", "mcp", "agent"] as const;
const filterNames = ["project", "branch", "tag", "trigger", "since", "until"] as const;
type Status = (typeof statuses)[number];

/**
 * The statuses a view asks for: any of those chosen (status=a&status=b), or with statusNot=1 any
 * but those (the complement, which the API's "any of" filter then answers).
 */
export function statusFilter(params: URLSearchParams): Status[] | undefined {
  const chosen = params.getAll("status").filter((s): s is Status => (statuses as readonly string[]).includes(s));
  if (chosen.length === 0) return undefined;
  return params.get("statusNot") === "1" ? statuses.filter((s) => !chosen.includes(s)) : chosen;
}

/** Runs, newest first, with filters kept in the URL so that a view can be shared. */
export function RunsPage() {
  const [params, setParams] = useSearchParams();
  const f = Object.fromEntries(filterNames.map((n) => [n, params.get(n) ?? ""])) as Record<(typeof filterNames)[number], string>;
  const cursor = params.get("cursor") ?? undefined;
  const status = statusFilter(params);
  const runs = useQuery({
    queryKey: ["runs", f, status, cursor],
    queryFn: () =>
      unwrap(
        api.GET("/api/runs", {
          params: {
            query: {
              limit: 50,
              cursor,
              project: f.project || undefined,
              status,
              branch: f.branch || undefined,
              tag: f.tag || undefined,
              trigger: (f.trigger || undefined) as never,
              since: f.since ? new Date(f.since).toISOString() : undefined,
              until: f.until ? new Date(f.until).toISOString() : undefined,
            },
          },
        }),
      ),
    refetchInterval: (q) => (q.state.data?.items.some((r) => r.status === "queued" || r.status === "running") ? 3000 : false),
  });
  const [draft, setDraft] = useState(f);
  const [chosen, setChosen] = useState<string[]>(params.getAll("status"));
  const [not, setNot] = useState(params.get("statusNot") === "1");
  const apply = (e: FormEvent) => {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const n of filterNames) if (draft[n]) next.set(n, draft[n]);
    for (const s of chosen) next.append("status", s);
    if (not && chosen.length) next.set("statusNot", "1");
    setParams(next);
  };
  return (
    <div>
      <PageTitle>Runs</PageTitle>
      <form onSubmit={apply} aria-label="Filter runs" className="filters">
        <Field label="Project">
          <input value={draft.project} onChange={(e) => setDraft({ ...draft, project: e.target.value })} />
        </Field>
        <fieldset className="statuses">
          <legend>Status</legend>
          <select aria-label="Status is" value={not ? "not" : "any"} onChange={(e) => setNot(e.target.value === "not")}>
            <option value="any">is any of</option>
            <option value="not">is none of</option>
          </select>
          {statuses.map((s) => (
            <label key={s}>
              <input type="checkbox" checked={chosen.includes(s)} onChange={(e) => setChosen(e.target.checked ? [...chosen, s] : chosen.filter((x) => x !== s))} /> {s.replace("_", " ")}
            </label>
          ))}
        </fieldset>
        <Field label="Branch">
          <input value={draft.branch} onChange={(e) => setDraft({ ...draft, branch: e.target.value })} />
        </Field>
        <Field label="Tag">
          <input value={draft.tag} onChange={(e) => setDraft({ ...draft, tag: e.target.value })} />
        </Field>
        <Field label="Trigger">
          <select value={draft.trigger} onChange={(e) => setDraft({ ...draft, trigger: e.target.value })}>
            <option value="">any</option>
            {triggers.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </Field>
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
