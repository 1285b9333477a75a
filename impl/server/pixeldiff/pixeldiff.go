// Package pixeldiff compares two images pixel by pixel by the method of pixelmatch 7.2
// (https://github.com/mapbox/pixelmatch): a YIQ colour distance against a threshold, with
// anti-aliased pixels detected (V. Vysniauskas, "Anti-aliased Pixel and Intensity Slope Detector",
// 2009) and left out of the count. For the same inputs and options it counts exactly the pixels
// pixelmatch counts and draws the same diff image; a test runs pixelmatch to keep it so.
//
// pixelmatch refuses images of different sizes. Diff does not: it pads both images to the larger
// width and height with transparent pixels and compares them as pixelmatch would compare the
// padded images, so a padded pixel against a visible one is a mismatch (Result.SizeMismatch tells).
package pixeldiff

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// Options are pixelmatch's options. Start from Defaults: the zero value means threshold 0 and a
// fully transparent (white) background in the diff.
type Options struct {
	// Threshold is the largest YIQ distance (0..1, relative to black against white) at which two
	// pixels still count as equal; pixelmatch's default is 0.1.
	Threshold float64
	// IncludeAA counts anti-aliased pixels as mismatches instead of leaving them out.
	IncludeAA bool
	// Alpha is the opacity (0..1) of the first image drawn in grey under the diff; default 0.1.
	Alpha float64
	// AAColor draws the anti-aliased pixels that were left out; default yellow.
	AAColor [3]uint8
	// DiffColor draws mismatched pixels; DiffColorAlt those darker in the second image (when
	// nil, DiffColor).
	DiffColor    [3]uint8
	DiffColorAlt *[3]uint8
	// DiffMask draws only the mismatches, over a transparent background.
	DiffMask bool
	// PlainBackground blends semi-transparent pixels over white instead of pixelmatch's default
	// checkerboard (pixelmatch's checkerboard: false).
	PlainBackground bool
}

// Defaults returns pixelmatch's default options.
func Defaults() Options {
	return Options{Threshold: 0.1, Alpha: 0.1, AAColor: [3]uint8{255, 255, 0}, DiffColor: [3]uint8{255, 0, 0}}
}

// ErrSize is returned by Compare when the buffers do not hold width×height RGBA pixels each.
var ErrSize = errors.New("image sizes do not match")

// Compare counts the pixels of a and b (non-premultiplied RGBA, 4 bytes a pixel, rows without
// padding, width×height pixels each) that differ, as pixelmatch(a, b, out, width, height) does;
// out, when not nil, receives the diff image (same size). It refuses buffers of other lengths.
func Compare(a, b, out []byte, width, height int, o Options) (int, error) {
	if width < 0 || height < 0 {
		return 0, fmt.Errorf("%w: negative width or height", ErrSize)
	}
	n := width * height
	if len(a) != len(b) || (out != nil && len(out) != len(a)) {
		return 0, fmt.Errorf("%w: %d and %d bytes", ErrSize, len(a), len(b))
	}
	if len(a) != 4*n {
		return 0, fmt.Errorf("%w: %d bytes for %dx%d pixels", ErrSize, len(a), width, height)
	}
	if n == 0 {
		return 0, nil
	}
	a, b = aligned(a[:4*n:4*n]), aligned(b[:4*n:4*n])
	a32, b32 := words(a), words(b)
	b32 = b32[:len(a32)]
	var o32 []uint32 // nil when the diff image is not drawn
	if out != nil {
		out = out[: 4*n : 4*n]
		o32 = words(aligned(out))
		defer func() {
			if unsafe.SliceData(o32) != (*uint32)(unsafe.Pointer(unsafe.SliceData(out))) {
				copy(out, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(o32))), 4*n))
			}
		}()
	}
	g := newGrayer(o.Alpha, a32[0])
	if string(a) == string(b) { // identical: the fast path of pixelmatch
		if out != nil && !o.DiffMask {
			for s := 0; s < len(a32); s += chunk {
				e := min(s+chunk, len(a32))
				g.draw(a32[s:e], o32[s:e])
			}
		}
		return 0, nil
	}
	c := comparison{
		a: a32, b: b32, width: width, height: height,
		// 35215 is the largest value the YIQ distance takes (black against white).
		maxDelta: 35215 * o.Threshold * o.Threshold,
		checker:  !o.PlainBackground,
		aa:       !o.IncludeAA,
	}
	aaPix := opaque(o.AAColor)
	diffPix := opaque(o.DiffColor)
	altPix := diffPix
	if o.DiffColorAlt != nil {
		altPix = opaque(*o.DiffColorAlt)
	}
	return c.run(a, b, o32, out != nil && !o.DiffMask, &g, aaPix, diffPix, altPix), nil
}

