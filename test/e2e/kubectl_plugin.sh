# kubectl kbatch as a user runs it: real kubectl finds kubectl-kbatch on
# PATH and hands it the arguments; it talks to kbatch-apiserver, where
# kbatch-scheduler has written its statuses.
#
# The cluster: 2 nodes of 4 cpu.  Queue q (capability 3 cpu) runs gang
# "run" (2 x 1 cpu); gangs "wait" and "wait2" (2 x 1 cpu each, in that
# order) cannot both fit in what q may still hold (1 cpu), so each says
# QueueQuotaExceeded with its numbers, 1st and 2nd of 2 waiting in queue q.
# q then deserves cpu 3 (its request, 6, capped by its capability) and
# holds cpu 2.  Queue e is empty: closing it makes it Closed at once, a gang
# submitted to it waits (QueueClosed), and runs once it is reopened.
# Last, the errors (unknown command, unreachable server, 404, 403, 401) and
# make install into a DESTDIR.
. "$(dirname "$0")/lib/scheduler.sh"

export PATH=$BIN:$PATH
start_api --nodes "2:cpu=4,memory=16Gi"
export KUBECONFIG=$KC

out=$(kubectl plugin list 2>/dev/null)
expect_match "kubectl finds the plugin on PATH" "$out" "/kubectl-kbatch$"

out=$(kubectl kbatch queues 2>&1)
expect_match "no queue yet: says so" "$out" "^No queues found"

$K apply -f - >/dev/null <<'EOF'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q}
spec: {weight: 1, capability: {cpu: "3"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: e}
spec: {weight: 1}
EOF
gang run 2 1 default q
start_sched s
wait_for "gang run is bound" 20 all_bound 2
# Both waiting gangs exist before a session sees either: a condition whose
# only change is its place in the queue is rewritten at most every 30 s, so
# "wait" must not be seen alone first ("1st of 1").
stop_sched s
gang wait 2 1 default q
sleep 0.3
gang wait2 2 1 default q
start_sched s

# why, with a bare PodGroup name: the reason, the numbers and the place.
why_has() { kubectl kbatch why "$1" 2>&1 | grep -q -- "$2"; }
wait_for "wait2 is 2nd of 2 in queue q" 20 why_has wait2 "Position:   2nd of 2 waiting in queue q"
out=$(kubectl kbatch why wait)
expect_match "why: the reason" "$out" "^Reason: +QueueQuotaExceeded$"
expect_match "why: the blocker with its numbers" "$out" \
        "^Blocker: +queue q: gang needs cpu 2, deserved 3, allocated 2, capability 3$"
expect_match "why: the place in the queue" "$out" "^Position: +1st of 2 waiting in queue q$"
expect_match "why: phase and minMember" "$(printf '%s\n' "$out" | tr '\n' '|')" \
        "Phase: +Inqueue\|MinMember: +2\|Pods: +0 running, 2 pending\|"
expect_match "why: waiting since" "$out" "^Scheduled: +no, waiting for [0-9]+s \(since 20"

# why, with a pod's name, the kind spelled out, flags anywhere.
out=$(kubectl kbatch why wait2-1 -n default)
expect_match "why POD: the pod" "$out" "^Pod: +default/wait2-1$"
expect_match "why POD: its group" "$out" "^PodGroup: +wait2$"
expect_match "why POD: the group's reason" "$out" "^Position: +2nd of 2 waiting in queue q$"
out=$(kubectl kbatch --kubeconfig "$KC" why pod/run-1)
expect_match "why pod/NAME of a running gang" "$out" "^Scheduled: +yes, [0-9]+s ago"
expect_match "why pod/NAME: its node" "$out" "^Node: +node-[12]$"
out=$(kubectl kbatch why pg/run)
expect_match "why pg/NAME: scheduled" "$out" "^Scheduled: +yes"
expect_match "why pg/NAME: its pods" "$out" "^Pods: +2 running, 0 pending$"

# A pod naming no group is in the one kbatch-scheduler makes for it
# (podgroup-<its uid>, having no controller): why says that group.
$K run lonely --image=x --restart=Never --overrides='{"spec":{"schedulerName":"kbatch"}}' >/dev/null
luid=$($K get pod lonely -o jsonpath='{.metadata.uid}')
wait_for "lonely's podgroup is made" 15 $K get pg "podgroup-$luid"
out=$(kubectl kbatch why pod/lonely)
expect_match "why POD of no group: the group kbatch made for it" "$out" "^PodGroup: +podgroup-$luid$"
out=$(kubectl kbatch why "pg/podgroup-$luid")
# Its one pod is counted, whatever it is doing by now (the old rule read
# only the annotations and counted none).
expect_match "why its group: counts its pod" "$out" \
        "^Pods: +(1 running|0 running, 1 pending|0 running, 0 pending, 1 bound)"

# The namespace comes from the context, as kubectl's does; KUBECONFIG lists
# are merged (a missing file is skipped).
$K apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: team}
EOF
gang solo 1 100 team default
cp "$KC" "$T/team.kubeconfig"
kubectl --kubeconfig "$T/team.kubeconfig" config set-context --current --namespace=team >/dev/null
out=$(KUBECONFIG="$T/none:$T/team.kubeconfig" kubectl kbatch why solo)
expect_match "the context's namespace" "$out" "^PodGroup: +team/solo$"
wait_for "solo says it can never fit" 20 sh -c \
        "KUBECONFIG=$T/team.kubeconfig kubectl kbatch why solo | grep -q '^Reason: *NeverFits'"
