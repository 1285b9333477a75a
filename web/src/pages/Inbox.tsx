import { useState, type FormEvent, type ReactNode } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";
import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schema } from "../api";
import { useAuth } from "../auth";
import { ErrorBox, Field, Loading, PageTitle, StatusBadge, formatTime } from "../components/ui";
import { DiffView } from "../components/Diff";
import { Compare } from "./Baselines";
import { useProjectAccess } from "./Project";

type Proposal = Schema<"Proposal">;
type ProposalStatus = Proposal["status"];
type ProposalKind = Proposal["kind"];
const kinds: { value: ProposalKind; label: string }[] = [
  { value: "feature_patch", label: "Feature patch (heals, stabilise)" },
  { value: "baseline_update", label: "Visual baseline" },
  { value: "quarantine", label: "Quarantine" },
  { value: "classification", label: "Classification (triage)" },
];
const statuses: ProposalStatus[] = ["pending", "verified", "accepted", "rejected", "stale"];
const open = new Set<string>(["pending", "verified"]);

/** The inbox's filters as the URL names them; state "open" (the default) is pending or verified, "all" any. */
export type InboxFilters = { project: string; kind: string; state: string; minConfidence: string; jobId: string };

/** Reads the filters of an inbox URL (the view is linkable: the URL is its whole state). */
export function readInboxFilters(p: URLSearchParams): InboxFilters {
  return {
    project: p.get("project") ?? "",
    kind: p.get("kind") ?? "",
    state: p.get("status") ?? "open",
    minConfidence: p.get("minConfidence") ?? "",
    jobId: p.get("jobId") ?? "",
  };
}

/** The URL query of inbox filters, the inverse of readInboxFilters (defaults left out). */
export function writeInboxFilters(f: InboxFilters): URLSearchParams {
  const n = new URLSearchParams();
  if (f.project) n.set("project", f.project);
  if (f.kind) n.set("kind", f.kind);
  if (f.state && f.state !== "open") n.set("status", f.state);
  if (f.minConfidence) n.set("minConfidence", f.minConfidence);
  if (f.jobId) n.set("jobId", f.jobId);
  return n;
}

/** The requests an inbox view needs: one per state asked for (the API filters one state at a time). */
export function inboxQueries(f: InboxFilters) {
  const states: (ProposalStatus | undefined)[] = f.state === "open" ? ["pending", "verified"] : f.state === "all" ? [undefined] : [f.state as ProposalStatus];
  const min = f.minConfidence === "" ? undefined : Number(f.minConfidence);
  return states.map((status) => ({
    project: f.project || undefined,
    kind: (f.kind || undefined) as ProposalKind | undefined,
    status,
    minConfidence: min !== undefined && Number.isFinite(min) ? Math.min(1, Math.max(0, min)) : undefined,
    jobId: f.jobId || undefined,
    limit: 100,
  }));
}

const kindLabel = (k: string) => kinds.find((x) => x.value === k)?.label ?? k;

