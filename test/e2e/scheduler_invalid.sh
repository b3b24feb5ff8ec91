# Objects the CRDs accept but kbatch cannot decode (a negative quantity)
# never vanish silently: a PodGroup gets a Warning event and an
# Unschedulable condition (reason InvalidSpec) naming the field, its pods a
# FailedScheduling event saying the same; a Queue gets a Warning event and
# an Invalid condition.  Fixed, the group schedules; a valid group edited
# into an invalid one is reported too (its old spec no longer applies).
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8
start_api --nodes "2:cpu=8,memory=32Gi"
start_sched s
wait_for "default queue" 15 $K get queue default

pg() { # NAME QUEUE MINRES-CPU
        create /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups \
                "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"$1\"},\"spec\":{\"minMember\":1,\"queue\":\"$2\",\"minResources\":{\"cpu\":\"$3\"}}}"
}
pod() { # NAME GROUP
        create /api/v1/namespaces/default/pods \
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\",\"annotations\":{\"scheduling.k8s.io/group-name\":\"$2\"}},\"spec\":{\"schedulerName\":\"kbatch\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"
}
cond() { # KIND NAME TYPE FIELD
        $K get "$1" "$2" -o jsonpath="{.status.conditions[?(@.type==\"$3\")].$4}"
}
events() { # NAME REASON
        $K get events --field-selector "involvedObject.name=$1,reason=$2" -o jsonpath='{range .items[*]}{.type} {.message}{"\n"}{end}'
}

# A PodGroup with a negative minResources: accepted by the CRD's pattern.
pg badres default -1 >/dev/null
pod badres-1 badres >/dev/null
wait_for "badres: InvalidSpec condition" 15 sh -c "$K get pg badres -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].reason}' | grep -qx InvalidSpec"
expect_eq "badres: condition status" "$(cond pg badres Unschedulable status)" True
expect_match "badres: condition names the field" "$(cond pg badres Unschedulable message)" '^podgroup default/badres: spec\.minResources\.cpu: must not be negative, got "-1"'
wait_for "badres: Warning event" 10 sh -c "$K get events --field-selector involvedObject.name=badres,reason=InvalidSpec -o name | grep -q ."
expect_match "badres: event names the field" "$(events badres InvalidSpec)" '^Warning podgroup default/badres: spec\.minResources\.cpu: '
wait_for "badres-1: FailedScheduling names the field" 10 sh -c "$K get events --field-selector involvedObject.name=badres-1,reason=FailedScheduling -o jsonpath='{.items[*].message}' | grep -q 'spec.minResources.cpu'"
expect_eq "badres-1 not bound" "$($K get pod badres-1 -o jsonpath='{.spec.nodeName}')" ""
expect_match "the log names it" "$(cat "$T/s.log")" 'podgroup default/badres: spec\.minResources\.cpu: must not be negative'

# A Queue with a negative capability.
create /apis/scheduling.volcano.sh/v1beta1/queues '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"badq"},"spec":{"weight":1,"capability":{"cpu":"-2"}}}' >/dev/null
wait_for "badq: Invalid condition" 15 sh -c "$K get queue badq -o jsonpath='{.status.conditions[?(@.type==\"Invalid\")].reason}' | grep -qx InvalidSpec"
expect_match "badq: condition names the field" "$(cond queue badq Invalid message)" '^queue badq: spec\.capability\.cpu: must not be negative, got "-2"'
wait_for "badq: Warning event" 10 sh -c "$K get events -A --field-selector involvedObject.name=badq,reason=InvalidSpec -o name | grep -q ."

# Fixed, the group schedules and its condition turns False.
$K patch pg badres --type=merge -p '{"spec":{"minResources":{"cpu":"1"}}}' >/dev/null
wait_for "badres binds once fixed" 15 all_bound 1
wait_for "badres Running" 10 sh -c "$K get pg badres -o jsonpath='{.status.phase}' | grep -qx Running"

# A valid group edited into an invalid one is reported, not run on its old spec.
pg good default 1 >/dev/null
wait_for "good: Inqueue or Running" 10 sh -c "$K get pg good -o jsonpath='{.status.phase}' | grep -Eq 'Inqueue|Running|Pending'"
$K patch pg good --type=merge -p '{"spec":{"minResources":{"cpu":"-3"}}}' >/dev/null
wait_for "good: InvalidSpec after the edit" 15 sh -c "$K get pg good -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q 'got \"-3\"'"
pod good-1 good >/dev/null
sleep 1.5
expect_eq "good-1 not bound while its group is invalid" "$($K get pod good-1 -o jsonpath='{.spec.nodeName}')" ""
stop_sched s
grep -q "ERROR: AddressSanitizer\|runtime error" "$T/s.log" && fail "sanitizer report in the log"
finish
