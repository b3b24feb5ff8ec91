# kbatch-scheduler says what it reads but does not act on: a conf naming
# actions, plugins or arguments kbatch lacks runs with one startup line and
# a /metrics series per skipped item; --strict-conf refuses it (exit 2); a
# PodGroup or pod setting fields kbatch does not evaluate yet gets a
# Warning event instead of being scheduled in silence.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=8
start_api --nodes "2:cpu=8,memory=32Gi"

cat >"$T/volcano.conf" <<'YAML'
actions: "enqueue, allocate, shuffle, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: tdm
  - name: predicates
  - name: proportion
  - name: nodeorder
    arguments: {selectorspread.weight: 3}
YAML

rc=0
out=$("$BIN/kbatch-scheduler" --kubeconfig "$KC" --scheduler-conf "$T/volcano.conf" \
        --strict-conf 2>&1) || rc=$?
expect_eq "--strict-conf refuses a conf with skipped items" "$rc" 2
expect_match "--strict-conf names them" "$out" \
        'strict-conf: kbatch would skip 3 item\(s\): action shuffle, plugin tdm, argument nodeorder selectorspread.weight'

PORT_M=$(free_port)
start_sched s --scheduler-conf "$T/volcano.conf" --listen-address 127.0.0.1:$PORT_M
wait_for "default queue created" 15 $K get queue default
expect_eq "one startup line lists what is skipped" \
        "$(grep -c 'kbatch skips 3 item(s) it does not support: action shuffle, plugin tdm, argument nodeorder selectorspread.weight' "$T/s.log")" 1
wait_for "/metrics lists the skipped plugin" 10 sh -c \
        "curl -s http://127.0.0.1:$PORT_M/metrics | grep -qx 'kbatch_conf_skipped{kind=\"plugin\",name=\"tdm\"} 1'"
m=$(curl -s "http://127.0.0.1:$PORT_M/metrics")
expect_eq "/metrics lists all three" "$(printf '%s\n' "$m" | grep -c '^kbatch_conf_skipped{')" 3

# A PodGroup with a soft sub-group topology whose pods claim dynamic
# resources (the topology and required anti-affinity, which kbatch
# evaluates, are not reported).
$K apply -f - >/dev/null <<'YAML'
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: topo}
spec: {minMember: 2, subGroupPolicy: [{name: s, networkTopology: {mode: soft}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: topo-0, labels: {app: topo}, annotations: {scheduling.k8s.io/group-name: topo}}
spec:
  schedulerName: kbatch
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: topo}}
        topologyKey: kubernetes.io/hostname
  resourceClaims: [{name: gpu, resourceClaimName: gpu}]
  containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: topo-1, labels: {app: topo}, annotations: {scheduling.k8s.io/group-name: topo}}
spec:
  schedulerName: kbatch
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: topo}}
        topologyKey: kubernetes.io/hostname
  resourceClaims: [{name: gpu, resourceClaimName: gpu}]
  containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]
YAML
wait_for "Unsupported warning event on the podgroup" 15 sh -c \
        "$K get events --field-selector involvedObject.kind=PodGroup,involvedObject.name=topo,reason=Unsupported -o jsonpath='{.items[*].message}' | grep -q 'absent: pod topo-0 (and 1 more): spec.resourceClaims'"
expect_eq "the event is a Warning" \
        "$($K get events --field-selector involvedObject.name=topo,reason=Unsupported -o jsonpath='{.items[0].type}')" Warning

stop_sched s
finish
