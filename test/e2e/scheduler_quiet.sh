# kbatch-scheduler writes in proportion to change: 500 pending pods that
# cannot fit (25 gangs of 16 and 100 gangs of one), with nothing arriving and
# nothing leaving, cost fewer than one write per second in total once the
# first minute is over: no status patch that changes nothing, no
# lastTransitionTime moved while a condition's status stands, no message
# that counts what a session tried, events rate-limited per object.
#
# Writes are counted on the server's side: apiserver_request_total on
# /metrics (kube-apiserver's, which kbatch-apiserver serves too), summed
# over the write verbs on the resources the scheduler writes (pods and
# their status, events, podgroups, queues).  On the real bed nothing else
# writes those while the test measures: the foreign pods are Running
# before it starts and KWOK writes only nodes and leases.
#
# Sessions cost what changed: with nothing changing, a session repeats the
# last one's result instead of running allocate over the 125 groups again
# (pkg/framework/repeat.c): most sessions of the quiet window repeat.
#
# Then a fifth node, too small for any pod, changes every message but no
# status: no lastTransitionTime moves.  It takes the first minute plus
# QUIET_WINDOW seconds (45) of measuring and the new node's round, about
# two minutes in all.
. "$(dirname "$0")/lib/scheduler.sh"

WINDOW=${QUIET_WINDOW:-45}
NODE_CPU=8
start_api --nodes "4:cpu=8,memory=32Gi"

# Half of every node is held by another scheduler's pods: a gang of 16
# 2-cpu pods fits the cluster empty (32 cpu), not now (16 free), so each
# session places 8 of them and undoes it; a 6-cpu pod fits an empty node,
# not one of these.
objs=$T/objs.json
{
        for i in 1 2 3 4; do
                printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"held-%s","namespace":"default"},"spec":{"schedulerName":"other","nodeName":"node-%s","containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"4"}}}]}}\n' "$i" "$i"
        done
} >"$T/held.json"
$K create -f "$T/held.json" >/dev/null || fail "cannot create the held pods"
wait_for "the held pods run" 30 sh -c "[ \"\$($K get pods -o jsonpath='{range .items[*]}{.status.phase}{\"\\n\"}{end}' | grep -c Running)\" = 4 ]"

pg() { # NAME MIN
        printf '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"%s","namespace":"default"},"spec":{"minMember":%s,"queue":"default"}}\n' "$1" "$2"
}
pod() { # NAME GROUP CPU
        printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"default","annotations":{"scheduling.k8s.io/group-name":"%s"}},"spec":{"schedulerName":"kbatch","containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"%s"}}}]}}\n' "$1" "$2" "$3"
}
{
        for g in $(seq 1 25); do
                pg "gang-$g" 16
                for i in $(seq 1 16); do pod "gang-$g-$i" "gang-$g" 2; done
        done
        for g in $(seq 1 100); do
                pg "one-$g" 1
                pod "one-$g-1" "one-$g" 6
        done
} >"$objs"
$K create -f "$objs" >/dev/null || fail "cannot create the 125 groups and 500 pods"

PORT_M=$(free_port)
start_sched s --listen-address 127.0.0.1:$PORT_M
t0=$SECONDS
metric() { # NAME: the scheduler's counter
        curl -s http://127.0.0.1:$PORT_M/metrics | sed -n "s/^$1 //p"
}

cond() { # POD FIELD
        $K get pod "$1" -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].$2}"
}
# Every pending pod says why it waits.
wait_for "all 500 pods have PodScheduled=False" 60 sh -c "[ \"\$($K get pods -o jsonpath='{range .items[*]}{.status.conditions[?(@.type==\"PodScheduled\")].status}{\"\\n\"}{end}' | grep -c False)\" = 500 ]"
msg0=$(cond gang-7-3 message)
ltt0=$(cond gang-7-3 lastTransitionTime)
pgltt0=$($K get pg gang-7 -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].lastTransitionTime}')
expect_match "a gang's pod says what its gang waits for" "$msg0" 'Insufficient cpu'

