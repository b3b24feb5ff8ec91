#!/usr/bin/env bash
# kbatch-scheduler at scale on the real bed (make bench-k8s): 1,000 KWOK
# nodes of 32 cpu, 1,000 gangs of 10 pods of 1 cpu (minMember 10). RUNS
# times (default 3), each on a fresh bed; the medians are printed, and the
# figures of each run.
#
#  apply_to_bound  seconds from the start of the apply (kbload creating the
#                  PodGroups and pods, 64 requests in flight) to every pod
#                  bound, with the scheduler running all along
#  apply           seconds the apply itself took
#  cpu, rss        the scheduler's CPU seconds (user+system) and peak RSS
#                  over that run
#  requests/pod    kbatch_api_requests_total over the pods bound
#  start_to_bound  the same gangs created with no scheduler running, then
#                  the scheduler started: seconds to every pod bound
#                  (listing included), and that as binds per second;
#                  start_to_first_session is the listing's part, and
#                  dispatch_binds/s the rate from the first session on
#  ceiling         the server's own: on a fresh bed with the same pods
#                  (schedulerName none), kbload binds them all, round-robin,
#                  64 in flight, with nothing in the way
#  fraction        kbatch's binds per second over the ceiling
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/bin}
RUNS=${RUNS:-3}
NODES=${NODES:-1000}
GANGS=${GANGS:-1000}
SIZE=${SIZE:-10}
PODS=$((GANGS * SIZE))
T=$(mktemp -d)
BED=
SPID=
cleanup() {
        [ -z "$SPID" ] || kill -KILL "$SPID" 2>/dev/null || true
        [ -z "$BED" ] || "$ROOT/test/k8s/down.sh" "$BED" --quiet || true
        rm -rf "$T"
}
trap cleanup EXIT
B=$("$ROOT/test/k8s/build.sh" | tail -1)
kbload() { "$B/kbload" -kubeconfig "$BED/admin.kubeconfig" "$@"; }
field() { sed -n "s/.*\\b$1=\\([0-9.]*\\).*/\\1/p"; }

bed() { # a fresh bed with the nodes, all Ready
        [ -z "$BED" ] || "$ROOT/test/k8s/down.sh" "$BED" --quiet || true
        BED=$T/bed$1
        "$ROOT/test/k8s/up.sh" "$BED" >"$T/up.log" 2>&1 || { cat "$T/up.log"; exit 1; }
        kbload nodes -n "$NODES" -cpu 32 >/dev/null
        local end=$((SECONDS + 120))
        until [ "$(kubectl --kubeconfig "$BED/admin.kubeconfig" get nodes --no-headers | grep -cw Ready)" = "$NODES" ]; do
                [ $SECONDS -lt $end ] || { echo "nodes not Ready"; exit 1; }
                sleep 1
        done
}
sched_start() {
        PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
        "$BIN/kbatch-scheduler" --kubeconfig "$BED/scheduler.kubeconfig" --listen-address "127.0.0.1:$PORT" \
                -v 1 >"$T/sched.log" 2>&1 &
        SPID=$!
        until curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null; do sleep 0.1; done
}
sched_figures() { # prints "cpu rss_mib requests"
        local tck st cpu rss req
        tck=$(getconf CLK_TCK)
        st=$(cut -d' ' -f14,15 "/proc/$SPID/stat")
        cpu=$(echo "$st" | awk -v t="$tck" '{ printf "%.1f", ($1 + $2) / t }')
        rss=$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$SPID/status")
        req=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^kbatch_api_requests_total/ { s += $2 } END { print s }')
        echo "$cpu $rss $req"
}
sched_stop() { kill -TERM "$SPID"; wait "$SPID" || true; SPID=; }
# Seconds from T0 (date +%s.%N) to the scheduler's first session (its
# lists done): klog's time of day, on the same day.
first_session() {
        local tod
        tod=$(grep -m1 'first session' "$T/sched.log" | awk '{ print $2 }')
        python3 -c "import sys,datetime as d; t0=float(sys.argv[1]); day=d.datetime.fromtimestamp(t0, d.timezone.utc).strftime('%Y-%m-%d'); t=d.datetime.strptime(day+' '+sys.argv[2], '%Y-%m-%d %H:%M:%S.%f').replace(tzinfo=d.timezone.utc).timestamp(); print('%.2f' % (t - t0))" "$1" "$tod"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
: >"$T/runs"
echo "k8s_scale: $NODES nodes of 32 cpu, $GANGS gangs x $SIZE pods, $RUNS runs; $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
for r in $(seq 1 "$RUNS"); do
        bed "a$r"
        sched_start
        t0=$(date +%s.%N)
        apply=$(kbload gangs -n "$GANGS" -size "$SIZE" -scheduler kbatch | field seconds)
        kbload wait-bound -n "$PODS" >/dev/null
        a2b=$(echo "$(date +%s.%N) - $t0" | bc)
        read -r cpu rss req < <(sched_figures)
        sched_stop
        bed "b$r"
        kbload gangs -n "$GANGS" -size "$SIZE" -scheduler kbatch >/dev/null
        t0=$(date +%s.%N)
        sched_start
        kbload wait-bound -n "$PODS" >/dev/null
        s2b=$(echo "$(date +%s.%N) - $t0" | bc)
        lists=$(first_session "$t0")
        sched_stop
        bed "c$r"
        kbload gangs -n "$GANGS" -size "$SIZE" -scheduler none >/dev/null
        ceil=$(kbload bind | field binds_per_second)
        rate=$(echo "$PODS / $s2b" | bc -l)
        drate=$(echo "$PODS / ($s2b - $lists)" | bc -l)
        printf 'run %d: apply_to_bound=%.2f apply=%.2f cpu=%s rss_mib=%s requests/pod=%.2f start_to_bound=%.2f start_to_first_session=%s kbatch_binds/s=%.0f dispatch_binds/s=%.0f ceiling_binds/s=%s fraction=%.2f dispatch_fraction=%.2f\n' \
                "$r" "$a2b" "$apply" "$cpu" "$rss" "$(echo "$req / $PODS" | bc -l)" "$s2b" "$lists" "$rate" "$drate" "$ceil" \
                "$(echo "$rate / $ceil" | bc -l)" "$(echo "$drate / $ceil" | bc -l)" | tee -a "$T/runs"
done
echo "medians of $RUNS runs:"
for k in apply_to_bound apply cpu rss_mib requests/pod start_to_bound start_to_first_session kbatch_binds/s dispatch_binds/s ceiling_binds/s fraction dispatch_fraction; do
        printf '  %-16s %s\n' "$k" "$(sed -n "s|.* $k=\\([0-9.]*\\).*|\\1|p" "$T/runs" | median)"
done
