# kbatch-apiserver with many pods: list pages that cost their page, the
# simulation ticking on indexes, a watch history that carries a burst, and
# kubectl listing everything.  JOBS Jobs of 20 pods (default 1000: 20,000
# pods, under a minute in make test); JOBS=7000 NODES=5000 is the 140,000-pod
# run of docs/PERFORMANCE.md.  Prints the figures it measures.
. "$(dirname "$0")/lib/apiserver.sh"
JOBS=${JOBS:-1000}
NODES=${NODES:-500}
PODS=$((JOBS * 20))
PY=/usr/bin/python3
LOAD="$PY $(dirname "$0")/lib/load.py"
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }

start_server --nodes "$NODES:cpu=64,memory=256Gi,pods=110" -v 2
LOAD="$LOAD $URL"

s=$(now)
$LOAD jobs "$JOBS" 20 >/dev/null || fail "creating jobs"
wait_for "the Job controller made $PODS pods" 120 sh -c "[ \$($LOAD count) -ge $PODS ]"
echo "figure: $JOBS jobs created and $PODS pods made in $(since "$s") s"

t=$($LOAD pagetime)
echo "figure: one 500-pod page from the middle of $PODS: $t s"
expect_eq "a page costs its page, not the list (< 0.5 s)" "$(echo "$t < 0.5" | bc)" 1

s=$(now)
n=$($K get pods -A --chunk-size=0 --no-headers | wc -l)
echo "figure: kubectl get pods -A --chunk-size=0 ($n rows): $(since "$s") s"
expect_eq "kubectl get pods -A lists every pod" "$n" "$PODS"
s=$(now)
n=$($K get pods -A --chunk-size=5000 --no-headers | wc -l)
echo "figure: kubectl get pods -A --chunk-size=5000: $(since "$s") s"
expect_eq "paged by 5000, every pod" "$n" "$PODS"

# A watch from before a burst stays valid: the history holds 100,000 events
# and the burst is 3 x PODS of them (binds, the kubelet starting every pod,
# its Started Events) and a few per Job.
rv=$(curl -s "$URL/api/v1/namespaces/default/pods?limit=1" |
        sed 's/^{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"\([0-9]*\)".*/\1/')
s=$(now)
out=$($LOAD bind "$NODES")
echo "figure: $PODS binds in ${out#* } s"
wait_for "every pod running" 120 sh -c "[ \$($LOAD count Running) -ge $PODS ]"
echo "figure: all running $(since "$s") s after the binds began"
events=$(curl -sN "$URL/api/v1/namespaces/default/pods?watch=1&resourceVersion=$rv&timeoutSeconds=5" |
        grep -c '"type":"MODIFIED"')
if [ $((3 * PODS + 3 * JOBS)) -le 100000 ]; then
        expect_eq "watch from before the burst sees it all (no 410)" "$events" $((2 * PODS))
fi

r=$(curl -s "$URL/apis/batch/v1/namespaces/default/jobs/load-00007")
expect_match "per-owner counts reach the Job's status" "$r" '"active":20,"ready":20'
slow=$(grep -c 'simulation tick took' "$T/server.log")
echo "figure: simulation ticks over 50 ms: $slow; the slowest: $(grep -o 'tick took [0-9]* ms' "$T/server.log" | sort -k3 -n | tail -1)"
echo "figure: server RSS $(ps -o rss= -p "$SERVER_PID") KiB"
stop_server
finish apiserver_scale
