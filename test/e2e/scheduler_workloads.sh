# Workloads without hand-written PodGroups, through kbatch-apiserver, its
# Job controller and real kubectl, with kbatch-scheduler making the
# PodGroups itself (pkg/scheduler/workloads.c):
#   1. a batch/v1 Job of parallelism 4 whose template says
#      scheduling.volcano.sh/group-min-member: "4" is one gang of 4;
#   2. the annotation on the Job object counts when the template has none,
#      and a bare pod gets a group of its own;
#   3. a bad annotation ("abc", "-2") is named, object and field, and no
#      group is made;
#   4. pods labelled scheduling.x-k8s.io/pod-group wait for their
#      scheduler-plugins PodGroup, then run as one gang; a change to its
#      minMember reaches the Volcano PodGroup kbatch keeps for it.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=4
start_api --nodes "2:cpu=4,memory=16Gi"
$K apply -f "$ROOT/crds/optional/" >/dev/null || { echo "cannot apply the optional CRDs"; exit 1; }
$K wait --for condition=established --timeout=10s crd/podgroups.scheduling.x-k8s.io >/dev/null
start_sched s
wait_for "default queue created" 15 $K get queue default

PG=podgroups.scheduling.volcano.sh
pg_field() { # NAME JSONPATH
        $K get $PG "$1" -o jsonpath="$2"
}
# Pods of a Job (by the job-name label) bound to a node.
job_bound() { # JOB
        $K get pods -l "job-name=$1" -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .
}
events_about() { # NAME: the events whose object is NAME, reason and message
        $K get events -o jsonpath='{range .items[*]}{.involvedObject.name}|{.reason}|{.message}{"\n"}{end}' |
                awk -F'|' -v n="$1" '$1 == n'
}

# ---- 1. a Job of 4 that is one gang -----------------------------------------------

# The cluster has 2 nodes of 4 cpu.  A pod of another scheduler, bound by
# hand, holds 2 cpu of the first: 6 cpu are free, room for 3 of the Job's
# 2-cpu pods.  Pods of no group would bind 3 of them; as a gang of 4
# (minMember 4, minResources cpu 8) none may bind until the blocker goes,
# and then all 4 bind.
node0=$($K get nodes -o jsonpath='{.items[0].metadata.name}')
$K apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: blocker}
spec:
  nodeName: $node0
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]
YAML
$K apply -f - >/dev/null <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: tune}
spec:
  parallelism: 4
  completions: 4
  template:
    metadata:
      annotations: {scheduling.volcano.sh/group-min-member: "4"}
    spec:
      schedulerName: kbatch
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "2"}}}]
YAML
uid=$($K get job tune -o jsonpath='{.metadata.uid}')
pg=podgroup-$uid
wait_for "kbatch makes the Job's PodGroup podgroup-<job uid>" 10 $K get $PG "$pg"
expect_eq "minMember from the template's annotation" "$(pg_field "$pg" '{.spec.minMember}')" 4
expect_eq "minResources: 4 pods of 2 cpu" "$(pg_field "$pg" '{.spec.minResources.cpu}')" 8
expect_eq "owned by the Job" \
        "$(pg_field "$pg" '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].uid}')" \
        "Job/tune/$uid"
wait_for "the gang says why it waits" 10 sh -c \
        "$K get $PG $pg -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].status}' | grep -qx True"
wait_for "its pods get FailedScheduling" 10 sh -c \
        "$K get events -o jsonpath='{range .items[*]}{.involvedObject.name} {.reason}{\"\\n\"}{end}' | grep -q '^tune-.* FailedScheduling'"
# Ten sessions at 200 ms: long enough for 3 pods to have bound were the
# Job not a gang.
sleep 2
expect_eq "none of the 4 binds while only 3 fit" "$(job_bound tune)" 0
$K delete pod blocker --grace-period=1 >/dev/null
wait_for "once there is room the 4 bind" 20 sh -c "[ \$($K get pods -l job-name=tune -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) = 4 ]"
wait_for "its PodGroup runs" 10 sh -c "$K get $PG $pg -o jsonpath='{.status.phase}' | grep -qx Running"
expect_eq "one PodGroup for the whole Job" "$($K get $PG --no-headers | wc -l)" 1
$K delete job tune >/dev/null
wait_for "deleting the Job takes its PodGroup" 10 sh -c "! $K get $PG $pg"
# ... and its pods, once their grace period (1 s) is over: until then
# they hold their nodes, on either server.
wait_for "... and its pods" 15 sh -c "[ \$($K get pods -l job-name=tune --no-headers 2>/dev/null | wc -l) = 0 ]"

# ---- 2. the annotation on the Job; a bare pod ----------------------------------------

# No annotation on the template: the Job's own group-min-member "2" and
# queue-name "team" are read from the Job (one GET).
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team}
spec: {weight: 1}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: pair
  annotations: {scheduling.volcano.sh/group-min-member: "2"}
spec:
  parallelism: 2
  completions: 2
  template:
    metadata:
      annotations: {scheduling.volcano.sh/queue-name: team}
    spec:
      schedulerName: kbatch
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
pair=podgroup-$($K get job pair -o jsonpath='{.metadata.uid}')
wait_for "the Job's PodGroup is made" 10 $K get $PG "$pair"
expect_eq "minMember from the Job, queue from the template" \
        "$(pg_field "$pair" '{.spec.minMember} {.spec.queue}')" "2 team"
wait_for "both pods bound" 20 sh -c "[ \$($K get pods -l job-name=pair -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) = 2 ]"

