# Preempt and reclaim through kbatch-apiserver and kbatch-scheduler.
#
# Preempt: one node of 4 cpu runs gang lo (priority 10, minMember 2, two
# 2-cpu pods with a 2 s grace period).  Gang hi (priority 1000, minMember 2,
# two 2-cpu pods) arrives.  Cutting lo to one pod would leave it below its
# minMember, so lo is evicted whole: both pods are deleted with their grace
# period and get an Evict event naming hi; hi's pods are nominated to the
# node and its PodGroup says it waits for the evictions; once lo's pods are
# gone hi binds there.
#
# Reclaim: queues qa and qb (weight 1) on two 4-cpu nodes; qa's job a
# (minMember 1) runs eight 1-cpu pods, the whole cluster.  qb's gang b
# (minMember 2, two 1-cpu pods) arrives.  Deserved: qb asks 2 and gets them,
# qa the other 6, so qa gives up exactly two pods and b binds.
#
# Preempt against a PodDisruptionBudget: the first case again, with a
# budget (minAvailable 1) over lo-1 alone.  kbatch evicts through the
# Eviction API, so the budget holds: lo-1's eviction is refused (429), lo-2's
# goes through.  lo-1 keeps running; hi cannot fit beside it (it needs the
# whole node) and stays unbound, and nothing is over-committed.  The
# refusal shows: a warning in the log, an EvictionRefused event on lo-1 and
# on hi's PodGroup, and hi's Unschedulable message names lo-1 and the
# budget.  The sessions keep choosing lo-1, but a refused eviction is held
# off for 5 s, so the budget is asked every few seconds, not every session.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=4
start_api --nodes "1:cpu=4,memory=16Gi"

# conf ACTION: the default tiers with enqueue, allocate, ACTION, backfill.
conf() {
        cat <<YAML
actions: "enqueue, allocate, $1, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
YAML
}
conf preempt >"$T/preempt.conf"

# pods NAME N CPU PRIORITYCLASS GRACE [QUEUE] [MIN]: a PodGroup and N pods.
pods() {
        local name=$1 n=$2 cpu=$3 pc=$4 grace=$5 q=${6:-default} min=${7:-$2}
        {
                cat <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: $name}
spec: {minMember: $min, queue: $q${pc:+, priorityClassName: $pc}}
YAML
                for i in $(seq 1 "$n"); do
                        cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $name-$i
  annotations: {scheduling.k8s.io/group-name: $name}
spec:
  schedulerName: kbatch
  terminationGracePeriodSeconds: $grace
${pc:+  priorityClassName: $pc}
  containers:
  - name: c
    image: x
    resources: {requests: {cpu: "$cpu"}}
YAML
                done
        } | $K apply -f - >/dev/null
}

# node_of POD: its spec.nodeName ("" when unbound or gone).
node_of() { $K get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
gone() { ! $K get pod "$1" >/dev/null 2>&1; }

priority_classes() { # lo (10) and hi (1000)
        $K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: lo}
value: 10
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: hi}
value: 1000
YAML
}
priority_classes

start_sched s --scheduler-conf "$T/preempt.conf"
pods lo 2 2 lo 2
wait_for "gang lo runs on the node" 20 sh -c \
        "$K get pg lo -o jsonpath='{.status.phase}' | grep -qx Running"

pods hi 2 2 hi 0
wait_for "hi's pods are nominated to the node" 20 sh -c \
        "$K get pod hi-1 hi-2 -o jsonpath='{range .items[*]}{.status.nominatedNodeName}{\"\\n\"}{end}' | grep -c '^node-1$' | grep -qx 2"
expect_eq "both of lo's pods are terminating (whole gang, grace period honoured)" \
        "$($K get pod lo-1 lo-2 -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}{"\n"}{end}' 2>/dev/null | grep -c .)" 2
expect_eq "hi binds nowhere while lo's pods terminate" "$(node_of hi-1)$(node_of hi-2)" ""
expect_match "hi's PodGroup says what it waits for" \
        "$($K get pg hi -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].message}')" \
        'evicted \(preempt\)|wait for room that terminating pods free'
ev=$($K get events -o jsonpath='{range .items[*]}{.involvedObject.name} {.reason} {.message}{"\n"}{end}')
expect_match "lo-1's Evict event names the preemptor" "$ev" '^lo-1 Evict .*preempt.*hi'
expect_match "lo-2's Evict event names the preemptor" "$ev" '^lo-2 Evict .*preempt.*hi'
wait_for "lo's pods are gone after their grace period" 20 sh -c "! $K get pod lo-1 && ! $K get pod lo-2"
wait_for "hi binds to the node" 20 sh -c \
        "[ \"\$($K get pod hi-1 -o jsonpath='{.spec.nodeName}')\$($K get pod hi-2 -o jsonpath='{.spec.nodeName}')\" = node-1node-1 ]"
