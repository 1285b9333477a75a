// Package jcs serializes JSON by RFC 8785, the JSON Canonicalization Scheme: object members sorted
// by their names as UTF-16 code units, numbers written as ECMAScript writes a double (shortest
// round-trip digits), strings escaped only where JSON requires it, no insignificant white space.
// The same bytes come out on every machine, which is what checksums and bundles need. An indented
// layout with the same member order is offered for files people read.
package jcs

import (
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/sdods/sdods/engine/internal/jsonv"
	"github.com/sdods/sdods/engine/internal/num"
)

// Canonical returns the RFC 8785 form of n. It refuses numbers beyond double range, duplicate
// member names and strings that are not valid UTF-8.
func Canonical(n *jsonv.Node) ([]byte, error) {
	return appendNode(nil, n, "", 0)
}

// Indented returns n with the member order and scalars of Canonical, laid out with two-space
// indentation and a final newline.
func Indented(n *jsonv.Node) ([]byte, error) {
	b, err := appendNode(nil, n, "  ", 0)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func newline(b []byte, indent string, depth int) []byte {
	if indent == "" {
		return b
	}
	b = append(b, '\n')
	for i := 0; i < depth; i++ {
		b = append(b, indent...)
	}
	return b
}

func appendNode(b []byte, n *jsonv.Node, indent string, depth int) ([]byte, error) {
	if depth > jsonv.MaxDepth {
		return nil, errors.New("jcs: nested too deep")
	}
	switch n.Kind {
	case jsonv.Null:
		return append(b, "null"...), nil
	case jsonv.Bool:
		return strconv.AppendBool(b, n.Bool), nil
	case jsonv.Number:
		f, ok := num.Parse(n.Text)
		if !ok {
			return nil, errors.New("jcs: number " + n.Text + " is not a JSON number within double range")
		}
		return AppendNumber(b, f), nil
	case jsonv.String:
		if !utf8.ValidString(n.Text) {
			return nil, errors.New("jcs: a string is not valid UTF-8")
		}
		return AppendString(b, n.Text), nil
	case jsonv.Array:
		if len(n.Items) == 0 {
			return append(b, "[]"...), nil
		}
		b = append(b, '[')
		for i, it := range n.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = newline(b, indent, depth+1)
			var err error
			if b, err = appendNode(b, it, indent, depth+1); err != nil {
				return nil, err
			}
		}
		b = newline(b, indent, depth)
		return append(b, ']'), nil
	case jsonv.Object:
		if len(n.Members) == 0 {
			return append(b, "{}"...), nil
		}
		ms := make([]jsonv.Member, len(n.Members))
		copy(ms, n.Members)
		sort.SliceStable(ms, func(i, j int) bool { return Less(ms[i].Key, ms[j].Key) })
		b = append(b, '{')
		for i, m := range ms {
			if i > 0 {
				if ms[i-1].Key == m.Key {
					return nil, errors.New("jcs: member " + strconv.Quote(m.Key) + " appears more than once")
				}
				b = append(b, ',')
			}
			b = newline(b, indent, depth+1)
			if !utf8.ValidString(m.Key) {
				return nil, errors.New("jcs: a member name is not valid UTF-8")
			}
			b = AppendString(b, m.Key)
			b = append(b, ':')
			if indent != "" {
				b = append(b, ' ')
			}
			var err error
			if b, err = appendNode(b, m.Value, indent, depth+1); err != nil {
				return nil, err
			}
		}
		b = newline(b, indent, depth)
		return append(b, '}'), nil
	}
	return nil, errors.New("jcs: unknown node kind")
}

// Less orders member names by their UTF-16 code units, as RFC 8785 section 3.2.3 requires.
func Less(a, b string) bool {
	// Byte order equals code point order; it differs from UTF-16 order only when one side has a
	// supplementary character where the other has U+E000..U+FFFF, so compare code units then.
	if isBMPOnly(a) && isBMPOnly(b) {
		return a < b
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

func isBMPOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xF0 {
			return false
		}
	}
	return true
}

// AppendNumber writes f as ECMAScript's Number::toString does (RFC 8785 section 3.2.2.3): the
// shortest digits that read back as f, plain when the exponent is in [-7, 21), otherwise with an
// exponent such as 1e+21. Negative zero is written 0. f must be finite.
func AppendNumber(b []byte, f float64) []byte {
	if f == 0 {
		return append(b, '0')
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...) // never reached: callers refuse non-finite numbers
	}
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	// shortest digits and exponent: d.ddd e x
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	k := len(digits)
	n := e + 1 // position of the decimal point relative to the digits
	switch {
	case k <= n && n <= 21:
		b = append(b, digits...)
		for i := 0; i < n-k; i++ {
			b = append(b, '0')
		}
	case 0 < n && n <= 21:
		b = append(b, digits[:n]...)
		b = append(b, '.')
		b = append(b, digits[n:]...)
	case -6 < n && n <= 0:
		b = append(b, "0."...)
		for i := 0; i < -n; i++ {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		b = append(b, digits[0])
		if k > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if n-1 >= 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(n-1), 10)
	}
	return b
}

const hexDigits = "0123456789abcdef"

// AppendString writes s as a JSON string the way RFC 8785 does: '"' and '\' escaped, the control
// characters U+0000..U+001F as \b \t \n \f \r or \u00xx, everything else as is.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		start = i + 1
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
