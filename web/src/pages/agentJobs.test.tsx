import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { AuthProvider, type Me } from "../auth";
import { AgentJobsPage } from "./AgentJobs";
import { answer, apiError, json } from "../testing";

const at = "2026-11-20T10:00:00Z";
const me = { user: { id: "u1", email: "e@example.com", displayName: "Eda", instanceRole: "user", disabled: false, createdAt: at, updatedAt: at }, authMethod: "session", csrfToken: "c1" } as Me;
const heal = {
  name: "heal",
  description: "Turns recurring heals into feature patches.",
  scopes: ["agents:write", "runs:write"],
  enabled: true,
  inputSchema: { type: "object", additionalProperties: false, properties: { minOccurrences: { type: "integer", minimum: 1, maximum: 1000, description: "runs a heal must recur in (default 2)" } } },
};
const triage = {
  name: "triage",
  description: "Classifies failures.",
  scopes: ["agents:write", "runs:read"],
  enabled: true,
  inputSchema: { type: "object", required: ["runId"], properties: { runId: { type: "string", format: "uuid" } } },
};

describe("agent jobs page", () => {
  it("starts a job with the input of the form generated from the kind's schema", { timeout: 30_000 }, async () => {
    const posted: unknown[] = [];
    answer(async (req) => {
      const u = new URL(req.url).pathname;
      if (u === "/api/agents/kinds") return json({ items: [triage, heal, { ...heal, name: "llm", enabled: false, inputSchema: {} }] });
      if (u === "/api/projects") return json({ items: [{ slug: "shop", name: "Shop", workspace: { slug: "team", name: "Team" } }], nextCursor: null });
      if (u === "/api/workspaces") return json({ items: [{ slug: "team", name: "Team", role: "editor" }], nextCursor: null });
      if (u === "/api/agents/jobs" && req.method === "GET") return json({ items: [], nextCursor: null });
      if (u === "/api/agents/jobs" && req.method === "POST") {
        posted.push(await req.json());
        return json({ id: "44444444-4444-4444-8444-444444444444", project: "shop", kind: "heal", status: "queued", input: {}, progress: 0, maxSeconds: 300, tokensUsed: 0, proposalIds: [], createdAt: at, updatedAt: at }, 202);
      }
      return apiError(404, "not_found", "no " + u);
    });
    const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    render(
      <QueryClientProvider client={qc}>
        <AuthProvider me={me}>
          <MemoryRouter initialEntries={["/agents"]}>
            <Routes>
              <Route path="/agents" element={<AgentJobsPage />} />
              <Route path="/agents/jobs/:jobId" element={<p>job page</p>} />
            </Routes>
          </MemoryRouter>
        </AuthProvider>
      </QueryClientProvider>,
    );
    const u = userEvent.setup({ delay: null });
    const form = await screen.findByRole("form", { name: "Start an agent job" }, { timeout: 5000 });
    expect(screen.getByRole("option", { name: "llm (not configured)" })).toBeDisabled();
    // Nothing chosen: both are said.
    await u.click(screen.getByRole("button", { name: "Start job" }));
    expect(form).toHaveTextContent("Choose a project.");
    expect(form).toHaveTextContent("Choose a kind.");
    await u.selectOptions(screen.getAllByLabelText("Project")[0], "shop");
    // triage needs a run id: required, and a UUID.
    await u.selectOptions(screen.getAllByLabelText("Kind")[0], "triage");
    await u.click(screen.getByRole("button", { name: "Start job" }));
    expect(await screen.findByText("Run id is required")).toBeInTheDocument();
    await u.selectOptions(screen.getAllByLabelText("Kind")[0], "heal");
    expect(screen.getByRole("spinbutton", { name: "Min occurrences" })).toHaveAccessibleDescription("runs a heal must recur in (default 2); 1 to 1000");
    await u.type(screen.getByRole("spinbutton", { name: "Min occurrences" }), "5000");
    await u.click(screen.getByRole("button", { name: "Start job" }));
    expect(await screen.findByText("Min occurrences must be at most 1000")).toBeInTheDocument();
    expect(posted).toHaveLength(0);
    await u.clear(screen.getByRole("spinbutton", { name: "Min occurrences" }));
    await u.type(screen.getByRole("spinbutton", { name: "Min occurrences" }), "3");
    await u.click(screen.getByRole("button", { name: "Start job" }));
    await screen.findByText("job page");
    expect(posted).toEqual([{ project: "shop", kind: "heal", input: { minOccurrences: 3 } }]);
  });
});
