#!/usr/bin/env bash
# The daemon end to end: kbatch-apiserver with simulated nodes, kbatch-scheduler,
# and NGROUPS PodGroups each with a batch/v1 Job of SIZE pods (1 cpu, 2Gi),
# applied with kubectl at once.  Reports, per run, the seconds from the
# apply until every pod is bound (the Job controller creating the pods is in
# that time), the sessions the scheduler ran, their total time, and binds
# that failed.  Needs kubectl; skipped without it.
#
#   bash test/bench/daemon.sh [NODES] [NGROUPS] [SIZE] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
NODES=${1:-1000}
NGROUPS=${2:-1000}
SIZE=${3:-10}
RUNS=${4:-3}
BIN=${BIN:-bin}
if ! command -v kubectl >/dev/null 2>&1; then
  echo "daemon bench: SKIPPED (no kubectl)"
  exit 0
fi
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

for ((g = 0; g < NGROUPS; g++)); do
  printf -- '---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g%05d, namespace: default}\nspec: {minMember: %d}\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: g%05d, namespace: default}\nspec:\n  parallelism: %d\n  completions: %d\n  template:\n    metadata:\n      annotations: {scheduling.k8s.io/group-name: g%05d}\n    spec:\n      schedulerName: kbatch\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 2Gi}}}]\n' \
    "$g" "$SIZE" "$g" "$SIZE" "$SIZE" "$g"
done >"$tmp/jobs.yaml"
want=$((NGROUPS * SIZE))

for ((r = 1; r <= RUNS; r++)); do
  pids=()
  export KUBECACHEDIR=$tmp/cache-$r KUBECONFIG=$tmp/kubeconfig-$r
  "$BIN/kbatch-apiserver" --listen 127.0.0.1:0 --port-file "$tmp/port-$r" \
    --nodes "$NODES:cpu=32,memory=128Gi,pods=110" --write-kubeconfig "$KUBECONFIG" \
    >"$tmp/apiserver-$r.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$tmp/port-$r" ] && break; sleep 0.1; done
  kubectl apply -f crds/ >/dev/null
  mport=$((20000 + RANDOM % 20000))
  "$BIN/kbatch-scheduler" --kubeconfig "$KUBECONFIG" --listen-address "127.0.0.1:$mport" \
    >"$tmp/scheduler-$r.log" 2>&1 &
  pids+=($!)
  metrics="http://127.0.0.1:$mport/metrics"
  for _ in $(seq 100); do curl -sf "${metrics%/metrics}/readyz" >/dev/null && break; sleep 0.1; done
  start=$(date +%s.%N)
  kubectl apply -f "$tmp/jobs.yaml" >/dev/null
  bound=0
  for _ in $(seq 1200); do
    bound=$(curl -s "$metrics" | awk '/^kbatch_pod_bind_total\{result="ok"\}/ {print $2}')
    [ "${bound:-0}" -ge "$want" ] && break
    sleep 0.25
  done
  end=$(date +%s.%N)
  m=$(curl -s "$metrics")
  sessions=$(awk '/^kbatch_session_latency_milliseconds_count/ {print $2}' <<<"$m")
  ms=$(awk '/^kbatch_session_latency_milliseconds_sum/ {print $2}' <<<"$m")
  failed=$(awk '/^kbatch_pod_bind_total\{result="failed"\}/ {print $2}' <<<"$m")
  printf 'run %d: %d nodes, %d pods in %d gangs: %s/%d bound in %.1f s; %s sessions, %.0f ms in sessions; %s failed binds\n' \
    "$r" "$NODES" "$want" "$NGROUPS" "${bound:-0}" "$want" "$(echo "$end - $start" | bc)" \
    "$sessions" "$ms" "${failed:-0}"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
done
