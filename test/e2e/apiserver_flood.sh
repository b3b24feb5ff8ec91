#!/usr/bin/env bash
# kbatch-apiserver against hostile clients (issue 24): 2,000 idle TCP
# connections, from one address and from a hundred, while /healthz and
# kubectl keep answering within a second; the header and request timeouts
# (a watch that streams is not cut by them); the cap on watches (429 as
# kube-apiserver answers over its limits); and a query parameter repeated
# 10,000 times (kube-apiserver answers it as if given once).
. "$(dirname "$0")/lib/apiserver.sh"

# Room for 2,000 connections on each side; the server inherits it.
ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -ge 5000 ] || { echo "open-files limit $(ulimit -Hn) is below 5000"; exit 1; }
HOLD=$(dirname "$0")/lib/hold.py
HOLD_PID=

stop_hold() {
        [ -n "$HOLD_PID" ] && kill "$HOLD_PID" 2>/dev/null && wait "$HOLD_PID" 2>/dev/null
        HOLD_PID=
}
trap 'stop_hold; cleanup' EXIT

# hold N SOURCES [LATER]: N idle connections from SOURCES (hold.py); sets
# st to its status line once the connections are made.
hold() {
        rm -f "$T/hold" "$T/hold.later"
        python3 "$HOLD" "$P" "$1" "$2" "$T/hold" ${3:+"$3"} </dev/null >/dev/null 2>&1 &
        HOLD_PID=$!
        for _ in $(seq 1 600); do [ -s "$T/hold" ] && break; sleep 0.1; done
        st=$(cat "$T/hold" 2>/dev/null)
}

# answers WHAT: /healthz and kubectl get nodes each answer within 1 s
# (kubectl's own start counts against it), three times.
answers() {
        local i code t
        for i in 1 2 3; do
                read -r code t < <(curl -s -m 1 -o /dev/null -w '%{http_code} %{time_total}\n' \
                        "$URL/healthz")
                if [ "$code" != 200 ]; then fail "$1: /healthz: HTTP $code after ${t}s"; return; fi
                local t0=$EPOCHREALTIME
                if ! timeout 1 $K get nodes --request-timeout=1s >/dev/null 2>&1; then
                        fail "$1: kubectl get nodes did not answer within 1 s"; return
                fi
                t=$(echo "$EPOCHREALTIME - $t0" | bc)
        done
        pass "$1 (last kubectl ${t}s)"
}

start_server --nodes 2:cpu=4
answers "before the flood"

# One hostile client: it keeps 256 (the per-client limit); the rest are
# closed at once, and one line says so however many are refused.
hold 2000 127.0.0.2
expect_eq "one client holds at most 256 connections" "$st" "held 256 closed 1744 failed 0"
answers "one client holding 2,000 connections"
lines=$(grep -c 'refusing a connection from 127.0.0.2: it has 256 open, the limit per client (--max-connections-per-client)' "$T/server.log")
expect_eq "the per-client refusal is logged once (rate-limited)" "$lines" 1
stop_hold

# A hundred clients, 20 each: all 2,000 are held (more than select's
# FD_SETSIZE, and under the total of 2,048), and the server still answers.
hold 2000 127.0.1.1-100
expect_eq "a hundred clients hold 2,000 connections" "$st" "held 2000 closed 0 failed 0"
answers "a hundred clients holding 2,000 connections"
stop_hold
stop_server

# The total: 40 connections at most, 10 per client.
start_server --max-connections 40 --max-connections-per-client 10
hold 60 127.0.2.1-6
expect_eq "the total limit holds" "$st" "held 40 closed 20 failed 0"
expect_match "the total limit is logged" "$(cat "$T/server.log")" \
        'refusing a connection from 127\.0\.2\.[0-9]+: 40 connections are open, the limit in total \(--max-connections\)'
stop_hold
stop_server

# Timeouts, and the cap on watches.
start_server --request-header-timeout 2 --request-timeout 3 --max-watches 2
hold 5 127.0.3.1 4
expect_eq "five idle connections held" "$st" "held 5 closed 0 failed 0"
for _ in $(seq 1 60); do [ -s "$T/hold.later" ] && break; sleep 0.1; done
expect_eq "idle connections closed after the header timeout" "$(cat "$T/hold.later")" "open 0"
expect_match "the header timeout is logged" "$(cat "$T/server.log")" \
        'closed a connection from 127\.0\.3\.1: no request within 2 s \(--request-header-timeout\)'
stop_hold

# A request whose body stalls: closed after the request timeout.
out=$(python3 - "$P" <<'EOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          b"Content-Length: 100\r\n\r\n{\"kind\":")
t0 = time.time()
s.settimeout(10)
try:
    d = s.recv(100)
except OSError:
    d = b""
print("closed %s after %.0f s" % ("empty" if not d else "with data", time.time() - t0))
EOF
)
expect_eq "a stalled body is closed after the request timeout" "$out" "closed empty after 3 s"
expect_match "the request timeout is logged" "$(cat "$T/server.log")" \
        'closed a connection from 127\.0\.0\.1: idle for 3 s within a request \(--request-timeout\)'

# Two watches stream past both timeouts; a third is refused with 429.
for w in 1 2; do
        curl -s -N "$URL/api/v1/namespaces/default/pods?watch=1" >"$T/watch$w" &
        eval "W$w=\$!"
done
sleep 1
out=$(curl -s -D "$T/h3" "$URL/api/v1/namespaces/default/pods?watch=1" -w '\n%{http_code}')
expect_eq "a third watch: 429 and kube-apiserver's text" "$out" \
        "$(printf 'Too many requests, please try again later.\n\n429')"
expect_match "a third watch: Retry-After: 1" "$(tr -d '\r' <"$T/h3")" '^Retry-After: 1$'
expect_match "the watch cap is logged" "$(cat "$T/server.log")" \
        'refusing a watch from 127\.0\.0\.1 with 429: 2 watches are streaming, the limit \(--max-watches\)'
sleep 4
api POST /api/v1/namespaces/default/pods \
        '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"late"},"spec":{"containers":[{"name":"c","image":"i"}]}}' >/dev/null
sleep 1
for w in 1 2; do
        expect_match "watch $w still streams after 5 s (no timeout)" "$(cat "$T/watch$w")" '"name":"late"'
done
kill "$W1"; wait "$W1" 2>/dev/null
sleep 1.5
out=$(curl -s -m 2 -o /dev/null -w '%{http_code}' "$URL/api/v1/namespaces/default/pods?watch=1")
expect_eq "a watch ended makes room for another" "$out" 200
kill "$W2"; wait "$W2" 2>/dev/null
stop_server

# A query parameter repeated 10,000 times (80 kB of URL): kube-apiserver
# (v1.36, Go's net/http allows 1 MiB of request line and headers) answers
# the list, reading the first value.  Checked on the real bed with
# ?limit=1 x 10000.
start_server
printf 'url = "%s/api/v1/namespaces/default/pods?%s"\n' "$URL" \
        "$(python3 -c "print('&'.join(['limit=1'] * 10000))")" >"$T/curlrc"
out=$(curl -s -K "$T/curlrc" -w ' %{http_code}')
expect_match "10,000 repeated parameters: 200 and the list" "$out" '^\{"kind":"PodList".* 200$'
answers "after the long URL"
stop_server
finish apiserver_flood
