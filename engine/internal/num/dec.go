package num

import (
	"math"
	"math/bits"
	"strconv"
)

// The decimal arithmetic works on canonical decimals held as a sign, a magnitude m below 10^15
// and an exponent e (the value ±m × 10^e), exact results in 128-bit integers, and the math/big
// code in big.go for the rare operands whose exact result does not fit.

// pow10f holds the powers of ten a double represents exactly.
var pow10f = [23]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// pow10u holds the powers of ten below 2^64.
var pow10u = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
	1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// decOf returns the canonical decimal of f. Integers of at most 15 digits keep exponent 0; other
// magnitudes have no trailing zeros. A non-finite f reads as 0 × 10^-14, as it did when the
// canonical decimal was parsed back from strconv's text.
func decOf(f float64) (neg bool, m uint64, e int) {
	if smallInt(f) {
		// below 10^15: the signed conversion is one instruction
		if f < 0 {
			return true, uint64(int64(-f)), 0
		}
		return false, uint64(int64(f)), 0
	}
	a := math.Abs(f)
	// Canonical numbers (every arithmetic result, most JSON input) pass shortDec's check, which
	// costs less than exactDec's 128-bit conversion.
	if m, e, ok := centsDec(a); ok {
		return f < 0, m, e
	}
	if m, e, ok := shortDec(a); ok {
		return f < 0, m, e
	}
	if m, e, ok := exactDec(a); ok {
		return f < 0, m, e
	}
	return slowDec(f)
}

// exactDec returns the canonical decimal m × 10^e of a positive double a (m without trailing
// zeros) computed exactly in 128 bits: with a = M × 2^e2 and s = 14 - ⌊log10 a⌋, m is
// M × 10^s / 2^-e2 rounded to an integer, ties to even. ok is false outside the range where
// M × 10^s fits in 128 bits and e2 < 0 (about 1e-8 ≤ a < 1e15).
func exactDec(a float64) (m uint64, e int, ok bool) {
	b := math.Float64bits(a)
	be := int(b>>52) & 0x7ff
	if be == 0 || be == 0x7ff {
		return 0, 0, false // zero, subnormal, Inf, NaN
	}
	mant := b&(1<<52-1) | 1<<52
	e2 := be - 1075                       // a = mant × 2^e2 ∈ [2^(e2+52), 2^(e2+53))
	s := 14 - (((e2 + 52) * 78913) >> 18) // ⌊log10 a⌋ is ⌊(e2+52) log10 2⌋ or one more
	if e2 >= 0 || s > 22 {
		return 0, 0, false
	}
	n := uint(-e2) // 1 to 82
	for {
		if s < 0 {
			return 0, 0, false
		}
		var hi, lo uint64
		if s <= 19 {
			hi, lo = bits.Mul64(mant, pow10u[s])
		} else {
			hi, lo = bits.Mul64(mant, pow10u[19])
			hi, lo, _ = scale128(hi, lo, s-19) // below 2^53 × 10^22 < 2^127
		}
		// q = (hi·2^64 + lo) >> n, with the first dropped bit and whether any other is set
		var q uint64
		var half, sticky bool
		switch {
		case n < 64:
			if hi>>n != 0 {
				s--
				continue
			}
			q = hi<<(64-n) | lo>>n
			half = lo>>(n-1)&1 != 0
			sticky = lo&(1<<(n-1)-1) != 0
		case n == 64:
			q = hi
			half = lo>>63 != 0
			sticky = lo<<1 != 0
		default:
			k := n - 64
			q = hi >> k
			half = hi>>(k-1)&1 != 0
			sticky = hi&(1<<(k-1)-1) != 0 || lo != 0
		}
		if q >= 1e15 {
			s-- // ⌊log10 a⌋ was the larger candidate
			continue
		}
		if q < 1e14 {
			return 0, 0, false // cannot happen: s was at most one too large
		}
		if half && (sticky || q&1 == 1) {
			q++ // may reach 10^15, still exact
		}
		m, z := trimZeros(q)
		return m, z - s, true
	}
}

