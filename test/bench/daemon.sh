#!/usr/bin/env bash
# The daemon end to end against kbatch-apiserver: NODES simulated nodes
# (32 cpu, 128Gi, 110 pods) and NGROUPS PodGroups, each with a batch/v1 Job
# of SIZE pods (1 cpu, 2Gi), applied with one kubectl apply.  Needs
# kubectl; skipped without it.
#
#   bash test/bench/daemon.sh [NODES] [NGROUPS] [SIZE] [RUNS]
#   MODE=apply   (default) the scheduler runs first; the clock starts at
#                the apply, so the Job controller creating the pods is
#                inside the times
#   MODE=restart every pod exists and is pending before the scheduler
#                starts; the clock starts with the scheduler: time to its
#                first bind, to every bind
#   SCHED_FLAGS  extra kbatch-scheduler flags
#   SCHED_BIN    another kbatch-scheduler (to compare builds)
#   API_FLAGS    extra kbatch-apiserver flags
#
# Per run: seconds to the first bind and to the last, the sustained bind
# rate (10% to 90% of the pods, from the scheduler's bind counter sampled
# every 0.1 s), sessions and their total time, failed binds, and the
# scheduler's peak RSS (VmHWM) per pod.  The 5,000-node, 140,000-pod run
# of docs/PERFORMANCE.md is `bash test/bench/daemon.sh 5000 7000 20 1`.
set -euo pipefail
cd "$(dirname "$0")/../.."
NODES=${1:-1000}
NGROUPS=${2:-1000}
SIZE=${3:-10}
RUNS=${4:-3}
MODE=${MODE:-apply}
API_FLAGS=${API_FLAGS-}
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

now() { date +%s.%N; }

# Pods the Job controller has made (the sum of the Jobs' active counts).
created() {
        kubectl get jobs -o jsonpath='{range .items[*]}{.status.active}{"\n"}{end}' 2>/dev/null |
                awk '{n += $1} END {print n + 0}'
}

start_sched() {
        mport=$((20000 + RANDOM % 20000))
        # shellcheck disable=SC2086
        "${SCHED_BIN:-$BIN/kbatch-scheduler}" --kubeconfig "$KUBECONFIG" --listen-address "127.0.0.1:$mport" \
                ${SCHED_FLAGS:-} >"$tmp/scheduler-$r.log" 2>&1 &
        spid=$!
        pids+=($spid)
        metrics="http://127.0.0.1:$mport/metrics"
}

for ((r = 1; r <= RUNS; r++)); do
        pids=()
        export KUBECACHEDIR=$tmp/cache-$r KUBECONFIG=$tmp/kubeconfig-$r
        # shellcheck disable=SC2086
        "$BIN/kbatch-apiserver" --listen 127.0.0.1:0 --port-file "$tmp/port-$r" \
                --nodes "$NODES:cpu=32,memory=128Gi,pods=110" --write-kubeconfig "$KUBECONFIG" \
                ${API_FLAGS:-} >"$tmp/apiserver-$r.log" 2>&1 &
        pids+=($!)
        for _ in $(seq 100); do [ -s "$tmp/port-$r" ] && [ -s "$KUBECONFIG" ] && break; sleep 0.1; done
        kubectl apply -f crds/ >/dev/null
        apid=
        if [ "$MODE" = restart ]; then
                kubectl apply -f "$tmp/jobs.yaml" >/dev/null
                for _ in $(seq 6000); do [ "$(created)" -ge "$want" ] && break; sleep 0.5; done
                start=$(now)
                start_sched
        else
                start_sched
                for _ in $(seq 100); do curl -sf "${metrics%/metrics}/readyz" >/dev/null && break; sleep 0.1; done
                start=$(now)
                kubectl apply -f "$tmp/jobs.yaml" >/dev/null &
                apid=$!
        fi
        # Sample the bind counters every 0.1 s: "seconds-since-start ok".
        # The run ends when every pod had its bind answered: ok, or failed
        # (a 409 after a retry whose first answer was lost is counted
        # failed, though the pod is bound; the server says below).
        : >"$tmp/samples-$r"
        bound=0
        for _ in $(seq 12000); do
                read -r bound answered < <(curl -s "$metrics" 2>/dev/null | awk '
                        /^kbatch_pod_bind_total\{result="ok"\}/ {ok = $2}
                        /^kbatch_pod_bind_total\{result="failed"\}/ {f = $2}
                        END {print ok + 0, ok + f}')
                echo "$(echo "$(now) - $start" | bc) ${bound:-0}" >>"$tmp/samples-$r"
                [ "${answered:-0}" -ge "$want" ] && break
                sleep 0.1
        done
        [ -z "$apid" ] || wait "$apid" || true
        m=$(curl -s "$metrics")
        sessions=$(awk '/^kbatch_session_latency_milliseconds_count/ {print $2}' <<<"$m")
        ms=$(awk '/^kbatch_session_latency_milliseconds_sum/ {print $2}' <<<"$m")
        failed=$(awk '/^kbatch_pod_bind_total\{result="failed"\}/ {print $2}' <<<"$m")
        hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$spid/status")
        port=$(cat "$tmp/port-$r")
        unbound=$(curl -s "http://127.0.0.1:$port/api/v1/pods?fieldSelector=spec.nodeName%3D" |
                { grep -o '"kind":"Pod"' || true; } | wc -l)
        read -r first last rate < <(awk -v want="$want" '
                $2 > 0 && first == "" { first = $1 }
                $2 >= 0.1 * want && t10 == "" { t10 = $1; b10 = $2 }
                $2 >= 0.9 * want && t90 == "" { t90 = $1; b90 = $2 }
                { last = $1 }
                END {
                        rate = (t90 > t10) ? (b90 - b10) / (t90 - t10) : 0
                        printf "%s %s %.0f\n", first == "" ? "-" : first, last == "" ? "-" : last, rate
                }' "$tmp/samples-$r")
        printf 'run %d (%s): %d nodes, %d pods in %d gangs: %d unbound at the end; first bind %s s, every bind answered %s s; %s binds/s sustained; %s sessions, %.0f ms in sessions; %s binds answered other than ok; scheduler peak RSS %d MiB = %d bytes/pod\n' \
                "$r" "$MODE" "$NODES" "$want" "$NGROUPS" "$unbound" "$first" "$last" "$rate" \
                "$sessions" "$ms" "${failed:-0}" $((hwm / 1024)) $((hwm * 1024 / want))
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
        wait 2>/dev/null || true
done
