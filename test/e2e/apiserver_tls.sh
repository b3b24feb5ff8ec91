# HTTPS and bearer tokens: the certificate the server makes, the 401s, the
# open paths, plain http refused on the TLS port, reuse of --tls-cert-dir
# and --token-file across restarts, the flag errors, and kubectl through
# the kubeconfig the server writes (when kubectl is installed).
. "$(dirname "$0")/lib/apiserver.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

UNAUTHORIZED='{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}'
code() { echo "${1%% *}"; }
mode() { stat -c %a "$1"; }

# tapi TOKEN METHOD PATH [BODY]: over https, trusting only the server's CA;
# prints "CODE BODY".  An empty TOKEN sends no Authorization header.
tapi() {
        local auth=()
        [ -n "$1" ] && auth=(-H "Authorization: Bearer $1")
        local data=()
        [ $# -ge 4 ] && data=(-H 'Content-Type: application/json' --data-binary "$4")
        curl -s --cacert "$T/tls/ca.crt" -o "$T/body" -w '%{http_code}' -X "$2" "${auth[@]}" \
                "${data[@]}" "$URL$3" >"$T/code"
        echo "$(cat "$T/code") $(cat "$T/body")"
}

start_server --tls --tls-cert-dir "$T/tls" --generate-token --token-file "$T/token" \
        --nodes "2:cpu=4,memory=8Gi"
URL=https://127.0.0.1:$P
TOK=$(cat "$T/token")

# what the server wrote
expect_match "token is 64 hex digits" "$TOK" '^[0-9a-f]{64}$'
expect_eq "token file mode" "$(mode "$T/token")" 600
expect_eq "kubeconfig mode" "$(mode "$KC")" 600
expect_eq "ca.key mode" "$(mode "$T/tls/ca.key")" 600
expect_eq "server.key mode" "$(mode "$T/tls/server.key")" 600
expect_eq "ca.crt mode" "$(mode "$T/tls/ca.crt")" 644
expect_eq "server.crt mode" "$(mode "$T/tls/server.crt")" 644
kc=$(cat "$KC")
expect_match "kubeconfig server is https" "$kc" "^    server: https://127\.0\.0\.1:$P\$"
expect_match "kubeconfig has the token" "$kc" "^    token: \"$TOK\"\$"
ca_data=$(sed -n 's/^    certificate-authority-data: //p' "$KC" | base64 -d)
expect_eq "certificate-authority-data is ca.crt" "$ca_data" "$(cat "$T/tls/ca.crt")"
log=$(cat "$T/server.log")
expect_match "log says https" "$log" "listening on https://127\.0\.0\.1:$P with a bearer token"
expect_no_match "log never shows the token" "$log" "$TOK"

# the token, none, a wrong one
r=$(tapi "$TOK" GET /api/v1/nodes)
expect_match "with the token: 200" "$r" '^200 .*"kind":"NodeList"'
r=$(tapi "" GET /api/v1/nodes)
expect_eq "without a token: 401" "$(code "$r")" 401
expect_eq "401 Status body" "${r#* }" "$UNAUTHORIZED"
r=$(tapi "x$TOK" GET /api/v1/nodes)
expect_eq "wrong token: 401" "$r" "401 $UNAUTHORIZED"
r=$(curl -s --cacert "$T/tls/ca.crt" -o /dev/null -w '%{http_code}' -H "Authorization: Basic $TOK" "$URL/api")
expect_eq "basic auth: 401" "$r" 401
r=$(tapi "" POST /api/v1/namespaces/default/pods '{"kind":"Pod"}')
expect_eq "write without a token: 401" "$r" "401 $UNAUTHORIZED"
r=$(tapi "$TOK" POST /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},"spec":{"containers":[{"name":"c","image":"i"}]}}')
expect_eq "write with the token: 201" "$(code "$r")" 201
for p in /healthz /readyz /livez /version; do
        expect_eq "$p needs no token" "$(code "$(tapi "" GET $p)")" 200
done
expect_eq "/openapi/v3 needs the token" "$(code "$(tapi "" GET /openapi/v3)")" 401

# the certificate: names localhost too, and only its CA vouches for it
r=$(curl -s --cacert "$T/tls/ca.crt" -o /dev/null -w '%{http_code}' "https://localhost:$P/version")
expect_eq "https://localhost verifies" "$r" 200
rc=0; curl -s -o /dev/null "$URL/version" || rc=$?
expect_eq "not trusted without the CA (curl exit 60)" "$rc" 60
rc=0; out=$(curl -s -m 5 -w '%{http_code}' "http://127.0.0.1:$P/version") || rc=$?
expect_eq "plain http to the TLS port fails" "$([ $rc != 0 ] && echo failed || echo "answered $out")" failed

