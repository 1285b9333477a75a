// Package bench runs the four cases of antonmedv/golang-expression-evaluation-comparison in
// sdods, expr and cel-go side by side. Each case is written once per engine in that engine's
// own language; every program is compiled outside the timed loop, all three are given the same
// inputs, and their results are checked equal before and after timing (TestSameResults checks
// them too).
//
// Run it from this directory (results in docs/benchmarks.md):
//
//	go test -run '^$' -bench . -benchmem -count 10 | tee results.txt
//	go run golang.org/x/perf/cmd/benchstat -row /case -col /engine results.txt
//
// or bash run.sh, which interleaves the rounds so that every engine sees the same load.
//
// signup_test.go and zen/ compare rule evaluation on this machine: the signup fixture through
// RuleSet.EvaluateInto, through signupFloor (its rules written by hand in Go, the floor) and
// through GoRules Zen 0.54 (npm @gorules/zen-engine, its Rust core through the Node binding),
// on one core, alternated: bash zen.sh.
package bench
