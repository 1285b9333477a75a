// Runs a WASI preview 1 module (the rules command built for GOOS=wasip1 GOARCH=wasm) under
// Node's node:wasi with standard input, output and error passed through and the current
// directory preopened, so `node conformance/wasi.mjs dist/rules.wasm engine` speaks the engine
// protocol exactly as the native command does.
//   usage: node conformance/wasi.mjs MODULE.wasm [ARGS...]
import { readFile } from "node:fs/promises";
import { WASI } from "node:wasi";
import { argv, env, exit } from "node:process";

const [module, ...args] = argv.slice(2);
if (!module) {
  console.error("usage: node wasi.mjs MODULE.wasm [ARGS...]");
  exit(2);
}
const wasi = new WASI({
  version: "preview1",
  args: ["rules", ...args],
  env: { PATH: env.PATH ?? "" },
  preopens: { ".": "." },
  returnOnExit: true,
});
const wasm = await WebAssembly.compile(await readFile(module));
const instance = await WebAssembly.instantiate(wasm, wasi.getImportObject());
exit(wasi.start(instance));
