# kbatch-scheduler against kbatch-apiserver: what it fetches (field
# selectors: each pod on one stream; another scheduler's pending pods too,
# but it never binds them), what it writes for a
# pipelined task (nominatedNodeName), events deduplicated into a series,
# and the action and plugin latency metrics.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=4
start_api --nodes "2:cpu=4,memory=16Gi"

# pod NAME SCHEDULER CPU [EXTRA-SPEC]
pod() {
        create /api/v1/namespaces/default/pods \
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\"},\"spec\":{\"schedulerName\":\"$2\"${4:-},\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"$3\"}}}]}}" >/dev/null
}

# Another scheduler's pods: one pending from before the start (listed), one
# running on node-1 that fills it, one on node-2 about to be deleted.
pod foreign-early other 1
pod web other 4 ',"nodeName":"node-1"'
pod old other 4 ',"nodeName":"node-2","terminationGracePeriodSeconds":12'
wait_for "foreign pods running" 10 sh -c "$K get pod web old -o jsonpath='{.items[*].status.phase}' | grep -qx 'Running Running'"

PORT_M=$(free_port)
start_sched s --listen-address 127.0.0.1:$PORT_M --dump-dir "$T"
wait_for "default queue created" 15 $K get queue default
pod foreign-late other 1

# old is deleted with its 12 s grace period: Releasing, so its 4 cpu on
# node-2 are future idle.  A gang of one 4-cpu pod is pipelined there and
# nominated, then binds when old is gone.
api DELETE "/api/v1/namespaces/default/pods/old?gracePeriodSeconds=12" >/dev/null
gang pipe 1 4
wait_for "pipelined pod nominated to node-2" 10 sh -c "$K get pod pipe-1 -o jsonpath='{.status.nominatedNodeName}' | grep -qx node-2"
expect_eq "pipelined pod not bound while old terminates" "$($K get pod pipe-1 -o jsonpath='{.spec.nodeName}')" ""

# A gang that fits nowhere (8 cpu): one FailedScheduling Event per pod and
# one Unschedulable Event on the group, whose count and series grow.
gang big 1 8
wait_for "big: FailedScheduling event" 10 sh -c "$K get events --field-selector involvedObject.name=big-1,reason=FailedScheduling -o name | grep -q ."
series() { # OBJECT REASON -> "events count series.count"
        $K get events --field-selector "involvedObject.name=$1,reason=$2" \
                -o jsonpath='{range .items[*]}{.count} {.series.count}{"\n"}{end}'
}
wait_for "big-1: FailedScheduling count and series grow" 20 sh -c "[ \"\$($K get events --field-selector involvedObject.name=big-1,reason=FailedScheduling -o jsonpath='{.items[0].series.count}')\" -ge 3 ]"
wait_for "big: Unschedulable count grows" 10 sh -c "[ \"\$($K get events --field-selector involvedObject.name=big,reason=Unschedulable -o jsonpath='{.items[0].count}')\" -ge 3 ]"
# One Event per distinct message (the message may change as the cluster
# does: old going away changes what the nodes offer).
msgs() {
        $K get events --field-selector "involvedObject.name=$1,reason=$2" \
                -o jsonpath='{range .items[*]}{.message}{"\n"}{end}'
}
expect_eq "big-1: one FailedScheduling Event per message" "$(msgs big-1 FailedScheduling | sort | uniq -d)" ""
expect_eq "big: one Unschedulable Event per message" "$(msgs big Unschedulable | sort | uniq -d)" ""
expect_match "big-1: count equals series.count" "$(series big-1 FailedScheduling)" '^([0-9]+) \1$'
expect_match "events carry lastObservedTime" "$($K get events --field-selector involvedObject.name=big-1,reason=FailedScheduling -o jsonpath='{.items[0].series.lastObservedTime}')" '^20[0-9-]+T[0-9:]+\.[0-9]{6}Z$'

wait_for "pipe binds to node-2 once old is gone" 25 sh -c "$K get pod pipe-1 -o jsonpath='{.spec.nodeName}' | grep -qx node-2"

# The cache holds the pending pods of other schedulers (a pod naming one of
# our PodGroups tells the group why its pods never come: issue 23, point
# 1) and never binds them; a bound one it holds (it takes node resources).
kill -USR1 "${SCHED_PID[s]}"
wait_for "cache dump written" 10 sh -c "ls $T/kbatch-cache-*.json"
dump=$(cat "$T"/kbatch-cache-*.json)
expect_match "pending pods of other schedulers are cached" "$dump" '"default/foreign-early"'
expect_eq "and never bound by kbatch" "$($K get pod foreign-early foreign-late -o jsonpath='{.items[*].spec.nodeName}')" ""
expect_match "bound pods of other schedulers are cached" "$dump" '"default/web"'
expect_match "our pending pods are cached" "$dump" '"default/big-1"'
rm -f "$T"/kbatch-cache-*.json
code=$(api POST /api/v1/namespaces/default/pods/foreign-late/binding '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"foreign-late"},"target":{"apiVersion":"v1","kind":"Node","name":"node-1"}}')
expect_eq "another scheduler binds its pod" "$code" 201
sleep 1
kill -USR1 "${SCHED_PID[s]}"
wait_for "second cache dump written" 10 sh -c "ls $T/kbatch-cache-*.json"
expect_match "a pod bound by another scheduler arrives" "$(cat "$T"/kbatch-cache-*.json)" '"default/foreign-late"'

# Metrics: action and plugin latencies, and the rest the issue lists.
m=$(curl -s http://127.0.0.1:$PORT_M/metrics)
expect_match "metrics: action latency" "$m" '^kbatch_action_scheduling_latency_microseconds_count\{action="allocate"\} [1-9]'
expect_match "metrics: action latency buckets" "$m" '^kbatch_action_scheduling_latency_microseconds_bucket\{action="enqueue",le="\+Inf"\} [1-9]'
expect_match "metrics: plugin open latency" "$m" '^kbatch_plugin_scheduling_latency_microseconds_count\{plugin="gang",OnSession="OnSessionOpen"\} [1-9]'
expect_match "metrics: plugin close latency" "$m" '^kbatch_plugin_scheduling_latency_microseconds_sum\{plugin="proportion",OnSession="OnSessionClose"\} '
expect_match "metrics: e2e latency" "$m" '^kbatch_e2e_scheduling_latency_milliseconds_bucket\{le="5"\} '
expect_match "metrics: unschedulable tasks" "$m" '^kbatch_unschedule_task_count 1$'
expect_match "metrics: unschedulable jobs" "$m" '^kbatch_unschedule_job_count 1$'
expect_match "metrics: schedule attempts" "$m" '^kbatch_schedule_attempts_total\{result="unschedulable"\} [1-9]'
expect_match "metrics: queue deserved" "$m" '^kbatch_queue_deserved_milli_cpu\{queue_name="default"\} '
expect_match "metrics: queue share" "$m" '^kbatch_queue_share\{queue_name="default"\} '
expect_match "metrics: API requests by verb and code" "$m" '^kbatch_api_requests_total\{verb="PATCH",code="200"\} [1-9]'

stop_sched s
grep -q "ERROR: AddressSanitizer\|runtime error" "$T/s.log" && fail "sanitizer report in the log"
finish
