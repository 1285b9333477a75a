#!/usr/bin/env node
// sdods-rule-server: the embeddable rule server as a process, configured and logging like the Go
// rule server's command (cmd/ruleserver), so that one can replace the other: the same
// environment variables and flags, and one JSON log line per event on standard error.
//
//   RULE_SERVER_TOKEN (no flag: command lines are visible to every user of the machine)
//   RULE_SERVER_ALLOW_OPEN=1      serve without a token (private networks only)
//   -addr / RULE_SERVER_ADDR      host:port (default :8080)
//   -rules / RULE_SERVER_RULES_DIR  (RULES_DIR is read too) the rules directory (default rules)
//   -max-body / RULE_SERVER_MAX_BODY  request body limit in bytes (default 1 MiB)
//   -poll / RULE_SERVER_POLL_INTERVAL  how often the directory is checked (default 2s; 0 off)
//   -drain-delay / RULE_SERVER_DRAIN_DELAY  on SIGTERM, readiness off this long before the listener closes (default 0s)
//   -drain-timeout / RULE_SERVER_DRAIN_TIMEOUT  then in-flight requests get this long (default 20s)
//   -log-level / RULE_SERVER_LOG_LEVEL  debug (one line per request), info, warn or error (default info)
//
// Once listening it logs {"msg":"listening","addr":…} and prints "listening URL" on standard
// output. SIGTERM and SIGINT drain (exit 0, or 1 when the drain timed out); SIGHUP reloads. A
// configuration it refuses is one FATAL line and exit status 1.

import { createRuleServer } from "./index.js";

const LEVELS: Record<string, number> = { DEBUG: -4, INFO: 0, WARN: 4, ERROR: 8, FATAL: 12 };

let threshold = LEVELS.INFO;

function log(entry: Record<string, unknown>): void {
  const level = String(entry.level ?? "INFO");
  if ((LEVELS[level] ?? 0) < threshold) return;
  const { level: _l, msg, ...rest } = entry;
  console.error(JSON.stringify({ time: new Date().toISOString(), level, msg, ...rest }));
}

function fatal(msg: string): never {
  console.error(JSON.stringify({ time: new Date().toISOString(), level: "FATAL", msg }));
  process.exit(1);
}

/** Reads a Go duration ("2s", "500ms", "1m30s", "0s"; a bare number is milliseconds) as milliseconds. */
export function duration(s: string): number | null {
  const t = s.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };
  let total = 0;
  let rest = t;
  if (rest === "") return null;
  while (rest !== "") {
    const m = /^(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/.exec(rest);
    if (!m) return null;
    total += Number(m[1]) * unit[m[2]];
    rest = rest.slice(m[0].length);
  }
  return total;
}

async function main(): Promise<void> {
  const env = process.env;
  const cfg = {
    addr: env.RULE_SERVER_ADDR || ":8080",
    rules: env.RULE_SERVER_RULES_DIR || env.RULES_DIR || "rules",
    maxBody: env.RULE_SERVER_MAX_BODY || "",
    poll: env.RULE_SERVER_POLL_INTERVAL || "2s",
    drainDelay: env.RULE_SERVER_DRAIN_DELAY || "0s",
    drainTimeout: env.RULE_SERVER_DRAIN_TIMEOUT || "20s",
    logLevel: env.RULE_SERVER_LOG_LEVEL || "info",
  };
  const flags: Record<string, keyof typeof cfg> = {
    addr: "addr", rules: "rules", "max-body": "maxBody", poll: "poll", "drain-delay": "drainDelay", "drain-timeout": "drainTimeout", "log-level": "logLevel",
  };
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([a-z-]+)(?:=(.*))?$/.exec(args[i]);
    const key = m ? flags[m[1]] : undefined;
    if (!m || !key) fatal(`unknown argument ${JSON.stringify(args[i])}: flags are -addr, -rules, -max-body, -poll, -drain-delay, -drain-timeout, -log-level`);
    const v = m[2] ?? args[++i];
    if (v === undefined) fatal(`flag -${m[1]} needs a value`);
    cfg[key] = v;
  }
  const lvl = cfg.logLevel.toUpperCase();
  if (!(lvl in LEVELS) || lvl === "FATAL") fatal(`log level ${JSON.stringify(cfg.logLevel)}: want debug, info, warn or error`);
  threshold = LEVELS[lvl];

  const token = env.RULE_SERVER_TOKEN ?? "";
  const open = env.RULE_SERVER_ALLOW_OPEN ?? "";
  if (open !== "" && open !== "0" && open !== "1") fatal(`RULE_SERVER_ALLOW_OPEN=${JSON.stringify(open)}: only 1 opens the server`);
  const allowOpen = open === "1";
  if (!token && !allowOpen)
    fatal("RULE_SERVER_TOKEN is not set: refusing to start without a token (set RULE_SERVER_ALLOW_OPEN=1 to serve without one, on private networks only)");
  if (!token) log({ level: "WARN", msg: "serving every endpoint WITHOUT a token (RULE_SERVER_ALLOW_OPEN=1): for private networks only" });
  else if (allowOpen) log({ level: "INFO", msg: "RULE_SERVER_ALLOW_OPEN is ignored: RULE_SERVER_TOKEN is set" });

  const ms = (name: string, v: string): number => {
    const d = duration(v);
    if (d === null || d < 0) fatal(`${name}=${JSON.stringify(v)}: want a duration such as 2s`);
    return d;
  };
  let maxBody: number | undefined;
  if (cfg.maxBody !== "") {
    maxBody = Number(cfg.maxBody);
    if (!Number.isInteger(maxBody) || maxBody <= 0) fatal(`RULE_SERVER_MAX_BODY=${JSON.stringify(cfg.maxBody)}: want a positive number of bytes`);
  }
  const i = cfg.addr.lastIndexOf(":");
  const host = cfg.addr.slice(0, i).replace(/^\[|\]$/g, "");
  const port = Number(cfg.addr.slice(i + 1));
  if (i < 0 || !Number.isInteger(port) || port < 0 || port > 65535) fatal(`listen address ${JSON.stringify(cfg.addr)}: want host:port`);

  const server = createRuleServer({
    token: token || undefined,
    allowOpen,
    rulesDir: cfg.rules,
    maxBody,
    log,
    pollInterval: ms("RULE_SERVER_POLL_INTERVAL", cfg.poll),
    drainDelay: ms("RULE_SERVER_DRAIN_DELAY", cfg.drainDelay),
    drainTimeout: ms("RULE_SERVER_DRAIN_TIMEOUT", cfg.drainTimeout),
  });
  const url = await server.listen(port, host);
  const stop = (signal: string) => {
    log({ level: "INFO", msg: "shutting down", signal });
    void server.close().then((ok) => process.exit(ok ? 0 : 1));
  };
  process.on("SIGTERM", () => stop("terminated"));
  process.on("SIGINT", () => stop("interrupt"));
  process.on("SIGHUP", () => {
    log({ level: "INFO", msg: "SIGHUP: reloading" });
    void server.reload();
  });
  log({ level: "INFO", msg: "listening", addr: new URL(url).host, rules: cfg.rules, max_body: maxBody ?? 1 << 20, poll: cfg.poll });
  process.stdout.write(`listening ${url}\n`);
}

main().catch((e) => fatal(e instanceof Error ? e.message : String(e)));
