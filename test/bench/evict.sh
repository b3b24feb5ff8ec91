#!/usr/bin/env bash
# W5 (preemption) and W5r (reclaim), part of make bench (docs/PERFORMANCE.md):
# 5,000 nodes (32 cpu, 128Gi, 110 pods) full of running gangs (5,000 x 32
# pods of 1 cpu, minMember 32, striped: gang g's pod i on node
# (32g + i) mod 5,000, so every node holds pods of 32 different gangs and
# none can give a pod without cutting a gang) and 100 pending gangs x 32
# that need room:
#   W5   one queue; the running gangs have priority 10, the pending 1000;
#        conf enqueue, allocate, preempt, backfill;
#   W5p  W5 with each running gang's pods together on one node (packed=1);
#   W5r  queues q0 (the running gangs) and q1 (the pending), weight 1;
#        conf enqueue, allocate, reclaim, backfill.
# Three sessions each (decisions apply between them).  Prints, per workload,
# the median first-session time of RUNS runs and, from one run, the evictions
# (the minimum is 3,200), the victim gangs and how many were cut below their
# minMember, and when the pending gangs were placed (pipelined) and bound.
set -euo pipefail
cd "$(dirname "$0")/../.."
SIM=${SIM:-bin/kbatch-sim}
RUNS=${RUNS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. test/bench/conf.sh
conf "enqueue, allocate, preempt, backfill" >"$tmp/W5.conf"
cp "$tmp/W5.conf" "$tmp/W5p.conf"
conf "enqueue, allocate, reclaim, backfill" >"$tmp/W5r.conf"
cluster="nodes=5000,node-cpu=32,node-memory=128Gi,node-pods=110,groups=5000,group-size=32,pod-cpu=1,pod-memory=1Gi,running=1"
pending="nodes=0,queues=0,groups=100,group-size=32,pod-cpu=1,pod-memory=1Gi"
declare -A ARGS=(
  [W5]="--synthetic $cluster,queues=1,priority=10,prefix=lo --synthetic $pending,queue=q0,priority=1000,prefix=hi"
  [W5p]="--synthetic $cluster,packed=1,queues=1,priority=10,prefix=lo --synthetic $pending,queue=q0,priority=1000,prefix=hi"
  [W5r]="--synthetic $cluster,queues=2,queue=q0,prefix=lo --synthetic $pending,queue=q1,prefix=hi"
)

printf '| %-8s | %-20s | %-10s | %-12s | %-18s | %-22s | %-22s |\n' workload "session 1 (s)" evictions "victim gangs" "gangs cut below min" "placed/pipelined by" "all bound by"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' ---------- ---------------------- ------------ -------------- -------------------- ------------------------ ------------------------
for w in W5 W5p W5r; do
  times=()
  for ((i = 0; i < RUNS; i++)); do
    # shellcheck disable=SC2086
    "$SIM" --scheduler-conf "$tmp/$w.conf" --sessions 3 --output json --stats ${ARGS[$w]} \
      >"$tmp/$w.json" 2>"$tmp/$w.err"
    times+=("$(sed -n 's/^session 1: \([0-9.]*\)s.*/\1/p' "$tmp/$w.err")")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  python3 - "$tmp/$w.json" "$w" "$median" <<'EOF'
import collections, json, sys
doc = json.load(open(sys.argv[1]))
ev = collections.Counter()
placed = bound = None
seen_bound = 0
for s in doc["sessions"]:
    for e in s["evictions"]:
        ev[e["pod"].rsplit("-", 1)[0]] += 1
    hi = {b["pod"] for b in s.get("pipelined", []) if "/hi-" in b["pod"]}
    hib = sum(1 for b in s["binds"] if "/hi-" in b["pod"])
    seen_bound += hib
    if placed is None and len(hi) + hib >= 3200:
        placed = s["index"]
    if bound is None and seen_bound >= 3200:
        bound = s["index"]
cut = sum(1 for c in ev.values() if c != 32)
print("| %-8s | %-20s | %-10d | %-12d | %-18d | %-22s | %-22s |" % (
    sys.argv[2], sys.argv[3], sum(ev.values()), len(ev), cut,
    "session %s" % placed if placed else "not in 3 sessions",
    "session %s" % bound if bound else "not in 3 sessions"))
EOF
done
