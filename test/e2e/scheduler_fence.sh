# Leader fencing: two kbatch-schedulers with a short lease.  The leader is
# paused (SIGSTOP) in the middle of a slow dispatch (20 binds/s), past its
# lease; the standby takes over and binds the rest; the leader is resumed.
# It must send nothing more — no bind, status or event, no session — and
# exit 1; no node is ever over-committed and no pod is bound twice.  Then
# a leader whose renew hangs (the API server paused) stops at its deadline.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8
LE="--leader-elect --leader-elect-lease-duration 2s --leader-elect-renew-deadline 1500ms --leader-elect-retry-period 250ms $LEASE"
start_api --nodes "6:cpu=8,memory=32Gi"
start_sched a $LE --leader-elect-identity sched-a --kube-api-qps 20 --kube-api-burst 1 -v 4
wait_for "a leads" 15 grep -q 'became the leader' "$T/a.log"
start_sched b $LE --leader-elect-identity sched-b
wait_for "default queue" 10 $K get queue default
for g in 1 2 3 4 5 6 7 8 9 10; do gang f$g 4 1; done

# Pause a as soon as its first bind is answered: most of its binds are
# still queued behind its 20/s limit.
end=$((SECONDS + 30))
until grep -q 'bound default/' "$T/a.log" || [ $SECONDS -ge $end ]; do sleep 0.05; done
kill -STOP "${SCHED_PID[a]}"
paused_at=$(wc -c <"$T/a.log")
n=$(( $($K get pods -A --no-headers | wc -l) - $(unbound) ))
echo "bound when a was paused: $n of 40"
if [ "$n" -lt 40 ]; then pass "a paused with binds still to do"; else fail "a finished before the pause"; fi

wait_for "b takes over while a is paused" 15 grep -q 'became the leader' "$T/b.log"
gang late 2 2 # only b knows this one
wait_for "b binds everything" 30 all_bound 42
sleep 0.5

kill -CONT "${SCHED_PID[a]}"
rc=0
end=$((SECONDS + 10))
while kill -0 "${SCHED_PID[a]}" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.1; done
if kill -0 "${SCHED_PID[a]}" 2>/dev/null; then
        fail "a still runs 10s after it resumed"
        kill_sched a
else
        wait "${SCHED_PID[a]}" || rc=$?
        unset "SCHED_PID[a]"
        expect_eq "a exits 1 after losing the lease" "$rc" 1
fi
after=$(tail -c +$((paused_at + 1)) "$T/a.log")
expect_match "a says why" "$after" 'leader election lost: could not renew the lease'
# -v 4 logs every request as it leaves: "] POST /api/v1/.../binding (attempt 1, ...)".
expect_eq "a sends no write but the lease's after it resumes" "$(printf '%s\n' "$after" | grep -E '\] (POST|PUT|PATCH|DELETE) /' | grep -vc coordination.k8s.io)" 0
expect_eq "a runs no session after it resumes" "$(printf '%s\n' "$after" | grep -c '\] session: ')" 0
sleep 0.5
check_no_overcommit
check_bound_once "$T/a.log" "$T/b.log"
expect_eq "lease holder" "$($K get lease kbatch -n kbatch-system -o jsonpath='{.spec.holderIdentity}')" sched-b
stop_sched b

# The deadline is checked while a renew is in flight: the API server is
# paused (SIGSTOP), so c's renew hangs unanswered; c must still stop
# leading at its renew deadline and exit 1, not wait for the request's
# timeout (30 s).
start_sched c $LE --leader-elect-identity sched-c
wait_for "c leads" 15 grep -q 'became the leader' "$T/c.log"
sleep 0.5
kill -STOP "$API_PID"
t0=$(date +%s%N)
end=$((SECONDS + 10))
while kill -0 "${SCHED_PID[c]}" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.05; done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill -CONT "$API_PID"
rc=0
if kill -0 "${SCHED_PID[c]}" 2>/dev/null; then
        fail "c still runs 10 s after the API server stopped answering"
        kill_sched c
else
        wait "${SCHED_PID[c]}" || rc=$?
        unset "SCHED_PID[c]"
        expect_eq "c exits 1 when its renew deadline passes with a renew in flight" "$rc" 1
        echo "c stopped ${ms} ms after the API server did (renew deadline 1.5 s)"
        if [ "$ms" -le 3000 ]; then pass "within the deadline and a retry period"; else fail "took ${ms} ms"; fi
fi
expect_match "c says why" "$(cat "$T/c.log")" 'leader election lost: could not renew the lease for 1.5s'
grep -q "ERROR: AddressSanitizer\|runtime error" "$T/a.log" "$T/b.log" "$T/c.log" && fail "sanitizer report in a log"
finish
