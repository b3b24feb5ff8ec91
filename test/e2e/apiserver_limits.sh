# Input that is large or shaped on purpose: kbatch-apiserver refuses what
# kube-apiserver refuses, with its status and message (each taken from the
# real server on the test/k8s bed), and never stores something else than
# was sent.
. "$(dirname "$0")/lib/apiserver.sh"
code() { echo "${1%% *}"; }
# The reply to a large request, cut short: a failure must not print megabytes.
short() { head -c 1000 "$T/b"; }

start_server --nodes "1:cpu=4,memory=8Gi"
CM=/api/v1/namespaces/default/configmaps
PODS=/api/v1/namespaces/default/pods

# An escaped NUL: kube-apiserver keeps "a\u0000b" whole; C strings cannot,
# and cutting it to "a" would store another value, so it is refused naming
# the field (docs/apiserver.md).
r=$(api POST $CM '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n1","annotations":{"g\u0000evil":"x"}}}' | head -c 1000)
expect_eq "NUL in a key: 400 naming the field" "$r" '400 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the object provided is unrecognized: line 1: metadata.annotations: a NUL character (\\u0000) in the key \"g\\u0000evil\" is not accepted","reason":"BadRequest","code":400}'
r=$(api POST $CM '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n1"},"data":{"k":"a\u0000b"}}')
expect_match "NUL in a value: 400 naming the field" "$r" '^400 .*data\.k: a NUL character'
r=$(api POST $CM $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n1\ndata:\n  k: "a\\0b"\n' application/yaml)
expect_match "NUL in YAML: 400 naming the field" "$r" '^400 .*line 6: data\.k: a NUL character'
expect_eq "nothing stored" "$(code "$(api GET $CM/n1)")" 404

# Repeated keys: Strict refuses, Warn (the default) warns once per repeat,
# Ignore says nothing; the last value wins.
dup='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d1","labels":{"a":"1","a":"2"},"name":"d2"},"data":{"x":"1","x":"2"}}'
r=$(api POST "$CM?fieldValidation=Strict" "$dup" | head -c 1000)
expect_eq "duplicates under Strict" "$r" '400 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: duplicate field \"metadata.labels.a\", duplicate field \"metadata.name\", duplicate field \"data.x\"","reason":"BadRequest","code":400}'
r=$(curl -s -D "$T/h" -o "$T/b" -w '%{http_code}' -XPOST -H 'Content-Type: application/json' --data-binary "$dup" "$URL$CM")
expect_eq "duplicates under Warn: created" "$r" 201
expect_eq "a Warning per repeat" "$(grep -i '^warning:' "$T/h" | tr -d '\r')" 'Warning: 299 - "duplicate field \"metadata.labels.a\""
Warning: 299 - "duplicate field \"metadata.name\""
Warning: 299 - "duplicate field \"data.x\""'
expect_eq "the last value wins" "$(kubectl --kubeconfig "$KC" get cm d2 -o jsonpath='{.metadata.labels.a}/{.data.x}')" "2/2"
r=$(curl -s -D "$T/h" -o "$T/b" -w '%{http_code}' -XPOST -H 'Content-Type: application/json' \
        --data-binary "${dup//d2/d3}" "$URL$CM?fieldValidation=Ignore")
expect_eq "duplicates under Ignore: created" "$r" 201
expect_no_match "no warning under Ignore" "$(cat "$T/h")" '^[Ww]arning'
curl -s -D "$T/h" -o "$T/b" -XPATCH -H 'Content-Type: application/merge-patch+json' \
        --data-binary '{"metadata":{"labels":{"a":"3","a":"4"}}}' "$URL$CM/d2"
expect_eq "a merge patch's repeats are warned of" "$(grep -i '^warning:' "$T/h" | tr -d '\r')" 'Warning: 299 - "duplicate field \"metadata.labels.a\""'
r=$(api POST "$CM?fieldValidation=Strict" $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y1\n  labels:\n    a: "1"\n    a: "2"\n' application/yaml)
expect_eq "YAML duplicates under Strict" "$r" '400 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n  line 7: key \"a\" already set in map","reason":"BadRequest","code":400}'

# Annotations: 256 KiB in total, keys and values counted.
python3 -c 'import json; print(json.dumps({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ann","annotations":{"a":"x"*262140,"b":"yyyy"}}}))' >"$T/ann.json"
r=$(curl -s -o "$T/b" -w '%{http_code}' -XPOST -H 'Content-Type: application/json' --data-binary @"$T/ann.json" "$URL$CM")
expect_eq "annotations over 256 KiB: 422" "$r $(short)" '422 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap \"ann\" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes","reason":"Invalid","details":{"name":"ann","kind":"ConfigMap","causes":[{"reason":"FieldValueTooLong","message":"Too long: may not be more than 262144 bytes","field":"metadata.annotations"}]},"code":422}'
sed -i 's/yyyy/y/' "$T/ann.json"
r=$(curl -s -o "$T/b" -w '%{http_code}' -XPOST -H 'Content-Type: application/json' --data-binary @"$T/ann.json" "$URL$CM")
expect_eq "annotations of 262143 bytes: created" "$r" 201

# An object over etcd's 1.5 MiB: what a client of kube-apiserver sees is
# etcd's refusal, a 500; a dry run never reaches etcd.
python3 -c 'import json; print(json.dumps({"apiVersion":"v1","kind":"Pod","metadata":{"name":"huge"},"spec":{"containers":[{"name":"c","image":"busybox","env":[{"name":"A","value":"x"*1600000}]}]}}))' >"$T/huge.json"
r=$(curl -s -o "$T/b" -w '%{http_code}' -XPOST -H 'Content-Type: application/json' --data-binary @"$T/huge.json" "$URL$PODS")
expect_eq "1.6 MB pod: etcd's 500" "$r $(short)" '500 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: request is too large","code":500}'
r=$(curl -s -o "$T/b" -w '%{http_code}' -XPOST -H 'Content-Type: application/json' --data-binary @"$T/huge.json" "$URL$PODS?dryRun=All")
expect_eq "1.6 MB pod, dry run: passes" "$r" 201

# 80,000 labels (1.4 MB): stored, without the managedFields that would pass
# the limit, as kube-apiserver stores it.
python3 -c '
import json
labels = {"k%05d" % i: "v%05d" % i for i in range(80000)}
print(json.dumps({"apiVersion":"v1","kind":"Pod","metadata":{"name":"labels","labels":labels},"spec":{"containers":[{"name":"c","image":"busybox"}]}}))' >"$T/labels.json"
r=$(curl -s -o "$T/b" -w '%{http_code}' -XPOST -H 'Content-Type: application/json' --data-binary @"$T/labels.json" "$URL$PODS")
expect_eq "80,000 labels: created" "$r" 201
expect_eq "all labels kept" "$(kubectl --kubeconfig "$KC" get pod labels -o json | python3 -c 'import json,sys; d=json.load(sys.stdin)["metadata"]; print(len(d["labels"]), "managedFields" in d)')" "80000 False"

# A 701-byte "billion laughs" is refused at once, naming the problem.
{
        printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\n  annotations:\n'
        printf '    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        p=a
        for c in b c d e f g h i; do
                printf '    %s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n' $c $c $p $p $p $p $p $p $p $p $p
                p=$c
        done
} >"$T/bomb.yaml"
r=$(curl -s -o "$T/b" -w '%{http_code}' -XPOST -H 'Content-Type: application/yaml' --data-binary @"$T/bomb.yaml" "$URL$CM")
expect_eq "alias bomb: 400" "$r" 400
expect_match "alias bomb: named" "$(short)" 'the object provided is unrecognized: line 10: document contains excessive aliasing: \*d would make [0-9]+ nodes'
expect_eq "the server still answers" "$(code "$(api GET /api/v1/nodes)")" 200

stop_server
finish apiserver_limits
