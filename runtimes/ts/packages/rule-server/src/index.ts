// Package @sdods/rule-server: createRuleServer, the sdods rule server (openapi/rules.yaml 1.1.0)
// embedded in a Node process on node:http, depending only on @sdods/rules.

import http from "node:http";
import net from "node:net";
import { createHash, timingSafeEqual } from "node:crypto";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { JSONSyntaxError, LoadError, RuleSet, bundle, decodeUTF8, indentedJSON, parseJSON, requestProblem, RequestError, ChannelError, EvaluationError } from "@sdods/rules";
import type { Operators, Channel, JSONValue, JSONObject } from "@sdods/rules";
import { jsonPositions, readYAML, type SourceDocument } from "./source.js";
import { clientErrorRefusal, refusalResponse, requestRefusal } from "./head.js";

export { readYAML, jsonPositions, portability, numberProblem } from "./source.js";
export type { SourceDocument, SourceProblem } from "./source.js";

/** The default request body limit: 1 MiB (openapi/rules.yaml). */
export const DEFAULT_MAX_BODY = 1 << 20;

/** A ruleset handed to the server directly: a source document, or a compiled bundle. */
export type RulesetInput = { source: unknown; name?: string } | { bundle: unknown; name?: string };

/** Options of createRuleServer. */
export interface RuleServerOptions {
  /** the bearer token every route but the probes requires */
  token?: string;
  /** serve every route without a token (private networks only) */
  allowOpen?: boolean;
  /** a directory of rulesets: *.bundle.json bundles, *.json and *.yaml / *.yml sources (spec/v1/ruleset.md §7) */
  rulesDir?: string;
  /** rulesets given in code, beside or instead of rulesDir */
  rulesets?: RulesetInput[];
  /** custom operators the host registers */
  operators?: Operators;
  /** request body limit in bytes (default 1 MiB) */
  maxBody?: number;
  /** how long a drain waits for requests in flight once the listener is closed, in milliseconds (default 20 s) */
  drainTimeout?: number;
  /** on a drain, how long readiness is off (every answer with Connection: close) before the listener closes, in milliseconds (default 0) */
  drainDelay?: number;
  /** structured log entries: level (DEBUG for the line per request, INFO, WARN, ERROR), msg, and details (default: none) */
  log?: (entry: Record<string, unknown>) => void;
  /** how often rulesDir is checked for changed files, in milliseconds (default 2000; 0: never) */
  pollInterval?: number;
}

/** A problem of a reload (openapi/rules.yaml LoadProblem). */
export interface LoadProblem {
  file: string;
  code: string;
  message: string;
  pointer?: string;
  /** line in a source ruleset (1-based); absent for bundles */
  line?: number;
  /** column in a source ruleset (1-based); absent for bundles */
  column?: number;
}

/** The kind of a file of the rules directory by its name, or null for a file it does not load. */
export function ruleFileKind(name: string): "bundle" | "json" | "yaml" | null {
  if (name.startsWith(".")) return null;
  const lower = name.toLowerCase();
  if (lower.endsWith(".bundle.json")) return "bundle";
  if (lower.endsWith(".json")) return "json";
  if (lower.endsWith(".yaml") || lower.endsWith(".yml")) return "yaml";
  return null;
}

interface Entry {
  rs: RuleSet;
  source: "source" | "bundle";
  bundleText: string | null;
  manifests: Map<Channel, string>;
}

class HttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly hint: string) {
    super(message);
  }
}

const HINTS: Record<string, string> = {
  BAD_REQUEST: "fix the request as the message says (openapi/rules.yaml)",
  UNAUTHORIZED: "send Authorization: Bearer <RULE_SERVER_TOKEN>",
  NOT_FOUND: "list the loaded rulesets with GET /rulesets",
  CHANNEL_UNAVAILABLE: "ask for a channel the ruleset has (server or client)",
  METHOD_NOT_ALLOWED: "see openapi/rules.yaml for the methods of this path",
  PAYLOAD_TOO_LARGE: "send a smaller body",
  UNSUPPORTED_MEDIA_TYPE: "send Content-Type: application/json",
  EVALUATION_ERROR: "the request makes the evaluation fail; see the message",
  NOT_READY: "wait for the rules to load (GET /readyz says why they did not)",
  INTERNAL: "retry; report it if it persists",
  HEADERS_TOO_LARGE: "send a request line and headers of at most 64 KiB",
};

