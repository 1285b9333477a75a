package num_test

// The math/big implementation num.go had before the allocation-free arithmetic, kept verbatim
// (names prefixed with ref) as the reference the differential tests and fuzz targets compare
// against.

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

const refDigits = 15

func refFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// refCanonical returns f rounded to 15 significant digits (ties to even, on the exact binary value)
// as the nearest double, with negative zero as zero. ok is false when f is not finite or the
// rounded value is beyond double range (for example the largest double, 1.7976931348623157e308,
// rounds to 1.79769313486232e308).
func refCanonical(f float64) (float64, bool) {
	if refSmallInt(f) {
		return f + 0, true // -0 + 0 is 0
	}
	return refCanonicalNonInt(f)
}

// refCanonicalNonInt is Canonical for numbers that are not integers of at most 15 digits.
func refCanonicalNonInt(f float64) (float64, bool) {
	if !refFinite(f) {
		return 0, false
	}
	g, err := strconv.ParseFloat(strconv.FormatFloat(f, 'e', refDigits-1, 64), 64)
	if err != nil || math.IsInf(g, 0) {
		return 0, false
	}
	if g == 0 {
		g = 0
	}
	return g, true
}

// refFormat writes the canonical text of f: the canonical decimal laid out as ECMAScript's
// Number::toString lays out a number (the form RFC 8785 uses): plain digits when the decimal
// exponent is in [-7, 21), otherwise d.ddde±x. ok is false when f has no canonical value.
func refFormat(f float64) (string, bool) {
	if f == math.Trunc(f) && f > -1e15 && f < 1e15 {
		return strconv.FormatInt(int64(f), 10), true
	}
	c, ok := refCanonical(f)
	if !ok {
		return "", false
	}
	neg := c < 0
	digits, exp := refDecimalDigits(math.Abs(c))
	s := refLayout(digits, exp)
	if neg {
		s = "-" + s
	}
	return s, true
}

// refDecimalDigits returns the significant digits of a positive canonical double (no trailing zeros)
// and n such that the value is 0.digits × 10^n.
func refDecimalDigits(c float64) (string, int) {
	t := strconv.FormatFloat(c, 'e', refDigits-1, 64) // d.dddddddddddddde±xx
	mant, expPart, _ := strings.Cut(t, "e")
	e, _ := strconv.Atoi(expPart)
	digits := strings.TrimRight(strings.Replace(mant, ".", "", 1), "0")
	if digits == "" {
		digits = "0"
	}
	return digits, e + 1
}

