#!/usr/bin/env bash
# Benchmarks of the TypeScript runtime (docs/benchmarks.md): the four expression cases against
# json-logic-js, cel-js, zen-engine and a hand-written closure, and the five fixtures' evaluations
# per second beside the Go runtime's BenchmarkFixtureEvaluation in the same run (one core each).
# Usage: bash runtimes/ts/bench.sh [seconds per case, default 1]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-1}"
mkdir -p .bin
(cd engine && GOMAXPROCS=1 go test -run '^$' -bench 'FixtureEvaluation$' -benchtime "${secs}s" -count 1 .) | tee .bin/bench-go.txt
taskset -c 0 node runtimes/ts/packages/rules/dist/bench/bench.js "$secs" .bin/bench-go.txt 2>/dev/null \
  || node runtimes/ts/packages/rules/dist/bench/bench.js "$secs" .bin/bench-go.txt
