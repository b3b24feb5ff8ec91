#!/usr/bin/env bash
# kbatch against its peers on the real bed (make bench-peers): Volcano's
# scheduler and kube-scheduler, built from their upstream Go modules by
# test/k8s/peers/build.sh. For every workload and every scheduler: a fresh
# bed (test/k8s/up.sh), the KWOK nodes, that one scheduler, the workload's
# objects (the same for all, but for schedulerName), the measures, the bed
# torn down; then the next scheduler.
#
#   P1  1,000 nodes of 32 cpu; 1,000 gangs x 10 pods of 1 cpu, minMember 10
#   P2    500 nodes of  8 cpu; 1,500 gangs x  8 pods of 1 cpu (a third fits)
#   P3  1,000 nodes of 32 cpu; 10,000 pods of 1 cpu in no PodGroup
#   P4  5,000 nodes of 32 cpu; 5,000 gangs x 20 pods of 1 cpu
#
# PEERS_SIZE=small divides every node and pod count by ten. PEERS_P4=N
# runs P4 at N nodes and N gangs instead (when the full one does not fit).
# PEERS_WORKLOADS and PEERS_SCHEDULERS choose a subset ("P1 P3",
# "kbatch kube-scheduler"). PEERS_OUT names the JSON file (default
# build/peers/peers-SIZE-DATE.json; the text table is beside it, .txt).
#
# The measures, per row:
#   seconds          from the first create to the last bind; when not
#                    every pod gets bound, to the last bind before a steady
#                    state (nothing bound or created for 30 s)
#   bindsPerSecond   bound / seconds
#   cpuSeconds, peakRssBytes   the scheduler process's (user+system; VmHWM)
#   requestsPerPod   the scheduler's own API requests over the pods bound,
#                    counted by the server: apiserver_flowcontrol_dispatched_
#                    requests_total of the flow schema "service-accounts",
#                    which only the scheduler's ServiceAccount token falls
#                    in (everything else on the bed is system:masters)
#                    (read 5 s after the last bind, PEERS_TAIL: the status
#                    and event writes that follow the binds count too)
#   serverRequestsPerPod   apiserver_request_total over the pods bound:
#                    every client's (the creates, KWOK's status writes)
#   partialGangs     PodGroups with some but fewer than minMember pods bound
#   overcommittedNodes   nodes whose bound pods ask more cpu than it has
#   gangsRun         (P2) the PodGroups that got all their pods
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/bin}
SIZE=${PEERS_SIZE:-full}
WORKLOADS=${PEERS_WORKLOADS:-P1 P2 P3 P4}
SCHEDULERS=${PEERS_SCHEDULERS:-kbatch volcano kube-scheduler kube-scheduler-qps}
QUIET=${PEERS_QUIET:-30s}
LOADMAX=${PEERS_LOADMAX:-2.5}
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${PEERS_OUT:-$ROOT/build/peers/peers-$SIZE-$STAMP.json}
LOGS=${OUT%.json}.logs
mkdir -p "$(dirname "$OUT")" "$LOGS"
T=$(mktemp -d)
BED=
SPID=
cleanup() {
        [ -z "$SPID" ] || kill -KILL "$SPID" 2>/dev/null || true
        [ -z "$BED" ] || "$ROOT/test/k8s/down.sh" "$BED" --quiet || true
        rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
die() { echo "peers: $*" >&2; exit 1; }

[ -x "$BIN/kbatch-scheduler" ] || die "no $BIN/kbatch-scheduler (make progs MODE=release)"
"$ROOT/test/k8s/build.sh" >"$T/build.log" 2>&1 || { cat "$T/build.log"; die "the bed did not build"; }
B=$(tail -1 "$T/build.log")
"$ROOT/test/k8s/peers/build.sh" >"$T/peers.log" 2>&1 || { cat "$T/peers.log"; die "the peers' build failed"; }
PB=$(tail -1 "$T/peers.log")
kbload() { "$B/kbload" -kubeconfig "$BED/admin.kubeconfig" "$@"; }
kbpeers() { "$PB/kbpeers" -kubeconfig "$BED/admin.kubeconfig" "$@"; }
kc() { kubectl --kubeconfig "$BED/admin.kubeconfig" "$@"; }
field() { sed -n "s/.*\\b$1=\\([0-9.a-z]*\\).*/\\1/p"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

version_of() {
        case $1 in
        kbatch) "$BIN/kbatch-scheduler" --version 2>/dev/null | awk '{ print $2 }' ;;
        volcano) cat "$PB/volcano-scheduler.version" ;;
        kube-scheduler*) cat "$PB/kube-scheduler.version" ;;
        esac
}
sched_name() {
        case $1 in kbatch) echo kbatch ;; volcano) echo volcano ;; kube-scheduler*) echo default-scheduler ;; esac
}
built() {
        case $1 in
        kbatch) return 0 ;;
        volcano) [ -x "$PB/volcano-scheduler" ] ;;
        kube-scheduler*) [ -x "$PB/kube-scheduler" ] ;;
        esac
}
build_error() {
        local f=$PB/$1.error
        case $1 in volcano) f=$PB/volcano-scheduler.error ;; kube-scheduler*) f=$PB/kube-scheduler.error ;; esac
        [ -f "$f" ] && grep -v '^go: creating\|^go: finding\|^go: downloading' "$f" | tail -3 | tr '\n' ' '
}

