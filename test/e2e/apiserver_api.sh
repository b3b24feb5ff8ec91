# API-level checks with curl: concurrency, binding, watch, pagination, bad
# input, and the injected faults.
. "$(dirname "$0")/lib/apiserver.sh"

code() { echo "${1%% *}"; }
POD='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"NAME","labels":{"app":"a"}},"spec":{"schedulerName":"kbatch","containers":[{"name":"c","image":"busybox"}]}}'
pod() { echo "${POD/NAME/$1}"; }

start_server --nodes "2:cpu=4,memory=8Gi" --history 50 --bookmark-interval 0.5 --max-body-bytes 65536

# create, then a write with a stale resourceVersion gets 409
r=$(api POST /api/v1/namespaces/default/pods "$(pod p1)")
expect_eq "create 201" "$(code "$r")" 201
rv=$(echo "$r" | sed 's/.*"resourceVersion":"\([0-9]*\)".*/\1/')
api PATCH /api/v1/namespaces/default/pods/p1 '{"metadata":{"labels":{"x":"1"}}}' application/merge-patch+json >/dev/null
stale=$(echo "${r#* }" | sed 's/"labels":{"app":"a"}/"labels":{"app":"b"}/')
r=$(api PUT /api/v1/namespaces/default/pods/p1 "$stale")
expect_eq "stale update 409" "$(code "$r")" 409
expect_match "conflict message" "$r" 'the object has been modified'
r=$(api POST /api/v1/namespaces/default/pods "$(pod p1)")
expect_match "already exists 409" "$r" '^409 .*"reason":"AlreadyExists"'
r=$(api POST /api/v1/namespaces/nope/pods "$(pod p9)")
expect_match "missing namespace 404" "$r" '^404 .*namespaces \\"nope\\" not found'

# %00 is a name no pod has, never the collection: before, MHD decoded it
# and the NUL cut the path, so this DELETE took every pod of the
# namespace (kube-apiserver answers 404 too).  An empty name (a trailing
# slash, a double one) is refused: kube-apiserver cleans the path and acts
# on the collection (seen on the real bed), which is how a name that came
# out empty deletes a namespace's pods.
api POST /api/v1/namespaces/default/pods "$(pod nul-keep)" >/dev/null
expect_match "DELETE .../pods/: 400" "$(api DELETE /api/v1/namespaces/default/pods/)" '^400 .*empty segment'
expect_match "GET .../pods/: 400" "$(api GET /api/v1/namespaces/default/pods/)" '^400 '
expect_match "DELETE .../pods//status: 400" "$(api DELETE /api/v1/namespaces/default/pods//status)" '^400 '
expect_match "DELETE .../pods/%00: 404" "$(api DELETE /api/v1/namespaces/default/pods/%00)" '^404 .*"reason":"NotFound"'
expect_match "GET .../pods/%00: 404, not the list" "$(api GET /api/v1/namespaces/default/pods/%00)" '^404 '
expect_match "GET .../pods?x=%00: the list" "$(api GET '/api/v1/namespaces/default/pods?x=%00')" '^200 .*"kind":"PodList"'
expect_eq "the namespace's pods are still there" "$(code "$(api GET /api/v1/namespaces/default/pods/nul-keep)")" 200
expect_eq "an escaped name still reads" "$(code "$(api GET /api/v1/namespaces/default/pods/nul%2Dkeep)")" 200
api DELETE /api/v1/namespaces/default/pods/nul-keep >/dev/null

# a patch that changes nothing keeps the resourceVersion
before=$(curl -s $URL/api/v1/namespaces/default/pods/p1 | sed 's/.*"resourceVersion":"\([0-9]*\)".*/\1/')
api PATCH /api/v1/namespaces/default/pods/p1 '{"metadata":{"labels":{"x":"1"}}}' application/strategic-merge-patch+json >/dev/null
after=$(curl -s $URL/api/v1/namespaces/default/pods/p1 | sed 's/.*"resourceVersion":"\([0-9]*\)".*/\1/')
expect_eq "no-op patch keeps rv" "$after" "$before"

# binding: 201, then 409 when already bound, 404 for a missing pod
expect_eq "bind 201" "$(code "$(bind_pod default p1 node-1)")" 201
r=$(bind_pod default p1 node-2)
expect_match "bind twice 409" "$r" '^409 .*already assigned to node \\"node-1\\"'
expect_eq "bind missing 404" "$(code "$(bind_pod default ghost node-1)")" 404
wait_for "bound pod running" 10 sh -c "curl -s $URL/api/v1/namespaces/default/pods/p1 | grep -q '\"phase\":\"Running\"'"

