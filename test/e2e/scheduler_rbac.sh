# deploy/'s least-privilege RBAC against a real authorizer (the real bed
# only: kbatch-apiserver authorises every token alike). The scheduler runs
# with deploy/'s ServiceAccount token. With the ClusterRole as deploy/
# ships it a gang binds and nothing is refused; with one verb taken away
# (create on pods/binding) the gang cannot bind and the refusal is in the
# scheduler's log, which is what every real-bed test checks at its end: so
# the suite catches a grant missing from deploy/.
. "$(dirname "$0")/lib/scheduler.sh"
needs_server k8s "kbatch-apiserver has no authorizer: RBAC needs the real one"

NODE_CPU=8
start_api --nodes "2:cpu=8,memory=32Gi"

# The token is the ServiceAccount's, not admin's.
who=$(kubectl --kubeconfig "$SCHED_KC" auth whoami -o jsonpath='{.status.userInfo.username}' 2>&1)
expect_eq "the scheduler's identity" "$who" "system:serviceaccount:kbatch-system:kbatch-scheduler"
expect_eq "it may not read secrets" "$(kubectl --kubeconfig "$SCHED_KC" auth can-i list secrets -A 2>&1)" "no"
expect_eq "it may bind pods" "$(kubectl --kubeconfig "$SCHED_KC" auth can-i create pods --subresource binding -n default 2>&1)" "yes"

start_sched s
gang ok 2 2
wait_for "with deploy/'s RBAC the gang binds" 30 all_bound 2
wait_for "podgroup ok Running" 20 sh -c "$K get pg ok -o jsonpath='{.status.phase}' | grep -qx Running"
stop_sched s
forbidden=$(grep -c -E '[Ff]orbidden| 403[ :,)]' "$T/s.log")
expect_eq "no 403 with deploy/'s RBAC" "$forbidden" 0

# A cluster upgraded to this kbatch but still on the old ClusterRole (no
# batch.volcano.sh jobs): the Volcano Job list is refused (403). It is
# optional, so it counts as empty with a warning naming the fix, and
# every other gang still schedules (a 403 waited on as a required list
# would stop all sessions).
vj=$($K get clusterrole kbatch-scheduler -o json | python3 -c '
import json, sys
r = json.load(sys.stdin)["rules"]
print([i for i, x in enumerate(r) if x.get("apiGroups") == ["batch.volcano.sh"]][0])')
$K patch clusterrole kbatch-scheduler --type json -p "[{\"op\":\"remove\",\"path\":\"/rules/$vj\"}]" >/dev/null
wait_for "the authorizer sees the Volcano Job grant gone" 20 sh -c "[ \"\$(kubectl --kubeconfig $SCHED_KC auth can-i list jobs.batch.volcano.sh -A)\" = no ]"
start_sched o
gang oldrole 2 2
oldrole_bound() { [ "$($K get pods oldrole-1 oldrole-2 -o jsonpath='{.items[*].spec.nodeName}' | wc -w)" = 2 ]; }
wait_for "with the old ClusterRole the gang still binds" 30 oldrole_bound
wait_for "the scheduler says the grant is missing" 10 grep -q 'forbidden (HTTP 403).*apply deploy/rbac.yaml' "$T/o.log"
stop_sched o
unset 'SCHED_LOG[o]'
$K delete podgroup oldrole --wait=false >/dev/null 2>&1 || true
$K delete pods oldrole-1 oldrole-2 --wait=false >/dev/null 2>&1 || true
$K patch clusterrole kbatch-scheduler --type json -p "[{\"op\":\"add\",\"path\":\"/rules/$vj\",\"value\":{\"apiGroups\":[\"batch.volcano.sh\"],\"resources\":[\"jobs\"],\"verbs\":[\"list\",\"watch\"]}}]" >/dev/null

# Take create on pods/binding away, as a deploy/ that forgot it would.
rules=$($K get clusterrole kbatch-scheduler -o json | python3 -c '
import json, sys
r = json.load(sys.stdin)["rules"]
print([i for i, x in enumerate(r) if x.get("resources") == ["pods/binding"]][0])')
$K patch clusterrole kbatch-scheduler --type json -p "[{\"op\":\"remove\",\"path\":\"/rules/$rules\"}]" >/dev/null
wait_for "the authorizer sees the change" 20 sh -c "[ \"\$(kubectl --kubeconfig $SCHED_KC auth can-i create pods --subresource binding -n default)\" = no ]"
start_sched t
gang refused 2 2
sleep 6
expect_eq "without the grant nothing binds" "$($K get pods -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' | grep '^refused' | grep -vc '=$')" 0
wait_for "the refusal is in the scheduler's log" 10 grep -Eq '[Ff]orbidden| 403[ :,)]' "$T/t.log"
stop_sched t
# The end-of-test check (finish) fails on such a log; this test expects it
# to, so it is run here on its own and its verdict inverted.
SCHED_LOG=([t]=$T/t.log)
saved=$FAILS
finish >"$T/finish.out" 2>&1 || true
expect_match "the suite's 403 check catches the missing verb" "$(cat "$T/finish.out")" 'refused \(403\) under deploy'
FAILS=$saved PASSES=$((PASSES))
unset 'SCHED_LOG[t]'
finish
