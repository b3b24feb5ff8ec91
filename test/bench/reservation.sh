#!/usr/bin/env bash
# The reservation plugin's cost (issue 19; docs/PERFORMANCE.md): one
# session of W2 and of W3 with every pod declaring an hour
# (activeDeadlineSeconds), under the default conf and with `reservation`
# at depth 1 and 16.  W2 has room for every gang (nothing to reserve: the
# plugin's cost is its filter's scope check); in W3 half the gangs wait,
# and the first 1 or 16 of them are planned.  Medians of RUNS runs, in
# seconds, and (with CALLGRIND=1) instructions, which the machine's load
# does not move.
set -euo pipefail
cd "$(dirname "$0")/../.."
SIM=${SIM:-bin/kbatch-sim}
RUNS=${RUNS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The built-in conf (pkg/framework/conf.c's kb_default_conf_yaml), and it
# with the plugin.
. test/bench/conf.sh
conf >"$tmp/default.conf"
for d in 1 16; do
  { cat "$tmp/default.conf"; printf '  - name: reservation\n    arguments: {depth: %s}\n' "$d"; } >"$tmp/depth$d.conf"
done
declare -A SPEC=(
  [W2]="nodes=5000,node-cpu=32,node-memory=128Gi,node-pods=110,groups=5000,group-size=20,pod-cpu=1,pod-memory=1Gi,queues=4,deadline=1h"
  [W3]="nodes=1000,node-cpu=8,node-memory=32Gi,node-pods=110,groups=2000,group-size=8,pod-cpu=1,pod-memory=1Gi,queues=4,deadline=1h"
)
printf '| %-8s | %-10s | %-12s | %-14s |\n' workload conf "session (s)" "instructions"
printf '|%s|%s|%s|%s|\n' ---------- ------------ -------------- ----------------
for w in W2 W3; do
  for c in default depth1 depth16; do
    times=()
    for ((i = 0; i < RUNS; i++)); do
      "$SIM" --synthetic "${SPEC[$w]}" --scheduler-conf "$tmp/$c.conf" --output json --stats \
        >/dev/null 2>"$tmp/err"
      times+=("$(sed -n 's/^session 1: \([0-9.]*\)s.*/\1/p' "$tmp/err")")
    done
    median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    ir=-
    if [ "${CALLGRIND:-0}" = 1 ]; then
      valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$SIM" --synthetic "${SPEC[$w]}" \
        --scheduler-conf "$tmp/$c.conf" --output json >/dev/null 2>"$tmp/cg.err"
      ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/cg.err")
    fi
    printf '| %-8s | %-10s | %-12s | %-14s |\n' "$w" "$c" "$median" "$ir"
  done
done
