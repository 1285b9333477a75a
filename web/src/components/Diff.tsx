// A small renderer of unified diffs (the `diff` of a feature patch proposal): the unified view
// as it is, and a side-by-side view that pairs each run of removed lines with the added lines
// that follow it. No library: a feature patch is a few hunks of a small file.

/** One line of a hunk: context (' '), removed ('-') or added ('+'), with its line numbers. */
export type DiffLine = { kind: " " | "-" | "+"; text: string; oldNo?: number; newNo?: number };
export type Hunk = { header: string; lines: DiffLine[] };
export type ParsedDiff = { oldFile?: string; newFile?: string; hunks: Hunk[] };

/** Parses a unified diff; lines outside a hunk other than the file headers are ignored. */
export function parseUnifiedDiff(text: string): ParsedDiff {
  const out: ParsedDiff = { hunks: [] };
  let hunk: Hunk | undefined;
  let oldNo = 0;
  let newNo = 0;
  const lines = text.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) {
    if (!hunk && line.startsWith("--- ")) {
      out.oldFile = line.slice(4).replace(/^a\//, "");
      continue;
    }
    if (!hunk && line.startsWith("+++ ")) {
      out.newFile = line.slice(4).replace(/^b\//, "");
      continue;
    }
    const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (m) {
      hunk = { header: line, lines: [] };
      out.hunks.push(hunk);
      oldNo = Number(m[1]);
      newNo = Number(m[2]);
      continue;
    }
    if (!hunk) continue;
    if (line.startsWith("\\")) continue; // "\ No newline at end of file"
    const kind = line[0];
    const body = line.slice(1);
    if (kind === "-") hunk.lines.push({ kind: "-", text: body, oldNo: oldNo++ });
    else if (kind === "+") hunk.lines.push({ kind: "+", text: body, newNo: newNo++ });
    else hunk.lines.push({ kind: " ", text: kind === " " ? body : line, oldNo: oldNo++, newNo: newNo++ });
  }
  return out;
}

/** A row of the side-by-side view: the old line on the left, the new on the right (either may be absent). */
export type SideRow = { left?: DiffLine; right?: DiffLine };

/** Pairs a hunk's lines into rows: context on both sides, removals beside the additions that follow them. */
export function sideBySide(h: Hunk): SideRow[] {
  const rows: SideRow[] = [];
  let i = 0;
  while (i < h.lines.length) {
    const l = h.lines[i];
    if (l.kind === " ") {
      rows.push({ left: l, right: l });
      i++;
      continue;
    }
    const removed: DiffLine[] = [];
    const added: DiffLine[] = [];
    while (i < h.lines.length && h.lines[i].kind === "-") removed.push(h.lines[i++]);
    while (i < h.lines.length && h.lines[i].kind === "+") added.push(h.lines[i++]);
    for (let k = 0; k < Math.max(removed.length, added.length); k++) rows.push({ left: removed[k], right: added[k] });
  }
  return rows;
}

const sign = { " ": " ", "-": "−", "+": "+" } as const;
const said = { " ": "", "-": "removed: ", "+": "added: " } as const;

/** A unified diff shown unified or side by side; changes are marked by colour and by a sign and hidden words for screen readers. */
export function DiffView({ diff, mode, label }: { diff: string; mode: "unified" | "split"; label: string }) {
  const d = parseUnifiedDiff(diff);
  if (d.hunks.length === 0) return <p className="muted">The diff is empty.</p>;
  const added = d.hunks.reduce((n, h) => n + h.lines.filter((l) => l.kind === "+").length, 0);
  const removed = d.hunks.reduce((n, h) => n + h.lines.filter((l) => l.kind === "-").length, 0);
  return (
    <div className="diff" data-mode={mode}>
      <p className="muted diff-stat">
        {d.newFile ?? d.oldFile ?? ""} · {added} line(s) added, {removed} removed
      </p>
      {mode === "unified" ? (
        <table className="diff-table" aria-label={label + " (unified)"}>
          <thead className="sr-only">
            <tr>
              <th scope="col">Old line</th>
              <th scope="col">New line</th>
              <th scope="col">Text</th>
            </tr>
          </thead>
          {d.hunks.map((h, hi) => (
            <tbody key={hi}>
              <tr className="diff-hunk">
                <td colSpan={3}>{h.header}</td>
              </tr>
              {h.lines.map((l, li) => (
                <tr key={li} className={"diff-line diff-" + (l.kind === " " ? "ctx" : l.kind === "-" ? "del" : "add")}>
                  <td className="diff-no">{l.oldNo ?? ""}</td>
                  <td className="diff-no">{l.newNo ?? ""}</td>
                  <td className="diff-text">
                    <span aria-hidden="true" className="diff-sign">
                      {sign[l.kind]}
                    </span>
                    <span className="sr-only">{said[l.kind]}</span>
                    {l.text}
                  </td>
                </tr>
              ))}
            </tbody>
          ))}
        </table>
      ) : (
        <table className="diff-table diff-split" aria-label={label + " (side by side)"}>
          <thead>
            <tr>
              <th scope="col" colSpan={2}>
                Before
              </th>
              <th scope="col" colSpan={2}>
                After
              </th>
            </tr>
          </thead>
          {d.hunks.map((h, hi) => (
            <tbody key={hi}>
              <tr className="diff-hunk">
                <td colSpan={4}>{h.header}</td>
              </tr>
              {sideBySide(h).map((r, ri) => (
                <tr key={ri} className="diff-row">
                  <td className="diff-no">{r.left?.oldNo ?? ""}</td>
                  <td className={"diff-text " + (r.left ? (r.left.kind === "-" ? "diff-del" : "diff-ctx") : "diff-empty")}>
                    {r.left ? (
                      <>
                        <span className="sr-only">{said[r.left.kind]}</span>
                        {r.left.text}
                      </>
                    ) : null}
                  </td>
                  <td className="diff-no">{r.right?.newNo ?? ""}</td>
                  <td className={"diff-text " + (r.right ? (r.right.kind === "+" ? "diff-add" : "diff-ctx") : "diff-empty")}>
                    {r.right ? (
                      <>
                        <span className="sr-only">{said[r.right.kind]}</span>
                        {r.right.text}
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          ))}
        </table>
      )}
    </div>
  );
}
