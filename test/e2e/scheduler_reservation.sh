# Reservations in the daemon (issue 19): a wide gang is not starved by a
# stream of small jobs when the conf names the reservation plugin, and it
# says beforehand when it will start.
#
# Four 1-cpu nodes run r1..r4, one pod each, declared (and actually)
# 6, 8, 10 and 12 s.  Then gang w (4 pods of 1 cpu, 5 s) arrives, then a
# stream of 1-pod jobs s1..s12 of 10 s, one a second.
#   Without reservations: each node r frees is taken at once by a stream
#   pod (w needs all four), and every stream pod holds its node 10 s more:
#   w still waits when the stream is half done, 20 s in.
#   With them: w's reservation starts when r4 ends (12 s: every node is
#   free then); a stream pod would end after that, so none starts; w
#   starts at its reserved time, and its condition said that time before.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=1
start_api --nodes "4:cpu=1,memory=4Gi"

# pod NAME GROUP SECONDS
pod() {
        create "/api/v1/namespaces/default/pods" \
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"annotations\":{\"scheduling.k8s.io/group-name\":\"$2\",\"kbatch.io/sim-duration\":\"${3}s\"}},\"spec\":{\"schedulerName\":\"kbatch\",\"activeDeadlineSeconds\":$3,\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}" >/dev/null
}
group() {
        create "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups" \
                "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"$1\"},\"spec\":{\"minMember\":$2}}" >/dev/null
}
phase() { $K get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null; }
started() { $K get pod "$1" -o jsonpath='{.status.startTime}' 2>/dev/null; }
epoch() { date -u -d "$1" +%s; }

conf() {
        cat >"$T/conf.yaml" <<EOF
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
$1
EOF
}

# One run: the four r pods, then w, then the stream.  Leaves the pods
# behind for the checks; clean() removes them.
run() {
        for i in 1 2 3 4; do
                group "r$i" 1
                pod "r$i" "r$i" $((4 + 2 * i))
        done
        wait_for "r1..r4 run" 20 sh -c \
                "[ \$($K get pods --no-headers | grep -c ' Running ') = 4 ]"
        group w 4
        for i in 1 2 3 4; do pod "w-$i" w 5; done
        for i in $(seq 1 12); do
                group "s$i" 1
                pod "s$i" "s$i" 10
                sleep 1
        done
}

clean() {
        $K delete pods --all --grace-period=0 --force >/dev/null 2>&1
        $K delete podgroups --all >/dev/null 2>&1
        wait_for "the cluster is empty" 30 sh -c "[ -z \"\$($K get pods --no-headers 2>/dev/null)\" ]"
}

# Without the plugin: starved.
conf ""
start_sched greedy --scheduler-conf "$T/conf.yaml"
run
expect_eq "greedy: w still waits 12 s into the stream" "$(phase w-1)" Pending
expect_match "greedy: stream pods took the nodes r freed" \
        "$($K get pods --no-headers | grep '^s' | grep -c Running)" '^[34]$'
stop_sched greedy
clean

# With it: w starts when r4 ends, as its condition said.
conf "  - name: reservation
    arguments: {depth: 1, resolution: 1s}"
PORT_M=$(free_port)
start_sched resv --scheduler-conf "$T/conf.yaml" --listen-address 127.0.0.1:$PORT_M
for i in 1 2 3 4; do
        group "r$i" 1
        pod "r$i" "r$i" $((4 + 2 * i))
done
wait_for "r1..r4 run" 20 sh -c "[ \$($K get pods --no-headers | grep -c ' Running ') = 4 ]"
r4_end=$(($(epoch "$(started r4)") + 12))
group w 4
for i in 1 2 3 4; do pod "w-$i" w 5; done
msg_of_w() {
        $K get pg w -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].message}'
}
wait_for "w says when it expects to start" 10 sh -c \
        "$K get pg w -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q 'expected to start at'"
said=$(msg_of_w)
expect_match "w's condition names the time and the pod it waits for" "$said" \
        '^expected to start at [0-9T:-]+Z on 4 node\(s\), when default/r4 ends'
when=$(printf '%s' "$said" | sed 's/^expected to start at \([^ ]*\) .*/\1/')
expected=$(epoch "$when")
expect_eq "status.expectedStartTime holds that time" \
        "$($K get pg w -o jsonpath='{.status.expectedStartTime}')" "$when"
wide=$($K get pg w -o wide)
expect_match "kubectl get podgroups -o wide has an EXPECTED-START column" "$wide" 'EXPECTED-START'
expect_match "... holding w's expected start" "$wide" "^w .*$when"
off=$((expected - r4_end))
[ "${off#-}" -le 1 ] && pass "the expected start is r4's start plus its 12 s" ||
        fail "expected start $expected, r4's start plus 12 s is $r4_end"
# Creation times have seconds: the stream starts a second after w, or a
# stream job created in w's second would go first by name (s < w).
sleep 1.1
expect_match "metrics: one reservation in queue default" \
        "$(curl -s http://127.0.0.1:$PORT_M/metrics)" '^kbatch_reservations\{queue_name="default"\} 1$'
for i in $(seq 1 12); do
        group "s$i" 1
        pod "s$i" "s$i" 10
        sleep 1
done
# (Running, or already done: on a busy machine, with other tests running
# alongside, the stream's creation may outlast w's run.)
if ! wait_for "w runs" 45 sh -c "$K get pod w-1 -o jsonpath='{.status.phase}' | grep -Eqx 'Running|Succeeded|Failed'"; then
        $K get pods -o wide
        $K get pg w -o yaml | tail -20
        tail -40 "$T/resv.log"
fi
w_start=$(epoch "$(started w-1)")
delta=$((w_start - expected))
[ "${delta#-}" -le 2 ] && pass "w started at its expected time (${delta} s off)" ||
        fail "w started at $w_start, expected $expected (${delta} s off)"
early=$($K get pods -o jsonpath='{range .items[*]}{.metadata.name} {.status.startTime}{"\n"}{end}' |
        awk -v w="$(started w-1)" '$1 ~ /^s/ && $2 != "" && $2 < w')
expect_eq "no stream pod started before w" "$early" ""
# w started on time: its delay is under a second; nothing was backfilled
# (every stream pod would have run past w's start).
# On a loaded machine w may finish, and a stream job be reserved and
# started, before the metrics are read: every start observed must then be
# on time (within 5 s), w's among them.
m=$(curl -s http://127.0.0.1:$PORT_M/metrics)
n_all=$(printf '%s\n' "$m" | sed -n 's/^kbatch_reservation_delay_seconds_count \([0-9]*\)$/\1/p')
n_5s=$(printf '%s\n' "$m" | sed -n 's/^kbatch_reservation_delay_seconds_bucket{le="5"} \([0-9]*\)$/\1/p')
[ "${n_all:-0}" -ge 1 ] && [ "$n_5s" = "$n_all" ] &&
        pass "metrics: w's start observed, on time ($n_all start(s), all within 5 s)" ||
        fail "metrics: reserved starts observed ${n_all:-none}, within 5 s ${n_5s:-none}"
expect_match "metrics: no task backfilled" "$m" '^kbatch_backfilled_tasks_total 0$'
stop_sched resv
finish
