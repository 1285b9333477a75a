import { useState, type FormEvent } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../api";
import { ErrorBox, Field, Loading } from "../components/ui";

/** Processes: named, reusable Gherkin steps that features call as `I run the process "name"`. */
export function ProcessesTab({ slug, writable }: { slug: string; writable: boolean }) {
  const qc = useQueryClient();
  const list = useQuery({ queryKey: ["processes", slug], queryFn: () => unwrap(api.GET("/api/projects/{slug}/processes", { params: { path: { slug }, query: { limit: 200 } } })) });
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [content, setContent] = useState("");
  const [error, setError] = useState<unknown>(null);
  const act = async (p: Promise<unknown>) => {
    setError(null);
    try {
      await p;
      await qc.invalidateQueries({ queryKey: ["processes", slug] });
      await qc.invalidateQueries({ queryKey: ["steps", slug] });
      return true;
    } catch (e) {
      setError(e);
      return false;
    }
  };
  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (await act(unwrap(api.POST("/api/projects/{slug}/processes", { params: { path: { slug } }, body: { name, description: description || undefined, content } })))) {
      setName("");
      setDescription("");
      setContent("");
    }
  };
  return (
    <section aria-labelledby="proc-h">
      <h2 id="proc-h">Processes</h2>
      {list.isPending ? <Loading what="processes" /> : null}
      <ErrorBox error={list.error ?? error} title="Processes" />
      {list.data && list.data.items.length === 0 ? <p>No process yet.</p> : null}
      <ul className="cards">
        {(list.data?.items ?? []).map((p) => (
          <li key={p.id}>
            <h3>{p.name}</h3>
            {p.description ? <p>{p.description}</p> : null}
            <p className="muted">
              Used by {p.usageCount} step{p.usageCount === 1 ? "" : "s"}
              {p.parameters.length ? " · parameters " + p.parameters.join(", ") : ""}
            </p>
            <pre>{p.content}</pre>
            {writable ? (
              <button type="button" aria-label={"Delete process " + p.name} onClick={() => act(unwrap(api.DELETE("/api/projects/{slug}/processes/{processName}", { params: { path: { slug, processName: p.name } } })))}>
                Delete
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      {writable ? (
        <form onSubmit={create} aria-label="Create a process" className="inline-form">
          <h3>Create a process</h3>
          <Field label="Process name">
            <input required value={name} onChange={(e) => setName(e.target.value)} />
          </Field>
          <Field label="Process description">
            <input value={description} onChange={(e) => setDescription(e.target.value)} />
          </Field>
          <Field label="Steps" hint={'Gherkin steps, one per line; <name> is a parameter, e.g. When I send a GET request to "<path>".'}>
            <textarea required rows={4} value={content} onChange={(e) => setContent(e.target.value)} />
          </Field>
          <button type="submit">Create process</button>
        </form>
      ) : null}
    </section>
  );
}

/** The users pool: test accounts leased to scenarios one at a time; passwords are write-only. */
export function PoolTab({ slug, writable }: { slug: string; writable: boolean }) {
  const qc = useQueryClient();
  const list = useQuery({ queryKey: ["pool", slug], queryFn: () => unwrap(api.GET("/api/projects/{slug}/users-pool", { params: { path: { slug }, query: { limit: 200 } } })) });
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [tags, setTags] = useState("");
  const [error, setError] = useState<unknown>(null);
  const act = async (p: Promise<unknown>) => {
    setError(null);
    try {
      await p;
      await qc.invalidateQueries({ queryKey: ["pool", slug] });
      return true;
    } catch (e) {
      setError(e);
      return false;
    }
  };
  const create = async (e: FormEvent) => {
    e.preventDefault();
    const t = tags.split(/[\s,]+/).filter(Boolean);
    if (await act(unwrap(api.POST("/api/projects/{slug}/users-pool", { params: { path: { slug } }, body: { username, password, tags: t.length ? t : undefined } })))) {
      setUsername("");
      setPassword("");
      setTags("");
    }
  };
  return (
    <section aria-labelledby="pool-h">
      <h2 id="pool-h">Users pool</h2>
      {list.isPending ? <Loading what="the users pool" /> : null}
      <ErrorBox error={list.error ?? error} title="Users pool" />
      {list.data && list.data.items.length === 0 ? <p>No account yet.</p> : null}
      {list.data && list.data.items.length > 0 ? (
        <table>
          <caption className="sr-only">Accounts of the users pool</caption>
          <thead>
            <tr>
              <th scope="col">Username</th>
              <th scope="col">Tags</th>
              <th scope="col">Environment</th>
              <th scope="col">In use</th>
              {writable ? (
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((a) => (
              <tr key={a.id}>
                <td>{a.username}</td>
                <td>{a.tags.join(", ")}</td>
                <td>{a.environment ?? "any"}</td>
                <td>{a.lease ? "leased" : "free"}</td>
                {writable ? (
                  <td>
                    <button type="button" aria-label={"Delete account " + a.username} onClick={() => act(unwrap(api.DELETE("/api/projects/{slug}/users-pool/{accountId}", { params: { path: { slug, accountId: a.id } } })))}>
                      Delete
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {writable ? (
        <form onSubmit={create} aria-label="Add a pool account" className="inline-form">
          <h3>Add an account</h3>
          <Field label="Username">
            <input required value={username} onChange={(e) => setUsername(e.target.value)} autoComplete="off" />
          </Field>
          <Field label="Account password" hint="Stored encrypted; never shown again.">
            <input type="password" required value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" />
          </Field>
          <Field label="Tags" hint="Separated by spaces or commas.">
            <input value={tags} onChange={(e) => setTags(e.target.value)} />
          </Field>
          <button type="submit">Add account</button>
        </form>
      ) : null}
    </section>
  );
}
