# Two kbatch-schedulers with leader election: only the leader binds; when it
# dies (SIGKILL, so the lease is not released) the other takes over within
# the lease duration; a leader stopped with SIGTERM releases the lease.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8
LE="--leader-elect --leader-elect-lease-duration 4s --leader-elect-renew-deadline 3s --leader-elect-retry-period 500ms $LEASE"
start_api --nodes "4:cpu=8,memory=32Gi"
start_sched a $LE --leader-elect-identity sched-a
wait_for "a leads" 15 grep -q 'became the leader' "$T/a.log"
start_sched b $LE --leader-elect-identity sched-b
sleep 1
gang l1 4 1
wait_for "gang bound by the leader" 20 all_bound 4
expect_eq "only the leader binds" "$(grep -c 'bound default/' "$T/b.log")" 0
expect_eq "lease holder" "$($K get lease kbatch -n kbatch-system -o jsonpath='{.spec.holderIdentity}')" sched-a

kill_sched a
t0=$SECONDS
wait_for "b takes over within the lease duration" 10 grep -q 'became the leader' "$T/b.log"
took=$((SECONDS - t0))
if [ $took -le 6 ]; then pass "takeover took ${took}s (lease 4s)"; else fail "takeover took ${took}s"; fi
gang l2 4 1
wait_for "the new leader binds" 20 all_bound 8
check_no_overcommit
check_bound_once "$T/a.log" "$T/b.log"

# A graceful stop releases the lease: a new candidate leads at once.
stop_sched b
expect_eq "lease released" "$($K get lease kbatch -n kbatch-system -o jsonpath='{.spec.holderIdentity}')" ""
start_sched c $LE --leader-elect-identity sched-c
wait_for "c leads at once after the release" 3 grep -q 'became the leader' "$T/c.log"
stop_sched c
finish
