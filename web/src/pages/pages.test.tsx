import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { App } from "../App";
import { FeaturesTab } from "./Features";
import { Baselines } from "./Baselines";
import { answer, apiError, json } from "../testing";

function wrap(ui: ReactNode, path = "/") {
  const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={qc}>
      <MemoryRouter initialEntries={[path]}>{ui}</MemoryRouter>
    </QueryClientProvider>,
  );
}

const user = { id: "u1", email: "a@example.com", displayName: "Ada", instanceRole: "admin", disabled: false, createdAt: "2026-01-01T00:00:00Z", updatedAt: "2026-01-01T00:00:00Z" };

describe("first run", () => {
  it("asks for the first administrator, shows the server's message and hint, then signs in", async () => {
    let setupDone = false;
    const csrf: (string | null)[] = [];
    answer(async (req) => {
      const p = new URL(req.url).pathname;
      if (p === "/api/auth/setup-status") return json({ setupRequired: !setupDone });
      if (p === "/api/auth/me") return setupDone ? json({ user, authMethod: "session", csrfToken: "c1" }) : apiError(401, "unauthorized", "sign in");
      if (p === "/api/auth/setup") {
        const body = await req.json();
        if (body.email === "taken@example.com") return apiError(409, "conflict", "setup is already done", "sign in instead");
        setupDone = true;
        return json({ user, authMethod: "session", csrfToken: "c1" }, 201);
      }
      csrf.push(req.method === "GET" ? null : req.headers.get("x-csrf-token"));
      if (p === "/api/workspaces" || p === "/api/projects" || p === "/api/orgs") return json({ items: [], nextCursor: null });
      return apiError(404, "not_found", "no " + p);
    });
    wrap(<App />);
    await screen.findByRole("heading", { name: "Set up sdods" });
    const u = userEvent.setup();
    await u.type(screen.getByLabelText("Email"), "taken@example.com");
    await u.type(screen.getByLabelText("Display name"), "Ada");
    await u.type(screen.getByLabelText("Password"), "a long password here");
    await u.click(screen.getByRole("button", { name: "Create administrator" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("setup is already done");
    expect(alert).toHaveTextContent("sign in instead");
    await u.clear(screen.getByLabelText("Email"));
    await u.type(screen.getByLabelText("Email"), "a@example.com");
    await u.click(screen.getByRole("button", { name: "Create administrator" }));
    await screen.findByRole("heading", { name: "Projects", level: 1 });
    expect(screen.getByRole("button", { name: "Sign out" })).toBeInTheDocument();
  });
});

describe("feature editor", () => {
  it("saves with If-Match and shows both versions on 412", async () => {
    const puts: (string | null)[] = [];
    answer(async (req) => {
      const u = new URL(req.url);
      const p = decodeURIComponent(u.pathname);
      if (p === "/api/projects/shop/features" && req.method === "GET")
        return json({ items: [{ path: "a.feature", module: "", tags: [], scenarioCount: 1, etag: '"e1"', sizeBytes: 10, createdAt: "", updatedAt: "" }], nextCursor: null });
      if (p === "/api/projects/shop/steps") return json({ items: [], nextCursor: null });
      if (p === "/api/projects/shop/features/validate") return json({ valid: true, diagnostics: [] });
      if (p === "/api/projects/shop/features/a.feature" && req.method === "GET")
        return json({ path: "a.feature", module: "", tags: [], content: puts.length ? "Feature: theirs\n" : "Feature: mine\n", scenarios: [], etag: puts.length ? '"e2"' : '"e1"', createdAt: "", updatedAt: "" });
      if (p === "/api/projects/shop/features/a.feature" && req.method === "PUT") {
        puts.push(req.headers.get("If-Match"));
        return apiError(412, "precondition_failed", "the feature changed", "reload it");
      }
      return apiError(404, "not_found", "no " + p);
    });
    wrap(
      <Routes>
        <Route path="/projects/:slug/features/*" element={<FeaturesTab slug="shop" writable={true} />} />
      </Routes>,
      "/projects/shop/features/a.feature",
    );
    const save = await screen.findByRole("button", { name: "Save" });
    await userEvent.setup().click(save);
    const region = await screen.findByRole("region", { name: /Someone else saved this feature/ });
    expect(puts).toEqual(['"e1"']);
    expect(screen.getByLabelText("Your version")).toHaveTextContent("Feature: mine");
    expect(screen.getByLabelText("The server's version")).toHaveTextContent("Feature: theirs");
    expect(region).toHaveTextContent("Keep mine");
  });

  it("is read only for a viewer: no Save, no New feature", async () => {
    answer((req) => {
      const p = decodeURIComponent(new URL(req.url).pathname);
      if (p === "/api/projects/shop/features") return json({ items: [], nextCursor: null });
      if (p === "/api/projects/shop/steps") return json({ items: [], nextCursor: null });
      if (p === "/api/projects/shop/features/validate") return json({ valid: true, diagnostics: [] });
      return json({ path: "a.feature", module: "", tags: [], content: "Feature: x\n", scenarios: [], etag: '"e1"', createdAt: "", updatedAt: "" });
    });
    wrap(
      <Routes>
        <Route path="/projects/:slug/features/*" element={<FeaturesTab slug="shop" writable={false} />} />
      </Routes>,
      "/projects/shop/features/a.feature",
    );
    await screen.findByText("Read only: your role cannot change features.");
    expect(screen.queryByRole("button", { name: "Save" })).toBeNull();
    expect(screen.queryByRole("button", { name: "New feature" })).toBeNull();
  });
});

describe("visual baselines", () => {
  const checks = {
    items: [{ name: "home", scenarioId: "s1", browser: "chromium", viewport: { width: 800, height: 600 }, status: "failed", expectedArtifactId: "e", actualArtifactId: "a", diffArtifactId: "d" }],
    nextCursor: null,
  };
  it("offers accept to an editor and sends the names", async () => {
    let accepted: unknown = null;
    answer(async (req) => {
      if (req.method === "POST") {
        accepted = await req.json();
        return json({ accepted: ["home"] });
      }
      return json(checks);
    });
    wrap(<Baselines runId="r1" writable={true} />);
    const b = await screen.findByRole("button", { name: "Accept home" });
    await userEvent.setup().click(b);
    await waitFor(() => expect(accepted).toEqual({ names: ["home"] }));
    expect(screen.getByRole("img", { name: "Baseline of home" })).toHaveAttribute("src", "/api/artifacts/e");
  });
  it("shows no accept button to a viewer", async () => {
    answer(() => json(checks));
    wrap(<Baselines runId="r1" writable={false} />);
    await screen.findByRole("img", { name: "Capture of home" });
    expect(screen.queryByRole("button", { name: /Accept/ })).toBeNull();
  });
});

describe("runs filter", () => {
  it("reads OR and NOT over statuses from the URL", async () => {
    const { statusFilter } = await import("./Runs");
    expect(statusFilter(new URLSearchParams("status=failed&status=errored"))).toEqual(["failed", "errored"]);
    expect(statusFilter(new URLSearchParams("status=passed&status=cancelled&statusNot=1"))).toEqual(["queued", "running", "failed", "errored", "timed_out"]);
    expect(statusFilter(new URLSearchParams("status=bogus"))).toBeUndefined();
  });
});

describe("API tokens", () => {
  it("shows a new token once, with its scopes and expiry sent", async () => {
    const { AccountPage } = await import("./Account");
    const { AuthProvider } = await import("../auth");
    let created: { name: string; scopes: string[]; expiresAt?: string } | null = null;
    const secret = "amx_" + "a".repeat(43);
    answer(async (req) => {
      const p = new URL(req.url).pathname;
      if (p === "/api/tokens" && req.method === "POST") {
        created = await req.json();
        return json({ id: "t1", name: "ci", scopes: created!.scopes, prefix: "amx_aaaaaaaa", createdAt: "2026-01-01T00:00:00Z", expiresAt: created!.expiresAt, token: secret }, 201);
      }
      if (p === "/api/tokens")
        return json({ items: created ? [{ id: "t1", name: "ci", scopes: ["runs:read"], prefix: "amx_aaaaaaaa", createdAt: "2026-01-01T00:00:00Z" }] : [], nextCursor: null });
      return json({ items: [], nextCursor: null });
    });
    wrap(
      <AuthProvider me={{ user: user as never, authMethod: "session", csrfToken: "c" }}>
        <AccountPage />
      </AuthProvider>,
    );
    const u = userEvent.setup();
    await u.type(await screen.findByLabelText("Token name"), "ci");
    await u.click(screen.getByRole("checkbox", { name: "runs:write" }));
    await u.type(screen.getByLabelText("Expires on"), "2030-01-31");
    await u.click(screen.getByRole("button", { name: "Create token" }));
    expect(await screen.findByTestId("new-token")).toHaveTextContent(secret);
    expect(screen.getByRole("button", { name: "Copy token" })).toBeInTheDocument();
    expect(created).toMatchObject({ name: "ci", scopes: ["runs:read", "runs:write"] });
    expect(created!.expiresAt?.startsWith("2030-01-3")).toBe(true);
    // Listed afterwards by prefix only.
    expect(await screen.findByRole("button", { name: "Revoke token ci" })).toBeInTheDocument();
    expect(screen.getAllByText(secret)).toHaveLength(1);
  });
});
