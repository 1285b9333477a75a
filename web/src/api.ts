// The one client of the UI: the generated TypeScript client (clients/ts, openapi-fetch) with the
// session's CSRF token attached to every request that is not a GET or HEAD. The token comes from
// GET /api/auth/me (and the answers of login and setup) and is kept here, so no page handles it.
import { createServerClient, type ServerComponents } from "../../clients/ts/src/index";

/** A schema of the API document, e.g. `Schema<"Run">`. */
export type Schema<N extends keyof ServerComponents["schemas"]> = ServerComponents["schemas"][N];

let csrf: string | undefined;

/** Remembers the CSRF token of the signed-in session (undefined when signed out). */
export function setCsrfToken(t: string | undefined) {
  csrf = t;
}

export const api = createServerClient(typeof window === "undefined" ? "http://localhost" : window.location.origin, {
  csrfToken: () => csrf,
});

/** An error answer of the API: its code, message and hint (the one error shape), and the status. */
export class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
    message: string,
    public hint: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

type Result<T> = { data?: T; error?: unknown; response: Response };

/**
 * Returns the data of an openapi-fetch result, or throws an ApiError with the server's message
 * and hint (or a plain description when the answer is not the error shape).
 */
export async function unwrap<T>(p: Promise<Result<T>>): Promise<T> {
  let r: Result<T>;
  try {
    r = await p;
  } catch (e) {
    throw new ApiError(0, "network", "the server cannot be reached: " + String((e as Error)?.message ?? e), "check that sdods is running");
  }
  if (r.error !== undefined || !r.response.ok) {
    const body = r.error as { error?: { code?: string; message?: string; hint?: string } } | undefined;
    const e = body?.error;
    throw new ApiError(
      r.response.status,
      e?.code ?? "http_" + r.response.status,
      e?.message ?? `the server answered ${r.response.status} ${r.response.statusText}`,
      e?.hint ?? "",
    );
  }
  return r.data as T;
}

/** Reads a server-sent event stream (text/event-stream body) and calls onEvent for each event. */
export async function readEvents(
  body: ReadableStream<Uint8Array>,
  onEvent: (ev: { id?: string; event: string; data: string }) => void,
  signal?: AbortSignal,
) {
  const reader = body.pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>).getReader();
  let buf = "";
  const abort = () => reader.cancel().catch(() => {});
  signal?.addEventListener("abort", abort);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value;
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let id: string | undefined;
        let event = "message";
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const c = line.indexOf(":");
          const field = c < 0 ? line : line.slice(0, c);
          const v = c < 0 ? "" : line.slice(c + 1).replace(/^ /, "");
          if (field === "id") id = v;
          else if (field === "event") event = v;
          else if (field === "data") data.push(v);
        }
        if (data.length) onEvent({ id, event, data: data.join("\n") });
      }
    }
  } finally {
    signal?.removeEventListener("abort", abort);
  }
}