# The workload's counts: nodes cpu_per_node gangs gang_size (gangs 0: bare pods).
workload() {
        local n c g s
        case $1 in
        P1) n=1000 c=32 g=1000 s=10 ;;
        P2) n=500 c=8 g=1500 s=8 ;;
        P3) n=1000 c=32 g=0 s=10000 ;;
        P4) n=5000 c=32 g=5000 s=20 ;;
        esac
        if [ "$SIZE" = small ]; then
                n=$((n / 10))
                if [ "$g" = 0 ]; then s=$((s / 10)); else g=$((g / 10)); fi
        fi
        if [ "$1" = P4 ] && [ -n "${PEERS_P4:-}" ]; then n=$PEERS_P4 g=$PEERS_P4; fi
        echo "$n $c $g $s"
}

bed() { # a fresh bed with NODES nodes of CPU cpu, all Ready, and the peers' identity
        [ -z "$BED" ] || "$ROOT/test/k8s/down.sh" "$BED" --quiet || true
        BED=$T/bed-$1
        "$ROOT/test/k8s/up.sh" "$BED" >"$T/up.log" 2>&1 || { cat "$T/up.log"; die "the bed did not come up"; }
        # The peers run as a ServiceAccount of their own (cluster-admin):
        # like kbatch's, its requests fall in the flow schema
        # "service-accounts", which is how they are counted.
        kc create serviceaccount peer-scheduler -n default >/dev/null
        kc create clusterrolebinding peer-scheduler --clusterrole cluster-admin \
                --serviceaccount default:peer-scheduler >/dev/null
        local tok
        tok=$(kc create token peer-scheduler -n default --duration 24h)
        sed "s/^\\(    token: \\).*/\\1$tok/" "$BED/admin.kubeconfig" >"$BED/peer.kubeconfig"
        chmod 600 "$BED/peer.kubeconfig"
        kbload nodes -n "$2" -cpu "$3" >/dev/null || die "kbload nodes failed"
        local end=$((SECONDS + 180))
        until [ "$(kc get nodes --no-headers 2>/dev/null | grep -cw Ready)" = "$2" ]; do
                [ $SECONDS -lt $end ] || die "nodes not Ready after 180 s"
                sleep 1
        done
}

# Starts scheduler $1 on the bed; 0 when it is ready within 60 s.
sched_start() {
        local port
        port=$(free_port)
        : >"$T/sched.log"
        case $1 in
        kbatch)
                "$BIN/kbatch-scheduler" --kubeconfig "$BED/scheduler.kubeconfig" \
                        --listen-address "127.0.0.1:$port" -v 1 >"$T/sched.log" 2>&1 &
                SPID=$!
                READY="http://127.0.0.1:$port/healthz"
                ;;
        kube-scheduler)
                "$PB/kube-scheduler" --kubeconfig "$BED/peer.kubeconfig" --leader-elect=false \
                        --bind-address 127.0.0.1 --secure-port "$port" >"$T/sched.log" 2>&1 &
                SPID=$!
                READY="https://127.0.0.1:$port/readyz"
                ;;
        kube-scheduler-qps)
                # The same, with its client's rate limit (default 50 qps,
                # burst 100) lifted out of the way.
                cat >"$T/ks.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$BED/peer.kubeconfig", qps: 5000, burst: 10000}
