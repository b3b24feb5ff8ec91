# kbatch-scheduler against kbatch-apiserver: a gang placed in one dispatch,
# a gang that cannot fit and then does, events, status, metrics, conf
# checks and reloads, the cache dump, and a clean stop under ASan.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8
start_api --nodes "4:cpu=8,memory=32Gi"

# A bad conf at startup: a clear error and exit 2.
printf 'actions: "enqueue, allocate, nosuch"\n' >"$T/bad.conf"
rc=0
out=$("$BIN/kbatch-scheduler" --kubeconfig "$KC" --scheduler-conf "$T/bad.conf" 2>&1) || rc=$?
expect_eq "bad conf at startup exits 2" "$rc" 2
expect_match "bad conf error names the file and the action" "$out" "bad.conf.*nosuch"
rc=0
"$BIN/kbatch-scheduler" --schedule-period nonsense >/dev/null 2>&1 || rc=$?
expect_eq "bad flag exits 2" "$rc" 2
# The message names the flag given (a flag after the two spellings of the
# lease namespace was once named as the flag before it).
out=$("$BIN/kbatch-scheduler" --kube-api-qps abc 2>&1) || true
expect_match "bad value names its flag" "$out" 'bad value for --kube-api-qps: abc'
expect_match "--version" "$("$BIN/kbatch-scheduler" --version)" '^kbatch-scheduler [0-9]'

cat >"$T/good.conf" <<'YAML'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
YAML
PORT_M=$(free_port)
start_sched s --scheduler-conf "$T/good.conf" --listen-address 127.0.0.1:$PORT_M --dump-dir "$T"

# The default queue is created.
wait_for "default queue created" 15 $K get queue default

# A gang of 4 with room: all bound in the same dispatch, PodGroup Running.
gang g1 4 2
wait_for "gang of 4 bound" 20 all_bound 4
expect_match "all 4 binds left one session" "$(cat "$T/s.log")" 'session: 4 binds'
wait_for "podgroup g1 Running" 10 sh -c "$K get pg g1 -o jsonpath='{.status.phase}' | grep -qx Running"
wait_for "Scheduled events on the pods" 10 sh -c "$K get events --field-selector reason=Scheduled,involvedObject.kind=Pod -o name | wc -l | grep -qx 4"
wait_for "Scheduled event on the podgroup" 10 sh -c "$K get events --field-selector involvedObject.kind=PodGroup,involvedObject.name=g1,reason=Scheduled -o name | grep -q ."
wait_for "queue status counts the running group" 10 sh -c "$K get queue default -o jsonpath='{.status.running}' | grep -qx 1"

# A gang that cannot fit (3 x 7 CPUs on what is left): nothing bound,
# Unschedulable naming cpu, one event (deduplicated), binds after a node joins.
gang big 3 7
wait_for "big: Unschedulable condition naming cpu" 15 sh -c "$K get pg big -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q 'Insufficient cpu'"
sleep 1.5
expect_eq "big: nothing bound" "$($K get pods -l '!x' -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' | grep '^big' | grep -vc '=$')" 0
# One Event per object and reason; its message follows the reason that
# stands (a session that saw only part of the gang, while its pods were
# being created, may have said something else first) within a patch
# period.
expect_eq "big: one Unschedulable event" "$($K get events --field-selector involvedObject.name=big,reason=Unschedulable -o name | wc -l)" 1
wait_for "big: the Unschedulable event names cpu" 10 sh -c "$K get events --field-selector involvedObject.name=big,reason=Unschedulable -o jsonpath='{.items[0].message}' | grep -q 'Insufficient cpu'"
describe_shows_why() {
        $K describe podgroup big | sed -n '/^Events:/,$p' | grep -Eq 'Warning +Unschedulable .*Insufficient cpu'
}
wait_for "kubectl describe podgroup big shows the Unschedulable event" 10 describe_shows_why
wait_for "big pods: FailedScheduling and PodScheduled=False" 10 sh -c "$K get pod big-1 -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].status}' | grep -qx False"
for i in 5 6 7; do
        api POST /api/v1/nodes "$(node_json extra-$i 8 32Gi)" >/dev/null
done
wait_for "big binds once nodes are added" 20 all_bound 7
wait_for "podgroup big Running" 10 sh -c "$K get pg big -o jsonpath='{.status.phase}' | grep -qx Running"
check_no_overcommit
check_bound_once "$T/s.log"

# Metrics and probes.
m=$(curl -s http://127.0.0.1:$PORT_M/metrics)
expect_match "metrics: e2e latency" "$m" '^kbatch_e2e_scheduling_latency_milliseconds_count [1-9]'
expect_match "metrics: schedule attempts" "$m" '^kbatch_schedule_attempts_total\{result="scheduled"\} 7$'
expect_match "metrics: API requests by verb and code" "$m" '^kbatch_api_requests_total\{verb="POST",code="201"\} [0-9]+'
expect_match "metrics: queue allocated" "$m" '^kbatch_queue_allocated_milli_cpu\{queue_name="default"\} 29000'
expect_eq "healthz" "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT_M/healthz)" 200
expect_eq "readyz" "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT_M/readyz)" 200

# A bad conf on reload keeps the old one running.
sleep 1.1
cp "$T/bad.conf" "$T/good.conf"
wait_for "bad reload is logged" 10 grep -q "not valid, keeping the previous one" "$T/s.log"
gang after 2 1
wait_for "still scheduling after a bad reload" 15 all_bound 9

# SIGUSR1 dumps the cache, 0600, never through a symlink planted under
# the name it will use (kbatch-cache-PID-SECONDS.json).
pid=${SCHED_PID[s]}
now=$(date +%s)
echo secret >"$T/target"
for t in $(seq "$now" $((now + 3))); do ln -s "$T/target" "$T/kbatch-cache-$pid-$t.json"; done
kill -USR1 "$pid"
wait_for "a planted symlink is not followed" 10 grep -q 'not following or replacing it' "$T/s.log"
expect_eq "the symlink's target is untouched" "$(cat "$T/target")" secret
rm -f "$T"/kbatch-cache-*.json
while [ "$(date +%s)" -le $((now + 3)) ]; do sleep 0.2; done
kill -USR1 "$pid"
wait_for "cache dump written" 10 sh -c "ls $T/kbatch-cache-*.json"
expect_eq "the dump is 0600" "$(stat -c %a "$T"/kbatch-cache-*.json)" 600
expect_match "dump lists the pods" "$(cat "$T"/kbatch-cache-*.json 2>/dev/null)" '"default/after-1"'

stop_sched s
grep -q "ERROR: AddressSanitizer\|runtime error" "$T/s.log" && fail "sanitizer report in the log"
finish
