#!/usr/bin/env bash
# Rule evaluation of the five conformance fixtures (engine BenchmarkFixtureEvaluationInto), two ways:
#
#   bash bench/fixtures.sh           # instructions per evaluation, counted by valgrind's callgrind
#   bash bench/fixtures.sh json      # the same, and per request decoded from its compact JSON body
#                                    # (EvaluateJSONInto), with the ratio to evaluation alone
#   bash bench/fixtures.sh wall 5    # wall time on one core (GOMAXPROCS=1), 5 runs
#
# Instruction counts do not depend on what else the machine is doing, so they compare two versions
# of the engine exactly, on a shared or noisy machine too (they are not time: a load that misses the
# cache counts one). Each count is the difference of two runs of the benchmark (25 000 and 5 000
# evaluations), so loading the fixtures cancels out. Needs valgrind (Debian: apt-get install valgrind).
# cpu.rdtscp=off: valgrind 3.19 does not know the RDTSCP instruction, which Go's runtime uses to
# time lock spinning; a run that reaches it dies of SIGILL, and its count would be garbage.
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
count() { # benchmark fixture evaluations -> instructions of the whole run
  local out
  out=$(GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$bin" -test.run '^$' -test.bench "$1/$2\$" -test.benchtime "$3x" 2>&1)
  grep -Eq "^Benchmark$1/$2(-[0-9]+)?[[:space:]]+$3[[:space:]]" <<<"$out" || { echo "$1/$2 did not run $3 times:" >&2; tail -20 <<<"$out" >&2; exit 1; }
  awk '/Collected/ { gsub(",", "", $4); print $4 }' <<<"$out"
}
per() { # benchmark fixture -> instructions per evaluation
  local a b
  a=$(count "$1" "$2" 5000)
  b=$(count "$1" "$2" 25000)
  echo $(((b - a) / 20000))
}
for f in "${fixtures[@]}"; do
  e=$(per FixtureEvaluationInto "$f")
  if [ "${1:-}" = json ]; then
    j=$(per FixtureEvaluationJSONIntoCompact "$f")
    echo "$f $e instructions/evaluation, $j from the JSON body ($(awk "BEGIN { printf \"%.2f\", $j / $e }")×)"
  else
    echo "$f $e instructions/evaluation"
  fi
done
