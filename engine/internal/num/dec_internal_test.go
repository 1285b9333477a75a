package num

import (
	"math"
	"math/bits"
	"math/rand"
	"strconv"
	"testing"
)

// TestDecimalPaths checks the fast ways to the canonical decimal, exactDec, shortDec and centsDec,
// against slowDec (strconv's correctly rounded 15 digits) wherever they answer.
func TestDecimalPaths(t *testing.T) {
	n := 2_000_000
	if testing.Short() {
		n /= 10
	}
	r := rand.New(rand.NewSource(7))
	var answered [3]int
	for i := 0; i < n; i++ {
		var a float64
		switch i % 4 {
		case 0: // any double
			a = math.Abs(math.Float64frombits(r.Uint64()))
		case 1: // the range the fast paths cover, every bit pattern
			a = math.Ldexp(1+r.Float64(), r.Intn(160)-35)
		case 2: // decimals of up to 17 digits: canonical ones, ties and just past them; cents
			m := r.Int63n(int64(math.Pow10(1 + r.Intn(17))))
			x := r.Intn(70) - 30
			if r.Intn(3) == 0 {
				x = -1 - r.Intn(2)
			}
			a, _ = strconv.ParseFloat(strconv.FormatInt(m, 10)+"e"+strconv.Itoa(x), 64)
		default: // neighbours of a decimal
			m := r.Int63n(1e15)
			a, _ = strconv.ParseFloat(strconv.FormatInt(m, 10)+"e"+strconv.Itoa(r.Intn(60)-30), 64)
			a = math.Nextafter(a, math.Inf(r.Intn(2)*2-1))
		}
		if a == 0 || math.IsNaN(a) || math.IsInf(a, 0) {
			continue
		}
		_, wm, we := slowDec(a)
		if m, e, ok := exactDec(a); ok {
			answered[0]++
			if m != wm || e != we {
				t.Fatalf("exactDec(%v) = %d e%d, strconv %d e%d", a, m, e, wm, we)
			}
		}
		if m, e, ok := centsDec(a); ok && a != math.Trunc(a) {
			answered[2]++
			if m != wm || e != we {
				t.Fatalf("centsDec(%v) = %d e%d, strconv %d e%d", a, m, e, wm, we)
			}
		}
		if m, e, ok := shortDec(a); ok {
			answered[1]++
			if m != wm || e != we {
				t.Fatalf("shortDec(%v) = %d e%d, strconv %d e%d", a, m, e, wm, we)
			}
			if f, _ := fromDec(false, m, e); f != a {
				t.Fatalf("shortDec(%v): %d e%d is not the nearest decimal", a, m, e)
			}
		}
	}
	t.Logf("%d doubles: exactDec answered %d, shortDec %d, centsDec %d", n, answered[0], answered[1],
		answered[2])
}

// TestTrimZeros compares trimZeros with removing one zero at a time, on every count of trailing
// zeros and trailing zero bits below 10^16.
func TestTrimZeros(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for i := 0; i < 1_000_000; i++ {
		var m uint64
		switch i % 3 {
		case 0: // d × 10^k with d of any length
			k := r.Intn(16)
			m = uint64(r.Int63n(int64(pow10u[16-k]))) * pow10u[k]
		case 1: // a multiple of a power of two: many trailing zero bits, few zeros
			m = uint64(r.Int63n(1e16)) &^ (1<<r.Intn(54) - 1)
		default:
			m = uint64(r.Int63n(1e16))
		}
		if m == 0 {
			continue
		}
		wm, wz := m, 0
		for wm%10 == 0 {
			wm /= 10
			wz++
		}
		if gm, gz := trimZeros(m); gm != wm || gz != wz {
			t.Fatalf("trimZeros(%d) = %d, %d; want %d, %d", m, gm, gz, wm, wz)
		}
	}
}

// TestAdd64MatchesSum128 compares add2's 64-bit path with the 128-bit running sum on operands
// whose exponents are close and far, signs equal and opposite.
func TestAdd64MatchesSum128(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	answered := 0
	for i := 0; i < 1_000_000; i++ {
		var n [2]bool
		var m [2]uint64
		var e [2]int
		for j := range 2 {
			n[j] = r.Intn(2) == 0
			m[j] = uint64(r.Int63n(int64(pow10u[1+r.Intn(15)])))
			e[j] = r.Intn(50) - 25
		}
		f, ok, done := add64(n[0], m[0], e[0], n[1], m[1], e[1])
		if !done {
			continue
		}
		answered++
		var acc sum128
		acc.add(n[0], m[0], e[0])
		if !acc.add(n[1], m[1], e[1]) {
			t.Fatalf("add64 answered where the 128-bit sum overflows: %v", m)
		}
		wf, wok := round15(acc.neg, acc.hi, acc.lo, acc.e, false)
		if math.Float64bits(f) != math.Float64bits(wf) || ok != wok {
			t.Fatalf("add64(%v %d e%d, %v %d e%d) = %v %v, sum128 %v %v",
				n[0], m[0], e[0], n[1], m[1], e[1], f, ok, wf, wok)
		}
	}
	t.Logf("add64 answered %d of 1000000", answered)
}

// TestRound15OneWord compares round15's one-word path with dropping one digit at a time.
func TestRound15OneWord(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	for i := 0; i < 1_000_000; i++ {
		lo := r.Uint64() >> r.Intn(14) // 16 to 20 digits mostly
		if i%4 == 0 {
			lo = lo/1000*1000 + 500 // exact ties at several positions
		}
		e, sticky := r.Intn(40)-20, r.Intn(2) == 0
		q, k, st := lo, 0, sticky
		var d uint64
		for q >= 1e16 {
			st = st || q%10 != 0
			q /= 10
			k++
		}
		if q >= 1e15 {
			q, d = q/10, q%10
			k++
			if d > 5 || (d == 5 && (st || q&1 == 1)) {
				q++
			}
		}
		wf, wok := fromDec(false, q, e+k)
		if f, ok := round15(false, 0, lo, e, sticky); math.Float64bits(f) != math.Float64bits(wf) || ok != wok {
			t.Fatalf("round15(%d e%d, sticky %v) = %v, want %v", lo, e, sticky, f, wf)
		}
	}
}

// TestDivRoundsAsRound15 compares Div's own rounding of its 16- or 17-digit quotient with
// round15 on the same quotient and remainder.
func TestDivRoundsAsRound15(t *testing.T) {
	r := rand.New(rand.NewSource(19))
	for i := 0; i < 1_000_000; i++ {
		var xs [2]float64
		for j := range xs {
			m := r.Int63n(int64(pow10u[1+r.Intn(15)]))
			xs[j] = float64(m) / pow10f[r.Intn(10)]
			if r.Intn(2) == 0 {
				xs[j] = -xs[j]
			}
		}
		if xs[0] == 0 || xs[1] == 0 {
			continue
		}
		na, x, ea := decOf(xs[0])
		nb, y, eb := decOf(xs[1])
		shift := 16 + digits64(y) - digits64(x)
		hi, lo, _ := scale128(0, x, shift)
		q, rem := bits.Div64(hi, lo, y)
		wf, wok := round15(na != nb, 0, q, ea-eb-shift, rem != 0)
		if f, ok := Div(xs[0], xs[1]); math.Float64bits(f) != math.Float64bits(wf) || ok != wok {
			t.Fatalf("Div(%v, %v) = %v, round15 %v", xs[0], xs[1], f, wf)
		}
	}
}
