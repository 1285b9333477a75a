package httpapi

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// escapePath's shortcut for a path with nothing to escape gives what the escaping loop gives.
func TestEscapePathShortcut(t *testing.T) {
	slow := func(p string) string {
		var b strings.Builder
		for i := 0; i < len(p); {
			r, size := utf8.DecodeRuneInString(p[i:])
			if (r == utf8.RuneError && size == 1) || r < 0x20 || r == 0x7f || r == '%' {
				fmt.Fprintf(&b, "%%%02X", p[i])
				i++
				continue
			}
			b.WriteString(p[i : i+size])
			i += size
		}
		return b.String()
	}
	cases := []string{"", "/", "/api/runs", "/api/projects/shop/features", "/a b/~!$&'()*+,;=:@", "/a%2Fb", "/caf\u00e9",
		"/\x00", "/\x1f", "/\x7f", "/\xff", "/\xe2\x80", "/\u2028", "/~\x7e"}
	for c := 0; c < 256; c++ {
		cases = append(cases, "/x"+string(rune(c)), "/x"+string([]byte{byte(c)}))
	}
	for _, p := range cases {
		if got, want := escapePath(p), slow(p); got != want {
			t.Errorf("escapePath(%q) = %q, want %q", p, got, want)
		}
	}
}
