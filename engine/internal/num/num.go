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
	"math/bits"
	"strconv"
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
	a := math.Abs(f)
	if _, _, ok := shortDec(a); ok {
		return f, true // f is the nearest double to its own canonical decimal
	}
	m, e, ok := exactDec(a)
	if !ok {
		_, m, e = slowDec(f)
	}
	return fromDec(f < 0, m, e)
}

// Format writes the canonical text of f: the canonical decimal laid out as ECMAScript's
// Number::toString lays out a number (the form RFC 8785 uses): plain digits when the decimal
// exponent is in [-7, 21), otherwise d.ddde±x. ok is false when f has no canonical value.
func Format(f float64) (string, bool) {
	if smallInt(f) {
		return strconv.FormatInt(int64(f), 10), true
	}
	var buf [48]byte
	b, ok := appendFrac(buf[:0], f)
	if !ok {
		return "", false
	}
	return string(b), true
}

// AppendFormat appends what Format returns for f to b; when ok is false, b is returned as it is.
func AppendFormat(b []byte, f float64) ([]byte, bool) {
	if smallInt(f) {
		return strconv.AppendInt(b, int64(f), 10), true
	}
	return appendFrac(b, f)
}

// appendFrac is AppendFormat for f other than an integer of at most 15 digits.
func appendFrac(b []byte, f float64) ([]byte, bool) {
	// The digits written are those of the canonical decimal of c = Canonical(f). When f is
	// already the nearest double to its canonical decimal d, c is f and its decimal is d.
	neg := f < 0
	a := math.Abs(f)
	m, e, ok := centsDec(a) // amounts and rates, as decOf
	if !ok {
		m, e, ok = shortDec(a)
	}
	if !ok {
		c, ok := canonical(f)
		if !ok {
			return b, false
		}
		neg = c < 0
		_, m, e = decOf(c)
	}
	return appendLayout(b, neg, m, e), true
}

// appendLayout appends the ECMAScript layout of the decimal ±m × 10^e (m > 0, no trailing zeros).
func appendLayout(b []byte, neg bool, m uint64, e int) []byte {
	if m == 0 {
		return append(b, '0')
	}
	var db [20]byte
	s := strconv.AppendUint(db[:0], m, 10)
	if neg {
		b = append(b, '-')
	}
	k := len(s)
	n := k + e // the value is 0.s × 10^n
	switch {
	case k <= n && n <= 21:
		b = append(b, s...)
		for i := k; i < n; i++ {
			b = append(b, '0')
		}
		return b
	case 0 < n && n <= 21:
		b = append(b, s[:n]...)
		b = append(b, '.')
		return append(b, s[n:]...)
	case -6 < n && n <= 0:
		b = append(b, '0', '.')
		for i := n; i < 0; i++ {
			b = append(b, '0')
		}
		return append(b, s...)
	}
	b = append(b, s[0])
	if k > 1 {
		b = append(b, '.')
		b = append(b, s[1:]...)
	}
	b = append(b, 'e')
	x := n - 1
	if x < 0 {
		b = append(b, '-')
		x = -x
	} else {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, int64(x), 10)
}

// Abs returns |f|. abs works to 34 significant digits, and every double is exactly representable
// in 17, so the magnitude is kept exactly: abs(0.30000000000000004) is 0.30000000000000004,
// not the canonical 0.3 an arithmetic operator would produce.
func Abs(f float64) float64 { return math.Abs(f) }

// smallInt reports whether f is an integer of at most 15 digits. Within that range the
// conversion to int64 is exact for integers and truncates anything else, and costs less than
// math.Trunc.
func smallInt(f float64) bool { return f > -1e15 && f < 1e15 && float64(int64(f)) == f }

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
	if len(xs) == 2 {
		return add2(xs[0], xs[1])
	}
	var acc sum128
	for _, x := range xs {
		if !acc.add(decOf(x)) {
			return addBig(xs)
		}
	}
	return round15(acc.neg, acc.hi, acc.lo, acc.e, false)
}

// Add2 is Add(a, b) without the variadic slice; the integer fast path is the same.
func Add2(a, b float64) (float64, bool) {
	if smallInt(a) && smallInt(b) && math.Abs(a)+math.Abs(b) < 1<<53 {
		return Canonical(a + b)
	}
	return add2(a, b)
}

// add2 is the decimal sum of two operands.
func add2(a, b float64) (float64, bool) {
	na, ma, ea := decOf(a)
	nb, mb, eb := decOf(b)
	if r, ok, done := add64(na, ma, ea, nb, mb, eb); done {
		return r, ok
	}
	var acc sum128
	acc.add(na, ma, ea)
	if !acc.add(nb, mb, eb) {
		// Aligning overflowed 128 bits: one operand has more than 38-len(m) digits of exponent
		// over the other, so the smaller lies below 10^-23 of the larger, under half a unit of
		// its 15th digit even where the grid is ten times finer below a power of ten; the sum
		// rounds to the larger operand.
		if ea > eb {
			return fromDec(na, ma, ea)
		}
		return fromDec(nb, mb, eb)
	}
	return round15(acc.neg, acc.hi, acc.lo, acc.e, false)
}