func refLayout(s string, n int) string {
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

// refDec is an exact decimal m × 10^e.
type refDec struct {
	m big.Int
	e int
}

// refToDec returns the canonical decimal of a finite double.
func refToDec(f float64) *refDec {
	d := &refDec{}
	if f == math.Trunc(f) && f > -1e15 && f < 1e15 {
		d.m.SetInt64(int64(f))
		return d
	}
	t := strconv.FormatFloat(f, 'e', refDigits-1, 64)
	mant, expPart, _ := strings.Cut(t, "e")
	e, _ := strconv.Atoi(expPart)
	m, _ := strconv.ParseInt(strings.Replace(mant, ".", "", 1), 10, 64)
	d.m.SetInt64(m)
	d.e = e - (refDigits - 1)
	return d
}

var refBigTen = big.NewInt(10)

func refPow10(n int) *big.Int {
	return new(big.Int).Exp(refBigTen, big.NewInt(int64(n)), nil)
}

// refAlign returns the mantissas of a and b scaled to the smaller exponent.
func refAlign(a, b *refDec) (*big.Int, *big.Int, int) {
	x, y := new(big.Int).Set(&a.m), new(big.Int).Set(&b.m)
	switch {
	case a.e > b.e:
		x.Mul(x, refPow10(a.e-b.e))
		return x, y, b.e
	case b.e > a.e:
		y.Mul(y, refPow10(b.e-a.e))
		return x, y, a.e
	}
	return x, y, a.e
}

// refRound15 rounds m × 10^e (with sticky meaning "a nonzero remainder was already dropped below m")
// to 15 significant digits, ties to even, and returns the nearest double.
func refRound15(m *big.Int, e int, sticky bool) (float64, bool) {
	neg := m.Sign() < 0
	a := new(big.Int).Abs(m)
	s := a.String()
	if len(s) > refDigits {
		k := len(s) - refDigits
		div := refPow10(k)
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

func refSmallInt(f float64) bool { return f == math.Trunc(f) && f > -1e15 && f < 1e15 }

// refAdd returns the canonical sum of the canonical decimals of the operands; ok false on overflow.
func refAdd(xs ...float64) (float64, bool) {
	fast := true
	var s float64
	for _, x := range xs {
		// exact while every partial sum stays an integer below 2^53
		if !refSmallInt(x) || math.Abs(s)+math.Abs(x) >= 1<<53 {
			fast = false
			break
		}
		s += x
	}
	if fast {
		return refCanonical(s)
	}
	acc := &refDec{}
	for _, x := range xs {
		d := refToDec(x)
		a, b, e := refAlign(acc, d)
		acc.m.Add(a, b)
		acc.e = e
		if acc.m.Sign() == 0 {
			acc.e = 0
		}
	}
	return refRound15(&acc.m, acc.e, false)
}

// refAdd2 is Add(a, b) without the variadic slice; the integer fast path is the same.
func refAdd2(a, b float64) (float64, bool) {
	if refSmallInt(a) && refSmallInt(b) && math.Abs(a)+math.Abs(b) < 1<<53 {
		return refCanonical(a + b)
	}
	return refAdd(a, b)
}

// refSub returns the canonical difference a - b.
func refSub(a, b float64) (float64, bool) {
	if refSmallInt(a) && refSmallInt(b) {
		return refCanonical(a - b)
	}
	return refAdd(a, -b)
}

// refMul returns the canonical product of the canonical decimals of the operands.
func refMul(xs ...float64) (float64, bool) {
	acc := &refDec{}
	acc.m.SetInt64(1)
	fast := true
	p := 1.0
	for _, x := range xs {
		if !refSmallInt(x) || math.Abs(p*x) >= 1<<53 {
			fast = false
			break
		}
		p *= x
	}
	if fast {
		return refCanonical(p)
	}
	for _, x := range xs {
		d := refToDec(x)
		acc.m.Mul(&acc.m, &d.m)
		acc.e += d.e
		if acc.m.Sign() == 0 {
			return 0, true
		}
		// keep the running product short: rounding to 40 digits with a sticky bit would change
		// nothing for short lists, so the exact product is kept (at most 15 digits per operand)
	}
	return refRound15(&acc.m, acc.e, false)
}

// refMul2 is Mul(a, b) without the variadic slice; the integer fast path is the same.
func refMul2(a, b float64) (float64, bool) {
	if refSmallInt(a) && refSmallInt(b) && math.Abs(a*b) < 1<<53 {
		return refCanonical(a * b)
	}
	return refMul(a, b)
}

// refDiv returns the canonical quotient a / b; ok false on overflow. The caller handles b == 0.
func refDiv(a, b float64) (float64, bool) {
	x, y := refToDec(a), refToDec(b)
	if x.m.Sign() == 0 {
		return 0, true
	}
	// scale the numerator so the integer quotient has at least 17 digits
	shift := 17 + len(new(big.Int).Abs(&y.m).String()) - len(new(big.Int).Abs(&x.m).String()) + 1
	if shift < 0 {
		shift = 0
	}
	n := new(big.Int).Mul(&x.m, refPow10(shift))
	q, r := new(big.Int).QuoRem(n, &y.m, new(big.Int))
	return refRound15(q, x.e-y.e-shift, r.Sign() != 0)
}

// refMod returns the canonical truncated remainder of a / b (the sign follows a). The caller
// handles b == 0.
func refMod(a, b float64) (float64, bool) {
	if refSmallInt(a) && refSmallInt(b) && b != 0 {
		r := math.Mod(a, b)
		if r == 0 {
			r = 0
		}
		return r, true
	}
	x, y, e := refAlign(refToDec(a), refToDec(b))
	r := new(big.Int).Rem(x, y)
	return refRound15(r, e, false)
}

// refRound rounds the canonical decimal of f to places decimal places (negative places round to
// tens, hundreds, ...), ties away from zero, and returns the canonical result.
func refRound(f float64, places int) (float64, bool) {
	d := refToDec(f)
	if d.e >= -places {
		return refCanonical(f)
	}
	k := -places - d.e
	if k > 40 {
		return 0, true
	}
	div := refPow10(k)
	neg := d.m.Sign() < 0
	a := new(big.Int).Abs(&d.m)
	q, r := new(big.Int).QuoRem(a, div, new(big.Int))
	if new(big.Int).Lsh(r, 1).Cmp(div) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	if neg {
		q.Neg(q)
	}
	return refRound15(q, -places, false)
}