leaderElection: {leaderElect: false}
EOF
                "$PB/kube-scheduler" --config "$T/ks.yaml" \
                        --bind-address 127.0.0.1 --secure-port "$port" >"$T/sched.log" 2>&1 &
                SPID=$!
                READY="https://127.0.0.1:$port/readyz"
                ;;
        volcano)
                # Its own CRDs for its release, over deploy/'s.
                kc apply --server-side --force-conflicts -f "$PB/volcano-crds/" >>"$T/sched.log" 2>&1
                local hp
                hp=$(free_port)
                "$PB/volcano-scheduler" --kubeconfig "$BED/peer.kubeconfig" --leader-elect=false \
                        --scheduler-conf "$PB/volcano-scheduler.conf" --scheduler-name volcano \
                        --listen-address "127.0.0.1:$port" --healthz-address "127.0.0.1:$hp" \
                        >>"$T/sched.log" 2>&1 &
                SPID=$!
                READY="http://127.0.0.1:$hp/healthz"
                ;;
        esac
        local end=$((SECONDS + 60))
        until curl -skf "$READY" >/dev/null 2>&1; do
                kill -0 "$SPID" 2>/dev/null || return 1
                [ $SECONDS -lt $end ] || return 1
                sleep 0.2
        done
}
sched_stop() {
        [ -n "$SPID" ] || return 0
        kill -TERM "$SPID" 2>/dev/null
        for _ in $(seq 1 50); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SPID" 2>/dev/null
        wait "$SPID" 2>/dev/null
        SPID=
}
metrics() { # prints "all_requests scheduler_requests"
        curl -s --cacert "$BED/pki/ca.crt" -H "Authorization: Bearer $(cat "$BED/admin.token")" "$(cat "$BED/url")/metrics" |
                awk '/^apiserver_request_total\{/ { a += $NF }
                     /^apiserver_flowcontrol_dispatched_requests_total\{flow_schema="service-accounts"/ { s += $NF }
                     END { printf "%d %d\n", a, s }'
}
# Waits while the 1-minute load is above LOADMAX, at most 3 minutes;
# prints the load it went on with.
settle_load() {
        local end=$((SECONDS + 180)) l
        while :; do
                l=$(cut -d' ' -f1 /proc/loadavg)
                if awk -v l="$l" -v m="$LOADMAX" 'BEGIN { exit !(l <= m) }' || [ $SECONDS -ge $end ]; then
                        echo "$l"; return
                fi
                sleep 5
        done
}

ROWS=$T/rows.jsonl
: >"$ROWS"
row() { # key=value ... -> one JSON object
        python3 - "$@" >>"$ROWS" <<'EOF'
import json, sys
o = {}
for a in sys.argv[1:]:
    k, _, v = a.partition("=")
    if k in ("gangsRun",):
        v = json.loads(v) if v else None
    else:
        try:
            v = int(v)
        except ValueError:
            try:
                v = float(v)
            except ValueError:
                pass
    o[k] = v
print(json.dumps(o))
EOF
}

echo "peers: size $SIZE; workloads $WORKLOADS; schedulers $SCHEDULERS; $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
for w in $WORKLOADS; do
        read -r nodes cpu gangs size < <(workload "$w")
        if [ "$gangs" = 0 ]; then pods=$size; else pods=$((gangs * size)); fi
        for s in $SCHEDULERS; do
                ver=$(version_of "$s")
                base=(scheduler="$s" version="$ver" workload="$w" nodes="$nodes" pods="$pods")
                # kube-scheduler's own client limit (50 qps) makes P4 at
                # full size a half-hour measure of that limit alone.
                if [ "$w" = P4 ] && [ "$s" = kube-scheduler ] && [ "$SIZE" != small ] && [ -z "${PEERS_P4_DEFAULT:-}" ]; then
                        row "${base[@]}" status="skipped" note="its default client limit (50 qps) alone would take $((pods / 50)) s; PEERS_P4_DEFAULT=1 runs it"
                        continue
                fi
                if ! built "$s"; then
                        echo "peers: $w $s: not built: $(build_error "$s")"
                        row "${base[@]}" status="not built" note="$(build_error "$s")"
                        continue
                fi
                bed "$w-$s" "$nodes" "$cpu"
                if ! sched_start "$s"; then
                        why="never ready"; kill -0 "$SPID" 2>/dev/null || why="exited"
                        echo "peers: $w $s: $why; its log ends:"; tail -15 "$T/sched.log"
                        row "${base[@]}" status="$why" note="$(tail -15 "$T/sched.log")"
                        sched_stop
                        continue
                fi
                load=$(settle_load)
                read -r a0 s0 < <(metrics)
                kbpeers watch -n "$pods" -quiet "$QUIET" -timeout 20m >"$T/watch.out" 2>"$T/watch.err" &
                wpid=$!
                until grep -q watching "$T/watch.out" 2>/dev/null; do
                        kill -0 "$wpid" 2>/dev/null || { cat "$T/watch.err"; die "the watch failed"; }
                        sleep 0.1
                done
                t0=$(date +%s.%N)
                if [ "$gangs" = 0 ]; then
                        apply=$(kbpeers pods -n "$pods" -cpu 1 -scheduler "$(sched_name "$s")" | field seconds)
                else
                        apply=$(kbload gangs -n "$gangs" -size "$size" -scheduler "$(sched_name "$s")" | field seconds)
                fi
                wait "$wpid"
                wl=$(tail -1 "$T/watch.out")
                # The writes that follow the last bind (statuses, events)
                # are the scheduler's too: a few seconds for them.
                sleep "${PEERS_TAIL:-5}"
                read -r a1 s1 < <(metrics)
                tck=$(getconf CLK_TCK)
                status=ok note=
                if kill -0 "$SPID" 2>/dev/null; then
                        cpus=$(cut -d' ' -f14,15 "/proc/$SPID/stat" | awk -v t="$tck" '{ printf "%.2f", ($1 + $2) / t }')
                        rss=$(awk '/VmHWM/ { print $2 * 1024 }' "/proc/$SPID/status")
                else
                        status=crashed note=$(tail -15 "$T/sched.log")
                        cpus= rss=
                        echo "peers: $w $s: the scheduler died during the run; its log ends:"; tail -15 "$T/sched.log"
                fi
                chk=$(kbpeers check)
                sched_stop
                cp "$T/sched.log" "$LOGS/$w-$s.log"
                bound=$(echo "$wl" | field bound)
                last=$(echo "$wl" | field last_bind)
                end=$(echo "$wl" | field end)
                if [ "$bound" -gt 0 ]; then
                        secs=$(echo "$last - $t0" | bc -l)
                        bps=$(echo "$bound / $secs" | bc -l)
                        rpp=$(echo "($s1 - $s0) / $bound" | bc -l)
                        srpp=$(echo "($a1 - $a0) / $bound" | bc -l)
                else
                        secs= bps= rpp= srpp=
                fi
                pg=$(echo "$chk" | python3 -c 'import json,sys; print(json.load(sys.stdin)["partialGangs"])')
                oc=$(echo "$chk" | python3 -c 'import json,sys; print(json.load(sys.stdin)["overcommittedNodes"])')
                gr=$(echo "$chk" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["gangsRun"]))')
                [ "$w" = P2 ] || gr=
                printf 'peers: %s %-14s bound %s/%s in %s s (%s), %s binds/s, cpu %s s, rss %s MiB, requests/pod %s (server %s), partial gangs %s, overcommitted nodes %s; load %s\n' \
                        "$w" "$s" "$bound" "$pods" "${secs:+$(printf %.2f "$secs")}" "$end" "${bps:+$(printf %.0f "$bps")}" \
                        "$cpus" "${rss:+$((rss / 1048576))}" "${rpp:+$(printf %.2f "$rpp")}" "${srpp:+$(printf %.2f "$srpp")}" "$pg" "$oc" "$load"
                row "${base[@]}" status="$status" seconds="${secs:+$(printf %.2f "$secs")}" \
                        bindsPerSecond="${bps:+$(printf %.1f "$bps")}" cpuSeconds="$cpus" peakRssBytes="$rss" \
                        requestsPerPod="${rpp:+$(printf %.3f "$rpp")}" serverRequestsPerPod="${srpp:+$(printf %.3f "$srpp")}" \
                        partialGangs="$pg" overcommittedNodes="$oc" bound="$bound" end="$end" apply="$apply" \
                        load1="$load" gangsRun="$gr" note="$note"
                "$ROOT/test/k8s/down.sh" "$BED" --quiet || true
                BED=
        done