function err(status: number, code: string, message: string): HttpError {
  return new HttpError(status, code, message, HINTS[code] ?? "");
}

/** Reports whether an If-None-Match field (its lines) matches a strong tag (RFC 9110 §13.1.2). */
export function noneMatch(lines: string[], etag: string): boolean {
  let matched = false;
  for (const raw of lines) {
    const v = raw.replace(/^[ \t]+|[ \t]+$/g, "");
    if (v === "*") {
      matched = true;
      continue;
    }
    let s = v;
    let elements = 0;
    for (;;) {
      s = s.replace(/^[ \t]+/, "");
      if (s === "") {
        if (elements === 0) return false;
        break;
      }
      if (s[0] === ",") {
        s = s.slice(1);
        continue;
      }
      if (s.startsWith("W/")) s = s.slice(2);
      if (s[0] !== '"') return false;
      let end = 1;
      while (end < s.length && s[end] !== '"') {
        const c = s.charCodeAt(end);
        if (c !== 0x21 && (c < 0x23 || c === 0x7f)) return false;
        end++;
      }
      if (end === s.length) return false;
      if (s.slice(0, end + 1) === etag) matched = true;
      elements++;
      s = s.slice(end + 1).replace(/^[ \t]+/, "");
      if (s !== "" && s[0] !== ",") return false;
    }
  }
  return matched;
}

function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}

/** The embeddable rule server. */
export class RuleServer {
  /** the node:http server; listen on it or use listen() */
  readonly server: http.Server;
  private rules = new Map<string, Entry>();
  private loadedOnce = false;
  private draining = false;
  private lastReload: { at: string; ok: boolean; problems: LoadProblem[] } | null = null;
  private inFlight = 0;
  private readonly tokenDigest: Buffer | null;
  private readonly maxBody: number;
  /** the open connections: whether each is idle, how many requests it has received, and how many bytes the drain last saw read from it */
  private readonly conns = new Map<net.Socket, { idle: boolean; requests: number; read: number }>();
  private listener: net.Server | null = null;
  /** while a drain empties the listener's accept queue: told of every connection accepted */
  private accepted: ((sock: net.Socket) => void) | null = null;

  constructor(private readonly opts: RuleServerOptions) {
    this.tokenDigest = opts.token ? digest(opts.token) : null;
    this.maxBody = opts.maxBody && opts.maxBody > 0 ? opts.maxBody : DEFAULT_MAX_BODY;
    this.server = http.createServer({ maxHeaderSize: 64 << 10, requireHostHeader: false }, (req, res) => this.handle(req, res, false));
    this.server.keepAliveTimeout = 90_000;
    this.server.on("connection", (sock: net.Socket) => {
      this.accepted?.(sock);
      this.conns.set(sock, { idle: true, requests: 0, read: 0 });
      sock.on("close", () => this.conns.delete(sock));
    });
    // decide on a declared length before the client sends the body
    this.server.on("checkContinue", (req, res) => this.handle(req, res, true));
    this.server.on("clientError", (e: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket) => {
      if (!socket.writable) return socket.destroy();
      const r = clientErrorRefusal(e.code, e.rawPacket);
      this.opts.log?.({ level: "DEBUG", msg: "request refused", status: r.status, code: r.code, message: r.message });
      socket.end(refusalResponse(r));
    });
  }

  /** The number of requests being served (a drain waits for them). */
  get requestsInFlight(): number {
    return this.inFlight;
  }

  private poller: ReturnType<typeof setInterval> | null = null;
  private fingerprint = "";

