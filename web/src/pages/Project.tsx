import { NavLink, Route, Routes, useParams, Link } from "react-router-dom";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api";
import { canWrite, useAuth } from "../auth";
import { ErrorBox, Loading, PageTitle } from "../components/ui";
import { useWorkspaces } from "./Home";
import { FeaturesTab } from "./Features";
import { EnvironmentsTab, DatasetsTab, IntegrationsTab } from "./ProjectSettings";
import { StartRun } from "./Runs";
import { SettingsTab } from "./Settings";
import { PoolTab, ProcessesTab } from "./Library";

export function useProject(slug: string) {
  return useQuery({ queryKey: ["project", slug], queryFn: () => unwrap(api.GET("/api/projects/{slug}", { params: { path: { slug } } })), enabled: slug !== "" });
}

/** The caller's role in the workspace of a project, and whether it may change things there. */
export function useProjectAccess(slug: string) {
  const { me } = useAuth();
  const p = useProject(slug);
  const ws = useWorkspaces();
  const role = ws.data?.items.find((w) => w.slug === p.data?.workspace.slug)?.role;
  return { project: p, role, writable: !!p.data && canWrite(me, role) };
}

export function ProjectPage() {
  const { slug = "" } = useParams();
  const { project, role, writable } = useProjectAccess(slug);
  if (project.isPending) return <Loading what="the project" />;
  if (project.error) return <ErrorBox error={project.error} title="Cannot load the project" />;
  const p = project.data;
  const base = "/projects/" + slug;
  return (
    <div>
      <p className="crumbs">
        <Link to="/">Projects</Link> / <Link to={"/workspaces/" + p.workspace.slug}>{p.workspace.name}</Link>
      </p>
      <PageTitle>{p.name}</PageTitle>
      <p className="muted">
        Your role: {role ?? "instance administrator"}. <Link to={"/runs?project=" + slug}>Runs of this project</Link>
      </p>
      <nav aria-label="Project" className="tabs">
        <NavLink to={base} end>
          Features
        </NavLink>
        {writable ? <NavLink to={base + "/run"}>Start a run</NavLink> : null}
        <NavLink to={base + "/environments"}>Environments</NavLink>
        <NavLink to={base + "/datasets"}>Datasets</NavLink>
        <NavLink to={base + "/processes"}>Processes</NavLink>
        <NavLink to={base + "/pool"}>Users pool</NavLink>
        <NavLink to={base + "/integrations"}>Integrations</NavLink>
        <NavLink to={base + "/settings"}>Settings and lint</NavLink>
      </nav>
      <Routes>
        <Route index element={<FeaturesTab slug={slug} writable={writable} />} />
        <Route path="features/*" element={<FeaturesTab slug={slug} writable={writable} />} />
        <Route path="run" element={writable ? <StartRun project={slug} /> : <p>Your role in this workspace does not allow starting runs.</p>} />
        <Route path="environments" element={<EnvironmentsTab slug={slug} writable={writable} />} />
        <Route path="datasets" element={<DatasetsTab slug={slug} writable={writable} />} />
        <Route path="integrations" element={<IntegrationsTab slug={slug} writable={writable} />} />
        <Route path="processes" element={<ProcessesTab slug={slug} writable={writable} />} />
        <Route path="pool" element={<PoolTab slug={slug} writable={writable} />} />
        <Route path="settings" element={<SettingsTab slug={slug} writable={writable} />} />
      </Routes>
    </div>
  );
}
