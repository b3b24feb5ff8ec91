# capacity with enableHierarchy through kbatch-scheduler and kbatch-apiserver:
# a three-level queue tree binds only what its capabilities allow, queue
# status shows allocated and deserved, and a user closes and reopens a queue
# with plain kubectl (README, "Closing and reopening a queue").
#
#   root -> org (capability 6 cpu, deserved 6) -> team (capability 4, deserved
#   4) -> {alpha, beta} (deserved 2 each); org -> ops (deserved 2); root -> solo
#
# Two nodes of 8 cpu: the nodes would take every pod below; the queues do not.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8
start_api --nodes "2:cpu=8,memory=32Gi"

cat >"$T/conf.yaml" <<'YAML'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: capacity
    enableHierarchy: true
  - name: nodeorder
YAML

queue() { # NAME SPEC
        printf -- '---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: %s}\nspec: {%s}\n' "$1" "$2"
}
group() { # NAME QUEUE PODS: a PodGroup of minMember 1 and PODS pods of 1 cpu
        printf -- '---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: %s}\nspec: {minMember: 1, queue: %s}\n' "$1" "$2"
        for i in $(seq 0 $(($3 - 1))); do
                printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-%s, annotations: {scheduling.k8s.io/group-name: %s}}\nspec: {schedulerName: kbatch, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}\n' "$1" "$i" "$1"
        done
}
# bound PREFIX: how many pods named PREFIX-<n> have a node
bound() {
        $K get pods -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{"\n"}{end}' |
                grep "^$1-[0-9]*=" | grep -vc '=$'
}
state() { $K get queue "$1" -o jsonpath='{.status.state}'; }

{
        queue org "capability: {cpu: '6'}, deserved: {cpu: '6'}"
        queue team "parent: org, capability: {cpu: '4'}, deserved: {cpu: '4'}"
        queue alpha "parent: team, deserved: {cpu: '2'}"
        queue beta "parent: team, deserved: {cpu: '2'}"
        queue ops "parent: org, deserved: {cpu: '2'}"
        queue solo ""
        group a alpha 4
        group b beta 4
        group o ops 1
} | $K apply -f - >/dev/null

start_sched s --scheduler-conf "$T/conf.yaml"

# team's capability (4) bounds alpha and beta together; ops' one pod fits
# org (4 + 1 <= 6).  Five pods run on 16 cpu.
wait_for "alpha and beta fill team's capability: 4 pods" 20 sh -c \
        "[ \$(( \$($K get pods -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{\"\\n\"}{end}' | grep -E '^(a|b)-' | grep -vc '=\$') )) = 4 ]"
wait_for "ops' pod runs" 10 sh -c "[ \"\$($K get pod o-0 -o jsonpath='{.spec.nodeName}')\" != '' ]"
sleep 1
expect_eq "no more than team's 4 for alpha and beta" "$(($(bound a) + $(bound b)))" 4

# org's capability (6) bounds ops: of three more pods, one binds.
group o2 ops 3 | $K apply -f - >/dev/null
wait_for "ops takes org's last cpu" 20 sh -c "[ \$($K get pods -o jsonpath='{range .items[*]}{.metadata.name}={.spec.nodeName}{\"\\n\"}{end}' | grep '^o2-' | grep -vc '=\$') = 1 ]"
sleep 1
expect_eq "org's 6 cpu are all that is bound" "$(($(bound a) + $(bound b) + $(bound o) + $(bound o2)))" 6

# Queue status: allocated and deserved, shown by kubectl get queues.
wait_for "team's deserved is published" 10 sh -c \
        "[ \"\$($K get queue team -o jsonpath='{.status.deserved.cpu}')\" = 4 ]"
out=$($K get queue ops) # no weight set: that column is empty
expect_match "kubectl get queues shows allocated and deserved cpu" "$out" \
        '^ops +Open +2 +0 +0 +2 +2 +[0-9]+s$'
# A parent's allocated is its subtree's: team holds alpha's and beta's 4,
# org team's 4 and ops' 2.
wait_for "team's allocated is its children's 4 cpu" 10 sh -c \
        "[ \"\$($K get queue team -o jsonpath='{.status.allocated.cpu}')\" = 4 ]"
expect_eq "org's allocated is its subtree's 6 cpu" "$($K get queue org -o jsonpath='{.status.allocated.cpu}')" 6
out=$($K get queue ops -o wide)
expect_match "-o wide adds memory" "$out" 'ALLOCATED-MEMORY +DESERVED-MEMORY'

# Close solo (the README's command): it admits nothing new.
$K patch queue solo --subresource=status --type=merge -p '{"status":{"state":"Closed"}}' >/dev/null
expect_eq "solo is Closed" "$(state solo)" Closed
group s solo 1 | $K apply -f - >/dev/null
wait_for "a group in a Closed queue says why it waits" 10 sh -c \
        "$K get pg s -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q 'queue solo is Closed'"
sleep 1
expect_eq "nothing of it is bound" "$(bound s)" 0
expect_eq "the scheduler leaves the user's state alone" "$(state solo)" Closed
# Reopen it: the group is admitted and binds.
$K patch queue solo --subresource=status --type=merge -p '{"status":{"state":"Open"}}' >/dev/null
wait_for "reopened, solo's group binds" 15 sh -c "[ \"\$($K get pod s-0 -o jsonpath='{.spec.nodeName}')\" != '' ]"

# Closing ops while its pods run: it stays Closing; once its work is gone the
# scheduler marks it Closed.
$K patch queue ops --subresource=status --type=merge -p '{"status":{"state":"Closing"}}' >/dev/null
sleep 1
expect_eq "ops with running pods stays Closing" "$(state ops)" Closing
$K delete pods o-0 o2-0 o2-1 o2-2 --wait=false >/dev/null
$K delete podgroups o o2 >/dev/null
wait_for "ops, empty, becomes Closed" 15 sh -c "[ \"\$($K get queue ops -o jsonpath='{.status.state}')\" = Closed ]"

check_no_overcommit
stop_sched s
finish