  /** The names, sizes and modification times of the rules directory's files. */
  private async scan(): Promise<string> {
    if (!this.opts.rulesDir) return "";
    try {
      const names = (await readdir(this.opts.rulesDir)).filter((n) => ruleFileKind(n) !== null).sort();
      const parts: string[] = [];
      for (const n of names) {
        const st = await stat(join(this.opts.rulesDir, n));
        parts.push(`${n}:${st.size}:${st.mtimeMs}`);
      }
      return parts.join("|");
    } catch (e) {
      return `unreadable:${(e as Error).message}`;
    }
  }

  /** Listens on port (0: any) and host ("": every interface); resolves with the base URL once the first load is done. */
  async listen(port = 0, host = "127.0.0.1"): Promise<string> {
    this.fingerprint = await this.scan();
    await this.reload();
    const every = this.opts.pollInterval ?? 2000;
    if (this.opts.rulesDir && every > 0) {
      let busy = false;
      this.poller = setInterval(async () => {
        if (busy) return;
        busy = true;
        try {
          const f = await this.scan();
          if (f !== this.fingerprint) {
            this.fingerprint = f;
            await this.reload();
          }
        } finally {
          busy = false;
        }
      }, every);
      this.poller.unref();
    }
    // the listener is ours, apart from the HTTP server, so that a drain can stop accepting
    // without closing the keep-alive connections (http.Server.close closes the idle ones at once,
    // and a request a client has just sent on one would be lost)
    const listener = net.createServer((sock) => this.server.emit("connection", sock));
    await new Promise<void>((resolve, reject) => {
      listener.once("error", reject);
      const ready = () => {
        listener.off("error", reject);
        resolve();
      };
      // "" is every interface (IPv6 and IPv4 where the machine has both), as Go's ":8080"
      if (host === "") listener.listen(port, ready);
      else listener.listen(port, host, ready);
    });
    this.listener = listener;
    const a = listener.address();
    if (a === null || typeof a === "string") throw new Error("no TCP address");
    return `http://${a.address.includes(":") ? `[${a.address}]` : a.address}:${a.port}`;
  }

