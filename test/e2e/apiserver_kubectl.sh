# kubectl against kbatch-apiserver: every command kbatch users run, with the
# printed output checked.
if ! command -v kubectl >/dev/null 2>&1; then
        # Debian has no kubectl package of a version we support; the
        # project's machines ship one.  Say so rather than fail or pass
        # silently.
        echo "SKIPPED: kubectl is not installed; the kubectl e2e checks did not run"
        exit 0
fi
. "$(dirname "$0")/lib/apiserver.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

start_server --nodes "2:cpu=8,memory=32Gi,pods=110,label=pool=cpu" \
        --nodes "1:cpu=16,memory=64Gi,nvidia.com/gpu=8,prefix=gpu"

out=$($K version 2>&1)
expect_match "version reports 1.32" "$out" '^Server Version: v1\.32\.0$'

out=$($K get nodes -o wide)
expect_match "nodes wide header" "$out" '^NAME +STATUS +ROLES +AGE +VERSION +INTERNAL-IP +EXTERNAL-IP +OS-IMAGE +KERNEL-VERSION +CONTAINER-RUNTIME$'
expect_match "node-1 ready" "$out" '^node-1 +Ready +<none> +[0-9]+s +v1\.32\.0 +10\.0\.0\.1 +<none> '
expect_match "gpu-1 exists" "$out" '^gpu-1 +Ready '
out=$($K get nodes -l pool=cpu -o name)
expect_eq "label selector on nodes" "$out" "$(printf 'node/node-1\nnode/node-2')"
out=$($K get node gpu-1 -o jsonpath='{.status.allocatable.nvidia\.com/gpu} {.status.capacity.cpu}')
expect_eq "gpu node allocatable" "$out" "8 16"

out=$($K get ns)
expect_match "default namespace" "$out" '^default +Active +[0-9]+s$'
expect_match "kube-system namespace" "$out" '^kube-system +Active'

# CRDs, then their resources show up in discovery at once.
out=$($K apply -f "$ROOT/crds/")
expect_match "crd podgroups created" "$out" '^customresourcedefinition.apiextensions.k8s.io/podgroups.scheduling.volcano.sh created$'
out=$($K wait --for=condition=established --timeout=10s crd/podgroups.scheduling.volcano.sh crd/queues.scheduling.volcano.sh)
expect_match "crds established" "$out" 'queues.scheduling.volcano.sh condition met'
out=$($K api-resources --api-group=scheduling.volcano.sh)
expect_match "api-resources podgroups" "$out" '^podgroups +pg,podgroup-v1beta1 +scheduling.volcano.sh/v1beta1 +true +PodGroup$'
expect_match "api-resources queues" "$out" '^queues +q,queue-v1beta1 +scheduling.volcano.sh/v1beta1 +false +Queue$'
out=$($K get crd)
expect_match "crd list prints Created At" "$out" '^podgroups.scheduling.volcano.sh +[0-9]{4}-[0-9]{2}-[0-9]{2}T'

out=$($K apply -f "$ROOT/examples/")
expect_match "queue created" "$out" '^queue.scheduling.volcano.sh/team-a created$'
expect_match "podgroup created" "$out" '^podgroup.scheduling.volcano.sh/train created$'
expect_match "job created" "$out" '^job.batch/train created$'
out=$($K apply -f "$ROOT/examples/")
expect_match "second apply unchanged" "$out" '^podgroup.scheduling.volcano.sh/train unchanged$'
expect_no_match "second apply changes nothing" "$out" 'configured|created'

# Volcano's columns, QUEUE only with -o wide; a fresh podgroup has no status.
out=$($K get podgroups)
expect_match "podgroups header" "$out" '^NAME +STATUS +MINMEMBER +RUNNINGS +AGE$'
expect_match "podgroup train row" "$out" '^train +4 +[0-9]+s$'
out=$($K get pg -o wide)
expect_match "podgroups wide header" "$out" '^NAME +STATUS +MINMEMBER +RUNNINGS +AGE +QUEUE +EXPECTED-START$'
expect_match "podgroup huge wide row (no expected start: no reservation plugin)" "$out" '^huge +16 +[0-9]+s +team-b *$'
out=$($K get podgroups.scheduling.volcano.sh -A)
expect_match "podgroups -A has NAMESPACE" "$out" '^default +train +4 +[0-9]+s$'
out=$($K get q)
expect_match "queues header" "$out" '^NAME +WEIGHT +STATE +RUNNING +PENDING +INQUEUE +ALLOCATED-CPU +DESERVED-CPU +AGE$'
expect_match "queue team-a weight 2" "$out" '^team-a +2 +[0-9]+s$'
out=$($K get q team-a -o wide)
expect_match "queue wide: capability and reclaimable" "$out" \
        '^team-a +2 +[0-9]+s +24 +<none> +true$|^team-a +2 +[0-9]+s +24 + true$'

