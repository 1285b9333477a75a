import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from "react";
import { Link, useLocation, useNavigate, useParams } from "react-router-dom";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, ApiError, unwrap, type Schema } from "../api";
import { ErrorBox, Field, Loading } from "../components/ui";
import { FeatureEditor } from "../editor/FeatureEditor";
import type { Diagnostic, Step } from "../editor/gherkin";

type FeatureSummary = Schema<"FeatureSummary">;

const template = `Feature: A new feature

  # Steps are completed as you type: after "When ", try "I send a" or "I open".
  Scenario: A first scenario
    Given I log "hello from sdods"
`;

/** Features of the project by module (folder), and the editor of the one selected. */
export function FeaturesTab({ slug, writable }: { slug: string; writable: boolean }) {
  const params = useParams();
  const selected = params["*"] ? decodeURIComponent(params["*"]) : "";
  const features = useQuery({
    queryKey: ["features", slug],
    queryFn: async () => {
      const items: FeatureSummary[] = [];
      let cursor: string | undefined;
      do {
        const page = await unwrap(api.GET("/api/projects/{slug}/features", { params: { path: { slug }, query: { limit: 200, cursor } } }));
        items.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      return items;
    },
  });
  return (
    <div className="split">
      <nav aria-label="Features" className="tree">
        <h2>Features</h2>
        {features.isPending ? <Loading what="features" /> : null}
        <ErrorBox error={features.error} title="Cannot list features" />
        {features.data ? <ModuleTree slug={slug} features={features.data} selected={selected} /> : null}
        {writable ? <NewFeature slug={slug} /> : null}
        {writable ? <RecordFeature slug={slug} /> : null}
      </nav>
      <section className="pane" aria-label="Feature">
        {selected ? (
          <FeaturePane key={selected} slug={slug} path={selected} writable={writable} />
        ) : (
          <p className="muted">Choose a feature{writable ? " or create one" : ""}.</p>
        )}
      </section>
    </div>
  );
}

function ModuleTree({ slug, features, selected }: { slug: string; features: FeatureSummary[]; selected: string }) {
  const modules = useMemo(() => {
    const m = new Map<string, FeatureSummary[]>();
    for (const f of features) {
      const list = m.get(f.module) ?? [];
      list.push(f);
      m.set(f.module, list);
    }
    return [...m.entries()].sort(([a], [b]) => a.localeCompare(b));
  }, [features]);
  if (features.length === 0) return <p>No feature yet.</p>;
  return (
    <ul className="modules">
      {modules.map(([mod, list]) => (
        <li key={mod}>
          <details open>
            <summary>
              {mod || "(root)"} <span className="muted">({list.length})</span>
            </summary>
            <ul>
              {list.map((f) => (
                <li key={f.path}>
                  <Link to={`/projects/${slug}/features/${f.path}`} aria-current={f.path === selected ? "page" : undefined}>
                    {f.path.slice(mod ? mod.length + 1 : 0)}
                  </Link>{" "}
                  <span className="muted">
                    {f.scenarioCount} scenario{f.scenarioCount === 1 ? "" : "s"}
                  </span>
                </li>
              ))}
            </ul>
          </details>
        </li>
      ))}
    </ul>
  );
}

function NewFeature({ slug }: { slug: string }) {
  const navigate = useNavigate();
  const [path, setPath] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    let p = path.trim().replace(/^\/+/, "");
    if (!p) return;
    if (!p.endsWith(".feature")) p += ".feature";
    navigate(`/projects/${slug}/features/${p}?new=1`);
    setPath("");
  };
  return (
    <form onSubmit={submit} aria-label="New feature" className="inline-form">
      <Field label="New feature path" hint="e.g. checkout/payment.feature">
        <input value={path} onChange={(e) => setPath(e.target.value)} required maxLength={1024} />
      </Field>
      <button type="submit">New feature</button>
    </form>
  );
}

/**
 * Records a feature from a HAR file (HTTP traffic) or a JSON list of browser actions: the server
 * drafts Gherkin from the step library, which opens in the editor for review before it is saved.
 */
