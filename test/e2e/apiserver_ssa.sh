# Server-side apply with field ownership (metadata.managedFields): conflicts
# between managers, force, shared fields, removal of fields a manager stops
# applying, and the fields every other write takes over.
if ! command -v kubectl >/dev/null 2>&1; then
        echo "SKIPPED: kubectl is not installed; the server-side apply checks did not run"
        exit 0
fi
. "$(dirname "$0")/lib/apiserver.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
code() { echo "${1%% *}"; }

start_server --nodes "1:cpu=4,memory=8Gi"
$K apply -f "$ROOT/crds/" >/dev/null

pg() { # NAME LABELS-YAML SPEC-YAML
        printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: %s, labels: %s}\nspec: %s\n' "$1" "$2" "$3" >"$T/pg.yaml"
}
owners() { # the managers that own FIELD (a FieldsV1 path, e.g. f:spec.f:minMember)
        $K get pg g1 -o json --show-managed-fields | /usr/bin/python3 -c '
import json, sys
doc = json.load(sys.stdin)
path = sys.argv[1].split(".")
out = []
for e in doc["metadata"].get("managedFields", []):
    node = e.get("fieldsV1", {})
    for k in path:
        node = node.get(k) if isinstance(node, dict) else None
    if node is not None:
        out.append(e["manager"] + "/" + e["operation"])
print(" ".join(sorted(out)))' "$1"
}

pg g1 '{team: a, tier: gold}' '{minMember: 2, queue: q1}'
out=$($K apply --server-side --field-manager=alice -f "$T/pg.yaml" 2>&1)
expect_eq "first apply" "$out" "podgroup.scheduling.volcano.sh/g1 serverside-applied"
expect_eq "alice owns spec.minMember" "$(owners f:spec.f:minMember)" "alice/Apply"
expect_eq "alice owns a label" "$(owners f:metadata.f:labels.f:tier)" "alice/Apply"

pg g1 '{}' '{minMember: 3}'
out=$($K apply --server-side --field-manager=bob -f "$T/pg.yaml" 2>&1)
expect_match "another manager, another value: conflict" "$out" '^error: Apply failed with 1 conflict: conflict with "alice": \.spec\.minMember$'
expect_eq "nothing changed" "$($K get pg g1 -o jsonpath='{.spec.minMember}')" 2
r=$(api PATCH '/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/g1?fieldManager=bob' \
        '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"g1"},"spec":{"minMember":3}}' \
        application/apply-patch+yaml)
expect_eq "the conflict as the API says it" "$r" '409 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Apply failed with 1 conflict: conflict with \"alice\": .spec.minMember","reason":"Conflict","details":{"name":"g1","group":"scheduling.volcano.sh","kind":"podgroups","causes":[{"reason":"FieldManagerConflict","message":"conflict with \"alice\"","field":".spec.minMember"}]},"code":409}'

pg g1 '{}' '{minMember: 2}'
out=$($K apply --server-side --field-manager=bob -f "$T/pg.yaml" 2>&1)
expect_eq "the same value: no conflict" "$out" "podgroup.scheduling.volcano.sh/g1 serverside-applied"
expect_eq "the field is shared" "$(owners f:spec.f:minMember)" "alice/Apply bob/Apply"

pg g1 '{}' '{minMember: 4}'
out=$($K apply --server-side --field-manager=bob --force-conflicts -f "$T/pg.yaml" 2>&1)
expect_eq "force takes it" "$out" "podgroup.scheduling.volcano.sh/g1 serverside-applied"
expect_eq "value forced" "$($K get pg g1 -o jsonpath='{.spec.minMember}')" 4
expect_eq "bob alone owns it" "$(owners f:spec.f:minMember)" "bob/Apply"

# alice stops applying the tier label and minMember: the label goes (only
# she owned it), minMember stays (bob owns it).
pg g1 '{team: a}' '{queue: q1}'
$K apply --server-side --field-manager=alice -f "$T/pg.yaml" >/dev/null
expect_eq "a dropped field is removed" "$($K get pg g1 -o jsonpath='{.metadata.labels}')" '{"team":"a"}'
expect_eq "a field someone else owns stays" "$($K get pg g1 -o jsonpath='{.spec.minMember}')" 4

