import { describe, expect, it } from "vitest";
import { render, screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { useState } from "react";
import { DiffView, parseUnifiedDiff, sideBySide } from "./Diff";
import { SchemaFields, initialValues, toInput, type FormValues, type JsonSchema } from "./SchemaForm";
import { inboxQueries, readInboxFilters, staleExplanation, writeInboxFilters } from "../pages/Inbox";

// The diff the heal agent makes (impl/server/agents UnifiedDiff): a selector replaced on line 4,
// and a second change further down with a removed line that has no counterpart.
const patch = [
  "--- a/send.feature",
  "+++ b/send.feature",
  "@@ -1,6 +1,6 @@",
  " Feature: Send",
  "   Scenario: Send",
  '     When I open "/"',
  '-    And I click "#submit"',
  '+    And I click "#send-button"',
  '     Then I should see "Sent"',
  " ",
  "@@ -10,4 +10,3 @@",
  "   Scenario: Other",
  '-    When I wait 1 second',
  '-    And I log "x"',
  '+    When I log "y"',
  '     Then I log "z"',
  "",
].join("\n");

describe("diff renderer", () => {
  it("parses hunks with old and new line numbers", () => {
    const d = parseUnifiedDiff(patch);
    expect(d.oldFile).toBe("send.feature");
    expect(d.hunks).toHaveLength(2);
    const del = d.hunks[0].lines.find((l) => l.kind === "-")!;
    const add = d.hunks[0].lines.find((l) => l.kind === "+")!;
    expect(del).toEqual({ kind: "-", text: '    And I click "#submit"', oldNo: 4 });
    expect(add).toEqual({ kind: "+", text: '    And I click "#send-button"', newNo: 4 });
    // The context after the change keeps both numbers in step.
    expect(d.hunks[0].lines[5]).toMatchObject({ kind: " ", oldNo: 5, newNo: 5 });
    expect(d.hunks[1].lines.at(-1)).toMatchObject({ kind: " ", oldNo: 13, newNo: 12 });
  });

  it("pairs removals with the additions after them, side by side", () => {
    const rows = sideBySide(parseUnifiedDiff(patch).hunks[1]);
    expect(rows).toHaveLength(4);
    expect(rows[1].left?.text).toBe("    When I wait 1 second");
    expect(rows[1].right?.text).toBe('    When I log "y"');
    // Two lines removed, one added: the second removal has an empty right side.
    expect(rows[2].left?.text).toBe('    And I log "x"');
    expect(rows[2].right).toBeUndefined();
    expect(rows[3].left).toBe(rows[3].right);
  });

  it("renders both views with the changed lines marked", () => {
    const { rerender } = render(<DiffView diff={patch} mode="split" label="Patch" />);
    const split = screen.getByRole("table", { name: "Patch (side by side)" });
    const row = within(split).getByText('And I click "#submit"', { exact: false }).closest("tr")!;
    // The old line on the left and the new one on the same row, right.
    expect(row.querySelector(".diff-del")).toHaveTextContent('removed: And I click "#submit"');
    expect(row.querySelector(".diff-add")).toHaveTextContent('added: And I click "#send-button"');
    expect(screen.getByText(/2 line\(s\) added, 3 removed/)).toBeInTheDocument();
    rerender(<DiffView diff={patch} mode="unified" label="Patch" />);
    const unified = screen.getByRole("table", { name: "Patch (unified)" });
    const lines = within(unified).getAllByRole("row").filter((r) => r.classList.contains("diff-line"));
    expect(lines.map((r) => r.className.replace("diff-line ", ""))).toEqual(["diff-ctx", "diff-ctx", "diff-ctx", "diff-del", "diff-add", "diff-ctx", "diff-ctx", "diff-ctx", "diff-del", "diff-del", "diff-add", "diff-ctx"]);
  });

  it("says so when a diff is empty", () => {
    render(<DiffView diff={"--- a/x\n+++ b/x\n"} mode="split" label="Empty" />);
    expect(screen.getByText("The diff is empty.")).toBeInTheDocument();
  });
});

const schema: JsonSchema = {
  type: "object",
  required: ["runId", "owner"],
  properties: {
    runId: { type: "string", format: "uuid", description: "a failed run" },
    owner: { type: "string", minLength: 2 },
    minOccurrences: { type: "integer", minimum: 1, maximum: 1000, description: "runs a heal must recur in" },
    ratio: { type: "number", exclusiveMaximum: 1 },
    mode: { type: "string", enum: ["fast", "thorough"], default: "fast" },
    dryRun: { type: "boolean" },
    tags: { type: "array", items: { type: "string", pattern: "^@" }, maxItems: 2 },
  },
};

function Harness({ onSubmit }: { onSubmit: (r: ReturnType<typeof toInput>) => void }) {
  const [values, setValues] = useState<FormValues>(() => initialValues(schema));
  const [errors, setErrors] = useState<Record<string, string>>({});
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        const r = toInput(schema, values);
        setErrors(r.errors);
        onSubmit(r);
      }}
    >
      <SchemaFields schema={schema} values={values} onChange={setValues} errors={errors} idPrefix="t" />
      <button type="submit">Go</button>
    </form>
  );
}

