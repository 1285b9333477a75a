package num_test

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"testing"

	"github.com/sdods/sdods/engine/internal/num"
)

// The differential tests compare every arithmetic function with the math/big implementation in
// reference_test.go, bit for bit, on operands drawn from the shapes that matter: short decimals,
// integers around 2^53 and 10^15, 16-digit decimals ending in 5 (ties), random doubles,
// subnormals and the ends of the double range.

var diffCases = flag.Int("diff.cases", 100000, "operand draws per function in TestDifferential")

// outcome is a result as the tests compare it: the bits of the double (or the text), the ok flag,
// or the panic a division by zero raises.
type outcome struct {
	bits  uint64
	text  string
	ok    bool
	panic bool
}

func (o outcome) String() string {
	if o.panic {
		return "panic"
	}
	return fmt.Sprintf("%v (%#x %q) ok=%v", math.Float64frombits(o.bits), o.bits, o.text, o.ok)
}

func catch(f func() outcome) (o outcome) {
	defer func() {
		if recover() != nil {
			o = outcome{panic: true}
		}
	}()
	return f()
}

func fo(f float64, ok bool) outcome { return outcome{bits: math.Float64bits(f), ok: ok} }
func so(s string, ok bool) outcome  { return outcome{text: s, ok: ok} }

// diffOp is one function under test with its reference.
type diffOp struct {
	name string
	args int // operands drawn; 0 means variadic
	got  func(xs []float64, places int) outcome
	want func(xs []float64, places int) outcome
}

var diffOps = []diffOp{
	{"Canonical", 1,
		func(x []float64, _ int) outcome { return fo(num.Canonical(x[0])) },
		func(x []float64, _ int) outcome { return fo(refCanonical(x[0])) }},
	{"Format", 1,
		func(x []float64, _ int) outcome { return so(num.Format(x[0])) },
		func(x []float64, _ int) outcome { return so(refFormat(x[0])) }},
	{"AppendFormat", 1,
		func(x []float64, _ int) outcome {
			b, ok := num.AppendFormat([]byte("x="), x[0])
			if string(b[:2]) != "x=" || !ok && len(b) != 2 {
				return outcome{panic: true}
			}
			return so(string(b[2:]), ok)
		},
		func(x []float64, _ int) outcome { return so(refFormat(x[0])) }},
	{"Round", 1,
		func(x []float64, p int) outcome { return fo(num.Round(x[0], p)) },
		func(x []float64, p int) outcome { return fo(refRound(x[0], p)) }},
	{"Add2", 2,
		func(x []float64, _ int) outcome { return fo(num.Add2(x[0], x[1])) },
		func(x []float64, _ int) outcome { return fo(refAdd2(x[0], x[1])) }},
	{"Sub", 2,
		func(x []float64, _ int) outcome { return fo(num.Sub(x[0], x[1])) },
		func(x []float64, _ int) outcome { return fo(refSub(x[0], x[1])) }},
	{"Mul2", 2,
		func(x []float64, _ int) outcome { return fo(num.Mul2(x[0], x[1])) },
		func(x []float64, _ int) outcome { return fo(refMul2(x[0], x[1])) }},
	{"Div", 2,
		func(x []float64, _ int) outcome { return fo(num.Div(x[0], x[1])) },
		func(x []float64, _ int) outcome { return fo(refDiv(x[0], x[1])) }},
	{"Mod", 2,
		func(x []float64, _ int) outcome { return fo(num.Mod(x[0], x[1])) },
		func(x []float64, _ int) outcome { return fo(refMod(x[0], x[1])) }},
	{"Add", 0,
		func(x []float64, _ int) outcome { return fo(num.Add(x...)) },
		func(x []float64, _ int) outcome { return fo(refAdd(x...)) }},
	{"Mul", 0,
		func(x []float64, _ int) outcome { return fo(num.Mul(x...)) },
		func(x []float64, _ int) outcome { return fo(refMul(x...)) }},
}

