// Runs a WASI preview 1 module (the rules command built for GOOS=wasip1 GOARCH=wasm) under
// Node's node:wasi with standard input, output and error passed through and the file system
// visible as the native command sees it, so `node conformance/wasi.mjs dist/rules.wasm engine`
// speaks the engine protocol, and `… rules.wasm check|compile|manifest|evaluate FILE` reads and
// writes files, exactly as the native command does.
//   usage: node conformance/wasi.mjs MODULE.wasm [ARGS...]
//
// The mount: on Linux and macOS the host's root directory is preopened as "/" and PWD is the
// current directory, so relative and absolute paths both mean what they mean natively. (A
// preopen named "." is not enough: Go's wasip1 port resolves every path against an absolute
// preopen name, and finds none for ".", which fails with EBADF, "Bad file number".) On Windows,
// whose paths have drive letters, the current directory is preopened as "/": relative paths
// work, absolute ones do not.
import { readFile } from "node:fs/promises";
import { WASI } from "node:wasi";
import { argv, cwd, env, exit, platform } from "node:process";

const [module, ...args] = argv.slice(2);
if (!module) {
  console.error("usage: node wasi.mjs MODULE.wasm [ARGS...]");
  exit(2);
}
const windows = platform === "win32";
const wasi = new WASI({
  version: "preview1",
  args: ["rules", ...args],
  env: windows ? { PATH: env.PATH ?? "" } : { PATH: env.PATH ?? "", PWD: cwd() },
  preopens: windows ? { "/": cwd() } : { "/": "/" },
  returnOnExit: true,
});
const wasm = await WebAssembly.compile(await readFile(module));
const instance = await WebAssembly.instantiate(wasm, wasi.getImportObject());
exit(wasi.start(instance));