wait_for "podgroup hi Running" 20 sh -c "$K get pg hi -o jsonpath='{.status.phase}' | grep -qx Running"
check_no_overcommit
stop_sched s
stop_api

# ---- reclaim ----
start_api --nodes "2:cpu=4,memory=16Gi"
conf reclaim >"$T/reclaim.conf"
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: qa}
spec: {weight: 1}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: qb}
spec: {weight: 1}
YAML
start_sched r --scheduler-conf "$T/reclaim.conf"
pods a 8 1 "" 1 qa 1
wait_for "qa's job a fills the cluster (8 pods bound)" 20 sh -c \
        "$K get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c node | grep -qx 8"
pods b 2 1 "" 0 qb
wait_for "qb's gang b binds" 30 sh -c \
        "$K get pods b-1 b-2 -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c node | grep -qx 2"
sleep 1
expect_eq "qa gave up exactly two pods (its share is 6)" \
        "$($K get pods -o name | grep -c '^pod/a-')" 6
ev=$($K get events -o jsonpath='{range .items[*]}{.involvedObject.name} {.reason} {.message}{"\n"}{end}')
expect_eq "two Evict events name reclaim and b" "$(printf '%s\n' "$ev" | grep -c '^a-[0-9] Evict .*reclaim.*b')" 2
check_no_overcommit
stop_sched r

# ---- preempt against a PodDisruptionBudget ----
stop_api
start_api --nodes "1:cpu=4,memory=16Gi"
priority_classes
start_sched b --scheduler-conf "$T/preempt.conf"
pods lo 2 2 lo 2
wait_for "gang lo runs on the node" 20 sh -c \
        "$K get pg lo -o jsonpath='{.status.phase}' | grep -qx Running"
$K label pod lo-1 guard=yes >/dev/null
$K apply -f - >/dev/null <<'YAML'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: keep-lo-1}
spec:
  minAvailable: 1
  selector: {matchLabels: {guard: "yes"}}
YAML
expect_eq "the budget allows no disruption" \
        "$($K get pdb keep-lo-1 -o jsonpath='{.metadata.name}' && $K get pdb keep-lo-1 --no-headers | awk '{print $4}')" "keep-lo-10"
start=$SECONDS
pods hi 2 2 hi 0
events() { $K get events -o jsonpath='{range .items[*]}{.involvedObject.kind} {.involvedObject.name} {.reason} {.message}{"\n"}{end}'; }
wait_for "lo-1 gets an EvictionRefused event naming the budget and the preemptor" 20 sh -c \
        "$K get events -o jsonpath='{range .items[*]}{.involvedObject.kind} {.involvedObject.name} {.reason} {.message}{\"\\n\"}{end}' | grep -E '^Pod lo-1 EvictionRefused .*podgroup default/hi.*disruption budget keep-lo-1'"
wait_for "hi's PodGroup says the budget refused lo-1's eviction" 20 sh -c \
        "$K get pg hi -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q 'the eviction of default/lo-1 was refused by a PodDisruptionBudget'"
expect_match "hi's PodGroup has an EvictionRefused event naming lo-1" "$(events)" \
        '^PodGroup hi EvictionRefused .*eviction of default/lo-1 .*refused by a PodDisruptionBudget'
wait_for "lo-2's eviction goes through: it is gone after its grace period" 20 sh -c "! $K get pod lo-2"
ev=$(events)
expect_match "lo-2 has its Evict event" "$ev" '^Pod lo-2 Evict .*preempt.*hi'
expect_eq "lo-1 has none" "$(printf '%s\n' "$ev" | grep -c '^Pod lo-1 Evict ')" 0
# Well past the 5 s hold-off, so that lo-1 is asked (and refused) again.
sleep $((start + 9 - SECONDS > 0 ? start + 9 - SECONDS : 0))
expect_eq "lo-1 still runs on the node, not terminating" \
        "$($K get pod lo-1 -o jsonpath='{.spec.nodeName} {.status.phase} {.metadata.deletionTimestamp}')" "node-1 Running "
expect_eq "hi binds nowhere" "$(node_of hi-1)$(node_of hi-2)" ""
expect_match "the scheduler logs the refusal with the server's message" "$(cat "$T/b.log")" \
        'eviction of default/lo-1 \(preempt\) refused by a PodDisruptionBudget: Cannot evict pod .*The disruption budget keep-lo-1 needs 1 healthy pods and has 1 currently'
n=$(grep -c 'eviction of default/lo-1 (preempt) refused' "$T/b.log")
secs=$((SECONDS - start + 1))
if [ "$n" -ge 2 ] && [ "$n" -le $((secs / 5 + 2)) ]; then
        pass "lo-1 asked again after the hold-off, not every session ($n refusals in ${secs}s)"
else
        fail "lo-1's eviction refused $n times in ${secs}s (want 2..$((secs / 5 + 2)))"
fi
check_no_overcommit
stop_sched b
finish
