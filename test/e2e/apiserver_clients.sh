# What clients other than kubectl's common paths rely on: boolean query
# parameters as Kubernetes reads them, the bindings collection, 406, YAML
# replies, pods/log, access reviews, ConfigMaps, Secrets, ServiceAccounts,
# RBAC, Deployments (stored), and events.k8s.io/v1 Events sharing storage
# with core Events.  Expected texts are the real API server's.
. "$(dirname "$0")/lib/apiserver.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

code() { echo "${1%% *}"; }
POD='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"NAME"},"spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}}'
pod() { echo "${POD/NAME/$1}"; }

start_server --nodes "2:cpu=4,memory=8Gi"

# Booleans: anything but 0 and false (any case) is true, even an empty value.
api POST /api/v1/namespaces/default/pods "$(pod w1)" >/dev/null
for v in True TRUE 1 yes ''; do
        w=$(curl -s -m 3 "$URL/api/v1/namespaces/default/pods?watch=$v&timeoutSeconds=1")
        expect_match "watch=$v is a watch" "$w" '^\{"type":"ADDED","object":\{"apiVersion":"v1","kind":"Pod"'
done
for v in False 0; do
        w=$(curl -s -m 3 "$URL/api/v1/namespaces/default/pods?watch=$v")
        expect_match "watch=$v is a list" "$w" '^\{"kind":"PodList"'
done
w=$(curl -s -m 3 "$URL/api/v1/namespaces/default/pods?watch=1&allowWatchBookmarks=True&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1")
expect_match "sendInitialEvents: ADDED first" "$(echo "$w" | head -1)" '^\{"type":"ADDED".*"name":"w1"'
expect_match "sendInitialEvents: end bookmark" "$w" '^\{"type":"BOOKMARK","object":\{"kind":"Pod","apiVersion":"v1","metadata":\{"resourceVersion":"[0-9]+","annotations":\{"k8s.io/initial-events-end":"true"\}\}\}\}$'
w=$(curl -s -m 3 "$URL/api/v1/namespaces/default/pods?watch=1&sendInitialEvents=false&timeoutSeconds=1")
expect_eq "sendInitialEvents=false: nothing old" "$w" ""
r=$(api POST "/api/v1/namespaces/default/pods?dryRun=All" "$(pod dry)")
expect_eq "dryRun=All 201" "$(code "$r")" 201
expect_eq "dryRun=All stores nothing" "$(code "$(api GET /api/v1/namespaces/default/pods/dry)")" 404
r=$(api POST "/api/v1/namespaces/default/pods?dryRun=true" "$(pod dry)")
expect_eq "dryRun=true 422" "$r" '422 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"true\"}: supported values: \"All\"","reason":"Invalid","details":{"name":"","group":"meta.k8s.io","kind":"CreateOptions","causes":[{"reason":"FieldValueNotSupported","message":"Unsupported value: []string{\"true\"}: supported values: \"All\"","field":"dryRun"}]},"code":422}'
r=$(api PATCH "/api/v1/namespaces/default/pods/w1?fieldValidation=Loose" '{}' application/merge-patch+json)
expect_match "fieldValidation=Loose 422" "$r" '^422 .*"message":"PatchOptions.meta.k8s.io \\"\\" is invalid: fieldValidation: Unsupported value: \\"Loose\\": supported values: \\"\\", \\"Ignore\\", \\"Strict\\", \\"Warn\\""'

# Accept: JSON, YAML (JSON is YAML) or 406.
r=$(curl -s -w ' %{http_code}' -H 'Accept: application/vnd.kubernetes.protobuf' "$URL/api/v1/pods")
expect_eq "protobuf-only Accept 406" "$r" '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"only the following media types are accepted: application/json, application/yaml","reason":"NotAcceptable","code":406} 406'
r=$(curl -s -w ' %{http_code}' -H 'Accept: text/html' "$URL/apis/batch/v1/jobs")
expect_eq "text/html Accept 406" "${r##* }" 406
r=$(curl -s -o /dev/null -w '%{http_code} %{content_type}' -H 'Accept: application/vnd.kubernetes.protobuf, application/json' "$URL/api/v1/pods")
expect_eq "protobuf,json Accept gets JSON" "$r" "200 application/json"
r=$(curl -s -o /dev/null -w '%{http_code} %{content_type}' -H 'Accept: application/yaml' "$URL/api/v1/namespaces/default")
expect_eq "yaml Accept" "$r" "200 application/yaml"
r=$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept: */*;q=0.8' "$URL/api/v1/namespaces")
expect_eq "*/* Accept" "$r" 200