describe("form generated from a JSON schema", () => {
  it("has one labelled control per property, of the property's type", () => {
    render(<Harness onSubmit={() => {}} />);
    expect(screen.getByRole("textbox", { name: /Run id/ })).toHaveAccessibleDescription("a failed run");
    expect(screen.getByRole("textbox", { name: /Run id/ })).toHaveAttribute("aria-required", "true");
    expect(screen.getByRole("spinbutton", { name: "Min occurrences" })).toHaveAccessibleDescription("runs a heal must recur in; 1 to 1000");
    expect(screen.getByRole("spinbutton", { name: "Ratio" })).toBeInTheDocument();
    const mode = screen.getByRole("combobox", { name: "Mode" });
    expect(mode).toHaveValue("fast");
    expect(within(mode).getAllByRole("option").map((o) => o.textContent)).toEqual(["(default)", "fast", "thorough"]);
    expect(screen.getByRole("checkbox", { name: "Dry run" })).not.toBeChecked();
    expect(screen.getByRole("textbox", { name: "Tags" })).toHaveAccessibleDescription("one a line");
  });

  it("shows a message per invalid field and sends nothing until the input fits", async () => {
    const results: ReturnType<typeof toInput>[] = [];
    render(<Harness onSubmit={(r) => results.push(r)} />);
    const u = userEvent.setup({ delay: null });
    await u.type(screen.getByRole("spinbutton", { name: "Min occurrences" }), "0");
    await u.type(screen.getByRole("textbox", { name: "Tags" }), "@smoke\nwip");
    await u.type(screen.getByRole("textbox", { name: /Run id/ }), "not-an-id");
    await u.click(screen.getByRole("button", { name: "Go" }));
    expect(results[0].errors).toEqual({
      runId: "must be an id (a UUID)",
      owner: "is required",
      minOccurrences: "must be at least 1",
      tags: '"wip" must match ^@',
    });
    expect(screen.getByRole("spinbutton", { name: "Min occurrences" })).toHaveAttribute("aria-invalid", "true");
    expect(screen.getAllByRole("alert").map((a) => a.textContent)).toContain("Min occurrences must be at least 1");
    expect(screen.getByRole("textbox", { name: /Owner/ })).toHaveAccessibleDescription("Owner is required");

    await u.clear(screen.getByRole("spinbutton", { name: "Min occurrences" }));
    await u.type(screen.getByRole("spinbutton", { name: "Min occurrences" }), "3");
    await u.clear(screen.getByRole("textbox", { name: "Tags" }));
    await u.type(screen.getByRole("textbox", { name: "Tags" }), "@smoke\n\n@fast");
    await u.clear(screen.getByRole("textbox", { name: /Run id/ }));
    await u.type(screen.getByRole("textbox", { name: /Run id/ }), "0b6f7d38-6c1e-4a51-9d6b-2f0a1e6c9e11");
    await u.type(screen.getByRole("textbox", { name: /Owner/ }), "qa");
    await u.click(screen.getByRole("checkbox", { name: "Dry run" }));
    await u.click(screen.getByRole("button", { name: "Go" }));
    expect(results[1].errors).toEqual({});
    // Empty optional fields are left to the server's defaults; the enum keeps its default value.
    expect(results[1].input).toEqual({ runId: "0b6f7d38-6c1e-4a51-9d6b-2f0a1e6c9e11", owner: "qa", minOccurrences: 3, mode: "fast", dryRun: true, tags: ["@smoke", "@fast"] });
    expect(screen.queryAllByRole("alert")).toHaveLength(0);
  }, 30_000);

  it("checks numbers, bounds and list sizes", () => {
    expect(toInput(schema, { runId: "0b6f7d38-6c1e-4a51-9d6b-2f0a1e6c9e11", owner: "qa", minOccurrences: "2.5", ratio: "1", tags: "@a\n@b\n@c" }).errors).toEqual({
      minOccurrences: "must be a whole number",
      ratio: "must be less than 1",
      tags: "takes at most 2 item(s)",
    });
    expect(toInput(schema, { runId: "0b6f7d38-6c1e-4a51-9d6b-2f0a1e6c9e11", owner: "q", minOccurrences: "1001" }).errors).toEqual({
      owner: "must be at least 2 character(s)",
      minOccurrences: "must be at most 1000",
    });
  });

  it("says when a kind takes no input", () => {
    render(<SchemaFields schema={{ type: "object", properties: {} }} values={{}} onChange={() => {}} errors={{}} idPrefix="x" />);
    expect(screen.getByText("This kind takes no input.")).toBeInTheDocument();
  });
});

describe("inbox filters", () => {
  it("round-trip through the URL, open by default", () => {
    const f = readInboxFilters(new URLSearchParams("project=shop&kind=feature_patch&minConfidence=0.5"));
    expect(f).toEqual({ project: "shop", kind: "feature_patch", state: "open", minConfidence: "0.5", jobId: "" });
    expect(writeInboxFilters(f).toString()).toBe("project=shop&kind=feature_patch&minConfidence=0.5");
    expect(writeInboxFilters({ ...f, state: "rejected" }).get("status")).toBe("rejected");
  });

  it("asks for pending and verified for the open view, one state otherwise", () => {
    expect(inboxQueries(readInboxFilters(new URLSearchParams("minConfidence=2"))).map((q) => [q.status, q.minConfidence])).toEqual([
      ["pending", 1],
      ["verified", 1],
    ]);
    expect(inboxQueries(readInboxFilters(new URLSearchParams("status=all"))).map((q) => q.status)).toEqual([undefined]);
    expect(inboxQueries(readInboxFilters(new URLSearchParams("status=stale&jobId=j1"))).map((q) => [q.status, q.jobId])).toEqual([["stale", "j1"]]);
  });

  it("explains a stale patch and says to re-run the job", () => {
    const s = staleExplanation({ kind: "feature_patch", target: { featurePath: "send.feature", etag: '"abc"' }, jobId: "j" });
    expect(s).toContain("send.feature changed after this patch was made");
    expect(s).toContain("Re-run the job");
  });
});
