# Field validation as the real API server does it: fieldValidation=Strict
# (what kubectl sends by default) fails on unknown fields, Warn drops them
# with a warning, Ignore drops them; built-in enums and types are checked;
# custom resources by their CRD's structural schema.
. "$(dirname "$0")/lib/apiserver.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
code() { echo "${1%% *}"; }

start_server --nodes "1:cpu=4,memory=8Gi"

cat >"$T/pod.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: typo
spec:
  bogusField: 1
  containers:
  - name: c
    image: busybox
    imagePullPolicy: Sometimes
    resourcez: {}
EOF
out=$($K apply -f "$T/pod.yaml" 2>&1)
expect_eq "kubectl apply: Strict rejects unknown fields" "$out" \
        "Error from server (BadRequest): error when creating \"$T/pod.yaml\": Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"spec.bogusField\", unknown field \"spec.containers[0].resourcez\""
out=$($K apply -f "$T/pod.yaml" --validate=warn 2>&1)
expect_match "Warn: a warning per field" "$out" '^Warning: unknown field "spec.bogusField"$'
expect_match "Warn: second field" "$out" '^Warning: unknown field "spec.containers\[0\].resourcez"$'
expect_match "enum checked" "$out" '^The Pod "typo" is invalid: spec.containers\[0\].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"$'
sed -i 's/Sometimes/IfNotPresent/' "$T/pod.yaml"
out=$($K apply -f "$T/pod.yaml" --validate=warn 2>&1)
expect_match "Warn: created" "$out" '^pod/typo created$'
out=$($K get pod typo -o jsonpath='{.spec}')
expect_no_match "Warn: unknown fields dropped" "$out" 'bogusField|resourcez'
$K delete pod typo >/dev/null
out=$($K apply -f "$T/pod.yaml" --validate=false 2>&1)
expect_eq "Ignore: created silently" "$out" "pod/typo created"
expect_no_match "Ignore: dropped" "$($K get pod typo -o jsonpath='{.spec}')" 'bogusField'

# Over the API: the default is Warn; Strict on every verb.
r=$(curl -s -D "$T/h" -o "$T/b" -w '%{http_code}' -XPOST -H 'Content-Type: application/json' \
        --data-binary '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","labelz":{}},"data":{"a":"1"},"extra":true}' \
        "$URL/api/v1/namespaces/default/configmaps")
expect_eq "default is Warn: created" "$r" 201
expect_match "Warning header, quoted" "$(cat "$T/h")" '^Warning: 299 - "unknown field \\"extra\\""'
expect_match "Warning header for metadata" "$(cat "$T/h")" '^Warning: 299 - "unknown field \\"metadata.labelz\\""'
expect_no_match "dropped from the stored object" "$(cat "$T/b")" 'extra|labelz'
r=$(api PATCH "/api/v1/namespaces/default/configmaps/cm?fieldValidation=Strict" '{"dataa":{"x":"y"}}' application/merge-patch+json)
expect_eq "Strict merge patch" "$r" '400 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"dataa\"","reason":"BadRequest","code":400}'
r=$(api PUT "/api/v1/namespaces/default/configmaps/cm?fieldValidation=Strict" '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"a":"2"},"x":1}')
expect_match "Strict update" "$r" '^400 .*strict decoding error: unknown field \\"x\\"'
r=$(api PATCH "/api/v1/namespaces/default/pods/typo?fieldValidation=Strict" '{"spec":{"containers":[{"name":"c","imagePullPolicy":"Always","bogus":1}]}}' application/strategic-merge-patch+json)
expect_match "Strict strategic patch, with the list index" "$r" '^400 .*unknown field \\"spec.containers\[0\].bogus\\"'
r=$(api PATCH "/api/v1/namespaces/default/pods/typo?fieldValidation=Ignore" '{"spec":{"bogus":1}}' application/merge-patch+json)
expect_eq "Ignore patch: nothing changes" "$(code "$r")" 200

# Fields the server itself stored are never judged: patch a running pod.
bind_pod default typo node-1 >/dev/null
wait_for "pod running" 10 sh -c "$K get pod typo -o jsonpath='{.status.phase}' | grep -qx Running"
r=$(api PATCH "/api/v1/namespaces/default/pods/typo?fieldValidation=Strict" '{"metadata":{"labels":{"a":"b"}}}' application/merge-patch+json)
expect_eq "Strict patch of a running pod" "$(code "$r")" 200

# Types of built-ins are decoded: a wrong JSON type is 400.
r=$(api POST /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"t"},"spec":{"priority":"high","containers":[{"name":"c","image":"i"}]}}')
expect_eq "type error 400" "$r" '400 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field PodSpec.spec.priority of type int64","reason":"BadRequest","code":400}'
r=$(api POST /apis/batch/v1/namespaces/default/jobs '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"completionMode":"Sometimes","template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"i"}]}}}}')
expect_match "job enum" "$r" '^422 .*spec.completionMode: Unsupported value: \\"Sometimes\\": supported values: \\"NonIndexed\\", \\"Indexed\\"'
r=$(api POST /apis/scheduling.k8s.io/v1/priorityclasses '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"p"},"value":1,"preemptionPolicy":"Always"}')
expect_match "preemptionPolicy enum" "$r" '^422 .*preemptionPolicy: Unsupported value: \\"Always\\": supported values: \\"Never\\", \\"PreemptLowerPriority\\"'

