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
#      Warning event on the group;
#   5. a Job can be asked about: `kubectl kbatch why job/NAME`, a bare Job
#      name and `why vcjob/NAME` name the PodGroup its pods join; the group
#      kbatch makes for a Job carries the Job's uid as a label and the Job
#      an event naming the group; a Job whose pods ask for another
#      scheduler is told so;
#   6. the pending pods of a gang that is Running (4 of 6 placed, its queue
#      at its capability) get PodScheduled=False saying why, and `why` on
#      one of them says it waits;
#   7. a gang whose pods ask for another scheduler (schedulerName: volcano,
#      the likeliest slip when switching) is not admitted, and its group
#      says so with the count and the names kbatch serves;
#   8. `kubectl apply -f examples/` after the scheduler made the default
#      queue prints no warning;
#   9. a scheduler-plugins PodGroup shows the phase and running count of
#      its Volcano mirror (kubectl's PHASE and RUNNING columns);
#  10. a PodGroup naming no PriorityClass gets a Warning event saying so;
#  11. (kbatch-apiserver) started before its CRDs are installed, the
#      scheduler says once which CRD is missing and what to apply, then
#      stays quiet;
#  12. a Volcano Job still saying schedulerName: volcano: its PodGroup,
#      which Volcano's controller makes before any pod, is not admitted
#      (Pending, its queue's INQUEUE 0) and says so naming the Job; `why
#      vcjob/NAME` and `why pg/NAME` agree; patched to kbatch, it runs.
#      kbatch-apiserver's Volcano Job controller makes the group and the
#      pods; on the real bed, which has none, they are made by hand as
#      Volcano's controller makes them.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8
start_api --nodes "4:cpu=8,memory=32Gi"
$K apply -f "$ROOT/crds/optional/" >/dev/null || { echo "cannot apply the optional CRDs"; exit 1; }
$K wait --for condition=established --timeout=10s crd/podgroups.scheduling.x-k8s.io \
        crd/jobs.batch.volcano.sh >/dev/null
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

# The waiting clock: lastTransitionTime moves only when the status flips,
# not when the numbers in the message do (third takes 1 cpu more of small's
# room: second's message changes, its clock does not).
ltt() { $K get podgroup "$1" -o jsonpath='{.status.conditions[?(@.type=="Unschedulable")].lastTransitionTime}'; }
t0=$(ltt second)
m0=$(message second)
sleep 1.2
pg third small 1 1
changed() { [ "$(message second)" != "$m0" ]; }
wait_for "second's message changes with the queue's numbers" 15 changed
expect_eq "its lastTransitionTime does not move" "$(ltt second)" "$t0"

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

# ---- 5. asking about a Job ---------------------------------------------------------
export PATH=$BIN:$PATH
export KUBECONFIG=$KC
$K apply -f - >/dev/null <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: tune}
spec:
  parallelism: 2
  completions: 2
  template:
    metadata: {annotations: {scheduling.volcano.sh/group-min-member: "2", kbatch.io/sim-duration: 600s}}
    spec:
      schedulerName: kbatch
      restartPolicy: Never
      containers: [{name: c, image: busybox, command: [sleep, "600"], resources: {requests: {cpu: "1"}}}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: elsewhere}
spec:
  template:
    spec:
      schedulerName: volcano
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
uid=$($K get job tune -o jsonpath='{.metadata.uid}')
wait_for "kbatch makes podgroup-<uid> for Job tune" 20 $K get podgroup "podgroup-$uid"
expect_eq "the group is labelled with the Job's uid" \
        "$($K get podgroup -l "kbatch.io/owner-uid=$uid" -o jsonpath='{.items[*].metadata.name}')" "podgroup-$uid"
ev_has() { $K get events --field-selector "involvedObject.name=tune,reason=PodGroupCreated" -o jsonpath='{.items[*].message}' | grep -q "podgroup-$uid"; }
wait_for "the Job gets an event naming its PodGroup" 15 ev_has
for arg in job/tune tune jobs.batch/tune; do
        out=$(kubectl kbatch why "$arg" 2>&1)
        expect_match "why $arg names the Job" "$out" '^Job: +default/tune'
        expect_match "why $arg reports its PodGroup" "$out" "^PodGroup: +default/podgroup-$uid"
done
out=$(kubectl kbatch why job/elsewhere 2>&1)
expect_match "why job/elsewhere: no PodGroup yet" "$out" '^PodGroup: +none yet'
expect_match "why job/elsewhere names the scheduler its pods ask for" "$out" \
        'its pods ask for scheduler volcano; kbatch serves kbatch'
out=$(kubectl kbatch why job/nosuch 2>&1)
expect_match "a missing Job is NotFound, naming the kind" "$out" 'no job named "nosuch"'

if [ "$SERVER" = kbatch ]; then
        $K apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: test-job}
