# kbatch-scheduler while its nodes change under it: a status heartbeat, a
# cordon, a label, an allocatable that shrinks.  The model kept between
# sessions reads each changed node again instead of building
# (pkg/framework/update_node.c); the sanitizer build checks the kept model
# against a fresh build every session (KB_MODEL_CHECK, abort on a
# difference), and the placements must follow each change.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=4
start_api --nodes "2:cpu=4,memory=16Gi"
PORT_M=$(free_port)
start_sched s --listen-address 127.0.0.1:$PORT_M

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

# A kubelet's status heartbeat: only a condition's time differs.  The
# next session updates the kept model for it rather than building it.
sleep 1
built=$(model_count built) updated=$(model_count updated)
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
$K patch node node-2 --subresource=status --type=merge \
        -p "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastHeartbeatTime\":\"$now\"}]}}" >/dev/null
updated_since() { [ "$(model_count updated)" -gt "$updated" ]; }
wait_for "a session updates the kept model after the heartbeat" 10 updated_since
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