// comparison is one comparison of two images of equal size, as 32-bit pixel words.
type comparison struct {
	a, b          []uint32
	width, height int
	maxDelta      float64
	checker       bool // blend semi-transparent pixels over the checkerboard, not white
	aa            bool // leave anti-aliased pixels out
}

// chunk is the number of pixels compared at a time: small enough for its list of unequal
// pixels to live on the stack, large enough for the equality test of a whole chunk to pay.
const chunk = 512

// run counts the differing pixels and draws them into out (unless nil); with drawGray it draws
// the whole diff image: the first image in grey, differences and excluded anti-aliasing.
//
// Each chunk is drawn in grey first, then its unequal pixels are listed without a branch (random
// content makes "equal?" unpredictable), then only those are compared and drawn over the grey.
// ab and bb are the images' bytes, for the equality test of a chunk.
func (c *comparison) run(ab, bb []byte, out []uint32, drawGray bool, g *grayer, aaPix, diffPix, altPix uint32) int {
	a, b := c.a, c.b[:len(c.a)]
	diff := 0
	var idx [chunk]int32
	for s := 0; s < len(a); s += chunk {
		e := min(s+chunk, len(a))
		ca, cb := a[s:e], b[s:e]
		if drawGray {
			g.draw(ca, out[s:e])
		}
		if string(ab[4*s:4*e]) == string(bb[4*s:4*e]) {
			continue
		}
		n := 0
		cb = cb[:len(ca)]
		for j, p := range ca {
			idx[n&(chunk-1)] = int32(j)
			x := uint64(p ^ cb[j])
			n += int((x | -x) >> 63) // 1 when p != cb[j]
		}
		for _, j := range idx[:n] {
			i := s + int(j)
			delta := colorDelta(ca[j], cb[j], 4*i, c.checker)
			if math.Abs(delta) <= c.maxDelta {
				continue // similar: grey, drawn already
			}
			if c.aa {
				x, y := i%c.width, i/c.width
				if antialiased(a, b, x, y, c.width, c.height, c.checker) || antialiased(b, a, x, y, c.width, c.height, c.checker) {
					if drawGray {
						out[i] = aaPix
					}
					continue
				}
			}
			if out != nil {
				out[i] = diffPix
				if delta < 0 {
					out[i] = altPix
				}
			}
			diff++
		}
	}
	return diff
}

// aligned returns p, or a copy of it when it does not start at a multiple of 4 bytes (so that
// it can be read as 32-bit words).
func aligned(p []byte) []byte {
	if uintptr(unsafe.Pointer(unsafe.SliceData(p)))%4 == 0 {
		return p
	}
	c := make([]byte, len(p))
	copy(c, p)
	return c
}

// words views p (aligned, a multiple of 4 bytes long) as one 32-bit word per pixel, in the
// machine's byte order (channels and pix convert).
func words(p []byte) []uint32 {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(p))), len(p)/4)
}

// pix returns the word of an RGBA pixel.
func pix(r, g, b, a uint8) uint32 {
	p := uint32(r) | uint32(g)<<8 | uint32(b)<<16 | uint32(a)<<24
	if !littleEndian {
		p = bits.ReverseBytes32(p)
	}
	return p
}

// channels returns the red, green, blue and alpha of a pixel word.
func channels(p uint32) (r, g, b, a int) {
	if !littleEndian {
		p = bits.ReverseBytes32(p)
	}
	return int(p & 0xff), int(p >> 8 & 0xff), int(p >> 16 & 0xff), int(p >> 24)
}

func opaque(c [3]uint8) uint32 { return pix(c[0], c[1], c[2], 255) }

// grayer draws similar pixels: the first image's luma blended with white at alpha.
type grayer struct {
	alpha          float64
	last, lastGray uint32 // the last pixel drawn and its grey
	// each tells that colours changed often in the last pixels drawn: each pixel's grey is
	// computed then, instead of comparing it with the last one first.
	each bool
}

func newGrayer(alpha float64, first uint32) grayer {
	g := grayer{alpha: alpha, last: first}
	g.lastGray = g.of(first)
	return g
}

// of is the diff image's pixel for a similar pixel p of the first image (pixelmatch's
// drawGrayPixel, operation by operation; explicit conversions keep the compiler from fusing
// multiply-adds, which would round differently).
func (g *grayer) of(p uint32) uint32 {
	r, gr, b, a := channels(p)
	l := float64(float64(float64(r)*0.29889531)+float64(float64(gr)*0.58662247)) + float64(float64(b)*0.11448223)
	v := 255 + float64(float64(float64(l-255)*g.alpha)*float64(a))/255
	return grayPix(uint32(toUint8(v)))
}

