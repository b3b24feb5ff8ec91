# Network topology with real kubectl: HyperNodes applied to kbatch-apiserver
# once the scheduler runs (it schedules without their CRD, and picks them up)
# (racks rack-a and rack-b of two 4-cpu nodes each, in spine), listed by
# `kubectl get hypernodes` with the node counts the scheduler writes; a hard
# gang (highestTierAllowed 1) of 6 lands in one rack; a hard gang of 10
# fits no rack and waits, saying so; a HyperNode naming a missing member
# gets a Warning event and the rest schedules; a gang of two partitions
# (spec.subGroupPolicy) takes one rack per partition, and a bad policy is
# refused naming the field.
. "$(dirname "$0")/lib/scheduler.sh"

start_api --nodes "2:cpu=4,memory=16Gi,prefix=a" --nodes "2:cpu=4,memory=16Gi,prefix=b,label=rack=b"

# Without the HyperNode CRD (clusters that never installed it) the
# scheduler still schedules; it picks HyperNodes up once the CRD comes.
$K delete crd hypernodes.topology.volcano.sh >/dev/null
start_sched s
gang plain 2 1
wait_for "a gang binds while HyperNodes are not served" 15 all_bound 2
expect_match "the scheduler says they are not served" "$(cat "$T/s.log")" \
        'reflector hypernodes: not served by the API server'
$K apply -f "$ROOT/crds/topology.volcano.sh_hypernodes.yaml" >/dev/null
$K wait --for condition=established --timeout=10s crd/hypernodes.topology.volcano.sh >/dev/null

$K apply -f - >/dev/null <<'YAML'
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: rack-a}
spec:
  tier: 1
  tierName: rack
  members:
  - type: Node
    selector: {regexMatch: {pattern: '^a-\d+$'}}
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: rack-b}
spec:
  tier: 1
  tierName: rack
  members:
  - type: Node
    selector: {labelMatch: {matchLabels: {rack: b}}}
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: spine}
spec:
  tier: 2
  members:
  - {type: HyperNode, selector: {exactMatch: {name: rack-a}}}
  - {type: HyperNode, selector: {exactMatch: {name: rack-b}}}
---
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: bad}
spec:
  tier: 3
  members:
  - {type: HyperNode, selector: {exactMatch: {name: nowhere}}}
YAML
expect_eq "four hypernodes applied" "$($K get hn --no-headers | wc -l)" 4
out=$($K get hypernodes)
expect_match "kubectl get hypernodes prints TIER and NODECOUNT" "$out" '^NAME +TIER +TIERNAME +NODECOUNT +AGE$'

# A bad value is refused by the CRD's schema.
if $K apply -f - >/dev/null 2>"$T/err" <<'YAML'
apiVersion: topology.volcano.sh/v1alpha1
kind: HyperNode
metadata: {name: negative}
spec: {tier: -1, members: [{type: Node, selector: {exactMatch: {name: a-1}}}]}
YAML
then fail "a negative tier was accepted"; else pass "a negative tier is refused"; fi
expect_match "the refusal names the field" "$(cat "$T/err")" 'spec.tier'

counts() {
        $K get hypernodes -o custom-columns=N:.metadata.name,C:.status.nodeCount --no-headers |
                sort | tr -s ' \n' '  '
}
wait_for "the scheduler fills NODECOUNT" 25 sh -c "$(declare -f counts); K='$K'; counts | grep -q 'bad 0 rack-a 2 rack-b 2 spine 4'"
expect_match "kubectl get hypernodes shows the counts" "$($K get hypernodes)" '^spine +2 +4 '


$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: train}
spec: {minMember: 6, networkTopology: {mode: hard, highestTierAllowed: 1}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  parallelism: 6
  template:
    metadata: {annotations: {scheduling.k8s.io/group-name: train}}
    spec:
      schedulerName: kbatch
      restartPolicy: Never
      terminationGracePeriodSeconds: 1
      containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]
