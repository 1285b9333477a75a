package pixeldiff_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sdods/sdods/impl/server/pixeldiff"
)

var update = flag.Bool("update", false, "rewrite the golden diff images under testdata/golden")

// pair is two images to compare, from testdata/pairs (Chromium screenshots of a page before and
// after a change, committed) or drawn here.
type pair struct {
	name          string
	before, after *image.NRGBA
}

func mustPNG(tb testing.TB, path string) *image.NRGBA {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	img, err := pixeldiff.DecodePNG(data)
	if err != nil {
		tb.Fatal(err)
	}
	return img
}

// disc draws an anti-aliased disc (coverage by 4×4 supersampling) of colour c over img.
func disc(img *image.NRGBA, cx, cy, r float64, c color.NRGBA) {
	for y := 0; y < img.Rect.Dy(); y++ {
		for x := 0; x < img.Rect.Dx(); x++ {
			n := 0
			for sy := 0; sy < 4; sy++ {
				for sx := 0; sx < 4; sx++ {
					dx, dy := float64(x)+(float64(sx)+0.5)/4-cx, float64(y)+(float64(sy)+0.5)/4-cy
					if dx*dx+dy*dy <= r*r {
						n++
					}
				}
			}
			if n == 0 {
				continue
			}
			bg := img.NRGBAAt(x, y)
			f := float64(n) / 16 * float64(c.A) / 255
			mix := func(a, b uint8) uint8 { return uint8(math.Round(float64(a)*(1-f) + float64(b)*f)) }
			img.SetNRGBA(x, y, color.NRGBA{mix(bg.R, c.R), mix(bg.G, c.G), mix(bg.B, c.B), max(bg.A, uint8(math.Round(f*255)))})
		}
	}
}

// line draws an anti-aliased line of width 1.5 (coverage by distance).
func line(img *image.NRGBA, x0, y0, x1, y1 float64, c color.NRGBA) {
	dx, dy := x1-x0, y1-y0
	l := math.Hypot(dx, dy)
	for y := 0; y < img.Rect.Dy(); y++ {
		for x := 0; x < img.Rect.Dx(); x++ {
			px, py := float64(x)+0.5-x0, float64(y)+0.5-y0
			t := (px*dx + py*dy) / (l * l)
			if t < 0 || t > 1 {
				continue
			}
			d := math.Abs(px*dy-py*dx) / l
			f := math.Min(1, math.Max(0, 1.25-d))
			if f == 0 {
				continue
			}
			bg := img.NRGBAAt(x, y)
			mix := func(a, b uint8) uint8 { return uint8(math.Round(float64(a)*(1-f) + float64(b)*f)) }
			img.SetNRGBA(x, y, color.NRGBA{mix(bg.R, c.R), mix(bg.G, c.G), mix(bg.B, c.B), 255})
		}
	}
}

func filled(w, h int, c color.NRGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return img
}

var white = color.NRGBA{255, 255, 255, 255}