// shortDec returns the canonical decimal m × 10^e of a positive double a (m without trailing
// zeros) when a is the nearest double to a decimal of at most 15 significant digits in the
// range of exactly representable powers of ten; ok is false otherwise (exactDec or slowDec then
// answers).
//
// Why the result is the canonical decimal: let d = m × 10^-s with m < 10^15. The check below
// computes the double nearest to d with one correctly rounded IEEE operation on exact operands
// (m < 2^53, 10^|s| with |s| ≤ 22) and requires it to be a. For a normal double, the distance
// from d to a is at most half an ulp, below d × 2^-53 < 0.12 × 10^-14 × 10^⌊log10 d⌋, less than
// half the spacing of 15-digit decimals around d (a tenth of it just below a power of ten), so d
// is the unique 15-digit decimal nearest to a: its canonical decimal.
func shortDec(a float64) (m uint64, e int, ok bool) {
	e2 := int(math.Float64bits(a)>>52) - 1023 // a ∈ [2^e2, 2^(e2+1)) for a normal a
	if e2 < -30 || e2 > 122 {
		return 0, 0, false // outside about [1e-9, 1e37]; also excludes subnormals, Inf and NaN
	}
	dexp := (e2 * 78913) >> 18 // ⌊e2 × log10 2⌋: ⌊log10 a⌋ is this or one more
	s := 14 - dexp             // scale that gives m 15 digits
	p := mulPow10(a, s)
	if p >= 1e15 {
		s--
		p = mulPow10(a, s)
	}
	if s > 22 || s < -22 {
		return 0, 0, false
	}
	m = uint64(int64(float64(p + 0.5))) // p < 2^63: the signed conversion is one instruction
	if m == 0 || m >= 1e15 {
		return 0, 0, false
	}
	var back float64
	if s >= 0 {
		back = float64(int64(m)) / pow10f[s]
	} else {
		back = float64(int64(m)) * pow10f[-s]
	}
	if back != a {
		return 0, 0, false
	}
	m, z := trimZeros(m)
	return m, z - s, true
}

// centsDec returns the canonical decimal m × 10^e of a positive double a that is not an integer
// when a is the nearest double to a decimal of one or two places (an amount in cents, a rate in
// percent) below 10^13; ok is false otherwise. It is shortDec's check at those two scales,
// cheaper than finding fifteen digits and trimming them: when a × 10^k rounds to an integer
// m < 10^15 and the correctly rounded m / 10^k (exact operands) is a again, a is the nearest
// double to m × 10^-k, a decimal of at most 15 digits, which is therefore its canonical decimal
// (see shortDec). m ends in at most one zero (two would make a an integer): one is trimmed.
func centsDec(a float64) (m uint64, e int, ok bool) {
	for k := 1; k <= 2; k++ {
		p := a * pow10f[k]
		if p >= 1e15 {
			return 0, 0, false
		}
		m = uint64(int64(p)) // below 2^63: the signed conversion is one instruction
		if float64(int64(m)) == p && m != 0 && float64(int64(m))/pow10f[k] == a {
			if m%10 == 0 {
				return m / 10, 1 - k, true
			}
			return m, -k, true
		}
	}
	return 0, 0, false
}

// mulPow10 returns a × 10^s rounded, for |s| ≤ 22 (any value for other s: the caller refuses it).
func mulPow10(a float64, s int) float64 {
	switch {
	case s >= 0 && s <= 22:
		return a * pow10f[s]
	case s < 0 && s >= -22:
		return a / pow10f[-s]
	}
	return 0
}

// trimZeros returns m (below 10^16) without its trailing zeros and how many were removed.
// 10^k divides m only when 2^k does, so k starts at m's trailing zero bits (at most 15) and
// goes down; 5^k divides x = m / 2^k exactly when x × 5^-k (mod 2^64) is at most (2^64-1)/5^k,
// and that product is then the quotient.
func trimZeros(m uint64) (uint64, int) {
	k := min(bits.TrailingZeros64(m), 15)
	for ; k > 0; k-- {
		if q := (m >> k) * inv5[k]; q <= max5[k] {
			return q, k
		}
	}
	return m, 0
}

