import { useEffect, useState, type FormEvent } from "react";
import { Link } from "react-router-dom";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../api";
import { ErrorBox, Field, Loading } from "../components/ui";
import { useProject } from "./Project";

/**
 * The project's settings (retries, run timeout, scenarios at once, default environment, tag convention) and its lint
 * rules: each rule with a toggle, and a lint of every feature with the findings by file and line.
 */
export function SettingsTab({ slug, writable }: { slug: string; writable: boolean }) {
  const qc = useQueryClient();
  const project = useProject(slug);
  const lint = useQuery({
    queryKey: ["lint", slug],
    queryFn: () => unwrap(api.POST("/api/projects/{slug}/lint", { params: { path: { slug } }, body: {} })),
  });
  const [form, setForm] = useState<{ name: string; description: string; retries: number; timeout: number; env: string; tagPattern: string; disabled: string[]; concurrency: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState("");
  useEffect(() => {
    if (project.data && !form) {
      const s = project.data.settings;
      setForm({
        name: project.data.name,
        description: project.data.description ?? "",
        retries: s.retries,
        timeout: s.runTimeoutSeconds,
        env: s.defaultEnvironment ?? "",
        tagPattern: s.tagPattern ?? "",
        disabled: s.disabledLintRules,
        concurrency: s.scenarioConcurrency ? String(s.scenarioConcurrency) : "",
      });
    }
  }, [project.data, form]);
  if (project.isPending || !form) return project.error ? <ErrorBox error={project.error} title="Cannot load the project" /> : <Loading what="settings" />;
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setDone("");
    try {
      await unwrap(
        api.PUT("/api/projects/{slug}", {
          params: { path: { slug } },
          body: {
            name: form.name,
            description: form.description || undefined,
            settings: {
              retries: form.retries,
              runTimeoutSeconds: form.timeout,
              defaultEnvironment: form.env || undefined,
              tagPattern: form.tagPattern || undefined,
              disabledLintRules: form.disabled,
              scenarioConcurrency: form.concurrency ? Number(form.concurrency) : undefined,
            },
          },
        }),
      );
      setDone("Saved.");
      await qc.invalidateQueries({ queryKey: ["project", slug] });
      await qc.invalidateQueries({ queryKey: ["lint", slug] });
    } catch (err) {
      setError(err);
    }
  };
  const rules = lint.data?.rules ?? [];
  return (
    <div>
      <form onSubmit={save} aria-labelledby="settings-h" className="inline-form">
        <h2 id="settings-h">Settings</h2>
        <fieldset disabled={!writable}>
          <Field label="Project name">
            <input required maxLength={100} value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
          </Field>
          <Field label="Description">
            <textarea rows={2} maxLength={2000} value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} />
          </Field>
          <Field label="Retries of a failed scenario" hint="0 to 5.">
            <input type="number" min={0} max={5} value={form.retries} onChange={(e) => setForm({ ...form, retries: Number(e.target.value) })} />
          </Field>
          <Field label="Run timeout (seconds)">
            <input type="number" min={1} max={86400} value={form.timeout} onChange={(e) => setForm({ ...form, timeout: Number(e.target.value) })} />
          </Field>
          <Field label="Scenarios of a run at once" hint="1 to 32; empty: as many as the worker has cores.">
            <input type="number" min={1} max={32} value={form.concurrency} onChange={(e) => setForm({ ...form, concurrency: e.target.value })} />
          </Field>
          <Field label="Default environment">
            <input value={form.env} onChange={(e) => setForm({ ...form, env: e.target.value })} />
          </Field>
          <Field label="Tag pattern" hint="A regular expression every tag must match (lint rule tag-convention).">
            <input value={form.tagPattern} onChange={(e) => setForm({ ...form, tagPattern: e.target.value })} />
          </Field>
          <fieldset>
            <legend>Lint rules</legend>
            {lint.isPending ? <Loading what="lint rules" /> : null}
            {rules.map((r) => (
              <label key={r.id} className="rule">
                <input
                  type="checkbox"
                  checked={!form.disabled.includes(r.id)}
                  onChange={(e) => setForm({ ...form, disabled: e.target.checked ? form.disabled.filter((x) => x !== r.id) : [...form.disabled, r.id] })}
                />{" "}
                <code>{r.id}</code> — {r.description}
              </label>
            ))}
          </fieldset>
        </fieldset>
        <ErrorBox error={error} title="Settings not saved" />
        {writable ? <button type="submit">Save settings</button> : <p className="muted">Read only: your role cannot change settings.</p>} <span role="status">{done}</span>
      </form>
      <section aria-labelledby="lint-h">
        <h2 id="lint-h">Lint of every feature</h2>
        <ErrorBox error={lint.error} title="Cannot lint" />
        {lint.data ? (
          <>
            <p>
              {lint.data.summary.files} files: {lint.data.summary.errors} errors, {lint.data.summary.warnings} warnings, {lint.data.summary.infos} notes.{" "}
              <button type="button" onClick={() => lint.refetch()}>
                Lint again
              </button>
            </p>
            <ul className="diagnostics">
              {lint.data.diagnostics.map((d, i) => (
                <li key={i} className={"diag-" + d.severity}>
                  <strong>{d.severity}</strong>{" "}
                  {d.path ? <Link to={`/projects/${slug}/features/${d.path}`}>{d.path}</Link> : null} line {d.line}, column {d.column}: {d.message} <code>{d.rule}</code>
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </section>
    </div>
  );
}