  /** Reloads the rulesets; on any problem the previous rules keep serving. */
  async reload(): Promise<{ ok: boolean; problems: LoadProblem[] }> {
    const problems: LoadProblem[] = [];
    const next = new Map<string, Entry & { file: string; checksum: string }>();
    const add = (file: string, e: Entry) => {
      const prev = next.get(e.rs.ref.id);
      if (prev) {
        if (prev.checksum === e.rs.ref.checksum) {
          if (e.source === "source") next.set(e.rs.ref.id, { ...e, file, checksum: e.rs.ref.checksum });
          return;
        }
        problems.push({ file, code: "RULESET_DUPLICATE", message: `ruleset ${e.rs.ref.id} is also defined by ${prev.file}` });
        return;
      }
      next.set(e.rs.ref.id, { ...e, file, checksum: e.rs.ref.checksum });
    };
    const warnings: string[] = [];
    const load = (file: string, kind: "source" | "bundle", doc: unknown, src?: SourceDocument | null) => {
      try {
        if (kind === "bundle") {
          const rs = RuleSet.fromBundle(doc, { operators: this.opts.operators });
          add(file, { rs, source: "bundle", bundleText: typeof doc === "string" ? doc : indentedJSON(doc as JSONValue), manifests: new Map() });
        } else {
          const b = bundle(doc);
          const rs = RuleSet.fromBundle(b.bundle, { operators: this.opts.operators });
          add(file, { rs, source: "source", bundleText: b.text, manifests: new Map() });
        }
      } catch (e) {
        if (e instanceof LoadError) {
          for (const d of e.diagnostics) {
            const p: LoadProblem = { file, code: d.code, message: d.message, pointer: d.pointer };
            if (src) {
              const at = src.position(d.pointer);
              p.line = at.line;
              p.column = at.column;
            }
            problems.push(p);
          }
        } else problems.push({ file, code: "FILE_UNREADABLE", message: (e as Error).message });
      }
    };
    if (this.opts.rulesDir) {
      let names: string[] = [];
      try {
        names = (await readdir(this.opts.rulesDir)).sort();
      } catch (e) {
        problems.push({ file: this.opts.rulesDir, code: "RULES_DIR_UNREADABLE", message: (e as Error).message });
      }
      for (const name of names) {
        const kind = ruleFileKind(name);
        if (!kind) continue;
        const path = join(this.opts.rulesDir, name);
        let raw: Buffer;
        try {
          if ((await stat(path)).isDirectory()) continue; // follows the links of ConfigMap volumes
          raw = await readFile(path);
        } catch (e) {
          problems.push({ file: name, code: "FILE_UNREADABLE", message: (e as Error).message });
          continue;
        }
        // a file that is not well-formed UTF-8 is malformed (spec/v1/README.md, "Text")
        let text: string;
        try {
          text = decodeUTF8(raw);
        } catch (e) {
          problems.push({ file: name, code: kind === "bundle" ? "BUNDLE_INVALID" : kind === "json" ? "RULESET_INVALID" : "YAML_INVALID", message: `malformed ${kind === "yaml" ? "YAML" : "JSON"}: ${(e as Error).message}`, pointer: "" });
          continue;
        }
        if (kind === "bundle") {
          load(name, "bundle", text);
          continue;
        }
        let doc: JSONValue;
        let src: SourceDocument | null;
        if (kind === "yaml") {
          const r = readYAML(text);
          if ("problems" in r) {
            for (const p of r.problems) problems.push({ file: name, code: p.code, message: p.message, pointer: p.pointer, line: p.line, column: p.column });
            continue;
          }
          src = r.doc;
          doc = parseJSON(r.doc.json);
        } else {
          try {
            doc = parseJSON(text);
          } catch (e) {
            const off = e instanceof JSONSyntaxError ? e.offset : 0;
            if (/surrogate/.test((e as Error).message)) {
              // well-formed JSON syntax, text that is not (as for a file that is not UTF-8)
              problems.push({ file: name, code: "RULESET_INVALID", message: `malformed JSON: ${(e as Error).message}`, pointer: "" });
              continue;
            }
            const before = text.slice(0, off).split("\n");
            problems.push({ file: name, code: "YAML_INVALID", message: `malformed JSON: ${(e as Error).message}`, line: before.length, column: before[before.length - 1].length + 1 });
            continue;
          }
          src = jsonPositions(text);
        }
        for (const w of src?.lint ?? []) warnings.push(`${name}:${w.line}:${w.column}: ${w.code} at ${w.pointer}: ${w.message}`);
        load(name, "source", doc, src);
      }
    }
    (this.opts.rulesets ?? []).forEach((r, i) => {
      const file = r.name ?? `rulesets[${i}]`;
      if ("bundle" in r) load(file, "bundle", r.bundle);
      else load(file, "source", r.source);
    });
    const ok = problems.length === 0;
    this.lastReload = { at: new Date().toISOString(), ok, problems };
    if (ok) {
      this.rules = next;
      this.loadedOnce = true;
    }
    for (const w of warnings) this.opts.log?.({ level: "WARN", msg: "ruleset not portable", detail: w });
    for (const p of problems) this.opts.log?.({ level: "ERROR", msg: "ruleset refused", file: p.file, code: p.code, pointer: p.pointer ?? "", message: p.message });
    if (ok) this.opts.log?.({ level: "INFO", msg: "rules loaded", rulesets: [...next.keys()].sort() });
    else this.opts.log?.({ level: "ERROR", msg: "reload refused; the previous rules keep serving", dir: this.opts.rulesDir ?? "", problems: problems.length, serving: this.loadedOnce });
    return { ok, problems };
  }

  /**
   * Drains and closes without failing a request of a client that retries nothing:
   * 1. readiness turns off and every answer from now on carries Connection: close (those of
   *    requests already running too); the server keeps accepting and serving for drainDelay,
   *    while load balancers take it out of rotation;
   * 2. the listener closes, once every connection the kernel had queued on it is accepted
   *    (stopListening);
   * 3. each connection closes after its answer; one that sends nothing for the idle grace (1 s,
   *    at most half of drainTimeout) is closed as idle.
   * Connections still busy drainTimeout after the listener closed are cut off; close then
   * resolves false (true when everything was answered).
   */
  async close(): Promise<boolean> {
    if (this.closing) return this.closing;
    this.closing = this.drain();
    return this.closing;
  }