// inv5[k] is the inverse of 5^k modulo 2^64 and max5[k] is (2^64-1)/5^k, for trimZeros.
var inv5, max5 = func() (inv, lim [16]uint64) {
	var p uint64 = 1
	for k := range inv {
		// Newton's iteration x = x(2 - px) doubles the correct low bits of p's inverse,
		// starting from p itself (correct to 3 bits for odd p): 3, 6, 12, 24, 48, 96
		x := p
		for range 5 {
			x *= 2 - p*x
		}
		inv[k], lim[k] = x, math.MaxUint64/p
		p *= 5
	}
	return inv, lim
}()

// slowDec returns the canonical decimal of f from strconv's 15-digit text.
func slowDec(f float64) (neg bool, m uint64, e int) {
	if !Finite(f) {
		return false, 0, -(Digits - 1)
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, 'e', Digits-1, 64) // -d.dddddddddddddde-ddd
	i := 0
	if b[0] == '-' {
		neg = true
		i++
	}
	for ; b[i] != 'e'; i++ {
		if b[i] != '.' {
			m = m*10 + uint64(b[i]-'0')
		}
	}
	eneg := b[i+1] == '-'
	x := 0
	for i += 2; i < len(b); i++ {
		x = x*10 + int(b[i]-'0')
	}
	if eneg {
		x = -x
	}
	m, z := trimZeros(m)
	return neg, m, x - (Digits - 1) + z
}

// fromDec returns the double nearest to ±m × 10^e (m ≤ 10^15), with zero unsigned; ok is false
// when that double would be infinite.
func fromDec(neg bool, m uint64, e int) (float64, bool) {
	if m == 0 {
		return 0, true
	}
	var f float64
	switch {
	case e >= 0 && e <= 22:
		// m < 2^53 and 10^e are exact, so one correctly rounded operation gives the nearest double
		// (m converts as a signed integer, one instruction)
		f = float64(int64(m)) * pow10f[e]
	case e < 0 && e >= -22:
		f = float64(int64(m)) / pow10f[-e]
	case e+digits64(m) > 310: // at least 10^310
		return 0, false
	case e+digits64(m) < -325: // below 10^-325, under half the smallest subnormal
		return 0, true
	default:
		var buf [40]byte
		b := strconv.AppendUint(buf[:0], m, 10)
		b = append(b, 'e')
		b = strconv.AppendInt(b, int64(e), 10)
		var err error
		f, err = strconv.ParseFloat(string(b), 64)
		if err != nil && math.IsInf(f, 0) {
			return 0, false
		}
		if f == 0 {
			return 0, true // below the smallest subnormal
		}
	}
	if neg {
		f = -f
	}
	return f, true
}

// round15 rounds ±(hi·2^64 + lo) × 10^e to 15 significant digits, ties to even, and returns the
// nearest double. sticky says a nonzero remainder was already dropped below lo; it counts only
// when digits are dropped here.
func round15(neg bool, hi, lo uint64, e int, sticky bool) (float64, bool) {
	if hi == 0 {
		if lo < 1e15 {
			return fromDec(neg, lo, e)
		}
		// 16 to 20 digits: drop k at once; the remainder against half of 10^k decides, with
		// sticky breaking an exact tie as it does below
		k := digits64(lo) - Digits
		q, r := divPow10(lo, k)
		if half := pow10u[k] / 2; r > half || (r == half && (sticky || q&1 == 1)) {
			q++
		}
		return fromDec(neg, q, e+k)
	}
	k := digits128(hi, lo) - Digits // digits to drop, 1 to 24
	if k > 1 {
		var r uint64
		_, lo, r = divPow10x128(hi, lo, k-1) // the quotient has 16 digits: its high word is 0
		sticky = sticky || r != 0
	}
	// 16 digits left: lo holds them
	q, d := lo/10, lo%10
	if d > 5 || (d == 5 && (sticky || q&1 == 1)) {
		q++
	}
	return fromDec(neg, q, e+k)
}

// digits64 returns the number of decimal digits of x > 0.
func digits64(x uint64) int {
	t := (bits.Len64(x) * 1233) >> 12 // ⌊log10 2^len⌋: the digit count is t or t+1
	if x < pow10u[t] {
		return t
	}
	return t + 1
}

