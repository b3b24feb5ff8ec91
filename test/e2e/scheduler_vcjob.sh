# Volcano Jobs (batch.volcano.sh/v1alpha1) with kbatch-scheduler, through
# kbatch-apiserver and real kubectl:
#   1. kbatch-apiserver's Volcano Job controller makes a Job's PodGroup
#      (<job>-<uid>: minMember, minTaskMember, queue) and, once kbatch has
#      admitted it, the pods <job>-<task>-<index>; kbatch binds the gang,
#      and the Job's status counts its pods to Completed;
#   2. what Volcano's admission webhook refuses is refused, naming the
#      field; deleting a Job takes its PodGroup and pods with it;
#   3. on a real cluster Volcano's own job controller runs beside
#      kbatch-scheduler: its objects, made here by hand as it makes them (a
#      PodGroup first, its pods only once the group is Inqueue), are
#      scheduled as one gang.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=4
start_api --nodes "2:cpu=4,memory=16Gi"
$K apply -f "$ROOT/crds/optional/" >/dev/null || { echo "cannot apply the optional CRDs"; exit 1; }
$K wait --for condition=established --timeout=10s crd/jobs.batch.volcano.sh >/dev/null
start_sched s
wait_for "default queue created" 15 $K get queue default
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: team-a}
spec: {weight: 1}
YAML

# Sections 1 and 2 need kbatch-apiserver's Volcano Job controller and
# webhook checks; on the real bed (no Volcano controller) only section 3,
# which stands in for Volcano's controller by hand, runs.
if [ "$SERVER" = kbatch ]; then
# ---- 1. a Job run by kbatch-apiserver's controller -------------------------------

# master (1 cpu) and three workers (1 cpu, minAvailable 2): minAvailable 3.
$K apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mpi}
spec:
  schedulerName: kbatch
  queue: team-a
  tasks:
  - name: master
    replicas: 1
    template:
      metadata: {annotations: {kbatch.io/sim-duration: 3s}}
      spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]}
  - name: worker
    replicas: 3
    minAvailable: 2
    template:
      metadata: {annotations: {kbatch.io/sim-duration: 3s}}
      spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]}
YAML
uid=$($K get vcjob mpi -o jsonpath='{.metadata.uid}')
pg=mpi-$uid
wait_for "the Job's PodGroup mpi-<uid> is made" 10 $K get podgroups.scheduling.volcano.sh "$pg"
expect_eq "its minMember is the Job's minAvailable (1 + 2)" \
        "$($K get podgroups.scheduling.volcano.sh "$pg" -o jsonpath='{.spec.minMember}')" 3
expect_eq "its minTaskMember per task" \
        "$($K get podgroups.scheduling.volcano.sh "$pg" -o jsonpath='{.spec.minTaskMember.master} {.spec.minTaskMember.worker}')" "1 2"
expect_eq "its queue" "$($K get podgroups.scheduling.volcano.sh "$pg" -o jsonpath='{.spec.queue}')" team-a
expect_eq "its owner is the Job" \
        "$($K get podgroups.scheduling.volcano.sh "$pg" -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" Job/mpi
wait_for "the four pods are bound" 20 all_bound 4
expect_eq "pods named as Volcano names them" \
        "$($K get pods -o jsonpath='{range .items[*]}{.metadata.name} {end}')" \
        "mpi-master-0 mpi-worker-0 mpi-worker-1 mpi-worker-2 "
expect_eq "each names the group and its task" \
        "$($K get pod mpi-worker-1 -o jsonpath='{.metadata.annotations.scheduling\.k8s\.io/group-name} {.metadata.annotations.volcano\.sh/task-spec}')" \
        "$pg worker"
expect_eq "they were bound in one session" \
        "$(grep -c 'bound default/mpi-' "$T/s.log")" 4
wait_for "the Job runs" 10 sh -c "$K get vcjob mpi -o jsonpath='{.status.state.phase}' | grep -qx Running"
wait_for "the Job completes" 20 sh -c "$K get vcjob mpi -o jsonpath='{.status.state.phase}' | grep -qx Completed"
expect_eq "its status counts the pods" \
        "$($K get vcjob mpi -o jsonpath='{.status.succeeded} {.status.minAvailable} {.status.taskStatusCount.worker.phase.Succeeded}')" \
        "4 3 3"
out=$($K get vcjob mpi)
expect_match "kubectl get vcjob shows it" "$out" '^mpi +Completed +3 '

# ---- 2. what the webhook refuses; deleting takes the rest ---------------------------