// add64 is add2 when the operand with the larger exponent, aligned to the other, still fits in
// 64 bits and so does the sum (amounts with a few decimals); done is false otherwise.
func add64(na bool, ma uint64, ea int, nb bool, mb uint64, eb int) (f float64, ok, done bool) {
	if ea < eb {
		na, ma, ea, nb, mb, eb = nb, mb, eb, na, ma, ea
	}
	if ea-eb > 19 {
		return 0, false, false
	}
	h, x := bits.Mul64(ma, pow10u[ea-eb])
	if h != 0 {
		return 0, false, false
	}
	switch {
	case na == nb:
		s, c := bits.Add64(x, mb, 0)
		if c != 0 {
			return 0, false, false
		}
		f, ok = round15(na, 0, s, eb, false)
	case x >= mb:
		f, ok = round15(na, 0, x-mb, eb, false)
	default:
		f, ok = round15(nb, 0, mb-x, eb, false)
	}
	return f, ok, true
}

// Sub returns the canonical difference a - b.
func Sub(a, b float64) (float64, bool) {
	if smallInt(a) && smallInt(b) {
		return Canonical(a - b)
	}
	return add2(a, -b)
}

// Mul returns the canonical product of the canonical decimals of the operands.
func Mul(xs ...float64) (float64, bool) {
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
	var neg bool
	var hi, lo uint64 = 0, 1
	e := 0
	for _, x := range xs {
		n, m, k := decOf(x)
		if m == 0 {
			return 0, true
		}
		h1, l1 := bits.Mul64(lo, m)
		h2, l2 := bits.Mul64(hi, m)
		var c uint64
		hi, c = bits.Add64(l2, h1, 0)
		if h2 != 0 || c != 0 {
			return mulBig(xs)
		}
		lo = l1
		neg = neg != n
		e += k
	}
	return round15(neg, hi, lo, e, false)
}

// Mul2 is Mul(a, b) without the variadic slice; the integer fast path is the same.
func Mul2(a, b float64) (float64, bool) {
	if smallInt(a) && smallInt(b) && math.Abs(a*b) < 1<<53 {
		return Canonical(a * b)
	}
	na, ma, ea := decOf(a)
	nb, mb, eb := decOf(b)
	if ma == 0 || mb == 0 {
		return 0, true
	}
	hi, lo := bits.Mul64(ma, mb) // below 10^30: mantissas have at most 15 digits
	return round15(na != nb, hi, lo, ea+eb, false)
}

// Div returns the canonical quotient a / b; ok false on overflow. The caller handles b == 0.
func Div(a, b float64) (float64, bool) {
	na, x, ea := decOf(a)
	nb, y, eb := decOf(b)
	if x == 0 {
		return 0, true
	}
	if y == 0 {
		return divBig(a, b) // divides by zero as it always did
	}
	// Scale the numerator so the integer quotient has 16 or 17 digits: x × 10^shift has
	// 16+len(y) digits, so x × 10^shift / y lies in (10^15, 10^17) and at least one digit is left
	// for rounding, with the remainder as the sticky bit.
	shift := 16 + digits64(y) - digits64(x)
	var hi, lo uint64
	if shift <= 19 {
		hi, lo = bits.Mul64(x, pow10u[shift])
	} else {
		hi, lo, _ = scale128(0, x, shift) // at most 31 digits: fits
	}
	var q, r uint64
	if hi == 0 {
		q, r = lo/y, lo%y
	} else {
		q, r = bits.Div64(hi, lo, y) // hi < y since the quotient is below 10^17
	}
	// round15 for q of 16 or 17 digits, with constant divisors: drop 1 or 2 digits, ties to even
	// unless the remainder r makes them more than a tie
	e, half := ea-eb-shift+1, uint64(5)
	var d uint64
	if q < 1e16 {
		q, d = q/10, q%10
	} else {
		q, d = q/100, q%100
		e, half = e+1, 50
	}
	if d > half || (d == half && (r != 0 || q&1 == 1)) {
		q++
	}
	return fromDec(na != nb, q, e)
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
	na, x, ea := decOf(a)
	_, y, eb := decOf(b)
	if y == 0 {
		return modBig(a, b) // divides by zero as it always did
	}
	if ea >= eb {
		// (x × 10^(ea-eb)) mod y, one power of ten at a time: r × 10^j < y × 2^64, so Div64
		// cannot overflow
		r := x % y
		for k := ea - eb; k > 0; {
			j := min(k, 19)
			k -= j
			hi, lo := bits.Mul64(r, pow10u[j])
			_, r = bits.Div64(hi, lo, y)
		}
		return round15(na, 0, r, eb, false)
	}
	// x mod (y × 10^(eb-ea)); a divisor beyond 64 bits exceeds x
	r := x
	if yh, yl, ok := scale128(0, y, eb-ea); ok && yh == 0 {
		r = x % yl
	}
	return round15(na, 0, r, ea, false)
}

// Round rounds the canonical decimal of f to places decimal places (negative places round to
// tens, hundreds, ...), ties away from zero, and returns the canonical result.
func Round(f float64, places int) (float64, bool) {
	if places < -1000 || places > 1000 {
		return roundPlacesBig(f, places)
	}
	neg, m, e := decOf(f)
	if e >= -places {
		return Canonical(f)
	}
	k := -places - e
	if k > 15 {
		return 0, true // |m| < 10^15 is below half of 10^k
	}
	q, r := divPow10(m, k)
	if 2*r >= pow10u[k] {
		q++
	}
	return round15(neg, 0, q, -places, false)
}
