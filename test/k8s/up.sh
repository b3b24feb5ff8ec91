#!/usr/bin/env bash
# Brings up a fresh real Kubernetes control plane for kbatch's tests and
# writes everything it makes into DIR:
#
#   test/k8s/up.sh DIR
#
#   DIR/etcd/                 etcd's data; its client URL in DIR/etcd.endpoint
#   DIR/pki/                  a CA, the server's certificate, the
#                             service-account signing key (openssl)
#   DIR/admin.kubeconfig      system:masters, by a static token
#   DIR/admin.token           that token (for curl: DIR/pki/ca.crt and it)
#   DIR/scheduler.kubeconfig  a token of the ServiceAccount kbatch-system/
#                             kbatch-scheduler that deploy/ creates,
#                             authorised by deploy/'s RBAC and nothing else
#   DIR/url                   the server's https URL
#   DIR/bin                   a link to the programs (etcdctl, kwok, ...)
#   DIR/*.log, DIR/*.pid      each component's log and process
#
# kube-apiserver serves TLS on a free loopback port with
# --authorization-mode=Node,RBAC and the default admission plugins;
# kube-controller-manager runs the stock controllers (Jobs, ReplicaSets,
# disruption budgets, namespaces, garbage collection, service accounts);
# KWOK runs every Node annotated kwok.x-k8s.io/node: fake (stages.yaml says
# how). deploy/ (its RBAC, the CRDs, the namespace, the Lease; not the
# Deployment, whose image nothing here runs) is applied before up.sh
# returns. test/k8s/down.sh DIR stops it all.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
[ $# = 1 ] || { echo "usage: test/k8s/up.sh DIR" >&2; exit 2; }
DIR=$(mkdir -p "$1" && cd "$1" && pwd)
. "$HERE/lib.sh"

BINS=$("$HERE/build.sh" | tail -1)
ln -sfn "$BINS" "$DIR/bin"
B=$DIR/bin
KUBECTL="kubectl --kubeconfig $DIR/admin.kubeconfig"

# ---- certificates -----------------------------------------------------------
P=$DIR/pki
mkdir -p "$P"
ossl() { openssl "$@" >>"$P/openssl.log" 2>&1 || { echo "test/k8s: openssl $1 failed; see $P/openssl.log" >&2; exit 1; }; }
ossl req -x509 -newkey rsa:2048 -nodes -keyout "$P/ca.key" -out "$P/ca.crt" -days 7 \
        -subj "/CN=kbatch-test-ca"
ossl req -newkey rsa:2048 -nodes -keyout "$P/server.key" -out "$P/server.csr" -subj "/CN=kube-apiserver"
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.96.0.1\n' >"$P/server.ext"
ossl x509 -req -in "$P/server.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
        -out "$P/server.crt" -days 7 -extfile "$P/server.ext"
ossl genrsa -out "$P/sa.key" 2048
ossl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub"
admin_token=$(openssl rand -hex 24)
echo "$admin_token" >"$DIR/admin.token"
echo "$admin_token,kbatch-test-admin,kbatch-test-admin,system:masters" >"$P/tokens.csv"
chmod 600 "$P"/*.key "$P/tokens.csv" "$DIR/admin.token"

# ---- etcd -------------------------------------------------------------------
ec=$(k8s_free_port) ep=$(k8s_free_port)
echo "http://127.0.0.1:$ec" >"$DIR/etcd.endpoint"
k8s_start etcd "$DIR" "$B/etcd" --name bed --data-dir "$DIR/etcd" \
        --listen-client-urls "http://127.0.0.1:$ec" --advertise-client-urls "http://127.0.0.1:$ec" \
        --listen-peer-urls "http://127.0.0.1:$ep" --initial-advertise-peer-urls "http://127.0.0.1:$ep" \
        --initial-cluster "bed=http://127.0.0.1:$ep" --unsafe-no-fsync --log-level warn
k8s_wait etcd "$DIR" 30 "$B/etcdctl" --endpoints "http://127.0.0.1:$ec" endpoint health

# ---- kube-apiserver ---------------------------------------------------------
ap=$(k8s_free_port)
echo "https://127.0.0.1:$ap" >"$DIR/url"
k8s_start kube-apiserver "$DIR" "$B/kube-apiserver" \
        --etcd-servers "http://127.0.0.1:$ec" \
        --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$ap" \
        --endpoint-reconciler-type none \
        --tls-cert-file "$P/server.crt" --tls-private-key-file "$P/server.key" \
        --client-ca-file "$P/ca.crt" --token-auth-file "$P/tokens.csv" \
        --authorization-mode Node,RBAC \
        --service-account-issuer https://kubernetes.default.svc \
        --service-account-key-file "$P/sa.pub" --service-account-signing-key-file "$P/sa.key" \
        --service-cluster-ip-range 10.96.0.0/16 --cert-dir "$P/serving" \
        --allow-privileged=true --profiling=false
kubeconfig() { # FILE USER TOKEN
        cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: bed
  cluster:
    server: https://127.0.0.1:$ap
    certificate-authority-data: $(base64 -w0 <"$P/ca.crt")
users:
- name: $2
  user:
    token: $3
contexts:
- name: bed
  context: {cluster: bed, user: $2, namespace: default}
current-context: bed
EOF
        chmod 600 "$1"
}
kubeconfig "$DIR/admin.kubeconfig" admin "$admin_token"
k8s_wait kube-apiserver "$DIR" 90 curl -sf --cacert "$P/ca.crt" -H "Authorization: Bearer $admin_token" \
        "https://127.0.0.1:$ap/readyz"

# ---- deploy/: RBAC, CRDs, namespace, Lease (not the Deployment) --------------
# Before the controller-manager, so that its garbage collector knows the
# CRDs from its start.
# The preemption component is part of what deploy/ grants when preemption
# is on, and the scheduler tests preempt.
mkdir -p "$DIR/deploy"
rel=$(realpath --relative-to="$DIR/deploy" "$ROOT/deploy")
cat >"$DIR/deploy/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $rel
components:
- $rel/preemption
patches:
- target: {kind: Deployment, name: kbatch-scheduler}
  patch: |
    \$patch: delete
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: kbatch-scheduler}
EOF
if ! $KUBECTL apply -k "$DIR/deploy" >"$DIR/deploy.log" 2>&1; then
        echo "test/k8s: kubectl apply -k deploy/ failed:" >&2; cat "$DIR/deploy.log" >&2
        exit 1
fi
$KUBECTL wait --for condition=established --timeout=30s crd/podgroups.scheduling.volcano.sh \
        crd/queues.scheduling.volcano.sh >/dev/null
tok=$($KUBECTL create token kbatch-scheduler -n kbatch-system --duration 48h)
kubeconfig "$DIR/scheduler.kubeconfig" kbatch-scheduler "$tok"
# ---- kube-controller-manager ------------------------------------------------
k8s_start kube-controller-manager "$DIR" "$B/kube-controller-manager" \
        --kubeconfig "$DIR/admin.kubeconfig" --leader-elect=false \
        --service-account-private-key-file "$P/sa.key" --root-ca-file "$P/ca.crt" \
        --use-service-account-credentials=false --secure-port 0 \
        --kube-api-qps 1000 --kube-api-burst 2000 --concurrent-job-syncs 20
# Pods need their namespace's default ServiceAccount (admission), which
# the controller-manager makes.
k8s_wait kube-controller-manager "$DIR" 60 $KUBECTL get serviceaccount default -n default
# The garbage collector watches the resources it found at its start (and
# looks again only every 30 s): the CRDs are in by now, so an object a
# PodGroup's owner takes with it is collected from the first test on.
k8s_wait kube-controller-manager "$DIR" 60 grep -q "all resource monitors have synced" \
        "$DIR/kube-controller-manager.log"

# ---- KWOK -------------------------------------------------------------------
kp=$(k8s_free_port)
k8s_start kwok "$DIR" "$B/kwok" --kubeconfig "$DIR/admin.kubeconfig" --config "$HERE/stages.yaml" \
        --manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
        --node-lease-duration-seconds 40 --server-address "127.0.0.1:$kp" \
        --cidr 10.244.0.0/16 --node-ip 10.240.0.1
k8s_wait kwok "$DIR" 30 curl -sf "http://127.0.0.1:$kp/healthz"

echo "test/k8s: up in $DIR ($(cat "$DIR/url"))" >&2