spec:
  schedulerName: kbatch
  minAvailable: 1
  tasks:
  - name: t
    replicas: 1
    template:
      metadata: {annotations: {kbatch.io/sim-duration: 600s}}
      spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]}
YAML
        vuid=$($K get vcjob test-job -o jsonpath='{.metadata.uid}')
        wait_for "the vcjob's PodGroup is made" 15 $K get podgroup "test-job-$vuid"
        out=$(kubectl kbatch why vcjob/test-job 2>&1)
        expect_match "why vcjob/test-job names the Volcano Job" "$out" '^vcjob: +default/test-job'
        expect_match "why vcjob/test-job reports its PodGroup" "$out" "^PodGroup: +default/test-job-$vuid"
fi

# ---- 6. pending pods of a Running gang ----------------------------------------------
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: cap4}
spec: {weight: 1, capability: {cpu: "4"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: six}
spec: {minMember: 4, queue: cap4}
YAML
for i in 1 2 3 4 5 6; do
        create /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"six-$i\",\"annotations\":{\"scheduling.k8s.io/group-name\":\"six\"}},\"spec\":{\"schedulerName\":\"kbatch\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"
done
wait_for "six is Running" 20 sh -c "[ \"\$($K get podgroup six -o jsonpath='{.status.phase}')\" = Running ]"
six_pending() { $K get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}' | awk '$1 ~ /^six-/ && NF == 1 {print $1}'; }
pend=$(six_pending | head -1)
expect_eq "two of its six pods stay pending (the queue's capability)" "$(six_pending | wc -l)" 2
cond_msg() { $K get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].status} {.status.conditions[?(@.type=="PodScheduled")].message}'; }
has_cond() { cond_msg "$1" | grep -q '^False its gang is scheduled'; }
wait_for "a pending pod of the Running gang gets PodScheduled=False" 15 has_cond "$pend"
expect_match "saying why it waits" "$(cond_msg "$pend")" \
        '^False its gang is scheduled \(minMember 4 met\); this pod waits: queue cap4'
out=$(kubectl kbatch why "pod/$pend" 2>&1)
expect_match "why on it says it waits, not Scheduled: yes" "$out" '^Scheduled: +no, waiting for'

# ---- 7. pods that ask for another scheduler -----------------------------------------
for i in 1 2 3; do
        create /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"vc-$i\",\"annotations\":{\"scheduling.k8s.io/group-name\":\"vc\"}},\"spec\":{\"schedulerName\":\"volcano\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"
done
# The pods first, so that no session sees the group without them.
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: vc}
spec: {minMember: 3, minResources: {cpu: "3"}}
YAML
wait_for "vc is told its pods ask for another scheduler" 15 has_reason vc OtherScheduler
expect_match "with the count and the names kbatch serves" "$(message vc)" \
        '^3 pods ask for scheduler volcano; kbatch serves kbatch'
expect_eq "it is not admitted" "$($K get podgroup vc -o jsonpath='{.status.phase}')" Pending
out=$(kubectl kbatch why vc-1 2>&1)
expect_match "why on one of its pods says so" "$out" '^Blocker: +3 pods ask for scheduler volcano'

# ---- 8. the README's examples, applied after the scheduler started -----------------------
out=$($K apply -f "$ROOT/examples/" 2>&1 >/dev/null)
expect_eq "kubectl apply -f examples/ warns of nothing" "$out" ""

# ---- 9. scheduler-plugins' PodGroups show PHASE and RUNNING ----------------------------
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: ray}
spec: {minMember: 2}
YAML
for i in 1 2; do
        create /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"ray-$i\",\"labels\":{\"scheduling.x-k8s.io/pod-group\":\"ray\"}},\"spec\":{\"schedulerName\":\"kbatch\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}"
done
xs() { $K get podgroups.scheduling.x-k8s.io ray -o jsonpath='{.status.phase} {.status.running}'; }
wait_for "the scheduler-plugins PodGroup shows Running 2" 30 sh -c "$(declare -f xs); K='$K'; [ \"\$(xs)\" = 'Running 2' ]"
expect_match "kubectl shows its PHASE and RUNNING" "$($K get podgroups.scheduling.x-k8s.io ray)" \
        '^ray +Running +2 +2 '

# ---- 10. an unknown priorityClassName ----------------------------------------------------
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: prio}
spec: {minMember: 1, priorityClassName: no-such-class}
YAML
prio_ev() { $K get events --field-selector involvedObject.name=prio,reason=UnknownPriorityClass -o jsonpath='{.items[*].message}'; }
wait_for "the group is told its PriorityClass does not exist" 15 sh -c "$(declare -f prio_ev); K='$K'; prio_ev | grep -q 'no PriorityClass named no-such-class'"