YAML
train_nodes() {
        $K get pods -l job-name=train -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}'
}
wait_for "the hard gang's 6 pods are bound" 20 sh -c \
        "[ \$($K get pods -l job-name=train -o jsonpath='{range .items[*]}{.spec.nodeName}{\"\\n\"}{end}' | grep -c .) = 6 ]"
expect_eq "all in one rack" "$(train_nodes | cut -c1 | sort -u | wc -l)" 1

# train goes, so the cluster has 14 cpu free (plain holds 2): a gang of 10
# 1-cpu pods would fit the cluster, and only the rack limit (8 cpu a
# rack) refuses it.
$K delete job train >/dev/null
$K delete pg train >/dev/null
wait_for "train's pods are gone" 30 sh -c "! $K get pods -l job-name=train -o name | grep -q ."
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: wide}
spec: {minMember: 10, networkTopology: {highestTierAllowed: 1}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: wide}
spec:
  parallelism: 10
  template:
    metadata: {annotations: {scheduling.k8s.io/group-name: wide}}
    spec:
      schedulerName: kbatch
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]
YAML
wait_for "the gang that fits no rack says so" 15 sh -c \
        "$K get pg wide -o jsonpath='{.status.conditions[?(@.type==\"Unschedulable\")].message}' | grep -q 'no network topology domain of tier <= 1 can hold the whole gang'"
expect_eq "and none of its pods is bound" \
        "$($K get pods -l job-name=wide -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c .)" 0
wait_for "the bad HyperNode gets a Warning event" 10 sh -c \
        "$K get events --field-selector involvedObject.kind=HyperNode,involvedObject.name=bad,reason=Ignored -o jsonpath='{.items[*].message}' | grep -q 'spec.members\[0\].selector.exactMatch.name: hypernode nowhere not found'"

# Sub-groups (spec.subGroupPolicy): two partitions of two 3-cpu pods (one
# a node), each hard within one rack, both needed.  Pods x-1 and x-3 are
# partition 0, x-2 and x-4 partition 1, so that placing them by name
# would split both partitions across the racks; each takes a rack whole.
$K delete job wide >/dev/null
$K delete pg wide >/dev/null
$K delete pods plain-1 plain-2 >/dev/null
wait_for "the other pods are gone" 30 sh -c "[ \$($K get pods -A --no-headers 2>/dev/null | wc -l) = 0 ]"
if $K apply -f - >/dev/null 2>"$T/err" <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: bad-parts}
spec: {minMember: 1, subGroupPolicy: [{name: w, subGroupSize: -1}]}
YAML
then fail "a negative subGroupSize was accepted"; else pass "a negative subGroupSize is refused"; fi
expect_match "the refusal names the field" "$(cat "$T/err")" 'subGroupPolicy\[0\].subGroupSize'
{
        cat <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: parts}
spec:
  minMember: 4
  subGroupPolicy:
  - name: worker
    subGroupSize: 2
    minSubGroups: 2
    matchLabelKeys: [part]
    networkTopology: {mode: hard, highestTierAllowed: 1}
YAML
        for i in 1 2 3 4; do
                printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: x-%s, labels: {part: "%s"},\n' "$i" $(((i + 1) % 2))
                printf '  annotations: {scheduling.k8s.io/group-name: parts}}\n'
                printf 'spec: {schedulerName: kbatch, terminationGracePeriodSeconds: 1,\n'
                printf "  containers: [{name: c, image: x, resources: {requests: {cpu: '3'}}}]}\n"
        done
} | $K apply -f - >/dev/null
wait_for "the four partitioned pods are bound" 20 all_bound 4
rack_of() { $K get pod "$1" -o jsonpath='{.spec.nodeName}' | cut -c1; }
expect_eq "partition 0 within one rack" "$(rack_of x-1)" "$(rack_of x-3)"
expect_eq "partition 1 within one rack" "$(rack_of x-2)" "$(rack_of x-4)"
if [ "$(rack_of x-1)" != "$(rack_of x-2)" ]; then pass "the partitions in different racks"
else fail "both partitions in rack $(rack_of x-1)"; fi

stop_sched s
finish