# POST namespaces/NS/bindings binds the pod named in metadata.name.
api POST /api/v1/namespaces/default/pods "$(pod b1)" >/dev/null
r=$(api POST /api/v1/namespaces/default/bindings '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"b1"},"target":{"kind":"Node","name":"node-1"}}')
expect_eq "bindings 201" "$r" '201 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}'
expect_eq "bindings set nodeName" "$($K get pod b1 -o jsonpath='{.spec.nodeName}')" node-1
r=$(api POST /api/v1/namespaces/default/bindings '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"b1"},"target":{"kind":"Node","name":"node-2"}}')
expect_match "bindings twice 409" "$r" '^409 .*already assigned to node \\"node-1\\"'
r=$(api POST /api/v1/namespaces/default/bindings '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"ghost"},"target":{"name":"node-1"}}')
expect_match "bindings of a missing pod 404" "$r" '^404 .*pods \\"ghost\\" not found'
r=$(api GET /api/v1/namespaces/default/bindings)
expect_eq "bindings GET 405" "$(code "$r")" 405

# pods/log: a line per state change the simulated kubelet made.
wait_for "b1 running" 10 sh -c "$K get pod b1 -o jsonpath='{.status.phase}' | grep -qx Running"
out=$($K logs b1)
expect_eq "kubectl logs" "$out" "container c started from image busybox:1.36 on node-1 (simulated by kbatch-apiserver)"
out=$($K logs b1 --timestamps)
expect_match "kubectl logs --timestamps" "$out" '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.000000000Z container c started'
out=$($K logs w1 2>&1)
expect_eq "logs of an unbound pod" "$out" "Error from server (BadRequest): pod w1 does not have a host assigned"
r=$(api GET "/api/v1/namespaces/default/pods/b1/log?container=nope")
expect_match "logs of a missing container" "$r" '^400 .*"message":"container nope is not valid for pod b1","reason":"BadRequest"'
r=$(api GET "/api/v1/namespaces/default/pods/b1/log?previous=true")
expect_match "no previous container" "$r" '^400 .*"message":"previous terminated container \\"c\\" in pod \\"b1\\" not found"'
r=$(curl -s "$URL/api/v1/namespaces/default/pods/b1/log?tailLines=0")
expect_eq "tailLines=0" "$r" ""

# ConfigMaps, Secrets (stringData folded into base64 data), ServiceAccounts.
out=$($K create configmap cm1 --from-literal=a=1 --from-literal=b=2 --dry-run=client -o yaml | $K apply -f - 2>&1)
expect_eq "configmap applied" "$out" "configmap/cm1 created"
out=$($K get cm cm1)
expect_match "configmap columns" "$out" '^cm1 +2 +[0-9]+s$'
r=$(api POST /api/v1/namespaces/default/configmaps '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad"},"data":{"a b":"x"}}')
expect_match "bad configmap key 422" "$r" '^422 .*"message":"ConfigMap \\"bad\\" is invalid: data\[a b\]: Invalid value: \\"a b\\": a valid config key must consist of alphanumeric characters'
r=$(api POST /api/v1/namespaces/default/secrets '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1"},"stringData":{"pw":"hi"}}')
expect_match "stringData becomes data" "$r" '^201 .*"data":\{"pw":"aGk="\},"type":"Opaque"\}$'
expect_no_match "stringData not stored" "$r" stringData
r=$(api POST /api/v1/namespaces/default/secrets '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s2"},"data":{"pw":"h!=="}}')
expect_eq "bad base64 400" "$r" '400 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 1","reason":"BadRequest","code":400}'
out=$($K get secrets)
expect_match "secret columns" "$out" '^s1 +Opaque +1 +[0-9]+s$'
out=$($K get sa -n kube-system)
expect_match "every namespace has its default ServiceAccount" "$out" '^default +0 +[0-9]+s$'

