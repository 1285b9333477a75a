import { Link, NavLink, Navigate, Route, Routes, useLocation, useNavigate } from "react-router-dom";
import { useQueryClient } from "@tanstack/react-query";
import { api, setCsrfToken, unwrap } from "./api";
import { AuthProvider, useAuth, useMe, useSetupStatus } from "./auth";
import { ErrorBox, Loading } from "./components/ui";
import { SetupPage } from "./pages/Setup";
import { LoginPage } from "./pages/Login";
import { HomePage } from "./pages/Home";
import { ProjectPage } from "./pages/Project";
import { RunsPage } from "./pages/Runs";
import { RunPage } from "./pages/Run";
import { ScenarioPage } from "./pages/Scenario";
import { AccountPage } from "./pages/Account";
import { UsersPage } from "./pages/Users";
import { WorkspacePage } from "./pages/Workspace";
import { InboxPage, ProposalPage } from "./pages/Inbox";
import { AgentJobPage, AgentJobsPage } from "./pages/AgentJobs";
import { InsightsPage } from "./pages/Insights";
import { SchedulesPage } from "./pages/Schedules";

export function App() {
  const setup = useSetupStatus();
  const me = useMe();
  const location = useLocation();
  if (setup.isPending || me.isPending) return <Loading what="sdods" />;
  if (setup.error) return <ErrorBox error={setup.error} title="Cannot reach the server" />;
  if (setup.data.setupRequired) return <SetupPage />;
  if (me.error) return <ErrorBox error={me.error} title="Cannot load your account" />;
  if (!me.data) {
    if (location.pathname !== "/signin") {
      return <Navigate to={"/signin?next=" + encodeURIComponent(location.pathname + location.search)} replace />;
    }
    return <LoginPage />;
  }
  return (
    <AuthProvider me={me.data}>
      <Shell />
    </AuthProvider>
  );
}

function Shell() {
  const { me } = useAuth();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const signOut = async () => {
    try {
      await unwrap(api.POST("/api/auth/logout"));
    } finally {
      setCsrfToken(undefined);
      qc.clear();
      navigate("/signin");
    }
  };
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to="/" className="brand">
          sdods
        </Link>
        <nav aria-label="Main">
          <NavLink to="/" end>
            Projects
          </NavLink>
          <NavLink to="/runs">Runs</NavLink>
          <NavLink to="/inbox">Inbox</NavLink>
          <NavLink to="/agents">Agents</NavLink>
          <NavLink to="/insights">Insights</NavLink>
          <NavLink to="/schedules">Schedules</NavLink>
          <NavLink to="/account">Account</NavLink>
          {me.user.instanceRole === "admin" ? <NavLink to="/users">Users</NavLink> : null}
        </nav>
        <span className="who">
          {me.user.displayName}
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        <Routes>
          <Route path="/" element={<HomePage />} />
          <Route path="/signin" element={<AfterSignIn />} />
          <Route path="/workspaces/:slug" element={<WorkspacePage />} />
          <Route path="/projects/:slug/*" element={<ProjectPage />} />
          <Route path="/runs" element={<RunsPage />} />
          <Route path="/runs/:runId" element={<RunPage />} />
          <Route path="/runs/:runId/scenarios/:scenarioId" element={<ScenarioPage />} />
          <Route path="/inbox" element={<InboxPage />} />
          <Route path="/inbox/:proposalId" element={<ProposalPage />} />
          <Route path="/agents" element={<AgentJobsPage />} />
          <Route path="/agents/jobs/:jobId" element={<AgentJobPage />} />
          <Route path="/insights" element={<InsightsPage />} />
          <Route path="/schedules/*" element={<SchedulesPage />} />
          <Route path="/account" element={<AccountPage />} />
          <Route path="/users" element={<UsersPage />} />
          <Route path="*" element={<NotFound />} />
        </Routes>
      </main>
    </>
  );
}

/** Signed in on /signin: on to the page asked for (?next=, a path of this site only), else the start page. */
function AfterSignIn() {
  const next = new URLSearchParams(useLocation().search).get("next");
  return <Navigate to={next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") && !next.startsWith("/signin") ? next : "/"} replace />;
}

function NotFound() {
  return (
    <div>
      <h1>Page not found</h1>
      <p>
        <Link to="/">Back to the projects</Link>
      </p>
    </div>
  );
}
