#!/usr/bin/env bash
# kbatch-sim's command line: exit codes, messages, the JSON contract
# (DESIGN.md "Contracts"), the table, sessions, --synthetic and stdin.
# Run by `make test` with BIN set to the directory holding kbatch-sim.
. "$(dirname "$0")/lib/sim.sh"

cat >"$TMP/gang.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: a, namespace: team}
spec: {minMember: 3}
---
apiVersion: batch/v1
kind: Job
metadata: {name: a, namespace: team}
spec:
  parallelism: 3
  template:
    metadata: {annotations: {scheduling.k8s.io/group-name: a}}
    spec:
      schedulerName: kbatch
      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]
YAML

cat >"$TMP/badqty.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: 12Qi}}
YAML

# ---- usage -------------------------------------------------------------------

run "--help" 0 --help
check "--help prints the usage" "$TMP/out" "usage: kbatch-sim"

run "no input" 2
check "no input says why" "$TMP/err" "no manifests, no --synthetic and no --swf"

run "--output bogus" 2 --output bogus "$TMP/gang.yaml"
check "--output bogus names the option and value" "$TMP/err" '--output: want json or table, got "bogus"'

run "bad quantity" 2 "$TMP/badqty.yaml"
check "bad quantity names file, object and field" "$TMP/err" \
        "$TMP/badqty.yaml:1: node n1: status.allocatable.cpu: malformed quantity \"12Qi\""

run "missing file" 2 "$TMP/nope.yaml"
check "missing file is named" "$TMP/err" "$TMP/nope.yaml"

cat >"$TMP/badsel.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  schedulerName: kbatch
  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchExpressions: [{key: app, operator: Near, values: [x]}]}, topologyKey: zone}]}}
  containers: [{name: c}]
EOF
run "bad selector" 2 "$TMP/badsel.yaml"
check "bad selector names file, pod and field" "$TMP/err" \
        "$TMP/badsel.yaml:1: pod default/p: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].operator: unknown operator \"Near\""

# ---- JSON -------------------------------------------------------------------------

# Two empty 4-cpu nodes, a gang of three 1-cpu pods: n1, n2, n1 (the
# scenario "gang with room binds all").
run "json" 0 --output json "$TMP/gang.yaml"
if command -v python3 >/dev/null 2>&1; then
        if python3 - "$TMP/out" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
doc = json.loads(text)                      # exactly one document
assert text.strip().count("\n") == 0, "one line, one document"
s = doc["sessions"]
assert [x["index"] for x in s] == [1]
assert isinstance(s[0]["durationSeconds"], (int, float))
binds = sorted((b["pod"], b["node"]) for b in s[0]["binds"])
assert binds == [("team/a-0", "n1"), ("team/a-1", "n2"), ("team/a-2", "n1")], binds
assert s[0]["evictions"] == []
pg = s[0]["podGroups"]
assert len(pg) == 1
assert pg[0]["podGroup"] == "team/a" and pg[0]["phase"] == "Running"
assert pg[0]["running"] == 0 and pg[0]["pending"] == 0
c = pg[0]["conditions"]
assert c and set(c[0]) == {"type", "status", "reason", "message"}
PY
        then ok "json follows the contract"; else bad "json follows the contract"; cat "$TMP/out"; fi
else
        for key in '"sessions":[' '"index":1' '"durationSeconds":' '"binds":[' \
                '"pod":"team/a-0","node":"n1"' '"evictions":[]' '"podGroups":[' \
                '"podGroup":"team/a"' '"phase":"Running"' '"running":0' '"pending":0' '"conditions":['; do
                check "json has $key" "$TMP/out" "$key"
        done
fi

# ---- table -----------------------------------------------------------------------

run "table" 0 --output table "$TMP/gang.yaml"
for section in "Session 1:" "Binds" "PodGroups" "Queues"; do
        check "table has $section" "$TMP/out" "$section"
done
check "table lists the binds of n1" "$TMP/out" "team/a-0 team/a-2"

