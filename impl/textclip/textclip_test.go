package textclip

import (
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in      string
		n       int
		clip    string
		counted string
	}{
		{"", 3, "", ""},
		{"abc", 3, "abc", "abc"},
		{"abcd", 3, "abc…", "abc… (1 bytes more)"},
		{"héllo", 2, "h…", "h… (5 bytes more)"}, // é is two bytes: never cut inside it
		{"héllo", 3, "hé…", "hé… (3 bytes more)"},
		{"日本語", 4, "日…", "日… (6 bytes more)"},
		{"abc", 0, "…", "… (3 bytes more)"},
		{"abc", -1, "…", "… (3 bytes more)"},
	} {
		if got := Clip(tc.in, tc.n); got != tc.clip {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.clip)
		}
		if got := Counted(tc.in, tc.n); got != tc.counted {
			t.Errorf("Counted(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.counted)
		}
	}
}

func FuzzClip(f *testing.F) {
	f.Add("héllo wörld", 4)
	f.Fuzz(func(t *testing.T, s string, n int) {
		got := Clip(s, n)
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q is not valid UTF-8", s, n, got)
		}
		if n >= 0 && len(got) > n+len("…") {
			t.Fatalf("Clip(%q, %d) = %q is longer than allowed", s, n, got)
		}
	})
}
