# SIGTERM under a large backlog: a session's thousands of binds wait
# behind a low client rate limit (50/s) when the leader gets SIGTERM.  It
# must exit 0 within 2 s — the queued writes dropped, not sent — and
# release its lease on the way out, so a standby takes over at once.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=64
NJOBS=150
SIZE=20
start_api --nodes "60:cpu=64,memory=256Gi,pods=110"
for ((g = 0; g < NJOBS; g++)); do
        printf -- '---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g%03d, namespace: default}\nspec: {minMember: %d}\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: g%03d, namespace: default}\nspec:\n  parallelism: %d\n  completions: %d\n  template:\n    metadata:\n      annotations: {scheduling.k8s.io/group-name: g%03d}\n    spec:\n      schedulerName: kbatch\n      restartPolicy: Never\n      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]\n' \
                "$g" "$SIZE" "$g" "$SIZE" "$SIZE" "$g"
done >"$T/jobs.yaml"
$K apply -f "$T/jobs.yaml" >/dev/null
want=$((NJOBS * SIZE))
wait_for "$want pods created" 60 sh -c "[ \$($K get pods --no-headers | wc -l) = $want ]"

LE="--leader-elect $LEASE --leader-elect-identity sched-a"
start_sched a $LE --kube-api-qps 50 --kube-api-burst 1
wait_for "a session dispatches thousands of binds" 30 grep -Eq 'session: [0-9]{4,} binds' "$T/a.log"
sleep 1
expect_eq "lease held" "$($K get lease kbatch -n kbatch-system -o jsonpath='{.spec.holderIdentity}')" sched-a
before=$(( want - $(unbound) ))
t0=$(date +%s%N)
kill -TERM "${SCHED_PID[a]}"
end=$((SECONDS + 20))
while kill -0 "${SCHED_PID[a]}" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.02; done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
rc=0
if kill -0 "${SCHED_PID[a]}" 2>/dev/null; then
        fail "still running 20 s after SIGTERM"
        kill_sched a
else
        wait "${SCHED_PID[a]}" || rc=$?
        unset "SCHED_PID[a]"
fi
echo "exited ${ms} ms after SIGTERM with $before of $want pods bound"
if [ "$ms" -le 2000 ]; then pass "exits within 2 s of SIGTERM (${ms} ms)"; else fail "took ${ms} ms to exit"; fi
expect_eq "exit status 0 (loop closed, no leaks)" "$rc" 0
expect_match "queued writes were dropped" "$(cat "$T/a.log")" 'stopping: [0-9]{3,} queued writes dropped'
expect_eq "lease released" "$($K get lease kbatch -n kbatch-system -o jsonpath='{.spec.holderIdentity}')" ""
if [ $(( want - $(unbound) )) -lt "$want" ]; then pass "the backlog was not sent"; else fail "every bind was sent before the exit"; fi
grep -q "ERROR: AddressSanitizer\|runtime error" "$T/a.log" && fail "sanitizer report in the log"
finish