out=$($K get pg train -o yaml)
expect_match "yaml minMember" "$out" '^  minMember: 4$'
expect_match "yaml uid" "$out" '^  uid: [0-9a-f-]{36}$'
out=$($K get pg train -o json | grep -c '"resourceVersion"')
expect_eq "json has resourceVersion" "$out" "1"
out=$($K get pg -o name)
expect_eq "-o name" "$out" "$(printf 'podgroup.scheduling.volcano.sh/cleanup\npodgroup.scheduling.volcano.sh/huge\npodgroup.scheduling.volcano.sh/train')"

# The Job controller made the pods; they join the gang through the annotation.
out=$($K get jobs)
expect_match "jobs header" "$out" '^NAME +STATUS +COMPLETIONS +DURATION +AGE$'
expect_match "train job 0/4" "$out" '^train +Running +0/4 +'
wait_for "train pods created" 10 sh -c "[ \$($K get pods -l job-name=train -o name | wc -l) = 4 ]"
pod=$($K get pods -l job-name=train -o jsonpath='{.items[0].metadata.name}')
out=$($K get pod "$pod" -o jsonpath='{.metadata.annotations.scheduling\.k8s\.io/group-name} {.spec.schedulerName} {.metadata.ownerReferences[0].kind} {.status.phase}')
expect_eq "pod joins podgroup" "$out" "train kbatch Job Pending"
out=$($K get pods -l job-name=train --show-labels)
expect_match "--show-labels" "$out" "job-name=train"

# Bound pods run (the scheduler's binding is done by hand here).
bind_pod default "$pod" node-1 >/dev/null
wait_for "bound pod runs" 10 sh -c "$K get pod $pod | grep -Eq '^$pod +1/1 +Running +0 +'"
out=$($K get pod "$pod" -o wide)
expect_match "pod wide row shows ip and node" "$out" "^$pod +1/1 +Running +0 +[0-9]+s +10\.244\.[0-9]+\.[0-9]+ +node-1 +<none> +<none>$"

out=$($K describe pod "$pod")
expect_match "describe pod node" "$out" '^Node: +node-1/10\.0\.0\.1$'
expect_match "describe pod controlled by" "$out" '^Controlled By: +Job/train$'
expect_match "describe pod event" "$out" 'Normal +Started .* kubelet'
out=$($K describe node node-1)
expect_match "describe node pods" "$out" '^Non-terminated Pods: +\(1 in total\)$'
expect_match "describe node lease" "$out" '^  HolderIdentity: +node-1$'
expect_match "describe node capacity" "$out" '^  cpu: +8$'
out=$($K describe podgroup train)
expect_match "describe podgroup min member" "$out" '^  Min Member: +4$'
expect_match "describe podgroup queue" "$out" '^  Queue: +team-a$'
out=$($K describe queue team-a)
expect_match "describe queue weight" "$out" '^  Weight: +2$'

# label, patch (merge, json, and strategic on a CR: 415 as a real server)
out=$($K label pg train team=a)
expect_eq "label" "$out" "podgroup.scheduling.volcano.sh/train labeled"
out=$($K get pg -l team=a -o name)
expect_eq "label selector" "$out" "podgroup.scheduling.volcano.sh/train"
$K patch pg train --type merge -p '{"spec":{"minMember":3}}' >/dev/null
$K patch pg train --type json -p '[{"op":"replace","path":"/spec/queue","value":"team-b"}]' >/dev/null
out=$($K get pg train -o jsonpath='{.spec.minMember} {.spec.queue} {.metadata.generation}')
expect_eq "merge and json patch" "$out" "3 team-b 3"
out=$($K patch pg train -p '{"spec":{"minMember":2}}' 2>&1)
expect_match "strategic patch on CR refused" "$out" 'application/strategic-merge-patch\+json is not supported'
out=$($K patch pg train --type merge -p '{"spec":{"minMember":-1}}' 2>&1)
expect_match "negative minMember invalid" "$out" 'spec.minMember: Invalid value: -1: spec.minMember in body should be greater than or equal to 0'
out=$($K patch q team-a --type merge -p '{"spec":{"weight":0}}' 2>&1)
expect_match "weight 0 invalid" "$out" 'spec.weight in body should be greater than or equal to 1'
out=$($K patch q team-a --subresource=status --type merge -p '{"status":{"state":"Sleeping"}}' 2>&1)
expect_match "queue state enum" "$out" 'Unsupported value: "Sleeping"'
$K patch q team-a --subresource=status --type merge -p '{"status":{"state":"Open","running":1}}' >/dev/null
out=$($K get q team-a)
expect_match "queue state column" "$out" '^team-a +2 +Open +1 +[0-9]+s$'