# Columns are as wide as their longest cell: a long PodGroup name pushes
# the PHASE column right, in the header and in every row alike.
long=a-podgroup-whose-name-is-far-longer-than-thirty-two-characters
sed "s/name: a, namespace: team/name: $long, namespace: team/; s/group-name: a}/group-name: $long}/" \
        "$TMP/gang.yaml" >"$TMP/long.yaml"
run "table with a long name" 0 --output table "$TMP/long.yaml"
header="$(grep -m1 '  PODGROUP ' "$TMP/out" || true)"
row="$(grep -m1 "  team/$long " "$TMP/out" || true)"
hcol="${header%%PHASE*}"
rcol="${row%%Running*}"
if [ -n "$header" ] && [ -n "$row" ] && [ "${#hcol}" = "${#rcol}" ]; then
        ok "PHASE lines up under a long name (column ${#hcol})"
else
        bad "PHASE does not line up: header \"$header\", row \"$row\""
fi

# Pods without a PodGroup are in the JSON too, with their node.
cat >"$TMP/lone.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '2', memory: 8Gi, pods: '110'}}
---
apiVersion: v1
kind: Pod
metadata: {name: small, namespace: team}
spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: wide, namespace: team}
spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: '4'}}}]}
YAML
# Each gets a PodGroup of its own (podgroup-pod-<name>, as kbatch makes
# for a pod that names none); with --workload-podgroups=false each stays a
# pod of no group, listed as such.
run "pods without a group" 0 --output json "$TMP/lone.yaml"
check "a bound pod gets its own group" "$TMP/out" '"podGroup":"team/podgroup-pod-small","phase":"Running"'
check "a waiting pod gets its own group" "$TMP/out" '"podGroup":"team/podgroup-pod-wide","phase":"Pending"'
check "queues are in the JSON" "$TMP/out" '"queues":[{"name":"default","state":"Open"'
run "pods left without a group" 0 --workload-podgroups=false --output json "$TMP/lone.yaml"
check "a bound pod without a group" "$TMP/out" '"pod":"team/small","phase":"Running","node":"n1"'
check "a waiting pod without a group" "$TMP/out" '"pod":"team/wide","phase":"Pending"'
run "--workload-podgroups=maybe" 2 --workload-podgroups=maybe "$TMP/lone.yaml"
check "--workload-podgroups wants true or false" "$TMP/err" 'want true or false, got "maybe"'

# ---- sessions -------------------------------------------------------------------

# Session 2 binds nothing more: the pods run, the group is Running.
run "--sessions 2" 0 --sessions 2 --output json "$TMP/gang.yaml"
if command -v python3 >/dev/null 2>&1; then
        if python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["sessions"]
assert [x["index"] for x in s] == [1, 2]
assert len(s[0]["binds"]) == 3 and s[1]["binds"] == []
assert s[1]["podGroups"][0]["phase"] == "Running" and s[1]["podGroups"][0]["running"] == 3
' "$TMP/out"; then ok "two sessions"; else bad "two sessions"; cat "$TMP/out"; fi
else
        check "session 2 present" "$TMP/out" '"index":2'
fi
run "--sessions 2 table" 0 --sessions 2 --output table "$TMP/gang.yaml"
check "table shows session 2" "$TMP/out" "Session 2: 0 bind(s)"

# ---- synthetic -------------------------------------------------------------------

# 2 nodes of 4 cpu (8 in all), 3 gangs of three 1-cpu pods, minMember 3,
# one queue.  Groups go FIFO: pg-000001 and pg-000002 take 6 cpu; pg-000003
# finds 2 cpu for its 3 pods and is rolled back.  6 binds.
run "--synthetic" 0 --output json \
        --synthetic nodes=2,node-cpu=4,node-memory=8Gi,groups=3,group-size=3,pod-cpu=1,pod-memory=1Gi
n="$(grep -o '"node":' "$TMP/out" | wc -l | tr -d ' ')"
if [ "$n" = 6 ]; then ok "--synthetic binds 6 pods"; else bad "--synthetic binds $n pods, want 6"; fi
if grep -qF '"pod":"default/pg-000003-' "$TMP/out"; then
        bad "--synthetic: the third gang must not bind"
else
        ok "--synthetic: the third gang waits"
