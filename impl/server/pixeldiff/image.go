package pixeldiff

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
)

// MaxPixels is the largest image (width × height) DecodePNG accepts: 64 megapixels, far above
// any screenshot, well below what would exhaust memory.
const MaxPixels = 64 << 20

// ErrNotPNG is returned by DecodePNG for content that is not a PNG image it accepts.
var ErrNotPNG = errors.New("not a PNG image")

// DecodePNG reads a PNG image as non-premultiplied 8-bit RGBA (what pixelmatch users get from
// pngjs; 16-bit samples are rounded to 8 bits as pngjs rounds them). Images larger than MaxPixels are refused before their pixels are decoded.
func DecodePNG(data []byte) (*image.NRGBA, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotPNG, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > MaxPixels/cfg.Height {
		return nil, fmt.Errorf("%w: %dx%d pixels (at most %d)", ErrNotPNG, cfg.Width, cfg.Height, MaxPixels)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotPNG, err)
	}
	return ToNRGBA(img), nil
}

// ToNRGBA returns img as non-premultiplied 8-bit RGBA with its origin at (0, 0); img itself when
// it already is.
func ToNRGBA(img image.Image) *image.NRGBA {
	b := img.Bounds()
	if n, ok := img.(*image.NRGBA); ok && b.Min == (image.Point{}) && n.Stride == 4*b.Dx() {
		return n
	}
	out := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	switch src := img.(type) {
	case *image.Paletted:
		// Palette entries keep their straight (non-premultiplied) values.
		pal := make([][4]uint8, len(src.Palette))
		for i, c := range src.Palette {
			n := color.NRGBAModel.Convert(c).(color.NRGBA)
			pal[i] = [4]uint8{n.R, n.G, n.B, n.A}
		}
		for y := 0; y < b.Dy(); y++ {
			row := src.Pix[y*src.Stride : y*src.Stride+b.Dx()]
			o := out.Pix[y*out.Stride:]
			for x, ci := range row {
				var p [4]uint8
				if int(ci) < len(pal) {
					p = pal[ci]
				}
				copy(o[4*x:], p[:])
			}
		}
	case *image.RGBA:
		// What image/png returns for opaque images; premultiplied, so exact only where opaque.
		for y := 0; y < b.Dy(); y++ {
			s := src.Pix[y*src.Stride : y*src.Stride+4*b.Dx()]
			o := out.Pix[y*out.Stride:]
			for x := 0; x < len(s); x += 4 {
				if s[x+3] == 255 {
					copy(o[x:x+4], s[x:x+4])
					continue
				}
				n := color.NRGBAModel.Convert(color.RGBA{s[x], s[x+1], s[x+2], s[x+3]}).(color.NRGBA)
				o[x], o[x+1], o[x+2], o[x+3] = n.R, n.G, n.B, n.A
			}
		}
	case *image.NRGBA64:
		for y := 0; y < b.Dy(); y++ {
			s := src.Pix[y*src.Stride:]
			o := out.Pix[y*out.Stride:]
			for x := 0; x < b.Dx(); x++ {
				for i := 0; i < 4; i++ {
					o[4*x+i] = scale16(uint32(s[8*x+2*i])<<8 | uint32(s[8*x+2*i+1]))
				}
			}
		}
	case *image.Gray16:
		for y := 0; y < b.Dy(); y++ {
			s := src.Pix[y*src.Stride:]
			o := out.Pix[y*out.Stride:]
			for x := 0; x < b.Dx(); x++ {
				v := scale16(uint32(s[2*x])<<8 | uint32(s[2*x+1]))
				o[4*x], o[4*x+1], o[4*x+2], o[4*x+3] = v, v, v, 255
			}
		}
	case *image.RGBA64:
		// What image/png returns for opaque 16-bit RGB; premultiplied, so made straight first.
		for y := 0; y < b.Dy(); y++ {
			o := out.Pix[y*out.Stride:]
			for x := 0; x < b.Dx(); x++ {
				c := src.RGBA64At(b.Min.X+x, b.Min.Y+y)
				r, g, bl, a := uint32(c.R), uint32(c.G), uint32(c.B), uint32(c.A)
				if a != 0xffff && a != 0 {
					r, g, bl = r*0xffff/a, g*0xffff/a, bl*0xffff/a
				}
				o[4*x], o[4*x+1], o[4*x+2], o[4*x+3] = scale16(r), scale16(g), scale16(bl), scale16(a)
			}
		}
	default:
		for y := 0; y < b.Dy(); y++ {
			o := out.Pix[y*out.Stride:]
			for x := 0; x < b.Dx(); x++ {
				n := color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
				o[4*x], o[4*x+1], o[4*x+2], o[4*x+3] = n.R, n.G, n.B, n.A
			}
		}
	}
	return out
}

