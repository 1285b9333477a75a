package jsonv

import (
	"fmt"
	"unicode/utf8"
)

// CheckText refuses a JSON text that is not well-formed UTF-8 (RFC 3629: no invalid or truncated
// sequence, overlong form, encoded surrogate or code point beyond U+10FFFF) or that escapes a
// lone surrogate (a \u escape of U+D800 to U+DBFF not followed by one of U+DC00 to U+DFFF, or
// one of U+DC00 to U+DFFF not preceded by such). Such a text is malformed JSON in every runtime
// (spec/v1/README.md, "Text"): no runtime repairs it into U+FFFD, because runtimes repair it
// differently. The error names the byte offset.
func CheckText(data []byte) error {
	if !utf8.Valid(data) {
		for i := 0; i < len(data); {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				return fmt.Errorf("invalid UTF-8 at byte %d", i)
			}
			i += size
		}
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		// outside a string a backslash is a syntax error the decoder reports; inside one it
		// starts an escape, whose second byte is skipped here
		if i+1 >= len(data) {
			break
		}
		if data[i+1] != 'u' {
			i++
			continue
		}
		r, ok := hex4At(data, i+2)
		if !ok {
			i++
			continue // not an escape the decoder accepts: it reports it
		}
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return fmt.Errorf("lone surrogate escape \\u%04x at byte %d", r, i)
		case r >= 0xd800 && r <= 0xdbff:
			if i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
				if r2, ok := hex4At(data, i+8); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
					i += 11 // the pair
					continue
				}
			}
			return fmt.Errorf("lone surrogate escape \\u%04x at byte %d", r, i)
		}
		i += 5
	}
	return nil
}

func hex4At(data []byte, at int) (rune, bool) {
	if at+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