fi

# Synthetic nodes carry the kubelet's well-known labels: a pod selecting
# kubernetes.io/os: linux and kubernetes.io/arch: amd64 binds to one.
cat >"$TMP/linux.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: needs-linux}
spec:
  schedulerName: kbatch
  nodeSelector: {kubernetes.io/os: linux, kubernetes.io/arch: amd64}
  containers: [{name: c, resources: {requests: {cpu: '1'}}}]
EOF
run "--synthetic nodes are labelled os and arch" 0 --output json --synthetic nodes=1 "$TMP/linux.yaml"
check "a pod selecting os and arch binds to a synthetic node" "$TMP/out" '"pod":"default/needs-linux","node":"node-000001"'

# A queue below its share whose waiting pods are in a gang already at its
# minMember: nothing is reclaimed for them (only gangs below minMember
# reclaim), and the queue's entry counts them.  One node of 5 cpu: gang a
# (q1, minMember 1) runs 4 pods, gang b (q2, minMember 1) runs 1 and 3
# wait; each queue deserves 2.5 cpu, q2 holds 1.  No eviction.
cat >"$TMP/unreclaimed.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '5', memory: 20Gi, pods: '110'}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q1}
spec: {weight: 1}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q2}
spec: {weight: 1}
EOF
# unreclaimed_pod GROUP INDEX [NODE]: a 1-cpu pod of GROUP, Running on NODE.
unreclaimed_pod() {
        printf -- '---\napiVersion: v1\nkind: Pod\n'
        printf 'metadata: {name: %s-%s, annotations: {scheduling.k8s.io/group-name: %s}}\n' "$1" "$2" "$1"
        printf 'spec: {schedulerName: kbatch,%s containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}}}]}\n' \
                "${3:+ nodeName: $3,}"
        [ -z "${3:-}" ] || printf 'status: {phase: Running}\n'
}
{
        for g in a:q1 b:q2; do
                printf -- '---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n'
                printf 'metadata: {name: %s}\nspec: {minMember: 1, queue: %s}\n' "${g%:*}" "${g#*:}"
        done
        for i in 0 1 2 3; do unreclaimed_pod a $i n1; done
        unreclaimed_pod b 0 n1
        for i in 1 2 3; do unreclaimed_pod b $i; done
} >>"$TMP/unreclaimed.yaml"
. "$(dirname "$0")/../bench/conf.sh"
conf "enqueue, allocate, reclaim, backfill" >"$TMP/reclaim.conf"
run "a queue below its share, nothing reclaimed" 0 --output json --scheduler-conf "$TMP/reclaim.conf" "$TMP/unreclaimed.yaml"
check "q2 counts its 3 unreclaimed pods" "$TMP/out" '"name":"q2","state":"Open","deserved":{"cpu":"2500m","memory":"4Gi","pods":"4"},"allocated":{"cpu":"1","memory":"1Gi","pods":"1"},"inqueue":0,"pending":0,"running":1,"unreclaimed":3}'
check "and nothing is evicted" "$TMP/out" '"evictions":[]'

# W6 in small: 20 nodes in 2 zones, 4 gangs of 5 whose pods must not share
# a node, 2 of them also spread over the zones (maxSkew 1), under a conf that
# packs (mostrequested): all 20 bind, and no gang twice on a node (without
# the anti-affinity, packing puts two pods of one gang on a node 7 times).
cat >"$TMP/pack.conf" <<'EOF'
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
    arguments: {leastrequested.weight: 0, mostrequested.weight: 1, balancedresource.weight: 0}
EOF
run "--synthetic with inter-pod rules" 0 --output json --scheduler-conf "$TMP/pack.conf" \
        --synthetic nodes=20,node-cpu=8,node-memory=16Gi,groups=4,group-size=5,pod-cpu=1,pod-memory=1Gi,zones=2,anti-affinity=1,spread-groups=2
