#!/usr/bin/env bash
# The Java runtime against the Go engine in the same run: the five fixtures' evaluations and the
# four expression cases (engine/bench_ruleset_test.go, engine/bench_test.go), in CPU time per
# operation. Each round times Go's benchmarks (GOMAXPROCS=1, a fixed number of iterations, the
# process's user+system time minus that of one iteration, so loading the fixtures does not count)
# and then one fresh JVM (a fork: warm-up, then timed windows, dev.sdods.rules.Bench, process CPU
# time). CPU time rather than wall time because the machines these run on are shared: wall time
# moves with other tenants' load, CPU time much less. The table gives medians over the rounds.
#   bash runtimes/java/bench.sh [rounds (3)] [warm-up CPU s (2)] [windows (3)] [window CPU s (0.5)]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3} warm=${2:-2} windows=${3:-3} window=${4:-0.5}
make -s java-jar
mkdir -p runtimes/java/build/bench-classes .bin
javac --release 17 -encoding UTF-8 -cp runtimes/java/build/classes -d runtimes/java/build/bench-classes \
  runtimes/java/src/bench/java/dev/sdods/rules/Bench.java
(cd engine && go test -c -o ../.bin/engine.test .)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cases="FixtureEvaluation/signup FixtureEvaluation/addressbook FixtureEvaluation/loan FixtureEvaluation/checkout
  FixtureEvaluation/insurance Boolean StartsWith FunctionCall Map100"

# gocpu FILTER N: CPU ns per iteration of the Go benchmarks matching FILTER, over N iterations
gocpu() {
  local TIMEFORMAT='%U %S' t1 t0
  t1=$( { time (cd engine && GOMAXPROCS=1 ../.bin/engine.test -test.run '^$' -test.bench "$1" -test.benchtime "$2x" >/dev/null); } 2>&1 )
  t0=$( { time (cd engine && GOMAXPROCS=1 ../.bin/engine.test -test.run '^$' -test.bench "$1" -test.benchtime 1x >/dev/null); } 2>&1 )
  echo "$t1 $t0" | awk -v n="$2" '{ printf "%.1f\n", (($1 + $2) - ($3 + $4)) * 1e9 / (n - 1) }'
}

for r in $(seq 1 "$rounds"); do
  echo "round $r of $rounds" >&2
  for c in $cases; do
    case $c in
      FixtureEvaluation/*) f="^BenchmarkFixtureEvaluation\$/^${c#*/}\$" n=300000 ;;
      Map100) f="^BenchmarkMap100\$" n=100000 ;;
      *) f="^Benchmark$c\$" n=3000000 ;;
    esac
    echo "go $c $(gocpu "$f" "$n")" >>"$out"
  done
  java -XX:+UseSerialGC -cp runtimes/java/build/classes:runtimes/java/build/bench-classes dev.sdods.rules.Bench \
    . "$warm" "$windows" "$window" | awk '{ sub(/^BenchJava\//, "", $1); print "java", $1, $2 }' >>"$out"
done
echo "| case | Go CPU ns/op | Java CPU ns/op | Java / Go |"
echo "|---|---:|---:|---:|"
for c in $cases; do
  med() { awk -v e="$1" -v c="$c" '$1 == e && $2 == c { print $3 }' "$out" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
  g=$(med go) j=$(med java)
  awk -v c="$c" -v g="$g" -v j="$j" 'BEGIN { printf "| %s | %.0f | %.0f | %.2f |\n", c, g, j, j / g }'
done