// grayPix returns the opaque pixel word of grey c (0..255) without going through memory.
func grayPix(c uint32) uint32 {
	if !littleEndian {
		return c*0x01010100 | 0xff
	}
	return c*0x010101 | 0xff000000
}

// draw draws every pixel of a in grey into out, by one of two loops of the same result: runs of
// a colour (screenshots) or a colour each (noise, gradients), as the previous call found.
func (g *grayer) draw(a, out []uint32) {
	// For alpha in 0..1 every grey is in 0..255 (each operation is monotonic: at least
	// 255 + (0-255)*1*255/255 = 0, at most 255 + 0.0000026), converted as JavaScript does by
	// truncation; the loops leave out toUint8's checks.
	if !(g.alpha >= 0 && g.alpha <= 1) {
		for i, p := range a {
			out[i] = g.of(p)
		}
		g.last, g.lastGray = a[len(a)-1], out[len(a)-1]
		return
	}
	var changes int
	if g.each {
		changes = g.drawEach(a, out)
	} else {
		changes = g.drawRuns(a, out)
	}
	g.each = changes > len(a)/4
}

// drawRuns is draw for pixels that mostly repeat the previous one; it returns how many did
// not.
func (g *grayer) drawRuns(a, out []uint32) int {
	out = out[:len(a)]
	last, lastGray := g.last, g.lastGray
	changes := 0
	for i, p := range a {
		if p != last {
			last, lastGray = p, grayOf(p, g.alpha)
			changes++
		}
		out[i] = lastGray
	}
	g.last, g.lastGray = last, lastGray
	return changes
}

// drawEach is draw for pixels that mostly differ from the previous one: without the
// comparison's branch, and with grayOf written out.
func (g *grayer) drawEach(a, out []uint32) int {
	out = out[:len(a)]
	alpha, t := g.alpha, &luma
	prev := g.last
	changes := 0
	for i, p := range a {
		changes += b2i(p != prev)
		prev = p
		r, gr, b, al := channels(p)
		l := float64(t.r[r&255]+t.g[gr&255]) + t.b[b&255]
		v := 255 + float64(float64(float64(l-255)*alpha)*t.f[al&255])/255
		out[i] = grayPix(uint32(v))
	}
	g.last, g.lastGray = prev, out[len(a)-1]
	return changes
}

// grayOf is g.of for alpha in 0..1.
func grayOf(p uint32, alpha float64) uint32 {
	r, gr, b, a := channels(p)
	t := &luma
	l := float64(t.r[r&255]+t.g[gr&255]) + t.b[b&255]
	v := 255 + float64(float64(float64(l-255)*alpha)*t.f[a&255])/255
	return grayPix(uint32(v))
}

// lumaTables holds pixelmatch's luma coefficients multiplied by each byte value, and the byte
// values as floats: a product of a byte and a constant is rounded once, so the table's is the
// product pixelmatch computes, bit for bit.
type lumaTables struct{ r, g, b, f [256]float64 }

// luma is read only.
var luma = func() (t lumaTables) {
	for i := range 256 {
		x := float64(i)
		t.r[i], t.g[i], t.b[i], t.f[i] = x*0.29889531, x*0.58662247, x*0.11448223, x
	}
	return t
}()

