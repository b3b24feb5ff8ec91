# Why a job waits, as the daemon writes it (issue 12 §1): a pod without a
# PodGroup that fits nowhere gets PodScheduled=False (Unschedulable) and a
# FailedScheduling event, as kube-scheduler gives it; a gang's condition
# names its blocker with numbers and its place in its queue; a group
# admitted with minResources that cannot become ready is sent back to
# Pending by its Inqueue timeout, with the Inqueue condition and an
# InqueueTimeout event, the condition's time kept across sessions (it is
# the timeout's clock); and /metrics has the queue figures for every
# resource (GPU included), PodGroup counts per phase, and the job
# scheduling latency, with Volcano's metric names under kbatch_.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=4
start_api --nodes "2:cpu=4,memory=16Gi"
PORT_M=$(free_port)
# --workload-podgroups=false: the pod without a PodGroup stays a gang of
# its own, as kube-scheduler would see it (with PodGroups made for
# workloads, it would get podgroup-<uid> and say why there:
# scheduler_workloads.sh).
start_sched s --listen-address 127.0.0.1:$PORT_M --workload-podgroups=false
wait_for "default queue created" 15 $K get queue default

jp() { $K get "$1" "$2" -o jsonpath="$3"; }

# A lone pod asking 16 cpu: no node has more than 4.
create /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"lone"},"spec":{"schedulerName":"kbatch","containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"16"}}}]}}'
wait_for "lone: PodScheduled=False" 15 sh -c "$K get pod lone -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].status}' | grep -qx False"
expect_eq "lone: reason Unschedulable" "$(jp pod lone '{.status.conditions[?(@.type=="PodScheduled")].reason}')" Unschedulable
expect_match "lone: message names the nodes and cpu" \
        "$(jp pod lone '{.status.conditions[?(@.type=="PodScheduled")].message}')" '0/2 nodes are available: 2 Insufficient cpu'
wait_for "lone: a FailedScheduling event naming cpu" 10 sh -c "$K get events --field-selector involvedObject.name=lone,reason=FailedScheduling -o jsonpath='{.items[*].message}' | grep -q 'Insufficient cpu'"

# Three 2.5-cpu tasks on two 4-cpu nodes (7.5 of 8 cpu, so it could fit
# in principle): one per node, the third fits nowhere (1.5 cpu left on
# each): nothing bound.  The message does not count how many its turn
# placed: a trial, undone, which may differ from one session to the next.
gang g3 3 2500m
wait_for "g3: Unschedulable with what it waits for" 15 sh -c "$K get pg g3 -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q 'its minMember 3 pods do not all fit the free room: 0/2 nodes are available: 2 Insufficient cpu'"
expect_eq "g3: reason NotEnoughResources" "$(jp pg g3 '{.status.conditions[?(@.type=="Unschedulable")].reason}')" NotEnoughResources
expect_match "g3: its place in its queue" "$(jp pg g3 '{.status.conditions[?(@.type=="Unschedulable")].message}')" '; 1st of 1 waiting in queue default$'
# Its pods say why they wait, not where the group stands (that is the
# group's to say, and would rewrite every pod whenever the queue moves).
wait_for "g3-1: PodScheduled=False with the blocker" 10 sh -c "$K get pod g3-1 -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q 'its minMember 3 pods do not all fit the free room'"
expect_eq "g3-1: no queue position in the pod's condition" \
        "$(jp pod g3-1 '{.status.conditions[?(@.type=="PodScheduled")].message}' | grep -c 'waiting in queue')" 0

# Eleven more gangs of that shape wait behind g3 (created after it, so
# g3 is 1st; among themselves, created within the same second or two,
# they are in name order, the job order's last tie-break: w01 2nd, ...,
# w11 12th of 12).  A condition whose only
# change is its place is rewritten at once while the gang is among the
# first 10 of its queue, and otherwise at most every 30 s (a thousand
# waiting gangs would otherwise cost a thousand writes per admission).
# When g3 goes, w01 moves to 1st at once; w11 (12th -> 11th) is not
# written again meanwhile.
for i in $(seq -w 1 11); do gang w$i 3 2500m; done
pos() { $K get pg "$1" -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].message}' | grep -o '[0-9]*[a-z]* of [0-9]* waiting in queue default$'; }
wait_for "w11: 12th of 12" 20 sh -c "$K get pg w11 -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q '; 12th of 12 waiting in queue default$'"
rv=$(jp pg w11 '{.metadata.resourceVersion}')
wait_for "w11-1: PodScheduled=False" 10 sh -c "$K get pod w11-1 -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].status}' | grep -qx False"
prv=$(jp pod w11-1 '{.metadata.resourceVersion}')
$K delete pg g3 >/dev/null
$K delete pod g3-1 g3-2 g3-3 --grace-period=0 >/dev/null 2>&1
wait_for "w01: moves up to 1st of 11 at once" 10 sh -c "$K get pg w01 -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q '; 1st of 11 waiting in queue default$'"
sleep 1
# Only while w11's condition is younger than the 30 s refresh (a slow
# machine may use it up before this point).  Its lastTransitionTime (when
# it became Unschedulable) is no later than its last write, which the
# refresh counts from, so the guard errs on the side of not checking.
written=$(date -d "$(jp pg w11 '{.status.conditions[?(@.type=="Unschedulable")].lastTransitionTime}')" +%s)
if [ $(($(date +%s) - written)) -lt 28 ]; then
        expect_eq "w11: not rewritten for a position alone past the 10th" "$(jp pg w11 '{.metadata.resourceVersion}')" "$rv"
        expect_eq "w11: its condition still says" "$(pos w11)" "12th of 12 waiting in queue default"
