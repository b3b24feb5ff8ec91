# Protobuf request bodies: kubectl's typed clients (the create generators,
# auth can-i/whoami, drain) send application/vnd.kubernetes.protobuf and
# never retry as JSON (tried on this machine: on 415, 406, 400, 404, 500 and
# 501 kubectl 1.32 gives up after the one request), so the server decodes
# them with protobuf-c and k8s.proto.
if ! command -v kubectl >/dev/null 2>&1; then
        echo "SKIPPED: kubectl is not installed; the protobuf e2e checks did not run"
        exit 0
fi
. "$(dirname "$0")/lib/apiserver.sh"

start_server --nodes "1:cpu=4,memory=8Gi"

out=$($K create namespace team-a 2>&1)
expect_eq "create namespace" "$out" "namespace/team-a created"
expect_eq "namespace stored as sent" "$($K get ns team-a -o jsonpath='{.metadata.name} {.status.phase}')" "team-a Active"
out=$($K create configmap conf -n team-a --from-literal=a=1 --from-literal=b=two 2>&1)
expect_eq "create configmap" "$out" "configmap/conf created"
expect_eq "configmap data" "$($K get cm conf -n team-a -o jsonpath='{.data}')" '{"a":"1","b":"two"}'
out=$($K create secret generic pw --from-literal=user=admin 2>&1)
expect_eq "create secret" "$out" "secret/pw created"
# "admin" in base64, by hand: YWRt aW4= .
expect_eq "secret bytes arrive as base64" "$($K get secret pw -o jsonpath='{.data.user} {.type}')" "YWRtaW4= Opaque"
out=$($K create job hello --image=busybox:1.36 -- echo hi 2>&1)
expect_eq "create job" "$out" "job.batch/hello created"
expect_eq "job template" "$($K get job hello -o jsonpath='{.spec.template.spec.containers[0].image} {.spec.template.spec.containers[0].command} {.spec.template.spec.restartPolicy}')" \
        'busybox:1.36 ["echo","hi"] Never'
wait_for "the Job controller runs it" 10 sh -c "$K get pods -l job-name=hello -o name | grep -q pod/"
out=$($K create deployment web --image=nginx:1.27 --replicas=3 --port=8080 2>&1)
expect_eq "create deployment" "$out" "deployment.apps/web created"
expect_eq "deployment spec" "$($K get deploy web -o jsonpath='{.spec.replicas} {.spec.selector.matchLabels.app} {.spec.template.spec.containers[0].ports[0].containerPort}')" "3 web 8080"
expect_no_match "unset Go fields stay unset" "$($K get deploy web -o json)" '"creationTimestamp": "1970|"namespace": ""|"hostNetwork"'
out=$($K create serviceaccount robot 2>&1)
expect_eq "create serviceaccount" "$out" "serviceaccount/robot created"
out=$($K create role reader --verb=get,list --resource=pods 2>&1)
expect_eq "create role" "$out" "role.rbac.authorization.k8s.io/reader created"
expect_eq "role rules" "$($K get role reader -o jsonpath='{.rules[0].verbs} {.rules[0].resources}')" '["get","list"] ["pods"]'
out=$($K create rolebinding read --role=reader --serviceaccount=default:robot 2>&1)
expect_eq "create rolebinding" "$out" "rolebinding.rbac.authorization.k8s.io/read created"
expect_eq "rolebinding" "$($K get rolebinding read -o jsonpath='{.roleRef.kind}/{.roleRef.name} {.subjects[0].kind} {.subjects[0].namespace}/{.subjects[0].name}')" "Role/reader ServiceAccount default/robot"
out=$($K create clusterrole node-reader --verb=get --resource=nodes 2>&1)
expect_eq "create clusterrole" "$out" "clusterrole.rbac.authorization.k8s.io/node-reader created"
out=$($K create clusterrolebinding nr --clusterrole=node-reader --group=devs 2>&1)
expect_eq "create clusterrolebinding" "$out" "clusterrolebinding.rbac.authorization.k8s.io/nr created"
out=$($K create priorityclass high --value=1000 --description="batch first" 2>&1)
expect_eq "create priorityclass" "$out" "priorityclass.scheduling.k8s.io/high created"
expect_eq "priorityclass" "$($K get pc high -o jsonpath='{.value} {.description}')" "1000 batch first"
out=$($K create priorityclass zero --value=0 2>&1)
expect_eq "a zero that means zero" "$($K get pc zero -o jsonpath='{.value}')" "0"
out=$($K create pdb web --selector=app=web --min-available=50% 2>&1)
expect_eq "create pdb" "$out" "poddisruptionbudget.policy/web created"
expect_eq "pdb spec" "$($K get pdb web -o jsonpath='{.spec.minAvailable} {.spec.selector.matchLabels.app}')" "50% web"
out=$($K create pdb none --selector=app=web --max-unavailable=0 2>&1)
expect_eq "a budget of zero disruptions keeps its zero" "$($K get pdb none -o jsonpath='{.spec.maxUnavailable}')" "0"

