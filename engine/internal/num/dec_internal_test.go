package num

import (
	"math"
	"math/rand"
	"strconv"
	"testing"
)

// TestDecimalPaths checks the two fast ways to the canonical decimal, exactDec and shortDec,
// against slowDec (strconv's correctly rounded 15 digits) wherever they answer.
func TestDecimalPaths(t *testing.T) {
	n := 2_000_000
	if testing.Short() {
		n /= 10
	}
	r := rand.New(rand.NewSource(7))
	var answered [2]int
	for i := 0; i < n; i++ {
		var a float64
		switch i % 4 {
		case 0: // any double
			a = math.Abs(math.Float64frombits(r.Uint64()))
		case 1: // the range the fast paths cover, every bit pattern
			a = math.Ldexp(1+r.Float64(), r.Intn(160)-35)
		case 2: // decimals of up to 17 digits: canonical ones, ties and just past them
			m := r.Int63n(int64(math.Pow10(1 + r.Intn(17))))
			a, _ = strconv.ParseFloat(strconv.FormatInt(m, 10)+"e"+strconv.Itoa(r.Intn(70)-30), 64)
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
	t.Logf("%d doubles: exactDec answered %d, shortDec %d", n, answered[0], answered[1])
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