  private closing: Promise<boolean> | null = null;

  private async drain(): Promise<boolean> {
    this.draining = true;
    if (this.poller) clearInterval(this.poller);
    const delay = this.opts.drainDelay ?? 0;
    if (delay > 0) {
      this.opts.log?.({ level: "INFO", msg: "readiness off; serving with Connection: close before closing the listener", drain_delay_ms: delay });
      await new Promise((r) => setTimeout(r, delay));
    }
    const timeout = this.opts.drainTimeout ?? 20_000;
    const embedded = !this.listener && this.server.listening; // an embedder called server.listen
    await this.stopListening(timeout / 2);
    const start = Date.now();
    const grace = Math.min(1000, timeout / 2);
    const seen = new Map<net.Socket, { requests: number; since: number }>();
    let ok = true;
    for (;;) {
      // A connection is idle for the grace only if it was so when the event loop last read its
      // sockets. A sweep straight from a timer would, after a stall (a process without CPU, a
      // long evaluation), run before the poll phase reads a request already in the kernel's
      // buffer. So the sweep runs in the check phase (setImmediate), after this turn's poll, and
      // measures the grace up to polled, the time of this turn's timer phase: what had arrived
      // by then has been read, whatever stall came before or after the poll.
      await new Promise((r) => setTimeout(r, 10));
      const polled = Date.now();
      await new Promise((r) => setImmediate(r));
      const now = Date.now();
      if (this.conns.size === 0) break;
      if (now - start >= timeout) {
        ok = false;
        break;
      }
      for (const [sock, st] of this.conns) {
        // bytes read count as activity too: a request whose head is not complete yet is on its way
        const read = sock.bytesRead;
        if (!st.idle || read !== st.read) {
          st.read = read;
          seen.delete(sock);
          continue;
        }
        const s = seen.get(sock);
        if (!s || s.requests !== st.requests) seen.set(sock, { requests: st.requests, since: now });
        else if (polled - s.since >= grace) {
          sock.destroy();
          seen.delete(sock);
        }
      }
    }
    for (const sock of this.conns.keys()) sock.destroy();
    // http.Server's own close, now that no connection is left: it stops its timeout checks
    if (embedded) await new Promise<void>((r) => this.server.close(() => r()));
    if (ok) this.opts.log?.({ level: "INFO", msg: "drained; exiting", took_ms: Date.now() - start });
    else this.opts.log?.({ level: "ERROR", msg: `drain: in-flight requests did not finish within ${timeout} ms` });
    return ok;
  }

  /**
   * Stops accepting connections without resetting one a client has already made. The kernel
   * completes a TCP handshake by itself and queues the connection until the process accepts it;
   * closing a listening socket resets the connections still queued, and their clients, whose
   * connect succeeded and whose request is sent, read "connection reset by peer". Node accepts
   * one connection per turn of its event loop, and a turn is long under load (it serves every
   * ready connection), so the queue is often not empty when the signal is handled. It is first in,
   * first out: the drain connects to the listener itself and closes it once that connection is
   * accepted, every connection queued before it having been accepted by then. A connection made
   * after that is refused, which a client can always retry. Waits at most limit milliseconds.
   */
  private async stopListening(limit: number): Promise<void> {
    const l = this.listener ?? (this.server.listening ? this.server : null);
    if (!l) return;
    const a = l.address();
    if (a !== null && typeof a !== "string") await this.acceptQueued(a, limit);
    if (this.listener) this.listener.close();
    // listening on the HTTP server itself: net.Server's close, as http.Server's (Node 19 and
    // later) also closes the idle keep-alive connections at once, and a request a client has just
    // sent on one would be lost; the sweep closes them after the idle grace
    else if (this.server.listening) net.Server.prototype.close.call(this.server);
  }

