import { cloneElement, useEffect, useId, useRef, type ReactElement, type ReactNode } from "react";
import { ApiError } from "../api";

/** The error of a request: the server's message and, when it gives one, its hint. */
export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : null;
  const message = e ? e.message : error instanceof Error ? error.message : String(error);
  return (
    <div role="alert" className="error">
      <strong>{title ?? "Something went wrong"}:</strong> <span className="error-message">{message}</span>
      {e?.hint ? <p className="hint">{e.hint}</p> : null}
    </div>
  );
}

export function Loading({ what }: { what?: string }) {
  return (
    <p role="status" aria-live="polite" className="loading">
      Loading{what ? " " + what : ""}…
    </p>
  );
}

/** The page's heading, focused on navigation so that screen readers announce the new page. */
export function PageTitle({ children }: { children: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null);
  const text = typeof children === "string" ? children : undefined;
  useEffect(() => {
    if (text) document.title = text + " · sdods";
    ref.current?.focus();
  }, [text]);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={"badge status-" + status}>{status.replace("_", " ")}</span>;
}

/** A labelled form control: the label names the control (for=id), the hint describes it. */
export function Field({ label, children, hint }: { label: string; children: ReactElement<{ id?: string; "aria-describedby"?: string }>; hint?: string }) {
  const id = useId();
  const control = cloneElement(children, { id, "aria-describedby": hint ? id + "-hint" : undefined });
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        {label}
      </label>
      {control}
      {hint ? (
        <span className="field-hint" id={id + "-hint"}>
          {hint}
        </span>
      ) : null}
    </div>
  );
}

export function formatDuration(ms?: number) {
  if (ms === undefined || ms === null) return "";
  if (ms < 1000) return ms + " ms";
  const s = ms / 1000;
  if (s < 60) return s.toFixed(1) + " s";
  return Math.floor(s / 60) + " min " + Math.round(s % 60) + " s";
}

export function formatTime(iso?: string) {
  if (!iso) return "";
  const d = new Date(iso);
  return d.toLocaleString();
}
