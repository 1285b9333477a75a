package num_test

import (
	"math"
	"testing"

	"github.com/sdods/sdods/engine/internal/num"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0", 0, true},
		{"-0", 0, true},
		{"1.5", 1.5, true},
		{"1e308", 1e308, true},
		{"1.7976931348623157e308", math.MaxFloat64, true},
		{"1.7976931348623158e308", math.MaxFloat64, true}, // still nearest to the largest double
		{"1.8e308", 0, false},
		{"-1e309", 0, false},
		{"1e-400", 0, true},
		{"5e-324", 5e-324, true},
		{"0.1000000000000000055511151231257827", 0.1, true},
		{"01", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{"+1", 0, false},
		{"Infinity", 0, false},
		{"NaN", 0, false},
		{"0x10", 0, false},
		{"1_000", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := num.Parse(tt.in)
			if ok != tt.ok || (ok && got != tt.want) || math.Signbit(got) {
				t.Fatalf("Parse(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{1, "1"},
		{-1.5, "-1.5"},
		{0.1 + 0.2, "0.3"},
		{1.0 / 3, "0.333333333333333"},
		{2.0 / 3, "0.666666666666667"},
		{123456789012345, "123456789012345"},
		{1234567890123456, "1234567890123460"},
		{1234567890123455, "1234567890123460"}, // tie, 5 after odd 5: to even (6)
		{1234567890123445, "1234567890123440"}, // tie, 5 after even 4: stays
		{1e21, "1e+21"},
		{1e20, "100000000000000000000"},
		{1.5e21, "1.5e+21"},
		{1e-6, "0.000001"},
		{1e-7, "1e-7"},
		{1.25e-7, "1.25e-7"},
		{123e-20, "1.23e-18"},
		{math.MaxFloat64 / 10, "1.79769313486232e+307"},
		{5e-324, "4.94065645841247e-324"},
		{9007199254740993, "9007199254740990"},
	}
	for _, tt := range tests {
		got, ok := num.Format(tt.in)
		if !ok || got != tt.want {
			t.Errorf("Format(%v) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	if _, ok := num.Format(math.MaxFloat64); ok {
		t.Errorf("Format(MaxFloat64) should be out of range after rounding to 15 digits")
	}
}

func TestCanonicalIdempotent(t *testing.T) {
	for _, f := range []float64{0.1, 1.0 / 3, math.Pi, 1e300 / 7, 5e-324, 2.2250738585072014e-308, 9.999999999999999e22} {
		c, ok := num.Canonical(f)
		if !ok {
			t.Fatalf("Canonical(%v) refused", f)
		}
		c2, _ := num.Canonical(c)
		if c2 != c {
			t.Errorf("Canonical not idempotent for %v: %v then %v", f, c, c2)
		}
	}
}

func TestArithmetic(t *testing.T) {
	type op func() (float64, bool)
	tests := []struct {
		name string
		f    op
		want string
	}{
		{"0.1+0.2", func() (float64, bool) { return num.Add(0.1, 0.2) }, "0.3"},
		{"9.99999999999999-9", func() (float64, bool) { return num.Sub(9.99999999999999, 9) }, "0.99999999999999"},
		{"0.3-0.1", func() (float64, bool) { return num.Sub(0.3, 0.1) }, "0.2"},
		{"1e15+1", func() (float64, bool) { return num.Add(1e15, 1) }, "1000000000000000"},
		{"1e15+5 (tie to even)", func() (float64, bool) { return num.Add(1e15, 5) }, "1000000000000000"},
		{"1e15+15 (tie to even)", func() (float64, bool) { return num.Add(1e15, 15) }, "1000000000000020"},
		{"1.1*1.1", func() (float64, bool) { return num.Mul(1.1, 1.1) }, "1.21"},
		{"0.07*100", func() (float64, bool) { return num.Mul(0.07, 100) }, "7"},
		{"1/3", func() (float64, bool) { return num.Div(1, 3) }, "0.333333333333333"},
		{"2/3", func() (float64, bool) { return num.Div(2, 3) }, "0.666666666666667"},
		{"1/8", func() (float64, bool) { return num.Div(1, 8) }, "0.125"},
		{"0.3/0.1", func() (float64, bool) { return num.Div(0.3, 0.1) }, "3"},
		{"5.5 mod 2", func() (float64, bool) { return num.Mod(5.5, 2) }, "1.5"},
		{"-7 mod 3", func() (float64, bool) { return num.Mod(-7, 3) }, "-1"},
		{"7 mod -3", func() (float64, bool) { return num.Mod(7, -3) }, "1"},
		{"0.3 mod 0.1", func() (float64, bool) { return num.Mod(0.3, 0.1) }, "0"},
		{"round 1.005 2", func() (float64, bool) { return num.Round(1.005, 2) }, "1.01"},
		{"round 2.5", func() (float64, bool) { return num.Round(2.5, 0) }, "3"},
		{"round -2.5", func() (float64, bool) { return num.Round(-2.5, 0) }, "-3"},
		{"round 1234.5 -2", func() (float64, bool) { return num.Round(1234.5, -2) }, "1200"},
		{"round 0.000001 2", func() (float64, bool) { return num.Round(0.000001, 2) }, "0"},
		{"round -0.4", func() (float64, bool) { return num.Round(-0.4, 0) }, "0"},
		{"sum", func() (float64, bool) { return num.Add(0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1) }, "1"},
		{"large integer sum", func() (float64, bool) {
			return num.Add(999999999999999, 999999999999999, 999999999999999, 999999999999999, 999999999999999, 999999999999999, 999999999999999, 999999999999999, 999999999999999, 999999999999999, 999999999999999, 999999999999999)
		}, "12000000000000000"},
		{"1e308*10", func() (float64, bool) { return num.Mul(1e308, 10) }, ""},
		{"1e308+1e308", func() (float64, bool) { return num.Add(1e308, 1e308) }, ""},
		{"1e-300*1e-300", func() (float64, bool) { return num.Mul(1e-300, 1e-300) }, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := tt.f()
			if tt.want == "" {
				if ok {
					t.Fatalf("got %v, want out of range", f)
				}
				return
			}
			got, _ := num.Format(f)
			if !ok || got != tt.want {
				t.Fatalf("got %q (%v), want %q", got, ok, tt.want)
			}
		})
	}
}

func TestAbsKeepsDigits(t *testing.T) {
	x := 0.30000000000000004
	if num.Abs(-x) != x {
		t.Fatal("abs must keep the exact magnitude")
	}
	if c, _ := num.Canonical(x); c == x {
		t.Fatal("canonical form of 0.30000000000000004 should be 0.3")
	}
}

func FuzzFormatRoundTrip(f *testing.F) {
	for _, s := range []float64{0, 0.1, 1e21, 1e-7, 123456789012345.6, 5e-324} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		s, ok := num.Format(x)
		if !ok {
			return
		}
		y, ok := num.Parse(s)
		if !ok {
			t.Fatalf("Format(%v) = %q does not parse", x, s)
		}
		c, _ := num.Canonical(x)
		if y != c {
			t.Fatalf("Format(%v) = %q parses to %v, want %v", x, s, y, c)
		}
	})
}

// TestTwoOperandForms checks Add2 and Mul2 against the variadic forms, around the integer fast
// path's edges and on fractions.
func TestTwoOperandForms(t *testing.T) {
	xs := []float64{0, 1, -1, 2, 0.1, 0.2, 1.1, -2.5, 7, 100, 999999999999999, -999999999999999,
		1e15, 1e15 + 1, 4503599627370496, 9007199254740991, 94906265, 94906267, 1e308, -1e308,
		1e-300, 0.30000000000000004, 123456789.123456789, 5e-324}
	for _, a := range xs {
		for _, b := range xs {
			if f, ok := num.Add2(a, b); true {
				g, okg := num.Add(a, b)
				if f != g || ok != okg || math.Signbit(f) != math.Signbit(g) {
					t.Errorf("Add2(%v, %v) = %v %v, Add = %v %v", a, b, f, ok, g, okg)
				}
			}
			if f, ok := num.Mul2(a, b); true {
				g, okg := num.Mul(a, b)
				if f != g || ok != okg || math.Signbit(f) != math.Signbit(g) {
					t.Errorf("Mul2(%v, %v) = %v %v, Mul = %v %v", a, b, f, ok, g, okg)
				}
			}
		}
	}
}
