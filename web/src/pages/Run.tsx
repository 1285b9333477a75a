import { useEffect, useRef, useState } from "react";
import { Link, useParams } from "react-router-dom";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, readEvents, unwrap, type Schema } from "../api";
import { ErrorBox, Loading, PageTitle, StatusBadge, formatDuration, formatTime } from "../components/ui";
import { useProjectAccess } from "./Project";
import { Baselines } from "./Baselines";

type RunEvent = Schema<"RunEvent">;
const terminal = new Set(["passed", "failed", "errored", "cancelled", "timed_out"]);

export function useRun(runId: string) {
  return useQuery({ queryKey: ["run", runId], queryFn: () => unwrap(api.GET("/api/runs/{runId}", { params: { path: { runId } } })) });
}

/**
 * Follows a run's event stream until its end: log lines and live statuses, and the run reloaded
 * (at most twice a second) as scenarios finish. Reconnects with Last-Event-ID when cut off.
 */
function useLiveRun(runId: string, active: boolean) {
  const qc = useQueryClient();
  const [log, setLog] = useState<RunEvent[]>([]);
  const [live, setLive] = useState<"idle" | "live" | "ended">("idle");
  const [streamError, setStreamError] = useState<unknown>(null);
  useEffect(() => {
    if (!active) return;
    const ctrl = new AbortController();
    let lastId: string | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const refresh = () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        void qc.invalidateQueries({ queryKey: ["run", runId] });
      }, 500);
    };
    (async () => {
      for (let attempt = 0; !ctrl.signal.aborted && attempt < 20; attempt++) {
        try {
          const r = await api.GET("/api/runs/{runId}/events", {
            params: { path: { runId }, header: lastId ? ({ "Last-Event-ID": lastId } as never) : undefined },
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
              let data: RunEvent;
              try {
                data = JSON.parse(ev.data);
              } catch {
                return;
              }
              if (data.type === "log" || data.type === "scenario.finished" || data.type === "step.finished" || data.type === "attachment") {
                setLog((l) => (l.length > 2000 ? [...l.slice(-1500), data] : [...l, data]));
              }
              if (data.type === "end") {
                ended = true;
                setLive("ended");
                void qc.invalidateQueries({ queryKey: ["run", runId] });
                void qc.invalidateQueries({ queryKey: ["runs"] });
                void qc.invalidateQueries({ queryKey: ["baselines", runId] });
                ctrl.abort();
              } else {
                if (data.type === "visual_check") void qc.invalidateQueries({ queryKey: ["baselines", runId] });
                refresh();
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
    return () => {
      ctrl.abort();
      if (timer) clearTimeout(timer);
    };
  }, [runId, active, qc]);
  return { log, live, streamError };
}

export function RunPage() {
  const { runId = "" } = useParams();
  const run = useRun(runId);
  const active = !!run.data && !terminal.has(run.data.status);
  const { log, live, streamError } = useLiveRun(runId, active);
  const access = useProjectAccess(run.data?.project ?? "");
  const [cancelError, setCancelError] = useState<unknown>(null);
  const [cancelling, setCancelling] = useState(false);
  const logBox = useRef<HTMLOListElement>(null);
  const qc = useQueryClient();
  useEffect(() => {
    // Keep the newest line in view (within the log's own scroll box, not the page).
    if (logBox.current) logBox.current.scrollTop = logBox.current.scrollHeight;
  }, [log.length]);
  if (run.isPending) return <Loading what="the run" />;
  if (run.error) return <ErrorBox error={run.error} title="Cannot load the run" />;
  const r = run.data;
  const cancel = async () => {
    setCancelling(true);
    setCancelError(null);
    try {
      await unwrap(api.POST("/api/runs/{runId}/cancel", { params: { path: { runId } } }));
      await qc.invalidateQueries({ queryKey: ["run", runId] });
    } catch (e) {
      setCancelError(e);
    } finally {
      setCancelling(false);
    }
  };
  return (
    <div>
      <p className="crumbs">
        <Link to="/runs">Runs</Link> / <Link to={"/projects/" + r.project}>{r.project}</Link>
      </p>
      <PageTitle>{"Run " + (r.label || r.id.slice(0, 8))}</PageTitle>
      <div className="run-head">
        <span aria-live="polite" data-testid="run-status">
          <StatusBadge status={r.status} />
        </span>
        <span>
          {r.counts.total} scenarios: {r.counts.passed} passed, {r.counts.failed} failed, {r.counts.skipped} skipped
          {r.counts.flaky ? `, ${r.counts.flaky} flaky` : ""}
        </span>
        <span>{formatDuration(r.durationMs)}</span>
        <span>
          {r.trigger} · {formatTime(r.createdAt)}
          {r.branch ? " · " + r.branch : ""}
          {r.environment ? " · " + r.environment : ""}
        </span>
        <span role="status" className="live">
          {live === "live" ? "● Live" : live === "ended" ? "Finished" : ""}
        </span>
      </div>
      <p className="links">
        <a href={`/reports/${r.id}/`}>HTML report</a> · <a href={`/trace/?run=${r.id}`}>Trace viewer</a>
        {active && access.writable ? (
          <>
            {" "}
            ·{" "}
            <button type="button" onClick={cancel} disabled={cancelling}>
              {cancelling ? "Cancelling…" : "Cancel run"}
            </button>
          </>
        ) : null}
      </p>
      <ErrorBox error={cancelError} title="Cannot cancel" />
      <ErrorBox error={streamError} title="The live stream was interrupted" />
      <section aria-labelledby="tree-h">
        <h2 id="tree-h">Scenarios</h2>
        {r.modules.length === 0 ? <p className="muted">{active ? "Waiting for the first scenario…" : "No scenario ran."}</p> : null}
        <ul className="run-tree" aria-label="Scenarios by module and feature">
          {r.modules.map((m) => (
            <li key={m.name}>
              <details open>
                <summary>
                  <StatusBadge status={m.status} /> {m.name || "(root)"} <span className="muted">{m.counts.passed}/{m.counts.total} passed · {formatDuration(m.durationMs)}</span>
                </summary>
                <ul>
                  {m.features.map((f) => (
                    <li key={f.path}>
                      <details open>
                        <summary>
                          <StatusBadge status={f.status} /> {f.name || f.path} <span className="muted">{f.counts.passed}/{f.counts.total} passed · {formatDuration(f.durationMs)}</span>
                        </summary>
                        <ul>
                          {f.scenarios.map((s) => (
                            <li key={s.id}>
                              <StatusBadge status={s.status} /> <Link to={`/runs/${r.id}/scenarios/${s.id}`}>{s.name}</Link>{" "}
                              <span className="muted">
                                {formatDuration(s.durationMs)}
                                {s.attempts > 1 ? ` · ${s.attempts} attempts` : ""}
                              </span>
                            </li>
                          ))}
                        </ul>
                      </details>
                    </li>
                  ))}
                </ul>
              </details>
            </li>
          ))}
        </ul>
      </section>
      <Baselines runId={r.id} writable={access.writable} />
      {log.length > 0 ? (
        <section aria-labelledby="log-h">
          <h2 id="log-h">Live log</h2>
          <ol className="log" aria-label="Live log" tabIndex={0} ref={logBox}>
            {log.map((e) => (
              <li key={e.sequence}>
                <time>{new Date(e.at).toLocaleTimeString()}</time> {describe(e)}
                {e.type === "attachment" && e.artifactId && /\.(png|jpe?g|webp|gif)$/i.test(e.name ?? "") ? (
                  <a href={"/api/artifacts/" + e.artifactId}>
                    <img className="thumb" src={"/api/artifacts/" + e.artifactId} alt={"Screenshot " + (e.name ?? "")} loading="lazy" />
                  </a>
                ) : null}
              </li>
            ))}
          </ol>
        </section>
      ) : null}
    </div>
  );
}

function describe(e: RunEvent): string {
  switch (e.type) {
    case "log":
      return `[${e.level ?? "info"}] ${e.message ?? ""}`;
    case "scenario.finished":
      return `scenario ${e.status}`;
    case "step.finished":
      return `step ${(e.stepIndex ?? 0) + 1} ${e.status}`;
    case "attachment":
      return `attachment ${e.name ?? ""}`;
    default:
      return e.type;
  }
}
