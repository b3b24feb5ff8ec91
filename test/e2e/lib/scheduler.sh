# Helpers for the kbatch-scheduler e2e tests (sourced, not run).
#
# The server.  KBATCH_E2E_SERVER chooses what the tests run against:
#   kbatch (default)  kbatch-apiserver, the project's own in-memory server
#   k8s               the real bed of test/k8s: kube-apiserver, etcd,
#                     kube-controller-manager and KWOK, built from upstream
#                     (test/k8s/up.sh); the scheduler runs with deploy/'s
#                     ServiceAccount token, not as admin
# A test that needs what only one server has says so with needs_server,
# and is skipped (exit 77) on the other, with the reason.
#
#   start_api [FLAGS...]      a fresh server with the CRDs applied; sets URL,
#                             KC (admin kubeconfig), SCHED_KC (the
#                             scheduler's), K (kubectl). FLAGS are
#                             kbatch-apiserver's; on the real bed --nodes
#                             makes KWOK nodes and any other flag skips the
#                             test (the fault injection is kbatch-apiserver's)
#   stop_api                  stops it (a test may start a fresh one)
#   needs_server kbatch|k8s WHY   skips the test on the other server
#   node_json NAME CPU [MEM]  a Node object that either server runs
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
SERVER=${KBATCH_E2E_SERVER:-kbatch}
case $SERVER in kbatch | k8s) ;; *) echo "KBATCH_E2E_SERVER=$SERVER: want kbatch or k8s"; exit 2 ;; esac
K8S_DIR=
CURL_AUTH=()
declare -A SCHED_PID=()
PASSES=0
FAILS=0
export KUBECACHEDIR=$T/kubecache
# The ports free_port and the bed reserve are this test's while it runs.
export KBATCH_PORT_OWNER=$$
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

