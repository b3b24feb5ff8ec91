# A queue below its deserved share whose waiting pods all belong to gangs
# already at their minMember gets nothing back: only a gang below its
# minMember reclaims (Volcano master's gang plugin, jobStarvingFn; README,
# "Differences from Volcano").  The scheduler says so where the user looks
# at the queue (issue 23, point 4):
#   - the queue's status has the condition BelowDeserved with the numbers
#     (kubectl describe queue);
#   - kubectl kbatch queues prints it under the table;
#   - it goes once the queue has nothing waiting.
# One node of 5 cpu; queues q1 and q2 of weight 1.  Gang a (q1, minMember
# 4, four 1-cpu pods) runs first; then gang b (q2, minMember 1, four 1-cpu
# pods) gets the last cpu for one pod, and its three others wait.  Both
# queues ask 4 cpu of 5, so proportion gives each 2.5: q2 holds 1 of its
# 2.5, and b is at its minMember, so nothing is reclaimed for it.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=5
start_api --nodes "1:cpu=5,memory=20Gi"
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q1}
spec: {weight: 1}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q2}
spec: {weight: 1}
YAML
start_sched s

gang a 4 1 default q1
wait_for "gang a runs" 20 all_bound 4

create /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups \
        '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"b"},"spec":{"minMember":1,"queue":"q2"}}' >/dev/null
for i in 1 2 3 4; do
        create /api/v1/namespaces/default/pods \
                "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"b-$i\",\"annotations\":{\"scheduling.k8s.io/group-name\":\"b\"}},\"spec\":{\"schedulerName\":\"kbatch\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}" >/dev/null
done
wait_for "one of b's pods binds" 20 sh -c "[ \"\$($K get podgroup b -o jsonpath='{.status.phase}')\" = Running ]"

cond() { $K get queue q2 -o jsonpath='{.status.conditions[?(@.type=="BelowDeserved")].status} {.status.conditions[?(@.type=="BelowDeserved")].message}'; }
has_cond() { cond | grep -q '^True holds'; }
wait_for "q2's status says it is below its share" 15 has_cond
# The numbers settle once the scheduler has seen all four of b's pods (a
# session may fall between their creates and count fewer).
want='^True holds cpu 1 of 2(\.5|500m) deserved; 3 pod\(s\) wait in gangs already at their minMember, and only a gang below its minMember reclaims \(as in Volcano master\)$'
settled() { cond | grep -Eq "$want"; }
wait_for "with the numbers and the rule" 15 settled || echo "  last: $(cond)"
expect_eq "its reason" "$($K get queue q2 -o jsonpath='{.status.conditions[?(@.type=="BelowDeserved")].reason}')" \
        OnlyStarvingGangsReclaim
expect_eq "q1, at its share with nothing waiting, has none" "$($K get queue q1 -o jsonpath='{.status.conditions}')" ""
export PATH=$BIN:$PATH KUBECONFIG=$KC
out=$(kubectl kbatch queues 2>&1)
expect_match "kubectl kbatch queues says it under the table" "$out" \
        'q2: below its deserved share: holds cpu 1 of 2(\.5|500m) deserved; 3 pod\(s\) wait'
[ "$(grep -c ': below its deserved share' <<<"$out")" = 1 ] && pass "one note, q2's" || fail "notes: $out"

# b's waiting pods go: nothing waits, the condition goes.
for i in 1 2 3 4; do
        node=$($K get pod "b-$i" -o jsonpath='{.spec.nodeName}')
        [ -z "$node" ] && $K delete pod "b-$i" --wait=false >/dev/null
done
gone() { [ -z "$($K get queue q2 -o jsonpath='{.status.conditions}')" ]; }
wait_for "the condition goes once nothing waits" 15 gone
finish
