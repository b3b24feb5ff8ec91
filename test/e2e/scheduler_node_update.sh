# kbatch-scheduler while its nodes change under it: a status heartbeat, a
# cordon, a label, an allocatable that shrinks.  A heartbeat changes
# nothing kbatch reads, so it changes nothing (pkg/cache keeps the node);
# the model kept between sessions reads each changed node again instead of building
# (pkg/framework/update_node.c); the sanitizer build checks the kept model
# against a fresh build every session (KB_MODEL_CHECK, abort on a
# difference), and the placements must follow each change.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=4
start_api --nodes "2:cpu=4,memory=16Gi"
PORT_M=$(free_port)
mkdir -p "$T/dumps"
start_sched s --listen-address 127.0.0.1:$PORT_M --dump-dir "$T/dumps"

# The kept model's count of sessions by how it was made (built, reused,
# updated), from the scheduler's metrics.
model_count() {
        curl -s http://127.0.0.1:$PORT_M/metrics |
                sed -n "s/^kbatch_session_model_total{how=\"$1\"} //p"
}

# nodeName of each pod of a group, one "pod=node" a line.
placed() {
        $K get pods -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' | grep "^$1-"
}

gang g1 2 1
wait_for "g1 bound" 20 all_bound 2

# A kubelet's status heartbeat: only a condition's time differs, nothing
# kbatch reads.  The cache keeps the node and its generation
# (pkg/cache), so the sessions after it use the kept model as it is:
# reused, neither updated nor built.  The cache dump (SIGUSR1) shows the
# heartbeat's resourceVersion: the scheduler has seen it.
settled() {
        local a b
        a="$(model_count built)/$(model_count updated)"
        sleep 1
        b="$(model_count built)/$(model_count updated)"
        [ -n "$a" ] && [ "$a" = "$b" ]
}
wait_for "the scheduler settles after g1" 30 settled
built=$(model_count built) updated=$(model_count updated) reused=$(model_count reused)
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
rv=$($K patch node node-2 --subresource=status --type=merge -o jsonpath='{.metadata.resourceVersion}' \
        -p "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastHeartbeatTime\":\"$now\"}]}}")
# node-2's resourceVersion in a fresh dump of the scheduler's cache.
dumped_rv() {
        rm -f "$T"/dumps/*.json
        kill -USR1 "${SCHED_PID[s]}"
        local f end=$((SECONDS + 5))
        while [ $SECONDS -lt $end ]; do
                f=$(ls "$T"/dumps/*.json 2>/dev/null | head -1)
                # Whole once its last brace is in.
                [ -n "$f" ] && [ "$(tr -d ' \n' <"$f" | tail -c 1)" = "}" ] && break
                sleep 0.1
        done
        [ -n "$f" ] && tr -d ' \n' <"$f" | grep -o '"name":"node-2","resourceVersion":"[^"]*"' |
                sed 's/.*"resourceVersion":"//; s/"$//'
}
seen_beat() { [ "$(dumped_rv)" = "$rv" ]; }
wait_for "the scheduler's cache has the heartbeat (resourceVersion $rv)" 10 seen_beat
reused_since() { [ "$(model_count reused)" -ge $((reused + 3)) ]; }
wait_for "sessions after the heartbeat reuse the kept model" 10 reused_since
expect_eq "the heartbeat did not make the model be updated" "$(model_count updated)" "$updated"
expect_eq "the heartbeat did not make the model be built again" "$(model_count built)" "$built"
gang g2 2 1
wait_for "g2 bound after a heartbeat" 20 all_bound 4

# Cordoned: the next gang goes to the other node alone.
$K cordon node-1 >/dev/null
sleep 0.5
gang g3 2 1
wait_for "g3 bound" 20 all_bound 6
expect_eq "g3 avoids the cordoned node" "$(placed g3 | grep -c '=node-2$')" 2

# Uncordoned and labelled: a pod asking for the label goes there.
$K uncordon node-1 >/dev/null
$K label node node-1 zone=a >/dev/null
create /api/v1/namespaces/default/pods \
        '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"z-1","namespace":"default"},"spec":{"schedulerName":"kbatch","nodeSelector":{"zone":"a"},"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"1"}}}]}}' >/dev/null
wait_for "z bound" 20 all_bound 7
expect_eq "z on the labelled node" "$(placed z)" "z-1=node-1"

# node-1 shrinks to 1 cpu, below what its pods hold: a gang that would
# have fit there waits.
$K patch node node-1 --subresource=status --type=merge \
        -p '{"status":{"allocatable":{"cpu":"1","memory":"16Gi","pods":"110"}}}' >/dev/null
sleep 0.5
gang g4 1 1
sleep 2
expect_eq "g4 waits: no node has a cpu left" "$(unbound)" 1

expect_eq "the kept model never differed from a fresh build" \
        "$(grep -c 'kept model differs' "$T/s.log")" 0
stop_sched s
finish
