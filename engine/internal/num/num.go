// Package num implements the engine's number model (spec/v1/numbers.md).
//
// Values are finite IEEE 754 doubles; a JSON number is the double nearest to what was written and
// a literal beyond double range is refused. The canonical decimal of a double is its exact value
// rounded to 15 significant digits, ties to even. Arithmetic (+ - * / mod round sum) reads each
// operand as its canonical decimal, computes exactly in decimal, and rounds the exact result once
// to 15 significant digits, ties to even: canonical numbers are exact. abs works to 34
// significant digits, which for a double is its exact value, so abs only changes the sign. Every
// number leaving the engine is canonicalized; a canonical value beyond double range is an error.
package num

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Digits is the number of significant digits numbers leaving the engine keep.
const Digits = 15

// AbsDigits is the number of significant digits abs works to (IEEE 754 decimal128 precision).
const AbsDigits = 34

// ValidJSON reports whether s follows the JSON number grammar of RFC 8259.
func ValidJSON(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return false
	}
	switch {
	case s[i] == '0':
		i++
	case s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// Parse returns the double nearest to the JSON number s (negative zero becomes zero). It refuses
// (ok false) text that is not a JSON number and numbers whose nearest double is infinite.
func Parse(s string) (f float64, ok bool) {
	if !ValidJSON(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return 0, false
	}
	if err != nil {
		// ErrRange on underflow still yields the nearest double (zero or subnormal).
		if ne, isNum := err.(*strconv.NumError); !isNum || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	if f == 0 {
		f = 0
	}
	return f, true
}

// Finite reports whether f is a double the engine can hold (not NaN, not infinite).
func Finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Canonical returns f rounded to 15 significant digits (ties to even, on the exact binary value)
// as the nearest double, with negative zero as zero. ok is false when f is not finite or the
// rounded value is beyond double range (for example the largest double, 1.7976931348623157e308,
// rounds to 1.79769313486232e308).
func Canonical(f float64) (float64, bool) {
	if smallInt(f) {
		return f + 0, true // -0 + 0 is 0
	}
	return canonical(f)
}

// canonical is Canonical for numbers that are not integers of at most 15 digits.
func canonical(f float64) (float64, bool) {
	if !Finite(f) {
		return 0, false
	}
	g, err := strconv.ParseFloat(strconv.FormatFloat(f, 'e', Digits-1, 64), 64)
	if err != nil || math.IsInf(g, 0) {
		return 0, false
	}
	if g == 0 {
		g = 0
	}
	return g, true
}

// Format writes the canonical text of f: the canonical decimal laid out as ECMAScript's
// Number::toString lays out a number (the form RFC 8785 uses): plain digits when the decimal
// exponent is in [-7, 21), otherwise d.ddde±x. ok is false when f has no canonical value.
func Format(f float64) (string, bool) {
	if f == math.Trunc(f) && f > -1e15 && f < 1e15 {
		return strconv.FormatInt(int64(f), 10), true
	}
	c, ok := Canonical(f)
	if !ok {
		return "", false
	}
	neg := c < 0
	digits, exp := decimalDigits(math.Abs(c))
	s := layout(digits, exp)
	if neg {
		s = "-" + s
	}
	return s, true
}

// decimalDigits returns the significant digits of a positive canonical double (no trailing zeros)
// and n such that the value is 0.digits × 10^n.
func decimalDigits(c float64) (string, int) {
	t := strconv.FormatFloat(c, 'e', Digits-1, 64) // d.dddddddddddddde±xx
	mant, expPart, _ := strings.Cut(t, "e")
	e, _ := strconv.Atoi(expPart)
	digits := strings.TrimRight(strings.Replace(mant, ".", "", 1), "0")
	if digits == "" {
		digits = "0"
	}
	return digits, e + 1
}

func layout(s string, n int) string {
	k := len(s)
	switch {
	case k <= n && n <= 21:
		return s + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return s[:n] + "." + s[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + s
	}
	e := n - 1
	sign := "+"
	if e < 0 {
		sign = "-"
		e = -e
	}
	if k == 1 {
		return s + "e" + sign + strconv.Itoa(e)
	}
	return s[:1] + "." + s[1:] + "e" + sign + strconv.Itoa(e)
}

// Abs returns |f|. abs works to 34 significant digits, and every double is exactly representable
// in 17, so the magnitude is kept exactly: abs(0.30000000000000004) is 0.30000000000000004,
// not the canonical 0.3 an arithmetic operator would produce.
func Abs(f float64) float64 { return math.Abs(f) }

// dec is an exact decimal m × 10^e.
type dec struct {
	m big.Int
	e int
}

// toDec returns the canonical decimal of a finite double.
func toDec(f float64) *dec {
	d := &dec{}
	if f == math.Trunc(f) && f > -1e15 && f < 1e15 {
		d.m.SetInt64(int64(f))
		return d
	}
	t := strconv.FormatFloat(f, 'e', Digits-1, 64)
	mant, expPart, _ := strings.Cut(t, "e")
	e, _ := strconv.Atoi(expPart)
	m, _ := strconv.ParseInt(strings.Replace(mant, ".", "", 1), 10, 64)
	d.m.SetInt64(m)
	d.e = e - (Digits - 1)
	return d
}

var bigTen = big.NewInt(10)

func pow10(n int) *big.Int {
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// align returns the mantissas of a and b scaled to the smaller exponent.
func align(a, b *dec) (*big.Int, *big.Int, int) {
	x, y := new(big.Int).Set(&a.m), new(big.Int).Set(&b.m)
	switch {
	case a.e > b.e:
		x.Mul(x, pow10(a.e-b.e))
		return x, y, b.e
	case b.e > a.e:
		y.Mul(y, pow10(b.e-a.e))
		return x, y, a.e
	}
	return x, y, a.e
}

// round15 rounds m × 10^e (with sticky meaning "a nonzero remainder was already dropped below m")
// to 15 significant digits, ties to even, and returns the nearest double.
func round15(m *big.Int, e int, sticky bool) (float64, bool) {
	neg := m.Sign() < 0
	a := new(big.Int).Abs(m)
	s := a.String()
	if len(s) > Digits {
		k := len(s) - Digits
		div := pow10(k)
		q, r := new(big.Int).QuoRem(a, div, new(big.Int))
		half := new(big.Int).Rsh(div, 1) // div is even (a power of ten, k >= 1)
		c := r.Cmp(half)
		if c > 0 || (c == 0 && sticky) || (c == 0 && q.Bit(0) == 1) {
			q.Add(q, big.NewInt(1))
		}
		a, e = q, e+k
	}
	t := a.String() + "e" + strconv.Itoa(e)
	f, err := strconv.ParseFloat(t, 64)
	if err != nil && math.IsInf(f, 0) {
		return 0, false
	}
	if neg {
		f = -f
	}
	if f == 0 {
		f = 0
	}
	return f, true
}

func smallInt(f float64) bool { return f == math.Trunc(f) && f > -1e15 && f < 1e15 }

// Add returns the canonical sum of the canonical decimals of the operands; ok false on overflow.
func Add(xs ...float64) (float64, bool) {
	fast := true
	var s float64
	for _, x := range xs {
		// exact while every partial sum stays an integer below 2^53
		if !smallInt(x) || math.Abs(s)+math.Abs(x) >= 1<<53 {
			fast = false
			break
		}
		s += x
	}
	if fast {
		return Canonical(s)
	}
	acc := &dec{}
	for _, x := range xs {
		d := toDec(x)
		a, b, e := align(acc, d)
		acc.m.Add(a, b)
		acc.e = e
		if acc.m.Sign() == 0 {
			acc.e = 0
		}
	}
	return round15(&acc.m, acc.e, false)
}

// Add2 is Add(a, b) without the variadic slice; the integer fast path is the same.
func Add2(a, b float64) (float64, bool) {
	if smallInt(a) && smallInt(b) && math.Abs(a)+math.Abs(b) < 1<<53 {
		return Canonical(a + b)
	}
	return Add(a, b)
}

// Sub returns the canonical difference a - b.
func Sub(a, b float64) (float64, bool) {
	if smallInt(a) && smallInt(b) {
		return Canonical(a - b)
	}
	return Add(a, -b)
}

// Mul returns the canonical product of the canonical decimals of the operands.
func Mul(xs ...float64) (float64, bool) {
	acc := &dec{}
	acc.m.SetInt64(1)
	fast := true
	p := 1.0
	for _, x := range xs {
		if !smallInt(x) || math.Abs(p*x) >= 1<<53 {
			fast = false
			break
		}
		p *= x
	}
	if fast {
		return Canonical(p)
	}
	for _, x := range xs {
		d := toDec(x)
		acc.m.Mul(&acc.m, &d.m)
		acc.e += d.e
		if acc.m.Sign() == 0 {
			return 0, true
		}
		// keep the running product short: rounding to 40 digits with a sticky bit would change
		// nothing for short lists, so the exact product is kept (at most 15 digits per operand)
	}
	return round15(&acc.m, acc.e, false)
}

// Mul2 is Mul(a, b) without the variadic slice; the integer fast path is the same.
func Mul2(a, b float64) (float64, bool) {
	if smallInt(a) && smallInt(b) && math.Abs(a*b) < 1<<53 {
		return Canonical(a * b)
	}
	return Mul(a, b)
}

// Div returns the canonical quotient a / b; ok false on overflow. The caller handles b == 0.
func Div(a, b float64) (float64, bool) {
	x, y := toDec(a), toDec(b)
	if x.m.Sign() == 0 {
		return 0, true
	}
	// scale the numerator so the integer quotient has at least 17 digits
	shift := 17 + len(new(big.Int).Abs(&y.m).String()) - len(new(big.Int).Abs(&x.m).String()) + 1
	if shift < 0 {
		shift = 0
	}
	n := new(big.Int).Mul(&x.m, pow10(shift))
	q, r := new(big.Int).QuoRem(n, &y.m, new(big.Int))
	return round15(q, x.e-y.e-shift, r.Sign() != 0)
}

// Mod returns the canonical truncated remainder of a / b (the sign follows a). The caller
// handles b == 0.
func Mod(a, b float64) (float64, bool) {
	if smallInt(a) && smallInt(b) && b != 0 {
		r := math.Mod(a, b)
		if r == 0 {
			r = 0
		}
		return r, true
	}
	x, y, e := align(toDec(a), toDec(b))
	r := new(big.Int).Rem(x, y)
	return round15(r, e, false)
}

// Round rounds the canonical decimal of f to places decimal places (negative places round to
// tens, hundreds, ...), ties away from zero, and returns the canonical result.
func Round(f float64, places int) (float64, bool) {
	d := toDec(f)
	if d.e >= -places {
		return Canonical(f)
	}
	k := -places - d.e
	if k > 40 {
		return 0, true
	}
	div := pow10(k)
	neg := d.m.Sign() < 0
	a := new(big.Int).Abs(&d.m)
	q, r := new(big.Int).QuoRem(a, div, new(big.Int))
	if new(big.Int).Lsh(r, 1).Cmp(div) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	return round15(q, -places, false)
}