# Custom resources: the CRD's structural schema.
$K apply -f "$ROOT/crds/" >/dev/null
cat >"$T/widget-crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    selectableFields: [{jsonPath: .spec.size}]
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              parts:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
EOF
$K apply -f "$T/widget-crd.yaml" >/dev/null
cat >"$T/w.yaml" <<'EOF'
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  size: 3
  colour: red
  parts: [{name: a, weight: 2}]
  extra: {anything: [1, 2]}
EOF
out=$($K apply -f "$T/w.yaml" 2>&1)
expect_match "CR Strict" "$out" 'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.colour", unknown field "spec.parts\[0\].weight"$'
out=$($K apply -f "$T/w.yaml" --validate=warn 2>&1)
expect_match "CR Warn" "$out" '^Warning: unknown field "spec.parts\[0\].weight"$'
out=$($K get widget w1 -o jsonpath='{.spec}')
expect_eq "CR: pruned, preserved subtree kept" "$out" '{"extra":{"anything":[1,2]},"parts":[{"name":"a"}],"size":3}'
r=$(api POST /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups?fieldValidation=Strict '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"pg"},"spec":{"minMember":1,"kbatchExtension":true},"colour":"red"}')
expect_eq "PodGroup: unknown root field" "$r" '400 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"PodGroup in version \"v1beta1\" cannot be handled as a PodGroup: strict decoding error: unknown field \"colour\"","reason":"BadRequest","code":400}'
r=$(api POST /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups?fieldValidation=Strict '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"pg"},"spec":{"minMember":1,"kbatchExtension":true}}')
expect_match "PodGroup spec keeps unknown fields (the CRD preserves them)" "$r" '^201 .*"kbatchExtension":true'
r=$(api POST /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"pg2","labels":"x"},"spec":{"minMember":1}}')
expect_match "CR metadata decoded strictly" "$r" '^400 .*cannot unmarshal string into Go struct field ObjectMeta.metadata.labels'

# Field selectors: what the real server accepts and no more.
r=$(api GET "/api/v1/pods?fieldSelector=spec.nodeName=node-1,status.phase=Running")
expect_eq "pod field selectors upstream supports" "$(code "$r")" 200
r=$(api GET "/api/v1/pods?fieldSelector=spec.containers.image=busybox")
expect_eq "an unsupported pod field" "$r" '400 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"field label not supported: spec.containers.image","reason":"BadRequest","code":400}'
r=$(api GET "/apis/scheduling.volcano.sh/v1beta1/podgroups?fieldSelector=spec.queue=default")
expect_match "a CR's spec field without selectableFields" "$r" '^400 .*field label not supported: spec.queue'
r=$(api GET "/apis/scheduling.volcano.sh/v1beta1/podgroups?fieldSelector=metadata.name=pg")
expect_match "metadata.name on a CR" "$r" '^200 .*"name":"pg"'
r=$(api GET "/apis/example.com/v1/namespaces/default/widgets?fieldSelector=spec.size=3")
expect_match "a CRD's selectableFields" "$r" '^200 .*"name":"w1"'
r=$(api GET "/apis/example.com/v1/namespaces/default/widgets?fieldSelector=spec.size=4")
expect_match "selectableFields filter" "$r" '^200 .*"items":\[\]'
out=$($K get pods --field-selector spec.bogus=1 2>&1)
expect_match "kubectl shows it" "$out" 'field label not supported: spec.bogus'
w=$(curl -s "$URL/api/v1/nodes?watch=1&fieldSelector=spec.providerID=x")
expect_match "watches too" "$w" '"message":"field label not supported: spec.providerID"'

# kubectl explain reads the same schemas through OpenAPI v3.
out=$($K explain pod.spec.nodeName 2>&1)
expect_match "explain pod.spec.nodeName: type" "$out" '^FIELD: nodeName <string>$'
expect_match "explain pod.spec.nodeName: description" "$out" '^ +The node the pod is bound to\. The scheduler sets it through the binding$'
out=$($K explain jobs.spec.template.spec.containers.imagePullPolicy 2>&1)
expect_match "explain an enum" "$out" '^ENUM:$'
expect_match "explain an enum: values" "$out" '^ +IfNotPresent$'
out=$($K explain podgroup.spec 2>&1)
expect_match "explain podgroup.spec: from the CRD" "$out" '^KIND: +PodGroup$'
expect_match "explain podgroup.spec: minMember" "$out" '^  minMember\s+<integer>$'
out=$($K explain widgets.spec.parts 2>&1)
expect_match "explain a CRD's nested field" "$out" '^  name\s+<string>$'
out=$($K explain podgroup.metadata.labels 2>&1)
expect_match "CR metadata is ObjectMeta" "$out" '^FIELD: labels <map\[string\]string>$'
out=$($K explain pod.spec.bogus 2>&1)
expect_match "explain a field that is not there" "$out" 'field "bogus" does not exist'

# Custom resources take their structural schema's defaults, as a real
# server applies them: a PodGroup without spec.queue is in "default", a
# networkTopology without mode is hard; what is set stays.
printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: dflt}\nspec: {minMember: 1, networkTopology: {highestTierAllowed: 1}}\n' |
        $K apply -f - >/dev/null
expect_eq "CRD default: spec.queue" "$($K get pg dflt -o jsonpath='{.spec.queue}')" default
expect_eq "CRD default inside an object" "$($K get pg dflt -o jsonpath='{.spec.networkTopology.mode}')" hard
printf 'apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: own}\nspec: {minMember: 1, queue: team}\n' |
        $K apply -f - >/dev/null
expect_eq "a value set is kept" "$($K get pg own -o jsonpath='{.spec.queue}')" team

stop_server
finish apiserver_fields
