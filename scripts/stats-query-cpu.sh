#!/usr/bin/env bash
# stats-query-cpu.sh: the database CPU time of each statement GET /api/stats/insights runs over the
# daily rollup (default window: the 30 whole UTC days up to the end of today, all workspaces, no
# filter), as the user + system time of the server process that serves the session, per execution.
# CPU time barely moves with the machine's load, where latencies do (docs/benchmarks.md,
# "Statistics endpoints"). Needs psql and a PostgreSQL server on this machine (it reads
# /proc/<backend pid>/stat).
#
#   scripts/stats-query-cpu.sh DATABASE [EXECUTIONS] [QUERIES_FILE]
#   # main's queries against this branch's, alternated:
#   git show main:queries/stats.sql > main-stats.sql
#   scripts/stats-query-cpu.sh sdods_stats_5m 40 main-stats.sql; scripts/stats-query-cpu.sh sdods_stats_5m 40
#
# DATABASE is a name or a connection string (PGHOST, PGUSER, … apply); jit is off, as the server sets it.
set -euo pipefail
db=${1:?usage: stats-query-cpu.sh DATABASE [EXECUTIONS] [QUERIES_FILE]}
n=${2:-40}
queries=${3:-$(dirname "$0")/../queries/stats.sql}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

until_day=$(date -u -d tomorrow +%F)
since_day=$(date -u -d "$until_day - 30 days" +%F)
previous_day=$(date -u -d "$since_day - 30 days" +%F)
names=(StatsDurationsRollup StatsSlowestStepsRollup StatsMostFailingStepsRollup StatsFailureClustersRollup StatsNewFailures StatsBecameFlakyRollup)

# One statement per file, its sqlc arguments replaced by the window's literals.
python3 - "$queries" "$work" "$since_day" "$until_day" "$previous_day" "${names[@]}" <<'EOF'
import re, sys
src, out, since, until, prev, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:]
text = open(src).read()
args = {'all_workspaces': 'true', 'workspace_ids': "'{}'", 'workspace': 'NULL', 'project': 'NULL', 'branch': 'NULL',
        'environment': 'NULL', 'trigger': 'NULL', 'tag': 'NULL', 'since_day': f"'{since}'", 'until_day': f"'{until}'",
        'previous_day': f"'{prev}'", 'since': f"'{since}T00:00:00Z'", 'until': f"'{until}T00:00:00Z'"}
for name in names:
    m = re.search(r'-- name: ' + name + r' :\w+\n(.*?)(?=\n-- name:|\Z)', text, re.S)
    if not m:
        sys.exit(f'{src}: no query {name}')
    sql = re.sub(r"sqlc\.n?arg\('(\w+)'\)", lambda a: args[a.group(1)], m.group(1))
    open(f'{out}/{name}.sql', 'w').write(sql.rstrip() + '\n')
EOF

echo "window [$since_day, $until_day), previous from $previous_day; $n executions each; $(uptime | sed 's/.*load/load/')"
total=0
for name in "${names[@]}"; do
  {
    echo 'SET jit = off;'
    echo '\t on'
    echo "SELECT pg_backend_pid() \\g $work/pid"
    echo '\o /dev/null'
    cat "$work/$name.sql" # once before measuring: plan cache, buffers
    echo "\\! awk '{print \$14 + \$15}' /proc/\$(tr -d ' ' < $work/pid)/stat > $work/before"
    for _ in $(seq "$n"); do cat "$work/$name.sql"; done
    echo "\\! awk '{print \$14 + \$15}' /proc/\$(tr -d ' ' < $work/pid)/stat > $work/after"
  } | psql -X -q -v ON_ERROR_STOP=1 -d "$db" >/dev/null
  ticks=$(( $(cat "$work/after") - $(cat "$work/before") ))
  ms=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" -v n="$n" 'BEGIN { printf "%.2f", t * 1000 / hz / n }')
  total=$(awk -v a="$total" -v b="$ms" 'BEGIN { printf "%.2f", a + b }')
  printf '%-30s %8s ms CPU\n' "$name" "$ms"
done
printf '%-30s %8s ms CPU\n' total "$total"