# field selectors the scheduler uses
r=$(curl -s "$URL/api/v1/pods?fieldSelector=spec.nodeName=node-1,status.phase!=Succeeded")
expect_match "field selector nodeName" "$r" '"name":"p1"'
r=$(curl -s "$URL/api/v1/pods?fieldSelector=spec.schedulerName=default-scheduler")
expect_no_match "field selector schedulerName" "$r" '"name":"p1"'
r=$(api GET "/api/v1/pods?labelSelector=app+in+(a,b),!nope")
expect_match "set-based label selector" "$r" '^200 .*"name":"p1"'
r=$(api GET "/api/v1/pods?labelSelector=app+in+(a")
expect_eq "bad selector 400" "$(code "$r")" 400

# pagination
for i in 2 3 4 5; do api POST /api/v1/namespaces/default/pods "$(pod p$i)" >/dev/null; done
r=$(curl -s "$URL/api/v1/namespaces/default/pods?limit=2")
expect_match "page 1 has continue" "$r" '"continue":"[0-9a-f]+","remainingItemCount":3'
cont=$(echo "$r" | sed 's/.*"continue":"\([0-9a-f]*\)".*/\1/')
r=$(curl -s "$URL/api/v1/namespaces/default/pods?limit=2&continue=$cont")
names=$(echo "$r" | grep -o '"name":"p[0-9]"' | tr '\n' ' ')
expect_eq "page 2" "$names" '"name":"p3" "name":"p4" '
r=$(api GET "/api/v1/namespaces/default/pods?limit=2&continue=zz")
expect_eq "bad continue 400" "$(code "$r")" 400

# watch: from a resourceVersion, with a selector, bookmarks, timeoutSeconds
rv=$(curl -s "$URL/api/v1/namespaces/default/pods" | sed 's/.*"metadata":{"resourceVersion":"\([0-9]*\)".*/\1/')
s=$SECONDS
curl -sN "$URL/api/v1/namespaces/default/pods?watch=true&resourceVersion=$rv&labelSelector=app=a&allowWatchBookmarks=true&timeoutSeconds=3" >"$T/watch" &
wpid=$!
sleep 0.5
api PATCH /api/v1/namespaces/default/pods/p2 '{"metadata":{"labels":{"app":"z"}}}' application/merge-patch+json >/dev/null
api DELETE /api/v1/namespaces/default/pods/p3 >/dev/null
sleep 1
wait $wpid
w=$(cat "$T/watch")
expect_match "relabelled out of selector: DELETED" "$w" '^\{"type":"DELETED","object":\{.*"kind":"Pod".*"name":"p2".*"labels":\{"app":"z"\}'
expect_match "deleted pod: DELETED" "$w" '^\{"type":"DELETED","object":\{.*"name":"p3"'
expect_match "bookmark" "$w" '^\{"type":"BOOKMARK","object":\{"kind":"Pod","apiVersion":"v1","metadata":\{"resourceVersion":"[0-9]+"\}\}\}$'
expect_eq "watch ended by timeoutSeconds" "$(( SECONDS - s <= 5 ))" 1
# a watch from rv 0 starts with ADDED for what exists
w=$(curl -sN "$URL/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1&fieldSelector=metadata.name=p4")
expect_match "initial ADDED" "$w" '^\{"type":"ADDED".*"name":"p4"'
# history is 50 events: push past it, then an old rv is Expired
for i in $(seq 1 30); do
        api PATCH /api/v1/namespaces/default/pods/p4 "{\"metadata\":{\"labels\":{\"n\":\"$i\"}}}" application/merge-patch+json >/dev/null
        api PATCH /api/v1/namespaces/default/pods/p5 "{\"metadata\":{\"labels\":{\"n\":\"$i\"}}}" application/merge-patch+json >/dev/null
done
w=$(curl -sN "$URL/api/v1/namespaces/default/pods?watch=1&resourceVersion=$rv&timeoutSeconds=2")
expect_match "410 Expired event" "$w" '^\{"type":"ERROR","object":\{"kind":"Status".*"reason":"Expired".*"code":410\}\}$'

# a client that hangs up mid-watch does not keep its thread
curl -sN --max-time 1 "$URL/api/v1/pods?watch=1" >/dev/null
sleep 1.5

