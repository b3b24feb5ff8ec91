# deploy/ renders with `kubectl kustomize` (what `kubectl apply -k deploy/`
# applies), with RBAC that grants only what the daemon uses; crds/ applies
# with both -k and -f; the Docker build context holds only the daemon's
# sources and builds it.
. "$(dirname "$0")/lib/scheduler.sh"

out=$(kubectl kustomize "$ROOT/deploy" 2>&1)
rc=$?
expect_eq "kubectl kustomize deploy/ succeeds" "$rc" 0
kinds=$(printf '%s\n' "$out" | grep -E '^kind:' | sort | uniq -c | awk '{print $3 "=" $1}' | tr '\n' ' ')
expect_eq "what deploy/ installs" "$kinds" "ClusterRole=1 ClusterRoleBinding=1 ConfigMap=1 CustomResourceDefinition=3 Deployment=1 Lease=1 Namespace=1 NetworkPolicy=1 PodDisruptionBudget=1 Role=1 RoleBinding=1 ServiceAccount=1 "
printf '%s\n' "$out" >"$T/deploy.yaml"

# One document per object, to look at them one by one.
doc() { # KIND NAME
        awk -v k="kind: $1" -v n="  name: $2" 'BEGIN{RS="\n---\n"} index($0, k) && index($0, n)' "$T/deploy.yaml"
}
role=$(doc ClusterRole kbatch-scheduler)
expect_eq "no delete anywhere without preemption" "$(printf '%s\n' "$role" | grep -c delete)" 0
expect_match "pods: get, list, watch" "$(printf '%s\n' "$role" | tr '\n' ' ')" '- pods +verbs: +- get +- list +- watch'
expect_eq "no wildcard" "$(printf '%s\n' "$out" | grep -c "'\*'\|\"\*\"")" 0
lease_role=$(doc Role kbatch-scheduler-leader)
expect_match "lease rights name one lease" "$lease_role" 'resourceNames:'
expect_eq "lease rights: get and update only" "$(printf '%s\n' "$lease_role" | sed -n '/verbs:/,$p' | grep -E '^  - ' | tr -d ' -' | tr '\n' ,)" "get,update,"
expect_match "the lease rights live in the scheduler's namespace" "$lease_role" 'namespace: kbatch-system'
expect_match "the Lease is installed" "$(doc Lease kbatch)" 'namespace: kbatch-system'
dep=$(doc Deployment kbatch-scheduler)
expect_match "the Deployment names that lease" "$dep" 'leader-elect-resource-name=kbatch'
expect_match "... in that namespace" "$dep" 'lock-object-namespace=kbatch-system'

# Hardened (issue 24): a pinned image (the version the daemon prints), the
# runtime's seccomp profile, non-root, no capabilities, a read-only root,
# requests and limits, replicas spread over nodes, a disruption budget, and
# only scrapers let in to the metrics port.
version=$(sed -n 's/^#define KB_VERSION "\(.*\)"/\1/p' "$ROOT/cmd/kbatch-scheduler/main.c")
expect_match "the image is pinned to the daemon's version" "$dep" "image: kbatch/kbatch-scheduler:$version\$"
expect_eq "no :latest anywhere" "$(printf '%s\n' "$out" | grep -c ':latest')" 0
flat=$(printf '%s\n' "$dep" | tr -s ' \n' ' ')
expect_match "seccompProfile: RuntimeDefault" "$flat" 'seccompProfile: type: RuntimeDefault'
expect_match "runAsNonRoot" "$flat" 'runAsNonRoot: true'
expect_match "readOnlyRootFilesystem" "$flat" 'readOnlyRootFilesystem: true'
expect_match "all capabilities dropped" "$flat" 'capabilities: drop: - ALL'
expect_match "no privilege escalation" "$flat" 'allowPrivilegeEscalation: false'
expect_match "requests and limits" "$flat" 'resources: limits: cpu: "?[0-9]+m?"? memory: [0-9]+[MG]i requests: cpu: [0-9]+m memory: [0-9]+[MG]i'
expect_match "replicas spread over nodes" "$flat" 'topologySpreadConstraints: - labelSelector: matchLabels: app: kbatch-scheduler maxSkew: 1 topologyKey: kubernetes.io/hostname'
pdb=$(doc PodDisruptionBudget kbatch-scheduler | tr -s ' \n' ' ')
expect_match "a PodDisruptionBudget keeps one replica" "$pdb" 'spec: minAvailable: 1 selector: matchLabels: app: kbatch-scheduler'
np=$(doc NetworkPolicy kbatch-scheduler | tr -s ' \n' ' ')
expect_match "a NetworkPolicy on the scheduler's pods, ingress only" "$np" 'podSelector: matchLabels: app: kbatch-scheduler policyTypes: - Ingress'
expect_match "... admitting scrapers to the metrics port and nothing else" "$np" \
        'ingress: - from: - namespaceSelector: \{\} podSelector: matchLabels: app.kubernetes.io/name: prometheus ports: - port: 8080 protocol: TCP'
