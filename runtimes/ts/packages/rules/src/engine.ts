#!/usr/bin/env node
// The engine protocol over standard input and output (protocol.md): `node dist/engine.js`
// (the word "engine" may follow, as in `rules engine`). One response line per request line;
// nothing else goes to standard output.

import { ProtocolSession } from "./protocol.js";
import { setCodeGeneration } from "./gen.js";

async function main(): Promise<void> {
  // SDODS_NO_CODEGEN=1: closures only, as under a Content-Security-Policy without unsafe-eval
  if (process.env.SDODS_NO_CODEGEN === "1") setCodeGeneration(false);
  const session = new ProtocolSession();
  // lines are split on line feeds as bytes and handed over undecoded: the session refuses a line
  // that is not well-formed UTF-8 (a decoding stream would repair it into U+FFFD)
  let pending: Buffer[] = [];
  const answer = async (line: Uint8Array): Promise<void> => {
    const out = session.handle(line);
    if (out !== null && !process.stdout.write(out + "\n")) await new Promise((r) => process.stdout.once("drain", r));
  };
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, from)) {
      const part = chunk.subarray(from, nl);
      from = nl + 1;
      if (pending.length > 0) {
        pending.push(part);
        const line = Buffer.concat(pending);
        pending = [];
        await answer(line);
      } else await answer(part);
    }
    if (from < chunk.length) pending.push(chunk.subarray(from));
  }
  if (pending.length > 0) await answer(Buffer.concat(pending));
}

main().then(
  () => process.exitCode = 0,
  (e) => {
    console.error(e);
    process.exitCode = 1;
  },
);
