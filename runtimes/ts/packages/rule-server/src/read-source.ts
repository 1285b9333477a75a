// Reads source rulesets as the rule server does and prints, per file, one JSON line: the JSON
// text, or the problems; the portability lint; and the position of every pointer that has one.
// The Go test TestYAMLReadersAgree (impl/rules/ruleserver) compares it with impl/rules/yamlrules.
// Not part of the package (package.json "files").

import { readFileSync } from "node:fs";
import { readYAML, jsonPositions } from "./source.js";

for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, "utf8");
  const pointers = (json: string): Record<string, { line: number; column: number }> => {
    const out: Record<string, { line: number; column: number }> = {};
    const walk = (v: unknown, ptr: string) => {
      out[ptr] = doc!.position(ptr);
      if (Array.isArray(v)) v.forEach((c, i) => walk(c, `${ptr}/${i}`));
      else if (v !== null && typeof v === "object") for (const [k, c] of Object.entries(v)) walk(c, `${ptr}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`);
    };
    walk(JSON.parse(json), "");
    return out;
  };
  let doc: ReturnType<typeof jsonPositions> = null;
  if (file.endsWith(".json")) {
    doc = jsonPositions(text);
    process.stdout.write(JSON.stringify({ file, json: doc?.json ?? null, lint: doc?.lint ?? [], positions: doc ? pointers(doc.json) : {} }) + "\n");
    continue;
  }
  const r = readYAML(text);
  if ("problems" in r) {
    process.stdout.write(JSON.stringify({ file, problems: r.problems }) + "\n");
    continue;
  }
  doc = r.doc;
  process.stdout.write(JSON.stringify({ file, json: r.doc.json, lint: r.doc.lint, positions: pointers(r.doc.json) }) + "\n");
}