# cordon, taint (strategic merge patches on a built-in)
$K cordon node-2 >/dev/null
out=$($K get node node-2)
expect_match "cordoned" "$out" '^node-2 +Ready,SchedulingDisabled '
$K uncordon node-2 >/dev/null
out=$($K get node node-2)
expect_match "uncordoned" "$out" '^node-2 +Ready +<none>'
out=$($K taint node gpu-1 nvidia.com/gpu=present:NoSchedule)
expect_eq "taint" "$out" "node/gpu-1 tainted"
out=$($K get node gpu-1 -o jsonpath='{.spec.taints[0].key}={.spec.taints[0].value}:{.spec.taints[0].effect}')
expect_eq "taint stored" "$out" "nvidia.com/gpu=present:NoSchedule"
$K taint node gpu-1 nvidia.com/gpu- >/dev/null
out=$($K get node gpu-1 -o jsonpath='{.spec.taints}')
expect_eq "taint removed" "$out" ""

# apply --server-side, create, AlreadyExists, create of an invalid pod
cat >"$T/pod.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: ssa
  labels: {app: ssa}
spec:
  containers:
  - name: c
    image: busybox:1.36
YAML
out=$($K apply --server-side -f "$T/pod.yaml")
expect_eq "server-side apply" "$out" "pod/ssa serverside-applied"
sed -i 's/app: ssa/app: ssa2/' "$T/pod.yaml"
$K apply --server-side -f "$T/pod.yaml" >/dev/null
out=$($K get pod ssa -o jsonpath='{.metadata.labels.app}')
expect_eq "server-side apply updates" "$out" "ssa2"
out=$($K create -f "$T/pod.yaml" 2>&1)
expect_match "create twice" "$out" 'Error from server \(AlreadyExists\): error when creating ".*pod.yaml": pods "ssa" already exists'
cat >"$T/bad.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: Bad_Name
spec:
  containers:
  - name: c
    resources:
      requests:
        cpu: -1
YAML
out=$($K create -f "$T/bad.yaml" 2>&1)
expect_match "invalid pod name" "$out" 'metadata.name: Invalid value: "Bad_Name"'
expect_match "missing image" "$out" 'spec.containers\[0\].image: Required value'
expect_match "negative request" "$out" 'spec.containers\[0\].resources.requests\[cpu\]: Invalid value: "-1"'

# get -w prints the change
$K get pg -w >"$T/watch.out" 2>&1 &
wpid=$!
sleep 1.5
$K label pg huge watched=yes >/dev/null
sleep 1
kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
out=$(cat "$T/watch.out")
expect_match "watch header" "$out" '^NAME +STATUS +MINMEMBER +RUNNINGS +AGE$'
expect_eq "watch shows huge twice" "$(grep -c '^huge ' "$T/watch.out")" "2"

# delete: a plain delete, a finalizer holding an object, namespaces cascade
out=$($K delete pod ssa)
expect_eq "delete pod" "$out" 'pod "ssa" deleted'
$K patch pg huge --type merge -p '{"metadata":{"finalizers":["example.com/hold"]}}' >/dev/null
out=$($K delete pg huge --wait=false)
expect_eq "delete with finalizer" "$out" 'podgroup.scheduling.volcano.sh "huge" deleted'
out=$($K get pg huge -o jsonpath='{.metadata.deletionTimestamp}')
expect_match "deletionTimestamp set" "$out" '^[0-9]{4}-'
$K patch pg huge --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
out=$($K get pg huge 2>&1)
expect_match "gone after last finalizer" "$out" 'podgroups.scheduling.volcano.sh "huge" not found'

$K create namespace team-x --dry-run=client -o yaml | $K create -f - >/dev/null
sed 's/namespace: default/namespace: team-x/' "$ROOT/examples/30-best-effort.yaml" | $K apply -f - >/dev/null
wait_for "team-x pod created" 10 sh -c "$K -n team-x get pods -o name | grep -q cleanup"
out=$($K delete ns team-x)
expect_eq "delete namespace" "$out" 'namespace "team-x" deleted'
out=$($K get pg -A -o name)
expect_no_match "namespace contents gone" "$out" 'cleanup.*team-x'
out=$($K get pods -n team-x 2>&1)
expect_eq "no pods in deleted namespace" "$out" "No resources found in team-x namespace."
out=$($K delete ns default 2>&1)
expect_match "default namespace protected" "$out" 'Forbidden'

out=$($K delete -f "$ROOT/examples/30-best-effort.yaml")
expect_match "delete -f" "$out" 'job.batch "cleanup" deleted'
wait_for "job pods collected" 10 sh -c "! $K get pods -l job-name=cleanup -o name | grep -q ."

out=$($K get events --field-selector involvedObject.kind=Job,involvedObject.name=train)
expect_match "job events" "$out" 'Normal +SuccessfulCreate +job/train +Created pod: train-'

# kubectl drain evicts (pods/eviction, policy/v1 in discovery) rather than
# deleting, so a drain honours what an eviction honours.
$K run drained --image=busybox --overrides='{"spec":{"nodeName":"node-2"}}' >/dev/null
out=$($K drain node-2 --force --ignore-daemonsets --delete-emptydir-data -v 6 2>&1)
expect_match "drain: the pod is evicted" "$out" 'POST .*/pods/drained/eviction 201'
expect_match "drain: says evicted" "$out" 'pod/drained evicted'

stop_server
finish