  /** Connects to the listener at a and resolves once the listener has accepted that connection (or after limit ms, or at once if the connect fails). */
  private acceptQueued(a: net.AddressInfo, limit: number): Promise<void> {
    const host = a.address === "::" ? "::1" : a.address === "0.0.0.0" ? "127.0.0.1" : a.address;
    const key = (addr: string | undefined, port: number | undefined) => `${(addr ?? "").replace(/^::ffff:/, "")} ${port}`;
    return new Promise<void>((resolve) => {
      const early = new Set<string>(); // accepted before the probe's own end is known
      let mine: string | null = null;
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.accepted = null;
        probe.destroy();
        resolve();
      };
      this.accepted = (sock) => {
        const k = key(sock.remoteAddress, sock.remotePort);
        if (mine === null) early.add(k);
        else if (k === mine) finish();
      };
      const probe = net.connect({ host, port: a.port }, () => {
        mine = key(probe.localAddress, probe.localPort);
        if (early.has(mine)) finish();
        early.clear();
      });
      probe.on("error", finish);
      const timer = setTimeout(finish, limit);
    });
  }

  /** Drains on SIGTERM and SIGINT, reloads on SIGHUP; returns a function that removes the handlers. */
  handleSignals(): () => void {
    const term = () => void this.close();
    const hup = () => void this.reload();
    process.on("SIGTERM", term);
    process.on("SIGINT", term);
    process.on("SIGHUP", hup);
    return () => {
      process.off("SIGTERM", term);
      process.off("SIGINT", term);
      process.off("SIGHUP", hup);
    };
  }

  private info(id: string, e: Entry): JSONObject {
    const o: JSONObject = { id, version: e.rs.ref.version, checksum: e.rs.ref.checksum, source: e.source };
    if (e.source === "source") {
      o.channels = e.rs.channels;
      o.missingOperators = e.rs.missingOperators;
    }
    return o;
  }

  private authorized(req: http.IncomingMessage): boolean {
    if (this.opts.allowOpen && !this.tokenDigest) return true;
    const h = req.headers.authorization ?? "";
    const m = /^bearer (.*)$/i.exec(h);
    if (!m || !this.tokenDigest) return false;
    return timingSafeEqual(digest(m[1]), this.tokenDigest);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, expectsContinue: boolean): void {
    this.inFlight++;
    const started = Date.now();
    const conn = this.conns.get(req.socket);
    if (conn) {
      conn.idle = false;
      conn.requests++;
    }
    res.on("close", () => {
      this.inFlight--;
      if (conn) conn.idle = true;
      this.opts.log?.({ level: "DEBUG", msg: "request", method: req.method, path: (req.url ?? "").split("?")[0], status: res.statusCode, ms: Date.now() - started });
    });
    this.route(req, res, expectsContinue).catch((e) => this.fail(res, e));
  }

  private fail(res: http.ServerResponse, e: unknown): void {
    let h: HttpError;
    if (e instanceof HttpError) h = e;
    else {
      this.opts.log?.({ level: "ERROR", msg: "internal error", error: e instanceof Error ? e.stack : String(e) });
      h = err(500, "INTERNAL", "an unexpected failure");
    }
    if (res.headersSent) return void res.destroy();
    if (h.status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="rules"');
    this.send(res, h.status, { error: { code: h.code, message: h.message, hint: h.hint } });
  }

  private send(res: http.ServerResponse, status: number, body: JSONValue | string, headers: Record<string, string> = {}): void {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    // once a drain has begun, every answer tells the client to reconnect elsewhere
    if (this.draining) res.setHeader("Connection", "close");
    res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse, expectsContinue: boolean): Promise<void> {
    const target = req.url ?? "/";
    const refused = requestRefusal(req.method ?? "", target, req.httpVersionMajor, req.httpVersionMinor, req.rawHeaders);
    if (refused) {
      res.setHeader("Connection", "close");
      throw new HttpError(refused.status, refused.code, refused.message, refused.hint);
    }
    const q = target.indexOf("?");
    const rawPath = q < 0 ? target : target.slice(0, q);
    const rawQuery = q < 0 ? "" : target.slice(q + 1);
    const decode = (s: string): string => {
      if (/%(?![0-9A-Fa-f]{2})/.test(s)) throw err(400, "BAD_REQUEST", "malformed percent-encoding");
      // percent-decoding into bytes; invalid UTF-8 still names an (unknown) id
      const bytes: number[] = [];
      for (let i = 0; i < s.length; i++) {
        if (s[i] === "%") {
          bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
          i += 2;
        } else bytes.push(...Buffer.from(s[i], "utf8"));
      }
      return Buffer.from(bytes).toString("utf8");
    };
    const segs = rawPath.split("/").slice(1).map(decode);
    const query = new Map<string, string>();
    if (rawQuery !== "") {
      for (const part of rawQuery.split("&")) {
        const eq = part.indexOf("=");
        const k = decode((eq < 0 ? part : part.slice(0, eq)).replace(/\+/g, " "));
        const v = decode((eq < 0 ? "" : part.slice(eq + 1)).replace(/\+/g, " "));
        if (!query.has(k)) query.set(k, v);
      }
    }
    const method = req.method ?? "GET";
    const only = (m: string) => {
      if (method !== m && !(m === "GET" && method === "HEAD")) throw err(405, "METHOD_NOT_ALLOWED", `${method} is not allowed here`);
    };
    const path = "/" + segs.join("/");
    // routing
    let kind: "livez" | "readyz" | "list" | "bundle" | "manifest" | "evaluate" | null = null;
    let id = "";
    if (path === "/livez") kind = "livez";
    else if (path === "/readyz") kind = "readyz";
    else if (path === "/rulesets") kind = "list";
    else if (path === "/evaluations") kind = "evaluate";
    else if (segs.length === 3 && segs[0] === "rulesets" && (segs[2] === "bundle" || segs[2] === "manifest") && segs[1] !== "") {
      kind = segs[2] as "bundle" | "manifest";
      id = segs[1];
    }
    if (!kind) throw err(404, "NOT_FOUND", `no route ${path}`);
    only(kind === "evaluate" ? "POST" : "GET");
    if (kind === "livez") return this.send(res, 200, { status: "ok" });
    if (kind === "readyz") {
      const ready = this.loadedOnce && this.rules.size > 0 && !this.draining;
      const missing = new Set<string>();
      for (const e of this.rules.values()) for (const o of e.rs.missingOperators) missing.add(o);
      const body: JSONObject = {
        status: this.draining ? "draining" : ready ? "ready" : "not_ready",
        rulesets: [...this.rules].map(([k, e]) => this.info(k, e)),
        missingOperators: [...missing].sort(),
      };
      if (this.lastReload) body.lastReload = this.lastReload as unknown as JSONObject;
      return this.send(res, ready ? 200 : 503, body);
    }
    if (!this.authorized(req)) throw err(401, "UNAUTHORIZED", "a valid bearer token is required");
    if (kind === "list") return this.send(res, 200, { items: [...this.rules].map(([k, e]) => this.info(k, e)) });
    if (kind === "bundle" || kind === "manifest") {
      if (id.length > 256) throw err(400, "BAD_REQUEST", "rulesetId is longer than 256 characters");
      let channel: Channel | null = null;
      if (kind === "manifest") {
        const c = query.get("channel");
        if (c !== "server" && c !== "client") throw err(400, "BAD_REQUEST", "channel must be server or client");
        channel = c;
      }
      const e = this.rules.get(id);
      if (!e) throw err(404, "NOT_FOUND", `no ruleset ${JSON.stringify(id)}`);
      const etag = `"${e.rs.ref.checksum}"`;
      let body: string;
      if (channel) {
        if (!e.rs.channels.includes(channel)) throw err(404, "CHANNEL_UNAVAILABLE", `ruleset ${id} has no ${channel} manifest`);
        let m = e.manifests.get(channel);
        if (!m) e.manifests.set(channel, (m = indentedJSON(e.rs.manifest(channel))));
        body = m;
      } else {
        if (!e.bundleText) throw err(404, "NOT_FOUND", `ruleset ${id} has no bundle`);
        body = e.bundleText;
      }
      const inm = req.headersDistinct["if-none-match"];
      if (inm && noneMatch(inm, etag)) {
        if (this.draining) res.setHeader("Connection", "close");
        res.writeHead(304, { ETag: etag });
        return void res.end();
      }
      return this.send(res, 200, body, { ETag: etag });
    }
    // POST /evaluations
    const ctype = (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    if (ctype !== "application/json") throw err(415, "UNSUPPORTED_MEDIA_TYPE", "the body must be application/json");
    const declared = Number(req.headers["content-length"] ?? "NaN");
    if (Number.isFinite(declared) && declared > this.maxBody) {
      res.setHeader("Connection", "close");
      throw err(413, "PAYLOAD_TOO_LARGE", `the body is larger than ${this.maxBody} bytes`);
    }
    if (expectsContinue) res.writeContinue();
    const body = await this.readBody(req, res);
    // text that is not well-formed UTF-8 or escapes a lone surrogate is malformed JSON
    // (spec/v1/README.md, "Text"), refused as a whole; the message names the byte offset
    let doc: JSONValue;
    let text = "";
    try {
      text = decodeUTF8(body);
      doc = parseJSON(text);
    } catch (e) {
      if (!(e instanceof JSONSyntaxError)) throw e;
      // where, as the Go server says it: line, column in characters, byte offset from 0
      // (text is "" when the body is not UTF-8: the offset then counts bytes)
      const before = text === "" ? body.subarray(0, e.offset).toString("utf8") : text.slice(0, e.offset);
      const at = text === "" ? e.offset : Buffer.byteLength(before);
      const lineStart = before.lastIndexOf("\n") + 1;
      const where = `line ${before.split("\n").length}, column ${[...before.slice(lineStart)].length + 1} (byte offset ${at})`;
      throw new HttpError(400, "BAD_REQUEST", `the request is not valid JSON: ${e.message.replace(/ at (offset|byte) \d+$/, "")} at ${where}`, `fix the JSON at ${where} of the body`);
    }
    const p = requestProblem(doc);
    if (p) throw err(400, "BAD_REQUEST", `${p.pointer || "the request"}: ${p.message}`);
    const rid = (doc as JSONObject).ruleset;
    if (typeof rid !== "string") throw err(400, "BAD_REQUEST", "ruleset is required");
    if (!this.loadedOnce) throw err(503, "NOT_READY", "the rules are not loaded");
    const e = this.rules.get(rid);
    if (!e) throw err(404, "NOT_FOUND", `no ruleset ${JSON.stringify(rid)}`);
    try {
      return this.send(res, 200, e.rs.evaluate(doc as JSONObject, "server") as unknown as JSONValue);
    } catch (x) {
      if (x instanceof RequestError) throw err(400, "BAD_REQUEST", `${x.pointer}: ${x.message}`);
      if (x instanceof ChannelError) throw err(404, "CHANNEL_UNAVAILABLE", x.message);
      if (x instanceof EvaluationError) throw err(422, "EVALUATION_ERROR", x.message);
      throw x;
    }
  }

  private readBody(req: http.IncomingMessage, res: http.ServerResponse): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      req.on("data", (c: Buffer) => {
        if (done) return;
        size += c.length;
        if (size > this.maxBody) {
          done = true;
          // answer now, without reading the rest, and close the connection
          res.setHeader("Connection", "close");
          req.pause();
          reject(err(413, "PAYLOAD_TOO_LARGE", `the body is larger than ${this.maxBody} bytes`));
          res.on("finish", () => req.socket.destroy());
          return;
        }
        chunks.push(c);
      });
      req.on("end", () => {
        if (done) return;
        done = true;
        resolve(Buffer.concat(chunks));
      });
      req.on("error", (e) => {
        if (done) return;
        done = true;
        reject(err(400, "BAD_REQUEST", `reading the body: ${e.message}`));
      });
    });
  }
}

/**
 * Creates a rule server. Throws synchronously unless it is given a token or allowOpen: true
 * (a server without a token serves every route to anyone).
 */
export function createRuleServer(opts: RuleServerOptions): RuleServer {
  if (!opts || (typeof opts.token !== "string" || opts.token === "") && opts.allowOpen !== true)
    throw new Error("createRuleServer needs a token (or allowOpen: true, for private networks only)");
  if (!opts.rulesDir && !opts.rulesets) throw new Error("createRuleServer needs rulesDir or rulesets");
  return new RuleServer(opts);
}
