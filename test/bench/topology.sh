#!/usr/bin/env bash
# W7 (network topology), part of make bench (docs/PERFORMANCE.md): 5,000
# nodes (32 cpu, 128Gi, 110 pods) in 10 blocks x 25 racks x 20 nodes, and
# 2,000 gangs of 8 to 64 pods (2 cpu, 4Gi; 72,048 pods, 90% of the cpu),
# minMember their size, alternately hard rack-level (highestTierAllowed 1)
# and hard block-level (2).  The topology comes from node labels
# (network-topology-aware's hypernode.tier<N>.label); W7h is the same
# cluster with HyperNode objects instead; W7o the same gangs with 3-cpu pods
# (135% of the cpu: only some fit, and rack room runs short).  Prints the median first-session
# time of RUNS runs, binds, gangs placed and how many within one rack and
# within one block, then checks that W7h and a full scan of every node
# place every pod where W7 does.
set -euo pipefail
cd "$(dirname "$0")/../.."
SIM=${SIM:-bin/kbatch-sim}
RUNS=${RUNS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. test/bench/conf.sh
tiers=$(conf)
printf '%s\n' "$tiers" >"$tmp/W7h.conf"
printf '%s\n  - name: network-topology-aware\n    arguments:\n      hypernode.tier1.label: topology.kbatch.io/rack\n      hypernode.tier2.label: topology.kbatch.io/block\n' \
  "$tiers" >"$tmp/W7.conf"
spec="nodes=5000,node-cpu=32,node-memory=128Gi,node-pods=110,blocks=10,racks=25,groups=2000,group-size=8,group-size-max=64,pod-cpu=2,pod-memory=4Gi,queues=4,hard-tier=1:2"
declare -A SPEC=([W7]="$spec" [W7h]="$spec,hypernodes=1" [W7o]="${spec/pod-cpu=2/pod-cpu=3}")
cp "$tmp/W7.conf" "$tmp/W7o.conf"

printf '| %-8s | %-14s | %-12s | %-12s | %-16s | %-17s |\n' workload "session (s)" "tasks bound" "gangs placed" "within one rack" "within one block"
printf '|%s|%s|%s|%s|%s|%s|\n' ---------- ---------------- -------------- -------------- ------------------ -------------------
for w in W7 W7h W7o; do
  times=()
  for ((i = 0; i < RUNS; i++)); do
    "$SIM" --scheduler-conf "$tmp/$w.conf" --synthetic "${SPEC[$w]}" --output json --stats \
      >"$tmp/$w.json" 2>"$tmp/$w.err"
    times+=("$(sed -n 's/^session 1: \([0-9.]*\)s.*/\1/p' "$tmp/$w.err")")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  line=$(grep '^pods bound' "$tmp/$w.err")
  bound=$(sed -n 's/^pods bound: \([0-9]*\) of \([0-9]*\).*/\1\/\2/p' <<<"$line")
  full=$(sed -n 's/.*fully bound: \([0-9]*\).*, of \([0-9]*\);.*/\1\/\2/p' <<<"$line")
  dom=$(grep 'running gangs by network topology domain' "$tmp/$w.err" || true)
  rack=$(sed -n 's/.*tier 1: \([0-9]*\),.*/\1/p' <<<"$dom")
  block=$(sed -n 's/.*tier 2: \([0-9]*\),.*/\1/p' <<<"$dom")
  placed=${full%/*}
  share() { awk -v n="${1:-0}" -v d="$placed" 'BEGIN {printf "%d (%.1f%%)", n, d ? 100 * n / d : 0}'; }
  printf '| %-8s | %-14s | %-12s | %-12s | %-16s | %-17s |\n' "$w" "$median" "$bound" "$full" "$(share "$rack")" "$(share "$block")"
done
echo
sed 's/"durationSeconds":[0-9.e-]*,//' "$tmp/W7.json" >"$tmp/a.json"
sed 's/"durationSeconds":[0-9.e-]*,//' "$tmp/W7h.json" >"$tmp/b.json"
"$SIM" --scheduler-conf "$tmp/W7.conf" --synthetic "$spec" --output json --full-scan |
  sed 's/"durationSeconds":[0-9.e-]*,//' >"$tmp/f.json"
if cmp -s "$tmp/a.json" "$tmp/b.json" && cmp -s "$tmp/a.json" "$tmp/f.json"; then
  echo "W7: placements identical with HyperNodes (W7h) and with a full scan of every node"
else
  echo "W7: PLACEMENTS DIFFER between labels, HyperNodes and a full scan" >&2
  exit 1
fi
