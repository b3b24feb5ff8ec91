#!/usr/bin/env bash
# kbatch-apiserver's memory per pod (docs/PERFORMANCE.md, "kbatch-apiserver
# at 140,000 pods"): starts the server (release build) with N/20 simulated
# nodes, creates N pods (4 keep-alive clients, test/bench/apimem.py), then
# binds every one through the binding subresource and waits for the
# simulated kubelet to start them all.  Prints VmRSS and VmHWM (from /proc)
# and KiB per pod over the server with its nodes and no pods:
#   created  after the creates (each pod one document in the store and one
#            ADDED event in the history)
#   running  after the binds and starts, with the watch history (default
#            100,000 events) holding older versions and the Started Events
#
#   bash test/bench/apimem.sh [N]     N pods, default 140000 (N=5000 for a
#                                     quick check)
#   BIN        where kbatch-apiserver is (default bin)
#   API_FLAGS  extra kbatch-apiserver flags
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-140000}
BIN=${BIN:-bin}
API_FLAGS=${API_FLAGS-}
NODES=$(((N + 19) / 20))
PY="python3 test/bench/apimem.py"
tmp=$(mktemp -d)
pid=
cleanup() {
        [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT

# shellcheck disable=SC2086
"$BIN/kbatch-apiserver" --listen 127.0.0.1:0 --port-file "$tmp/port" \
        --nodes "$NODES:cpu=64,memory=256Gi,pods=110" $API_FLAGS >"$tmp/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
        [ -s "$tmp/port" ] && break
        sleep 0.1
done
[ -s "$tmp/port" ] || { echo "apimem: the server did not start"; cat "$tmp/server.log"; exit 1; }
URL=http://127.0.0.1:$(cat "$tmp/port")
sleep 1

kib() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$pid/status"; }
row() { # what seconds
        local rss hwm
        rss=$(kib VmRSS)
        hwm=$(kib VmHWM)
        printf '| %-8s | %8s | %10d | %10d | %12.2f | %12.2f |\n' "$1" "$2" $((rss / 1024)) $((hwm / 1024)) \
                "$(echo "($rss - $base) / $N" | bc -l)" "$(echo "($hwm - $base) / $N" | bc -l)"
}
base=$(kib VmRSS)
echo "kbatch-apiserver, $N pods on $NODES nodes; empty server: $((base / 1024)) MiB"
printf '| %-8s | %8s | %10s | %10s | %12s | %12s |\n' stage "time (s)" "RSS (MiB)" "HWM (MiB)" "KiB/pod RSS" "KiB/pod HWM"
printf '|%s|%s|%s|%s|%s|%s|\n' ---------- ---------- ------------ ------------ -------------- --------------
t=$($PY "$URL" create "$N")
row created "$t"
s=$(date +%s.%N)
$PY "$URL" bind "$N" "$NODES" >/dev/null
for _ in $(seq 1 600); do
        [ "$($PY "$URL" running)" -ge "$N" ] && break
        sleep 1
done
n=$($PY "$URL" running)
[ "$n" -ge "$N" ] || { echo "apimem: only $n of $N pods running"; exit 1; }
row running "$(echo "$(date +%s.%N) - $s" | bc | xargs printf '%.2f')"
