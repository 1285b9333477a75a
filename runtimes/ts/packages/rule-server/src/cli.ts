#!/usr/bin/env node
// sdods-rule-server: the embeddable rule server as a process, configured like the Go one:
// RULE_SERVER_TOKEN (or RULE_SERVER_ALLOW_OPEN=1), RULES_DIR, RULE_SERVER_ADDR (host:port,
// default 127.0.0.1:8080). Prints "listening URL" on standard output once ready; SIGTERM drains,
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
  });
  const url = await server.listen(port, host);
  process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
  process.on("SIGINT", () => void server.close().then(() => process.exit(0)));
  process.on("SIGHUP", () => void server.reload());
  process.stdout.write(`listening ${url}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