// toUint8 converts like an assignment to a JavaScript Uint8Array element (pixelmatch's output
// is usually a Node.js Buffer): truncation, then modulo 256.
func toUint8(v float64) uint8 {
	if v >= 0 && v < 256 {
		return uint8(v)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return uint8(int64(math.Trunc(v)))
}

// background is pixelmatch's checkerboard colour for byte offset k of a pixel.
func background(k int, checker bool) (float64, float64, float64) {
	if !checker {
		return 255, 255, 255
	}
	// k is a multiple of 4, so k % 2 is always 0: red is always 48, as in pixelmatch.
	rb := 48 + 159*float64(k%2)
	gb := 48 + 159*float64(int32(float64(k)/1.618033988749895)%2)
	bb := 48 + 159*float64(int32(float64(k)/2.618033988749895)%2)
	return rb, gb, bb
}

// colorDelta is the squared YIQ distance between the pixels p and q at byte offset k, negative
// when q is darker (Kotsarenko and Ramos).
func colorDelta(p, q uint32, k int, checker bool) float64 {
	r1, g1, b1, a1 := channels(p)
	r2, g2, b2, a2 := channels(q)
	dr, dg, db := float64(r1-r2), float64(g1-g2), float64(b1-b2)
	if a1 < 255 || a2 < 255 {
		rb, gb, bb := background(k, checker)
		da := float64(a1 - a2)
		dr = (float64(r1*a1-r2*a2) - float64(rb*da)) / 255
		dg = (float64(g1*a1-g2*a2) - float64(gb*da)) / 255
		db = (float64(b1*a1-b2*a2) - float64(bb*da)) / 255
	}
	y := float64(float64(dr*0.29889531)+float64(dg*0.58662247)) + float64(db*0.11448223)
	i := float64(float64(dr*0.59597799)-float64(dg*0.27417610)) - float64(db*0.32180189)
	q2 := float64(float64(dr*0.21147017)-float64(dg*0.52261711)) + float64(db*0.31114694)
	delta := float64(float64(float64(0.5053*y)*y)+float64(float64(0.299*i)*i)) + float64(float64(0.1957*q2)*q2)
	if y > 0 {
		return -delta
	}
	return delta
}

// brightnessDelta is the YIQ luma difference between the centre pixel (channels r1, g1, b1, a1)
// and the pixel of channels r2, g2, b2, a2; bg is the checkerboard colour at the centre (as in
// pixelmatch), used when either is not opaque.
func brightnessDelta(r1, g1, b1, a1, r2, g2, b2, a2 int, bg *[3]float64) float64 {
	dr, dg, db := float64(r1-r2), float64(g1-g2), float64(b1-b2)
	if a1 < 255 || a2 < 255 {
		da := float64(a1 - a2)
		dr = (float64(r1*a1-r2*a2) - float64(bg[0]*da)) / 255
		dg = (float64(g1*a1-g2*a2) - float64(bg[1]*da)) / 255
		db = (float64(b1*a1-b2*a2) - float64(bg[2]*da)) / 255
	}
	return float64(float64(dr*0.29889531)+float64(dg*0.58662247)) + float64(db*0.11448223)
}

// antialiased reports whether the pixel (x1, y1) of img is likely part of anti-aliasing: among
// its 8 neighbours at most two equal it, some are darker and some brighter, and the darkest or
// the brightest has 3 or more equal neighbours in both images (img and other).
//
// Away from the border, where the pixel and its neighbours are opaque (nearly always), the
// neighbours are visited without a data-dependent branch, which random content would mispredict:
// pixelmatch's early return on a third equal neighbour only saves work, a zero delta never
// updates the darkest or the brightest, and only a strictly darker (brighter) one replaces it, so
// the first in pixelmatch's order (by column, then by row) is kept.
func antialiased(img, other []uint32, x1, y1, width, height int, checker bool) bool {
	if x1 == 0 || y1 == 0 || x1 >= width-1 || y1 >= height-1 {
		return antialiasedEdge(img, other, x1, y1, width, height, checker)
	}
	i := y1*width + x1
	up := img[i-width-1 : i-width+2 : i-width+2]
	mid := img[i-1 : i+2 : i+2]
	down := img[i+width-1 : i+width+2 : i+width+2]
	centre := mid[1]
	// In pixelmatch's order, element by element: an array literal would be built aside and
	// copied in 16-byte loads from 4-byte stores, a store-forwarding stall.
	var nb [8]uint32
	nb[0], nb[1], nb[2], nb[3], nb[4], nb[5], nb[6], nb[7] = up[0], mid[0], down[0], up[1], down[1], up[2], mid[2], down[2]
	// An equal neighbour has a zero delta: flat areas end here, before any arithmetic.
	eq := 0
	all := centre
	for _, q := range &nb {
		eq += b2i(q == centre)
		all &= q
	}
	if eq > 2 {
		return false
	}
	if all&pix(0, 0, 0, 255) != pix(0, 0, 0, 255) {
		return antialiasedEdge(img, other, x1, y1, width, height, checker)
	}
	cr, cg, cb, _ := channels(centre)
	var ds [8]float64
	for j, q := range &nb {
		r2, g2, b2, _ := channels(q)
		ds[j] = float64(float64(float64(cr-r2)*0.29889531)+float64(float64(cg-g2)*0.58662247)) + float64(float64(cb-b2)*0.11448223)
	}
	zeroes := 0
	var minB, maxB uint64 // the darkest and the brightest delta (bits), 0 until one is found
	minJ, maxJ := 0, 0
	for j, d := range &ds {
		zeroes += b2i(d == 0)
		// Selected by masks, not by a branch or a float register the compiler cannot move
		// conditionally.
		b := math.Float64bits(d)
		lt := -uint64(b2i(d < math.Float64frombits(minB)))
		minB ^= (minB ^ b) & lt
		minJ ^= (minJ ^ j) & int(lt)
		gt := -uint64(b2i(d > math.Float64frombits(maxB)))
		maxB ^= (maxB ^ b) & gt
		maxJ ^= (maxJ ^ j) & int(gt)
	}
	if zeroes > 2 || minB == 0 || maxB == 0 {
		return false
	}
	// Where neighbour j is, relative to the centre.
	dx := [8]int{-1, -1, -1, 0, 0, 1, 1, 1}
	dy := [8]int{-1, 0, 1, -1, 1, -1, 0, 1}
	minX, minY := x1+dx[minJ&7], y1+dy[minJ&7]
	maxX, maxY := x1+dx[maxJ&7], y1+dy[maxJ&7]
	// pixelmatch passes its two 32-bit views in the order (this image, the other one); the
	// conjunction makes the order irrelevant.
	return (hasManySiblings(img, minX, minY, width, height) && hasManySiblings(other, minX, minY, width, height)) ||
		(hasManySiblings(img, maxX, maxY, width, height) && hasManySiblings(other, maxX, maxY, width, height))
}

// b2i is 1 for true and 0 for false, without a branch.
func b2i(b bool) int {
	n := 0
	if b {
		n = 1
	}
	return n
}

// antialiasedEdge is antialiased for any pixel, at the border or with transparency around:
// pixelmatch's loop.
func antialiasedEdge(img, other []uint32, x1, y1, width, height int, checker bool) bool {
	x0, y0 := max(x1-1, 0), max(y1-1, 0)
	x2, y2 := min(x1+1, width-1), min(y1+1, height-1)
	centre := img[y1*width+x1]
	cr, cg, cb, ca := channels(centre)
	var bg [3]float64
	bgDone := false
	zeroes := 0
	if x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2 {
		zeroes = 1
	}
	var minD, maxD float64
	var minX, minY, maxX, maxY int
	for x := x0; x <= x2; x++ {
		for y := y0; y <= y2; y++ {
			if x == x1 && y == y1 {
				continue
			}
			q := img[y*width+x]
			var delta float64
			if q != centre {
				r2, g2, b2, a2 := channels(q)
				if (ca < 255 || a2 < 255) && !bgDone {
					// pixelmatch blends both over the checkerboard colour at the centre.
					bg[0], bg[1], bg[2] = background((y1*width+x1)*4, checker)
					bgDone = true
				}
				delta = brightnessDelta(cr, cg, cb, ca, r2, g2, b2, a2, &bg)
			}
			switch {
			case delta == 0:
				zeroes++
				if zeroes > 2 {
					return false
				}
			case delta < minD:
				minD, minX, minY = delta, x, y
			case delta > maxD:
				maxD, maxX, maxY = delta, x, y
			}
		}
	}
	if minD == 0 || maxD == 0 {
		return false
	}
	return (hasManySiblings(img, minX, minY, width, height) && hasManySiblings(other, minX, minY, width, height)) ||
		(hasManySiblings(img, maxX, maxY, width, height) && hasManySiblings(other, maxX, maxY, width, height))
}

// hasManySiblings reports whether the pixel (x1, y1) has 3 or more neighbours of exactly its
// colour (a border counts as one).
func hasManySiblings(img []uint32, x1, y1, width, height int) bool {
	if x1 > 0 && y1 > 0 && x1 < width-1 && y1 < height-1 {
		// Counted without a branch: the count decides, not which neighbours.
		i := y1*width + x1
		up := img[i-width-1 : i-width+2 : i-width+2]
		mid := img[i-1 : i+2 : i+2]
		down := img[i+width-1 : i+width+2 : i+width+2]
		val := mid[1]
		n := b2i(up[0] == val) + b2i(up[1] == val) + b2i(up[2] == val) + b2i(mid[0] == val) +
			b2i(mid[2] == val) + b2i(down[0] == val) + b2i(down[1] == val) + b2i(down[2] == val)
		return n > 2
	}
	x0, y0 := max(x1-1, 0), max(y1-1, 0)
	x2, y2 := min(x1+1, width-1), min(y1+1, height-1)
	val := img[y1*width+x1]
	zeroes := 1 // on the border
	for x := x0; x <= x2; x++ {
		for y := y0; y <= y2; y++ {
			if x == x1 && y == y1 {
				continue
			}
			if img[y*width+x] == val {
				zeroes++
				if zeroes > 2 {
					return true
				}
			}
		}
	}
	return false
}