// syntheticPairs draws pairs that exercise anti-aliasing, thresholds, transparency and sizes.
func syntheticPairs() []pair {
	var ps []pair
	{ // an anti-aliased disc moved by a third of a pixel: its edge is anti-aliasing only
		a, b := filled(120, 90, white), filled(120, 90, white)
		disc(a, 60, 45, 30, color.NRGBA{30, 60, 200, 255})
		disc(b, 60.33, 45, 30, color.NRGBA{30, 60, 200, 255})
		ps = append(ps, pair{"aa-disc-subpixel", a, b})
	}
	{ // anti-aliased strokes, one recoloured and one added
		a, b := filled(160, 120, white), filled(160, 120, white)
		for i, c := range []color.NRGBA{{0, 0, 0, 255}, {200, 30, 30, 255}, {20, 140, 60, 255}} {
			o := float64(i) * 30
			line(a, 10, 10+o, 150, 40+o, c)
			if i == 1 {
				c = color.NRGBA{30, 30, 200, 255}
			}
			line(b, 10, 10+o, 150, 40+o, c)
		}
		line(b, 20, 110, 140, 100, color.NRGBA{0, 0, 0, 255})
		ps = append(ps, pair{"aa-lines", a, b})
	}
	{ // noise: small and large changes of random pixels, around the threshold
		rng := rand.New(rand.NewPCG(1, 2))
		a := filled(100, 100, white)
		for i := range a.Pix {
			if i%4 != 3 {
				a.Pix[i] = uint8(rng.IntN(256))
			}
		}
		b := image.NewNRGBA(a.Rect)
		copy(b.Pix, a.Pix)
		for i := 0; i < 1500; i++ {
			p := 4 * rng.IntN(100*100)
			ch := p + rng.IntN(3)
			b.Pix[ch] = uint8(int(b.Pix[ch]) + rng.IntN(80) - 40)
		}
		ps = append(ps, pair{"noise", a, b})
	}
	{ // semi-transparent content: alpha changes blended over the checkerboard
		a, b := image.NewNRGBA(image.Rect(0, 0, 96, 64)), image.NewNRGBA(image.Rect(0, 0, 96, 64))
		for y := 0; y < 64; y++ {
			for x := 0; x < 96; x++ {
				a.SetNRGBA(x, y, color.NRGBA{uint8(x * 2), uint8(y * 3), 128, uint8(x * 255 / 95)})
				alpha := uint8(x * 255 / 95)
				if y > 32 {
					alpha = uint8(min(255, int(alpha)+30))
				}
				b.SetNRGBA(x, y, color.NRGBA{uint8(x * 2), uint8(y * 3), 128, alpha})
			}
		}
		disc(b, 48, 20, 10, color.NRGBA{0, 0, 0, 128})
		ps = append(ps, pair{"alpha", a, b})
	}
	{ // different sizes: padded with transparent pixels
		a, b := filled(80, 60, white), filled(70, 75, white)
		disc(a, 30, 30, 20, color.NRGBA{200, 0, 0, 255})
		disc(b, 30, 30, 20, color.NRGBA{200, 0, 0, 255})
		ps = append(ps, pair{"sizes", a, b})
	}
	{ // identical images: pixelmatch's fast path
		a := filled(64, 48, white)
		disc(a, 32, 24, 16, color.NRGBA{10, 10, 10, 255})
		b := image.NewNRGBA(a.Rect)
		copy(b.Pix, a.Pix)
		ps = append(ps, pair{"identical", a, b})
	}
	return ps
}

func screenshotPairs(tb testing.TB) []pair {
	dir := filepath.Join("testdata", "pairs")
	before := mustPNG(tb, filepath.Join(dir, "checkout-before.png"))
	return []pair{
		{"checkout-change", before, mustPNG(tb, filepath.Join(dir, "checkout-after.png"))},
		{"checkout-subpixel", before, mustPNG(tb, filepath.Join(dir, "checkout-subpixel.png"))},
		{"checkout-1280-change", mustPNG(tb, filepath.Join(dir, "checkout-1280-before.png")), mustPNG(tb, filepath.Join(dir, "checkout-1280-after.png"))},
	}
}

func allPairs(tb testing.TB) []pair { return append(screenshotPairs(tb), syntheticPairs()...) }

type optCase struct {
	name string
	opt  pixeldiff.Options
	js   map[string]any // the same options as pixelmatch takes them
}

func optionCases() []optCase {
	strict := pixeldiff.Defaults()
	strict.Threshold = 0
	aa := pixeldiff.Defaults()
	aa.IncludeAA = true
	loose := pixeldiff.Defaults()
	loose.Threshold, loose.Alpha = 0.3, 0.5
	loose.DiffColorAlt = &[3]uint8{0, 160, 0}
	plain := pixeldiff.Defaults()
	plain.PlainBackground, plain.DiffMask = true, true
	opaqueGray := pixeldiff.Defaults()
	opaqueGray.Alpha = 1
	// Greys out of 0..255 wrap around as in a JavaScript Uint8Array (a path of their own).
	wrap := pixeldiff.Defaults()
	wrap.Alpha = 2.5
	return []optCase{
		{"default", pixeldiff.Defaults(), map[string]any{}},
		{"threshold0", strict, map[string]any{"threshold": 0}},
		{"includeAA", aa, map[string]any{"includeAA": true}},
		{"loose-alt", loose, map[string]any{"threshold": 0.3, "alpha": 0.5, "diffColorAlt": []int{0, 160, 0}}},
		{"plain-mask", plain, map[string]any{"checkerboard": false, "diffMask": true}},
		{"alpha1", opaqueGray, map[string]any{"alpha": 1}},
		{"alpha-wrap", wrap, map[string]any{"alpha": 2.5}},
	}
}

