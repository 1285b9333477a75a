#!/usr/bin/env node
// The engine protocol over standard input and output (protocol.md): `node dist/engine.js`
// (the word "engine" may follow, as in `rules engine`). One response line per request line;
// nothing else goes to standard output.

import { createInterface } from "node:readline";
import { ProtocolSession } from "./protocol.js";
import { setCodeGeneration } from "./gen.js";

async function main(): Promise<void> {
  // SDODS_NO_CODEGEN=1: closures only, as under a Content-Security-Policy without unsafe-eval
  if (process.env.SDODS_NO_CODEGEN === "1") setCodeGeneration(false);
  const session = new ProtocolSession();
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    const out = session.handle(line);
    if (out !== null) {
      if (!process.stdout.write(out + "\n")) await new Promise((r) => process.stdout.once("drain", r));
    }
  }
}

main().then(
  () => process.exitCode = 0,
  (e) => {
    console.error(e);
    process.exitCode = 1;
  },
);
