package engine

import (
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/sdods/sdods/engine/internal/diag"
	"github.com/sdods/sdods/engine/internal/num"
	"github.com/sdods/sdods/engine/internal/rules"
	"github.com/sdods/sdods/engine/internal/value"
)

// ParseEnv decodes a JSON object of environment roots and checks it as the engine protocol's
// expression command does (spec/v1/protocol.md): text that is not JSON (including invalid UTF-8
// and lone surrogate escapes), not an object, a member named twice at any level, a root nested
// more than 64 deep, a number beyond double range. Refusals are BAD_REQUEST.
func ParseEnv(raw []byte) (map[string]any, error) {
	env, d := rules.ParseEnv(raw)
	if d != nil {
		return nil, d
	}
	return env, nil
}

// FormatNumber returns the canonical text of f (15 significant digits, ECMAScript layout), or an
// EVALUATION_ERROR when f is not finite or is beyond double range once rounded.
func FormatNumber(f float64) (string, error) {
	s, ok := num.Format(f)
	if !ok {
		return "", diag.ResultOutOfRange("")
	}
	return s, nil
}

// MarshalValue writes a JSON value in canonical form: numbers as FormatNumber writes them, object
// members sorted by name (code point order), no insignificant white space, strings escaped only
// where JSON requires it. Values that are not JSON are refused.
func MarshalValue(v any) ([]byte, error) {
	if value.Depth(v, 10000) > 10000 {
		return nil, diag.EnvValue("", "the value is nested too deep")
	}
	var b []byte
	b, err := appendValue(b, v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func appendValue(b []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, t), nil
	case float64:
		s, err := FormatNumber(t)
		if err != nil {
			return nil, err
		}
		return append(b, s...), nil
	case string:
		return appendString(b, t), nil
	case []any:
		b = append(b, '[')
		for i, x := range t {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, x); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = appendValue(b, t[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	nv, d := value.Normalize(v, "")
	if d != nil {
		return nil, d
	}
	return appendValue(b, nv)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string: '"' and '\' escaped, control characters as \b \f \n
// \r \t or \u00XX, everything else (including non-ASCII) as is; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