// TestGolden compares each pair with the default options and checks the figures and the diff
// image against testdata/golden (refresh with -update).
func TestGolden(t *testing.T) {
	for _, p := range allPairs(t) {
		t.Run(p.name, func(t *testing.T) {
			res, err := pixeldiff.Diff(p.before, p.after, pixeldiff.Defaults())
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := pixeldiff.EncodePNG(&buf, res.Diff); err != nil {
				t.Fatal(err)
			}
			summary := fmt.Sprintf("%dx%d mismatch=%d ratio=%.6f sizeMismatch=%v\n", res.Width, res.Height, res.Mismatch, res.Ratio, res.SizeMismatch)
			golden := filepath.Join("testdata", "golden", p.name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden+".png", buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden+".txt", []byte(summary), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			if summary != string(want) {
				t.Errorf("got %s want %s", summary, want)
			}
			wantImg := mustPNG(t, golden+".png")
			if !bytes.Equal(wantImg.Pix, res.Diff.Pix) {
				t.Errorf("diff image differs from %s.png", golden)
			}
		})
	}
}

func TestExpectations(t *testing.T) {
	ps := map[string]pair{}
	for _, p := range allPairs(t) {
		ps[p.name] = p
	}
	count := func(name string, o pixeldiff.Options) pixeldiff.Result {
		t.Helper()
		r, err := pixeldiff.Diff(ps[name].before, ps[name].after, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	aa := pixeldiff.Defaults()
	aa.IncludeAA = true
	for _, c := range []struct {
		name string
		ok   func(def, withAA pixeldiff.Result) bool
		what string
	}{
		{"identical", func(d, a pixeldiff.Result) bool { return d.Mismatch == 0 && a.Mismatch == 0 }, "no mismatch"},
		{"aa-disc-subpixel", func(d, a pixeldiff.Result) bool { return d.Mismatch == 0 && a.Mismatch > 0 }, "only anti-aliasing: 0 by default, >0 with includeAA"},
		{"checkout-subpixel", func(d, a pixeldiff.Result) bool { return d.Mismatch < a.Mismatch }, "anti-aliased text edges left out by default"},
		{"checkout-change", func(d, a pixeldiff.Result) bool { return d.Mismatch > 100 }, "a recoloured button is a mismatch"},
		{"sizes", func(d, a pixeldiff.Result) bool {
			return d.SizeMismatch && d.Width == 80 && d.Height == 75 && d.Mismatch >= 10*60+15*70-10*15
		}, "the padding against visible pixels mismatches"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, a := count(c.name, pixeldiff.Defaults()), count(c.name, aa)
			if !c.ok(d, a) {
				t.Errorf("want %s; got %d (default) and %d (includeAA)", c.what, d.Mismatch, a.Mismatch)
			}
		})
	}
}

func TestCompareRefusesSizes(t *testing.T) {
	for _, c := range []struct {
		name    string
		a, b, o int
		w, h    int
	}{
		{"lengths", 16, 12, 0, 2, 2},
		{"output", 16, 16, 12, 2, 2},
		{"dimensions", 16, 16, 0, 3, 2},
		{"negative", 0, 0, 0, -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out []byte
			if c.o > 0 {
				out = make([]byte, c.o)
			}
			if _, err := pixeldiff.Compare(make([]byte, c.a), make([]byte, c.b), out, c.w, c.h, pixeldiff.Defaults()); !errors.Is(err, pixeldiff.ErrSize) {
				t.Errorf("got %v, want ErrSize", err)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	for name, data := range map[string][]byte{"empty": nil, "text": []byte("hello"), "truncated": []byte("\x89PNG\r\n\x1a\n\x00\x00")} {
		if _, err := pixeldiff.DecodePNG(data); !errors.Is(err, pixeldiff.ErrNotPNG) {
			t.Errorf("%s: got %v, want ErrNotPNG", name, err)
		}
	}
}

// pixelmatchDir returns bench/pixelmatch with its node_modules installed, or skips.
func pixelmatchDir(tb testing.TB) string {
	tb.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		tb.Skip("node is not installed")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "bench", "pixelmatch"))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "pixelmatch")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Skipf("npm ci in bench/pixelmatch: %v\n%s", err, out)
		}
	}
	return dir
}