expect_match "the metrics port is 8080" "$flat" 'containerPort: 8080 name: metrics'

# With the preemption component, and only then, pods may be evicted: through
# the Eviction API (create pods/eviction), which PodDisruptionBudgets hold,
# never by deleting them.
mkdir -p "$T/overlay"
rel=$(realpath --relative-to="$T/overlay" "$ROOT/deploy")
cat >"$T/overlay/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $rel
components:
- $rel/preemption
YAML
pre=$(kubectl kustomize "$T/overlay" 2>&1)
evict=$(printf '%s\n' "$pre" | awk 'BEGIN{RS="\n---\n"} index($0, "\nkind: ClusterRole\n") && index($0, "name: kbatch-scheduler-evict")')
expect_match "preemption grants create on pods/eviction" "$(printf '%s\n' "$evict" | tr '\n' ' ')" '- pods/eviction +verbs: +- create'
expect_eq "... and nothing else" "$(printf '%s\n' "$evict" | sed -n '/^rules:/,$p' | tr -s ' \n' ' ')" 'rules: - apiGroups: - "" resources: - pods/eviction verbs: - create '
expect_eq "no delete anywhere, with preemption too" "$(printf '%s\n' "$pre" | grep -c delete)" 0

# crds/ applies both ways against a live API server, and so does deploy/
# as a whole (on the real bed: through a real structural-schema validator
# and RBAC's escalation check on the roles it binds).
start_api
expect_match "kubectl apply -k crds/" "$($K apply -k "$ROOT/crds" 2>&1)" 'queues.scheduling.volcano.sh (created|unchanged|configured)'
expect_match "kubectl apply -f crds/ still works" "$($K apply -f "$ROOT/crds/" 2>&1)" 'podgroups.scheduling.volcano.sh (created|unchanged|configured)'
out=$($K apply -k "$ROOT/deploy" 2>&1)
rc=$?
expect_eq "kubectl apply -k deploy/ succeeds" "$rc" 0
expect_match "... and makes the Deployment" "$out" 'deployment.apps/kbatch-scheduler (created|unchanged|configured)'
# (A new CRD's OpenAPI is published a moment after it is established.)
explain_answers() { $K explain podgroup.spec.minMember 2>&1 | grep -Eq 'minMember.*integer'; }
wait_for "kubectl explain podgroup.spec.minMember answers" 20 explain_answers
# The CRDs' printer columns and status subresource.
create /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups \
        '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"cols"},"spec":{"minMember":3,"queue":"default"}}'
expect_match "kubectl get podgroups shows the printer columns" "$($K get podgroups 2>&1 | head -1)" 'NAME +STATUS +MINMEMBER +RUNNINGS +AGE'
code=$(api PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/cols/status \
        '{"status":{"phase":"Inqueue"}}' application/merge-patch+json)