n="$(grep -o '"node":' "$TMP/out" | wc -l | tr -d ' ')"
if [ "$n" = 20 ]; then ok "--synthetic inter-pod rules: 20 binds"; else bad "--synthetic inter-pod rules: $n binds, want 20"; fi
dup="$(grep -o '"pod":"default/pg-[0-9]*-[0-9]*","node":"[^"]*"' "$TMP/out" |
        sed 's|"pod":"default/\(pg-[0-9]*\)-[0-9]*","node":"\([^"]*\)"|\1 \2|' | sort | uniq -d | wc -l | tr -d ' ')"
if [ "$dup" = 0 ]; then ok "--synthetic: no gang twice on a node"; else bad "--synthetic: $dup gang(s) twice on a node"; fi

# The defaults add nothing but what is asked for: four nodes, no pods.
run "--synthetic nodes=4" 0 --output json --synthetic nodes=4
check "--synthetic nodes=4 adds no pod" "$TMP/out" '"binds":[],'
check "--synthetic nodes=4 adds no group" "$TMP/out" '"podGroups":[],'
run "--help" 0 --help
check "--help shows the synthetic defaults" "$TMP/out" \
        "nodes=0 node-cpu=32 node-memory=128Gi node-pods=110"
check "--help shows the group defaults" "$TMP/out" "groups=0 group-size=10 pod-cpu=1 pod-memory=1Gi"

run "--synthetic bad spec" 2 --synthetic nodes=2,bogus=1
check "--synthetic names the bad key" "$TMP/err" 'unknown key "bogus"'

# ---- the conf says what it does ---------------------------------------------------

# A Volcano conf naming what kbatch lacks loads, says so in one line, and
# --strict-conf refuses it; a conf with no action is an error.
cat >"$TMP/volcano.conf" <<'EOF'
actions: "enqueue, allocate, shuffle, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: tdm
  - name: nodeorder
    arguments: {selectorspread.weight: 3}
EOF
run "a conf with skipped items" 0 --output json --scheduler-conf "$TMP/volcano.conf" "$TMP/gang.yaml"
check "one summary line of what is skipped" "$TMP/err" \
        "kbatch-sim: conf: kbatch skips 3 item(s) it does not support: action shuffle, plugin tdm, argument nodeorder selectorspread.weight"
check "the gang still binds" "$TMP/out" '"pod":"team/a-1"'
run "--strict-conf refuses it" 2 --strict-conf --scheduler-conf "$TMP/volcano.conf" "$TMP/gang.yaml"
check "--strict-conf names what would be skipped" "$TMP/err" \
        "--strict-conf: kbatch would skip 3 item(s): action shuffle, plugin tdm"
run "--strict-conf with the default conf" 0 --strict-conf --output json "$TMP/gang.yaml"
printf 'actions: ""\n' >"$TMP/idle.conf"
run "a conf without actions" 2 --scheduler-conf "$TMP/idle.conf" "$TMP/gang.yaml"
check "no action is an error" "$TMP/err" "actions: no action given; the scheduler would do nothing"

# sla, and proportion with capacity: Volcano confs that load (strictly
# too).  A bad sla-waiting-time argument is an error naming it; a bad
# annotation is a warning naming the PodGroup and the annotation, and the
# gang binds.
cat >"$TMP/sla.conf" <<'EOF'
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: gang
  - name: sla
    arguments: {sla-waiting-time: 5m}
- plugins:
  - name: predicates
  - name: proportion
  - name: capacity
EOF
sed 's/5m/soon/' "$TMP/sla.conf" >"$TMP/badsla.conf"
cat >"$TMP/slagang.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: a, namespace: team, annotations: {volcano.sh/sla-waiting-time: soon}}
spec: {minMember: 2}
---
apiVersion: batch/v1
kind: Job
metadata: {name: a, namespace: team}
spec:
  parallelism: 2
  template:
    metadata: {annotations: {scheduling.k8s.io/group-name: a}}
    spec:
      schedulerName: kbatch
      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]
YAML
run "sla, proportion and capacity in one conf" 0 --strict-conf \
        --scheduler-conf "$TMP/sla.conf" "$TMP/slagang.yaml"
check "the gang binds" "$TMP/out" "team/a-1"
check "proportion with capacity is said" "$TMP/err" \
        "(proportion) and tiers[1].plugins[2] (capacity): both set the queues' quotas"
