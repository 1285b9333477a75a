// Package bench runs the four cases of antonmedv/golang-expression-evaluation-comparison in
// sdods, expr and cel-go side by side. Each case is written once per engine in that engine's
// own language; every program is compiled outside the timed loop, all three are given the same
// inputs, and their results are checked equal before any timing.
//
// Run it from this directory (results in docs/benchmarks.md):
//
//	go test -run '^$' -bench . -benchmem -count 10 | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat new.txt
package bench
