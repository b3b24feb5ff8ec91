# The real bed's own failures, which kbatch-apiserver cannot stage:
#  1. etcd compacted (etcdctl compact to the current revision) while the
#     scheduler watches: it goes on, and what is created after is placed;
#  2. kube-apiserver killed with SIGKILL in the middle of a dispatch, etcd
#     compacted while it is down, and the server started again on the same
#     etcd: the scheduler's watches come back with 410 Gone (their
#     resourceVersion is older than anything the new server keeps), it
#     lists again, and nothing is lost, nothing bound twice, no node
#     over-committed.
. "$(dirname "$0")/lib/scheduler.sh"
needs_server k8s "etcd and a kube-apiserver to kill are the real bed's"

NODE_CPU=8
start_api --nodes "10:cpu=8,memory=32Gi"
etcdctl() { "$K8S_DIR/bin/etcdctl" --endpoints "$(cat "$K8S_DIR/etcd.endpoint")" "$@"; }
revision() { etcdctl endpoint status -w json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["Status"]["header"]["revision"])'; }
compact() {
        local rev
        rev=$(revision)
        if etcdctl compact "$rev" --physical >/dev/null; then pass "etcd compacted to revision $rev"
        else fail "etcdctl compact $rev"; fi
}

start_sched s -v 2
wait_for "default queue created" 20 $K get queue default
gang a 4 2
wait_for "gang a bound" 30 all_bound 4

# 1. Compaction under a watching scheduler.
compact
gang b 4 2
wait_for "gang b, created after the compaction, bound" 30 all_bound 8

# 2. kube-apiserver killed mid-dispatch, etcd compacted meanwhile.
for g in 1 2 3 4 5 6 7 8; do gang k$g 4 1; done
wait_for "binds under way" 30 grep -q 'session: [1-9][0-9]* binds' "$T/s.log"
n1=$(wc -l <"$T/s.log")
"$ROOT/test/k8s/restart.sh" "$K8S_DIR" kube-apiserver --down-for 2 &
restarter=$!
# While the server is down (before it serves again): compact.
sleep 0.5
compact
wait "$restarter" || fail "kube-apiserver did not come back"
# A kube-apiserver that has just started refuses requests (403) until its
# authorizer has read the RBAC objects: what the scheduler was told in
# that window is not deploy/'s fault, and is left out of the end-of-test
# 403 check (and counted here).
sleep 3
n2=$(wc -l <"$T/s.log")
bound=$(( $($K get pods -A --no-headers | wc -l) - $(unbound) ))
echo "bound when the server came back: $bound of 40"
wait_for "every pod bound after the restart" 60 all_bound 40
wait_for "the scheduler listed again after 410 Gone" 30 grep -Eq 'expired, listing again|watch error 410' "$T/s.log"
wait_for "every podgroup Running" 30 sh -c "[ \$($K get pg -o jsonpath='{range .items[*]}{.status.phase}{\"\\n\"}{end}' | grep -c Running) = 10 ]"
check_no_overcommit
check_bound_once "$T/s.log"
# And it still schedules.
gang after 2 1
wait_for "a gang created after it all binds" 30 all_bound 42
stop_sched s
{ head -n "$n1" "$T/s.log"; tail -n +"$((n2 + 1))" "$T/s.log"; } >"$T/s.outside-restart.log"
echo "403 answers while kube-apiserver restarted: $(sed -n "$((n1 + 1)),${n2}p" "$T/s.log" | grep -c ' 403 ')"
SCHED_LOG[s]=$T/s.outside-restart.log
finish
