import { describe, expect, it } from "vitest";
import { api, ApiError, readEvents, setCsrfToken, unwrap } from "./api";
import { answer, apiError, json } from "./testing";

describe("the client", () => {
  it("sends the session's CSRF token on every request but GET", async () => {
    const seen: [string, string | null][] = [];
    answer((req) => {
      seen.push([req.method, req.headers.get("x-csrf-token")]);
      return json({ items: [], nextCursor: null }, req.method === "POST" ? 201 : 200);
    });
    setCsrfToken("tok-1");
    await unwrap(api.GET("/api/tokens"));
    await api.POST("/api/auth/logout");
    expect(seen).toEqual([
      ["GET", null],
      ["POST", "tok-1"],
    ]);
    setCsrfToken(undefined);
  });

  it("throws the server's message and hint", async () => {
    answer(() => apiError(403, "forbidden", "your role cannot do that", "ask a workspace admin"));
    const e = await unwrap(api.GET("/api/tokens")).catch((e) => e);
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toMatchObject({ status: 403, code: "forbidden", message: "your role cannot do that", hint: "ask a workspace admin" });
  });
});

describe("readEvents", () => {
  it("parses server-sent events split anywhere", async () => {
    const chunks = ["id: 1\nevent: log\nda", 'ta: {"a":1}\n\n: comment\n\nid: 2\nevent: end\ndata: {}\n', "\n"];
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const ch of chunks) c.enqueue(new TextEncoder().encode(ch));
        c.close();
      },
    });
    const got: unknown[] = [];
    await readEvents(body, (e) => got.push(e));
    expect(got).toEqual([
      { id: "1", event: "log", data: '{"a":1}' },
      { id: "2", event: "end", data: "{}" },
    ]);
  });
});