check "a bad sla annotation is said" "$TMP/out" \
        "metadata.annotations.volcano.sh/sla-waiting-time: invalid duration"
run "a bad sla-waiting-time argument" 2 --scheduler-conf "$TMP/badsla.conf" "$TMP/gang.yaml"
check "the bad argument is named" "$TMP/err" \
        "tiers[0].plugins[1] (sla).arguments.sla-waiting-time: invalid duration"

# ---- network topology ---------------------------------------------------------------

EX="$(dirname "$0")/../../examples/sim/topology.yaml"
run "the topology example" 0 --output table "$EX"
check "its hard gang lands in rack r2" "$TMP/out" "default/train   Running   0         0         r2"
check "and the wide gang waits whole" "$TMP/out" "no network topology domain of tier <= 1 can hold the whole gang"
run "the topology example as JSON" 0 --output json "$EX"
check "the domain is in the JSON" "$TMP/out" '"podGroup":"default/train","phase":"Running","running":0,"pending":0,"domain":"r2"'
EX="$(dirname "$0")/../../examples/sim/subgroups.yaml"
run "the sub-groups example" 0 --output json "$EX"
check "each partition takes a rack of its own" "$TMP/out" \
        '"binds":[{"pod":"default/t-0","node":"n1"},{"pod":"default/t-1","node":"n3"},{"pod":"default/t-2","node":"n2"},{"pod":"default/t-3","node":"n4"}]'
run "synthetic racks and hard gangs" 0 --output json --stats \
        --synthetic nodes=8,blocks=2,racks=2,groups=3,group-size=2,group-size-max=3,hard-tier=1:2,hypernodes=1
check "--stats counts gangs by domain tier" "$TMP/err" "running gangs by network topology domain: tier 1: 3, none: 0"
# --stats' last line counts gangs by their bound pods: a whole (3 of
# minMember 3), c partly (its one pod given bound, of minMember 3), d not at
# all (the pod naming group d lives in another namespace).
cat >"$TMP/stats.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: a, namespace: team}
spec: {minMember: 3}
---
apiVersion: batch/v1
kind: Job
metadata: {name: a, namespace: team}
spec:
  parallelism: 3
  template:
    metadata: {annotations: {scheduling.k8s.io/group-name: a}}
    spec:
      schedulerName: kbatch
      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: c, namespace: team}
spec: {minMember: 3}
---
apiVersion: v1
kind: Pod
metadata: {name: c-0, namespace: team, annotations: {scheduling.k8s.io/group-name: c}}
spec:
  schedulerName: kbatch
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]
status: {phase: Running}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: d, namespace: team}
spec: {minMember: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: x-0, namespace: other, annotations: {scheduling.k8s.io/group-name: d}}
spec:
  schedulerName: kbatch
  nodeName: n1
  containers: [{name: c, resources: {requests: {cpu: '0', memory: 1Gi}}}]
status: {phase: Running}
YAML
run "--stats on gangs whole, partial and empty" 0 --sessions 1 --stats --output json "$TMP/stats.yaml"
check "--stats counts gangs fully and partly bound" "$TMP/err" \
        "pods bound: 5 of 5; gangs fully bound: 1, partly bound: 1, of 3;"

# ---- stdin -------------------------------------------------------------------------

got=0
"$SIM" --output json - <"$TMP/gang.yaml" >"$TMP/out" 2>"$TMP/err" || got=$?
if [ "$got" = 0 ]; then ok "- reads stdin (exit 0)"; else bad "- reads stdin: exit $got"; fi
check "stdin manifest binds" "$TMP/out" '"pod":"team/a-1","node":"n2"'
got=0
"$SIM" - <"$TMP/badqty.yaml" >"$TMP/out" 2>"$TMP/err" || got=$?
if [ "$got" = 2 ]; then ok "bad stdin exits 2"; else bad "bad stdin: exit $got"; fi
check "stdin errors say <stdin>" "$TMP/err" "<stdin>:1: node n1: status.allocatable.cpu"
# An escaped NUL would cut the string short: refused, naming the field.
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    note: "a\\0evil"\n' >"$TMP/nul.yaml"
got=0
"$SIM" "$TMP/nul.yaml" >"$TMP/out" 2>"$TMP/err" || got=$?
if [ "$got" = 2 ]; then ok "NUL in a string exits 2"; else bad "NUL in a string: exit $got"; fi
check "NUL names the field" "$TMP/err" 'nul.yaml:6: metadata.annotations.note: a NUL character'

