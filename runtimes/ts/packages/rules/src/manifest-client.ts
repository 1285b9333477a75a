// The manifest client: a front end's copy of one channel's manifest from the rule server
// (GET /rulesets/{id}/manifest?channel=…), revalidated with If-None-Match, cached in memory and in
// a pluggable store (localStorage), and served from the cache — marked stale, with the error —
// when the endpoint is down or answers 5xx.

import type { JSONObject } from "./json.js";

/** Where the client keeps the last manifest between page loads (localStorage fits). */
export interface ManifestStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** Options of a ManifestClient. */
export interface ManifestClientOptions {
  /** the rule server's base URL, e.g. https://rules.example.com */
  baseUrl: string;
  /** the ruleset id */
  ruleset: string;
  /** the channel (default client) */
  channel?: "client" | "server";
  /** bearer token, when the server needs one */
  token?: string;
  /** a persistent store (default: none; pass globalThis.localStorage in a browser) */
  store?: ManifestStore;
  /** the fetch to use (default globalThis.fetch) */
  fetch?: typeof fetch;
  /** background refresh period in milliseconds (default 60 s; 0 disables) */
  refreshInterval?: number;
}

/** What get() returns: the manifest, its entity tag, and whether it is a stale copy. */
export interface ManifestResult {
  manifest: JSONObject;
  etag: string | null;
  /** true when the endpoint could not be reached (or answered 5xx) and this is the cached copy */
  stale: boolean;
  /** why the cached copy is served */
  error?: Error;
}

/** Raised when the manifest cannot be fetched and no copy is cached. */
export class ManifestUnavailableError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message);
    this.name = "ManifestUnavailableError";
  }
}

interface Cached {
  manifest: JSONObject;
  etag: string | null;
}

/** A client of one manifest of the rule server. */
export class ManifestClient {
  private cached: Cached | null = null;
  private last: ManifestResult | null = null;
  private readonly listeners = new Set<(r: ManifestResult) => void>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private inflight: Promise<ManifestResult> | null = null;
  private readonly key: string;

  constructor(private readonly opts: ManifestClientOptions) {
    this.key = `sdods.manifest:${opts.baseUrl}:${opts.ruleset}:${opts.channel ?? "client"}`;
    const stored = opts.store?.getItem(this.key);
    if (stored) {
      try {
        const c = JSON.parse(stored) as Cached;
        if (c && typeof c.manifest === "object") this.cached = c;
      } catch {
        // a corrupt copy is no copy
      }
    }
  }

  /** The last result, or the stored copy (stale until revalidated), or null. */
  current(): ManifestResult | null {
    if (this.last) return this.last;
    return this.cached ? { manifest: this.cached.manifest, etag: this.cached.etag, stale: true } : null;
  }

  /** Calls listener with every new result; returns the unsubscribe function. */
  subscribe(listener: (r: ManifestResult) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Fetches (revalidating the cached copy); never rejects while a copy is cached. */
  get(): Promise<ManifestResult> {
    if (!this.inflight) this.inflight = this.fetchOnce().finally(() => (this.inflight = null));
    return this.inflight;
  }

  /** Refreshes in the background every refreshInterval (and once now). */
  start(): this {
    const every = this.opts.refreshInterval ?? 60_000;
    void this.get().catch(() => undefined);
    if (every > 0 && !this.timer) {
      this.timer = setInterval(() => void this.get().catch(() => undefined), every);
      const t = this.timer as unknown as { unref?: () => void };
      t.unref?.();
    }
    return this;
  }

  /** Stops the background refresh. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private publish(r: ManifestResult): ManifestResult {
    const changed = !this.last || this.last.etag !== r.etag || this.last.stale !== r.stale || this.last.manifest !== r.manifest;
    this.last = r;
    if (changed) for (const l of this.listeners) l(r);
    return r;
  }

  private async fetchOnce(): Promise<ManifestResult> {
    const f = this.opts.fetch ?? globalThis.fetch;
    const url = `${this.opts.baseUrl.replace(/\/$/, "")}/rulesets/${encodeURIComponent(this.opts.ruleset)}/manifest?channel=${this.opts.channel ?? "client"}`;
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.opts.token) headers.Authorization = `Bearer ${this.opts.token}`;
    if (this.cached?.etag) headers["If-None-Match"] = this.cached.etag;
    let res: Response;
    try {
      res = await f(url, { headers });
    } catch (e) {
      return this.fallback(e instanceof Error ? e : new Error(String(e)));
    }
    if (res.status === 304 && this.cached) return this.publish({ manifest: this.cached.manifest, etag: this.cached.etag, stale: false });
    if (res.status >= 500) return this.fallback(new ManifestUnavailableError(`the manifest endpoint answered ${res.status}`, res.status));
    if (res.status !== 200) {
      // 4xx: the request is wrong (token, ruleset, channel); a cached copy would hide it
      let detail = "";
      try {
        detail = ((await res.json()) as { error?: { message?: string } }).error?.message ?? "";
      } catch {
        // no error body
      }
      throw new ManifestUnavailableError(`the manifest endpoint answered ${res.status}${detail ? `: ${detail}` : ""}`, res.status);
    }
    let manifest: JSONObject;
    try {
      manifest = (await res.json()) as JSONObject;
    } catch (e) {
      return this.fallback(new ManifestUnavailableError(`the manifest is not JSON: ${(e as Error).message}`));
    }
    const etag = res.headers.get("ETag");
    this.cached = { manifest, etag };
    try {
      this.opts.store?.setItem(this.key, JSON.stringify(this.cached));
    } catch {
      // a full or unavailable store only loses the copy between page loads
    }
    return this.publish({ manifest, etag, stale: false });
  }

  private fallback(error: Error): ManifestResult {
    if (!this.cached) throw new ManifestUnavailableError(`no manifest: ${error.message}`);
    return this.publish({ manifest: this.cached.manifest, etag: this.cached.etag, stale: true, error });
  }
}