else
        echo "note: w11's condition is 28 s old already; its refresh is not checked"
fi
expect_eq "w11-1: its pod is not rewritten when the queue moves" "$(jp pod w11-1 '{.metadata.resourceVersion}')" "$prv"
for i in $(seq -w 2 11); do
        $K delete pg w$i >/dev/null
        $K delete pod w$i-1 w$i-2 w$i-3 --grace-period=0 >/dev/null 2>&1
done

# minMember 2 with minResources, one pod: admitted (Inqueue), never ready;
# its 3 s Inqueue timeout sends it back to Pending.
create /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"slow","annotations":{"kbatch.io/inqueue-timeout":"3s"}},"spec":{"minMember":2,"queue":"default","minResources":{"cpu":"1"}}}'
create /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"slow-1","annotations":{"scheduling.k8s.io/group-name":"slow"}},"spec":{"schedulerName":"kbatch","containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"1"}}}]}}'
wait_for "slow: Inqueue=True (Admitted)" 10 sh -c "$K get pg slow -o jsonpath='{.status.conditions[?(@.type==\"Inqueue\")].reason}' | grep -qx Admitted"
t1=$(jp pg slow '{.status.conditions[?(@.type=="Inqueue")].lastTransitionTime}')
expect_eq "slow: phase Inqueue" "$(jp pg slow '{.status.phase}')" Inqueue
sleep 1.2
# Only if still admitted (the 3 s may be up on a loaded machine).
if [ "$(jp pg slow '{.status.conditions[?(@.type=="Inqueue")].reason}')" = Admitted ]; then
        expect_eq "slow: the admission time stays put across sessions" \
                "$(jp pg slow '{.status.conditions[?(@.type=="Inqueue")].lastTransitionTime}')" "$t1"
fi
wait_for "slow: back to Pending after its timeout" 15 sh -c "$K get pg slow -o jsonpath='{.status.phase}' | grep -qx Pending"
expect_eq "slow: Inqueue=False" "$(jp pg slow '{.status.conditions[?(@.type=="Inqueue")].status}')" False
expect_eq "slow: reason InqueueTimeout" "$(jp pg slow '{.status.conditions[?(@.type=="Inqueue")].reason}')" InqueueTimeout
expect_match "slow: the message says what happened" \
        "$(jp pg slow '{.status.conditions[?(@.type=="Inqueue")].message}')" 'not ready within 3s of its admission to queue default: sent back to Pending'
t2=$(jp pg slow '{.status.conditions[?(@.type=="Inqueue")].lastTransitionTime}')
if [ -n "$t1" ] && [ "$(date -d "$t2" +%s)" -ge $(($(date -d "$t1" +%s) + 3)) ]; then
        pass "slow: sent back 3 s or more after its admission ($t1 -> $t2)"
else
        fail "slow: admitted at $t1, sent back at $t2"
fi
wait_for "slow: an InqueueTimeout event" 10 sh -c "$K get events --field-selector involvedObject.name=slow,reason=InqueueTimeout -o name | grep -q ."
expect_eq "slow: nothing bound" "$(jp pod slow-1 '{.spec.nodeName}')" ""

# A node with 2 cpu and two GPUs, and a gang of one asking 1 cpu and one
# GPU: bound there, Running.
api POST /api/v1/nodes '{"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-node","annotations":{"kwok.x-k8s.io/node":"fake"}},"status":{"allocatable":{"cpu":"2","memory":"16Gi","pods":"110","nvidia.com/gpu":"2"},"capacity":{"cpu":"2","memory":"16Gi","pods":"110","nvidia.com/gpu":"2"},"conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null
create /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"train"},"spec":{"minMember":1,"queue":"default"}}'
create /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"train-1","annotations":{"scheduling.k8s.io/group-name":"train"}},"spec":{"schedulerName":"kbatch","containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]}}'
wait_for "train: Running" 15 sh -c "$K get pg train -o jsonpath='{.status.phase}' | grep -qx Running"
# The queue now: train Running, w01 Inqueue (admitted: no minResources;
# its third 2.5-cpu task fits on no node), slow Pending (sent back); g3
# and w02..w11 were deleted and lone has no PodGroup.  w01's tasks were
# rolled back, so
# the queue holds train's 1 cpu and 1 GPU (1000 milli-units, as Volcano
# counts scalars).
metric() { curl -s "http://127.0.0.1:$PORT_M/metrics" | grep -E "^$1 " | awk '{print $2}'; }
wait_for "metrics: one running group" 10 sh -c "curl -s http://127.0.0.1:$PORT_M/metrics | grep -qx 'kbatch_queue_pod_group_running_count{queue_name=\"default\"} 1'"
expect_eq "metrics: inqueue count" "$(metric 'kbatch_queue_pod_group_inqueue_count\{queue_name="default"\}')" 1
expect_eq "metrics: pending count" "$(metric 'kbatch_queue_pod_group_pending_count\{queue_name="default"\}')" 1
expect_eq "metrics: allocated cpu" "$(metric 'kbatch_queue_allocated_milli_cpu\{queue_name="default"\}')" 1000
expect_eq "metrics: allocated GPU" "$(metric 'kbatch_queue_allocated_scalar_resources\{queue_name="default",resource="nvidia.com/gpu"\}')" 1000
jobs_scheduled=$(metric kbatch_e2e_job_scheduling_latency_milliseconds_count)
if [ "${jobs_scheduled:-0}" -ge 1 ]; then pass "metrics: job scheduling latency observed ($jobs_scheduled)"
else fail "metrics: job scheduling latency count [$jobs_scheduled]"; fi

stop_sched s
grep -q "ERROR: AddressSanitizer\|runtime error" "$T/s.log" && fail "sanitizer report in the log"
finish