# A pod with no controller: a group of one, named by and owned by the pod.
$K apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: solo}
spec:
  schedulerName: kbatch
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
solo=podgroup-$($K get pod solo -o jsonpath='{.metadata.uid}')
wait_for "a bare pod gets podgroup-<pod uid>" 10 $K get $PG "$solo"
expect_eq "minMember 1, owned by the pod" \
        "$(pg_field "$solo" '{.spec.minMember} {.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" \
        "1 Pod/solo"
wait_for "and is bound" 20 sh -c "[ -n \"\$($K get pod solo -o jsonpath='{.spec.nodeName}')\" ]"
# Waiting for the group kbatch itself is making is no scheduling failure:
# no FailedScheduling event, no PodScheduled=False on the pods (two writes
# a pod, at scale; Volcano's scheduler says nothing either).
sleep 1 # the event lane, had anything been written
for p in solo $($K get pods -l job-name=pair -o jsonpath='{.items[*].metadata.name}'); do
        expect_eq "no FailedScheduling on $p while its group is made" \
                "$(events_about "$p" | grep -c '|FailedScheduling|')" 0
done

# ---- 3. bad annotations ----------------------------------------------------------------

# "abc" on the template: each pod is refused by the session, which names
# the pod and the annotation; no group is made.
$K apply -f - >/dev/null <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: words}
spec:
  parallelism: 1
  completions: 1
  template:
    metadata:
      annotations: {scheduling.volcano.sh/group-min-member: abc}
    spec:
      schedulerName: kbatch
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
wait_for "job words has its pod" 10 sh -c "$K get pods -l job-name=words --no-headers | grep -q ."
wpod=$($K get pods -l job-name=words -o jsonpath='{.items[0].metadata.name}')
wait_for "the pod's condition names it and the annotation" 10 sh -c \
        "$K get pod $wpod -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -qF 'pod default/$wpod: annotation scheduling.volcano.sh/group-min-member: must be a whole number >= 0, got \"abc\"'"
# "-2" on the Job: a Warning on the Job (and its pod) naming the Job.
$K apply -f - >/dev/null <<'YAML'
apiVersion: batch/v1
kind: Job
metadata:
  name: neg
  annotations: {scheduling.volcano.sh/group-min-member: "-2"}
spec:
  parallelism: 1
  completions: 1
  template:
    spec:
      schedulerName: kbatch
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
wait_for "the Job gets a Warning naming it and the annotation" 10 sh -c \
        "$K get events -o jsonpath='{range .items[*]}{.involvedObject.kind}/{.involvedObject.name}|{.reason}|{.message}{\"\\n\"}{end}' | grep -qF 'Job/neg|InvalidGroupAnnotation|job default/neg: annotation scheduling.volcano.sh/group-min-member: must be a whole number >= 0, got \"-2\"'"
sleep 1
expect_eq "no PodGroup for either" \
        "$($K get $PG -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].name}{"\n"}{end}' | grep -cE '^(words|neg)$')" 0
expect_eq "and neither pod is bound" \
        "$($K get pods -l 'job-name in (words,neg)' -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" 0
expect_eq "the scheduler is still running" "$(kill -0 "${SCHED_PID[s]}" && echo yes)" yes
$K delete job words neg >/dev/null

# ---- 4. scheduler-plugins' coscheduling ----------------------------------------------------

# Three pods labelled for the group "ray" come first: with no PodGroup of
# that name they wait, and say where the group should come from.
for i in 0 1 2; do
        $K apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: ray-$i
  labels: {scheduling.x-k8s.io/pod-group: ray}
spec:
  schedulerName: kbatch
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
done
wait_for "the labelled pods wait for their PodGroup" 10 sh -c \
        "$K get pod ray-0 -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q 'podgroup default/ray not found: kbatch makes it from the scheduling.x-k8s.io PodGroup'"
expect_eq "none is bound meanwhile" \
        "$($K get pods ray-0 ray-1 ray-2 -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" 0
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: ray}
spec:
  minMember: 3
  minResources: {cpu: "3"}
  scheduleTimeoutSeconds: 300
YAML
wait_for "kbatch makes the Volcano PodGroup ray" 10 $K get $PG ray
expect_eq "with its minMember and minResources" "$(pg_field ray '{.spec.minMember} {.spec.minResources.cpu}')" "3 3"
expect_eq "scheduleTimeoutSeconds as the Inqueue timeout" \
        "$(pg_field ray '{.metadata.annotations.kbatch\.io/inqueue-timeout}')" 300s
expect_eq "owned by the scheduler-plugins PodGroup" \
        "$(pg_field ray '{.metadata.ownerReferences[0].apiVersion}/{.metadata.ownerReferences[0].kind}')" \
        "scheduling.x-k8s.io/v1alpha1/PodGroup"
wait_for "the three pods bound" 20 sh -c "[ \$($K get pods ray-0 ray-1 ray-2 -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) = 3 ]"
$K patch podgroups.scheduling.x-k8s.io ray --type merge -p '{"spec":{"minMember":2,"scheduleTimeoutSeconds":null}}' >/dev/null
wait_for "a new minMember reaches the Volcano PodGroup" 10 sh -c \
        "[ \"\$($K get $PG ray -o jsonpath='{.spec.minMember}/{.metadata.annotations.kbatch\.io/inqueue-timeout}')\" = 2/ ]"
$K delete podgroups.scheduling.x-k8s.io ray >/dev/null
# The real garbage collector watches a CRD installed after its start (as
# this one was, above) only from its next look at discovery, every 30 s.
gc_wait=10
[ "$SERVER" = k8s ] && gc_wait=45
wait_for "deleting it takes the Volcano PodGroup" $gc_wait sh -c "! $K get $PG ray"

stop_sched s
finish
