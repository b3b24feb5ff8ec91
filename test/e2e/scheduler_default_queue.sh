# The default-queue race: on a fresh cluster (no Queue at all) with gangs
# already waiting, the scheduler creates the default Queue and runs its
# first session only once its own watch has it — so no group is ever
# reported Unschedulable for want of its queue, no pod gets a
# FailedScheduling event, and every gang binds in one go.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8
start_api --nodes "2:cpu=8,memory=32Gi"
expect_eq "no queue before the scheduler starts" "$($K get queues -o name | wc -l)" 0
for g in 1 2 3; do gang dq$g 2 2; done
# A long period: the first session must start when the lists are synced
# and the queue is seen, not on a tick.
start_sched s -v 2 --schedule-period 5s
wait_for "every pod bound" 30 all_bound 6
wait_for "every podgroup Running" 20 sh -c "[ \$($K get pg -o jsonpath='{range .items[*]}{.status.phase}{\"\\n\"}{end}' | grep -c Running) = 3 ]"
log=$(cat "$T/s.log")
# The first session waits for the queue to be in the cache.  (Not for the
# create's answer, whose log line the queue's watch event can beat: under
# load, "created" came after the first session.)
created=$(printf '%s\n' "$log" | grep -n 'default queue default: created' | head -1 | cut -d: -f1)
cached=$(printf '%s\n' "$log" | grep -n 'default queue default is in the cache' | head -1 | cut -d: -f1)
first=$(printf '%s\n' "$log" | grep -n '\] session: ' | head -1 | cut -d: -f1)
if [ -n "$created" ] && [ -n "$cached" ] && [ -n "$first" ] && [ "$cached" -lt "$first" ]; then
        pass "the default queue was created, and in the cache before the first session"
else
        fail "default queue created at log line [$created], in the cache at [$cached], first session at [$first]"
fi
# klog time of day in seconds
secs() { awk '{split($2, t, ":"); printf "%.6f\n", t[1] * 3600 + t[2] * 60 + t[3]}'; }
synced_at=$(printf '%s\n' "$log" | grep -E 'reflector .*: synced|default queue default is in the cache' | tail -1 | secs)
first_at=$(printf '%s\n' "$log" | grep -m1 '\] first session: ' | secs)
gap=$(echo "$first_at - $synced_at" | bc)
echo "first session ${gap}s after the last list synced (period 5s)"
if [ -n "$first_at" ] && [ "$(echo "$gap < 0.5" | bc)" = 1 ]; then pass "the first session starts as soon as everything is synced"
else fail "first session ${gap}s after the lists synced"; fi
expect_eq "every gang bound in the first session" "$(printf '%s\n' "$log" | grep -m1 '\] session: ' | grep -o 'session: [0-9]* binds')" "session: 6 binds"
expect_eq "no Unschedulable condition on any group" "$($K get pg -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Unschedulable")].type}{"\n"}{end}' | grep -c Unschedulable)" 0
expect_eq "no FailedScheduling event" "$($K get events --field-selector reason=FailedScheduling -o name | wc -l)" 0
expect_eq "no Unschedulable event" "$($K get events --field-selector reason=Unschedulable -o name | wc -l)" 0
stop_sched s
grep -q "ERROR: AddressSanitizer\|runtime error" "$T/s.log" && fail "sanitizer report in the log"
finish