out=$(kubectl kbatch why solo -n team --context "$(kubectl config current-context)")
expect_match "-n and --context" "$out" "^PodGroup: +team/solo$"

# The queues table: what q deserves and holds, sized to its content.
wait_for "q deserves cpu=3 and holds cpu=2" 20 sh -c \
        "kubectl kbatch queues | grep -Eq '^q +Open +1 +cpu=3 +cpu=2 +cpu=3 +2 +0 +1$'"
out=$(kubectl kbatch queues)
expect_match "queues: the header" "$out" \
        "^NAME +STATE +WEIGHT +DESERVED +ALLOCATED +CAPABILITY +INQUEUE +PENDING +RUNNING$"
expect_match "queues: an empty queue" "$out" "^e +Open +1 +0 +0 +unlimited +0 +0 +0$"
expect_eq "queues: columns sized to content (no wider than needed)" \
        "$(printf '%s\n' "$out" | head -1 | cut -c1-16)" "NAME      STATE "
expect_eq "queues QUEUE: that queue alone" "$(kubectl kbatch queues q | wc -l)" 2

# close and open.  q has work: Closing.  e has none: Closed at once; a gang
# sent to it waits, and runs when e is open again.
out=$(kubectl kbatch close q)
expect_match "close a busy queue: Closing" "$out" "^queue q closing: 1 running, 2 inqueue"
expect_eq "kubectl get queue q: Closing" "$($K get queue q -o jsonpath='{.status.state}')" Closing
out=$(kubectl kbatch close e)
expect_match "close an idle queue: Closed" "$out" "^queue e closed: no work left$"
expect_eq "kubectl get queue e: Closed" "$($K get queue e -o jsonpath='{.status.state}')" Closed
expect_match "close again: already" "$(kubectl kbatch close e)" "^queue e is already Closed$"
gang late 2 1 default e
wait_for "the new gang waits: QueueClosed" 20 why_has late "Blocker:    queue e is Closed"
sleep 1
expect_eq "none of late's pods is bound while e is closed" \
        "$($K get pods -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' | grep '^late-' | grep -vc '=$')" 0
out=$(kubectl kbatch open e)
expect_match "open" "$out" "^queue e opened \(was Closed\)$"
expect_eq "kubectl get queue e: Open" "$($K get queue e -o jsonpath='{.status.state}')" Open
wait_for "the gang runs once e is open" 20 why_has late "Scheduled:  yes"
expect_match "open q" "$(kubectl kbatch open q)" "^queue q opened \(was Closing\)$"
expect_match "open again: already" "$(kubectl kbatch open q)" "^queue q is already Open$"

# Errors, with their exit codes.
code() { "$@" >"$T/out" 2>&1; echo $?; }
expect_eq "unknown command: exit 2" "$(code kubectl kbatch frobnicate)" 2
expect_match "unknown command: says so" "$(cat "$T/out")" 'unknown command "frobnicate"'
expect_eq "a slip for a command: exit 2" "$(code kubectl kbatch queue)" 2
expect_match "a slip for a command: did you mean (as kubectl)" "$(tr '\n\t' '  ' <"$T/out")" \
        'unknown command "queue" .*Did you mean this\? +queues'
expect_eq "why without a name: exit 2" "$(code kubectl kbatch why)" 2
expect_eq "why deploy/x: exit 2" "$(code kubectl kbatch why deploy/x)" 2
expect_eq "--help: exit 0" "$(code kubectl kbatch --help)" 0
expect_match "--help lists the commands" "$(cat "$T/out")" "kubectl kbatch close QUEUE"
expect_eq "--version: exit 0" "$(code kubectl kbatch --version)" 0
expect_match "--version" "$(cat "$T/out")" "^kubectl-kbatch [0-9]"
expect_eq "not found: exit 1" "$(code kubectl kbatch why nothere)" 1
expect_match "not found: says so" "$(cat "$T/out")" \
        'NotFound.*no podgroup, pod or job named "nothere" in namespace "default"'