# bad input
r=$(api POST /api/v1/namespaces/default/pods '{"kind":"Pod",')
expect_match "malformed json 400" "$r" '^400 \{"kind":"Status".*"reason":"BadRequest","code":400\}$'
r=$(api POST /api/v1/namespaces/default/pods 'kind: [' application/yaml)
expect_eq "malformed yaml 400" "$(code "$r")" 400
r=$(api POST /api/v1/namespaces/default/pods '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"Bad_Name"},"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"12XB"}}}]}}')
expect_eq "invalid pod 422" "$(code "$r")" 422
expect_match "cause metadata.name" "$r" '"field":"metadata.name"'
expect_match "cause image" "$r" '"reason":"FieldValueRequired","message":"Required value","field":"spec.containers\[0\].image"'
expect_match "cause quantity" "$r" '"field":"spec.containers\[0\].resources.requests\[memory\]"'
r=$(api POST /api/v1/namespaces/default/pods '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"x"},"spec":{}}')
expect_match "missing containers 422" "$r" '^422 .*"field":"spec.containers"'
r=$(api GET /api/v1/namespaces/default/widgets)
expect_match "unknown resource 404" "$r" '^404 .*the server could not find the requested resource'
r=$(api GET /apis/nope.example.com/v1/things)
expect_eq "unknown group 404" "$(code "$r")" 404
r=$(api POST /api/v1/namespaces 'k8s-protobuf-body' application/vnd.kubernetes.protobuf)
expect_match "not protobuf after all: 400" "$r" '^400 .*does not start with the protobuf magic.*"reason":"BadRequest"'
big=$(head -c 70000 /dev/zero | tr '\0' 'a')
r=$(api POST /api/v1/namespaces/default/pods "{\"x\":\"$big\"}")
expect_eq "body limit 413" "$(code "$r")" 413
r=$(api PATCH /api/v1/namespaces/default/pods/p1 '[{"op":"remove","path":"/nope/x"}]' application/json-patch+json)
expect_eq "bad json patch 422" "$(code "$r")" 422
r=$(api PATCH /api/v1/namespaces/default/pods/p1 '{}' text/plain)
expect_eq "unknown patch type 415" "$(code "$r")" 415
r=$(api GET '/api/v1/namespaces/default/pods/a/b/c/d')
expect_eq "too deep a path 404" "$(code "$r")" 404

# discovery and openapi
r=$(curl -s -H 'Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' -D "$T/h" $URL/apis)
expect_match "aggregated discovery content type" "$(cat "$T/h")" '^Content-Type: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList'
expect_match "aggregated discovery body" "$r" '"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2"'
r=$(curl -s $URL/openapi/v3)
expect_match "openapi index" "$r" '"api/v1":\{"serverRelativeURL":"/openapi/v3/api/v1\?hash=[0-9A-F]{16}"\}'
r=$(curl -s $URL/openapi/v3/api/v1)
expect_match "openapi namespace patch" "$r" '"/api/v1/namespaces/\{name\}":\{"patch":\{"parameters":\[\{"name":"fieldValidation"'

stop_server
expect_match "hang-up detected without errors" "$(cat "$T/server.log")" 'shutting down'

# faults: every write of a kind fails, with 429 and Retry-After
start_server --nodes "1:cpu=4,memory=8Gi" --fault-write-rate 1 --fault-write-code 429 --fault-retry-after 7
r=$(curl -s -D "$T/h" -o /dev/null -w '%{http_code}' -XPOST -H 'Content-Type: application/json' \
        --data-binary "$(pod f1)" $URL/api/v1/namespaces/default/pods)
expect_eq "create fault 429" "$r" 429
expect_match "Retry-After" "$(cat "$T/h")" '^Retry-After: 7'
expect_match "fault logged" "$(cat "$T/server.log")" 'fault: failing create /api/v1/namespaces/default/pods with 429'
stop_server

# faults: watches closed every second, rv watches answered 410, latency
start_server --fault-watch-close 1 --fault-watch-410 1 --fault-latency-ms 300
s=$SECONDS
curl -sN "$URL/api/v1/pods?watch=1" >/dev/null
expect_eq "watch closed by fault within 3s" "$(( SECONDS - s <= 3 ))" 1
w=$(curl -sN "$URL/api/v1/pods?watch=1&resourceVersion=1")
expect_match "watch 410 by fault" "$w" '"code":410'
t=$(curl -s -o /dev/null -w '%{time_total}' $URL/version)
expect_eq "latency added" "$(echo "$t >= 0.3" | bc)" 1
expect_match "watch faults logged" "$(cat "$T/server.log")" 'fault: closing watch'
stop_server

# faults: connections refused for a window
start_server --fault-refuse 0:2
r=$(curl -s -o /dev/null -w '%{http_code}' $URL/version || true)
expect_eq "refused during window" "$r" 000
sleep 2.2
r=$(curl -s -o /dev/null -w '%{http_code}' $URL/version)
expect_eq "accepted after window" "$r" 200
expect_match "refusal logged" "$(cat "$T/server.log")" 'fault: refusing a connection'
stop_server
finish
