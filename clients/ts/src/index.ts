// Typed clients of the sdods APIs, built on openapi-fetch over the types that openapi-typescript
// generates from openapi/server.yaml (src/server.d.ts) and openapi/rules.yaml (src/rules.d.ts).
import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { paths as ServerPaths, components as ServerComponents } from "./server";
import type { paths as RulesPaths, components as RulesComponents } from "./rules";

export type { ServerPaths, ServerComponents, RulesPaths, RulesComponents };

/** Any schema of the test automation server API, e.g. `ServerSchema<"Run">`. */
export type ServerSchema<N extends keyof ServerComponents["schemas"]> = ServerComponents["schemas"][N];
/** Any schema of the rule server API, e.g. `RulesSchema<"Finding">`. */
export type RulesSchema<N extends keyof RulesComponents["schemas"]> = RulesComponents["schemas"][N];

/** The error body every failing request of the server answers with. */
export type ServerError = ServerSchema<"Error">;
/** The error body of the rule server. */
export type RulesError = RulesSchema<"Error">;

type Secret = string | (() => string | undefined);

const read = (s: Secret | undefined): string | undefined => (typeof s === "function" ? s() : s);

/** Options of {@link createServerClient}. */
export interface ServerClientOptions {
  /** API token `amx_…`, sent as `Authorization: Bearer`. Omit for browser sessions. */
  token?: Secret;
  /**
   * CSRF token of a browser session (`csrfToken` of `GET /api/auth/me`), sent as `x-csrf-token` on
   * every request but GET and HEAD.
   */
  csrfToken?: Secret;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** fetch implementation; defaults to the global one. */
  fetch?: typeof globalThis.fetch;
  /** Cookie handling of browser sessions; defaults to `same-origin`. */
  credentials?: RequestCredentials;
}

/** Options of {@link createRulesClient}. */
export interface RulesClientOptions {
  /** The rule server token (`RULE_SERVER_TOKEN`), sent as `Authorization: Bearer`. */
  token?: Secret;
  headers?: Record<string, string>;
  fetch?: typeof globalThis.fetch;
}

function auth(token?: Secret, csrfToken?: Secret): Middleware {
  return {
    onRequest({ request }) {
      const t = read(token);
      if (t) request.headers.set("Authorization", `Bearer ${t}`);
      const c = read(csrfToken);
      if (c && request.method !== "GET" && request.method !== "HEAD") request.headers.set("x-csrf-token", c);
      return request;
    },
  };
}

/** Returns a typed client of the test automation server at baseUrl (the origin, without `/api`). */
export function createServerClient(baseUrl: string, opts: ServerClientOptions = {}): Client<ServerPaths> {
  const client = createClient<ServerPaths>({
    baseUrl,
    headers: opts.headers,
    fetch: opts.fetch,
    credentials: opts.credentials ?? "same-origin",
  });
  client.use(auth(opts.token, opts.csrfToken));
  return client;
}

/** Returns a typed client of the rule server at baseUrl. */
export function createRulesClient(baseUrl: string, opts: RulesClientOptions = {}): Client<RulesPaths> {
  const client = createClient<RulesPaths>({ baseUrl, headers: opts.headers, fetch: opts.fetch });
  client.use(auth(opts.token));
  return client;
}
