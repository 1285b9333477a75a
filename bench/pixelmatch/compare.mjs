// Runs pixelmatch on image pairs for impl/server/pixeldiff: its equality test and the side-by-side benchmark.
// Input (stdin, JSON): {"pairs": [{"name", "before", "after"}], "options": {"threshold", "includeAA"}, "iterations"}
// with PNG file paths. Images of different sizes are padded at the right and bottom with transparent
// pixels, as impl/server/pixeldiff does. Output (stdout, JSON): one entry per pair with the mismatch count,
// the SHA-256 of the diff image's RGBA bytes and, when iterations > 0, nanoseconds per comparison.
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { PNG } from 'pngjs';
import pixelmatch from 'pixelmatch';

const input = JSON.parse(readFileSync(0, 'utf8'));
// {"decode": [paths]}: what pngjs decodes each PNG to (size and the SHA-256 of its RGBA bytes),
// for impl/server/pixeldiff's decoder test (16-bit samples, grey, palettes).
if (input.decode) {
  const decoded = input.decode.map((path) => {
    const img = PNG.sync.read(readFileSync(path));
    return { path, width: img.width, height: img.height, sha256: createHash('sha256').update(img.data).digest('hex') };
  });
  process.stdout.write(JSON.stringify(decoded) + '\n');
  process.exit(0);
}
const options = input.options || {};
const iterations = input.iterations || 0;

function pad(img, w, h) {
  if (img.width === w && img.height === h) return img.data;
  const out = Buffer.alloc(w * h * 4);
  for (let y = 0; y < img.height; y++) img.data.copy(out, y * w * 4, y * img.width * 4, (y + 1) * img.width * 4);
  return out;
}

const results = [];
for (const p of input.pairs) {
  const a = PNG.sync.read(readFileSync(p.before));
  const b = PNG.sync.read(readFileSync(p.after));
  const w = Math.max(a.width, b.width), h = Math.max(a.height, b.height);
  const da = pad(a, w, h), db = pad(b, w, h);
  const out = Buffer.alloc(w * h * 4);
  const mismatch = pixelmatch(da, db, out, w, h, options);
  const r = { name: p.name, width: w, height: h, mismatch, diffSha256: createHash('sha256').update(out).digest('hex') };
  if (iterations > 0) {
    for (let i = 0; i < Math.min(iterations, 20); i++) pixelmatch(da, db, out, w, h, options); // warm-up (JIT)
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) pixelmatch(da, db, out, w, h, options);
    r.nsPerOp = Number(process.hrtime.bigint() - t0) / iterations;
  }
  results.push(r);
}
process.stdout.write(JSON.stringify(results) + '\n');
