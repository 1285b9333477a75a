import { useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../api";
import { ErrorBox } from "../components/ui";

/**
 * The failed and pending visual checks of a run: baseline, capture and diff side by side, with a
 * slider that wipes between baseline and capture; accept one, the selected ones or all (only for
 * callers who may: the buttons are absent otherwise).
 */
export function Baselines({ runId, writable }: { runId: string; writable: boolean }) {
  const qc = useQueryClient();
  const checks = useQuery({
    queryKey: ["baselines", runId],
    queryFn: () => unwrap(api.GET("/api/runs/{runId}/baselines", { params: { path: { runId }, query: { limit: 200 } } })),
  });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState("");
  if (!checks.data || checks.data.items.length === 0) return checks.error ? <ErrorBox error={checks.error} title="Cannot list visual checks" /> : null;
  const accept = async (body: { names: string[] } | { all: true }) => {
    setError(null);
    setDone("");
    try {
      const r = await unwrap(api.POST("/api/runs/{runId}/baselines/accept", { params: { path: { runId } }, body }));
      setDone(`Accepted ${(r as { accepted?: unknown[] }).accepted?.length ?? ""} baseline(s).`);
      setSelected(new Set());
      await qc.invalidateQueries({ queryKey: ["baselines", runId] });
    } catch (e) {
      setError(e);
    }
  };
  const open = checks.data.items.filter((c) => c.status !== "accepted");
  return (
    <section aria-labelledby="vis-h">
      <h2 id="vis-h">Visual checks</h2>
      {writable && open.length > 0 ? (
        <div className="toolbar">
          <button type="button" disabled={selected.size === 0} onClick={() => accept({ names: [...selected] })}>
            Accept selected ({selected.size})
          </button>
          <button type="button" onClick={() => accept({ all: true })}>
            Accept all
          </button>
        </div>
      ) : null}
      <p role="status">{done}</p>
      <ErrorBox error={error} title="Not accepted" />
      <ul className="visual">
        {checks.data.items.map((c) => (
          <li key={c.name + c.scenarioId}>
            <h3>
              {c.name} <span className={"badge status-" + c.status}>{c.status}</span>{" "}
              <span className="muted">
                {c.browser} {c.viewport.width}×{c.viewport.height}
              </span>
            </h3>
            {writable && c.status !== "accepted" ? (
              <label>
                <input
                  type="checkbox"
                  checked={selected.has(c.name)}
                  onChange={(e) => {
                    const s = new Set(selected);
                    if (e.target.checked) s.add(c.name);
                    else s.delete(c.name);
                    setSelected(s);
                  }}
                />{" "}
                Select {c.name}
              </label>
            ) : null}
            <Compare expected={c.expectedArtifactId} actual={c.actualArtifactId} diff={c.diffArtifactId} name={c.name} />
            {writable && c.status !== "accepted" ? (
              <button type="button" onClick={() => accept({ names: [c.name] })}>
                Accept {c.name}
              </button>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * Baseline, capture and diff of a visual check. With runId the capture and diff (files of that
 * run) are read through the run files API; the baseline may come from another run.
 */
export function Compare({ expected, actual, diff, name, runId }: { expected?: string; actual: string; diff?: string; name: string; runId?: string }) {
  const [pos, setPos] = useState(50);
  const [show, setShow] = useState({ expected: true, actual: true, diff: true });
  const src = (id: string) => (runId && id !== expected ? `/api/runs/${runId}/files/artifacts/${id}` : "/api/artifacts/" + id);
  return (
    <div className="compare">
      <fieldset>
        <legend>Show</legend>
        {(["expected", "actual", "diff"] as const).map((k) => (
          <label key={k}>
            <input type="checkbox" checked={show[k]} onChange={(e) => setShow({ ...show, [k]: e.target.checked })} /> {k === "expected" ? "baseline" : k === "actual" ? "capture" : "diff"}
          </label>
        ))}
      </fieldset>
      <div className="side-by-side">
        {show.expected ? <figure>{expected ? <img src={src(expected)} alt={"Baseline of " + name} /> : <p>No baseline yet.</p>}<figcaption>Baseline</figcaption></figure> : null}
        {show.actual ? (
          <figure>
            <img src={src(actual)} alt={"Capture of " + name} />
            <figcaption>Capture</figcaption>
          </figure>
        ) : null}
        {show.diff && diff ? (
          <figure>
            <img src={src(diff)} alt={"Difference of " + name} />
            <figcaption>Diff</figcaption>
          </figure>
        ) : null}
      </div>
      {expected ? (
        <div className="wipe">
          <label>
            Baseline ← → capture{" "}
            <input type="range" min={0} max={100} value={pos} onChange={(e) => setPos(Number(e.target.value))} aria-label={"Wipe between baseline and capture of " + name} />
          </label>
          <div className="wipe-frame">
            <img src={src(actual)} alt="" />
            <div className="wipe-top" style={{ width: pos + "%" }}>
              <img src={src(expected)} alt="" />
            </div>
          </div>
        </div>
      ) : null}
    </div>
  );
}
