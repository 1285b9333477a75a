#!/usr/bin/env bash
# Rule evaluation of the five conformance fixtures (engine BenchmarkFixtureEvaluationInto), two ways:
#
#   bash bench/fixtures.sh           # instructions per evaluation, counted by valgrind's callgrind
#   bash bench/fixtures.sh wall 5    # wall time on one core (GOMAXPROCS=1), 5 runs
#
# Instruction counts do not depend on what else the machine is doing, so they compare two versions
# of the engine exactly, on a shared or noisy machine too (they are not time: a load that misses the
# cache counts one). Each count is the difference of two runs of the benchmark (25 000 and 5 000
# evaluations), so loading the fixtures cancels out. Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/../engine"
bin="$(mktemp -d)/engine.test"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" .
fixtures=(signup addressbook loan checkout insurance)
if [ "${1:-}" = wall ]; then
  for ((i = 1; i <= ${2:-5}; i++)); do
    GOMAXPROCS=1 "$bin" -test.run '^$' -test.bench 'FixtureEvaluation(Into)?$' -test.benchmem -test.benchtime 1s
  done | grep '^Benchmark'
  exit 0
fi
count() { # evaluations -> instructions of the whole run
  GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$bin" -test.run '^$' -test.bench "FixtureEvaluationInto/$1\$" -test.benchtime "$2x" 2>&1 |
    awk '/Collected/ { gsub(",", "", $4); print $4 }'
}
for f in "${fixtures[@]}"; do
  a=$(count "$f" 5000)
  b=$(count "$f" 25000)
  echo "$f $(((b - a) / 20000)) instructions/evaluation"
done
