# kbatch-scheduler against kbatch-apiserver over HTTPS with a bearer token
# that only an exec credential plugin knows: the kubeconfig's user has an
# exec stanza (client.authentication.k8s.io/v1) running a shell script that
# prints an ExecCredential with a short expirationTimestamp, so the plugin
# runs at startup and again as each credential expires.  The token never
# appears in the scheduler's log.
. "$(dirname "$0")/lib/scheduler.sh"

NODE_CPU=4
if [ "$SERVER" = k8s ]; then
        # The real bed serves TLS already; the plugin hands out the
        # scheduler's ServiceAccount token.
        start_api --nodes "2:cpu=4,memory=8Gi"
        sed -n 's/^    token: //p' "$SCHED_KC" >"$T/token"
else
        start_api --tls --tls-cert-dir "$T/tls" --generate-token --token-file "$T/token" \
                --nodes "2:cpu=4,memory=8Gi"
        URL=https://127.0.0.1:$(cat "$T/port")
        CURL_AUTH=(--cacert "$T/tls/ca.crt" -H "Authorization: Bearer $(cat "$T/token")")
        SCHED_KC=$KC
fi
TOKEN=$(cat "$T/token")

# The plugin: a new credential valid for 3 seconds on every run.
cat >"$T/plugin.sh" <<'SH'
#!/bin/sh
echo "run $KB_TEST_ENV" >>"$1/plugin-runs"
exp=$(date -u -d '+3 seconds' +%Y-%m-%dT%H:%M:%SZ)
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}\n' "$(cat "$1/token")" "$exp"
SH
chmod +x "$T/plugin.sh"
grep -q '^    token: ' "$SCHED_KC" || { echo "kubeconfig has no token line"; exit 1; }
sed "s|^    token: .*|    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: $T/plugin.sh\n      args: [\"$T\"]\n      env: [{name: KB_TEST_ENV, value: from-kubeconfig}]|" \
        "$SCHED_KC" >"$T/exec.kubeconfig"
expect_eq "exec kubeconfig carries no token" "$(grep -c "$TOKEN" "$T/exec.kubeconfig")" 0

SCHED_KC=$T/exec.kubeconfig
start_sched s -v 4
wait_for "default queue created (authenticated through the plugin)" 20 $K get queue default
gang g 2 2
wait_for "gang bound" 20 all_bound 2
wait_for "the plugin ran with the kubeconfig's env" 5 grep -q "run from-kubeconfig" "$T/plugin-runs"
# The credential is renewed when a request needs it after the expiry (as
# client-go does): wait past it, then give the scheduler work.
sleep 3.5
gang h 1 1
wait_for "still scheduling after the credential expired" 20 all_bound 3
wait_for "the plugin ran again for a new credential" 10 sh -c "[ \$(wc -l <$T/plugin-runs) -ge 2 ]"
expect_eq "no 401 answers" "$(grep -c ' 401' "$T/s.log")" 0
expect_eq "the token never appears in the log" "$(grep -c "$TOKEN" "$T/s.log")" 0

stop_sched s
grep -q "ERROR: AddressSanitizer\|runtime error" "$T/s.log" && fail "sanitizer report in the log"
finish
