#!/usr/bin/env bash
# A day of a 1,000-node cluster through kbatch-sim --until-done: builds a
# trace (NODES nodes of 32 cpu and 128Gi; HOURS hours of gangs arriving on
# average every GAP seconds, sizes 1 to 64 pods of 8 cpu and 32Gi, runtimes
# from 10 minutes to 8 hours, over four queues of weights 1, 1, 2 and 4),
# runs it to the end and prints the wall time with what the run found.
# The trace is the same on every machine (a Park-Miller generator in awk).
#
#   test/bench/trace.sh                 NODES=1000 HOURS=24 GAP=10
#   KEEP=/tmp/day.yaml test/bench/trace.sh   keeps the trace
set -euo pipefail
cd "$(dirname "$0")/../.."
SIM=${SIM:-bin/kbatch-sim}
NODES=${NODES:-1000}
HOURS=${HOURS:-24}
GAP=${GAP:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trace=${KEEP:-$tmp/trace.yaml}

awk -v nodes="$NODES" -v hours="$HOURS" -v gap="$GAP" '
function rnd() { seed = (seed * 16807) % 2147483647; return seed / 2147483647 }
function stamp(t,   h, m, s) {
        h = int(t / 3600); m = int(t / 60) % 60; s = t % 60
        return sprintf("2025-01-0%dT%02d:%02d:%02dZ", 6 + int(h / 24), h % 24, m, s)
}
BEGIN {
        seed = 42
        for (i = 1; i <= nodes; i++)
                printf "apiVersion: v1\nkind: Node\nmetadata: {name: node-%05d}\n" \
                       "status: {allocatable: {cpu: \"32\", memory: 128Gi, pods: \"110\"}}\n---\n", i
        split("1 1 2 4", weight, " ")
        for (q = 1; q <= 4; q++)
                printf "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n" \
                       "metadata: {name: team-%d}\nspec: {weight: %d}\n---\n", q, weight[q]
        split("1 2 4 8 16 32 64", sizes, " ")
        t = 0; n = 0
        while (t < hours * 3600) {
                n++
                size = sizes[1 + int(rnd() * rnd() * 7)]
                runtime = int(600 * exp(rnd() * log(48)))   # 10 min to 8 h, log-uniform
                q = 1 + int(rnd() * 4)
                name = sprintf("job-%05d", n)
                printf "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
                       "metadata: {name: %s, namespace: default, creationTimestamp: \"%s\"}\n" \
                       "spec: {minMember: %d, queue: team-%d}\n---\n", name, stamp(t), size, q
                printf "apiVersion: batch/v1\nkind: Job\n" \
                       "metadata: {name: %s, namespace: default, creationTimestamp: \"%s\"}\n" \
                       "spec:\n  parallelism: %d\n  template:\n    metadata:\n      annotations:\n" \
                       "        scheduling.k8s.io/group-name: %s\n        kbatch.io/runtime: %ds\n" \
                       "    spec:\n      schedulerName: kbatch\n      containers:\n" \
                       "      - {name: w, resources: {requests: {cpu: \"8\", memory: 32Gi}}}\n---\n",
                       name, stamp(t), size, name, runtime
                t += int(-gap * log(1 - rnd())) + 1
        }
}' >"$trace"

gangs=$(grep -c '^kind: PodGroup' "$trace")
echo "trace: $NODES nodes, $gangs gangs over ${HOURS}h ($(du -h "$trace" | cut -f1))"
start=$(date +%s.%N)
"$SIM" --until-done --output json --csv "$tmp/day" "$trace" >"$tmp/out.json"
end=$(date +%s.%N)
echo "wall: $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s (load, simulate and print)"
if command -v python3 >/dev/null 2>&1; then
        python3 - "$tmp/out.json" <<'PY'
import json, sys
sim = json.load(open(sys.argv[1]))["simulation"]
print("sessions: %d, stop: %s, makespan: %.1f h, simulation alone: %.2f s"
      % (sim["sessions"], sim["stop"], sim["makespanSeconds"] / 3600, sim["wallSeconds"]))
print("utilisation: average cpu %.0f%%, memory %.0f%%; peak cpu %.0f%%"
      % (100 * sim["averageUtilization"]["cpu"], 100 * sim["averageUtilization"]["memory"],
         100 * sim["peakUtilization"]["cpu"]))
for q in sim["queues"]:
    w = q["waitSeconds"]
    if q["gangs"]:
        print("  %-7s %5d gangs, wait p50 %6.0f s, p95 %6.0f s, max %6.0f s"
              % (q["name"], q["gangs"], w["p50"], w["p95"], w["max"]))
PY
fi
