# The simulation: a Job's pods appear, run once bound, and complete; failed
# pods are replaced up to backoffLimit; a graceful delete takes its period.
. "$(dirname "$0")/lib/apiserver.sh"

start_server --nodes "2:cpu=4,memory=8Gi,pods=10"

cat >"$T/job.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata:
  name: quick
spec:
  parallelism: 2
  completions: 3
  template:
    metadata:
      annotations:
        scheduling.k8s.io/group-name: quick
        kbatch.io/sim-duration: 1s
    spec:
      schedulerName: kbatch
      restartPolicy: Never
      containers:
      - name: w
        image: busybox
YAML
$K apply -f "$T/job.yaml" >/dev/null
wait_for "parallelism 2: two pods" 10 sh -c "[ \$($K get pods -l job-name=quick -o name | wc -l) = 2 ]"
out=$($K get jobs quick -o jsonpath='{.spec.selector.matchLabels.batch\.kubernetes\.io/controller-uid}={.metadata.uid}')
expect_match "selector is the job uid" "$out" '^([0-9a-f-]{36})=\1$'
# Bind whatever is pending until the job completes, as a scheduler would.
end=$((SECONDS + 30))
while [ $SECONDS -lt $end ]; do
        for p in $($K get pods -l job-name=quick --field-selector=status.phase=Pending -o jsonpath='{.items[*].metadata.name}'); do
                bind_pod default "$p" node-2 >/dev/null
        done
        $K get job quick -o jsonpath='{.status.conditions[*].type}' | grep -q Complete && break
        sleep 0.3
done
out=$($K get job quick)
expect_match "job complete 3/3" "$out" '^quick +Complete +3/3 +[0-9]+s +[0-9]+s$'
out=$($K wait --for=condition=complete job/quick --timeout=5s)
expect_eq "kubectl wait complete" "$out" "job.batch/quick condition met"
out=$($K get pods -l job-name=quick)
expect_eq "three Completed pods" "$(echo "$out" | grep -Ec ' 0/1 +Completed ')" 3
out=$($K describe job quick)
expect_match "describe job events" "$out" 'SuccessfulCreate'

# backoffLimit: pods exit 1; the job replaces them once, then fails
sed -e 's/name: quick/name: flaky/' -e 's/completions: 3/completions: 1/' -e 's/parallelism: 2/parallelism: 1/' \
    -e 's|kbatch.io/sim-duration: 1s|kbatch.io/sim-duration: 0.2s\n        kbatch.io/sim-exit-code: "1"|' \
    -e 's/restartPolicy: Never/restartPolicy: Never\n  backoffLimit: 1/' "$T/job.yaml" >"$T/flaky.yaml"
sed -i 's/^  backoffLimit: 1$//' "$T/flaky.yaml"
sed -i 's/^  completions: 1$/  completions: 1\n  backoffLimit: 1/' "$T/flaky.yaml"
$K apply -f "$T/flaky.yaml" >/dev/null
end=$((SECONDS + 30))
while [ $SECONDS -lt $end ]; do
        for p in $($K get pods -l job-name=flaky --field-selector=status.phase=Pending -o jsonpath='{.items[*].metadata.name}'); do
                bind_pod default "$p" node-1 >/dev/null
        done
        $K get job flaky -o jsonpath='{.status.conditions[*].type}' | grep -q Failed && break
        sleep 0.3
done
out=$($K get job flaky -o jsonpath='{.status.failed} {.status.conditions[?(@.type=="Failed")].reason}')
expect_eq "failed after backoffLimit+1 pods" "$out" "2 BackoffLimitExceeded"

# graceful delete: a running pod with a 2s grace period lingers as Terminating
cat >"$T/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: slow
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: c
    image: busybox
YAML
$K apply -f "$T/pod.yaml" >/dev/null
bind_pod default slow node-1 >/dev/null
wait_for "slow running" 10 sh -c "$K get pod slow | grep -q Running"
s=$SECONDS
$K delete pod slow --wait=false >/dev/null
out=$($K get pod slow)
expect_match "terminating" "$out" '^slow +1/1 +Terminating '
$K wait --for=delete pod/slow --timeout=10s >/dev/null
expect_eq "gone after the grace period" "$(( SECONDS - s >= 1 && SECONDS - s <= 6 ))" 1

# A runtime Go cannot parse ("10" has no unit, "5x" an unknown one) is
# accepted with a Warning naming the annotation (the pod then runs until
# deleted); a valid one gets none.
for bad in 10 5x -3s; do
        out=$(printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: dur%s\n  annotations: {kbatch.io/sim-duration: "%s"}\nspec:\n  containers: [{name: c, image: x}]\n' "$(echo "$bad" | tr -cd 'a-z0-9')" "$bad" | $K apply -f - 2>&1)
        expect_match "sim-duration $bad: a warning naming the annotation" "$out" 'Warning: metadata.annotations\[kbatch.io/sim-duration\]: .*will not end this pod'
done
out=$(printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: durok\n  annotations: {kbatch.io/sim-duration: "1m30s"}\nspec:\n  containers: [{name: c, image: x}]\n' | $K apply -f - 2>&1)
expect_eq "sim-duration 1m30s: no warning" "$out" "pod/durok created"

stop_server

# each piece can be turned off
start_server --nodes "1:cpu=4,memory=8Gi" --no-kubelet --no-job-controller
$K apply -f "$T/job.yaml" >/dev/null
$K apply -f "$T/pod.yaml" >/dev/null
bind_pod default slow node-1 >/dev/null
sleep 1
out=$($K get pods -o name)
expect_eq "no job controller: no pods but ours" "$out" "pod/slow"
out=$($K get pod slow -o jsonpath='{.status.phase}')
expect_eq "no kubelet: stays Pending" "$out" "Pending"
stop_server
finish
