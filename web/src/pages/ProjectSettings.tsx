import { useState, type FormEvent } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../api";
import { ErrorBox, Field, Loading, formatTime } from "../components/ui";

/** Environments: base URL and variables; secret values are write-only (never shown again). */
export function EnvironmentsTab({ slug, writable }: { slug: string; writable: boolean }) {
  const qc = useQueryClient();
  const envs = useQuery({ queryKey: ["envs", slug], queryFn: () => unwrap(api.GET("/api/projects/{slug}/envs", { params: { path: { slug } } })) });
  const [name, setName] = useState("");
  const [baseUrl, setBaseUrl] = useState("");
  const [vars, setVars] = useState([{ name: "", value: "", secret: false }]);
  const [error, setError] = useState<unknown>(null);
  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      await unwrap(
        api.POST("/api/projects/{slug}/envs", {
          params: { path: { slug } },
          body: { name, baseUrl: baseUrl || undefined, variables: vars.filter((v) => v.name).map((v) => ({ name: v.name, value: v.value, secret: v.secret })) },
        }),
      );
      setName("");
      setBaseUrl("");
      setVars([{ name: "", value: "", secret: false }]);
      await qc.invalidateQueries({ queryKey: ["envs", slug] });
    } catch (err) {
      setError(err);
    }
  };
  const remove = async (envName: string) => {
    setError(null);
    try {
      await unwrap(api.DELETE("/api/projects/{slug}/envs/{envName}", { params: { path: { slug, envName } } }));
      await qc.invalidateQueries({ queryKey: ["envs", slug] });
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="env-h">
      <h2 id="env-h">Environments</h2>
      {envs.isPending ? <Loading what="environments" /> : null}
      <ErrorBox error={envs.error ?? error} title="Environments" />
      {envs.data && envs.data.items.length === 0 ? <p>No environment yet.</p> : null}
      <ul className="cards">
        {(envs.data?.items ?? []).map((en) => (
          <li key={en.id}>
            <h3>{en.name}</h3>
            {en.baseUrl ? <p>Base URL: {en.baseUrl}</p> : null}
            <dl>
              {en.variables.map((v) => (
                <div key={v.name}>
                  <dt>{v.name}</dt>
                  <dd>{v.secret ? <em>secret (write-only)</em> : v.value}</dd>
                </div>
              ))}
            </dl>
            {writable ? (
              <button type="button" onClick={() => remove(en.name)} aria-label={"Delete environment " + en.name}>
                Delete
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      {writable ? (
        <form onSubmit={create} aria-label="Create an environment" className="inline-form">
          <h3>Create an environment</h3>
          <Field label="Environment name">
            <input required value={name} onChange={(e) => setName(e.target.value)} pattern="[A-Za-z0-9](?:[A-Za-z0-9._\-]{0,62}[A-Za-z0-9])?" />
          </Field>
          <Field label="Base URL">
            <input type="url" value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} />
          </Field>
          <fieldset>
            <legend>Variables</legend>
            {vars.map((v, i) => (
              <div key={i} className="row">
                <Field label={`Variable ${i + 1} name`}>
                  <input value={v.name} onChange={(e) => setVars(vars.map((x, j) => (j === i ? { ...x, name: e.target.value } : x)))} />
                </Field>
                <Field label={`Variable ${i + 1} value`}>
                  <input type={v.secret ? "password" : "text"} value={v.value} onChange={(e) => setVars(vars.map((x, j) => (j === i ? { ...x, value: e.target.value } : x)))} />
                </Field>
                <label>
                  <input type="checkbox" checked={v.secret} onChange={(e) => setVars(vars.map((x, j) => (j === i ? { ...x, secret: e.target.checked } : x)))} /> secret
                </label>
              </div>
            ))}
            <button type="button" onClick={() => setVars([...vars, { name: "", value: "", secret: false }])}>
              Add a variable
            </button>
          </fieldset>
          <button type="submit">Create environment</button>
        </form>
      ) : null}
    </section>
  );
}

/** Datasets: upload a CSV or JSON file, preview the first rows. */
export function DatasetsTab({ slug, writable }: { slug: string; writable: boolean }) {
  const qc = useQueryClient();
  const sets = useQuery({ queryKey: ["datasets", slug], queryFn: () => unwrap(api.GET("/api/projects/{slug}/datasets", { params: { path: { slug } } })) });
  const [preview, setPreview] = useState("");
  const shown = useQuery({
    queryKey: ["dataset-preview", slug, preview],
    queryFn: () => unwrap(api.GET("/api/projects/{slug}/datasets/{datasetName}/preview", { params: { path: { slug, datasetName: preview } } })),
    enabled: !!preview,
  });
  const [file, setFile] = useState<File | null>(null);
  const [error, setError] = useState<unknown>(null);
  const upload = async (e: FormEvent) => {
    e.preventDefault();
    if (!file) return;
    setError(null);
    try {
      await unwrap(
        api.POST("/api/projects/{slug}/datasets", {
          params: { path: { slug } },
          body: { file: file as unknown as string },
          bodySerializer: (b: { file: string }) => {
            const fd = new FormData();
            fd.append("file", b.file as unknown as Blob, file.name);
            return fd;
          },
        }),
      );
      setFile(null);
      await qc.invalidateQueries({ queryKey: ["datasets", slug] });
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="ds-h">
      <h2 id="ds-h">Datasets</h2>
      {sets.isPending ? <Loading what="datasets" /> : null}
      <ErrorBox error={sets.error ?? error} title="Datasets" />
      {sets.data && sets.data.items.length === 0 ? <p>No dataset yet.</p> : null}
      <ul>
        {(sets.data?.items ?? []).map((d) => (
          <li key={d.id}>
            <button type="button" className="link" onClick={() => setPreview(d.name)} aria-pressed={preview === d.name}>
              {d.name}
            </button>{" "}
            <span className="muted">
              {d.format}, {d.rowCount} rows, columns {d.columns.map((c) => c.name).join(", ")} · {formatTime(d.updatedAt)}
            </span>
          </li>
        ))}
      </ul>
      {preview ? (
        <div>
          <h3>Preview of {preview}</h3>
          {shown.isPending ? <Loading what="the preview" /> : null}
          <ErrorBox error={shown.error} title="Cannot preview" />
          {shown.data ? (
            <table>
              <caption className="sr-only">First rows of {preview}</caption>
              <thead>
                <tr>
                  {shown.data.columns.map((c) => (
                    <th key={c.name} scope="col">
                      {c.name}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {shown.data.rows.map((r, i) => (
                  <tr key={i}>
                    {r.map((c, j) => (
                      <td key={j}>{String(c)}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
        </div>
      ) : null}
      {writable ? (
        <form onSubmit={upload} aria-label="Upload a dataset" className="inline-form">
          <Field label="CSV or JSON file">
            <input type="file" accept=".csv,.json,text/csv,application/json" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
          </Field>
          <button type="submit" disabled={!file}>
            Upload dataset
          </button>
        </form>
      ) : null}
    </section>
  );
}

/** The Git integration: repository, branch, folder; test the connection and sync features. */
export function IntegrationsTab({ slug, writable }: { slug: string; writable: boolean }) {
  const qc = useQueryClient();
  const list = useQuery({ queryKey: ["integrations", slug], queryFn: () => unwrap(api.GET("/api/projects/{slug}/integrations", { params: { path: { slug } } })) });
  const git = list.data?.items.find((i) => i.kind === "git");
  const [url, setUrl] = useState("");
  const [branch, setBranch] = useState("main");
  const [directory, setDirectory] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState("");
  const act = async (p: Promise<unknown>, describe: (r: unknown) => string) => {
    setError(null);
    setResult("");
    try {
      const r = await p;
      setResult(describe(r));
      await qc.invalidateQueries({ queryKey: ["integrations", slug] });
    } catch (e) {
      setError(e);
    }
  };
  const save = (e: FormEvent) => {
    e.preventDefault();
    void act(
      unwrap(api.PUT("/api/projects/{slug}/integrations/{kind}", { params: { path: { slug, kind: "git" } }, body: { enabled: true, git: { url, branch, directory, autoSync: false } } })),
      () => "Saved.",
    );
  };
  return (
    <section aria-labelledby="int-h">
      <h2 id="int-h">Integrations</h2>
      {list.isPending ? <Loading what="integrations" /> : null}
      <ErrorBox error={list.error ?? error} title="Integrations" />
      {(list.data?.items ?? []).map((i) => (
        <div key={i.kind} className="cards">
          <h3>
            {i.kind} {i.enabled ? "" : "(disabled)"}
          </h3>
          {i.git ? (
            <p>
              {i.git.url} · branch {i.git.branch}
              {i.git.directory ? " · folder " + i.git.directory : ""}
            </p>
          ) : null}
          {i.webhook ? (
            <p>
              {i.webhook.url} · {i.webhook.events.join(", ")} · {i.webhook.hasSecret ? "signed (secret set)" : "unsigned"}
            </p>
          ) : null}
          {i.lastTest ? <p>Last test: {i.lastTest.ok ? "ok" : "failed: " + (i.lastTest.error ?? "")} ({formatTime(i.lastTest.checkedAt)})</p> : null}
          {i.lastSync ? (
            <p>
              Last sync: {i.lastSync.changes.length} change(s){i.lastSync.commit ? " at " + i.lastSync.commit.slice(0, 10) : ""} ({formatTime(i.lastSync.syncedAt)})
            </p>
          ) : null}
        </div>
      ))}
      <p role="status">{result}</p>
      {writable && git ? (
        <div className="toolbar">
          <button
            type="button"
            onClick={() =>
              act(unwrap(api.POST("/api/projects/{slug}/integrations/{kind}/test", { params: { path: { slug, kind: "git" } } })), (r) =>
                (r as { ok: boolean; error?: string }).ok ? "The repository answers." : "Test failed: " + ((r as { error?: string }).error ?? ""),
              )
            }
          >
            Test Git connection
          </button>
          <button
            type="button"
            onClick={() =>
              act(unwrap(api.POST("/api/projects/{slug}/integrations/{kind}/sync", { params: { path: { slug, kind: "git" } } })), (r) => {
                const s = r as { changes: { path: string; change?: string }[] };
                return `Synced: ${s.changes.length} change(s)` + (s.changes.length ? ": " + s.changes.map((c) => `${c.change ?? ""} ${c.path}`).join(", ") : ".");
              })
            }
          >
            Sync from Git
          </button>
        </div>
      ) : null}
      {writable ? (
        <form onSubmit={save} aria-label="Git integration" className="inline-form">
          <h3>{git ? "Change the Git repository" : "Connect a Git repository"}</h3>
          <Field label="Repository URL">
            <input required value={url} onChange={(e) => setUrl(e.target.value)} placeholder={git?.git?.url} />
          </Field>
          <Field label="Branch">
            <input required value={branch} onChange={(e) => setBranch(e.target.value)} />
          </Field>
          <Field label="Folder of the features">
            <input value={directory} onChange={(e) => setDirectory(e.target.value)} />
          </Field>
          <button type="submit">Save Git integration</button>
        </form>
      ) : null}
      {writable ? <WebhookForm slug={slug} onSaved={() => qc.invalidateQueries({ queryKey: ["integrations", slug] })} /> : null}
    </section>
  );
}

const webhookEvents = ["run.finished", "run.passed", "run.failed", "run.errored", "run.cancelled", "run.timed_out"] as const;
type WebhookEvent = (typeof webhookEvents)[number];

/** A webhook called when runs end; its HMAC secret is write-only. */
function WebhookForm({ slug, onSaved }: { slug: string; onSaved: () => void }) {
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<WebhookEvent[]>(["run.failed"]);
  const [secret, setSecret] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState("");
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setDone("");
    try {
      await unwrap(
        api.PUT("/api/projects/{slug}/integrations/{kind}", {
          params: { path: { slug, kind: "webhook" } },
          body: { enabled: true, webhook: { url, events, secret: secret || undefined } },
        }),
      );
      setSecret("");
      setDone("Saved.");
      onSaved();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form onSubmit={save} aria-label="Webhook" className="inline-form">
      <h3>Webhook</h3>
      <Field label="Webhook URL">
        <input type="url" required value={url} onChange={(e) => setUrl(e.target.value)} />
      </Field>
      <fieldset>
        <legend>Events</legend>
        {webhookEvents.map((ev) => (
          <label key={ev}>
            <input type="checkbox" checked={events.includes(ev)} onChange={(e) => setEvents(e.target.checked ? [...events, ev] : events.filter((x) => x !== ev))} /> {ev}{" "}
          </label>
        ))}
      </fieldset>
      <Field label="Signing secret" hint="Signs deliveries (X-Sdods-Signature); empty keeps the stored one.">
        <input type="password" value={secret} onChange={(e) => setSecret(e.target.value)} autoComplete="new-password" />
      </Field>
      <ErrorBox error={error} title="Webhook not saved" />
      <button type="submit" disabled={events.length === 0}>
        Save webhook
      </button>{" "}
      <span role="status">{done}</span>
    </form>
  );
}
