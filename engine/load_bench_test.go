package engine_test

import (
	"testing"

	"github.com/sdods/sdods/engine"
	"github.com/sdods/sdods/engine/testops"
)

// BenchmarkFixtureLoad loads each fixture's bundle: decoding, reading the ruleset, parsing,
// analysing and compiling every expression (the cost of a load, not of an evaluation).
func BenchmarkFixtureLoad(b *testing.B) {
	for _, f := range loadFixtures(b) {
		ops := map[string]engine.Operator{}
		for _, name := range f.golden.Operators {
			ops[name] = testops.Operators()[name]
		}
		b.Run(f.golden.Fixture, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := engine.FromBundle(f.bundle, engine.WithOperators(ops)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
