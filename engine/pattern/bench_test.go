package pattern_test

import (
	"strings"
	"testing"
)

// BenchmarkWorstCase measures the costliest patterns the limits allow against the longest
// subject: time grows with pattern size × subject length, never exponentially.
func BenchmarkWorstCase(b *testing.B) {
	for _, bc := range []struct{ name, pattern, subject string }{
		{"count", ".{999}c", strings.Repeat("a", 10000)},
		{"optional-count", ".{0,999}c", strings.Repeat("a", 10000)},
		{"nested-counts", "(?:(?:.{0,9}){10}){11}c", strings.Repeat("a", 10000)},
		{"repeated-alternation", "(?:a|aa|.){249}c", strings.Repeat("a", 10000)},
		{"stars", strings.Repeat(".*", 499) + "c", strings.Repeat("a", 10000)},
		{"ambiguous-star", strings.Repeat("(?:a|a)*", 100) + "b", strings.Repeat("a", 10000)},
		{"optional-then-count", "^" + strings.Repeat("a?", 300) + strings.Repeat("a", 300) + "$", strings.Repeat("a", 300)},
		// The costliest patterns of the bit-parallel matcher (64 positions at most): every
		// position followed by others than the next one, and a long optional count.
		{"64-positions-stars", strings.Repeat("(?:a|b)*", 31) + "c", strings.Repeat("a", 10000)},
		{"64-positions-count", ".{0,62}c", strings.Repeat("a", 10000)},
		{"64-positions-non-ascii", strings.Repeat("(?:é|[^a])*", 31) + "c", strings.Repeat("é", 10000)},
	} {
		p := mustCompile(b, bc.pattern)
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := p.Match(bc.subject); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMatch measures Match on short subjects, the common case in rule evaluation.
func BenchmarkMatch(b *testing.B) {
	for _, bc := range []struct{ name, pattern, subject string }{
		{"username/yes", "^[a-z][a-z0-9_]{2,19}$", "john_doe_1984"},
		{"username/no", "^[a-z][a-z0-9_]{2,19}$", "John_Doe"},
		{"username/long", "^[a-z][a-z0-9_]{2,19}$", "a_user_name_of_more_than_twenty_bytes"},
		{"email/yes", "^[^@ ]+@[^@ ]+[.][a-zA-Z]{2,}$", "john.doe@example.com"},
		{"email/no", "^[^@ ]+@[^@ ]+[.][a-zA-Z]{2,}$", "john.doe@example"},
		{"email/non-ascii", "^[^@ ]+@[^@ ]+[.][a-zA-Z]{2,}$", "jöhn.döe@exämple.com"},
		{"digits/search", `\d{3}-\d{4}`, "call 555-0123 today"},
		{"alternation", "^(?:red|green|blue)(?:-[a-z]+)?$", "green-light"},
		{"iban", "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$", "DE89370400440532013000"},
		{"unanchored/no", "colou?r", "the quick brown fox jumps over the lazy dog"},
	} {
		p := mustCompile(b, bc.pattern)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := p.Match(bc.subject); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
