package num

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// The math/big arithmetic: the slow path for operands whose exact result does not fit in 128
// bits (exponents far apart, long products), and for division by zero, which panics as it
// always has (callers handle b == 0 first).

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

// roundBig rounds m × 10^e (with sticky meaning "a nonzero remainder was already dropped below
// m") to 15 significant digits, ties to even, and returns the nearest double.
func roundBig(m *big.Int, e int, sticky bool) (float64, bool) {
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

// addBig is Add past its integer fast path.
func addBig(xs []float64) (float64, bool) {
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
	return roundBig(&acc.m, acc.e, false)
}

// mulBig is Mul past its integer fast path.
func mulBig(xs []float64) (float64, bool) {
	acc := &dec{}
	acc.m.SetInt64(1)
	for _, x := range xs {
		d := toDec(x)
		acc.m.Mul(&acc.m, &d.m)
		acc.e += d.e
		if acc.m.Sign() == 0 {
			return 0, true
		}
	}
	return roundBig(&acc.m, acc.e, false)
}

// divBig is Div.
func divBig(a, b float64) (float64, bool) {
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
	return roundBig(q, x.e-y.e-shift, r.Sign() != 0)
}

// modBig is Mod past its integer fast path.
func modBig(a, b float64) (float64, bool) {
	x, y, e := align(toDec(a), toDec(b))
	r := new(big.Int).Rem(x, y)
	return roundBig(r, e, false)
}

// roundPlacesBig is Round.
func roundPlacesBig(f float64, places int) (float64, bool) {
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
	return roundBig(q, -places, false)
}
