import { Link } from "react-router-dom";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api";
import { ErrorBox, Loading, StatusBadge, formatDuration, formatTime } from "../components/ui";

/** The last results of one scenario: the project's latest finished runs that ran it. */
export function ScenarioHistory(props: { runId: string; featurePath: string; name: string; exampleRow?: number; limit?: number }) {
  const limit = props.limit ?? 10;
  const history = useQuery({
    queryKey: ["history", props.runId, props.featurePath, props.name, props.exampleRow],
    queryFn: async () => {
      const run = await unwrap(api.GET("/api/runs/{runId}", { params: { path: { runId: props.runId } } }));
      const runs = await unwrap(
        api.GET("/api/runs", {
          params: { query: { project: run.project, limit: 30, status: ["passed", "failed", "errored", "cancelled", "timed_out"], until: new Date(Date.parse(run.createdAt) + 1).toISOString() } },
        }),
      );
      const out: { runId: string; scenarioId: string; status: string; durationMs?: number; at: string; attempts: number }[] = [];
      // Runs are read one after the other, newest first, until `limit` results are found.
      for (const r of runs.items) {
        if (out.length >= limit) break;
        if (r.paths.length && !r.paths.some((p) => props.featurePath === p || props.featurePath.startsWith(p.replace(/\/?$/, "/")))) continue;
        const full = r.id === run.id ? run : await unwrap(api.GET("/api/runs/{runId}", { params: { path: { runId: r.id } } }));
        const feature = full.modules.flatMap((m) => m.features).find((f) => f.path === props.featurePath);
        const sc = feature?.scenarios.find((s) => s.name === props.name && s.exampleRow === props.exampleRow);
        if (sc) out.push({ runId: r.id, scenarioId: sc.id, status: sc.status, durationMs: sc.durationMs, at: r.createdAt, attempts: sc.attempts });
      }
      return out;
    },
  });
  return (
    <section aria-labelledby="hist-h">
      <h2 id="hist-h">History</h2>
      {history.isPending ? <Loading what="the history" /> : null}
      <ErrorBox error={history.error} title="Cannot load the history" />
      {history.data ? (
        <>
          <p className="history-strip" aria-hidden="true">
            {history.data
              .slice()
              .reverse()
              .map((h) => (
                <span key={h.runId} className={"dot status-" + h.status} title={h.status} />
              ))}
          </p>
          <table>
            <caption className="sr-only">Last results of this scenario</caption>
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Result</th>
                <th scope="col">Duration</th>
                <th scope="col">Attempts</th>
              </tr>
            </thead>
            <tbody>
              {history.data.map((h) => (
                <tr key={h.runId} aria-current={h.runId === props.runId ? "true" : undefined}>
                  <td>
                    <Link to={`/runs/${h.runId}/scenarios/${h.scenarioId}`}>{formatTime(h.at)}</Link>
                    {h.runId === props.runId ? " (this run)" : ""}
                  </td>
                  <td>
                    <StatusBadge status={h.status} />
                  </td>
                  <td>{formatDuration(h.durationMs)}</td>
                  <td>{h.attempts}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </section>
  );
}
