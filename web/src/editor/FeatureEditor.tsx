import { useEffect, useRef } from "react";
import { EditorState } from "@codemirror/state";
import { EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { completionKeymap } from "@codemirror/autocomplete";
import { lintKeymap } from "@codemirror/lint";
import { searchKeymap } from "@codemirror/search";
import { gherkinExtensions, type Diagnostic, type Step } from "./gherkin";

/**
 * A CodeMirror 6 editor of one feature's Gherkin. The document is owned by the editor; onChange
 * reports every edit. Tab indents; Escape then Tab leaves the editor (CodeMirror's convention).
 */
export function FeatureEditor(props: {
  value: string;
  onChange: (v: string) => void;
  steps: () => Step[];
  validate: (content: string) => Promise<Diagnostic[]>;
  readOnly?: boolean;
  label: string;
  /** Changes when the document is replaced from outside (loading another version). */
  revision: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const latest = useRef(props);
  latest.current = props;
  useEffect(() => {
    const v = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: props.value,
        extensions: [
          lineNumbers(),
          history(),
          drawSelection(),
          highlightActiveLine(),
          keymap.of([...completionKeymap, ...lintKeymap, ...searchKeymap, ...historyKeymap, indentWithTab, ...defaultKeymap]),
          gherkinExtensions({ steps: () => latest.current.steps(), validate: (c) => latest.current.validate(c) }),
          EditorState.readOnly.of(!!props.readOnly),
          EditorView.contentAttributes.of({ "aria-label": props.label, "aria-multiline": "true" }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) latest.current.onChange(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    return () => v.destroy();
    // The editor is rebuilt only when the document is replaced from outside.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [props.revision, props.readOnly]);
  return <div className="editor" ref={host} />;
}