expect_eq "status is written through the status subresource" "$code" 200
expect_eq "... and shows" "$($K get pg cols -o jsonpath='{.status.phase}')" Inqueue
api PATCH /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/cols \
        '{"status":{"phase":"Running"},"spec":{"minMember":2}}' application/merge-patch+json >/dev/null
expect_eq "a write to the object leaves its status alone" "$($K get pg cols -o jsonpath='{.status.phase}/{.spec.minMember}')" Inqueue/2
create /apis/scheduling.volcano.sh/v1beta1/queues \
        '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"cols"},"spec":{"weight":2}}'
expect_match "kubectl get queues shows the printer columns" "$($K get queues 2>&1 | head -2 | tr '\n' ' ')" '^NAME +WEIGHT +STATE .* cols +2 '

# On the real bed: the Deployment passes the "restricted" Pod Security
# Standard (kube-apiserver's PodSecurity admission warns on a workload
# that would violate it), and the new objects are valid there (a server-side
# dry run through the real validation).
if [ "$SERVER" = k8s ]; then
        $K create namespace kb-restricted >/dev/null
        $K label namespace kb-restricted pod-security.kubernetes.io/warn=restricted \
                pod-security.kubernetes.io/enforce=restricted >/dev/null
        out=$(printf '%s\n' "$dep" | sed 's/namespace: kbatch-system/namespace: kb-restricted/' |
                $K apply --dry-run=server -f - 2>&1)
        expect_match "the Deployment is valid on kube-apiserver" "$out" 'deployment.apps/kbatch-scheduler (created|configured|unchanged) \(server dry run\)'
        if printf '%s\n' "$out" | grep -q PodSecurity; then
                fail "the Deployment violates the restricted Pod Security Standard: $out"
        else pass "... and meets the restricted Pod Security Standard"; fi
        out=$(kubectl kustomize "$ROOT/deploy" | $K apply --dry-run=server -f - 2>&1)
        expect_match "the PodDisruptionBudget is valid there" "$out" 'poddisruptionbudget.policy/kbatch-scheduler (created|configured|unchanged)'
        expect_match "the NetworkPolicy is valid there" "$out" 'networkpolicy.networking.k8s.io/kbatch-scheduler (created|configured|unchanged)'
fi

# The Docker build context (.dockerignore) builds the daemon and nothing else.
ctx=$T/ctx
mkdir -p "$ctx"
# docker sends the working tree (tracked or not) through .dockerignore
(cd "$ROOT" && find Makefile pkg actions plugins cmd -type f) | while read -r f; do
        keep=no
        case "$f" in Makefile | pkg/* | actions/* | plugins/* | cmd/kbatch-scheduler/*) keep=yes ;; esac
        case "$f" in pkg/apiserver/* | pkg/kubesim/* | pkg/sim/*) keep=no ;; esac
        if [ $keep = yes ]; then mkdir -p "$ctx/$(dirname "$f")"; cp "$ROOT/$f" "$ctx/$f"; fi
done
expect_eq ".dockerignore says the same" "$(grep -v '^#' "$ROOT/.dockerignore" | tr '\n' ' ')" "* !Makefile !pkg/ pkg/apiserver/ pkg/kubesim/ pkg/sim/ !actions/ !plugins/ !cmd/kbatch-scheduler/ "
# As docker runs it: no make of ours around it (make test exports MODE=asan).
if (cd "$ctx" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MODE make -s -j2 bin/kbatch-scheduler >"$T/build.log" 2>&1); then
        pass "the daemon builds from that context"
else
        fail "the daemon does not build from the Docker context:"; tail -20 "$T/build.log"
fi
expect_match "the Dockerfile builds the daemon alone" "$(cat "$ROOT/deploy/Dockerfile")" 'make -j"\$\(nproc\)" bin/kbatch-scheduler'
finish
