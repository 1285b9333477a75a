package engine_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/sdods/sdods/engine"
)

// BenchmarkFixtureEvaluation measures evaluations of each fixture's golden requests on one core:
// the request already decoded (as a host hands it over), shape check, every rule and state rule,
// findings with resolved messages. b.N counts evaluations; evaluations/s = 1e9 / ns/op.
func BenchmarkFixtureEvaluation(b *testing.B) {
	for _, f := range loadFixtures(b) {
		var reqs []*engine.Request
		var chans []string
		for _, tc := range f.golden.Tests {
			req, err := engine.ParseRequest(tc.Request)
			if err != nil {
				b.Fatal(err)
			}
			ch := tc.Channel
			if ch == "" {
				ch = engine.ChannelServer
			}
			reqs = append(reqs, req)
			chans = append(chans, ch)
		}
		b.Run(f.golden.Fixture, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k := i % len(reqs)
				if _, err := f.rs.EvaluateChannel(chans[k], reqs[k]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFixtureEvaluationJSON includes decoding and shape-checking the JSON request body.
func BenchmarkFixtureEvaluationJSON(b *testing.B) {
	for _, f := range loadFixtures(b) {
		b.Run(f.golden.Fixture, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				tc := f.golden.Tests[i%len(f.golden.Tests)]
				req, err := engine.ParseRequest(tc.Request)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := f.rs.Evaluate(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFixtureParseRequest measures decoding and shape-checking the JSON request bodies of
// each fixture (engine.ParseRequest), cycling through its golden requests.
func BenchmarkFixtureParseRequest(b *testing.B) {
	for _, f := range loadFixtures(b) {
		b.Run(f.golden.Fixture, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				tc := f.golden.Tests[i%len(f.golden.Tests)]
				if _, err := engine.ParseRequest(tc.Request); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFixtureResultJSON measures writing the results of each fixture's golden requests as
// canonical JSON (Result.JSON).
func BenchmarkFixtureResultJSON(b *testing.B) {
	for _, f := range loadFixtures(b) {
		var results []*engine.Result
		for _, tc := range f.golden.Tests {
			ch := tc.Channel
			if ch == "" {
				ch = engine.ChannelServer
			}
			req, err := engine.ParseRequest(tc.Request)
			if err != nil {
				b.Fatal(err)
			}
			res, err := f.rs.EvaluateChannel(ch, req)
			if err != nil {
				b.Fatal(err)
			}
			results = append(results, res)
		}
		b.Run(f.golden.Fixture, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := results[i%len(results)].JSON(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFixtureEvaluationInto is BenchmarkFixtureEvaluation with one Result reused
// (RuleSet.EvaluateInto), as a server keeping results in a pool evaluates.
func BenchmarkFixtureEvaluationInto(b *testing.B) {
	for _, f := range loadFixtures(b) {
		var reqs []*engine.Request
		var chans []string
		for _, tc := range f.golden.Tests {
			req, err := engine.ParseRequest(tc.Request)
			if err != nil {
				b.Fatal(err)
			}
			ch := tc.Channel
			if ch == "" {
				ch = engine.ChannelServer
			}
			reqs = append(reqs, req)
			chans = append(chans, ch)
		}
		b.Run(f.golden.Fixture, func(b *testing.B) {
			var res engine.Result
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k := i % len(reqs)
				if err := f.rs.EvaluateInto(&res, chans[k], reqs[k]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFixtureEvaluationJSONInto is BenchmarkFixtureEvaluationInto from the JSON request
// bodies (RuleSet.EvaluateJSONInto): decoding and checking each body, then evaluating it into one
// reused Result, as the rule server does per request. The bodies are those of the golden files,
// indented; ...Compact has them without white space, as most clients send them.
func BenchmarkFixtureEvaluationJSONInto(b *testing.B) { benchJSONInto(b, false) }

func BenchmarkFixtureEvaluationJSONIntoCompact(b *testing.B) { benchJSONInto(b, true) }

func benchJSONInto(b *testing.B, compact bool) {
	for _, f := range loadFixtures(b) {
		var bodies [][]byte
		for _, tc := range f.golden.Tests {
			body := []byte(tc.Request)
			if compact {
				var buf bytes.Buffer
				if err := json.Compact(&buf, body); err != nil {
					b.Fatal(err)
				}
				body = buf.Bytes()
			}
			bodies = append(bodies, body)
		}
		b.Run(f.golden.Fixture, func(b *testing.B) {
			var res engine.Result
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				k := i % len(bodies)
				if err := f.rs.EvaluateJSONInto(&res, f.golden.Tests[k].Channel, bodies[k]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