// checkOp compares one call; it reports the first difference.
func checkOp(tb testing.TB, op diffOp, xs []float64, places int) bool {
	tb.Helper()
	got := catch(func() outcome { return op.got(xs, places) })
	want := catch(func() outcome { return op.want(xs, places) })
	if got != want {
		tb.Errorf("%s(%s, places %d) = %v, reference %v", op.name, fmtArgs(xs), places, got, want)
		return false
	}
	return true
}

func fmtArgs(xs []float64) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ", "
		}
		s += strconv.FormatFloat(x, 'g', -1, 64)
	}
	return s
}

// shortDecimal returns the double nearest to a decimal of 1 to 17 significant digits.
func shortDecimal(r *rand.Rand, maxDigits int, minExp, maxExp int) float64 {
	n := 1 + r.Intn(maxDigits)
	m := r.Int63n(int64(math.Pow10(n)))
	e := minExp + r.Intn(maxExp-minExp+1)
	f, _ := strconv.ParseFloat(strconv.FormatInt(m, 10)+"e"+strconv.Itoa(e), 64)
	return f
}

// operand draws one operand from the shapes listed above.
func operand(r *rand.Rand) float64 {
	var f float64
	switch c := r.Intn(100); {
	case c < 35: // amounts, rates, counts
		f = shortDecimal(r, 8, -8, 6)
	case c < 50: // up to 15 digits anywhere a double is exact in the fast paths
		f = shortDecimal(r, 15, -30, 30)
	case c < 55:
		f = shortDecimal(r, 15, -330, 310)
	case c < 62: // ties and just past them: 16 and 17 digits
		f = shortDecimal(r, 17, -25, 25)
		if r.Intn(2) == 0 {
			m := r.Int63n(1e15)*10 + 5
			f, _ = strconv.ParseFloat(strconv.FormatInt(m, 10)+"e"+strconv.Itoa(r.Intn(40)-30), 64)
		}
	case c < 68: // integers near 2^53 and 10^15
		base := []float64{1 << 53, 1e15, 1e16, 1 << 52, 1e14}[r.Intn(5)]
		f = base + float64(r.Intn(41)-20)
	case c < 80: // random bits: every exponent
		f = math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 1
		}
	case c < 85: // random doubles of ordinary size
		f = r.Float64() * math.Pow10(r.Intn(12)-4)
	case c < 90: // small integers
		f = float64(r.Intn(2001) - 1000)
	case c < 93: // subnormals and the smallest normals
		f = math.Float64frombits(uint64(r.Int63n(1 << 53)))
	default:
		f = []float64{0, math.Copysign(0, -1), math.MaxFloat64, math.SmallestNonzeroFloat64,
			2.2250738585072014e-308, 1e308, 1.79769313486231e308, 1.7976931348623e308,
			9.999999999999999e22, 1e23, 1e22, 1e-7, 1e21, 1e-9, 0.1, 0.3, 0.30000000000000004,
			999999999999999, 999999999999999.9, 9007199254740993, math.Inf(1), math.NaN()}[r.Intn(22)]
	}
	if r.Intn(3) == 0 {
		f = -f
	}
	return f
}

func places(r *rand.Rand) int {
	if r.Intn(50) == 0 {
		return []int{-400, 400, -1001, 1001, math.MinInt, math.MaxInt, -40, 41}[r.Intn(8)]
	}
	return r.Intn(41) - 20
}

func TestDifferential(t *testing.T) {
	n := *diffCases
	if testing.Short() {
		n /= 10
	}
	for i, op := range diffOps {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewSource(int64(i) + 1))
			xs := make([]float64, 6)
			fails := 0
			for j := 0; j < n && fails < 10; j++ {
				k := op.args
				if k == 0 {
					k = r.Intn(6)
				}
				for a := 0; a < k; a++ {
					xs[a] = operand(r)
				}
				if !checkOp(t, op, xs[:k], places(r)) {
					fails++
				}
			}
		})
	}
}