# a watch streams over TLS, and a client that hangs up does not keep it
w=$(curl -sN --cacert "$T/tls/ca.crt" -H "Authorization: Bearer $TOK" \
        "$URL/api/v1/namespaces/default/pods?watch=1&timeoutSeconds=1")
expect_match "watch over https" "$w" '^\{"type":"ADDED".*"name":"p1"'
curl -sN --max-time 1 --cacert "$T/tls/ca.crt" -H "Authorization: Bearer $TOK" \
        "$URL/api/v1/pods?watch=1" >/dev/null

if command -v kubectl >/dev/null 2>&1; then
        out=$($K get nodes 2>&1)
        expect_match "kubectl get nodes over https" "$out" '^node-1 +Ready'
        out=$($K apply -f "$ROOT/crds/" 2>&1)
        expect_match "kubectl apply -f crds/" "$out" 'customresourcedefinition.apiextensions.k8s.io/podgroups.scheduling.volcano.sh (created|configured)'
        out=$($K get pg 2>&1)
        expect_match "kubectl get pg" "$out" 'No resources found in default namespace'
        sed 's/^    token: .*/    token: "wrong"/' "$KC" >"$T/kc-wrong"
        out=$(kubectl --kubeconfig "$T/kc-wrong" get nodes </dev/null 2>&1)
        expect_match "kubectl with a wrong token" "$out" 'You must be logged in to the server \(Unauthorized\)'
else
        echo "SKIPPED: kubectl is not installed; the kubectl checks over https did not run"
fi
stop_server

# same --tls-cert-dir and --token-file: the CA, certificate and token are reused
ca_before=$(cat "$T/tls/ca.crt")
crt_before=$(cat "$T/tls/server.crt")
start_server --tls --tls-cert-dir "$T/tls" --token-file "$T/token"
URL=https://127.0.0.1:$P
expect_match "restart reuses the files" "$(cat "$T/server.log")" 'TLS: reusing the CA and server certificate'
expect_eq "same CA" "$(cat "$T/tls/ca.crt")" "$ca_before"
expect_eq "same server certificate" "$(cat "$T/tls/server.crt")" "$crt_before"
expect_eq "token read from --token-file" "$(code "$(tapi "$TOK" GET /api)")" 200
expect_eq "still 401 without it" "$(code "$(tapi "" GET /api)")" 401
stop_server

# no --tls-cert-dir: a private temp dir, gone at exit; --token in plain http warns
mkdir -p "$T/tmp"
TMPDIR=$T/tmp start_server --tls --token s3cret
URL=https://127.0.0.1:$P
d=$(ls -d "$T"/tmp/kbatch-apiserver-tls.* 2>/dev/null)
expect_eq "temp cert dir is private" "$(mode "$d")" 700
r=$(curl -s --cacert "$d/ca.crt" -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer s3cret' "$URL/api")
expect_eq "--token s3cret: 200" "$r" 200
stop_server
expect_eq "temp cert dir removed at exit" "$(ls -A "$T/tmp")" ""
start_server --token s3cret
expect_match "token over http warns" "$(cat "$T/server.log")" 'kubectl does not send tokens over http'
expect_match "kubeconfig without --tls is http" "$(cat "$KC")" "server: http://127\.0\.0\.1:$P"
r=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer s3cret' "http://127.0.0.1:$P/api")
expect_eq "token over http still checked" "$r" 200
stop_server

# flag errors exit 2 with a message and never echo the token
flag_error() { # WHAT WANT-REGEX FLAGS...
        local what=$1 want=$2 rc=0
        shift 2
        out=$("$BIN/kbatch-apiserver" --listen 127.0.0.1:0 "$@" 2>&1) || rc=$?
        expect_eq "$what: exit 2" "$rc" 2
        expect_match "$what: message" "$out" "$want"
}
flag_error "bad token" 'the token must be' --token 'has space'
flag_error "two token sources" 'give one of --token' --token abc --generate-token --token-file "$T/t2"
rc=0; out=$("$BIN/kbatch-apiserver" --listen 127.0.0.1:0 --generate-token 2>&1) || rc=$?
expect_eq "token going nowhere: exit 2" "$rc" 2
expect_match "token going nowhere: message" "$out" 'the token would be written nowhere'
flag_error "cert dir without --tls" 'tls-cert-dir needs --tls' --tls-cert-dir "$T/x"
flag_error "missing token file" 'token-file .*No such file' --token-file "$T/none"
printf 'bad token with spaces\n' >"$T/badtok"
flag_error "bad token file" 'badtok: the token must be' --token-file "$T/badtok"
expect_no_match "bad token not echoed" "$out" 'with spaces'

finish apiserver_tls
