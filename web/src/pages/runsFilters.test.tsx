import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { MemoryRouter } from "react-router-dom";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { RunsPage, readFilters, runsQuery, writeFilters } from "./Runs";
import { answer, json } from "../testing";

describe("runs filters in the URL", () => {
  it("round-trips several values and negation for each filter", () => {
    const urls = [
      "project=shop&since=2026-01-01T00%3A00&status=failed&status=errored&statusNot=1&branch=main&branch=release&notTag=%40wip&notTag=%40slow&trigger=api&trigger=schedule",
      "notBranch=main&tag=%40smoke&notTrigger=ui",
      "",
    ];
    for (const u of urls) {
      const f = readFilters(new URLSearchParams(u));
      expect(writeFilters(f).toString()).toBe(u);
      expect(readFilters(writeFilters(f))).toEqual(f);
    }
    const f = readFilters(new URLSearchParams(urls[0]));
    expect(f.branch).toEqual({ values: ["main", "release"], not: false });
    expect(f.tag).toEqual({ values: ["@wip", "@slow"], not: true });
    expect(f.trigger).toEqual({ values: ["api", "schedule"], not: false });
    expect(f.status).toEqual(["failed", "errored"]);
    expect(f.statusNot).toBe(true);
  });
  it("passes each filter to the API as its any-of and none-of lists", () => {
    const q = runsQuery(new URLSearchParams("branch=main&branch=release&notTag=%40wip&notTrigger=ui&notTrigger=api&status=passed&statusNot=1"));
    expect(q).toMatchObject({ branch: ["main", "release"], notTag: ["@wip"], notTrigger: ["ui", "api"], tag: undefined, notBranch: undefined, trigger: undefined });
    expect(q.status).not.toContain("passed");
  });
  it("the filter bar writes several values and a negation into the URL and the API request", async () => {
    const seen: URLSearchParams[] = [];
    answer((req) => {
      seen.push(new URL(req.url).searchParams);
      return json({ items: [], nextCursor: null });
    });
    const qc = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    render(
      <QueryClientProvider client={qc}>
        <MemoryRouter initialEntries={["/runs?branch=main"]}>
          <RunsPage />
        </MemoryRouter>
      </QueryClientProvider>,
    );
    expect(screen.getByRole("textbox", { name: "Branches" })).toHaveValue("main");
    await waitFor(() => expect(seen.at(-1)?.getAll("branch")).toEqual(["main"]));
    const u = userEvent.setup();
    await u.type(screen.getByRole("textbox", { name: "Branches" }), ", release");
    await u.selectOptions(screen.getByRole("combobox", { name: "Tag is" }), "not");
    await u.type(screen.getByRole("textbox", { name: "Tags" }), "@wip");
    await u.click(screen.getByRole("checkbox", { name: "schedule" }));
    await u.click(screen.getByRole("checkbox", { name: "ui" }));
    await u.selectOptions(screen.getByRole("combobox", { name: "Trigger is" }), "not");
    await u.click(screen.getByRole("button", { name: "Apply filters" }));
    await waitFor(() => expect(seen.at(-1)?.getAll("branch")).toEqual(["main", "release"]));
    const last = seen.at(-1)!;
    expect(last.getAll("notTag")).toEqual(["@wip"]);
    expect(last.getAll("notTrigger")).toEqual(["schedule", "ui"]);
    expect(last.getAll("trigger")).toEqual([]);
  });
});
