// CodeMirror 6 for Gherkin: highlighting (the gherkin stream mode of @codemirror/legacy-modes),
// step completion from the project's step library, and diagnostics from the server's validator.
import { StreamLanguage, HighlightStyle, syntaxHighlighting, indentUnit } from "@codemirror/language";
import { gherkin } from "@codemirror/legacy-modes/mode/gherkin";
import { tags as t } from "@lezer/highlight";
import { autocompletion, snippetCompletion, type Completion, type CompletionContext, type CompletionResult } from "@codemirror/autocomplete";
import { linter, lintGutter, type Diagnostic as CMDiagnostic } from "@codemirror/lint";
import type { Text } from "@codemirror/state";
import type { Schema } from "../api";

export type Step = Schema<"StepDefinition">;
export type Diagnostic = Schema<"Diagnostic">;

export const gherkinLanguage = StreamLanguage.define(gherkin);

// Colours chosen for a contrast of at least 4.5:1 on white (WCAG AA).
export const gherkinHighlight = syntaxHighlighting(
  HighlightStyle.define([
    { tag: t.keyword, color: "#7a1f8a", fontWeight: "bold" },
    { tag: t.string, color: "#0b6b2c" },
    { tag: t.comment, color: "#5c6168", fontStyle: "italic" },
    { tag: t.tagName, color: "#8a4b00" },
    { tag: [t.variableName, t.special(t.string)], color: "#0645ad" },
    { tag: t.number, color: "#005f73" },
    { tag: t.meta, color: "#8a4b00" },
    { tag: t.attributeName, color: "#8a4b00" },
  ]),
);

const keywordAtStart = /^(\s*)(Given|When|Then|And|But|\*)\s+(.*)$/;

/** The snippet of a step pattern: each {parameter} becomes a field to fill, named after it. */
export function stepSnippet(step: Step): string {
  let i = 0;
  // Optional text: "second(s)" keeps the plural, "(code )" is left out.
  const plain = step.pattern.replace(/\((s)\)/g, "$1").replace(/\([^)]*\)/g, "");
  return plain.replace(/\{(\w*)\}/g, (_m, type: string) => {
    const p = step.parameters[i++];
    const name = (p?.name ?? type ?? "value").replace(/[{}$]/g, "");
    return type === "string" ? `"\${${name}}"` : `\${${name}}`;
  });
}

/** Completes the text of a step after Given/When/Then/And/But with the project's steps. */
export function stepCompletions(steps: () => Step[]) {
  return (ctx: CompletionContext): CompletionResult | null => {
    const line = ctx.state.doc.lineAt(ctx.pos);
    const before = line.text.slice(0, ctx.pos - line.from);
    const m = keywordAtStart.exec(before);
    if (!m) return null;
    const from = line.from + before.length - m[3].length;
    if (!ctx.explicit && m[3].length === 0 && !ctx.matchBefore(/\s$/)) return null;
    const keyword = m[2];
    const options: Completion[] = steps()
      .filter((s) => s.keyword === "Any" || keyword === "And" || keyword === "But" || keyword === "*" || s.keyword === keyword)
      .map((s) =>
        snippetCompletion(stepSnippet(s), {
          label: s.pattern,
          detail: s.category,
          info: [s.description, s.parameters.length ? "Parameters: " + s.parameters.map((p) => `${p.name} (${p.type})${p.description ? " — " + p.description : ""}`).join("; ") : ""]
            .filter(Boolean)
            .join("\n"),
          type: s.source === "process" ? "function" : "method",
        }),
      );
    return { from, options, validFor: /^[^\n]*$/ };
  };
}

/** Converts a 1-based line and column of the server to an offset in doc, clamped to it. */
export function offsetOf(doc: Text, line: number, column: number): number {
  const l = doc.line(Math.min(Math.max(line, 1), doc.lines));
  return Math.min(l.from + Math.max(column - 1, 0), l.to);
}

/** CodeMirror diagnostics of the server's: from the column to the end of the line. */
export function toEditorDiagnostics(doc: Text, ds: Diagnostic[]): CMDiagnostic[] {
  return ds.map((d) => {
    const from = offsetOf(doc, d.line, d.column);
    const l = doc.lineAt(from);
    return {
      from,
      to: Math.max(from, l.to),
      severity: d.severity === "error" ? "error" : d.severity === "warning" ? "warning" : "info",
      source: d.rule,
      message: `${d.message} (line ${d.line}, column ${d.column})`,
    };
  });
}

/**
 * The editor's extensions: language, highlighting, completion and the linter, which asks validate
 * (debounced by CodeMirror's linter: it runs after `delay` ms without typing).
 */
export function gherkinExtensions(opts: {
  steps: () => Step[];
  validate: (content: string) => Promise<Diagnostic[]>;
  delay?: number;
}) {
  return [
    gherkinLanguage,
    gherkinHighlight,
    indentUnit.of("  "),
    autocompletion({ override: [stepCompletions(opts.steps)], activateOnTyping: true }),
    lintGutter(),
    linter(
      async (view) => {
        const doc = view.state.doc;
        const ds = await opts.validate(doc.toString());
        // The document may have changed while the server answered: CodeMirror maps the positions.
        return toEditorDiagnostics(doc, ds);
      },
      { delay: opts.delay ?? 400 },
    ),
  ];
}
