#!/usr/bin/env bash
# Runs the expression benchmarks (sdods, expr and cel-go side by side) and prints benchstat's
# tables: one row per case, one column per engine, expr first.
#
#   bash bench/run.sh              # 10 rounds, about 4 minutes
#   COUNT=3 bash bench/run.sh      # quicker
#
# Each round runs every case in every engine once (-count 1), so a change in the machine's load
# during the run falls on all engines alike; the rounds make benchstat's samples. The raw results
# are kept in bench/results.txt (ignored by git).
set -euo pipefail
cd "$(dirname "$0")"
go test -c -o bench.test .
: > results.txt
for ((i = 1; i <= ${COUNT:-10}; i++)); do
  ./bench.test -test.run '^$' -test.bench . -test.benchmem -test.count 1 | tee -a results.txt
done
rm -f bench.test
go run golang.org/x/perf/cmd/benchstat -row /case -col /engine results.txt
