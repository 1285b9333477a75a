// A time-series chart drawn by uPlot (small and fast; canvas), always with the same data as a table:
// a toggle switches between the two, the canvas carries an aria label that says what it shows, and
// the table is the accessible view of every point (axe and screen readers read it, not the canvas).
import { useEffect, useId, useRef, useState } from "react";
import type uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export type ChartSeries = {
  label: string;
  /** One value per point of x; null where the bucket has no value (drawn as a gap). */
  values: (number | null)[];
  color: string;
  /** Draw as bars instead of a line. */
  bars?: boolean;
};

type Props = {
  title: string;
  /** Bucket starts (ISO instants), oldest first. */
  at: string[];
  series: ChartSeries[];
  /** Formats a value for the axis, the legend and the table. */
  format?: (v: number) => string;
  /** The heading of the first column of the table view. */
  xLabel?: string;
  formatX?: (iso: string) => string;
  /** The values are counts: the axis has whole-number ticks only. */
  integer?: boolean;
};

// canDraw reports whether the browser gives a 2D canvas context, which uPlot draws on.
function canDraw(): boolean {
  try {
    return document.createElement("canvas").getContext("2d") !== null;
  } catch {
    return false;
  }
}

const defaultFormat = (v: number) => String(Math.round(v * 100) / 100);

export function TimeChart({ title, at, series, format = defaultFormat, xLabel = "Period", formatX = (s) => new Date(s).toLocaleString(), integer }: Props) {
  const [asTable, setAsTable] = useState(false);
  const [failed, setFailed] = useState(false);
  const host = useRef<HTMLDivElement>(null);
  const id = useId();
  const showTable = asTable || failed;

  useEffect(() => {
    const el = host.current;
    if (!el || showTable || at.length === 0) return;
    let plot: uPlot | undefined;
    let gone = false;
    const draw = (UPlot: typeof uPlot) => {
      // No 2D canvas (an old browser, or a test's DOM without one): uPlot would fail later, in a
      // microtask no try can catch, so the table shows the same data instead.
      if (!canDraw()) {
        setFailed(true);
        return;
      }
      try {
        const width = Math.max(280, Math.min(el.clientWidth || 560, 900));
        const data = [at.map((s) => Date.parse(s) / 1000), ...series.map((s) => s.values)] as uPlot.AlignedData;
        plot = new UPlot(
          {
            width,
            height: 220,
            scales: { x: { time: true } },
            series: [
              {},
              ...series.map((s) => ({
                label: s.label,
                stroke: s.color,
                fill: s.bars ? s.color + "55" : undefined,
                width: 2,
                spanGaps: false,
                points: { show: true, size: 5 },
                paths: s.bars ? UPlot.paths.bars!({ size: [0.6, 40] }) : undefined,
                value: (_u: uPlot, v: number | null) => (v === null || v === undefined ? "–" : format(v)),
              })),
            ],
            axes: [{}, { values: (_u: uPlot, vs: number[]) => vs.map((v) => format(v)), size: 60, incrs: integer ? [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] : undefined }],
          },
          data,
          el,
        );
      } catch {
        // No canvas (an old browser, or a test's DOM without one): the table shows the same data.
        setFailed(true);
      }
    };
    // Loaded on first use: pages without charts do not carry it.
    import("uplot").then(
      ({ default: UPlot }) => {
        if (!gone) draw(UPlot);
      },
      () => setFailed(true),
    );
    return () => {
      gone = true;
      plot?.destroy();
    };
  }, [at, series, showTable, format, integer]);

  const summary =
    at.length === 0
      ? "no data in this window"
      : `${at.length} points from ${formatX(at[0])} to ${formatX(at[at.length - 1])}; ` +
        series.map((s) => `${s.label} last ${lastValue(s.values, format)}`).join(", ");

  return (
    <figure className="chart" aria-labelledby={id + "-t"}>
      <figcaption className="chart-head">
        <span id={id + "-t"} className="chart-title">
          {title}
        </span>
        {!failed && at.length > 0 ? (
          <button type="button" className="link" aria-pressed={asTable} aria-controls={id + "-body"} onClick={() => setAsTable(!asTable)}>
            {asTable ? "Show chart" : "Show table"}
            <span className="sr-only"> of {title}</span>
          </button>
        ) : null}
      </figcaption>
      <div id={id + "-body"}>
        {at.length === 0 ? (
          <p className="muted">No runs in this window.</p>
        ) : showTable ? (
          <table className="chart-table">
            <caption className="sr-only">{title}</caption>
            <thead>
              <tr>
                <th scope="col">{xLabel}</th>
                {series.map((s) => (
                  <th scope="col" key={s.label}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {at.map((x, i) => (
                <tr key={x}>
                  <th scope="row">{formatX(x)}</th>
                  {series.map((s) => (
                    <td key={s.label}>{s.values[i] === null || s.values[i] === undefined ? "–" : format(s.values[i] as number)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <div ref={host} role="img" aria-label={title + ": " + summary} className="chart-canvas" />
        )}
      </div>
    </figure>
  );
}

function lastValue(vs: (number | null)[], format: (v: number) => string) {
  for (let i = vs.length - 1; i >= 0; i--) {
    const v = vs[i];
    if (v !== null && v !== undefined) return format(v);
  }
  return "–";
}
