# Switching from Volcano (issue 23): what a Volcano user's objects are told
# while a group waits to be admitted, through real kubectl:
#   1. a PodGroup as Volcano's job controller makes it (minResources, no
#      pods before admission) whose queue's capability is below its
#      minResources is told NeverFits naming the queue and the numbers, not
#      "no pods yet" (Volcano's queue.yaml artifact, capability 2 cpu, and
#      example/job.yaml asking 3);
#   2. a gang that can never fit the cluster (minResources 40 cpu on 4
#      nodes of 8) is told NeverFits at admission with the numbers, not a
#      temporary "resource in cluster is overused";
#   3. one that must wait for its queue's room is told the queue's quota,
#      not "no pods yet";
#   4. the normal handshake (admitted, then its pods created) records no
#      Warning event on the group.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8
start_api --nodes "4:cpu=8,memory=32Gi"
start_sched s
wait_for "default queue created" 15 $K get queue default
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: test}
spec: {weight: 1, reclaimable: true, capability: {cpu: "2"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: small}
spec: {weight: 1, capability: {cpu: "4"}}
YAML

# pg NAME QUEUE MINMEMBER CPU: a PodGroup with minResources and no pods.
pg() {
        $K apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: $1}
spec: {minMember: $3, queue: $2, minResources: {cpu: "$4"}}
YAML
}
reason() { $K get podgroup "$1" -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].reason}'; }
message() { $K get podgroup "$1" -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].message}'; }
has_reason() { [ "$(reason "$1")" = "$2" ]; }

# ---- 1. minResources above the queue's capability ---------------------------------
pg test-job test 3 3
wait_for "test-job is told NeverFits" 15 has_reason test-job NeverFits
expect_match "it names the queue, its capability and the group's ask" "$(message test-job)" \
        '^queue test can never hold the gang: its minResources ask cpu 3, the queue.s capability is 2'
expect_eq "it stays Pending (not admitted)" \
        "$($K get podgroup test-job -o jsonpath='{.status.phase}')" Pending

# ---- 2. more than the whole cluster ----------------------------------------------
pg huge default 5 40
wait_for "huge is told NeverFits" 15 has_reason huge NeverFits
expect_match "with the cluster's numbers" "$(message huge)" \
        '^can never fit: its minResources ask cpu 40, more than the whole cluster has \(4 node\(s\): 32\)'

# ---- 3. waits for its queue's room ----------------------------------------------------
pg first small 1 3
wait_for "first is admitted" 15 sh -c "[ \"\$($K get podgroup first -o jsonpath='{.status.phase}')\" = Inqueue ]"
pg second small 2 2
wait_for "second is told its queue's quota" 15 has_reason second QueueQuotaExceeded
expect_match "naming the queue, not 'no pods yet'" "$(message second)" 'queue small'
case $(message second) in *"no pods yet"*) fail "second still says no pods yet" ;; *) pass "no 'no pods yet' while not admitted" ;; esac

# ---- 4. the normal handshake -------------------------------------------------------
pg hs default 2 2
wait_for "hs is admitted" 15 sh -c "[ \"\$($K get podgroup hs -o jsonpath='{.status.phase}')\" = Inqueue ]"
sleep 2 # sessions every 200ms: several see the admitted group without pods
for i in 1 2; do
        create /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"hs-$i\",\"annotations\":{\"scheduling.k8s.io/group-name\":\"hs\"}},\"spec\":{\"schedulerName\":\"kbatch\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"
done
bound() { [ -n "$($K get pod "$1" -o jsonpath='{.spec.nodeName}')" ]; }
wait_for "its pods are bound" 15 sh -c "$(declare -f bound); K='$K'; bound hs-1 && bound hs-2"
sleep 1
warn=$($K get events --field-selector involvedObject.name=hs,type=Warning --no-headers 2>/dev/null)
expect_eq "no Warning event on the group during the handshake" "$warn" ""

stop_sched s
finish
