#!/usr/bin/env bash
# The README's what-if pipe: what kubectl shows of a cluster (nodes, pods,
# PodGroups, Queues and PriorityClasses) into kbatch-sim, here with time
# run forward.  kbatch-apiserver with four 8-cpu nodes and no scheduler;
# the README's examples applied, plus a PriorityClass.
if ! command -v kubectl >/dev/null 2>&1; then
        echo "SKIPPED: kubectl is not installed; the what-if pipe was not run"
        exit 0
fi
. "$(dirname "$0")/lib/apiserver.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

start_server --nodes "4:cpu=8,memory=32Gi,pods=110"
$K apply -f "$ROOT/crds/" >/dev/null
$K wait --for=condition=established --timeout=10s crd/podgroups.scheduling.volcano.sh \
        crd/queues.scheduling.volcano.sh >/dev/null
$K apply -f "$ROOT/examples/" >/dev/null
cat <<'EOF' | $K apply -f - >/dev/null
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch-high}
value: 1000
EOF
wait_for "the Job controller made train's 4 pods" 10 \
        sh -c "$K get pods -l job-name=train -o name | wc -l | grep -qx 4"

$K get nodes,pods,podgroups,queues,priorityclasses -A -o yaml >"$T/cluster.yaml"
rc=0
"$BIN/kbatch-sim" - --until-done --output json <"$T/cluster.yaml" >"$T/out.json" 2>"$T/err" || rc=$?
expect_eq "kbatch-sim reads the pipe (exit)" "$rc" 0
expect_no_match "every kind in the pipe is read" "$(cat "$T/err")" 'is not read by kbatch'
if command -v python3 >/dev/null 2>&1; then
        out=$(python3 - "$T/out.json" <<'PY'
import json, sys
sim = json.load(open(sys.argv[1]))["simulation"]
g = {x["podGroup"]: x for x in sim["podGroups"]}
t = g["default/train"]
# kbatch.io/sim-duration: 60s, the runtime kbatch-apiserver's kubelet uses.
print("train runs", round(t["endTime"] - t["startTime"]))
# 16 pods of 8 cpu never fit 32 cpu.
print("huge starts", g["default/huge"]["startTime"], bool(g["default/huge"].get("why")))
print("stop", sim["stop"])
PY
)
        expect_match "train runs its 60s" "$out" '^train runs 60$'
        expect_match "huge never starts, saying why" "$out" '^huge starts None True$'
        expect_match "the run stops: huge can never run" "$out" '^stop Stuck$'
fi
stop_server
echo "sim_whatif: $PASSES passed, $FAILS failed"
[ "$FAILS" = 0 ]