expect_eq "close a missing queue: exit 1" "$(code kubectl kbatch close nope)" 1
expect_eq "unreachable server: exit 1" "$(code kubectl kbatch queues --server http://127.0.0.1:1)" 1
expect_match "unreachable server: says so" "$(cat "$T/out")" \
        "cannot reach the server at http://127.0.0.1:1"
expect_eq "unknown context: exit 1" "$(code kubectl kbatch queues --context nope)" 1
expect_match "unknown context: says so" "$(cat "$T/out")" 'no context named "nope"'

# A server that refuses: 403 for queues, 404 for podgroups as a server
# without kbatch's CRDs answers, 404 for pod x, 401 for other pods.
cat >"$T/refuse.py" <<'EOF'
import http.server, json, sys
class H(http.server.BaseHTTPRequestHandler):
    def answer(self):
        if "/queues" in self.path:
            code, st = 403, {"reason": "Forbidden", "message": 'queues.scheduling.volcano.sh is forbidden: User "bob" cannot list resource "queues"'}
        elif "/podgroups/" in self.path:
            code, st = 404, {"reason": "NotFound", "message": "the server could not find the requested resource", "details": {}}
        elif "/pods/x" in self.path:
            code, st = 404, {"reason": "NotFound", "message": 'pods "x" not found', "details": {"name": "x", "kind": "pods"}}
        else:
            code, st = 401, {"reason": "Unauthorized", "message": "Unauthorized"}
        body = json.dumps(dict(st, kind="Status", apiVersion="v1", status="Failure", code=code)).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_PATCH = answer
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_port))
s.serve_forever()
EOF
python3 "$T/refuse.py" "$T/refuse.port" &
REFUSE_PID=$!
for _ in $(seq 1 50); do [ -s "$T/refuse.port" ] && break; sleep 0.1; done
R=http://127.0.0.1:$(cat "$T/refuse.port")
expect_eq "403: exit 1" "$(code kubectl kbatch queues --server "$R")" 1
expect_match "403: kubectl's words" "$(cat "$T/out")" \
        '^Error from server \(Forbidden\): queues.scheduling.volcano.sh is forbidden'
expect_eq "403 on close: exit 1" "$(code kubectl kbatch close q --server "$R")" 1
expect_eq "401: exit 1" "$(code kubectl kbatch why pod/y --server "$R")" 1
expect_match "401: says to log in" "$(cat "$T/out")" "You must be logged in"
expect_eq "no CRDs, no pod: exit 1" "$(code kubectl kbatch why x --server "$R")" 1
expect_match "no CRDs: says so" "$(cat "$T/out")" \
        "serves no podgroups.scheduling.volcano.sh: are kbatch's CRDs installed"
kill "$REFUSE_PID" 2>/dev/null
wait "$REFUSE_PID" 2>/dev/null

stop_sched s

# make install into a DESTDIR: the programs, the CRDs and examples; kubectl
# finds the installed plugin; make uninstall takes it all away again.
mode=release
case "$BIN" in */build/asan/bin) mode=asan ;; esac
stage=$T/stage
# The make running this test must not lend it its jobserver or flags.
submake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory "$@"; }
if submake install MODE=$mode DESTDIR="$stage" PREFIX=/usr \
        >"$T/install.log" 2>&1; then
        pass "make install DESTDIR=... PREFIX=/usr"
else
        fail "make install"; tail -20 "$T/install.log"
fi
for f in bin/kbatch-scheduler bin/kbatch-sim bin/kbatch-apiserver bin/kubectl-kbatch \
        share/kbatch/crds/scheduling.volcano.sh_queues.yaml \
        share/kbatch/crds/scheduling.volcano.sh_podgroups.yaml \
        share/kbatch/crds/optional/batch.volcano.sh_jobs.yaml \
        share/kbatch/examples/workloads/plain-job.yaml \
        share/kbatch/examples/10-gang-job.yaml share/kbatch/examples/sim/cluster.yaml; do
        [ -f "$stage/usr/$f" ] || fail "make install: no $f"
done
pass "make install: programs, CRDs and examples in place"
expect_eq "installed plugin runs under kubectl" \
        "$(PATH=$stage/usr/bin:/usr/bin:/bin kubectl kbatch --version)" "kubectl-kbatch 0.1.0"
submake uninstall MODE=$mode DESTDIR="$stage" PREFIX=/usr \
        >>"$T/install.log" 2>&1
expect_eq "make uninstall leaves no file" "$(find "$stage" -type f | wc -l)" 0

finish
