# kbatch-scheduler killed with SIGKILL in the middle of a dispatch (every
# request is slowed down so binds are in flight) and started again: no pod is
# bound twice, no node over-committed, every gang completes.  On the real
# bed nothing slows the server down: the kill comes as soon as the first
# binds leave, and how many were answered by then is printed.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8
if [ "$SERVER" = k8s ]; then
        start_api --nodes "8:cpu=8,memory=32Gi"
        pause=0
else
        start_api --nodes "8:cpu=8,memory=32Gi" --fault-latency-ms 150
        pause=0.1
fi
for g in 1 2 3 4 5 6 7 8; do gang k$g 4 2; done
start_sched s
wait_for "binds under way" 30 grep -q 'session: [0-9]* binds' "$T/s.log"
sleep $pause
kill_sched s
n=$(( $($K get pods -A --no-headers | wc -l) - $(unbound) ))
echo "bound when killed: $n of 32"
start_sched s
wait_for "every pod bound after the restart" 60 all_bound 32
wait_for "every podgroup Running" 30 sh -c "[ \$($K get pg -o jsonpath='{range .items[*]}{.status.phase}{\"\\n\"}{end}' | grep -c Running) = 8 ]"
check_no_overcommit
check_bound_once "$T/s.log"
stop_sched s
finish