// TestDifferentialEdges runs every function over all pairs of a fixed list of hard operands.
func TestDifferentialEdges(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 0.2, 0.3, 0.05, 12.5, 1234.56, 1e-7,
		3e20, 1.5e-7, 1e15, 1e15 + 1, 1e15 - 1, 1e16, 9007199254740991, 9007199254740992,
		9007199254740993, 1234567890123445, 1234567890123455, 1.234567890123445, 0.1234567890123455,
		123456789012345.5, 99999999999999.95, 0.9999999999999995, 9.999999999999995e22,
		9.999999999999999e22, 1e22, 1e23, 1e-22, 1e-23, 1e-9, 1e-8, 1e36, 1e37, 1e38,
		math.MaxFloat64, 1.79769313486231e308, 1.7976931348623e308, -1e308, 1e-300, 1e-320,
		math.SmallestNonzeroFloat64, 2.2250738585072014e-308, 2.225073858507201e-308,
		0.30000000000000004, 1.0 / 3, 2.0 / 3, math.Pi, 7, 3, -2.5, 2.5, 0.5, 100, 1e21, 1e20,
		math.Inf(1), math.Inf(-1), math.NaN()}
	for _, op := range diffOps {
		if op.args == 1 {
			for _, x := range xs {
				for p := -25; p <= 25; p++ {
					checkOp(t, op, []float64{x}, p)
				}
			}
			continue
		}
		for _, a := range xs {
			for _, b := range xs {
				checkOp(t, op, []float64{a, b}, 0)
				if op.args == 0 {
					checkOp(t, op, []float64{a, b, a}, 0)
					checkOp(t, op, []float64{b, a, -b, 0.1}, 0)
				}
			}
		}
	}
}

// FuzzArithmetic compares the two-operand functions, and the variadic ones on a few
// combinations, with the reference.
func FuzzArithmetic(f *testing.F) {
	seeds := [][2]float64{{0.1, 0.2}, {1, 3}, {2, 3}, {1e15, 5}, {1.005, 100}, {0.3, 0.1},
		{1e308, 10}, {5e-324, 3}, {123456.789, 0.0001}, {-7, 3}, {9007199254740993, 1e-7}}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b float64) {
		for _, op := range diffOps {
			switch op.args {
			case 2:
				checkOp(t, op, []float64{a, b}, 0)
			case 0:
				checkOp(t, op, []float64{a, b}, 0)
				checkOp(t, op, []float64{a, b, -a, b}, 0)
			}
		}
	})
}

// FuzzDecimals builds both operands as decimals m × 10^e, the shape rules use, so the fuzzer
// explores digit patterns rather than raw bits.
func FuzzDecimals(f *testing.F) {
	f.Add(int64(1), int8(-1), int64(2), int8(-1), int8(2))
	f.Add(int64(1234567890123445), int8(-15), int64(3), int8(0), int8(0))
	f.Add(int64(1999), int8(-2), int64(5), int8(-2), int8(1))
	f.Add(int64(999999999999999), int8(0), int64(1), int8(-15), int8(-3))
	f.Fuzz(func(t *testing.T, ma int64, ea int8, mb int64, eb int8, p int8) {
		a, _ := strconv.ParseFloat(strconv.FormatInt(ma, 10)+"e"+strconv.Itoa(int(ea)), 64)
		b, _ := strconv.ParseFloat(strconv.FormatInt(mb, 10)+"e"+strconv.Itoa(int(eb)), 64)
		for _, op := range diffOps {
			switch op.args {
			case 1:
				checkOp(t, op, []float64{a}, int(p))
				checkOp(t, op, []float64{b}, int(p))
			case 2:
				checkOp(t, op, []float64{a, b}, 0)
			case 0:
				checkOp(t, op, []float64{a, b, a}, 0)
			}
		}
	})
}

// FuzzUnary compares Canonical, Format and Round on any double and places.
func FuzzUnary(f *testing.F) {
	for _, x := range []float64{0.1, 1.005, 2.5, 1e21, 1e-7, 5e-324, math.MaxFloat64} {
		f.Add(x, 2)
	}
	f.Fuzz(func(t *testing.T, x float64, p int) {
		for _, op := range diffOps {
			if op.args == 1 {
				checkOp(t, op, []float64{x}, p)
			}
		}
	})
}
