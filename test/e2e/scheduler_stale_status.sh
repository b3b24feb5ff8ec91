# A retried status write never overwrites a newer one.  30% of status
# writes fail (500) and are retried by the client while the next sessions
# already send newer statuses: 100 PodGroups go Pending -> Inqueue ->
# Running with 0, 1, 2 running pods.  Every status patch carries the
# resourceVersion it was computed against, so a late retry is refused
# (409) instead of putting an old status back.  In the end every group
# must say Running with 2 running pods.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=32
NG=100
start_api --nodes "10:cpu=32,memory=128Gi" --fault-write-rate 0.3 --seed 5
start_sched s
wait_for "default queue" 15 $K get queue default
for i in $(seq 1 $NG); do
        gang st$i 2 1
done
wait_for "$((NG * 2)) pods bound despite 30% failed writes" 90 all_bound $((NG * 2))
phases() {
        $K get pg -o jsonpath='{range .items[*]}{.metadata.name} {.status.phase} {.status.running}{"\n"}{end}'
}
wait_for "every podgroup says Running with 2 running" 40 sh -c "[ \$($K get pg -o jsonpath='{range .items[*]}{.status.phase}/{.status.running}{\"\\n\"}{end}' | grep -cx 'Running/2') = $NG ]"
stale=$(phases | grep -v ' Running 2$')
expect_eq "no podgroup left with a stale status" "$stale" ""
expect_match "status writes failed and were retried" "$(cat "$T/api.log")" 'fault: failing status write'
check_no_overcommit
stop_sched s
grep -q "ERROR: AddressSanitizer\|runtime error" "$T/s.log" && fail "sanitizer report in the log"
finish