# A trace replayed under two confs, side by side: greedy (the built-in
# conf, as a file) and EASY (the reservation plugin, depth 1).  Four
# one-cpu nodes: A (2 procs, 100 s) runs, W (4 procs, 50 s) waits, S (1,
# 60 s) ends before A, L (1, 500 s) does not.  Greedy starts L at 21: W
# waits until 521 (longest wait 511 s).  EASY keeps L off W's room: W
# starts at 100 (90 s), L at 150 (longest wait 129 s).
printf '; MaxNodes: 4\n1 0 -1 100 2 -1 -1 -1 -1\n2 10 -1 50 4 -1 -1 -1 -1\n3 20 -1 60 1 -1 -1 -1 -1\n4 21 -1 500 1 -1 -1 -1 -1\n' >"$TMP/easy.swf"
printf 'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]\n' >"$TMP/greedy.conf"
{ cat "$TMP/greedy.conf"; printf -- '- plugins: [{name: reservation, arguments: {resolution: 1s}}]\n'; } >"$TMP/easy.conf"
got=0
"$SIM" --swf "$TMP/easy.swf" --compare-confs "$TMP/greedy.conf,$TMP/easy.conf" --output table >"$TMP/out" 2>"$TMP/err" || got=$?
if [ "$got" = 0 ]; then ok "--compare-confs runs"; else bad "--compare-confs: exit $got"; cat "$TMP/err"; fi
check "--compare-confs: one column per conf" "$TMP/out" "greedy.conf"
check "--compare-confs: greedy's longest wait" "$TMP/out" "wait max "
if grep -Eq '^wait max +511s +129s *$' "$TMP/out"; then ok "--compare-confs: 511 s against 129 s"
else bad "--compare-confs: longest waits"; cat "$TMP/out"; fi
got=0
# --plot overlays the queue lengths: one line per conf, named in the legend.
got=0
"$SIM" --swf "$TMP/easy.swf" --compare-confs "$TMP/greedy.conf,$TMP/easy.conf" --plot "$TMP/cmp.svg" \
        --output json >"$TMP/out" 2>"$TMP/err" || got=$?
if [ "$got" = 0 ]; then ok "--compare-confs --plot runs"; else bad "--compare-confs --plot: exit $got"; cat "$TMP/err"; fi
check "--compare-confs --plot: an SVG" "$TMP/cmp.svg" "Queue length: gangs waiting, one line per conf"
check "--compare-confs --plot: greedy in the legend" "$TMP/cmp.svg" "greedy.conf</text>"
check "--compare-confs --plot: easy in the legend" "$TMP/cmp.svg" "easy.conf</text>"
# Greedy keeps W waiting alone from 0:10 to 8:41; EASY has W and L
# waiting together from 0:21 to 1:40.
check "--compare-confs --plot: greedy's queue" "$TMP/cmp.svg" "mean wait 0:02:07, peak 1 waiting"
check "--compare-confs --plot: easy's queue" "$TMP/cmp.svg" "mean wait 0:00:54, peak 2 waiting"
n=$(grep -c '<polyline' "$TMP/cmp.svg" || true)
if [ "$n" = 2 ]; then ok "--compare-confs --plot: one line per conf"; else bad "--compare-confs --plot: $n lines"; fi
got=0
"$SIM" --swf "$TMP/easy.swf" --compare-confs "$TMP/greedy.conf,$TMP/nope.conf" >"$TMP/out" 2>"$TMP/err" || got=$?
if [ "$got" = 2 ]; then ok "--compare-confs: a missing conf exits 2"; else bad "missing conf: exit $got"; fi
check "--compare-confs: the missing conf is named" "$TMP/err" "nope.conf"

echo "sim_cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