type jsResult struct {
	Name       string  `json:"name"`
	Width      int     `json:"width"`
	Height     int     `json:"height"`
	Mismatch   int     `json:"mismatch"`
	DiffSHA256 string  `json:"diffSha256"`
	NsPerOp    float64 `json:"nsPerOp"`
}

// runPixelmatch runs bench/pixelmatch/compare.mjs on the pairs (written as PNG files).
func runPixelmatch(tb testing.TB, dir string, ps []pair, opts map[string]any, iterations int) map[string]jsResult {
	tb.Helper()
	tmp := tb.TempDir()
	type jsPair struct{ Name, Before, After string }
	var in struct {
		Pairs      []map[string]string `json:"pairs"`
		Options    map[string]any      `json:"options"`
		Iterations int                 `json:"iterations"`
	}
	in.Options, in.Iterations = opts, iterations
	for _, p := range ps {
		jp := jsPair{p.name, filepath.Join(tmp, p.name+"-before.png"), filepath.Join(tmp, p.name+"-after.png")}
		for path, img := range map[string]*image.NRGBA{jp.Before: p.before, jp.After: p.after} {
			var buf bytes.Buffer
			if err := pixeldiff.EncodePNG(&buf, img); err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		in.Pairs = append(in.Pairs, map[string]string{"name": jp.Name, "before": jp.Before, "after": jp.After})
	}
	data, _ := json.Marshal(in)
	cmd := exec.Command("node", "compare.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("node compare.mjs: %v\n%s", err, stderr.String())
	}
	var res []jsResult
	if err := json.Unmarshal(out, &res); err != nil {
		tb.Fatalf("node output %q: %v", out, err)
	}
	m := map[string]jsResult{}
	for _, r := range res {
		m[r.Name] = r
	}
	return m
}

// TestMatchesPixelmatch runs pixelmatch (bench/pixelmatch, pinned) on every pair with several
// option sets: the mismatch counts and the diff images' bytes must be identical.
func TestMatchesPixelmatch(t *testing.T) {
	dir := pixelmatchDir(t)
	ps := allPairs(t)
	for _, oc := range optionCases() {
		t.Run(oc.name, func(t *testing.T) {
			js := runPixelmatch(t, dir, ps, oc.js, 0)
			for _, p := range ps {
				res, err := pixeldiff.Diff(p.before, p.after, oc.opt)
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(res.Diff.Pix)
				j := js[p.name]
				if res.Mismatch != j.Mismatch || res.Width != j.Width || res.Height != j.Height {
					t.Errorf("%s: %dx%d mismatch %d, pixelmatch %dx%d mismatch %d", p.name, res.Width, res.Height, res.Mismatch, j.Width, j.Height, j.Mismatch)
				}
				if hex.EncodeToString(sum[:]) != j.DiffSHA256 {
					t.Errorf("%s: the diff image differs from pixelmatch's", p.name)
				}
			}
		})
	}
}

var benchTable = flag.Bool("bench-table", false, "print the Go and pixelmatch timings of every pair as a Markdown table (docs/benchmarks.md)")

// TestBenchTable prints the side-by-side table of docs/benchmarks.md: go test ./impl/server/pixeldiff
// -run TestBenchTable -bench-table -v.
func TestBenchTable(t *testing.T) {
	if !*benchTable {
		t.Skip("run with -bench-table")
	}
	dir := pixelmatchDir(t)
	ps := allPairs(t)
	js := runPixelmatch(t, dir, ps, map[string]any{}, 200)
	var b strings.Builder
	fmt.Fprintf(&b, "| pair | size | mismatch (sdods) | mismatch (pixelmatch) | sdods ns/op | pixelmatch ns/op | speed-up |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, p := range ps {
		a, bb := pixeldiff.Pad(p.before, max(p.before.Rect.Dx(), p.after.Rect.Dx()), max(p.before.Rect.Dy(), p.after.Rect.Dy())),
			pixeldiff.Pad(p.after, max(p.before.Rect.Dx(), p.after.Rect.Dx()), max(p.before.Rect.Dy(), p.after.Rect.Dy()))
		w, h := a.Rect.Dx(), a.Rect.Dy()
		out := make([]byte, len(a.Pix))
		var n int
		r := testing.Benchmark(func(tb *testing.B) {
			for tb.Loop() {
				n, _ = pixeldiff.Compare(a.Pix, bb.Pix, out, w, h, pixeldiff.Defaults())
			}
		})
		j := js[p.name]
		goNs := float64(r.T.Nanoseconds()) / float64(r.N)
		fmt.Fprintf(&b, "| %s | %dx%d | %d | %d | %.0f | %.0f | %.1f× |\n", p.name, w, h, n, j.Mismatch, goNs, j.NsPerOp, j.NsPerOp/goNs)
	}
	t.Log("\n" + b.String())
}

// BenchmarkCompare measures Compare with a diff image on each pair (decoded beforehand, as
// pixelmatch takes decoded pixels).
func BenchmarkCompare(b *testing.B) {
	for _, p := range allPairs(b) {
		w, h := max(p.before.Rect.Dx(), p.after.Rect.Dx()), max(p.before.Rect.Dy(), p.after.Rect.Dy())
		x, y := pixeldiff.Pad(p.before, w, h), pixeldiff.Pad(p.after, w, h)
		out := make([]byte, len(x.Pix))
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(len(x.Pix)))
			for b.Loop() {
				if _, err := pixeldiff.Compare(x.Pix, y.Pix, out, w, h, pixeldiff.Defaults()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzDiffPNG decodes two fuzzed PNG images and compares them: nothing panics, the figures stay
// within bounds, and an image compared with itself has no mismatch.
func FuzzDiffPNG(f *testing.F) {
	small := func(img *image.NRGBA) []byte {
		var buf bytes.Buffer
		_ = pixeldiff.EncodePNG(&buf, img)
		return buf.Bytes()
	}
	for _, p := range syntheticPairs() {
		if p.before.Rect.Dx()*p.before.Rect.Dy() <= 120*90 {
			f.Add(small(p.before), small(p.after))
		}
	}
	f.Add([]byte("\x89PNG\r\n\x1a\n"), []byte{})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		for _, d := range [][]byte{a, b} {
			if cfg, err := pngConfig(d); err == nil && cfg > 1<<20 {
				return // keep the fuzzer fast: large images add nothing
			}
		}
		res, _, err := pixeldiff.DiffPNG(a, b, pixeldiff.Defaults())
		if err != nil {
			return
		}
		if res.Mismatch < 0 || res.Mismatch > res.Width*res.Height || res.Ratio < 0 || res.Ratio > 1 {
			t.Fatalf("figures out of bounds: %+v", res)
		}
		self, _, err := pixeldiff.DiffPNG(a, a, pixeldiff.Defaults())
		if err != nil || self.Mismatch != 0 {
			t.Fatalf("an image against itself: %d, %v", self.Mismatch, err)
		}
	})
}

func pngConfig(data []byte) (int, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	return cfg.Width * cfg.Height, nil
}

// sixteenBit returns 16-bit PNGs of the formats image/png writes — grey, RGB (opaque), RGBA —
// with samples whose high byte alone would round wrongly (0x00C8 is 1 in 8 bits, not 0), and a
// second RGB image that differs from the first by a little in some pixels.
func sixteenBit(t *testing.T) map[string][]byte {
	t.Helper()
	const w, h = 40, 30
	grey := image.NewGray16(image.Rect(0, 0, w, h))
	rgb, rgb2 := image.NewRGBA64(image.Rect(0, 0, w, h)), image.NewRGBA64(image.Rect(0, 0, w, h))
	rgba := image.NewNRGBA64(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := uint16((x*1733 + y*977) * 7 % 65536)
			grey.SetGray16(x, y, color.Gray16{Y: v})
			c := color.RGBA64{R: v, G: 65535 - v, B: uint16(x * 0x80), A: 0xffff}
			rgb.SetRGBA64(x, y, c)
			if (x+y)%5 == 0 {
				c.R += 0x0180 // about one 8-bit step: rounding decides whether it is a change
			}
			rgb2.SetRGBA64(x, y, c)
			rgba.SetNRGBA64(x, y, color.NRGBA64{R: v, G: uint16(y * 0x0101), B: 0x00C8, A: uint16(0x8080 + x*0x100)})
		}
	}
	grey.SetGray16(0, 0, color.Gray16{Y: 0x00C8})
	out := map[string][]byte{}
	for name, img := range map[string]image.Image{"grey16": grey, "rgb16": rgb, "rgb16-changed": rgb2, "rgba16": rgba} {
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		out[name] = buf.Bytes()
	}
	return out
}

// TestDecodeMatchesPngjs is issue 18 item 12: DecodePNG gives the very bytes pngjs gives for 16-bit
// PNGs (rounded, not truncated to the high byte), and DiffPNG of two 16-bit images counts what
// pixelmatch counts on pngjs's decoding of the same files.
func TestDecodeMatchesPngjs(t *testing.T) {
	dir := pixelmatchDir(t)
	tmp := t.TempDir()
	files := sixteenBit(t)
	var in struct {
		Decode []string `json:"decode"`
	}
	paths := map[string]string{}
	for name, data := range files {
		p := filepath.Join(tmp, name+".png")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths[p] = name
		in.Decode = append(in.Decode, p)
	}
	data, _ := json.Marshal(in)
	cmd := exec.Command("node", "compare.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node compare.mjs: %v", err)
	}
	var decoded []struct {
		Path          string
		Width, Height int
		SHA256        string
	}
	if err := json.Unmarshal(out, &decoded); err != nil || len(decoded) != len(files) {
		t.Fatalf("node output %q: %v", out, err)
	}
	for _, d := range decoded {
		name := paths[d.Path]
		img, err := pixeldiff.DecodePNG(files[name])
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(img.Pix)
		if hex.EncodeToString(sum[:]) != d.SHA256 || img.Rect.Dx() != d.Width || img.Rect.Dy() != d.Height {
			t.Errorf("%s: DecodePNG differs from pngjs", name)
		}
		if name == "grey16" && img.Pix[0] != 1 {
			t.Errorf("grey 0x00C8 decodes to %d, pngjs gives 1", img.Pix[0])
		}
	}
	in2 := map[string]any{"pairs": []map[string]string{{"name": "rgb16", "before": filepath.Join(tmp, "rgb16.png"), "after": filepath.Join(tmp, "rgb16-changed.png")},
		{"name": "grey-vs-black", "before": filepath.Join(tmp, "grey16.png"), "after": filepath.Join(tmp, "grey16.png")}}, "options": map[string]any{}}
	data, _ = json.Marshal(in2)
	cmd = exec.Command("node", "compare.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(data)
	if out, err = cmd.Output(); err != nil {
		t.Fatalf("node compare.mjs: %v", err)
	}
	var js []jsResult
	if err := json.Unmarshal(out, &js); err != nil || len(js) != 2 {
		t.Fatalf("node output %q: %v", out, err)
	}
	res, _, err := pixeldiff.DiffPNG(files["rgb16"], files["rgb16-changed"], pixeldiff.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if res.Mismatch != js[0].Mismatch || res.Mismatch == 0 {
		t.Errorf("16-bit RGB pair: mismatch %d, pixelmatch %d", res.Mismatch, js[0].Mismatch)
	}
}