# deploy/: everything but the Kustomization (not an API object) applies.
$K apply -f "$ROOT/crds/" >/dev/null
out=$($K apply -f "$ROOT/deploy/namespace.yaml" 2>&1)
expect_eq "kbatch-system namespace" "$out" "namespace/kbatch-system created"
files=$(ls "$ROOT"/deploy/*.yaml | grep -v kustomization | sed 's/^/-f /' | tr '\n' ' ')
out=$($K apply $files 2>&1)
expect_match "deploy: ServiceAccount" "$out" '^serviceaccount/kbatch-scheduler created$'
expect_match "deploy: ClusterRole" "$out" '^clusterrole.rbac.authorization.k8s.io/kbatch-scheduler created$'
expect_match "deploy: ClusterRoleBinding" "$out" '^clusterrolebinding.rbac.authorization.k8s.io/kbatch-scheduler created$'
expect_match "deploy: Role" "$out" '^role.rbac.authorization.k8s.io/kbatch-scheduler-leader created$'
expect_match "deploy: RoleBinding" "$out" '^rolebinding.rbac.authorization.k8s.io/kbatch-scheduler-leader created$'
expect_match "deploy: ConfigMap" "$out" '^configmap/kbatch-scheduler-conf created$'
expect_match "deploy: Deployment (stored)" "$out" '^deployment.apps/kbatch-scheduler created$'
expect_no_match "deploy: no errors" "$out" 'rror'
out=$($K apply $files 2>&1)
# kubectl patches a PodDisruptionBudget's selector on every apply (its
# patch strategy is replace), so kube-apiserver too says "configured" each
# time (seen on the real bed): that line is kubectl's, not a change.
expect_no_match "deploy: second apply changes nothing" \
        "$(printf '%s\n' "$out" | grep -v '^poddisruptionbudget.policy/kbatch-scheduler configured$')" \
        'configured|created|rror'
out=$($K get clusterrolebinding kbatch-scheduler -o wide)
expect_match "clusterrolebinding columns" "$out" '^kbatch-scheduler +ClusterRole/kbatch-scheduler +[0-9]+s +kbatch-system/kbatch-scheduler$'
out=$($K get deploy -n kbatch-system)
expect_match "deployment columns" "$out" '^kbatch-scheduler +0/2 +0 +0 +[0-9]+s$'
r=$(api POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"x"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"r"},"subjects":[{"kind":"Robot","name":"r2"}]}')
expect_match "bad binding 422" "$r" '^422 .*"message":"ClusterRoleBinding.rbac.authorization.k8s.io \\"x\\" is invalid: \[roleRef.kind: Unsupported value: \\"Role\\": supported values: \\"ClusterRole\\", subjects\[0\].kind: Unsupported value: \\"Robot\\": supported values: \\"Group\\", \\"ServiceAccount\\", \\"User\\"\]"'

# Access reviews answer that everything is allowed, and say why.
r=$(api POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews '{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"verb":"create","resource":"pods"}}}')
expect_match "access review allowed" "$r" '^201 .*"status":\{"allowed":true,"reason":"kbatch-apiserver has no authorization: every request is allowed'
r=$(api POST /apis/authentication.k8s.io/v1/selfsubjectreviews '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}')
expect_match "self review" "$r" '^201 .*"userInfo":\{"username":"kbatch-local","groups":\["system:masters","system:authenticated"\]'
r=$(api GET /apis/authorization.k8s.io/v1/selfsubjectaccessreviews)
expect_eq "reviews cannot be listed" "$(code "$r")" 405

# events.k8s.io/v1: one Event, seen through both groups.
r=$(api POST /apis/events.k8s.io/v1/namespaces/default/events '{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e1"},"regarding":{"kind":"Pod","name":"b1","namespace":"default"},"note":"hello","reason":"Tested","type":"Normal","eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"kbatch.io/test","reportingInstance":"t-1","action":"Test"}')
expect_match "events.k8s.io create" "$r" '^201 \{"apiVersion":"events.k8s.io/v1","kind":"Event".*"regarding":\{"kind":"Pod","name":"b1","namespace":"default"\},"note":"hello","reportingController":"kbatch.io/test"\}$'
r=$(curl -s "$URL/api/v1/namespaces/default/events/e1")
expect_match "seen as core/v1" "$r" '^\{"apiVersion":"v1","kind":"Event".*"involvedObject":\{"kind":"Pod","name":"b1","namespace":"default"\},"message":"hello","reportingComponent":"kbatch.io/test"\}$'
r=$(curl -s "$URL/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=reason=Started")
expect_match "core events listed through events.k8s.io" "$r" '^\{"kind":"EventList","apiVersion":"events.k8s.io/v1".*"regarding":\{"apiVersion":"v1","kind":"Pod","name":"b1"'
r=$(api PATCH /apis/events.k8s.io/v1/namespaces/default/events/e1 '{"note":"patched"}' application/merge-patch+json)
expect_match "events.k8s.io patch" "$r" '^200 .*"note":"patched"'
expect_eq "patched through core" "$($K get events e1 -o jsonpath='{.message}')" patched
out=$($K get events.events.k8s.io e1)
expect_match "events.k8s.io table" "$out" '^[0-9]+d +Normal +Tested +pod/b1 +patched$'
curl -sN "$URL/apis/events.k8s.io/v1/namespaces/default/events?watch=1&timeoutSeconds=2&fieldSelector=metadata.name=e2" >"$T/w" &
wpid=$!
sleep 0.5
api POST /api/v1/namespaces/default/events '{"apiVersion":"v1","kind":"Event","metadata":{"name":"e2"},"involvedObject":{"kind":"Pod","name":"b1"},"message":"core","reason":"R"}' >/dev/null
wait $wpid
expect_match "core write seen by an events.k8s.io watch" "$(cat "$T/w")" '^\{"type":"ADDED","object":\{"apiVersion":"events.k8s.io/v1".*"note":"core"'
r=$(api DELETE /apis/events.k8s.io/v1/namespaces/default/events/e1)
expect_eq "events.k8s.io delete" "$(code "$r")" 200
expect_eq "gone from core too" "$(code "$(api GET /api/v1/namespaces/default/events/e1)")" 404

stop_server
finish apiserver_clients
