package jsonv

import (
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/sdods/sdods/engine/internal/num"
)

// TestNumberAgreesWithParse checks the scanner's own conversion of short numbers against
// num.Parse (the slow path's): decimals of up to 15 digits with the point anywhere, signs,
// zeros, and numbers just past the fast path's reach, bit for bit.
func TestNumberAgreesWithParse(t *testing.T) {
	texts := []string{"0", "-0", "0.0", "-0.0", "0.5", "-0.5", "19.9", "5.5", "0.1", "0.3", "1.000000000000001",
		"123456789012345", "12345678901234.5", "0.00000000000001", "-999999999999999", "9999999999999.99",
		"1234567890123456", "1.234567890123456", "1e2", "1.5E-3", "100.25"}
	r := rand.New(rand.NewSource(3))
	for n := 0; n < 200_000; n++ {
		digits := 1 + r.Intn(17)
		var b strings.Builder
		if r.Intn(3) == 0 {
			b.WriteByte('-')
		}
		whole := 1 + r.Intn(digits)
		if r.Intn(4) == 0 {
			b.WriteByte('0')
			whole = 1
		} else {
			b.WriteByte(byte('1' + r.Intn(9)))
			for k := 1; k < whole; k++ {
				b.WriteByte(byte('0' + r.Intn(10)))
			}
		}
		if whole < digits {
			b.WriteByte('.')
			for k := whole; k < digits; k++ {
				b.WriteByte(byte('0' + r.Intn(10)))
			}
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		want, wantOK := num.Parse(text)
		got, ok := Borrow([]byte(text)).number()
		if ok != wantOK || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%s: %v %v (%s), want %v %v", text, got, ok, strconv.FormatFloat(got, 'g', -1, 64), want, wantOK)
		}
	}
}