// digits128 returns the number of decimal digits of hi·2^64 + lo > 0.
func digits128(hi, lo uint64) int {
	if hi == 0 {
		return digits64(lo)
	}
	t := ((bits.Len64(hi) + 64) * 1233) >> 12 // 19 to 38
	ph, pl := bits.Mul64(pow10u[19], pow10u[t-19])
	if hi < ph || (hi == ph && lo < pl) {
		return t
	}
	return t + 1
}

// divPow10 returns x / 10^k and x % 10^k for 0 ≤ k ≤ 19 with constant divisors, which the
// compiler turns into multiplications.
func divPow10(x uint64, k int) (uint64, uint64) {
	var q uint64
	switch k {
	case 0:
		return x, 0
	case 1:
		q = x / 1e1
	case 2:
		q = x / 1e2
	case 3:
		q = x / 1e3
	case 4:
		q = x / 1e4
	case 5:
		q = x / 1e5
	case 6:
		q = x / 1e6
	case 7:
		q = x / 1e7
	case 8:
		q = x / 1e8
	case 9:
		q = x / 1e9
	case 10:
		q = x / 1e10
	case 11:
		q = x / 1e11
	case 12:
		q = x / 1e12
	case 13:
		q = x / 1e13
	case 14:
		q = x / 1e14
	case 15:
		q = x / 1e15
	case 16:
		q = x / 1e16
	case 17:
		q = x / 1e17
	case 18:
		q = x / 1e18
	default:
		q = x / 1e19
	}
	return q, x - q*pow10u[k]
}

// divPow10x128 returns (hi·2^64 + lo) / 10^k as 128 bits and whether the remainder is nonzero
// (as 0 or 1), for 1 ≤ k ≤ 38.
func divPow10x128(hi, lo uint64, k int) (qh, ql, rem uint64) {
	for k > 0 {
		j := min(k, 19)
		k -= j
		var r uint64
		if hi == 0 {
			lo, r = divPow10(lo, j)
		} else {
			d := pow10u[j]
			var r1 uint64
			hi, r1 = hi/d, hi%d
			lo, r = bits.Div64(r1, lo, d)
		}
		if r != 0 {
			rem = 1
		}
	}
	return hi, lo, rem
}

// scale128 returns (hi·2^64 + lo) × 10^k; ok is false when the product does not fit in 128 bits.
func scale128(hi, lo uint64, k int) (uint64, uint64, bool) {
	if k > 38 {
		return 0, 0, hi == 0 && lo == 0
	}
	for k > 0 {
		j := min(k, 19)
		k -= j
		p := pow10u[j]
		h1, l1 := bits.Mul64(lo, p)
		h2, l2 := bits.Mul64(hi, p)
		var c uint64
		hi, c = bits.Add64(l2, h1, 0)
		if h2 != 0 || c != 0 {
			return 0, 0, false
		}
		lo = l1
	}
	return hi, lo, true
}

// sum128 is an exact running sum ±(hi·2^64 + lo) × 10^e.
type sum128 struct {
	neg    bool
	hi, lo uint64
	e      int
}

// add adds ±m × 10^e; it returns false when the aligned sum does not fit in 128 bits.
func (s *sum128) add(neg bool, m uint64, e int) bool {
	if m == 0 {
		return true
	}
	if s.hi == 0 && s.lo == 0 {
		s.neg, s.lo, s.e = neg, m, e
		return true
	}
	var th, tl uint64 = 0, m
	ok := true
	switch {
	case e > s.e:
		th, tl, ok = scale128(0, m, e-s.e)
	case e < s.e:
		s.hi, s.lo, ok = scale128(s.hi, s.lo, s.e-e)
		s.e = e
	}
	if !ok {
		return false
	}
	if neg == s.neg {
		var c uint64
		s.lo, c = bits.Add64(s.lo, tl, 0)
		s.hi, c = bits.Add64(s.hi, th, c)
		return c == 0
	}
	if s.hi > th || (s.hi == th && s.lo >= tl) {
		var b uint64
		s.lo, b = bits.Sub64(s.lo, tl, 0)
		s.hi, _ = bits.Sub64(s.hi, th, b)
		return true
	}
	var b uint64
	s.lo, b = bits.Sub64(tl, s.lo, 0)
	s.hi, _ = bits.Sub64(th, s.hi, b)
	s.neg = neg
	return true
}