# Other writes take the fields they change, from everyone.
$K label pg g1 team=b --overwrite >/dev/null
expect_eq "kubectl label took the label" "$(owners f:metadata.f:labels.f:team)" "kubectl-label/Update"
pg g1 '{team: a}' '{queue: q1}'
out=$($K apply --server-side --field-manager=alice -f "$T/pg.yaml" 2>&1)
expect_match "conflict with an Update manager" "$out" '^error: Apply failed with 1 conflict: conflict with "kubectl-label" using scheduling.volcano.sh/v1beta1: \.metadata\.labels\.team$'

pg g1 '{team: c, tier: x}' '{queue: q9}'
r=$(api PATCH '/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/g1?fieldManager=carol' \
        "$(/usr/bin/python3 -c 'import json,sys,yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' "$T/pg.yaml")" \
        application/apply-patch+yaml)
expect_match "several conflicts, grouped by manager" "$r" '^409 .*"message":"Apply failed with 2 conflicts: conflicts with \\"alice\\":\\n- .spec.queue\\nconflicts with \\"kubectl-label\\" using scheduling.volcano.sh/v1beta1:\\n- .metadata.labels.team"'

r=$(api PATCH '/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/g1' \
        '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"g1"}}' application/apply-patch+yaml)
expect_eq "apply needs a fieldManager" "$r" '422 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch","reason":"Invalid","details":{"name":"","group":"meta.k8s.io","kind":"PatchOptions","causes":[{"reason":"FieldValueRequired","message":"Required value: is required for apply patch","field":"fieldManager"}]},"code":422}'

# Built-in lists merge by key: a container is owned item by item.
cat >"$T/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  containers:
  - {name: a, image: busybox:1.36}
  - {name: b, image: busybox:1.36}
EOF
$K apply --server-side --field-manager=m1 -f "$T/pod.yaml" >/dev/null
sed -i 's/- {name: b, image: busybox:1.36}/- {name: b, image: busybox:1.37}/; /name: a/d' "$T/pod.yaml"
out=$($K apply --server-side --field-manager=m2 -f "$T/pod.yaml" 2>&1)
expect_match "conflict on a keyed list item" "$out" 'conflict with "m1": \.spec\.containers\[name="b"\]\.image$'
out=$($K apply --server-side --field-manager=m2 --force-conflicts -f "$T/pod.yaml" 2>&1)
expect_eq "both containers kept, b's image forced" \
        "$($K get pod p1 -o jsonpath='{range .spec.containers[*]}{.name}={.image} {end}')" "a=busybox:1.36 b=busybox:1.37 "

# What the simulation made belongs to "before-first-apply".
$K create job j --image=busybox:1.36 >/dev/null
wait_for "job pod made" 10 sh -c "$K get pods -l job-name=j -o name | grep -q ."
pod=$($K get pods -l job-name=j -o jsonpath='{.items[0].metadata.name}')
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: %s, labels: {job-name: other}}\n' "$pod" >"$T/jp.yaml"
out=$($K apply --server-side --field-manager=m3 -f "$T/jp.yaml" 2>&1)
expect_match "before-first-apply" "$out" 'conflict with "before-first-apply" using v1: \.metadata\.labels\.job-name$'

# An apply to the status subresource records its manager too (the status
# write kept only the status and dropped what apply had just recorded).
r=$(api PATCH '/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/g1/status?fieldManager=sched' \
        '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"g1"},"status":{"phase":"Inqueue"}}' \
        application/apply-patch+yaml)
expect_match "apply to status: 200" "$r" '^200 '
expect_eq "apply to status: its manager owns the phase" "$(owners f:status.f:phase)" "sched/Apply"

# Without fieldManager, a write's manager is its User-Agent up to the "/".
curl -s -o /dev/null -X PATCH -A 'batch-tool/2.1 (linux)' -H 'Content-Type: application/merge-patch+json' \
        --data-binary '{"metadata":{"labels":{"owner":"tool"}}}' "$URL/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/g1"
expect_eq "manager from the User-Agent" "$(owners f:metadata.f:labels.f:owner)" "batch-tool/Update"

stop_server
finish apiserver_ssa