// scale16 turns a 16-bit sample into 8 bits as pngjs does, rounding to the nearest:
// floor(v × 255 / 65535 + 0.5). Taking the high byte instead would make 0x00C8 black.
func scale16(v uint32) uint8 {
	return uint8((v*255*2 + 65535) / (2 * 65535))
}

// Result is the outcome of Diff.
type Result struct {
	// Width and Height are those of the compared area: the larger of the two images' in each
	// dimension.
	Width, Height int
	// Mismatch is the number of mismatched pixels, Ratio Mismatch / (Width × Height).
	Mismatch int
	Ratio    float64
	// SizeMismatch tells that the images differed in size and were padded.
	SizeMismatch bool
	// Diff is pixelmatch's diff image.
	Diff *image.NRGBA
}

// Diff compares two images. Images of different sizes are padded at the right and bottom to the
// larger width and height with transparent pixels, then compared like equal sizes: a padded pixel
// against a visible one counts as mismatched.
func Diff(before, after image.Image, o Options) (Result, error) {
	a, b := ToNRGBA(before), ToNRGBA(after)
	ab, bb := a.Bounds(), b.Bounds()
	w, h := max(ab.Dx(), bb.Dx()), max(ab.Dy(), bb.Dy())
	res := Result{Width: w, Height: h, SizeMismatch: ab.Size() != bb.Size()}
	if res.SizeMismatch {
		a, b = Pad(a, w, h), Pad(b, w, h)
	}
	res.Diff = image.NewNRGBA(image.Rect(0, 0, w, h))
	n, err := Compare(a.Pix, b.Pix, res.Diff.Pix, w, h, o)
	if err != nil {
		return Result{}, err
	}
	res.Mismatch = n
	if w*h > 0 {
		res.Ratio = float64(n) / float64(w*h)
	}
	return res, nil
}

// Pad returns img extended at the right and bottom to w×h with transparent pixels (img itself
// when it has that size already).
func Pad(img *image.NRGBA, w, h int) *image.NRGBA {
	b := img.Bounds()
	if b.Dx() == w && b.Dy() == h {
		return img
	}
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < min(h, b.Dy()); y++ {
		copy(out.Pix[y*out.Stride:y*out.Stride+4*min(w, b.Dx())], img.Pix[y*img.Stride:])
	}
	return out
}

// DiffPNG decodes two PNG images, compares them with Diff and returns the diff image as PNG.
func DiffPNG(before, after []byte, o Options) (Result, []byte, error) {
	a, err := DecodePNG(before)
	if err != nil {
		return Result{}, nil, fmt.Errorf("before: %w", err)
	}
	b, err := DecodePNG(after)
	if err != nil {
		return Result{}, nil, fmt.Errorf("after: %w", err)
	}
	res, err := Diff(a, b, o)
	if err != nil {
		return Result{}, nil, err
	}
	var buf bytes.Buffer
	if err := EncodePNG(&buf, res.Diff); err != nil {
		return Result{}, nil, err
	}
	return res, buf.Bytes(), nil
}

// EncodePNG writes img as PNG with fast compression (diff images are mostly flat grey).
func EncodePNG(w io.Writer, img image.Image) error {
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return enc.Encode(w, img)
}
