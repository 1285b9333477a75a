import { describe, expect, it } from "vitest";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { AuthProvider, type Me } from "../auth";
import { InboxPage, ProposalPage } from "./Inbox";
import { answer, apiError, json } from "../testing";

const at = "2026-11-20T10:00:00Z";
function me(instanceRole: "admin" | "user"): Me {
  return { user: { id: "u1", email: "e@example.com", displayName: "Eda", instanceRole, disabled: false, createdAt: at, updatedAt: at }, authMethod: "session", csrfToken: "c1" } as Me;
}

const patch = {
  id: "11111111-1111-4111-8111-111111111111",
  jobId: "22222222-2222-4222-8222-222222222222",
  project: "shop",
  kind: "feature_patch",
  title: "send.feature: replace #submit with #send-button",
  target: { featurePath: "send.feature", etag: '"e1"', scenarioName: "Send" },
  diff: '--- a/send.feature\n+++ b/send.feature\n@@ -1,2 +1,2 @@\n Feature: Send\n-  And I click "#submit"\n+  And I click "#send-button"\n',
  evidence: { oldSelector: "#submit", newSelector: "#send-button", strategy: "test-id", score: 0.92, minScore: 0.88, runs: 2, replacements: 1, ambiguous: false, runnerUp: { selector: "#cancel", score: 0.41 }, extra: "kept" },
  confidence: 0.88,
  createdAt: at,
  updatedAt: at,
};

/** Serves the proposal and the project (in workspace "team", where the caller has role); records decisions. */
function serve(p: object, role: string, decisions: { path: string; body: unknown }[]) {
  let current = p;
  answer(async (req) => {
    const u = new URL(req.url).pathname;
    if (u === "/api/proposals/" + patch.id) return json(current);
    if (u === "/api/projects/shop") return json({ slug: "shop", name: "Shop", workspace: { slug: "team", name: "Team" } });
    if (u === "/api/workspaces") return json({ items: [{ slug: "team", name: "Team", role }], nextCursor: null });
    if (u.endsWith("/accept") || u.endsWith("/reject")) {
      decisions.push({ path: u, body: await req.json() });
      current = { ...p, status: u.endsWith("/accept") ? "accepted" : "rejected" };
      return json(current);
    }
    return apiError(404, "not_found", "no " + u);
  });
}

function show(who: Me) {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={qc}>
      <AuthProvider me={who}>
        <MemoryRouter initialEntries={["/inbox/" + patch.id]}>
          <Routes>
            <Route path="/inbox/:proposalId" element={<ProposalPage />} />
          </Routes>
        </MemoryRouter>
      </AuthProvider>
    </QueryClientProvider>,
  );
}

