#!/usr/bin/env bash
# Benchmarks of the TypeScript runtime (docs/benchmarks.md): the four expression cases against
# json-logic-js, cel-js, zen-engine and a hand-written closure, and the five fixtures' evaluations
# per second beside the Go runtime's BenchmarkFixtureEvaluation, in interleaved rounds (one core
# each) so that the machine's load falls on both alike; medians are reported.
# Usage: bash runtimes/ts/bench.sh [rounds, default 3] [seconds per case, default 1]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-3}"
secs="${2:-1}"
out=.bin/bench-typescript
mkdir -p "$out"
rm -f "$out"/*
bench=runtimes/ts/packages/rules/dist/bench
# the other engines are installed for the benchmark only (their native packages per platform do
# not belong in the lock file that npm ci reads)
(cd runtimes/ts && npm install --no-save --no-audit --no-fund --loglevel=error \
  json-logic-js@2.0.5 @marcbachmann/cel-js@8.0.0 @gorules/zen-engine@0.54.0)
for r in $(seq 1 "$rounds"); do
  (cd engine && GOMAXPROCS=1 go test -run '^$' -bench 'FixtureEvaluation$' -benchtime "${secs}s" -count 1 .) > "$out/go-$r.txt"
  BENCH_ONLY=fixtures node "$bench/bench.js" "$secs" > "$out/ts-fixtures-$r.jsonl"
  BENCH_ONLY=expressions node "$bench/bench.js" "$secs" > "$out/ts-expressions-$r.jsonl"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); node $(node --version); $(go version)"
node "$bench/report.js" "$out"/*
