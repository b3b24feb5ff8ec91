# Helpers for the kbatch-apiserver e2e tests (sourced, not run).
#
#   start_server [FLAGS...]   starts $BIN/kbatch-apiserver on a free port with
#                             its own kubeconfig and kubectl cache; sets
#                             P (port), URL, KC (kubeconfig), K (kubectl command)
#   stop_server               SIGTERM, and fails when the exit is not clean
#                             (under ASan a leak makes it non-zero)
# The EXIT trap always stops the server and removes the temp directory.

set -u
BIN=${BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/bin}
T=$(mktemp -d)
SERVER_PID=
FAILS=0
export KUBECACHEDIR=$T/kubecache

cleanup() {
        if [ -n "$SERVER_PID" ]; then
                kill -TERM "$SERVER_PID" 2>/dev/null
                wait "$SERVER_PID" 2>/dev/null
        fi
        rm -rf "$T"
}
trap cleanup EXIT

start_server() {
        rm -f "$T/kubeconfig" "$T/port"
        "$BIN/kbatch-apiserver" --listen 127.0.0.1:0 --write-kubeconfig "$T/kubeconfig" \
                --port-file "$T/port" "$@" >"$T/server.log" 2>&1 &
        SERVER_PID=$!
        for _ in $(seq 1 100); do
                [ -s "$T/port" ] && [ -s "$T/kubeconfig" ] && break
                sleep 0.1
        done
        if [ ! -s "$T/port" ]; then
                echo "server did not start:"; cat "$T/server.log"; exit 1
        fi
        P=$(cat "$T/port")
        URL=http://127.0.0.1:$P
        KC=$T/kubeconfig
        K="kubectl --kubeconfig $KC"
}

stop_server() {
        kill -TERM "$SERVER_PID"
        local rc=0
        wait "$SERVER_PID" || rc=$?
        SERVER_PID=
        if [ $rc != 0 ]; then
                echo "FAIL: server exited with $rc"; tail -40 "$T/server.log"; FAILS=$((FAILS + 1))
        fi
}

fail() {
        echo "FAIL: $*"
        FAILS=$((FAILS + 1))
}

# expect_eq WHAT GOT WANT
expect_eq() {
        if [ "$2" != "$3" ]; then
                fail "$1: got [$2], want [$3]"
        else
                echo "ok: $1"
        fi
}

# expect_match WHAT TEXT EXTENDED-REGEX  (some line of TEXT matches)
expect_match() {
        if printf '%s\n' "$2" | grep -Eq -- "$3"; then
                echo "ok: $1"
        else
                fail "$1: no line matches /$3/ in:"; printf '%s\n' "$2" | head -30
        fi
}

expect_no_match() {
        if printf '%s\n' "$2" | grep -Eq -- "$3"; then
                fail "$1: a line matches /$3/ in:"; printf '%s\n' "$2" | head -30
        else
                echo "ok: $1"
        fi
}

# wait_for WHAT SECONDS COMMAND...: retries until COMMAND succeeds
wait_for() {
        local what=$1 secs=$2
        shift 2
        local end=$((SECONDS + secs))
        while [ $SECONDS -lt $end ]; do
                if "$@" >/dev/null 2>&1; then
                        echo "ok: $what"; return 0
                fi
                sleep 0.2
        done
        fail "$what (waited ${secs}s)"
        return 1
}

# api METHOD PATH [BODY [CONTENT-TYPE]]: prints "CODE BODY"
api() {
        local ct=${4:-application/json}
        if [ $# -ge 3 ]; then
                curl -s -o "$T/body" -w '%{http_code}' -X "$1" -H "Content-Type: $ct" \
                        --data-binary "$3" "$URL$2" >"$T/code"
        else
                curl -s -o "$T/body" -w '%{http_code}' -X "$1" "$URL$2" >"$T/code"
        fi
        echo "$(cat "$T/code") $(cat "$T/body")"
}

bind_pod() { # NS POD NODE
        api POST "/api/v1/namespaces/$1/pods/$2/binding" \
                "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$2\"},\"target\":{\"kind\":\"Node\",\"name\":\"$3\"}}"
}

finish() {
        if [ "$FAILS" != 0 ]; then
                echo "$FAILS check(s) failed"; exit 1
        fi
        echo "all checks passed"
}