cleanup() {
        for n in "${!SCHED_PID[@]}"; do
                kill -KILL "${SCHED_PID[$n]}" 2>/dev/null
                wait "${SCHED_PID[$n]}" 2>/dev/null
        done
        if [ -n "$API_PID" ] && [ -z "$K8S_DIR" ]; then
                kill -TERM "$API_PID" 2>/dev/null
                wait "$API_PID" 2>/dev/null
        fi
        local died=
        if [ -n "$K8S_DIR" ]; then
                kill -CONT "$API_PID" 2>/dev/null
                if [ "${FAILS:-0}" != 0 ]; then k8s_tails; fi
                # It names a component that died before its time, and its
                # log; the test fails then.
                "$ROOT/test/k8s/down.sh" "$K8S_DIR" || died=1
        fi
        if [ -n "$died" ]; then
                echo "FAIL: a component of the real bed died during the test (its log is named above)"
                [ -n "${KEEP_FAILED:-}" ] && echo "kept $T" || rm -rf "$T"
                exit 1
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
# 20000-40000 did, now and then, and the scheduler exited 2).  The bed's
# helper, which picks its components' ports the same way.
. "$ROOT/test/k8s/lib.sh"
free_port() { k8s_free_port; }

# needs_server kbatch|k8s WHY: this test (from here on) runs only on that
# server; on the other it ends here, skipped, saying why.
needs_server() {
        if [ "$SERVER" != "$1" ]; then
                echo "$TEST_NAME: skipped on $SERVER: $2"
                exit 77
        fi
}

# The last 20 lines of each real-bed component's log (a failed or timed-out
# test shows them).
k8s_tails() {
        local f
        for f in "$K8S_DIR"/*.log; do
                [ -f "$f" ] || continue
                echo "---- last 20 lines of $f"
                tail -20 "$f"
        done
}

# node_json NAME CPU [MEMORY [EXTRA-LABELS-JSON]]: a Ready node with that
# capacity, which KWOK runs on the real bed (kbatch-apiserver's kubelet
# runs every node).
node_json() {
        local labels=${4:-}
        printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","labels":{"kubernetes.io/hostname":"%s","kubernetes.io/os":"linux"%s},"annotations":{"kwok.x-k8s.io/node":"fake"}},"spec":{"taints":[]},"status":{"allocatable":{"cpu":"%s","memory":"%s","pods":"110"},"capacity":{"cpu":"%s","memory":"%s","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}}' \
                "$1" "$1" "${labels:+,$labels}" "$2" "${3:-32Gi}" "$2" "${3:-32Gi}"
}

# k8s_nodes SPEC: kbatch-apiserver's --nodes "COUNT:cpu=N,memory=Q,pods=P,
# label=k=v,prefix=NAME,RESOURCE=Q" as Node objects (prefix-1 .. prefix-COUNT).
k8s_nodes() {
        local count=${1%%:*} rest=${1#*:} prefix=node res="" labels="" kv k v
        local IFS=,
        for kv in $rest; do
                k=${kv%%=*} v=${kv#*=}
                case $k in
                prefix) prefix=$v ;;
                label) labels="$labels,\"${v%%=*}\":\"${v#*=}\"" ;;
                *) res="$res,\"$k\":\"$v\"" ;;
                esac
        done
        unset IFS
        case $res in *'"pods"'*) ;; *) res="$res,\"pods\":\"110\"" ;; esac
        local i
        for i in $(seq 1 "$count"); do
                printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s-%s","labels":{"kubernetes.io/hostname":"%s-%s","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"%s},"annotations":{"kwok.x-k8s.io/node":"fake"}},"status":{"allocatable":{%s},"capacity":{%s}}}\n' \
                        "$prefix" "$i" "$prefix" "$i" "$labels" "${res#,}" "${res#,}"
        done
}

# The real bed (test/k8s/up.sh), its nodes from the --nodes flags.
start_k8s() {
        local specs=() f
        while [ $# -gt 0 ]; do
                case $1 in
                --nodes) specs+=("$2"); shift 2 ;;
                *) echo "$TEST_NAME: skipped on k8s: it runs kbatch-apiserver with $1 (that server's own fault injection or transport)"; exit 77 ;;
                esac
        done
        K8S_DIR=$T/k8s
        if ! "$ROOT/test/k8s/up.sh" "$K8S_DIR" >"$T/k8s-up.log" 2>&1; then
                echo "the real bed did not come up:"; cat "$T/k8s-up.log"; FAILS=1; exit 1
        fi
        URL=$(cat "$K8S_DIR/url")
        # The server process (tests pause it): kube-apiserver here.
        API_PID=$(cat "$K8S_DIR/kube-apiserver.pid")
        KC=$K8S_DIR/admin.kubeconfig
        SCHED_KC=$K8S_DIR/scheduler.kubeconfig
        K="kubectl --kubeconfig $KC"
        CURL_AUTH=(--cacert "$K8S_DIR/pki/ca.crt" -H "Authorization: Bearer $(cat "$K8S_DIR/admin.token")")
        local n=0
        : >"$T/nodes.json"
        for f in "${specs[@]}"; do k8s_nodes "$f" >>"$T/nodes.json"; done
        n=$(grep -c . "$T/nodes.json" || true)
        if [ "$n" != 0 ]; then
                $K create -f "$T/nodes.json" >/dev/null || { echo "cannot create the nodes"; FAILS=1; exit 1; }
                local end=$((SECONDS + 60))
                # Ready, and rid of the not-ready taint that admission put
                # on them at creation.
                while [ "$($K get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}/{.spec.taints}{"\n"}{end}' 2>/dev/null | grep -cx 'True/')" -lt "$n" ]; do
                        [ $SECONDS -lt $end ] || { echo "KWOK did not make the $n nodes Ready"; k8s_tails; FAILS=1; exit 1; }
                        sleep 0.2
                done
        fi
}

# stop_api: stops the server start_api started (a test may then start a
# fresh one).
stop_api() {
        if [ -n "$K8S_DIR" ]; then
                "$ROOT/test/k8s/down.sh" "$K8S_DIR" || fail "a component of the real bed had died"
                rm -rf "$K8S_DIR"
                K8S_DIR=
        elif [ -n "$API_PID" ]; then
                kill -TERM "$API_PID" 2>/dev/null
                wait "$API_PID" 2>/dev/null
        fi
        API_PID=
}

start_api() {
        if [ "$SERVER" = k8s ]; then start_k8s "$@"; return; fi
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
        SCHED_KC=$KC
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
        # deploy/'s namespace, where the scheduler's Lease lives ($LEASE);
        # the real bed has it from deploy/, with the Lease.
        $K create namespace kbatch-system >/dev/null
}

# The Lease deploy/ installs and lets the scheduler get and update (no
# other: the real bed's RBAC refuses any other name or namespace).
LEASE="--lock-object-namespace kbatch-system --leader-elect-resource-name kbatch"

declare -A SCHED_LOG=()
start_sched() {
        local name=$1
        shift
        SCHED_LOG[$name]=$T/$name.log
        "$BIN/kbatch-scheduler" --kubeconfig "$SCHED_KC" --schedule-period 200ms -v 1 "$@" \
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
                curl -s "${CURL_AUTH[@]}" -o "$T/body" -w '%{http_code}' -X "$1" -H "Content-Type: $ct" \
                        --data-binary "$3" "$URL$2"
        else
                curl -s "${CURL_AUTH[@]}" -o "$T/body" -w '%{http_code}' -X "$1" "$URL$2"
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
        # On the real bed the scheduler runs with deploy/'s RBAC only: any
        # 403 it was answered means deploy/ lacks a grant it uses.
        if [ "$SERVER" = k8s ] && [ ${#SCHED_LOG[@]} != 0 ]; then
                local forbidden
                # (the klog header, whose pid could read 403, left out; a
                # 403 inside a word, as in a uid's "-403e-", is no status)
                forbidden=$(sed 's/^[IWEF][0-9]\{4\} [0-9:.]* *[0-9]* [^]]*\] //' "${SCHED_LOG[@]}" 2>/dev/null |
                        grep -E '(^|[^0-9A-Za-z.-])403([^0-9A-Za-z-]|$)|[Ff]orbidden' | head -5)
                if [ -z "$forbidden" ]; then pass "no 403 in the scheduler's log (deploy/'s RBAC grants what it uses)"
                else fail "the scheduler was refused (403) under deploy/'s RBAC:"; printf '%s\n' "$forbidden"; fi
        fi
        echo "$TEST_NAME: $PASSES passed, $FAILS failed"
        [ "$FAILS" = 0 ]
}
