#!/usr/bin/env bash
# Signup on one core, side by side on this machine: sdods's RuleSet.EvaluateInto, signupFloor (the
# fixture's rules written by hand in Go: the floor) and GoRules Zen 0.54 (its Rust core through the
# Node binding, bench/zen/compare.mjs), on the same 11 golden requests, each checked against the
# golden findings first. Every round runs the Go benchmark and Zen one after the other, pinned to
# the same core with taskset (which goes first alternates), and prints the load average; the
# summary gives the median of the rounds. See docs/benchmarks.md, "Same machine: Zen and the floor".
#
#   bash bench/zen.sh [rounds]        # default 5; CPU=0 pins to core 0 (default 1)
set -euo pipefail
cd "$(dirname "$0")"
command -v taskset >/dev/null || { echo "taskset is missing (Debian: util-linux)"; exit 1; }
command -v node >/dev/null || { echo "node is missing"; exit 1; }
[ -d zen/node_modules/@gorules/zen-engine ] || (cd zen && npm install --no-save --no-audit --no-fund --loglevel=error)  # not `npm ci`: the lock holds only the Linux x64 binaries the registry here serves, and `npm ci` refuses a lock without every optional platform package
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/bench.test" .
cpu="${CPU:-1}"
go_round() {
  GOMAXPROCS=1 taskset -c "$cpu" "$tmp/bench.test" -test.run '^$' -test.bench '^BenchmarkSignup$' \
    -test.benchtime 1s -test.count 1 | awk '/^BenchmarkSignup/ { sub(/.*engine=/, "", $1); sub(/-[0-9]+$/, "", $1); print $1, $3 }'
}
zen_round() {
  taskset -c "$cpu" node zen/compare.mjs 3000 | node -e 'const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
    for (const k of ["binding_ns", "engine_timer_ns", "without_patterns_timer_ns", "one_read_timer_ns", "one_matches_timer_ns"]) console.log("zen-" + k.replace(/_ns$/, ""), r[k]);'
}
for ((i = 1; i <= ${1:-5}; i++)); do
  echo "round $i: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  if ((i % 2)); then { go_round; zen_round; }; else { zen_round; go_round; }; fi | tee -a "$tmp/results" >&2
done
echo "median of ${1:-5} rounds, ns per evaluation:"
sort -k1,1 -k2,2n "$tmp/results" | awk '
  { v[$1] = v[$1] " " $2; n[$1]++ }
  END { for (k in v) { split(substr(v[k], 2), a, " "); m = (n[k] % 2) ? a[(n[k] + 1) / 2] : (a[n[k] / 2] + a[n[k] / 2 + 1]) / 2; med[k] = m; printf "  %-24s %12.0f\n", k, m }
        printf "EvaluateInto / floor:           %.2f\n", med["EvaluateInto"] / med["floor"]
        printf "Zen (binding) / EvaluateInto:   %.1f\n", med["zen-binding"] / med["EvaluateInto"]
        printf "Zen (its timer) / EvaluateInto: %.1f\n", med["zen-engine_timer"] / med["EvaluateInto"] }'