describe("proposal page", () => {
  it("explains a stale patch, offers no decision, and shows the heal's scores and runner-up", async () => {
    serve({ ...patch, status: "stale" }, "editor", []);
    show(me("user"));
    const note = await screen.findByRole("note", { name: "Why this proposal is stale" }, { timeout: 5000 });
    expect(note).toHaveTextContent("send.feature changed after this patch was made");
    expect(note).toHaveTextContent("Re-run the job");
    expect(within(note).getByRole("link", { name: "Start a new job" })).toHaveAttribute("href", "/agents?project=shop");
    expect(screen.queryByRole("button", { name: "Accept" })).toBeNull();
    const scores = screen.getByText("Best score").closest("dl")!;
    expect(scores).toHaveTextContent("Best score92%");
    expect(scores).toHaveTextContent("Lowest score seen88%");
    const ups = screen.getByRole("table", { name: "Runner-up candidates" });
    expect(within(ups).getByText("#cancel")).toBeInTheDocument();
    expect(within(ups).getByText("41%")).toBeInTheDocument();
    // Evidence the page has no section for is still shown.
    expect(screen.getByText("extra").nextSibling).toHaveTextContent("kept");
    // A feature patch opens side by side.
    expect(screen.getByRole("table", { name: "Change of the feature (side by side)" })).toBeInTheDocument();
  });

  it("offers force to an instance admin only, for an unverified patch", { timeout: 30_000 }, async () => {
    const decisions: { path: string; body: unknown }[] = [];
    serve({ ...patch, status: "pending" }, "editor", decisions);
    const { unmount } = show(me("user"));
    await screen.findByText("It can be accepted once its verification run has passed.", undefined, { timeout: 5000 });
    expect(screen.queryByRole("button", { name: "Accept" })).toBeNull();
    expect(screen.queryByRole("checkbox", { name: /Force/ })).toBeNull();
    unmount();

    show(me("admin"));
    const accept = await screen.findByRole("button", { name: "Accept" }, { timeout: 5000 });
    expect(accept).toBeDisabled();
    const u = userEvent.setup({ delay: null });
    await u.click(screen.getByRole("checkbox", { name: /Force/ }));
    await u.click(accept);
    expect(await screen.findByTestId("decision", undefined, { timeout: 5000 })).toHaveTextContent("Accepted");
    expect(decisions).toEqual([{ path: `/api/proposals/${patch.id}/accept`, body: { force: true } }]);
  });

  it("offers a viewer no decision", async () => {
    serve({ ...patch, status: "verified" }, "viewer", []);
    show(me("user"));
    await screen.findByRole("table", { name: "Runner-up candidates" }, { timeout: 5000 });
    // The project's access is known once the workspaces answer; give it the time to change its mind.
    await new Promise((r) => setTimeout(r, 300));
    expect(screen.queryByRole("button", { name: "Accept" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Reject" })).toBeNull();
  });

  it("rejects only with a reason", async () => {
    const decisions: { path: string; body: unknown }[] = [];
    serve({ ...patch, status: "verified", evidence: { ...patch.evidence, verification: { runId: "33333333-3333-4333-8333-333333333333", status: "passed" } } }, "editor", decisions);
    show(me("user"));
    const u = userEvent.setup({ delay: null });
    await u.click(await screen.findByRole("button", { name: "Reject" }, { timeout: 5000 }));
    expect(await screen.findByText(/the reason is required/)).toHaveAttribute("role", "alert");
    expect(screen.getByLabelText(/Reason to reject/)).toHaveAttribute("aria-invalid", "true");
    expect(decisions).toHaveLength(0);
    await u.type(screen.getByLabelText(/Reason to reject/), "the id is generated");
    await u.click(screen.getByRole("button", { name: "Reject" }));
    expect(await screen.findByTestId("decision", undefined, { timeout: 5000 })).toHaveTextContent("Rejected");
    expect(decisions).toEqual([{ path: `/api/proposals/${patch.id}/reject`, body: { reason: "the id is generated" } }]);
    expect(screen.getByTestId("verification")).toHaveTextContent("The patched scenario passed.");
  }, 30_000);
});

describe("inbox list", () => {
  it("reads the filters from the URL and shows older proposals page by page", { timeout: 30_000 }, async () => {
    const asked: string[] = [];
    const item = (id: string, title: string, createdAt: string, status: string) => ({ ...patch, id, title, createdAt, status });
    answer(async (req) => {
      const u = new URL(req.url);
      if (u.pathname === "/api/projects") return json({ items: [{ slug: "shop", name: "Shop", workspace: { slug: "team", name: "Team" } }], nextCursor: null });
      if (u.pathname === "/api/proposals") {
        asked.push(u.search);
        const q = u.searchParams;
        if (q.get("status") === "verified") return json({ items: [item("v1", "verified one", "2026-11-20T12:00:00Z", "verified")], nextCursor: null });
        if (q.get("cursor") === "c1") return json({ items: [item("p2", "older pending", "2026-11-19T10:00:00Z", "pending")], nextCursor: null });
        return json({ items: [item("p1", "newest pending", "2026-11-21T10:00:00Z", "pending")], nextCursor: "c1" });
      }
      return apiError(404, "not_found", "no " + u.pathname);
    });
    const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    render(
      <QueryClientProvider client={qc}>
        <AuthProvider me={me("user")}>
          <MemoryRouter initialEntries={["/inbox?project=shop&kind=feature_patch&minConfidence=0.5"]}>
            <Routes>
              <Route path="/inbox" element={<InboxPage />} />
            </Routes>
          </MemoryRouter>
        </AuthProvider>
      </QueryClientProvider>,
    );
    const table = await screen.findByRole("table", { name: "Proposals" }, { timeout: 5000 });
    expect(within(table).getAllByRole("link").map((a) => a.textContent)).toEqual(["newest pending", "verified one"]);
    expect(screen.getByLabelText("Kind")).toHaveValue("feature_patch");
    expect(screen.getByLabelText("Confidence at least")).toHaveValue(0.5);
    expect(asked.every((a) => a.includes("project=shop") && a.includes("kind=feature_patch") && a.includes("minConfidence=0.5"))).toBe(true);
    const u = userEvent.setup({ delay: null });
    await u.click(screen.getByRole("button", { name: "Show older proposals" }));
    await within(table).findByRole("link", { name: "older pending" });
    expect(within(table).getAllByRole("link").map((a) => a.textContent)).toEqual(["newest pending", "verified one", "older pending"]);
    // Only the state that had more was asked again, from its cursor.
    expect(asked.slice(2)).toHaveLength(1);
    expect(asked[2]).toContain("cursor=c1");
    expect(asked[2]).toContain("status=pending");
    expect(screen.queryByRole("button", { name: "Show older proposals" })).toBeNull();
  });
});