# ---- 12. a Volcano Job that still asks for volcano ------------------------------------
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: vq}
spec: {weight: 1}
---
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: slip}
spec:
  schedulerName: volcano
  queue: vq
  minAvailable: 2
  tasks:
  - name: t
    replicas: 2
    template:
      metadata: {annotations: {kbatch.io/sim-duration: 600s}}
      spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]}
YAML
suid=$($K get vcjob slip -o jsonpath='{.metadata.uid}')
spg=slip-$suid
if [ "$SERVER" = k8s ]; then
        # No Volcano controller here: before its group exists, why
        # answers for the Job in the scheduler's words.
        out=$(kubectl kbatch why vcjob/slip 2>&1)
        expect_match "why vcjob/slip before its group: no PodGroup yet" "$out" '^PodGroup: +none yet'
        expect_match "and the Job's scheduler, in the group's words" "$out" \
                "^Blocker: +Volcano Job default/slip asks for scheduler volcano; kbatch serves kbatch \\(set the Volcano Job's spec.schedulerName to it\\)"
        # What Volcano's job controller makes first: the group, owned by
        # the Job; pods only once it is admitted.
        $K apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: $spg
  ownerReferences: [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: slip, uid: $suid, controller: true, blockOwnerDeletion: true}]
spec: {minMember: 2, queue: vq, minResources: {cpu: "2"}}
YAML
fi
wait_for "slip's PodGroup is told its Job asks for another scheduler" 15 has_reason "$spg" OtherScheduler
expect_eq "naming the Job, the scheduler and the field to set" "$(message "$spg")" \
        "Volcano Job default/slip asks for scheduler volcano; kbatch serves kbatch (set the Volcano Job's spec.schedulerName to it)"
expect_eq "it is not admitted" "$($K get podgroup "$spg" -o jsonpath='{.status.phase}')" Pending
inq=$($K get queue vq -o jsonpath='{.status.inqueue}')
expect_eq "its queue holds nothing for it (INQUEUE 0)" "${inq:-0}" 0
expect_eq "no pod of it exists" "$($K get pods -o name | grep -c '^pod/slip-')" 0
slip_ev() { $K get events --field-selector "involvedObject.name=$spg,reason=Unschedulable" -o jsonpath='{.items[*].message}'; }
wait_for "an event on the group says so" 15 sh -c "$(declare -f slip_ev); K='$K'; spg='$spg'; slip_ev | grep -q 'Volcano Job default/slip asks for scheduler volcano'"
for arg in vcjob/slip "pg/$spg"; do
        out=$(kubectl kbatch why "$arg" 2>&1)
        expect_match "why $arg says the Job asks for volcano" "$out" \
                'Volcano Job default/slip asks for scheduler volcano; kbatch serves kbatch'
done
$K patch vcjob slip --type merge -p '{"spec":{"schedulerName":"kbatch"}}' >/dev/null
admitted() { p=$($K get podgroup "$spg" -o jsonpath='{.status.phase}'); [ "$p" = Inqueue ] || [ "$p" = Running ]; }
wait_for "patched to kbatch, it is admitted" 15 admitted
if [ "$SERVER" = k8s ]; then
        for i in 0 1; do
                create /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"slip-t-$i\",\"annotations\":{\"scheduling.k8s.io/group-name\":\"$spg\"}},\"spec\":{\"schedulerName\":\"kbatch\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}"
        done
fi
wait_for "and its pods run" 20 sh -c "[ \"\$($K get podgroup $spg -o jsonpath='{.status.running}')\" = 2 ]"

stop_sched s

# ---- 11. a missing CRD -----------------------------------------------------------------------
if [ "$SERVER" = kbatch ]; then
        "$BIN/kbatch-apiserver" --listen 127.0.0.1:0 --write-kubeconfig "$T/kc2" \
                --port-file "$T/port2" >"$T/api2.log" 2>&1 &
        API2=$!
        for _ in $(seq 1 100); do [ -s "$T/port2" ] && [ -s "$T/kc2" ] && break; sleep 0.1; done
        "$BIN/kbatch-scheduler" --kubeconfig "$T/kc2" --schedule-period 200ms \
                --listen-address 127.0.0.1:$(free_port) >"$T/s2.log" 2>&1 &
        SCHED_PID[s2]=$!
        sleep 4
        expect_eq "one line for the missing Queue CRD in 4 s" "$(grep -c 'reflector queues' "$T/s2.log")" 1
        expect_match "naming the CRD and what to apply" "$(cat "$T/s2.log")" \
                'the CRD queues.scheduling.volcano.sh is not installed \(kubectl apply -f crds/'
        kill -TERM "${SCHED_PID[s2]}"; wait "${SCHED_PID[s2]}"; unset "SCHED_PID[s2]"
        kill -TERM "$API2"; wait "$API2"
fi
finish
