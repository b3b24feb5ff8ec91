#!/usr/bin/env bash
# make bench-check: regressions caught by a machine.  Counts the
# instructions (valgrind --tool=callgrind, deterministic whatever the
# machine's load) that kbatch-sim's sessions take on small, fixed workloads
# and fails when one grows more than TOLERANCE percent (default 5) over the
# figure committed in test/bench/baseline, and by more than MIN_GROWTH
# instructions (default 10,000: a session that repeats the last result
# counts a few hundred, where a percentage alone would fail on a dozen).  Only the sessions are counted
# (callgrind collects inside kb_session_run_model), not building the
# synthetic cluster or printing the result.
#
#   W1      W1 of make bench, first session
#   W3      W3 of make bench, first session (half the gangs wait)
#   W3wait  W3's third session: the PodGroup statuses the second wrote
#           changed, nothing else; the model is updated and allocate tries
#           the 1,000 waiting gangs again
#   W3tick  W3's fourth session: nothing changed since the third, which
#           read no clock, so it repeats the third's result
#           (pkg/framework/repeat.c): a few hundred instructions
#   W2idle  W2 with every gang already running: the third of --sessions 3,
#           nothing changed (a repeat, like W3tick, since repeat.c)
#   W5s     W5 at a tenth (500 nodes, 500 running gangs striped over them,
#           10 pending gangs of higher priority): preemption
#   W5ps    W5s with each running gang whole on one node (packed=1)
#
# test/bench/check.sh --update writes the baseline from this build: commit
# it on its own, saying why the counts moved.  Needs a release build
# (bin/kbatch-sim: `make progs`; the counts of other builds differ).
set -euo pipefail
cd "$(dirname "$0")/../.."
SIM=${SIM:-bin/kbatch-sim}
BASELINE=${BASELINE:-test/bench/baseline}
TOLERANCE=${TOLERANCE:-5}
MIN_GROWTH=${MIN_GROWTH:-10000}
update=false
[ "${1:-}" = --update ] && update=true

command -v valgrind >/dev/null || { echo "bench-check: valgrind is not installed" >&2; exit 1; }
[ -x "$SIM" ] || { echo "bench-check: no $SIM (make progs)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. test/bench/conf.sh
conf "enqueue, allocate, preempt, backfill" >"$tmp/preempt.conf"
evict="nodes=500,node-cpu=32,node-memory=128Gi,node-pods=110,groups=500,group-size=32,pod-cpu=1,pod-memory=1Gi,running=1,queues=1,priority=10,prefix=lo"
pending="nodes=0,queues=0,groups=10,group-size=32,pod-cpu=1,pod-memory=1Gi,queue=q0,priority=1000,prefix=hi"
names=(W1 W3 W3wait W3tick W2idle W5s W5ps)
declare -A ARGS=(
  [W1]="--synthetic nodes=1000,node-cpu=32,node-memory=128Gi,node-pods=110,groups=1000,group-size=10,pod-cpu=1,pod-memory=2Gi,queues=4"
  [W3]="--synthetic nodes=1000,node-cpu=8,node-memory=32Gi,node-pods=110,groups=2000,group-size=8,pod-cpu=1,pod-memory=1Gi,queues=4"
  [W3wait]="--synthetic nodes=1000,node-cpu=8,node-memory=32Gi,node-pods=110,groups=2000,group-size=8,pod-cpu=1,pod-memory=1Gi,queues=4 --sessions 3"
  [W3tick]="--synthetic nodes=1000,node-cpu=8,node-memory=32Gi,node-pods=110,groups=2000,group-size=8,pod-cpu=1,pod-memory=1Gi,queues=4 --sessions 4"
  [W2idle]="--synthetic nodes=5000,node-cpu=32,node-memory=128Gi,node-pods=110,groups=5000,group-size=20,pod-cpu=1,pod-memory=1Gi,queues=4,running=1 --sessions 3"
  [W5s]="--scheduler-conf $tmp/preempt.conf --synthetic $evict --synthetic $pending"
  [W5ps]="--scheduler-conf $tmp/preempt.conf --synthetic $evict,packed=1 --synthetic $pending"
)

count() {
  # Each session's counts in a file of its own (the last in $1.cg): with
  # --sessions, the last session alone is counted.
  # shellcheck disable=SC2086
  valgrind --tool=callgrind --collect-atstart=no --toggle-collect=kb_session_run_model \
    --dump-before=kb_session_run_model \
    --callgrind-out-file="$tmp/$1.cg" "$SIM" ${ARGS[$1]} --output json >/dev/null 2>"$tmp/$1.err" ||
    { echo "bench-check: $1: kbatch-sim failed:" >&2; tail -5 "$tmp/$1.err" >&2; return 1; }
  local n
  n=$(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$tmp/$1.cg")
  # Nothing counted: the session ran outside kb_session_run_model (inlined
  # away?), and a count of 0 would pass every check.
  [ "${n:-0}" -gt 0 ] || { echo "bench-check: $1: no instructions counted inside kb_session_run_model" >&2; return 1; }
  echo "$n"
}

if $update; then
  {
    echo "# Instructions of kbatch-sim's sessions per workload (test/bench/check.sh):"
    echo "# a release build, valgrind --tool=callgrind.  Written by"
    echo "# test/bench/check.sh --update; commit it on its own, saying why."
    for w in "${names[@]}"; do echo "$w $(count "$w")"; done
  } >"$BASELINE.new"
  mv "$BASELINE.new" "$BASELINE"
  cat "$BASELINE"
  exit 0
fi

[ -f "$BASELINE" ] || { echo "bench-check: no $BASELINE (test/bench/check.sh --update)" >&2; exit 1; }
fail=0
printf '%-8s %15s %15s %8s\n' workload baseline now change
for w in "${names[@]}"; do
  base=$(awk -v w="$w" '$1 == w { print $2 }' "$BASELINE")
  if ! now=$(count "$w"); then
    printf '%-8s %15s %15s %8s  FAIL: kbatch-sim failed\n' "$w" "${base:--}" - -
    fail=1
    continue
  fi
  if [ -z "$base" ]; then
    printf '%-8s %15s %15s %8s  FAIL: not in %s\n' "$w" - "$now" - "$BASELINE"
    fail=1
    continue
  fi
  verdict=$(awk -v b="$base" -v n="$now" -v t="$TOLERANCE" -v g="$MIN_GROWTH" 'BEGIN {
    c = (n - b) * 100 / b
    printf "%+7.1f%%", c
    if (c > t && n - b > g) printf "  FAIL: more than %s%% (and %s instructions) over the baseline", t, g
    else if (c < -t && b - n > g) printf "  (the baseline could come down: check.sh --update)"
  }')
  printf '%-8s %15s %15s %s\n' "$w" "$base" "$now" "$verdict"
  case $verdict in *FAIL*) fail=1 ;; esac
done
if [ "$fail" = 1 ]; then
  echo "bench-check: instruction counts grew; profile with valgrind --tool=callgrind (docs/PERFORMANCE.md)" >&2
  exit 1
fi
echo "bench-check: every workload within ${TOLERANCE}% of the baseline"
