import { Link, useParams } from "react-router-dom";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api";
import { ScenarioHistory } from "./History";
import { ErrorBox, Loading, PageTitle, StatusBadge, formatDuration } from "../components/ui";

/** One scenario of a run: its steps with their errors, stacks, attachments and screenshots. */
export function ScenarioPage() {
  const { runId = "", scenarioId = "" } = useParams();
  const sc = useQuery({
    queryKey: ["scenario", runId, scenarioId],
    queryFn: () => unwrap(api.GET("/api/runs/{runId}/scenarios/{scenarioId}", { params: { path: { runId, scenarioId } } })),
  });
  if (sc.isPending) return <Loading what="the scenario" />;
  if (sc.error) return <ErrorBox error={sc.error} title="Cannot load the scenario" />;
  const s = sc.data;
  return (
    <div>
      <p className="crumbs">
        <Link to={"/runs/" + runId}>Run</Link> / {s.featurePath}
      </p>
      <PageTitle>{s.name}</PageTitle>
      <p>
        <StatusBadge status={s.status} /> {formatDuration(s.durationMs)} · line {s.line}
        {s.attempts > 1 ? ` · ${s.attempts} attempts` : ""}
        {s.tags.length ? " · " + s.tags.join(" ") : ""}
      </p>
      <ol className="steps" aria-label="Steps">
        {s.steps.map((st) => (
          <li key={st.index} className={"step step-" + st.status}>
            <div>
              <StatusBadge status={st.status} /> <strong>{st.keyword.trim()}</strong> {st.text} <span className="muted">{formatDuration(st.durationMs)}</span>
            </div>
            {st.docString ? <pre>{st.docString}</pre> : null}
            {st.dataTable ? (
              <table className="data">
                <tbody>
                  {st.dataTable.map((row, i) => (
                    <tr key={i}>
                      {row.map((c, j) => (
                        <td key={j}>{c}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
            {st.error ? (
              <div className="step-error" role="group" aria-label="Error">
                <p>
                  <strong>{st.error.type ?? "Error"}:</strong> {st.error.message}
                </p>
                {st.error.expected !== undefined ? (
                  <p>
                    Expected <code>{st.error.expected}</code>, actual <code>{st.error.actual}</code>
                  </p>
                ) : null}
                {st.error.stack ? (
                  <details>
                    <summary>Stack</summary>
                    <pre>{st.error.stack}</pre>
                  </details>
                ) : null}
              </div>
            ) : null}
            {st.attachments.length ? (
              <ul className="attachments">
                {st.attachments.map((a) => (
                  <li key={a.artifactId}>
                    {a.kind === "screenshot" || a.mediaType.startsWith("image/") ? (
                      <figure>
                        <img src={"/api/artifacts/" + a.artifactId} alt={"Screenshot " + a.name} loading="lazy" />
                        <figcaption>{a.name}</figcaption>
                      </figure>
                    ) : (
                      <a href={"/api/artifacts/" + a.artifactId}>
                        {a.name} ({a.kind}, {a.sizeBytes} bytes)
                      </a>
                    )}
                  </li>
                ))}
              </ul>
            ) : null}
          </li>
        ))}
      </ol>
      <ScenarioHistory key={s.id} runId={runId} featurePath={s.featurePath} name={s.name} exampleRow={s.exampleRow} />
      {s.attachments.length ? (
        <section aria-labelledby="att-h">
          <h2 id="att-h">Attachments</h2>
          <ul>
            {s.attachments.map((a) => (
              <li key={a.artifactId}>
                <a href={"/api/artifacts/" + a.artifactId}>
                  {a.name} ({a.kind})
                </a>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </div>
  );
}