/** The review inbox: agents' proposals and visual baselines awaiting review, filterable, newest first. */
export function InboxPage() {
  const [params, setParams] = useSearchParams();
  const f = readInboxFilters(params);
  const [draft, setDraft] = useState(f);
  const queries = inboxQueries(f);
  // One page per state asked for; "Show older" reads the next page of each state that has one.
  const list = useInfiniteQuery({
    queryKey: ["proposals", queries],
    initialPageParam: queries.map(() => undefined) as (string | null | undefined)[],
    queryFn: async ({ pageParam }) => {
      const pages = await Promise.all(
        queries.map((query, i) => (pageParam[i] === null ? null : unwrap(api.GET("/api/proposals", { params: { query: { ...query, cursor: pageParam[i] ?? undefined } } })))),
      );
      return { items: pages.flatMap((p) => p?.items ?? []), cursors: pages.map((p) => p?.nextCursor ?? null) };
    },
    getNextPageParam: (last) => (last.cursors.some((c) => c) ? last.cursors : undefined),
  });
  const items = (list.data?.pages ?? [])
    .flatMap((p) => p.items)
    .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1));
  const projects = useQuery({ queryKey: ["projects"], queryFn: () => unwrap(api.GET("/api/projects", { params: { query: { limit: 200 } } })) });
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setParams(writeInboxFilters(draft));
  };
  return (
    <div>
      <PageTitle>Review inbox</PageTitle>
      <p className="muted">
        What agents propose and visual captures that differ from their baselines, waiting for a person to accept or reject. Agents run from{" "}
        <Link to="/agents">Agent jobs</Link>.
      </p>
      <form onSubmit={apply} aria-label="Filter proposals" className="filters">
        <Field label="Project">
          <select value={draft.project} onChange={(e) => setDraft({ ...draft, project: e.target.value })}>
            <option value="">All projects</option>
            {projects.data?.items.map((p) => (
              <option key={p.slug} value={p.slug}>
                {p.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Kind">
          <select value={draft.kind} onChange={(e) => setDraft({ ...draft, kind: e.target.value })}>
            <option value="">All kinds</option>
            {kinds.map((k) => (
              <option key={k.value} value={k.value}>
                {k.label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="State">
          <select value={draft.state} onChange={(e) => setDraft({ ...draft, state: e.target.value })}>
            <option value="open">Open (pending or verified)</option>
            {statuses.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
            <option value="all">Any state</option>
          </select>
        </Field>
        <Field label="Confidence at least">
          <input type="number" min={0} max={1} step={0.05} value={draft.minConfidence} onChange={(e) => setDraft({ ...draft, minConfidence: e.target.value })} />
        </Field>
        {f.jobId ? (
          <p>
            Proposals of job <Link to={"/agents/jobs/" + f.jobId}>{f.jobId.slice(0, 8)}</Link>{" "}
            <button type="button" className="link" onClick={() => setDraft({ ...draft, jobId: "" })}>
              (any job)
            </button>
          </p>
        ) : null}
        <button type="submit">Apply filters</button>
      </form>
      {list.isPending ? <Loading what="the inbox" /> : null}
      <ErrorBox error={list.error} title="Cannot list proposals" />
      {list.data && items.length === 0 ? <p>Nothing to review here.</p> : null}
      {items.length > 0 ? (
        <table aria-label="Proposals">
          <thead>
            <tr>
              <th scope="col">Proposal</th>
              <th scope="col">Kind</th>
              <th scope="col">State</th>
              <th scope="col">Confidence</th>
              <th scope="col">Project</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {items.map((p) => (
              <tr key={p.id}>
                <td>
                  <Link to={"/inbox/" + p.id}>{p.title}</Link>
                </td>
                <td>{kindLabel(p.kind)}</td>
                <td>
                  <StatusBadge status={p.status} />
                </td>
                <td>
                  <Confidence value={p.confidence} />
                </td>
                <td>{p.project}</td>
                <td>{formatTime(p.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {list.hasNextPage ? (
        <p>
          <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
            {list.isFetchingNextPage ? "Loading older proposals…" : "Show older proposals"}
          </button>
        </p>
      ) : null}
    </div>
  );
}

function Confidence({ value }: { value: number }) {
  return <span title="confidence (0 to 1)">{Math.round(value * 100)}%</span>;
}

/** Why a proposal is stale and what to do, by kind. */
export function staleExplanation(p: Pick<Proposal, "kind" | "target" | "jobId">): string {
  if (p.kind === "feature_patch") {
    return `${p.target.featurePath ?? "The feature"} changed after this patch was made (its ETag is no longer ${p.target.etag ?? "the one the patch was made from"}), so the patch cannot be applied safely: it would overwrite the newer content. Re-run the job that made it (for a heal, start a heal job) to propose a patch of the current feature.`;
  }
  return "What this proposal was made from has changed since, so it cannot be applied. Re-run the job that made it to get a current proposal.";
}

/** One proposal: the diff, the evidence, and accept or reject (with a reason). */
export function ProposalPage() {
  const { proposalId = "" } = useParams();
  const prop = useQuery({
    queryKey: ["proposal", proposalId],
    queryFn: () => unwrap(api.GET("/api/proposals/{proposalId}", { params: { path: { proposalId } } })),
    // A pending feature patch is being verified: look again until it is decided one way or the other.
    refetchInterval: (q) => (q.state.data?.kind === "feature_patch" && q.state.data.status === "pending" && !q.state.data.evidence?.verification ? 2000 : false),
  });
  const access = useProjectAccess(prop.data?.project ?? "");
  if (prop.isPending) return <Loading what="the proposal" />;
  if (prop.error) return <ErrorBox error={prop.error} title="Cannot load the proposal" />;
  const p = prop.data;
  return (
    <div>
      <p className="crumbs">
        <Link to="/inbox">Review inbox</Link> / <Link to={"/projects/" + p.project}>{p.project}</Link>
      </p>
      <PageTitle>{p.title}</PageTitle>
      <p className="run-head">
        <span data-testid="proposal-status" aria-live="polite">
          <StatusBadge status={p.status} />
        </span>
        <span>{kindLabel(p.kind)}</span>
        <span>
          confidence <Confidence value={p.confidence} />
        </span>
        <span>{formatTime(p.createdAt)}</span>
        {p.jobId ? (
          <span>
            made by <Link to={"/agents/jobs/" + p.jobId}>agent job {p.jobId.slice(0, 8)}</Link>
          </span>
        ) : p.target.runId ? (
          <span>
            from <Link to={"/runs/" + p.target.runId}>run {p.target.runId.slice(0, 8)}</Link>
          </span>
        ) : null}
      </p>
      {p.status === "stale" ? (
        <div className="notice stale" role="note" aria-label="Why this proposal is stale">
          <strong>Stale.</strong> {staleExplanation(p)}
          {p.jobId ? (
            <>
              {" "}
              <Link to={"/agents?project=" + p.project}>Start a new job</Link>.
            </>
          ) : null}
        </div>
      ) : null}
      {p.status === "accepted" || p.status === "rejected" ? (
        <p data-testid="decision">
          {p.status === "accepted" ? "Accepted" : "Rejected"}
          {p.decidedBy ? " by " + p.decidedBy.displayName : ""}
          {p.decidedAt ? " on " + formatTime(p.decidedAt) : ""}
          {p.reason ? ": " + p.reason : "."}
        </p>
      ) : null}
      <Target p={p} />
      {p.diff ? <DiffSection diff={p.diff} kind={p.kind} /> : null}
      <Evidence p={p} />
      {open.has(p.status) && access.writable ? <Decide p={p} /> : null}
    </div>
  );
}

function Target({ p }: { p: Proposal }) {
  const t = p.target;
  const rows: [string, ReactNode][] = [];
  if (t.featurePath) rows.push(["Feature", <Link to={`/projects/${p.project}/features/${t.featurePath}`}>{t.featurePath}</Link>]);
  if (t.scenarioName) rows.push(["Scenario", t.scenarioName]);
  if (t.baseline) rows.push(["Baseline", t.baseline]);
  if (t.runId) rows.push(["Run", <Link to={"/runs/" + t.runId}>{t.runId.slice(0, 8)}</Link>]);
  if (rows.length === 0) return null;
  return (
    <dl className="facts">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

function DiffSection({ diff, kind }: { diff: string; kind: string }) {
  const [mode, setMode] = useState<"unified" | "split">(kind === "feature_patch" ? "split" : "unified");
  return (
    <section aria-labelledby="diff-h">
      <h2 id="diff-h">Change</h2>
      <fieldset className="segmented">
        <legend className="sr-only">Diff view</legend>
        <label>
          <input type="radio" name="diff-mode" checked={mode === "split"} onChange={() => setMode("split")} /> Side by side
        </label>
        <label>
          <input type="radio" name="diff-mode" checked={mode === "unified"} onChange={() => setMode("unified")} /> Unified
        </label>
      </fieldset>
      <DiffView diff={diff} mode={mode} label="Change of the feature" />
    </section>
  );
}

type Ev = Record<string, unknown>;
const str = (v: unknown) => (typeof v === "string" ? v : undefined);
const num = (v: unknown) => (typeof v === "number" ? v : undefined);
const pct = (v: unknown) => (typeof v === "number" ? (v * 100).toFixed(v < 0.01 && v > 0 ? 2 : 0) + "%" : "");

/** Keys an evidence section below shows by name; anything else is listed as it is. */
const shown = new Set([
  "oldSelector",
  "newSelector",
  "strategy",
  "score",
  "minScore",
  "runs",
  "replacements",
  "ambiguous",
  "verification",
  "runnerUp",
  "runnerUps",
  "runnersUp",
  "candidates",
  "similar",
  "reasons",
  "failingStep",
  "message",
  "class",
  "signature",
  "visualCheckId",
  "check",
  "browser",
  "viewport",
  "selector",
  "mismatchPixels",
  "mismatchRatio",
  "threshold",
  "sizeMismatch",
  "actualArtifactId",
  "expectedArtifactId",
  "diffArtifactId",
]);

function Evidence({ p }: { p: Proposal }) {
  const ev = (p.evidence ?? {}) as Ev;
  const rest = Object.entries(ev).filter(([k]) => !shown.has(k));
  return (
    <section aria-labelledby="ev-h">
      <h2 id="ev-h">Evidence</h2>
      {p.kind === "baseline_update" ? <BaselineEvidence p={p} ev={ev} /> : null}
      {str(ev.oldSelector) ? <HealEvidence ev={ev} /> : null}
      {ev.verification ? <Verification v={ev.verification as Ev} p={p} /> : p.kind === "feature_patch" ? <p className="muted">Not verified yet{ev.ambiguous ? " (an ambiguous heal is never verified automatically)" : ": a verification run of the patched scenario is on its way"}.</p> : null}
      {str(ev.failingStep) || str(ev.message) ? (
        <p>
          {str(ev.failingStep) ? (
            <>
              Failing step <code>{str(ev.failingStep)}</code>.{" "}
            </>
          ) : null}
          {str(ev.message)}
        </p>
      ) : null}
      {Array.isArray(ev.reasons) && ev.reasons.length ? (
        <>
          <h3>Reasons</h3>
          <ul>
            {ev.reasons.map((r, i) => (
              <li key={i}>{typeof r === "string" ? r : JSON.stringify(r)}</li>
            ))}
          </ul>
        </>
      ) : null}
      {Array.isArray(ev.similar) && ev.similar.length ? <Similar items={ev.similar as Ev[]} /> : null}
      {rest.length ? (
        <>
          <h3>Other evidence</h3>
          <dl className="facts">
            {rest.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{typeof v === "object" && v !== null ? <pre>{JSON.stringify(v, null, 2)}</pre> : String(v)}</dd>
              </div>
            ))}
          </dl>
        </>
      ) : null}
    </section>
  );
}

/** The runner-up of a heal (or several), whatever shape the evidence gives it. */
function runnersUp(ev: Ev): Ev[] {
  const v = ev.runnerUp ?? ev.runnerUps ?? ev.runnersUp ?? ev.candidates;
  if (Array.isArray(v)) return v.filter((x): x is Ev => typeof x === "object" && x !== null);
  if (typeof v === "object" && v !== null) return [v as Ev];
  return [];
}

function HealEvidence({ ev }: { ev: Ev }) {
  const ups = runnersUp(ev);
  return (
    <>
      <h3>Heal</h3>
      <dl className="facts heal-scores">
        <div>
          <dt>Selector in the feature</dt>
          <dd>
            <code>{str(ev.oldSelector)}</code>
          </dd>
        </div>
        <div>
          <dt>Healed to</dt>
          <dd>
            <code>{str(ev.newSelector)}</code>
            {str(ev.strategy) ? ` (by ${str(ev.strategy)})` : ""}
          </dd>
        </div>
        {num(ev.score) !== undefined ? (
          <div>
            <dt>Best score</dt>
            <dd>{pct(ev.score)}</dd>
          </div>
        ) : null}
        {num(ev.minScore) !== undefined ? (
          <div>
            <dt>Lowest score seen</dt>
            <dd>{pct(ev.minScore)}</dd>
          </div>
        ) : null}
        {num(ev.runs) !== undefined ? (
          <div>
            <dt>Runs it recurred in</dt>
            <dd>{num(ev.runs)}</dd>
          </div>
        ) : null}
        {num(ev.replacements) !== undefined ? (
          <div>
            <dt>Replacements in the feature</dt>
            <dd>{num(ev.replacements)}</dd>
          </div>
        ) : null}
      </dl>
      {ev.ambiguous === true ? (
        <p className="notice" role="note">
          Ambiguous: the same selector was healed to more than one element in this feature, so the patch is not verified automatically; only an instance
          administrator can accept it, by forcing.
        </p>
      ) : null}
      {ups.length ? (
        <table aria-label="Runner-up candidates">
          <thead>
            <tr>
              <th scope="col">Runner-up</th>
              <th scope="col">Score</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {ups.map((u, i) => {
              const sel = str(u.selector) ?? str(u.newSelector) ?? str(u.healed) ?? "";
              const other = Object.entries(u).filter(([k]) => !["selector", "newSelector", "healed", "score"].includes(k));
              return (
                <tr key={i}>
                  <td>
                    <code>{sel || "(unnamed)"}</code>
                  </td>
                  <td>{pct(u.score)}</td>
                  <td>{other.map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : String(v)}`).join("; ")}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : (
        <p className="muted">No runner-up was recorded for this heal.</p>
      )}
    </>
  );
}

function Similar({ items }: { items: Ev[] }) {
  return (
    <>
      <h3>Similar failures</h3>
      <table aria-label="Similar failures">
        <thead>
          <tr>
            <th scope="col">Scenario</th>
            <th scope="col">Similarity</th>
            <th scope="col">When</th>
          </tr>
        </thead>
        <tbody>
          {items.map((s, i) => (
            <tr key={i}>
              <td>
                {str(s.runId) && str(s.scenarioId) ? (
                  <Link to={`/runs/${s.runId}/scenarios/${s.scenarioId}`}>{str(s.name) ?? str(s.scenarioId)}</Link>
                ) : (
                  (str(s.name) ?? "")
                )}{" "}
                <span className="muted">{str(s.featurePath)}</span>
              </td>
              <td>{pct(s.score)}</td>
              <td>{formatTime(str(s.at))}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The verification run: its status and link, and the screenshots before (the last run of the scenario not made by an agent) and after (the verification run). */
function Verification({ v, p }: { v: Ev; p: Proposal }) {
  const runId = str(v.runId);
  const status = str(v.status) ?? "";
  return (
    <>
      <h3>Verification</h3>
      <p data-testid="verification">
        {runId ? <Link to={"/runs/" + runId}>Verification run {runId.slice(0, 8)}</Link> : "Verification run"} <StatusBadge status={status} />{" "}
        {status === "passed" ? "The patched scenario passed." : "The patched scenario did not pass, so the patch is not verified."}
      </p>
      {runId && p.target.featurePath && p.target.scenarioName ? <Screenshots project={p.project} verificationRun={runId} featurePath={p.target.featurePath} name={p.target.scenarioName} /> : null}
    </>
  );
}

type Shot = { artifactId: string; name: string; step: string };

async function scenarioShots(runId: string, featurePath: string, name: string): Promise<{ scenarioId: string; shots: Shot[] } | null> {
  const run = await unwrap(api.GET("/api/runs/{runId}", { params: { path: { runId } } }));
  const sc = run.modules.flatMap((m) => m.features).find((f) => f.path === featurePath)?.scenarios.find((s) => s.name === name);
  if (!sc) return null;
  const full = await unwrap(api.GET("/api/runs/{runId}/scenarios/{scenarioId}", { params: { path: { runId, scenarioId: sc.id } } }));
  const shots: Shot[] = [];
  for (const st of full.steps) for (const a of st.attachments) if (a.mediaType.startsWith("image/")) shots.push({ artifactId: a.artifactId, name: a.name, step: `${st.keyword.trim()} ${st.text}` });
  for (const a of full.attachments) if (a.mediaType.startsWith("image/")) shots.push({ artifactId: a.artifactId, name: a.name, step: "scenario" });
  return { scenarioId: sc.id, shots };
}

function Screenshots({ project, verificationRun, featurePath, name }: { project: string; verificationRun: string; featurePath: string; name: string }) {
  const q = useQuery({
    queryKey: ["proposal-shots", verificationRun, featurePath, name],
    queryFn: async () => {
      const after = await scenarioShots(verificationRun, featurePath, name);
      // Before: the newest run of the project not started by an agent that ran this scenario.
      const runs = await unwrap(api.GET("/api/runs", { params: { query: { project, notTrigger: ["agent"] as never, limit: 20 } } }));
      let before: { runId: string; scenarioId: string; shots: Shot[] } | null = null;
      for (const r of runs.items) {
        if (r.paths.length && !r.paths.some((x) => featurePath === x || featurePath.startsWith(x.replace(/\/?$/, "/")))) continue;
        const s = await scenarioShots(r.id, featurePath, name);
        if (s) {
          before = { runId: r.id, ...s };
          break;
        }
      }
      return { after, before };
    },
  });
  if (q.isPending) return <Loading what="the screenshots" />;
  if (q.error) return <ErrorBox error={q.error} title="Cannot load the screenshots" />;
  const { before, after } = q.data;
  const fig = (runId: string, s: Shot, when: string) => (
    <figure key={s.artifactId}>
      <img src={`/api/runs/${runId}/files/artifacts/${s.artifactId}`} alt={`${when}: ${s.name} at ${s.step}`} loading="lazy" />
      <figcaption>
        {when}: {s.name} <span className="muted">({s.step})</span>
      </figcaption>
    </figure>
  );
  return (
    <div className="shots">
      <h4>Screenshots</h4>
      {!before?.shots.length && !after?.shots.length ? <p className="muted">Neither run recorded a screenshot of this scenario.</p> : null}
      <div className="side-by-side">
        <div>
          <p>
            Before:{" "}
            {before ? <Link to={`/runs/${before.runId}/scenarios/${before.scenarioId}`}>the last run with the old selector</Link> : "no earlier run of this scenario"}
          </p>
          {before?.shots.map((s) => fig(before.runId, s, "Before"))}
        </div>
        <div>
          <p>After: {after ? <Link to={`/runs/${verificationRun}/scenarios/${after.scenarioId}`}>the verification run</Link> : "the verification run has not run the scenario"}</p>
          {after?.shots.map((s) => fig(verificationRun, s, "After"))}
        </div>
      </div>
    </div>
  );
}

function BaselineEvidence({ p, ev }: { p: Proposal; ev: Ev }) {
  const actual = str(ev.actualArtifactId);
  const ratio = num(ev.mismatchRatio);
  return (
    <>
      <p>
        {num(ev.mismatchPixels) === undefined || ev.mismatchPixels === null ? (
          "A new capture: there is no baseline to compare it with yet."
        ) : (
          <>
            {String(ev.mismatchPixels)} pixel(s) differ ({pct(ratio)}, the threshold is {pct(ev.threshold)})
            {ev.sizeMismatch ? "; the sizes differ" : ""}.
          </>
        )}{" "}
        <span className="muted">
          {str(ev.browser)} {str(ev.viewport)} {str(ev.selector) ? "· element " + str(ev.selector) : ""}
        </span>
      </p>
      {actual ? <Compare expected={str(ev.expectedArtifactId)} actual={actual} diff={str(ev.diffArtifactId)} name={p.target.baseline ?? "the capture"} runId={p.target.runId} /> : null}
    </>
  );
}

/** Accept (forcing offered to instance admins for an unverified patch) and reject with a required reason. */
function Decide({ p }: { p: Proposal }) {
  const { me } = useAuth();
  const qc = useQueryClient();
  const admin = me.user.instanceRole === "admin";
  const needsVerification = p.kind !== "classification" && p.kind !== "baseline_update" && p.status !== "verified";
  const [force, setForce] = useState(false);
  const [reason, setReason] = useState("");
  const [reasonError, setReasonError] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const done = async () => {
    await qc.invalidateQueries({ queryKey: ["proposal", p.id] });
    await qc.invalidateQueries({ queryKey: ["proposals"] });
  };
  const accept = async () => {
    setError(null);
    setBusy(true);
    try {
      await unwrap(api.POST("/api/proposals/{proposalId}/accept", { params: { path: { proposalId: p.id } }, body: force ? { force: true } : {} }));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
      await done();
    }
  };
  const reject = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    if (reason.trim() === "") {
      setReasonError("Say why you reject it: the reason is required (agents do not propose a rejected change again).");
      return;
    }
    setReasonError("");
    setBusy(true);
    try {
      await unwrap(api.POST("/api/proposals/{proposalId}/reject", { params: { path: { proposalId: p.id } }, body: { reason: reason.trim() } }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
      await done();
    }
  };
  return (
    <section aria-labelledby="decide-h" className="inline-form">
      <h2 id="decide-h">Decide</h2>
      <ErrorBox error={error} title="Not done" />
      <div className="toolbar">
        {needsVerification && !admin ? (
          <p className="muted">It can be accepted once its verification run has passed.</p>
        ) : (
          <>
            {needsVerification ? (
              <label>
                <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} /> Force: accept although it is not verified (instance
                administrators only)
              </label>
            ) : null}
            <button type="button" className="primary" onClick={accept} disabled={busy || (needsVerification && !force)}>
              Accept
            </button>
          </>
        )}
      </div>
      <form onSubmit={reject} noValidate aria-label="Reject the proposal">
        <div className="field">
          <label className="field-label" htmlFor="reject-reason">
            Reason to reject <span aria-hidden="true">*</span>
            <span className="sr-only">(required)</span>
          </label>
          <textarea
            id="reject-reason"
            rows={2}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            maxLength={2000}
            aria-invalid={reasonError ? true : undefined}
            aria-describedby={reasonError ? "reject-reason-err" : undefined}
          />
          {reasonError ? (
            <span className="field-error" id="reject-reason-err" role="alert">
              {reasonError}
            </span>
          ) : null}
        </div>
        <button type="submit" disabled={busy}>
          Reject
        </button>
      </form>
    </section>
  );
}
