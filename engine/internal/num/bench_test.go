package num_test

import (
	"testing"

	"github.com/sdods/sdods/engine/internal/num"
)

// benchIn are the operands of the per-function benchmarks: amounts, rates and counts as rules
// use them, with a few non-canonical and large or tiny values.
var benchIn = []float64{19.99, 0.05, 1234.56, 12.5, 0.1, 3, 100, 0.0725, 250000, 1.5e-7,
	0.30000000000000004, 1.0 / 3, 7, 360, 0.035, 1e20, 42.42, 5, 0.2, 99.95}

var sinkF float64
var sinkS string
var sinkOK bool

func benchBinary(b *testing.B, f func(x, y float64) (float64, bool)) {
	b.ReportAllocs()
	n := len(benchIn)
	for i := 0; i < b.N; i++ {
		r, ok := f(benchIn[i%n], benchIn[(i/n+i+1)%n])
		sinkF, sinkOK = r, ok
	}
}

func BenchmarkAdd2(b *testing.B) { benchBinary(b, num.Add2) }
func BenchmarkSub(b *testing.B)  { benchBinary(b, num.Sub) }
func BenchmarkMul2(b *testing.B) { benchBinary(b, num.Mul2) }
func BenchmarkDiv(b *testing.B)  { benchBinary(b, num.Div) }
func BenchmarkMod(b *testing.B)  { benchBinary(b, num.Mod) }

func BenchmarkAdd(b *testing.B) {
	b.ReportAllocs()
	n := len(benchIn)
	xs := make([]float64, 4)
	for i := 0; i < b.N; i++ {
		for j := range xs {
			xs[j] = benchIn[(i+j*7)%n]
		}
		sinkF, sinkOK = num.Add(xs...)
	}
}

func BenchmarkMul(b *testing.B) {
	b.ReportAllocs()
	n := len(benchIn)
	xs := make([]float64, 3)
	for i := 0; i < b.N; i++ {
		for j := range xs {
			xs[j] = benchIn[(i+j*7)%n]
		}
		sinkF, sinkOK = num.Mul(xs...)
	}
}

func BenchmarkRound(b *testing.B) {
	b.ReportAllocs()
	n := len(benchIn)
	for i := 0; i < b.N; i++ {
		sinkF, sinkOK = num.Round(benchIn[i%n], i%4)
	}
}

func BenchmarkCanonical(b *testing.B) {
	b.ReportAllocs()
	n := len(benchIn)
	for i := 0; i < b.N; i++ {
		sinkF, sinkOK = num.Canonical(benchIn[i%n])
	}
}

func BenchmarkFormat(b *testing.B) {
	b.ReportAllocs()
	n := len(benchIn)
	for i := 0; i < b.N; i++ {
		sinkS, sinkOK = num.Format(benchIn[i%n])
	}
}

// TestNoAllocations checks that arithmetic does not allocate and that Format allocates only its
// result, on ordinary operands and, but for sums and products of three operands, also on those
// that need strconv's digits or whose exponents lie far apart.
func TestNoAllocations(t *testing.T) {
	far := []float64{1e-30, 1.234e-12, 1e300, 2.5e-310, 1234567890123456789, 1e15 + 1}
	tests := []struct {
		name string
		max  float64
		f    func(x, y float64)
	}{
		{"Add2", 0, func(x, y float64) { sinkF, sinkOK = num.Add2(x, y) }},
		{"Sub", 0, func(x, y float64) { sinkF, sinkOK = num.Sub(x, y) }},
		{"Mul2", 0, func(x, y float64) { sinkF, sinkOK = num.Mul2(x, y) }},
		{"Div", 0, func(x, y float64) { sinkF, sinkOK = num.Div(x, y) }},
		{"Mod", 0, func(x, y float64) { sinkF, sinkOK = num.Mod(x, y) }},
		{"Add", 0, func(x, y float64) { sinkF, sinkOK = num.Add(x, y) }},
		{"Add3", 0, func(x, y float64) { sinkF, sinkOK = num.Add(x, y, x) }},
		{"Mul", 0, func(x, y float64) { sinkF, sinkOK = num.Mul(x, y) }},
		{"Mul3", 0, func(x, y float64) { sinkF, sinkOK = num.Mul(x, y, 3) }},
		{"Round", 0, func(x, y float64) { sinkF, sinkOK = num.Round(x, 2) }},
		{"Canonical", 0, func(x, y float64) { sinkF, sinkOK = num.Canonical(x) }},
		{"Format", 1, func(x, y float64) { sinkS, sinkOK = num.Format(x) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xs := benchIn
			if tt.name != "Add3" && tt.name != "Mul3" {
				xs = append(far, benchIn...)
			}
			for _, x := range xs {
				for _, y := range []float64{3, 0.05, 1234.56, 1e-7, x} {
					if y == 0 {
						continue
					}
					if n := testing.AllocsPerRun(10, func() { tt.f(x, y) }); n > tt.max {
						t.Errorf("%s(%v, %v): %v allocations, want at most %v", tt.name, x, y, n, tt.max)
					}
				}
			}
		})
	}
}
