// Runs the file commands of `rules` — check, compile, manifest, evaluate FILE — on the five
// fixtures with a command under test (the WebAssembly module through wasi.mjs) and with a
// reference command (the native build), and fails on any difference: exit status, standard
// output, standard error, the bundle written. Compiled bundles must also equal the committed
// ones, and evaluations the fixtures' reviewed findings. The engine protocol is certified by
// `rulecheck conformance`; this covers what it cannot: reading and writing files.
//   usage: node conformance/files.mjs --reference "COMMAND" --engine "COMMAND"
// Run from the repository root (paths are given both relative to it and absolute).
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { isDeepStrictEqual } from "node:util";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { argv, exit } from "node:process";

const opt = (name) => {
  const i = argv.indexOf(name);
  return i > 0 && i + 1 < argv.length ? argv[i + 1].split(/\s+/).filter(Boolean) : null;
};
const reference = opt("--reference");
const engine = opt("--engine");
if (!reference || !engine) {
  console.error('usage: node conformance/files.mjs --reference "COMMAND" --engine "COMMAND"');
  exit(2);
}

const run = (cmd, args, input) =>
  new Promise((done) => {
    const child = execFile(cmd[0], [...cmd.slice(1), ...args], { maxBuffer: 1 << 26 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr });
    });
    child.stdin.on("error", () => {}); // a command that exits without reading its input
    child.stdin.end(input ?? "");
  });

const tmp = await mkdtemp(join(tmpdir(), "sdods-files-"));
const failures = [];
let checks = 0;

// same runs args with both commands; stderr is compared unless a system message (which the
// WebAssembly port words differently) is expected there. It returns the engine's outcome.
async function same(name, args, { input, stderr = true, code = 0 } = {}) {
  checks++;
  const [want, got] = await Promise.all([run(reference, args, input), run(engine, args, input)]);
  const diffs = [];
  if (got.code !== want.code) diffs.push(`exit status ${got.code}, the reference ${want.code}`);
  if (got.code !== code) diffs.push(`exit status ${got.code}, expected ${code}`);
  if (got.stdout !== want.stdout) diffs.push(`standard output differs:\n  got  ${clip(got.stdout)}\n  want ${clip(want.stdout)}`);
  if (stderr && got.stderr !== want.stderr) diffs.push(`standard error differs:\n  got  ${clip(got.stderr)}\n  want ${clip(want.stderr)}`);
  if (diffs.length) failures.push(`${name}: rules ${args.join(" ")}\n  ${diffs.join("\n  ")}`);
  return got;
}
const clip = (s) => JSON.stringify(s.length > 300 ? s.slice(0, 297) + "..." : s);
const fail = (name, why) => failures.push(`${name}: ${why}`);

const fixtures = (await readdir("conformance/fixtures", { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
for (const f of fixtures) {
  const dir = `conformance/fixtures/${f}`;
  const golden = JSON.parse(await readFile(`${dir}/evaluations.json`, "utf8"));
  const src = `${dir}/${golden.source}`;
  const bundle = `${dir}/${golden.bundle}`;
  const committed = await readFile(bundle);

  await same(f, ["check", src]);
  await same(f, ["check", resolve(src)]); // an absolute path
  // compile writes a bundle (through a temporary file and a rename): each command its own folder
  const out = { reference: join(tmp, f, "reference"), engine: join(tmp, f, "engine") };
  await mkdir(out.reference, { recursive: true });
  await mkdir(out.engine, { recursive: true });
  checks++;
  const [w, g] = await Promise.all([run(reference, ["compile", "-o", out.reference, src]), run(engine, ["compile", "-o", out.engine, src])]);
  if (w.code !== 0 || g.code !== 0) fail(f, `compile: exit status ${g.code} (reference ${w.code}): ${g.stderr}`);
  else {
    const written = await readFile(join(out.engine, golden.bundle));
    if (!written.equals(committed)) fail(f, `compile wrote a bundle that differs from ${bundle}`);
    if (g.stdout.replace(out.engine, "") !== w.stdout.replace(out.reference, "")) fail(f, `compile printed ${clip(g.stdout)}`);
  }
  await same(f, ["manifest", "-channel", "client", bundle]);
  await same(f, ["manifest", "-channel", "server", src]);

  // evaluate: the first request from a file, the second on standard input, both against the
  // fixture's reviewed findings
  const tests = golden.tests.slice(0, 2);
  for (const [i, t] of tests.entries()) {
    const channel = t.channel ? ["-channel", t.channel] : [];
    let got;
    if (i === 0) {
      const req = join(tmp, `${f}-${t.id}.json`);
      await writeFile(req, JSON.stringify(t.request));
      got = await same(`${f} ${t.id}`, ["evaluate", ...channel, bundle, req]);
    } else {
      got = await same(`${f} ${t.id}`, ["evaluate", ...channel, bundle, "-"], { input: JSON.stringify(t.request) });
    }
    if (got.code === 0) {
      const res = JSON.parse(got.stdout);
      if (!isDeepStrictEqual(res.findings, t.expected.findings) || !isDeepStrictEqual(res.states, t.expected.states)) {
        fail(`${f} ${t.id}`, `findings ${clip(JSON.stringify(res.findings))}, reviewed ${clip(JSON.stringify(t.expected.findings))}`);
      }
    }
  }
}

// YAML portability (spec/v1/ruleset.md §7): a warning when loading, a problem for check and
// --strict; and a missing file.
const yaml = join(tmp, "portable.yaml");
await writeFile(
  yaml,
  `ruleset:
  id: p
  version: "1"
  defaultLocale: en
  rules:
    - id: r
      code: ANSWER_NO
      scope: project
      target: {page: p}
      when: {op: "==", args: [{var: data.answer}, no]}
      message: m
  locales:
    en: {m: "M"}
`,
);
await same("portability", ["check", yaml], { code: 1 });
await same("portability", ["evaluate", yaml, "-"], { input: '{"data":{"answer":"no"}}' });
await same("portability", ["manifest", "--strict", yaml], { code: 1 });
await same("missing file", ["check", join(tmp, "absent.yaml")], { code: 1, stderr: false });

await rm(tmp, { recursive: true, force: true });
for (const f of failures) console.log(`FAIL ${f}`);
console.log(`${failures.length ? "FAIL" : "PASS"} ${checks - failures.length} of ${checks} file commands as the reference (${engine.join(" ")})`);
exit(failures.length ? 1 : 0);
