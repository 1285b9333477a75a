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
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
	var o32 []uint32
	if out != nil {
		out = out[: 4*n : 4*n]
		o32 = words(aligned(out))
		defer func() {
			if unsafe.SliceData(o32) != (*uint32)(unsafe.Pointer(unsafe.SliceData(out))) {
				copy(out, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(o32))), 4*n))
			}
		}()
	}
	drawGray := out != nil && !o.DiffMask
	// Screenshots repeat colours in long runs: the grey of the last pixel drawn is kept.
	last, lastGray := a32[0], grayOf(a[0:4], o.Alpha)
	if string(a) == string(b) { // identical: the fast path of pixelmatch
		if drawGray {
			for i, p := range a32 {
				if p != last {
					last, lastGray = p, grayOf(a[4*i:4*i+4], o.Alpha)
				}
				o32[i] = lastGray
			}
		}
		return 0, nil
	}
	// 35215 is the largest value the YIQ distance takes (black against white).
	maxDelta := 35215 * o.Threshold * o.Threshold
	aaPix := opaque(o.AAColor)
	diffPix := opaque(o.DiffColor)
	altPix := diffPix
	if o.DiffColorAlt != nil {
		altPix = opaque(*o.DiffColorAlt)
	}
	checker := !o.PlainBackground
	diff := 0
	b32 = b32[:len(a32)]
	if o32 != nil {
		o32 = o32[:len(a32)]
	}
	for i := 0; i < len(a32); {
		if a32[i] == b32[i] {
			// A run of equal pixels: their delta is 0, never above the threshold.
			if drawGray {
				for ; i < len(a32) && a32[i] == b32[i]; i++ {
					if p := a32[i]; p != last {
						last, lastGray = p, grayOf(a[4*i:4*i+4], o.Alpha)
					}
					o32[i] = lastGray
				}
			} else {
				for i < len(a32) && a32[i] == b32[i] {
					i++
				}
			}
			continue
		}
		pos := 4 * i
		delta := colorDelta(a, b, pos, checker)
		if math.Abs(delta) > maxDelta {
			x, y := i%width, i/width
			if !o.IncludeAA && (antialiased(a, b, x, y, width, height, checker) || antialiased(b, a, x, y, width, height, checker)) {
				if drawGray {
					o32[i] = aaPix
				}
			} else {
				if o32 != nil {
					if delta < 0 {
						o32[i] = altPix
					} else {
						o32[i] = diffPix
					}
				}
				diff++
			}
		} else if drawGray {
			o32[i] = grayOf(a[pos:pos+4], o.Alpha)
		}
		i++
	}
	return diff, nil
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
// machine's byte order: words are only compared with each other and with pixels made by pix.
func words(p []byte) []uint32 {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(p))), len(p)/4)
}

// pix returns the word of an RGBA pixel.
func pix(r, g, b, a uint8) uint32 {
	p := [4]uint8{r, g, b, a}
	return *(*uint32)(unsafe.Pointer(&p))
}

func opaque(c [3]uint8) uint32 { return pix(c[0], c[1], c[2], 255) }

// grayOf is the diff image's pixel for a similar pixel rgba of the first image: its luma blended
// with white at alpha (pixelmatch's drawGrayPixel, operation by operation; explicit conversions
// keep the compiler from fusing multiply-adds, which would round differently).
func grayOf(rgba []byte, alpha float64) uint32 {
	r, g, b, a := float64(rgba[0]), float64(rgba[1]), float64(rgba[2]), float64(rgba[3])
	l := float64(float64(float64(r*0.29889531)+float64(g*0.58662247)) + float64(b*0.11448223))
	v := 255 + float64(float64(float64(l-255)*alpha)*a)/255
	c := toUint8(v)
	return pix(c, c, c, 255)
}

