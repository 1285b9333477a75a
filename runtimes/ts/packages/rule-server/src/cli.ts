#!/usr/bin/env node
// sdods-rule-server: the embeddable rule server as a process, configured like the Go one:
// RULE_SERVER_TOKEN (or RULE_SERVER_ALLOW_OPEN=1), RULES_DIR, RULE_SERVER_ADDR (host:port,
// default 127.0.0.1:8080), RULE_SERVER_MAX_BODY, RULE_SERVER_POLL_INTERVAL (default 2s). Prints "listening URL" on standard output once ready; SIGTERM drains,
// SIGHUP reloads.

import { createRuleServer } from "./index.js";

async function main(): Promise<void> {
  const token = process.env.RULE_SERVER_TOKEN ?? "";
  const allowOpen = process.env.RULE_SERVER_ALLOW_OPEN === "1";
  if (!token && !allowOpen) {
    console.error(JSON.stringify({ level: "fatal", msg: "RULE_SERVER_TOKEN is not set (RULE_SERVER_ALLOW_OPEN=1 serves without one, private networks only)" }));
    process.exit(1);
  }
  const addr = process.env.RULE_SERVER_ADDR ?? "127.0.0.1:8080";
  const i = addr.lastIndexOf(":");
  const host = addr.slice(0, i) || "127.0.0.1";
  const port = Number(addr.slice(i + 1));
  const server = createRuleServer({
    token: token || undefined,
    allowOpen,
    rulesDir: process.env.RULES_DIR ?? "rules",
    maxBody: process.env.RULE_SERVER_MAX_BODY ? Number(process.env.RULE_SERVER_MAX_BODY) : undefined,
    log: (e) => console.error(JSON.stringify(e)),
    pollInterval: process.env.RULE_SERVER_POLL_INTERVAL ? duration(process.env.RULE_SERVER_POLL_INTERVAL) : undefined,
  });
  const url = await server.listen(port, host);
  process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
  process.on("SIGINT", () => void server.close().then(() => process.exit(0)));
  process.on("SIGHUP", () => void server.reload());
  process.stdout.write(`listening ${url}\n`);
}

/** Reads a Go duration ("2s", "500ms", "1m30s", "0s", or a number of milliseconds) as milliseconds. */
function duration(s: string): number {
  const t = s.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t);
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };
  let total = 0;
  let rest = t;
  while (rest !== "") {
    const m = /^(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/.exec(rest);
    if (!m) throw new Error(`RULE_SERVER_POLL_INTERVAL: ${s} is not a duration such as 2s or 500ms`);
    total += Number(m[1]) * unit[m[2]];
    rest = rest.slice(m[0].length);
  }
  return total;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
