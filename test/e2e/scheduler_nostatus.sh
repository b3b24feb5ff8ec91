# kbatch-scheduler with PodGroup and Queue CRDs that have no status
# subresource (as some older Volcano installs): discovery shows none, so
# status is written on the objects themselves.  The fixture is crds/ with
# the subresources stanza removed, made here so that it never drifts.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8
start_api --nodes "2:cpu=8,memory=32Gi"
mkdir -p "$T/crds"
for f in "$ROOT"/crds/*.yaml; do
        sed '/^    subresources:$/,/^      status: {}$/d' "$f" >"$T/crds/$(basename "$f")"
done
expect_eq "fixture CRDs have no subresources" "$(grep -c subresources "$T"/crds/*.yaml | grep -vc ':0$')" 0
$K apply -f "$T/crds/" >/dev/null
no_status_subresource() {
        [ "$(api GET /apis/scheduling.volcano.sh/v1beta1)" = 200 ] &&
                grep -q '"podgroups"' "$T/body" && ! grep -q 'podgroups/status' "$T/body"
}
wait_for "discovery lists podgroups and no podgroups/status" 10 no_status_subresource
# Without the subresource the scheduler patches the objects themselves:
# deploy/rbac.yaml says to grant patch on queues then (podgroups have it).
if [ "$SERVER" = k8s ]; then
        $K create clusterrole kbatch-scheduler-nostatus --verb patch --resource queues.scheduling.volcano.sh >/dev/null
        $K create clusterrolebinding kbatch-scheduler-nostatus --clusterrole kbatch-scheduler-nostatus \
                --serviceaccount kbatch-system:kbatch-scheduler >/dev/null
fi

start_sched s -v 2
wait_for "default queue created" 15 $K get queue default
gang g 2 2
wait_for "gang bound" 20 all_bound 2
wait_for "podgroup Running, written on the object" 10 sh -c "$K get pg g -o jsonpath='{.status.phase}' | grep -qx Running"
wait_for "queue status written on the object" 10 sh -c "$K get queue default -o jsonpath='{.status.running}' | grep -qx 1"
expect_match "the scheduler says where status goes" "$(cat "$T/s.log")" 'status of podgroups on the object \(no subresource\)'
expect_eq "no status subresource writes" "$(grep -c 'podgroup default/g status: 404' "$T/s.log")" 0

stop_sched s
grep -q "ERROR: AddressSanitizer\|runtime error" "$T/s.log" && fail "sanitizer report in the log"
finish