// toUint8 converts like an assignment to a JavaScript Uint8Array element (pixelmatch's output
// is usually a Node.js Buffer): truncation, then modulo 256.
func toUint8(v float64) uint8 {
	if v >= 0 && v < 256 { // the usual case: Go's conversion truncates too
		return uint8(v)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return uint8(int64(math.Trunc(v)))
}

// background is pixelmatch's checkerboard colour channel for byte offset k of a pixel.
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

// colorDelta is the squared YIQ distance between the pixels at byte offset k of a and b,
// negative when b's pixel is darker (Kotsarenko and Ramos).
func colorDelta(a, b []byte, k int, checker bool) float64 {
	r1, g1, b1, a1 := int(a[k]), int(a[k+1]), int(a[k+2]), int(a[k+3])
	r2, g2, b2, a2 := int(b[k]), int(b[k+1]), int(b[k+2]), int(b[k+3])
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
	q := float64(float64(dr*0.21147017)-float64(dg*0.52261711)) + float64(db*0.31114694)
	delta := float64(float64(float64(0.5053*y)*y)+float64(float64(0.299*i)*i)) + float64(float64(0.1957*q)*q)
	if y > 0 {
		return -delta
	}
	return delta
}

// brightnessDelta is the YIQ luma difference between the centre pixel (r1, g1, b1, a1 at byte
// offset k) and the pixel at byte offset m of img.
func brightnessDelta(img []byte, k, m int, r1, g1, b1, a1 int, checker bool) float64 {
	r2, g2, b2, a2 := int(img[m]), int(img[m+1]), int(img[m+2]), int(img[m+3])
	if r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2 {
		return 0
	}
	dr, dg, db := float64(r1-r2), float64(g1-g2), float64(b1-b2)
	if a1 < 255 || a2 < 255 {
		rb, gb, bb := background(k, checker)
		da := float64(a1 - a2)
		dr = (float64(r1*a1-r2*a2) - float64(rb*da)) / 255
		dg = (float64(g1*a1-g2*a2) - float64(gb*da)) / 255
		db = (float64(b1*a1-b2*a2) - float64(bb*da)) / 255
	}
	return float64(float64(dr*0.29889531)+float64(dg*0.58662247)) + float64(db*0.11448223)
}

// antialiased reports whether the pixel (x1, y1) of img is likely part of anti-aliasing: among
// its 8 neighbours at most two equal it, some are darker and some brighter, and the darkest or
// the brightest has 3 or more equal neighbours in both images (img and other).
func antialiased(img, other []byte, x1, y1, width, height int, checker bool) bool {
	x0, y0 := max(x1-1, 0), max(y1-1, 0)
	x2, y2 := min(x1+1, width-1), min(y1+1, height-1)
	pos4 := (y1*width + x1) * 4
	cr, cg, cb, ca := int(img[pos4]), int(img[pos4+1]), int(img[pos4+2]), int(img[pos4+3])
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
			delta := brightnessDelta(img, pos4, (y*width+x)*4, cr, cg, cb, ca, checker)
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
	// pixelmatch passes its two 32-bit views in the order (this image, the other one); the
	// conjunction makes the order irrelevant.
	return (hasManySiblings(img, minX, minY, width, height) && hasManySiblings(other, minX, minY, width, height)) ||
		(hasManySiblings(img, maxX, maxY, width, height) && hasManySiblings(other, maxX, maxY, width, height))
}

// hasManySiblings reports whether the pixel (x1, y1) has 3 or more neighbours of exactly its
// colour (a border counts as one).
func hasManySiblings(img []byte, x1, y1, width, height int) bool {
	x0, y0 := max(x1-1, 0), max(y1-1, 0)
	x2, y2 := min(x1+1, width-1), min(y1+1, height-1)
	val := binary.LittleEndian.Uint32(img[(y1*width+x1)*4:])
	zeroes := 0
	if x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2 {
		zeroes = 1
	}
	for x := x0; x <= x2; x++ {
		for y := y0; y <= y2; y++ {
			if x == x1 && y == y1 {
				continue
			}
			if binary.LittleEndian.Uint32(img[(y*width+x)*4:]) == val {
				zeroes++
				if zeroes > 2 {
					return true
				}
			}
		}
	}
	return false
}