rc=0
out=$($K apply -f - 2>&1 <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: empty}
spec: {minAvailable: 1, schedulerName: kbatch, tasks: []}
YAML
) || rc=$?
expect_eq "a Job without tasks is refused" "$rc" 1
expect_match "naming the field" "$out" 'The Job "empty" is invalid: spec.tasks: Invalid value: must list at least one task'
rc=0
out=$($K apply -f - 2>&1 <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: over}
spec:
  minAvailable: 5
  tasks: [{name: a, replicas: 2, template: {spec: {containers: [{name: c, image: x}]}}}]
YAML
) || rc=$?
expect_eq "minAvailable over the replicas is refused" "$rc" 1
expect_match "naming it" "$out" "spec.minAvailable: Invalid value: must be <= the tasks' replicas \(2 in all\), got 5"

# A Job in a queue that does not exist: its PodGroup says so; nothing else
# stops.
$K apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: lost}
spec:
  schedulerName: kbatch
  queue: nowhere
  tasks: [{name: t, replicas: 1, template: {spec: {containers: [{name: c, image: x}]}}}]
YAML
lost=lost-$($K get vcjob lost -o jsonpath='{.metadata.uid}')
wait_for "an unknown queue is named on its PodGroup" 10 sh -c \
        "$K get podgroups.scheduling.volcano.sh $lost -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q 'queue nowhere not found'"

$K delete vcjob mpi lost >/dev/null
wait_for "deleting the Jobs takes their pods" 10 sh -c "[ \$($K get pods --no-headers 2>/dev/null | wc -l) = 0 ]"
wait_for "and their PodGroups" 10 sh -c "[ \$($K get podgroups.scheduling.volcano.sh --no-headers 2>/dev/null | wc -l) = 0 ]"

else
        echo "sections 1 and 2 skipped on $SERVER: they need kbatch-apiserver's Volcano Job controller"
fi

# ---- 3. Volcano's job controller beside kbatch-scheduler ----------------------------

# What Volcano's controller makes for a Job "tf" of 1 ps and 2 workers
# (uid 1b2c): the PodGroup first, with minResources, and nothing else
# until the scheduler admits it.  On the real bed the Job must exist, or
# the garbage collector deletes what it owns: it is made (nothing runs
# it) and its uid used.
JOB_UID=1b2c
if [ "$SERVER" = k8s ]; then
        $K apply -f - >/dev/null <<'YAML'
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: tf}
spec:
  schedulerName: kbatch
  queue: team-a
  minAvailable: 3
  tasks:
  - {name: ps, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}
  - {name: worker, replicas: 2, template: {spec: {containers: [{name: c, image: busybox}]}}}
YAML
        JOB_UID=$($K get jobs.batch.volcano.sh tf -o jsonpath='{.metadata.uid}')
fi
$K apply -f - >/dev/null <<YAML
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: tf-1b2c
  ownerReferences: [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: tf, uid: $JOB_UID, controller: true}]
spec:
  minMember: 3
  minTaskMember: {ps: 1, worker: 2}
  minResources: {cpu: "3"}
  queue: team-a
YAML
wait_for "kbatch admits the group while it has no pod yet (Inqueue)" 10 sh -c \
        "$K get podgroups.scheduling.volcano.sh tf-1b2c -o jsonpath='{.status.phase}' | grep -qx Inqueue"
# Then the controller's pods, with its annotations and labels.
for p in ps-0 worker-0 worker-1; do
        task=${p%-*}
        idx=${p#*-}
        $K apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: tf-$p
  ownerReferences: [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: tf, uid: $JOB_UID, controller: true}]
  annotations:
    scheduling.k8s.io/group-name: tf-1b2c
    volcano.sh/task-spec: $task
    volcano.sh/task-index: "$idx"
    volcano.sh/job-name: tf
    volcano.sh/queue-name: team-a
    volcano.sh/job-version: "0"
    volcano.sh/template-key: tf-$task
  labels:
    volcano.sh/job-name: tf
    volcano.sh/task-spec: $task
    volcano.sh/job-namespace: default
    volcano.sh/queue-name: team-a
spec:
  schedulerName: kbatch
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
YAML
done
wait_for "its three pods are bound" 20 all_bound 3
wait_for "and its PodGroup runs" 10 sh -c \
        "$K get podgroups.scheduling.volcano.sh tf-1b2c -o jsonpath='{.status.phase}' | grep -qx Running"
expect_eq "kbatch made no PodGroup of its own for them" \
        "$($K get podgroups.scheduling.volcano.sh --no-headers | wc -l)" 1

stop_sched s
finish