function RecordFeature({ slug }: { slug: string }) {
  const navigate = useNavigate();
  const [name, setName] = useState("");
  const [path, setPath] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!file) return;
    setBusy(true);
    setError(null);
    try {
      let doc: unknown;
      try {
        doc = JSON.parse(await file.text());
      } catch {
        throw new Error(file.name + " is not JSON: choose a HAR file or a JSON list of browser actions");
      }
      const isActions = Array.isArray(doc);
      let p = path.trim().replace(/^\/+/, "");
      if (!p.endsWith(".feature")) p += ".feature";
      const r = await unwrap(
        api.POST("/api/projects/{slug}/record", {
          params: { path: { slug } },
          body: isActions
            ? { format: "actions", name, actions: doc as never, path: p, save: false }
            : { format: "har", name, har: doc as Record<string, unknown>, path: p, save: false },
        }),
      );
      navigate(`/projects/${slug}/features/${p}?new=1`, { state: { draft: r.content } });
      setFile(null);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} aria-label="Record a feature" className="inline-form">
      <h3>Record a feature</h3>
      <Field label="Scenario name">
        <input required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
      <Field label="Save as" hint="e.g. recorded/login.feature; reviewed in the editor before saving.">
        <input required maxLength={1024} value={path} onChange={(e) => setPath(e.target.value)} />
      </Field>
      <Field label="HAR file or browser actions (JSON)">
        <input type="file" accept=".har,.json,application/json" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
      </Field>
      <ErrorBox error={error} title="Cannot record" />
      <button type="submit" disabled={!file || busy}>
        {busy ? "Recording…" : "Record draft"}
      </button>
    </form>
  );
}

type Conflict = { theirs: string; theirsEtag: string };

