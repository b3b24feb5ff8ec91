# kbatch-scheduler through API faults: 20% of binds and status writes fail
# (500, then 429 with Retry-After); watch streams dropped every few seconds
# with 410s on reconnect.  Every pod ends bound exactly once, no node is
# over-committed.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8

# Part 1: failing writes.
start_api --nodes "6:cpu=8,memory=32Gi" --fault-write-rate 0.2 --seed 7
PORT_M=$(free_port)
start_sched s --listen-address 127.0.0.1:$PORT_M
for g in 1 2 3 4 5 6; do gang w$g 4 2; done
wait_for "24 pods bound despite 20% failed writes" 60 all_bound 24
wait_for "every podgroup Running" 30 sh -c "[ \$($K get pg -o jsonpath='{range .items[*]}{.status.phase}{\"\\n\"}{end}' | grep -c Running) = 6 ]"
# Six gangs were scheduled once each: a Scheduled status write that failed
# and was written again is not a second scheduling (the latency metric and
# the Scheduled event count what the server took).
expect_eq "six gangs in the job latency metric" \
        "$(curl -s http://127.0.0.1:$PORT_M/metrics | awk '$1 == "kbatch_e2e_job_scheduling_latency_milliseconds_count" {print $2}')" 6
wait_for "one Scheduled event per gang" 15 sh -c "[ \$($K get events --field-selector involvedObject.kind=PodGroup,reason=Scheduled -o jsonpath='{range .items[*]}{.count}{\"\\n\"}{end}' | grep -c '^1\$') = 6 ]"
check_no_overcommit
check_bound_once "$T/s.log"
expect_match "faults were injected" "$(cat "$T/api.log")" 'fault:'
stop_sched s
kill -TERM "$API_PID"; wait "$API_PID"; API_PID=
rm -rf "$KUBECACHEDIR"

# Part 2: 429s with Retry-After.
start_api --nodes "2:cpu=8,memory=32Gi" --fault-write-rate 0.2 --fault-write-code 429 --seed 3
start_sched s2
for g in 1 2; do gang r$g 4 2; done
wait_for "8 pods bound through 429s" 60 all_bound 8
check_no_overcommit
check_bound_once "$T/s2.log"
stop_sched s2
kill -TERM "$API_PID"; wait "$API_PID"; API_PID=
rm -rf "$KUBECACHEDIR"

# Part 3: watches dropped every 2s, half the rewatches answered 410.
start_api --nodes "8:cpu=8,memory=32Gi" --fault-watch-close 2 --fault-watch-410 0.5 --seed 11
start_sched s3
for g in 1 2 3 4 5 6 7 8; do
        gang d$g 4 2
        sleep 0.7
done
wait_for "32 pods bound across dropped watches" 60 all_bound 32
check_no_overcommit
check_bound_once "$T/s3.log"
expect_match "watches were relisted after 410" "$(cat "$T/s3.log")" 'expired, listing again'
stop_sched s3
finish