done

python3 - "$ROWS" "$OUT" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    for k in ("seconds", "bindsPerSecond", "cpuSeconds", "peakRssBytes", "requestsPerPod",
              "serverRequestsPerPod", "partialGangs", "overcommittedNodes", "bound"):
        if r.get(k) == "":
            r[k] = None
    if r.get("note") == "":
        del r["note"]
    if r.get("gangsRun") is None:
        r.pop("gangsRun", None)
with open(sys.argv[2], "w") as f:
    json.dump(rows, f, indent=1)
    f.write("\n")
def cell(v, fmt="{}"):
    return "-" if v is None else fmt.format(v)
hdr = "| workload | scheduler | version | nodes | pods | bound | seconds | binds/s | cpu s | peak RSS MiB | requests/pod (scheduler) | requests/pod (server, all) | partial gangs | overcommitted nodes |"
lines = [hdr, "|" + "---|" * (hdr.count("|") - 1)]
for r in rows:
    if r.get("status") != "ok":
        lines.append("| %s | %s | %s | %s | %s | %s |" % (r["workload"], r["scheduler"], r["version"], r["nodes"], r["pods"],
                     r["status"] + (": " + " ".join(str(r.get("note", "")).split())[:200] if r.get("note") else "")))
        continue
    rss = r.get("peakRssBytes")
    lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        r["workload"], r["scheduler"], r["version"], r["nodes"], r["pods"], r["bound"],
        cell(r.get("seconds"), "{:.2f}") + ("" if r.get("end") == "all" else " (steady)"),
        cell(r.get("bindsPerSecond"), "{:.0f}"), cell(r.get("cpuSeconds"), "{:.2f}"),
        "-" if rss is None else "%.0f" % (rss / 1048576), cell(r.get("requestsPerPod"), "{:.2f}"),
        cell(r.get("serverRequestsPerPod"), "{:.2f}"), r["partialGangs"], r["overcommittedNodes"]))
for r in rows:
    if "gangsRun" in r and r.get("status") == "ok":
        g = r["gangsRun"]
        lines.append("")
        lines.append("%s %s: %d gangs ran%s" % (r["workload"], r["scheduler"], len(g),
                     (": " + ", ".join(g[:4]) + (", ..., " + g[-1] if len(g) > 4 else "")) if g else ""))
sets = {r["scheduler"]: set(r["gangsRun"]) for r in rows if "gangsRun" in r and r.get("status") == "ok"}
names = sorted(sets)
for i in range(len(names)):
    for j in range(i + 1, len(names)):
        a, b = sets[names[i]], sets[names[j]]
        lines.append("P2: %s and %s ran %d gangs in common" % (names[i], names[j], len(a & b)))
loads = [str(r["load1"]) for r in rows if "load1" in r]
lines.append("")
lines.append("1-minute load before each timed run: " + ", ".join(loads))
txt = "\n".join(lines) + "\n"
open(sys.argv[2][:-5] + ".txt" if sys.argv[2].endswith(".json") else sys.argv[2] + ".txt", "w").write(txt)
print(txt)
EOF
echo "peers: the table is in $OUT (and ${OUT%.json}.txt; the schedulers' logs in $LOGS)"
