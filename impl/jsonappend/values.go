package jsonappend

import (
	"math"
	"slices"
	"strconv"
	"time"
)

// Time appends t as time.Time's MarshalJSON writes it: RFC 3339 with nanoseconds, quoted. ok is
// false for what MarshalJSON refuses (a year outside 0–9999, a zone hour outside 0–23); b is then
// not a valid document.
func Time(b []byte, t time.Time) (out []byte, ok bool) {
	b = append(b, '"')
	n0 := len(b)
	b = t.AppendFormat(b, time.RFC3339Nano)
	if b[n0+len("9999")] != '-' {
		return b, false
	}
	if b[len(b)-1] != 'Z' {
		c := b[len(b)-len("Z07:00")]
		z := b[len(b)-len("07:00"):]
		if ('0' <= c && c <= '9') || 10*(z[0]-'0')+(z[1]-'0') >= 24 {
			return b, false
		}
	}
	return append(b, '"'), true
}

// Float appends f as encoding/json writes a float of bitSize bits (32 or 64): the shortest form,
// the exponent form below 1e-6 and from 1e21 on, with e-09 written e-9. ok is false for NaN and
// the infinities, which encoding/json refuses; nothing is appended then.
func Float(b []byte, f float64, bitSize int) (out []byte, ok bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bitSize == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) || bitSize == 64 && (abs < 1e-6 || abs >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bitSize)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// StringMap appends m as encoding/json writes a map[string]string: its keys sorted, null when nil.
func StringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = String(b, k)
		b = String(append(b, ':'), m[k])
	}
	return append(b, '}')
}