# writes: the scheduler's writes the server has answered so far.
writes() {
        curl -s "${CURL_AUTH[@]}" "$URL/metrics" | awk '
                /^apiserver_request_total\{/ && /verb="(POST|PUT|PATCH|APPLY|DELETE|DELETECOLLECTION)"/ &&
                /resource="(pods|events|podgroups|queues)"/ { n += $NF }
                END { printf "%d\n", n }'
}
by_kind() {
        curl -s "${CURL_AUTH[@]}" "$URL/metrics" | awk '
                /^apiserver_request_total\{/ && /verb="(POST|PUT|PATCH|APPLY|DELETE)"/ &&
                /resource="(pods|events|podgroups|queues)"/ {
                        match($0, /resource="[a-z]*"/); r = substr($0, RSTART + 10, RLENGTH - 11)
                        match($0, /subresource="[a-z]*"/); s = substr($0, RSTART + 13, RLENGTH - 14)
                        match($0, /verb="[A-Z]*"/); v = substr($0, RSTART + 6, RLENGTH - 7)
                        n[v " " r (s != "" ? "/" s : "")] += $NF }
                END { for (k in n) printf "%s=%d ", k, n[k]; print "" }'
}

now=$((SECONDS - t0))
[ $now -lt 60 ] && sleep $((60 - now))
w0=$(writes)
s0=$(metric kbatch_sessions_total) r0=$(metric kbatch_session_repeated_total)
echo "writes after the first minute: $w0 ($(by_kind))"
sleep "$WINDOW"
w1=$(writes)
s1=$(metric kbatch_sessions_total) r1=$(metric kbatch_session_repeated_total)
echo "sessions in the window: $((s1 - s0)), of which $((r1 - r0)) repeated the last result"
expect_eq "most quiet sessions repeat the last result ($((r1 - r0)) of $((s1 - s0)))" \
        "$(awk -v r=$((r1 - r0)) -v s=$((s1 - s0)) 'BEGIN { print (s > 0 && 2 * r > s) ? "yes" : "no" }')" yes
echo "writes after $WINDOW s more: $w1 ($(by_kind))"
rate=$(awk -v a="$w0" -v b="$w1" -v t="$WINDOW" 'BEGIN { printf "%.2f", (b - a) / t }')
echo "quiet write rate: $rate writes/s with 500 pods pending"
expect_eq "fewer than 1 write/s once the first minute is over (got $rate/s)" \
        "$(awk -v r="$rate" 'BEGIN { print (r < 1) ? "yes" : "no" }')" yes

expect_eq "the pod's message stands" "$(cond gang-7-3 message)" "$msg0"
expect_eq "the pod's lastTransitionTime stands" "$(cond gang-7-3 lastTransitionTime)" "$ltt0"
expect_eq "the group's lastTransitionTime stands" \
        "$($K get pg gang-7 -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].lastTransitionTime}')" "$pgltt0"
expect_eq "nothing bound" "$(unbound)" 500

# A fifth node, too small for any of them: every message changes (5 nodes
# now), no status does, so no lastTransitionTime moves.
node_json node-5 1 | $K create -f - >/dev/null || fail "cannot create node-5"
wait_for "the pod's message follows the new node" 60 sh -c "$K get pod gang-7-3 -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q '/5 nodes'"
wait_for "the group's message follows the new node" 30 sh -c "$K get pg gang-7 -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q '/5 nodes'"
expect_eq "the pod's lastTransitionTime stands while its status does" "$(cond gang-7-3 lastTransitionTime)" "$ltt0"
expect_eq "the group's lastTransitionTime stands while its status does" \
        "$($K get pg gang-7 -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].lastTransitionTime}')" "$pgltt0"
ev=$($K get events --field-selector involvedObject.name=gang-7-3,reason=FailedScheduling -o jsonpath='{range .items[*]}{.count}{"\n"}{end}')
echo "gang-7-3: FailedScheduling events (counts): $(echo $ev)"
expect_eq "one FailedScheduling Event on the pod" "$(printf '%s\n' "$ev" | grep -c .)" 1

stop_sched s
grep -q "ERROR: AddressSanitizer\|runtime error" "$T/s.log" && fail "sanitizer report in the log"
finish