out=$($K auth can-i create pods 2>&1)
expect_eq "auth can-i" "$out" "yes"
out=$($K auth whoami 2>&1)
expect_match "auth whoami" "$out" '^Username +kbatch-local$'
out=$($K auth can-i --list 2>&1)
expect_match "auth can-i --list" "$out" '^\*\.\* +\[\] +\[\] +\[\*\]$'

# drain (it deletes: the server lists no policy group, so kubectl does not
# try evictions).
api POST /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"victim"},"spec":{"containers":[{"name":"c","image":"i"}]}}' >/dev/null
bind_pod default victim node-1 >/dev/null
out=$($K drain node-1 --ignore-daemonsets --force 2>&1)
expect_match "drain" "$out" '^node/node-1 drained$'
expect_eq "drained pod gone" "$(api GET /api/v1/namespaces/default/pods/victim | cut -c1-3)" 404

# Bodies built by hand: "k8s\0", then runtime.Unknown{typeMeta{apiVersion,
# kind}, raw}.  raw = Namespace{metadata{name:"x"}} is 0a 03 0a 01 78.
pb() { # STATUS-LINE-OF: curl with a protobuf body given as printf escapes
        printf "$1" >"$T/pb"
        curl -s -w ' %{http_code}' -X POST -H 'Content-Type: application/vnd.kubernetes.protobuf' \
                --data-binary @"$T/pb" "$URL$2"
}
TM='\x0a\x0f\x0a\x02v1\x12\x09Namespace'
r=$(pb "k8s\x00$TM\x12\x05\x0a\x03\x0a\x01x" /api/v1/namespaces)
expect_match "hand-made Namespace" "$r" '"name":"x".* 201$'
# An Eviction, as typed clients send one: policy/v1 Eviction{metadata{name:
# "victim2", namespace: "default"}}.
api POST /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"victim2"},"spec":{"containers":[{"name":"c","image":"i"}]}}' >/dev/null
r=$(pb 'k8s\x00\x0a\x15\x0a\x09policy/v1\x12\x08Eviction\x12\x14\x0a\x12\x0a\x07victim2\x1a\x07default' \
        /api/v1/namespaces/default/pods/victim2/eviction)
expect_match "protobuf Eviction" "$r" '"status":"Success".* 201$'
expect_eq "evicted pod gone" "$(api GET /api/v1/namespaces/default/pods/victim2 | cut -c1-3)" 404
r=$(pb "k8s\x00$TM\x12\x07\x0a\x03\x0a\x01y\x48\x01" /api/v1/namespaces)
expect_eq "a field k8s.proto lacks: 415" "$r" '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"v1 Namespace: field 9 of Namespace is not one kbatch-apiserver decodes; send it as JSON","reason":"UnsupportedMediaType","code":415} 415'
r=$(pb 'k8s\x00\x0a\x0d\x0a\x02v1\x12\x07Service\x12\x00' /api/v1/namespaces)
expect_match "a kind it does not decode: 415" "$r" 'v1 Service: kbatch-apiserver does not decode this kind from protobuf; send it as JSON.* 415$'
r=$(pb 'k8s\x00\xff\xff\xff' /api/v1/namespaces)
expect_match "garbage: 400" "$r" '"reason":"BadRequest".* 400$'
r=$(pb '{"kind":"Namespace"}' /api/v1/namespaces)
expect_match "no magic: 400" "$r" 'does not start with the protobuf magic.* 400$'

stop_server
finish apiserver_protobuf
