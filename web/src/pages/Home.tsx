import { useState, type FormEvent } from "react";
import { Link, useNavigate } from "react-router-dom";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../api";
import { canWrite, useAuth } from "../auth";
import { ErrorBox, Field, Loading, PageTitle, StatusBadge, formatTime } from "../components/ui";

const slugPattern = "[a-z0-9](?:[a-z0-9\\-]{0,62}[a-z0-9])?";

export function useWorkspaces() {
  return useQuery({ queryKey: ["workspaces"], queryFn: () => unwrap(api.GET("/api/workspaces", { params: { query: { limit: 200 } } })) });
}

export function HomePage() {
  const { me } = useAuth();
  const ws = useWorkspaces();
  const projects = useQuery({ queryKey: ["projects"], queryFn: () => unwrap(api.GET("/api/projects", { params: { query: { limit: 200 } } })) });
  const writable = (ws.data?.items ?? []).filter((w) => canWrite(me, w.role));
  return (
    <div>
      <PageTitle>Projects</PageTitle>
      <section aria-labelledby="ws-h">
        <h2 id="ws-h">Workspaces</h2>
        {ws.isPending ? <Loading what="workspaces" /> : null}
        <ErrorBox error={ws.error} title="Cannot list workspaces" />
        {ws.data && ws.data.items.length === 0 ? <p>No workspace yet{me.user.instanceRole === "admin" ? ": create one below." : "; ask an administrator to add you to one."}</p> : null}
        {ws.data && ws.data.items.length > 0 ? (
          <table>
            <caption className="sr-only">Workspaces</caption>
            <thead>
              <tr>
                <th scope="col">Workspace</th>
                <th scope="col">Organisation</th>
                <th scope="col">Your role</th>
                <th scope="col">Projects</th>
                <th scope="col">Members</th>
              </tr>
            </thead>
            <tbody>
              {ws.data.items.map((w) => (
                <tr key={w.id}>
                  <td>
                    <Link to={"/workspaces/" + w.slug}>{w.name}</Link> <code>{w.slug}</code>
                  </td>
                  <td>{w.org.name}</td>
                  <td>{w.role ?? (me.user.instanceRole === "admin" ? "instance admin" : "")}</td>
                  <td>{w.projectCount}</td>
                  <td>{w.memberCount}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {me.user.instanceRole === "admin" ? <CreateWorkspace /> : null}
      </section>
      <section aria-labelledby="pr-h">
        <h2 id="pr-h">Projects</h2>
        {projects.isPending ? <Loading what="projects" /> : null}
        <ErrorBox error={projects.error} title="Cannot list projects" />
        {projects.data && projects.data.items.length === 0 ? <p>No project yet.</p> : null}
        {projects.data && projects.data.items.length > 0 ? (
          <table>
            <caption className="sr-only">Projects</caption>
            <thead>
              <tr>
                <th scope="col">Project</th>
                <th scope="col">Workspace</th>
                <th scope="col">Last run</th>
              </tr>
            </thead>
            <tbody>
              {projects.data.items.map((p) => (
                <tr key={p.id}>
                  <td>
                    <Link to={"/projects/" + p.slug}>{p.name}</Link> <code>{p.slug}</code>
                  </td>
                  <td>{p.workspace.name}</td>
                  <td>
                    {p.lastRun ? (
                      <Link to={"/runs/" + p.lastRun.id}>
                        <StatusBadge status={p.lastRun.status} /> {formatTime(p.lastRun.createdAt)}
                      </Link>
                    ) : (
                      "never run"
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {writable.length > 0 ? <CreateProject workspaces={writable.map((w) => ({ slug: w.slug, name: w.name }))} /> : null}
      </section>
    </div>
  );
}

function CreateWorkspace() {
  const qc = useQueryClient();
  const orgs = useQuery({ queryKey: ["orgs"], queryFn: () => unwrap(api.GET("/api/orgs", { params: { query: { limit: 200 } } })) });
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [org, setOrg] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const orgSlug = org || orgs.data?.items[0]?.slug || "";
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await unwrap(api.POST("/api/workspaces", { body: { name, slug: slug || slugify(name), orgSlug } }));
      setName("");
      setSlug("");
      await qc.invalidateQueries({ queryKey: ["workspaces"] });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} aria-label="Create a workspace" className="inline-form">
      <h3>Create a workspace</h3>
      <Field label="Workspace name">
        <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
      <Field label="Workspace slug" hint="Lower-case letters, digits and dashes; from the name when empty.">
        <input pattern={slugPattern} maxLength={64} value={slug} placeholder={slugify(name)} onChange={(e) => setSlug(e.target.value)} />
      </Field>
      <Field label="Organisation">
        <select value={orgSlug} onChange={(e) => setOrg(e.target.value)}>
          {(orgs.data?.items ?? []).map((o) => (
            <option key={o.slug} value={o.slug}>
              {o.name}
            </option>
          ))}
        </select>
      </Field>
      <ErrorBox error={orgs.error ?? error} title="Cannot create the workspace" />
      <button type="submit" disabled={busy || !orgSlug}>
        Create workspace
      </button>
    </form>
  );
}

function CreateProject({ workspaces }: { workspaces: { slug: string; name: string }[] }) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [ws, setWs] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const workspaceSlug = ws || workspaces[0]?.slug || "";
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const p = await unwrap(api.POST("/api/projects", { body: { name, slug: slug || slugify(name), workspaceSlug } }));
      await qc.invalidateQueries({ queryKey: ["projects"] });
      await qc.invalidateQueries({ queryKey: ["workspaces"] });
      navigate("/projects/" + p.slug);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} aria-label="Create a project" className="inline-form">
      <h3>Create a project</h3>
      <Field label="Project name">
        <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
      <Field label="Project slug" hint="From the name when empty.">
        <input pattern={slugPattern} maxLength={64} value={slug} placeholder={slugify(name)} onChange={(e) => setSlug(e.target.value)} />
      </Field>
      <Field label="Workspace">
        <select value={workspaceSlug} onChange={(e) => setWs(e.target.value)}>
          {workspaces.map((w) => (
            <option key={w.slug} value={w.slug}>
              {w.name}
            </option>
          ))}
        </select>
      </Field>
      <ErrorBox error={error} title="Cannot create the project" />
      <button type="submit" disabled={busy}>
        Create project
      </button>
    </form>
  );
}

export function slugify(s: string) {
  return s
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/, "");
}
