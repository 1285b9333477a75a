// Where the tests find the repository's shared data (the conformance fixtures, the pattern cases).
import { fileURLToPath } from "node:url";
import { readFileSync } from "node:fs";

/** The repository root, from dist/test of the rules package. */
export const repoRoot = fileURLToPath(new URL("../../../../../../", import.meta.url));

/** Reads a file of the repository as text. */
export function repoFile(path: string): string {
  return readFileSync(repoRoot + path, "utf8");
}
