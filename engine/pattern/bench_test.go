package pattern_test

import (
	"strings"
	"testing"
)

// BenchmarkWorstCase measures the costliest patterns the limits allow against the longest
// subject: time grows with pattern size × subject length, never exponentially.
func BenchmarkWorstCase(b *testing.B) {
	for _, bc := range []struct{ name, pattern, subject string }{
		{"count", ".{1000}c", strings.Repeat("a", 10000)},
		{"optional-count", ".{0,1000}c", strings.Repeat("a", 10000)},
		{"nested-counts", "(?:(?:.{0,10}){10}){10}c", strings.Repeat("a", 10000)},
		{"repeated-alternation", "(?:a|aa|.){333}c", strings.Repeat("a", 10000)},
		{"stars", strings.Repeat(".*", 499) + "c", strings.Repeat("a", 10000)},
		{"ambiguous-star", strings.Repeat("(?:a|a)*", 100) + "b", strings.Repeat("a", 10000)},
		{"optional-then-count", "^" + strings.Repeat("a?", 300) + strings.Repeat("a", 300) + "$", strings.Repeat("a", 300)},
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
