# Helpers for the kbatch-scheduler e2e tests (sourced, not run).
#
#   start_api [FLAGS...]      kbatch-apiserver on a free port with the CRDs
#                             applied; sets URL, KC (kubeconfig), K (kubectl)
#   free_port                 a port for --listen-address nothing holds
#   start_sched NAME [FLAGS]  kbatch-scheduler against it, logging to
#                             $T/NAME.log; its pid in SCHED_PID[NAME]
#   stop_sched NAME           SIGTERM; fails unless it exits 0 (ASan: no leaks)
#   gang NAME N CPU [NS]      a PodGroup (minMember N) and N pods asking CPU each
#   check_bound_once LOGS...  every pod bound, none bound twice by the logs
#   check_no_overcommit       no node's pods ask more CPU than it has
#   finish                    prints "NAME: P passed, F failed"; exit status
# Every wait is bounded; the EXIT trap kills what the test started.

set -u
BIN=${BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/bin}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
TEST_NAME=$(basename "$0" .sh)
T=$(mktemp -d)
API_PID=
declare -A SCHED_PID=()
PASSES=0
FAILS=0
export KUBECACHEDIR=$T/kubecache
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

cleanup() {
        for n in "${!SCHED_PID[@]}"; do
                kill -KILL "${SCHED_PID[$n]}" 2>/dev/null
                wait "${SCHED_PID[$n]}" 2>/dev/null
        done
        if [ -n "$API_PID" ]; then
                kill -TERM "$API_PID" 2>/dev/null
                wait "$API_PID" 2>/dev/null
        fi
        if [ "${FAILS:-0}" != 0 ] && [ -n "${KEEP_FAILED:-}" ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

pass() { echo "ok: $*"; PASSES=$((PASSES + 1)); }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

expect_eq() {
        if [ "$2" != "$3" ]; then fail "$1: got [$2], want [$3]"; else pass "$1"; fi
}

expect_match() {
        if printf '%s\n' "$2" | grep -Eq -- "$3"; then pass "$1"
        else fail "$1: no line matches /$3/ in:"; printf '%s\n' "$2" | head -30; fi
}

# wait_for WHAT SECONDS COMMAND...
wait_for() {
        local what=$1 secs=$2
        shift 2
        local end=$((SECONDS + secs))
        while [ $SECONDS -lt $end ]; do
                if "$@" >/dev/null 2>&1; then pass "$what"; return 0; fi
                sleep 0.2
        done
        fail "$what (waited ${secs}s)"
        return 1
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on, below the
# kernel's ephemeral range, so no client connection of this or another
# test can hold it when the scheduler binds it (a random port in
# 20000-40000 did, now and then, and the scheduler exited 2).
free_port() {
        python3 - <<'PY'
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
for _ in range(200):
    port = random.randint(10000, max(10001, low - 1))
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break
PY
}

start_api() {
        rm -f "$T/port" "$T/kubeconfig"
        "$BIN/kbatch-apiserver" --listen 127.0.0.1:0 --write-kubeconfig "$T/kubeconfig" \
                --port-file "$T/port" "$@" >"$T/api.log" 2>&1 &
        API_PID=$!
        for _ in $(seq 1 100); do
                [ -s "$T/port" ] && [ -s "$T/kubeconfig" ] && break
                sleep 0.1
        done
        if [ ! -s "$T/port" ]; then echo "apiserver did not start:"; cat "$T/api.log"; exit 1; fi
        URL=http://127.0.0.1:$(cat "$T/port")
        KC=$T/kubeconfig
        K="kubectl --kubeconfig $KC"
        # Retried: a server started with --fault-write-rate fails creates too.
        local ok=
        for _ in $(seq 1 20); do
                if $K apply -f "$ROOT/crds/" >/dev/null 2>&1; then ok=1; break; fi
                sleep 0.2
        done
        [ -n "$ok" ] || { echo "cannot apply the CRDs"; exit 1; }
        $K wait --for condition=established --timeout=10s crd/podgroups.scheduling.volcano.sh \
                crd/queues.scheduling.volcano.sh >/dev/null
}

start_sched() {
        local name=$1
        shift
        "$BIN/kbatch-scheduler" --kubeconfig "$KC" --schedule-period 200ms -v 1 "$@" \
                >>"$T/$name.log" 2>&1 &
        SCHED_PID[$name]=$!
}

stop_sched() {
        local name=$1 rc=0
        kill -TERM "${SCHED_PID[$name]}"
        local end=$((SECONDS + 20))
        while kill -0 "${SCHED_PID[$name]}" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
        wait "${SCHED_PID[$name]}" || rc=$?
        unset "SCHED_PID[$name]"
        if [ $rc = 0 ]; then pass "$name exits 0 on SIGTERM (loop closed, no leaks)"
        else fail "$name exited $rc"; tail -30 "$T/$name.log"; fi
}

kill_sched() {
        kill -KILL "${SCHED_PID[$1]}" 2>/dev/null
        wait "${SCHED_PID[$1]}" 2>/dev/null
        unset "SCHED_PID[$1]"
}

# api METHOD PATH [BODY [CONTENT-TYPE]]: prints the HTTP code
api() {
        local ct=${4:-application/json}
        if [ $# -ge 3 ]; then
                curl -s -o "$T/body" -w '%{http_code}' -X "$1" -H "Content-Type: $ct" \
                        --data-binary "$3" "$URL$2"
        else
                curl -s -o "$T/body" -w '%{http_code}' -X "$1" "$URL$2"
        fi
}

# create PATH BODY: POSTs until the server says 201 (writes may be failed
# on purpose), at most 20 tries.
create() {
        local code
        for _ in $(seq 1 20); do
                code=$(api POST "$1" "$2")
                [ "$code" = 201 ] && return 0
                sleep 0.1
        done
        echo "cannot create $1: $code $(cat "$T/body")"
        return 1
}

# gang NAME N CPU [NS [QUEUE]]
gang() {
        local name=$1 n=$2 cpu=$3 ns=${4:-default} q=${5:-default}
        create "/apis/scheduling.volcano.sh/v1beta1/namespaces/$ns/podgroups" \
                "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"$name\",\"namespace\":\"$ns\"},\"spec\":{\"minMember\":$n,\"queue\":\"$q\"}}" >/dev/null
        for i in $(seq 1 "$n"); do
                create "/api/v1/namespaces/$ns/pods" \
                        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$name-$i\",\"namespace\":\"$ns\",\"annotations\":{\"scheduling.k8s.io/group-name\":\"$name\"}},\"spec\":{\"schedulerName\":\"kbatch\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"$cpu\"}}}]}}" >/dev/null
        done
}

# Number of pods (all namespaces) without a node.
unbound() {
        $K get pods -A -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c '^$'
}

# all_bound [N]: every pod has a node (and there are N pods).
all_bound() {
        if [ $# -ge 1 ]; then
                [ "$($K get pods -A --no-headers 2>/dev/null | wc -l)" = "$1" ] || return 1
        fi
        [ "$(unbound)" = 0 ]
}

check_bound_once() {
        local total dup
        total=$($K get pods -A --no-headers | wc -l)
        dup=$(cat "$@" | grep -o 'bound [^ ]* to' | sort | uniq -d)
        if [ -z "$dup" ]; then pass "no pod bound twice ($total pods)"
        else fail "bound more than once: $dup"; fi
}

# Requests are whole CPUs in these tests; nodes have NODE_CPU each.
check_no_overcommit() {
        local over
        over=$($K get pods -A -o jsonpath='{range .items[*]}{.spec.nodeName} {.spec.containers[0].resources.requests.cpu}{"\n"}{end}' |
                awk -v cap="$NODE_CPU" '$1 != "" { use[$1] += $2 } END { for (n in use) if (use[n] > cap) print n, use[n] }')
        if [ -z "$over" ]; then pass "no node over-committed"
        else fail "over-committed: $over"; fi
}

finish() {
        echo "$TEST_NAME: $PASSES passed, $FAILS failed"
        [ "$FAILS" = 0 ]
}
