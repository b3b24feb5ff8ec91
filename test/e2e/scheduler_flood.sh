#!/usr/bin/env bash
# The scheduler's metrics and health server against hostile clients (issue
# 24): 2,000 idle TCP connections from one address, then 1,100 from a
# hundred (more than select's FD_SETSIZE), while /healthz, /readyz and
# /metrics keep answering within a second; idle connections are closed
# after 10 s; each limit says so in one log line however often it applies.
# The kubelet restarts a scheduler whose liveness probe fails: this is what
# keeps a flood from doing that.
. "$(dirname "$0")/lib/scheduler.sh"

ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge 5000 ] || { echo "open-files limit $(ulimit -Hn) is below 5000"; exit 1; }
HOLD=$ROOT/test/e2e/lib/hold.py
HOLD_PID=
stop_hold() {
        [ -n "$HOLD_PID" ] && kill "$HOLD_PID" 2>/dev/null && wait "$HOLD_PID" 2>/dev/null
        HOLD_PID=
}
trap 'stop_hold; cleanup' EXIT

# hold N SOURCES [LATER]: N idle connections to the metrics port from
# SOURCES (lib/hold.py); sets st to its status line once they are made.
hold() {
        rm -f "$T/hold" "$T/hold.later"
        python3 "$HOLD" "$PORT_M" "$1" "$2" "$T/hold" ${3:+"$3"} </dev/null >/dev/null 2>&1 &
        HOLD_PID=$!
        for _ in $(seq 1 600); do [ -s "$T/hold" ] && break; sleep 0.1; done
        st=$(cat "$T/hold" 2>/dev/null)
}

# answers WHAT: /healthz, /readyz and /metrics each answer 200 within 1 s,
# three times.
answers() {
        local i p code t
        for i in 1 2 3; do
                for p in healthz readyz metrics; do
                        read -r code t < <(curl -s -m 1 -o /dev/null \
                                -w '%{http_code} %{time_total}\n' "http://127.0.0.1:$PORT_M/$p")
                        if [ "$code" != 200 ]; then fail "$1: /$p: HTTP $code after ${t}s"; return; fi
                done
        done
        pass "$1 (last /metrics in ${t}s)"
}

start_api --nodes "2:cpu=4"
PORT_M=$(free_port)
start_sched s --listen-address 127.0.0.1:$PORT_M $LEASE
wait_for "the scheduler is ready" 30 curl -sf "http://127.0.0.1:$PORT_M/readyz"
answers "before the flood"

# One hostile client (a pod, say): 16 connections, the rest closed at once.
hold 2000 127.0.0.2
expect_eq "one client holds at most 16 connections" "$st" "held 16 closed 1984 failed 0"
answers "one client holding 2,000 connections"
lines=$(grep -c 'metrics server: refusing a connection from 127.0.0.2: it has 16 open, the limit per client (16 per client)' "${SCHED_LOG[s]}")
expect_eq "the per-client refusal is logged once (rate-limited)" "$lines" 1
stop_hold

# A hundred clients, 11 each: 1,100 connections held, past select's cap of
# 1,024 descriptors, and the probes still answer; 12 s later the server has
# closed every one of them (idle for 10 s).
hold 1100 127.0.1.1-100 12
expect_eq "a hundred clients hold 1,100 connections" "$st" "held 1100 closed 0 failed 0"
answers "a hundred clients holding 1,100 connections"
for _ in $(seq 1 150); do [ -s "$T/hold.later" ] && break; sleep 0.1; done
expect_eq "idle connections closed after 10 s" "$(cat "$T/hold.later" 2>/dev/null)" "open 0"
lines=$(grep -Ec 'metrics server: closed a connection from 127\.0\.1\.[0-9]+: no request within 10 s' "${SCHED_LOG[s]}")
# (one line per 10 s: the 1,100 close within a second or two of each other)
if [ "$lines" -ge 1 ] && [ "$lines" -le 2 ]; then
        pass "the idle timeout is logged, rate-limited ($lines lines for 1,100 connections)"
else fail "the idle timeout: $lines log lines for 1,100 connections, want 1 or 2"; fi
stop_hold
answers "after the flood"
stop_sched s
finish