function FeaturePane({ slug, path, writable }: { slug: string; path: string; writable: boolean }) {
  const qc = useQueryClient();
  const feature = useQuery({
    queryKey: ["feature", slug, path],
    queryFn: async () => {
      try {
        return await unwrap(api.GET("/api/projects/{slug}/features/{path}", { params: { path: { slug, path } } }));
      } catch (e) {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      }
    },
  });
  const steps = useQuery({
    queryKey: ["steps", slug],
    queryFn: async () => {
      const items: Step[] = [];
      let cursor: string | undefined;
      do {
        const page = await unwrap(api.GET("/api/projects/{slug}/steps", { params: { path: { slug }, query: { limit: 200, cursor } } }));
        items.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor && items.length < 2000);
      return items;
    },
    staleTime: 5 * 60_000,
  });
  const [content, setContent] = useState<string | null>(null);
  const [etag, setEtag] = useState<string | undefined>(undefined);
  const [revision, setRevision] = useState("init");
  const [diagnostics, setDiagnostics] = useState<Diagnostic[] | null>(null);
  const [validateError, setValidateError] = useState<unknown>(null);
  const [saveError, setSaveError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string>("");
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [busy, setBusy] = useState(false);
  const loaded = useRef(false);
  const location = useLocation();
  const draft = (location.state as { draft?: string } | null)?.draft;

  useEffect(() => {
    if (loaded.current || feature.isPending || feature.error) return;
    loaded.current = true;
    setContent(feature.data ? feature.data.content : (draft ?? template));
    setEtag(feature.data?.etag);
    setRevision("loaded");
  }, [feature.isPending, feature.error, feature.data, draft]);

  const stepsRef = useRef<Step[]>([]);
  stepsRef.current = steps.data ?? [];
  const getSteps = useCallback(() => stepsRef.current, []);
  const validate = useCallback(
    async (c: string) => {
      try {
        const r = await unwrap(api.POST("/api/projects/{slug}/features/validate", { params: { path: { slug } }, body: { content: c, path, lint: true } }));
        setDiagnostics(r.diagnostics);
        setValidateError(null);
        return r.diagnostics;
      } catch (e) {
        setValidateError(e);
        return [];
      }
    },
    [slug, path],
  );

  const save = async (ifMatch: string | undefined) => {
    if (content === null) return;
    setBusy(true);
    setSaveError(null);
    setSaved("");
    try {
      const r = await api.PUT("/api/projects/{slug}/features/{path}", {
        params: { path: { slug, path }, header: ifMatch ? { "If-Match": ifMatch } : { "If-None-Match": "*" } as never },
        body: { content },
      });
      if (r.response.status === 412) {
        const theirs = await unwrap(api.GET("/api/projects/{slug}/features/{path}", { params: { path: { slug, path } } }));
        setConflict({ theirs: theirs.content, theirsEtag: theirs.etag });
        return;
      }
      const f = await unwrap(Promise.resolve(r));
      setEtag(f.etag);
      setConflict(null);
      setSaved("Saved at " + new Date().toLocaleTimeString() + ".");
      await qc.invalidateQueries({ queryKey: ["features", slug] });
      qc.setQueryData(["feature", slug, path], f);
    } catch (e) {
      setSaveError(e);
    } finally {
      setBusy(false);
    }
  };

  if (feature.isPending || content === null) return <Loading what={path} />;
  if (feature.error) return <ErrorBox error={feature.error} title={"Cannot load " + path} />;
  const errors = (diagnostics ?? []).filter((d) => d.severity === "error").length;
  return (
    <div>
      <h2>
        {path} {feature.data ? null : <span className="muted">(new, not saved)</span>}
      </h2>
      {!writable ? <p className="muted">Read only: your role cannot change features.</p> : null}
      <FeatureEditor
        label={"Gherkin of " + path}
        value={content}
        revision={revision}
        readOnly={!writable}
        onChange={(v) => {
          setContent(v);
          setSaved("");
        }}
        steps={getSteps}
        validate={validate}
      />
      <div className="toolbar">
        {writable ? (
          <button type="button" className="primary" disabled={busy || !!conflict} onClick={() => save(etag)}>
            {busy ? "Saving…" : "Save"}
          </button>
        ) : null}
        <span role="status" aria-live="polite">
          {saved}
        </span>
        {writable && feature.data ? <Link to={`/projects/${slug}/run?path=${encodeURIComponent(path)}`}>Run this feature</Link> : null}
      </div>
      <ErrorBox error={saveError} title="Not saved" />
      {conflict ? (
        <section className="conflict" aria-labelledby="conflict-h" role="region">
          <h3 id="conflict-h">Someone else saved this feature since you opened it</h3>
          <p>Your version is not saved. Compare, then keep yours (replacing theirs) or take theirs (dropping your edits).</p>
          <div className="side-by-side">
            <div>
              <h4>Yours</h4>
              <pre tabIndex={0} aria-label="Your version">{content}</pre>
            </div>
            <div>
              <h4>Saved on the server</h4>
              <pre tabIndex={0} aria-label="The server's version">{conflict.theirs}</pre>
            </div>
          </div>
          <button type="button" onClick={() => save(conflict.theirsEtag)}>
            Keep mine
          </button>{" "}
          <button
            type="button"
            onClick={() => {
              setContent(conflict.theirs);
              setEtag(conflict.theirsEtag);
              setConflict(null);
              setRevision("theirs-" + conflict.theirsEtag);
            }}
          >
            Take theirs
          </button>
        </section>
      ) : null}
      <section aria-labelledby="diag-h">
        <h3 id="diag-h">
          Diagnostics{" "}
          {diagnostics ? (
            <span className="muted">
              ({errors} error{errors === 1 ? "" : "s"}, {diagnostics.length - errors} other)
            </span>
          ) : null}
        </h3>
        <ErrorBox error={validateError} title="Cannot validate" />
        {diagnostics === null ? <p className="muted">Checking…</p> : null}
        {diagnostics && diagnostics.length === 0 ? <p>No problem found.</p> : null}
        {diagnostics && diagnostics.length > 0 ? (
          <ul className="diagnostics" aria-label="Diagnostics">
            {diagnostics.map((d, i) => (
              <li key={i} className={"diag-" + d.severity} data-line={d.line} data-column={d.column}>
                <strong>{d.severity}</strong> line {d.line}, column {d.column}: {d.message} <code>{d.rule}</code>
              </li>
            ))}
          </ul>
        ) : null}
      </section>
    </div>
  );
}
