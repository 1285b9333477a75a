import { describe, expect, it } from "vitest";
import { Text } from "@codemirror/state";
import { offsetOf, stepSnippet, toEditorDiagnostics, type Step } from "./gherkin";

const step = (pattern: string, parameters: { name: string; type: string }[]): Step => ({
  id: "x",
  source: "builtin",
  category: "http",
  keyword: "When",
  pattern,
  parameters,
  usageCount: 0,
});

describe("stepSnippet", () => {
  it("turns parameters into named fields, quoting strings", () => {
    expect(stepSnippet(step("I send a {word} request to {string}", [{ name: "method", type: "word" }, { name: "url", type: "string" }]))).toBe(
      'I send a ${method} request to "${url}"',
    );
  });
  it("keeps a plural and drops other optional text", () => {
    expect(stepSnippet(step("I wait {float} second(s)", [{ name: "seconds", type: "float" }]))).toBe("I wait ${seconds} seconds");
    expect(stepSnippet(step("the response status (code )is {int}", [{ name: "status", type: "int" }]))).toBe("the response status is ${status}");
  });
});

describe("diagnostics", () => {
  const doc = Text.of(["Feature: A", "", "  Scenario: B", "    Whenn I pay"]);
  it("maps 1-based line and column to the offset in the document", () => {
    expect(offsetOf(doc, 4, 5)).toBe(doc.line(4).from + 4);
    expect(offsetOf(doc, 99, 1)).toBe(doc.line(4).from); // clamped to the last line
    expect(offsetOf(doc, 1, 500)).toBe(doc.line(1).to); // clamped to the line's end
  });
  it("marks from the column to the end of the line, with the severity", () => {
    const [d] = toEditorDiagnostics(doc, [{ line: 4, column: 5, severity: "error", rule: "parse", message: "unexpected step" }]);
    expect(doc.sliceString(d.from, d.to)).toBe("Whenn I pay");
    expect(d.severity).toBe("error");
    expect(d.message).toContain("line 4, column 5");
  });
});
