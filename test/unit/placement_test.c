/*
 * Kubernetes placement rules, one scenario per rule (issue 11, part 1):
 * required pod affinity and anti-affinity (and the symmetry of existing
 * pods' anti-affinity), topology spread, host ports, the predicates'
 * switches, and the scores — preferred pod affinity, ScheduleAnyway
 * spread, taint toleration, image locality, balanced allocation.  Every
 * expected bind is worked out by hand in the comment above it; where a
 * rule could be missed, the comment says what kbatch would have bound
 * without it, so that the scenario tells the two apart.  Like every
 * scenario table, each runs through the node-selection caches and as a
 * full scan.
 *
 * Default conf (Volcano's): nodeorder's leastrequested 1,
 * balancedresource 1, podaffinity 2, tainttoleration 3, imagelocality 1,
 * podtopologyspread 2.  Nodes are 4 cpu / 8Gi unless said; pods ask
 * 1 cpu / 1Gi.  Recurring scores for such a pod: an empty node scores
 * leastrequested (75 + 87) / 2 = 81 and balancedresource 93 (fractions
 * 0.25 and 0.125): 174; a node running one other 1-cpu / 1Gi pod 62 + 87 =
 * 149; a node running a 3-cpu / 1Gi pod (0 + 75) / 2 = 37 (the pod's own
 * request counts: 4 of 4 cpu, 2 of 8Gi) and 1 - |1 - 0.25| / 2 -> 62: 99.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "manifests.h"
#include "plugins/plugins-int.h"
#include "sim/sim.h"

/* clang-format off */

#define HOSTNAME "kubernetes.io/hostname"
/* A 4-cpu / 8Gi node with its hostname and a zone label. */
#define ZNODE(name, zone) \
        NODE_X(name, ALLOC4, ", labels: {" HOSTNAME ": " name ", zone: " zone "}", "", "")
/* The same with a different allocatable map and more labels or spec. */
#define ZNODE_X(name, zone, alloc, labels, spec) \
        NODE_X(name, alloc, ", labels: {" HOSTNAME ": " name ", zone: " zone labels "}", spec, "")
/* A gang's Job whose pods carry labels, with more pod spec lines
 * (indented by six spaces). */
#define LJOB(name, n, labels, spec_extra) \
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: " name "}\n" \
        "spec:\n  parallelism: " n "\n  template:\n" \
        "    metadata: {labels: {" labels "}, annotations: {scheduling.k8s.io/group-name: " name "}}\n" \
        "    spec:\n      schedulerName: kbatch\n" \
        "      containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n" spec_extra
#define LGANG(name, min, n, labels, spec_extra) \
        PG(name, min, "2024-01-01", "") LJOB(name, n, labels, spec_extra)
/* The same group created on a later date. */
#define LGANG_AT(name, min, n, date, labels, spec_extra) \
        PG(name, min, date, "") LJOB(name, n, labels, spec_extra)
/* Required terms and spread constraints, in flow style (any indent). */
#define REQ_TERMS(kind, terms) \
        "{" kind ": {requiredDuringSchedulingIgnoredDuringExecution: [" terms "]}}"
#define PREF_TERMS(kind, terms) \
        "{" kind ": {preferredDuringSchedulingIgnoredDuringExecution: [" terms "]}}"
#define TERM_F(labels, key) "{labelSelector: {matchLabels: {" labels "}}, topologyKey: " key "}"
#define WTERM_F(w, labels, key) "{weight: " w ", podAffinityTerm: " TERM_F(labels, key) "}"
#define JOB_AFFINITY(a) "      affinity: " a "\n"
#define POD_AFFINITY(a) "  affinity: " a "\n"
#define JOB_SPREAD(c) "      topologySpreadConstraints: [" c "]\n"
#define SPREAD_F(skew, key, when, labels, extra) \
        "{maxSkew: " skew ", topologyKey: " key ", whenUnsatisfiable: " when \
        ", labelSelector: {matchLabels: {" labels "}}" extra "}"
/* Another scheduler's running pod on node with labels, asking cpu / 1Gi. */
#define LFOREIGN(name, node, cpu, labels, spec_lines) \
        POD(name, ", labels: {" labels "}", \
            "  schedulerName: default-scheduler\n  nodeName: " node "\n" spec_lines POD_REQ(cpu), \
            "phase: Running")
/* A lone pending pod of ours with labels and spec lines. */
#define LPOD(name, created, labels, spec_lines) \
        POD(name, ", creationTimestamp: '" created "T00:00:00Z', labels: {" labels "}", \
            "  schedulerName: kbatch\n" spec_lines POD_REQ("1"), "")
/* A container with a host port (a pod's containers line). */
#define PORT_POD(name, created, node, port, extra) \
        POD(name, ", creationTimestamp: '" created "T00:00:00Z'", \
            "  schedulerName: " node "\n" \
            "  containers: [{name: c, ports: [{containerPort: 80, hostPort: " port extra "}], " \
            "resources: {requests: {cpu: '1', memory: 1Gi}}}]\n", "")

/* The default conf with predicates' arguments. */
#define CONF_PREDICATES(args) \
        "actions: \"enqueue, allocate, backfill\"\n" \
        "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n" \
        "- plugins:\n  - name: overcommit\n  - name: drf\n" \
        "  - name: predicates\n    arguments: {" args "}\n" \
        "  - name: proportion\n  - name: nodeorder\n"
/* The default conf with nodeorder's arguments. */
#define CONF_NODEORDER(args) \
        "actions: \"enqueue, allocate, backfill\"\n" \
        "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n" \
        "- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n" \
        "  - name: proportion\n  - name: nodeorder\n    arguments: {" args "}\n"

#define ANTI_SELF_HOST JOB_AFFINITY(REQ_TERMS("podAntiAffinity", TERM_F("app: g", HOSTNAME)))

static const struct kb_scenario anti_affinity[] = {
    {
        /* The repro.  One node; a gang of two (minMember 2) whose
         * pods must not share a node with another app=g pod.  g-0 is
         * assumed on n1; g-1 sees it there (a gang member assumed in this
         * session counts as if bound): n1 fails its anti-affinity, and no
         * other node exists.  The gang cannot complete, so g-0 is rolled
         * back too: nothing binds.  Ignoring the rule bound both to n1. */
        .name = "anti-affinity: a 1-node cluster cannot take a 2-pod gang that must spread",
        .manifests = ZNODE("n1", "a") LGANG("g", "2", "2", "app: g", ANTI_SELF_HOST),
        .binds = "",
        .phases = "g=Inqueue",
        .message = "g: its minMember 2 pods do not all fit the free room: 0/1 nodes are available: 1 node(s) didn't match pod "
                   "anti-affinity rules.; 1st of 1 waiting in queue default",
        .reasons = "g=NotEnoughResources",
    },
    {
        /* Two empty nodes: g-0 to n1 (a tie, by name); n1 then scores 149
         * for g-1 and n2 174, so n2 wins anyway — but so it would with no
         * rule.  Three pods on two nodes tell: g-2 finds both nodes taken
         * and the gang (minMember 3) is rolled back.  Without the rule g-2
         * would join n1 (149 against n2's 149, by name). */
        .name = "anti-affinity: three pods, two nodes",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") LGANG("g", "3", "3", "app: g", ANTI_SELF_HOST),
        .binds = "",
        .message = "g: its minMember 3 pods do not all fit the free room: 0/2 nodes are available: 2 node(s) didn't match pod "
                   "anti-affinity rules.",
    },
    {
        /* Zone anti-affinity.  n1 and n2 in zone a, n3 in zone b, all
         * empty.  g-0 to n1 (a tie, by name).  g-1: zone a now holds an
         * app=g pod, so n1 and n2 fail; n3 (174).  Without the rule, n2
         * (174, before n3 by name) would have taken g-1. */
        .name = "anti-affinity: a zone holds one",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") ZNODE("n3", "b")
            LGANG("g", "2", "2", "app: g", JOB_AFFINITY(REQ_TERMS("podAntiAffinity", TERM_F("app: g", "zone")))),
        .binds = "g-0=n1 g-1=n3",
    },
    {
        /* Symmetry.  n1 runs another scheduler's pod web (1 cpu) whose own
         * required anti-affinity keeps app=db pods off its node; n2 runs a
         * 3-cpu pod.  The pod db (app=db, no affinity of its own) scores
         * n1 149, n2 99: it would go to n1, but web's term matches it, so
         * n1 fails ("existing pods anti-affinity") and db goes to n2. */
        .name = "anti-affinity: an existing pod's term keeps a matching pod away",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a")
            LFOREIGN("web", "n1", "1", "app: web", POD_AFFINITY(REQ_TERMS("podAntiAffinity", TERM_F("app: db", HOSTNAME))))
            FOREIGN("big", "n2", "3") LPOD("db", "2024-01-01", "app: db", ""),
        .binds = "db=n2",
    },
    {
        /* The same with a pod web's term does not select (app=other):
         * n1 (149) over n2 (99). */
        .name = "anti-affinity: an existing pod's term leaves other pods alone",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a")
            LFOREIGN("web", "n1", "1", "app: web", POD_AFFINITY(REQ_TERMS("podAntiAffinity", TERM_F("app: db", HOSTNAME))))
            FOREIGN("big", "n2", "3") LPOD("other", "2024-01-01", "app: other", ""),
        .binds = "other=n1",
    },
    {
        /* Symmetry within one session.  Gang a (created first: its turn
         * comes first) has one pod, app=a, whose anti-affinity rejects
         * app=b pods on its node; gang b has one pod, app=b, with no rule.
         * n2 runs a 3-cpu pod.  a-0: n1 174 over n2 99: n1.  b-0: n1 now
         * 149 against n2's 99, but a-0 — assumed, not yet bound — keeps it
         * off n1: n2. */
        .name = "anti-affinity: a pod assumed this session repels later ones",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") FOREIGN("big", "n2", "3")
            LGANG_AT("a", "1", "1", "2024-01-01", "app: a",
                     JOB_AFFINITY(REQ_TERMS("podAntiAffinity", TERM_F("app: b", HOSTNAME))))
            LGANG_AT("b", "1", "1", "2024-01-02", "app: b", ""),
        .binds = "a-0=n1 b-0=n2",
    },
    {
        /* Rolled back, gone.  Gang a (three app=a pods that must not share
         * a node, minMember 3) on two nodes: a-0 to n1, a-1 to n2, a-2
         * nowhere; the gang is rolled back.  Gang b's pod must keep off
         * nodes with app=a pods: with a's pods gone again, n1 (a tie with
         * n2, by name).  Had the rollback left them counted, b-0 would fit
         * nowhere. */
        .name = "anti-affinity: a rolled-back gang no longer counts",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a")
            LGANG_AT("a", "3", "3", "2024-01-01", "app: a",
                     JOB_AFFINITY(REQ_TERMS("podAntiAffinity", TERM_F("app: a", HOSTNAME))))
            LGANG_AT("b", "1", "1", "2024-01-02", "app: b",
                     JOB_AFFINITY(REQ_TERMS("podAntiAffinity", TERM_F("app: a", HOSTNAME)))),
        .binds = "b-0=n1",
        .phases = "a=Inqueue b=Running",
    },
    {
        /* namespaces and namespaceSelector.  A pod in namespace ml runs on
         * n1 (app=x).  Pod p in default has anti-affinity to app=x pods
         * in namespaces labelled team=ml: ml carries that label, so n1
         * fails and p goes to n2 (99) instead of n1 (149).  Its own
         * namespace (the default without either field) would not see the
         * ml pod. */
        .name = "anti-affinity: a namespace selector reaches other namespaces",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") FOREIGN("big", "n2", "3")
            "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ml, labels: {team: ml}}\n"
            POD("x", ", namespace: ml, labels: {app: x}",
                "  schedulerName: default-scheduler\n  nodeName: n1\n" POD_REQ("1"), "phase: Running")
            LPOD("p", "2024-01-01", "app: p",
                 POD_AFFINITY("{podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                              "[{labelSelector: {matchLabels: {app: x}}, namespaceSelector: "
                              "{matchLabels: {team: ml}}, topologyKey: " HOSTNAME "}]}}")),
        .binds = "p=n2",
    },
    {
        /* The same term without namespaceSelector looks at p's own
         * namespace only: n1 (149). */
        .name = "anti-affinity: by default only the pod's own namespace",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") FOREIGN("big", "n2", "3")
            POD("x", ", namespace: ml, labels: {app: x}",
                "  schedulerName: default-scheduler\n  nodeName: n1\n" POD_REQ("1"), "phase: Running")
            LPOD("p", "2024-01-01", "app: p",
                 POD_AFFINITY(REQ_TERMS("podAntiAffinity", TERM_F("app: x", HOSTNAME)))),
        .binds = "p=n1",
    },
    {
        /* mismatchLabelKeys: [job] adds `job NotIn (the pod's job)` to the
         * selector.  n1 runs app=w, job=j1 (1 cpu), n2 a 3-cpu pod.  Pod p
         * (app=w, job=j1) rejects app=w pods of other jobs: the j1 pod
         * does not count, so n1 (149).  Without the key n1 would fail and
         * p would go to n2. */
        .name = "anti-affinity: mismatchLabelKeys exempts the pod's own job",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") FOREIGN("big", "n2", "3")
            LFOREIGN("w1", "n1", "1", "app: w, job: j1", "")
            LPOD("p", "2024-01-01", "app: w, job: j1",
                 POD_AFFINITY("{podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                              "[{labelSelector: {matchLabels: {app: w}}, mismatchLabelKeys: [job], "
                              "topologyKey: " HOSTNAME "}]}}")),
        .binds = "p=n1",
    },
};

static const struct kb_scenario affinity[] = {
    {
        /* Required affinity to app=cache in the same zone.  A cache pod
         * runs on n3 (zone b).  n1 (zone a) is empty and would score best
         * (174), but fails; n2 (zone b, empty, 174) beats n3 (149). */
        .name = "affinity: into the zone of a matching pod",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "b") ZNODE("n3", "b")
            LFOREIGN("cache", "n3", "1", "app: cache", "")
            LPOD("p", "2024-01-01", "app: p", POD_AFFINITY(REQ_TERMS("podAffinity", TERM_F("app: cache", "zone")))),
        .binds = "p=n2",
    },
    {
        /* The first pod of a series.  A gang of two app=g pods, each
         * requiring an app=g pod in its zone; none runs anywhere.  g-0
         * matches its own term and no pod matches it elsewhere, so any node
         * with a zone label will do: n1 (174, by name over n2).  g-1 then
         * sees g-0 (assumed this session) in zone a: only n1 qualifies
         * (149).  Had g-0 not counted, g-1 would also be "first" and take
         * n2 (174 > 149), splitting the gang across zones. */
        .name = "affinity: a gang's first pod opens the zone for the rest",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "b")
            LGANG("g", "2", "2", "app: g", JOB_AFFINITY(REQ_TERMS("podAffinity", TERM_F("app: g", "zone")))),
        .binds = "g-0=n1 g-1=n1",
    },
    {
        /* No pod matches and the pod does not match its own term (app=p
         * against app=cache): no node qualifies. */
        .name = "affinity: nothing to be near",
        .manifests = ZNODE("n1", "a")
            LGANG("p", "1", "1", "app: p", JOB_AFFINITY(REQ_TERMS("podAffinity", TERM_F("app: cache", "zone")))),
        .binds = "",
        .message = "p: 0/1 nodes are available: 1 node(s) didn't match pod "
                   "affinity rules.",
    },
    {
        /* A node without the term's topology key never qualifies: n1 has
         * no rack label though it runs the cache pod; n2 has rack r1 but no
         * matching pod in r1.  Nothing. */
        .name = "affinity: a node without the topology key fails",
        .manifests = ZNODE("n1", "a") ZNODE_X("n2", "a", ALLOC4, ", rack: r1", "")
            LFOREIGN("cache", "n1", "1", "app: cache", "")
            LGANG("p", "1", "1", "app: p", JOB_AFFINITY(REQ_TERMS("podAffinity", TERM_F("app: cache", "rack")))),
        .binds = "",
        .message = "0/2 nodes are available: 2 node(s) didn't match pod affinity rules.",
    },
};

#define SPREAD_ZONE(skew, extra) JOB_SPREAD(SPREAD_F(skew, "zone", "DoNotSchedule", "app: s", extra))

static const struct kb_scenario spread[] = {
    {
        /* maxSkew 1 over three zones.  n1 (zone a) has 16 cpu / 32Gi, n2
         * (b) and n3 (c) 4 / 8Gi.  Scores for s-0: n1 (93 + 96) / 2 = 94
         * plus 98 = 192, n2 and n3 174.  Without the rule n1 takes all
         * four pods (after three, 75 and 87 -> 81 + 93 = 174 ties with n2
         * and wins by name).  With it: s-0 n1; s-1: zone a counts 1, the
         * least 0, 1 + 1 - 0 = 2 > 1: n2 (a tie with n3, by name); s-2:
         * only c (count 0) is within the skew: n3; s-3: every zone counts
         * 1, so any: n1 (3 of 16 cpu used scores best). */
        .name = "spread: maxSkew 1 across zones",
        .manifests = ZNODE_X("n1", "a", "cpu: '16', memory: 32Gi, pods: '110'", "", "")
            ZNODE("n2", "b") ZNODE("n3", "c") LGANG("s", "4", "4", "app: s", SPREAD_ZONE("1", "")),
        .binds = "s-0=n1 s-1=n2 s-2=n3 s-3=n1",
    },
    {
        /* minDomains 3 with two zones: fewer eligible domains than
         * minDomains, so the least count is taken as 0 and each zone takes
         * one pod.  s-0 n1, s-1 n2, s-2: 1 + 1 - 0 = 2 > 1 everywhere; the
         * gang (minMember 3) is rolled back.  Without minDomains the least
         * count after two pods is 1 and s-2 fits. */
        .name = "spread: minDomains holds pods back when domains are few",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "b")
            LGANG("s", "3", "3", "app: s", SPREAD_ZONE("1", ", minDomains: 3")),
        .binds = "",
        .message = "s: its minMember 3 pods do not all fit the free room: 0/2 nodes are available: 2 node(s) didn't match pod "
                   "topology spread constraints.",
    },
    {
        /* The same without minDomains: s-0 n1, s-1 n2, s-2 n1 (both zones
         * count 1; n1 and n2 tie at 149, by name). */
        .name = "spread: without minDomains the third pod fits",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "b") LGANG("s", "3", "3", "app: s", SPREAD_ZONE("1", "")),
        .binds = "s-0=n1 s-1=n2 s-2=n1",
    },
    {
        /* A node without the topology key: the constraint cannot be
         * evaluated there (kube-scheduler's "missing required label"). */
        .name = "spread: a node without the key",
        .manifests = NODE_X("n1", ALLOC4, ", labels: {" HOSTNAME ": n1}", "", "")
            LGANG("s", "1", "1", "app: s", SPREAD_ZONE("1", "")),
        .binds = "",
        .message = "0/1 nodes are available: 1 node(s) didn't match pod topology spread "
                   "constraints (missing required label).",
    },
    {
        /* nodeAffinityPolicy Honor (the default): only nodes the pod's
         * nodeSelector allows count.  n1 (zone a) and n2 (b) are pool=main
         * and each run one app=s pod; n3 (c, pool=other) runs none.  Honor:
         * zones a and b count 1, the least is 1, so n1 and n2 both pass
         * (1 + 1 - 1 = 1); they tie at 149: n1.  (Ignore: next scenario.) */
        .name = "spread: nodeAffinityPolicy Honor counts only the pod's nodes",
        .manifests = ZNODE_X("n1", "a", ALLOC4, ", pool: main", "") ZNODE_X("n2", "b", ALLOC4, ", pool: main", "")
            ZNODE_X("n3", "c", ALLOC4, ", pool: other", "")
            LFOREIGN("x1", "n1", "1", "app: s", "") LFOREIGN("x2", "n2", "1", "app: s", "")
            LGANG("s", "1", "1", "app: s", "      nodeSelector: {pool: main}\n" SPREAD_ZONE("1", "")),
        .binds = "s-0=n1",
    },
    {
        /* nodeAffinityPolicy Ignore: zone c (count 0) counts too, so the
         * least is 0 and a and b give 2 > 1; c is ruled out by the
         * nodeSelector: nothing. */
        .name = "spread: nodeAffinityPolicy Ignore counts every node",
        .manifests = ZNODE_X("n1", "a", ALLOC4, ", pool: main", "") ZNODE_X("n2", "b", ALLOC4, ", pool: main", "")
            ZNODE_X("n3", "c", ALLOC4, ", pool: other", "")
            LFOREIGN("x1", "n1", "1", "app: s", "") LFOREIGN("x2", "n2", "1", "app: s", "")
            LGANG("s", "1", "1", "app: s", "      nodeSelector: {pool: main}\n"
                  SPREAD_ZONE("1", ", nodeAffinityPolicy: Ignore")),
        .binds = "",
    },
    {
        /* nodeTaintsPolicy Honor: n3 (zone c, no app=s pod) carries a
         * NoSchedule taint the pod does not tolerate, so it does not count:
         * the least is 1 over a and b, and n1 takes the pod (149, by
         * name).  With the default (Ignore), c would count 0, a and b would
         * give 2 > 1, and n3 is tainted: nothing (next scenario). */
        .name = "spread: nodeTaintsPolicy Honor leaves tainted nodes out",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "b")
            ZNODE_X("n3", "c", ALLOC4, "", "taints: [{key: gpu, value: 'yes', effect: NoSchedule}]")
            LFOREIGN("x1", "n1", "1", "app: s", "") LFOREIGN("x2", "n2", "1", "app: s", "")
            LGANG("s", "1", "1", "app: s", SPREAD_ZONE("1", ", nodeTaintsPolicy: Honor")),
        .binds = "s-0=n1",
    },
    {
        .name = "spread: nodeTaintsPolicy Ignore counts tainted nodes",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "b")
            ZNODE_X("n3", "c", ALLOC4, "", "taints: [{key: gpu, value: 'yes', effect: NoSchedule}]")
            LFOREIGN("x1", "n1", "1", "app: s", "") LFOREIGN("x2", "n2", "1", "app: s", "")
            LGANG("s", "1", "1", "app: s", SPREAD_ZONE("1", "")),
        .binds = "",
        .message = "0/3 nodes are available: 1 node(s) had untolerated taint {gpu: yes}, 2 node(s) "
                   "didn't match pod topology spread constraints.",
    },
    {
        /* Pods on a node left out do not count either.  Zone a: n1 and n3
         * (tainted NoSchedule, running an app=s pod of another scheduler);
         * zone b: n2.  nodeTaintsPolicy Honor: n3 is left out, zone a
         * counts 0, so n1 (174, by name over n2) takes the pod.  Counting
         * n3's pod, zone a would give 2 > 1 and the pod would go to n2. */
        .name = "spread: pods on nodes left out do not count",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "b")
            ZNODE_X("n3", "a", ALLOC4, "", "taints: [{key: gpu, value: 'yes', effect: NoSchedule}]")
            LFOREIGN("x3", "n3", "1", "app: s", "")
            LGANG("s", "1", "1", "app: s", SPREAD_ZONE("1", ", nodeTaintsPolicy: Honor")),
        .binds = "s-0=n1",
    },
    {
        /* The same with nodeTaintsPolicy Ignore: n3's pod counts: n2. */
        .name = "spread: pods on tainted nodes count by default",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "b")
            ZNODE_X("n3", "a", ALLOC4, "", "taints: [{key: gpu, value: 'yes', effect: NoSchedule}]")
            LFOREIGN("x3", "n3", "1", "app: s", "") LGANG("s", "1", "1", "app: s", SPREAD_ZONE("1", "")),
        .binds = "s-0=n2",
    },
    {
        /* matchLabelKeys: [job] narrows the selector to the pod's own job.
         * n1 (zone a) runs two pods app=s, job=j1; n2 (zone b) a 3-cpu pod.
         * The new pod (app=s, job=j2) counts only job=j2 pods: none, so
         * any zone: n1 (2 cpu used, 3 with the pod's: (25 + 62) / 2 = 43,
         * plus 1 - |0.75 - 0.375| / 2 -> 81 = 124) over n2 (99).  Without the key zone a
         * counts 2 and only n2 would pass. */
        .name = "spread: matchLabelKeys counts the pod's own job only",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "b") FOREIGN("big", "n2", "3")
            LFOREIGN("x1", "n1", "1", "app: s, job: j1", "") LFOREIGN("x2", "n1", "1", "app: s, job: j1", "")
            LGANG("s", "1", "1", "app: s, job: j2", SPREAD_ZONE("1", ", matchLabelKeys: [job]")),
        .binds = "s-0=n1",
    },
    {
        /* A pod being deleted does not count: n1's app=s pod is
         * terminating, so both zones count 0 and n1 (149 against n2's
         * 99) takes the pod; counted, zone a would give 2 > 1. */
        .name = "spread: terminating pods do not count",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "b") FOREIGN("big", "n2", "3")
            POD("x1", ", labels: {app: s}, deletionTimestamp: '2024-01-01T00:00:00Z'",
                "  schedulerName: default-scheduler\n  nodeName: n1\n" POD_REQ("1"), "phase: Running")
            LGANG("s", "1", "1", "app: s", SPREAD_ZONE("1", "")),
        .binds = "s-0=n1",
    },
};

static const struct kb_scenario ports[] = {
    {
        /* n1 runs a pod holding hostPort 8080 (TCP, any address), n2 a
         * 3-cpu pod.  p wants 8080 too: n1 (149) fails, n2 (99).  Without
         * the check p would share the port on n1. */
        .name = "ports: a host port in use keeps the pod away",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") FOREIGN("big", "n2", "3")
            PORT_POD("old", "2024-01-01", "default-scheduler\n  nodeName: n1", "8080", "")
            PORT_POD("p", "2024-01-02", "kbatch", "8080", ""),
        .binds = "p=n2",
    },
    {
        /* The same port over UDP does not conflict: n1. */
        .name = "ports: another protocol is another port",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") FOREIGN("big", "n2", "3")
            PORT_POD("old", "2024-01-01", "default-scheduler\n  nodeName: n1", "8080", "")
            PORT_POD("p", "2024-01-02", "kbatch", "8080", ", protocol: UDP"),
        .binds = "p=n1",
    },
    {
        /* Distinct host addresses do not conflict (10.0.0.1 and
         * 10.0.0.2): n1. */
        .name = "ports: distinct host addresses",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") FOREIGN("big", "n2", "3")
            PORT_POD("old", "2024-01-01", "default-scheduler\n  nodeName: n1", "8080", ", hostIP: 10.0.0.1")
            PORT_POD("p", "2024-01-02", "kbatch", "8080", ", hostIP: 10.0.0.2"),
        .binds = "p=n1",
    },
    {
        /* Two pods of one gang (minMember 2) wanting the same host port on
         * one node: the second sees the first (assumed this session); the
         * gang is rolled back. */
        .name = "ports: a gang's pods cannot share a host port",
        .manifests = ZNODE("n1", "a") PG("g", "2", "2024-01-01", "")
            POD("g-0", IN_GROUP("g"), "  schedulerName: kbatch\n"
                "  containers: [{name: c, ports: [{containerPort: 80, hostPort: 9000}], "
                "resources: {requests: {cpu: '1', memory: 1Gi}}}]\n", "")
            POD("g-1", IN_GROUP("g"), "  schedulerName: kbatch\n"
                "  containers: [{name: c, ports: [{containerPort: 80, hostPort: 9000}], "
                "resources: {requests: {cpu: '1', memory: 1Gi}}}]\n", ""),
        .binds = "",
        .message = "g: its minMember 2 pods do not all fit the free room: 0/1 nodes are available: 1 node(s) didn't have free "
                   "ports for the requested pod ports.",
    },
};

static const struct kb_scenario switches[] = {
    {
        /* predicate.PodAffinityEnable: false turns the inter-pod rules
         * off, as in Volcano: the gang binds both pods to n1. */
        .name = "switches: PodAffinityEnable false",
        .conf = CONF_PREDICATES("predicate.PodAffinityEnable: false"),
        .manifests = ZNODE("n1", "a") LGANG("g", "2", "2", "app: g", ANTI_SELF_HOST),
        .binds = "g-0=n1 g-1=n1",
    },
    {
        /* predicate.PodTopologySpreadEnable: false: the minDomains gang
         * above binds s-0 n1, s-1 n2, s-2 n1. */
        .name = "switches: PodTopologySpreadEnable false",
        .conf = CONF_PREDICATES("predicate.PodTopologySpreadEnable: false"),
        .manifests = ZNODE("n1", "a") ZNODE("n2", "b")
            LGANG("s", "3", "3", "app: s", SPREAD_ZONE("1", ", minDomains: 3")),
        .binds = "s-0=n1 s-1=n2 s-2=n1",
    },
    {
        /* predicate.NodePortsEnable: false: p shares the port on n1. */
        .name = "switches: NodePortsEnable false",
        .conf = CONF_PREDICATES("predicate.NodePortsEnable: false"),
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") FOREIGN("big", "n2", "3")
            PORT_POD("old", "2024-01-01", "default-scheduler\n  nodeName: n1", "8080", "")
            PORT_POD("p", "2024-01-02", "kbatch", "8080", ""),
        .binds = "p=n1",
    },
    {
        /* predicate.TaintTolerationEnable: false: a NoSchedule taint no
         * longer keeps the pod off n1. */
        .name = "switches: TaintTolerationEnable false",
        .conf = CONF_PREDICATES("predicate.TaintTolerationEnable: false"),
        .manifests = ZNODE_X("n1", "a", ALLOC4, "", "taints: [{key: gpu, value: 'yes', effect: NoSchedule}]")
            LPOD("p", "2024-01-01", "app: p", ""),
        .binds = "p=n1",
    },
};

static const struct kb_scenario scores[] = {
    {
        /* Preferred affinity (weight 100) to app=cache on the node.  n2
         * runs the cache pod.  InterPodAffinity raw scores: n1 0, n2 100;
         * normalised over the candidates 0 and 100, times
         * podaffinity.weight 2: n2 gets 200 more.  n1 174, n2 149 + 200 =
         * 349: n2.  Without the preference n1 (174 > 149). */
        .name = "scores: preferred pod affinity",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") LFOREIGN("cache", "n2", "1", "app: cache", "")
            LPOD("p", "2024-01-01", "app: p", POD_AFFINITY(PREF_TERMS("podAffinity", WTERM_F("100", "app: cache", HOSTNAME)))),
        .binds = "p=n2",
    },
    {
        /* Preferred anti-affinity (weight 50) to app=cache, which runs on
         * n1; n2 runs a 3-cpu pod.  Raw: n1 -50, n2 0; normalised n1 0, n2
         * 100, times 2.  n1 149, n2 99 + 200 = 299: n2. */
        .name = "scores: preferred pod anti-affinity",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") LFOREIGN("cache", "n1", "1", "app: cache", "")
            FOREIGN("big", "n2", "3")
            LPOD("p", "2024-01-01", "app: p", POD_AFFINITY(PREF_TERMS("podAntiAffinity", WTERM_F("50", "app: cache", HOSTNAME)))),
        .binds = "p=n2",
    },
    {
        /* An existing pod's preferred affinity scores the incoming pod:
         * cache (on n2) prefers app=p pods near it, weight 10.  Raw n1 0,
         * n2 10; normalised 0 and 100, times 2: n2 149 + 200 = 349 over
         * n1 174. */
        .name = "scores: an existing pod's preferred affinity draws the pod",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a")
            LFOREIGN("cache", "n2", "1", "app: cache", POD_AFFINITY(PREF_TERMS("podAffinity", WTERM_F("10", "app: p", HOSTNAME))))
            LPOD("p", "2024-01-01", "app: p", ""),
        .binds = "p=n2",
    },
    {
        /* TaintToleration: n1 carries a PreferNoSchedule taint the pod
         * does not tolerate, n2 runs a 1-cpu pod.  Raw n1 1, n2 0, max 1:
         * n1 100 - 100 = 0, n2 100; times tainttoleration.weight 3: n1
         * 174, n2 149 + 300 = 449: n2.  Without the score n1. */
        .name = "scores: an untolerated PreferNoSchedule taint",
        .manifests = ZNODE_X("n1", "a", ALLOC4, "", "taints: [{key: spot, value: 'yes', effect: PreferNoSchedule}]")
            ZNODE("n2", "a") FOREIGN("web", "n2", "1") LPOD("p", "2024-01-01", "app: p", ""),
        .binds = "p=n2",
    },
    {
        /* The same pod tolerating the taint: both raw 0, both 100: n1. */
        .name = "scores: a tolerated PreferNoSchedule taint",
        .manifests = ZNODE_X("n1", "a", ALLOC4, "", "taints: [{key: spot, value: 'yes', effect: PreferNoSchedule}]")
            ZNODE("n2", "a") FOREIGN("web", "n2", "1")
            LPOD("p", "2024-01-01", "app: p", "  tolerations: [{key: spot, operator: Exists}]\n"),
        .binds = "p=n1",
    },
    {
        /* ImageLocality: n2 holds the pod's image (500 MiB); one node of
         * two: scaled 250 MiB; (250 - 23) * 100 / (1000 - 23) = 23 (one
         * container), times imagelocality.weight 1.  n2 runs a 100m pod:
         * (72 + 75) / 2 = 73, balanced |0.275 - 0.25| / 2 -> 98: 171 + 23
         * = 194 over n1's 174.  Without the image n1. */
        .name = "scores: image locality",
        .manifests = ZNODE("n1", "a")
            NODE_X("n2", ALLOC4, ", labels: {" HOSTNAME ": n2}", "",
                   ", images: [{names: ['repo/train:v1'], sizeBytes: 524288000}]")
            FOREIGN("web", "n2", "100m")
            POD("p", "", "  schedulerName: kbatch\n"
                "  containers: [{name: c, image: 'repo/train:v1', resources: {requests: {cpu: '1', memory: 1Gi}}}]\n", ""),
        .binds = "p=n2",
    },
    {
        /* An image named without a tag is looked up as :latest: the pod
         * asks for repo/train, the node lists repo/train:latest: n2, as
         * above. */
        .name = "scores: image locality adds :latest",
        .manifests = ZNODE("n1", "a")
            NODE_X("n2", ALLOC4, ", labels: {" HOSTNAME ": n2}", "",
                   ", images: [{names: ['repo/train:latest'], sizeBytes: 524288000}]")
            FOREIGN("web", "n2", "100m")
            POD("p", "", "  schedulerName: kbatch\n"
                "  containers: [{name: c, image: repo/train, resources: {requests: {cpu: '1', memory: 1Gi}}}]\n", ""),
        .binds = "p=n2",
    },
    {
        /* ScheduleAnyway spread on the hostname, maxSkew 1, gang of two
         * app=g pods; n2 runs another 1-cpu pod.  g-0: no app=g pod yet,
         * raw 0 + maxSkew - 1 = 0 everywhere, all 100: n1 (174 > 149).
         * g-1: n1 holds one: raw round(1 * ln(2 + 2)) = 1, n2 0; max 1,
         * min 0: n1 100 * (1 + 0 - 1) / 1 = 0, n2 100; times
         * podtopologyspread.weight 2: n1 149, n2 149 + 200: n2.  Without
         * the score g-1 would join g-0 (149 each, n1 by name). */
        .name = "scores: ScheduleAnyway spreads softly",
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") FOREIGN("web", "n2", "1")
            LGANG("g", "2", "2", "app: g", JOB_SPREAD(SPREAD_F("1", HOSTNAME, "ScheduleAnyway", "app: g", ""))),
        .binds = "g-0=n1 g-1=n2",
    },
    {
        /* podtopologyspread.weight 0 turns it off: both on n1. */
        .name = "scores: podtopologyspread.weight 0",
        .conf = CONF_NODEORDER("podtopologyspread.weight: 0"),
        .manifests = ZNODE("n1", "a") ZNODE("n2", "a") FOREIGN("web", "n2", "1")
            LGANG("g", "2", "2", "app: g", JOB_SPREAD(SPREAD_F("1", HOSTNAME, "ScheduleAnyway", "app: g", ""))),
        .binds = "g-0=n1 g-1=n1",
    },
    {
        /* BalancedAllocation, with leastrequested.weight 0.  n1 (4 cpu /
         * 4Gi) runs a 1-cpu, 3Gi pod: with p the fractions are 0.5 and 1,
         * std 0.25 -> 75.  n2 (4 cpu / 8Gi) runs a 1-cpu, 1Gi pod: 0.5 and
         * 0.25, std 0.125 -> 87: n2.  Without the score the two nodes
         * would tie and n1 win by name. */
        .name = "scores: balanced allocation",
        .conf = CONF_NODEORDER("leastrequested.weight: 0"),
        .manifests = NODE_X("n1", "cpu: '4', memory: 4Gi, pods: '110'", ", labels: {" HOSTNAME ": n1}", "", "")
            ZNODE("n2", "a")
            POD("m", "", "  schedulerName: default-scheduler\n  nodeName: n1\n"
                "  containers: [{name: c, resources: {requests: {cpu: '1', memory: 3Gi}}}]\n", "phase: Running")
            FOREIGN("web", "n2", "1") LPOD("p", "2024-01-01", "app: p", ""),
        .binds = "p=n2",
    },
};

/* Volcano's own predicates tests (plugins/predicates/predicates_test.go),
 * replayed. */
#define WORKER_ANTI \
        "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: " \
        "[{labelSelector: {matchExpressions: [{key: role, operator: In, values: [worker]}]}, " \
        "topologyKey: " HOSTNAME "}]}}\n"
#define VPOD(name, group, node, cpu, mem, labels, extra, status) \
        POD(name, ", namespace: ns1, labels: {" labels "}" IN_GROUP(group), \
            "  schedulerName: kbatch\n" node extra \
            "  containers: [{name: c, resources: {requests: {cpu: '" cpu "', memory: " mem "}}}]\n", \
            status)
#define VPG(name, min, phase, prio) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
        "metadata: {name: " name ", namespace: ns1}\n" \
        "spec: {minMember: " min ", queue: q1, priorityClassName: " prio "}\nstatus: {phase: " phase "}\n"

static const struct kb_scenario volcano[] = {
    {
        /* TestEventHandler ("pod-deallocate").  pg1 (priority 2, minMember
         * 2): worker-1 (3 cpu, nodeSelector selector=worker) and worker-2
         * (5 cpu); pg2 (priority 1): worker-3 (4 cpu); every pod role=worker
         * with hostname anti-affinity against role=worker.  node1 (14 cpu,
         * selector=worker), node2 (3 cpu).  pg1 first: worker-1 to node1
         * (the only node its selector allows); worker-2: node1 holds
         * worker-1 (anti-affinity), node2 is too small: pg1 cannot
         * complete and is rolled back.  worker-3: with worker-1 taken back,
         * node1 (node2 is too small).  Volcano expects exactly that one
         * bind; had the rollback left worker-1 counted, none. */
        .name = "volcano: a rolled-back pod no longer repels (TestEventHandler)",
        .conf = "actions: \"allocate\"\n"
                "tiers:\n- plugins:\n  - name: predicates\n  - name: gang\n  - name: priority\n",
        .manifests = NODE_X("node1", "cpu: '14', memory: 14k, pods: '10'",
                            ", labels: {selector: worker, " HOSTNAME ": node1}", "", "")
            NODE_X("node2", "cpu: '3', memory: 3k, pods: '10'", ", labels: {" HOSTNAME ": node2}", "", "")
            PRIORITY_CLASS("p1", "1") PRIORITY_CLASS("p2", "2") QUEUE("q1", "weight: 1", "")
            VPG("pg1", "2", "Inqueue", "p2") VPG("pg2", "1", "Inqueue", "p1")
            VPOD("worker-1", "pg1", "", "3", "3k", "role: worker", "  nodeSelector: {selector: worker}\n" WORKER_ANTI, "")
            VPOD("worker-2", "pg1", "", "5", "5k", "role: worker", WORKER_ANTI, "")
            VPOD("worker-3", "pg2", "", "4", "4k", "role: worker", WORKER_ANTI, ""),
        .binds = "ns1/worker-3=node1",
    },
    {
        /* TestPodAntiAffinity.  n1 (12 cpu, 2 pods) runs worker-1 (role
         * worker, hostname anti-affinity against role=worker, pod
         * priority 100000) and worker-2 (priority 10), both of pg1 (low
         * priority).  worker-3 (role worker, the same anti-affinity,
         * priority 100000, pg2 high priority) starves.  Preempt: n1 fails
         * worker-3's anti-affinity (worker-1 is there, and its own term
         * matches worker-3), so no victim is chosen there: nothing is
         * evicted or pipelined, as Volcano expects. */
        .name = "volcano: no preemption onto an anti-affinity conflict (TestPodAntiAffinity)",
        .conf = "actions: \"allocate, preempt\"\n"
                "tiers:\n- plugins:\n  - name: predicates\n  - name: priority\n",
        .manifests = NODE_X("n1", "cpu: '12', memory: 12G, pods: '2'", ", labels: {" HOSTNAME ": node1}", "", "")
            PRIORITY_CLASS("high-priority", "100000") PRIORITY_CLASS("low-priority", "10")
            QUEUE("q1", "weight: 1, capability: {cpu: '9', memory: 9G}", "")
            VPG("pg1", "0", "Running", "low-priority") VPG("pg2", "1", "Inqueue", "high-priority")
            VPOD("worker-1", "pg1", "  nodeName: n1\n", "3", "3G", "role: worker", "  priority: 100000\n" WORKER_ANTI, "phase: Running")
            VPOD("worker-2", "pg1", "  nodeName: n1\n", "3", "3G", "app: x", "  priority: 10\n", "phase: Running")
            VPOD("worker-3", "pg2", "", "3", "3G", "role: worker", "  priority: 100000\n" WORKER_ANTI, ""),
        .binds = "",
        .evicted = "",
        .nominated = "",
    },
};

/* clang-format on */

TABLE_TEST(volcano)
TABLE_TEST(anti_affinity)
TABLE_TEST(affinity)
TABLE_TEST(spread)
TABLE_TEST(ports)
TABLE_TEST(switches)
TABLE_TEST(scores)

/* ---- bad input ---------------------------------------------------------------------- */

static struct kb_pod *decode_pod(const char *yaml, char *err, size_t errlen, int *rc)
{
        struct kb_value **docs;
        size_t n;
        assert_int_equal(kb_yaml_parse(yaml, strlen(yaml), &docs, &n, err, errlen), 0);
        struct kb_pod *p = NULL;
        *rc = kb_pod_decode(docs[0], &p, err, errlen);
        kb_value_free_docs(docs, n);
        return p;
}

/* Each malformed field: the pod still decodes, with a message naming the
 * pod and the field in pod->invalid. */
static void test_bad_input(void **state)
{
        (void)state;
        static const struct {
                const char *spec, *want;
        } cases[] = {
            {"affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "[{labelSelector: {matchExpressions: [{key: app, operator: Near, values: [x]}]}, "
             "topologyKey: zone}]}}",
             "pod default/p: spec.affinity.podAntiAffinity."
             "requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0]."
             "operator: unknown operator \"Near\""},
            {"affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "[{labelSelector: {matchExpressions: [{key: app, operator: Gt, values: ['1']}]}, "
             "topologyKey: zone}]}}",
             "labelSelector.matchExpressions[0].operator: must be In, NotIn, Exists or "
             "DoesNotExist in a label selector, got Gt"},
            {"affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "[{labelSelector: {matchExpressions: [{key: app, operator: In}]}, topologyKey: "
             "zone}]}}",
             "matchExpressions[0].values: must be non-empty for operator In"},
            {"affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "[{labelSelector: {matchLabels: {app: x}}}]}}",
             "requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: required"},
            {"affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
             "[{weight: 0, podAffinityTerm: {topologyKey: zone}}]}}",
             "preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be between 1 and "
             "100"},
            {"affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "[{matchLabelKeys: [job], topologyKey: zone}]}}",
             "[0].labelSelector: required when matchLabelKeys or mismatchLabelKeys is set"},
            {"affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
             "[{labelSelector: {}, matchLabelKeys: [job], mismatchLabelKeys: [job], "
             "topologyKey: zone}]}}",
             "[0].mismatchLabelKeys[0]: \"job\" is also in matchLabelKeys"},
            {"topologySpreadConstraints: [{maxSkew: -1, topologyKey: zone, whenUnsatisfiable: "
             "DoNotSchedule}]",
             "pod default/p: spec.topologySpreadConstraints[0].maxSkew: must be greater than "
             "zero, got -1"},
            {"topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
             "Sometimes}]",
             "spec.topologySpreadConstraints[0].whenUnsatisfiable: must be ScheduleAnyway or "
             "DoNotSchedule, got \"Sometimes\""},
            {"topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone}]",
             "spec.topologySpreadConstraints[0].whenUnsatisfiable: required"},
            {"topologySpreadConstraints: [{maxSkew: 1, whenUnsatisfiable: DoNotSchedule}]",
             "spec.topologySpreadConstraints[0].topologyKey: required"},
            {"topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
             "ScheduleAnyway, minDomains: 2}]",
             "spec.topologySpreadConstraints[0].minDomains: can only be set with "
             "whenUnsatisfiable DoNotSchedule"},
            {"topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
             "DoNotSchedule, minDomains: 0}]",
             "spec.topologySpreadConstraints[0].minDomains: must be greater than zero, got 0"},
            {"topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
             "DoNotSchedule, nodeTaintsPolicy: Maybe}]",
             "nodeTaintsPolicy: must be Honor or Ignore, got \"Maybe\""},
            {"topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
             "DoNotSchedule}, {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]",
             "spec.topologySpreadConstraints[1]: duplicate {topologyKey: zone, "
             "whenUnsatisfiable: DoNotSchedule} (also in [0])"},
            {"containers: [{name: c, ports: [{containerPort: 80, hostPort: 70000}]}]",
             "spec.containers[0].ports[0].hostPort"},
            {"containers: [{name: c, ports: [{containerPort: 80, hostPort: 80, protocol: "
             "QUIC}]}]",
             "spec.containers[0].ports[0].protocol: must be TCP, UDP or SCTP, got \"QUIC\""},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                char yaml[2048], err[512] = "";
                snprintf(yaml, sizeof(yaml),
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\n"
                         "spec: {schedulerName: kbatch, %s%s}\n",
                         cases[i].spec,
                         strstr(cases[i].spec, "containers") ? "" : ", containers: [{name: c}]");
                int rc;
                struct kb_pod *p = decode_pod(yaml, err, sizeof(err), &rc);
                assert_int_equal(rc, 0);
                assert_non_null(p);
                if (!p->invalid || !strstr(p->invalid, cases[i].want)) {
                        fprintf(stderr, "case %zu: want \"%s\", got \"%s\"\n", i, cases[i].want,
                                p->invalid ? p->invalid : "(valid)");
                        fail();
                }
                assert_true(kb_has_prefix(p->invalid, "pod default/p: "));
                assert_null(p->rules);
                kb_pod_free(p);
        }
}

/* The defaults the decoder resolves, and matchLabelKeys merged. */
static void test_decode_defaults(void **state)
{
        (void)state;
        char err[512] = "";
        int rc;
        struct kb_pod *p = decode_pod(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml, labels: {job: a}}\n"
            "spec:\n  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution:"
            " [{labelSelector: {matchLabels: {app: x}}, matchLabelKeys: [job, missing], "
            "topologyKey: zone}]}}\n"
            "  topologySpreadConstraints: [{maxSkew: 2, topologyKey: zone, whenUnsatisfiable: "
            "DoNotSchedule, labelSelector: {matchLabels: {app: x}}, matchLabelKeys: [job]}]\n"
            "  initContainers: [{name: s, image: side, restartPolicy: Always, ports: "
            "[{containerPort: 1, hostPort: 53, protocol: UDP}]}, {name: i, image: init:1, ports: "
            "[{containerPort: 2, hostPort: 54}]}]\n"
            "  containers: [{name: c, image: reg:5000/app, ports: [{containerPort: 80, hostPort: "
            "8080, hostIP: 10.0.0.1}, {containerPort: 81}]}]\n",
            err, sizeof(err), &rc);
        assert_int_equal(rc, 0);
        assert_null(p->invalid);
        const struct kb_pod_rules *r = kb_pod_rules(p);
        assert_int_equal(r->nanti_affinity, 1);
        const struct kb_pod_term *t = &r->anti_affinity[0];
        assert_int_equal(t->nnamespaces, 1);
        assert_string_equal(t->namespaces[0], "ml");
        assert_false(t->ns_selector.set);
        /* app In (x), then job In (a); "missing" is not on the pod. */
        assert_int_equal(t->selector.nreqs, 2);
        assert_string_equal(t->selector.reqs[1].key, "job");
        assert_string_equal(t->selector.reqs[1].values[0], "a");
        assert_int_equal(r->nspread, 1);
        assert_int_equal(r->spread[0].min_domains, 1);
        assert_true(r->spread[0].honor_affinity);
        assert_false(r->spread[0].honor_taints);
        assert_false(r->spread[0].schedule_anyway);
        assert_int_equal(r->spread[0].selector.nreqs, 2);
        /* The sidecar's port and the container's; not the plain init
         * container's, nor a port without hostPort. */
        assert_int_equal(r->nhost_ports, 2);
        assert_string_equal(r->host_ports[0].protocol, "UDP");
        assert_string_equal(r->host_ports[0].ip, "0.0.0.0");
        assert_int_equal(r->host_ports[1].port, 8080);
        assert_string_equal(r->host_ports[1].ip, "10.0.0.1");
        assert_string_equal(r->host_ports[1].protocol, "TCP");
        /* Images of the init containers, then the containers, tagged. */
        assert_int_equal(p->nimages, 3);
        assert_string_equal(p->images[0], "side:latest");
        assert_string_equal(p->images[1], "init:1");
        assert_string_equal(p->images[2], "reg:5000/app:latest");
        kb_pod_free(p);
}

/*
 * A pod whose placement fields are malformed reaches the session (the
 * daemon decodes it; kbatch-sim refuses it as bad input): its gang is not
 * placed and says why, naming the pod and the field, and the rest of the
 * cluster is scheduled as usual.
 */
static void test_bad_pod_in_session(void **state)
{
        (void)state;
        const char *text =
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
            "status: {allocatable: {cpu: '4', memory: 8Gi}}\n" PG("ok", "1", "2024-01-01", "")
                JOB("ok", "ok", "1", "", REQ1, "") PG("bad", "1", "2024-01-01", "");
        struct kb_cluster c;
        char err[512];
        kb_cluster_init(&c);
        assert_int_equal(kb_cluster_load(&c, "t", text, strlen(text), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&c);
        int rc;
        struct kb_pod *bad = decode_pod(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: bad-0, namespace: default, annotations: "
            "{scheduling.k8s.io/group-name: bad}}\n"
            "spec:\n  schedulerName: kbatch\n"
            "  topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: "
            "DoNotSchedule}]\n"
            "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n",
            err, sizeof(err), &rc);
        assert_int_equal(rc, 0);
        assert_non_null(bad->invalid);
        KB_PUSH(c.pods, c.npods, c.cappods, bad);
        /* kbatch-sim refuses the same pod as bad input, naming it. */
        const char *yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: bad-1}\n"
                           "spec: {topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, "
                           "whenUnsatisfiable: DoNotSchedule}], containers: [{name: c}]}\n";
        assert_int_equal(kb_cluster_load(&c, "bad.yaml", yaml, strlen(yaml), err, sizeof(err)),
                         KB_EBADINPUT);
        assert_non_null(strstr(err, "bad.yaml:1: pod default/bad-1: "
                                    "spec.topologySpreadConstraints[0].maxSkew: must be greater "
                                    "than zero, got 0"));

        struct kb_conf conf;
        assert_int_equal(kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), &conf,
                                       err, sizeof(err)),
                         0);
        struct kb_snapshot snap;
        struct kb_result r;
        kb_cluster_snapshot(&c, &snap);
        assert_int_equal(kb_session_run(&snap, &conf, &r), 0);
        assert_int_equal(r.nbinds, 1);
        assert_string_equal(r.binds[0].pod->meta.name, "ok-0");
        bool said = false;
        for (size_t i = 0; i < r.npodgroups; i++)
                if (strcmp(r.podgroups[i].name, "default/bad") == 0)
                        said = r.podgroups[i].cond_message &&
                               strstr(r.podgroups[i].cond_message,
                                      "pod default/bad-0: spec.topologySpreadConstraints[0]."
                                      "maxSkew: must be greater than zero, got 0");
        assert_true(said);
        kb_result_release(&r);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
}

/* ---- random clusters against the full scan ---------------------------------------- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
        rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
        return (uint32_t)(rng_state >> 33) % n;
}

static const char *pick(const char *const *v, size_t n)
{
        return v[rnd((uint32_t)n)];
}

static const char *const apps[] = {"x", "y", "z"};
static const char *const keys[] = {"kubernetes.io/hostname", "zone", "rack"};

/* A term in flow style: a selector on app (matchLabels or an expression),
 * a topology key, sometimes other namespaces. */
static void term(struct kb_buf *b, bool weighted)
{
        if (weighted)
                kb_buf_printf(b, "{weight: %u, podAffinityTerm: ", 1 + rnd(100));
        switch (rnd(4)) {
        case 0:
                kb_buf_printf(b,
                              "{labelSelector: {matchExpressions: [{key: app, operator: NotIn, "
                              "values: [%s]}]}",
                              pick(apps, 3));
                break;
        case 1:
                kb_buf_printf(b, "{labelSelector: {matchLabels: {app: %s}}, namespaceSelector: {}",
                              pick(apps, 3));
                break;
        default:
                kb_buf_printf(b, "{labelSelector: {matchLabels: {app: %s}}", pick(apps, 3));
        }
        kb_buf_printf(b, ", topologyKey: %s}%s", pick(keys, 3), weighted ? "}" : "");
}

/* Pod spec lines (indent spaces deep) with random placement rules. */
static void rules(struct kb_buf *b, const char *indent)
{
        bool aff = rnd(4) == 0, anti = rnd(3) == 0, paff = rnd(4) == 0, panti = rnd(4) == 0;
        if (aff || anti || paff || panti) {
                kb_buf_printf(b, "%saffinity: {", indent);
                const char *sep = "";
                for (int k = 0; k < 2; k++) {
                        bool req = k ? anti : aff, pref = k ? panti : paff;
                        if (!req && !pref)
                                continue;
                        kb_buf_printf(b, "%s%s: {", sep, k ? "podAntiAffinity" : "podAffinity");
                        sep = ", ";
                        if (req) {
                                kb_buf_adds(b, "requiredDuringSchedulingIgnoredDuringExecution: [");
                                term(b, false);
                                kb_buf_adds(b, "]");
                        }
                        if (pref) {
                                kb_buf_printf(
                                    b, "%spreferredDuringSchedulingIgnoredDuringExecution: [",
                                    req ? ", " : "");
                                term(b, true);
                                kb_buf_adds(b, "]");
                        }
                        kb_buf_adds(b, "}");
                }
                kb_buf_adds(b, "}\n");
        }
        if (rnd(3) == 0) {
                bool hard = rnd(2);
                kb_buf_printf(
                    b,
                    "%stopologySpreadConstraints: [{maxSkew: %u, topologyKey: %s, "
                    "whenUnsatisfiable: %s, labelSelector: {matchLabels: {app: %s}}%s%s}]\n",
                    indent, 1 + rnd(2), pick(keys, 3), hard ? "DoNotSchedule" : "ScheduleAnyway",
                    pick(apps, 3), hard && rnd(3) == 0 ? ", minDomains: 3" : "",
                    rnd(4) == 0 ? ", nodeTaintsPolicy: Honor" : "");
        }
        if (rnd(6) == 0)
                kb_buf_printf(b, "%stolerations: [{key: spot, operator: Exists}]\n", indent);
}

static void containers(struct kb_buf *b, const char *indent)
{
        kb_buf_printf(b, "%scontainers: [{name: c, image: %s", indent, rnd(3) ? "app:v1" : "other");
        if (rnd(6) == 0)
                kb_buf_printf(b, ", ports: [{containerPort: 1, hostPort: %u}]", 8000 + rnd(2));
        kb_buf_printf(b, ", resources: {requests: {cpu: '%u', memory: 1Gi}}}]\n", 1 + rnd(2));
}

static char *random_cluster(void)
{
        struct kb_buf b;
        kb_buf_init(&b);
        uint32_t nn = 3 + rnd(12);
        for (uint32_t i = 0; i < nn; i++) {
                kb_buf_printf(&b,
                              "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%02u, labels: "
                              "{kubernetes.io/hostname: n%02u",
                              i, i);
                if (rnd(6))
                        kb_buf_printf(&b, ", zone: %c", 'a' + rnd(3));
                if (rnd(3))
                        kb_buf_printf(&b, ", rack: r%u", rnd(4));
                kb_buf_adds(&b, "}}\n");
                if (rnd(5) == 0)
                        kb_buf_printf(&b, "spec: {taints: [{key: spot, value: 'y', effect: %s}]}\n",
                                      rnd(2) ? "PreferNoSchedule" : "NoSchedule");
                kb_buf_printf(
                    &b, "status: {allocatable: {cpu: '%u', memory: 16Gi}%s}\n", 2 + rnd(6),
                    rnd(3) == 0 ? ", images: [{names: ['app:v1'], sizeBytes: 400000000}]" : "");
        }
        uint32_t nf = rnd(6);
        for (uint32_t i = 0; i < nf; i++) {
                kb_buf_printf(
                    &b,
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: f%u, labels: {app: %s}%s}\n"
                    "spec:\n  schedulerName: other\n  nodeName: n%02u\n",
                    i, pick(apps, 3),
                    rnd(5) == 0 ? ", deletionTimestamp: '2024-01-01T00:00:00Z'" : "", rnd(nn));
                rules(&b, "  ");
                containers(&b, "  ");
                kb_buf_adds(&b, "status: {phase: Running}\n");
        }
        uint32_t ng = 2 + rnd(5);
        for (uint32_t g = 0; g < ng; g++) {
                uint32_t size = 1 + rnd(4), min = 1 + rnd(size);
                kb_buf_printf(&b,
                              "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                              "metadata: {name: g%u, creationTimestamp: '2024-01-%02uT00:00:00Z'}\n"
                              "spec: {minMember: %u}\n",
                              g, 1 + g, min);
                kb_buf_printf(&b,
                              "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: g%u}\n"
                              "spec:\n  parallelism: %u\n  template:\n"
                              "    metadata: {labels: {app: %s}, annotations: "
                              "{scheduling.k8s.io/group-name: g%u}}\n"
                              "    spec:\n      schedulerName: kbatch\n",
                              g, size, pick(apps, 3), g);
                rules(&b, "      ");
                containers(&b, "      ");
        }
        return kb_buf_detach(&b);
}

/*
 * Random clusters (nodes with and without zone and rack labels, taints,
 * images; other schedulers' pods with their own rules; gangs with random
 * affinity, anti-affinity, spread, preferred terms, host ports): the
 * caches must place every pod where a full scan does, with the same
 * reasons, over two sessions.  Test builds also compare every single
 * cached answer with a full scan on the spot (select.c).  SEEDS=N runs N
 * clusters instead of 150.
 */
static void test_random_against_full_scan(void **state)
{
        (void)state;
        for (uint64_t seed = 1; seed <= (getenv("SEEDS") ? strtoull(getenv("SEEDS"), 0, 10) : 150);
             seed++) {
                rng_state = seed;
                char *text = random_cluster();
                char *cached = kb_test_run_binds(text, kb_default_conf_yaml, false, 2),
                     *scan = kb_test_run_binds(text, kb_default_conf_yaml, true, 2);
                if (strcmp(cached, scan) != 0) {
                        fprintf(stderr, "seed %llu:\n  cached: %s\n  scan:   %s\n%s\n",
                                (unsigned long long)seed, cached, scan, text);
                        fail();
                }
                free(text);
                free(cached);
                free(scan);
        }
}

/*
 * The inter-pod index is a session service: with the default conf,
 * predicates' filters (required anti-affinity) and nodeorder's scores
 * (preferred affinity) both read it, and it is built once per session,
 * not once per plugin (issue 22).  The binds are those of a run where each
 * plugin reads the same counts: g-0 and g-1 apart (the anti-affinity),
 * each next to web's pod where it can be (n1, the preferred affinity).
 */
static void test_index_built_once(void **state)
{
        (void)state;
        /* clang-format off */
        const char *cluster =
            ZNODE("n1", "a") ZNODE("n2", "b")
            LFOREIGN("web", "n1", "1", "app: web", "")
            LGANG("g", "2", "2", "app: g",
                  "      affinity: {"
                  "podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [" TERM_F("app: g", HOSTNAME) "]}, "
                  "podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [" WTERM_F("100", "app: web", HOSTNAME) "]}}\n");
        /* clang-format on */
        unsigned before = kb__ipod_builds;
        char *got = kb_test_run_binds(cluster, kb_default_conf_yaml, false, 1);
        assert_int_equal(kb__ipod_builds - before, 1);
        assert_string_equal(got, "g-0=n1 g-1=n2 [default/g Running ] ");
        free(got);
        /* Two sessions: the second has nothing pending and builds none. */
        before = kb__ipod_builds;
        got = kb_test_run_binds(cluster, kb_default_conf_yaml, false, 2);
        assert_int_equal(kb__ipod_builds - before, 1);
        free(got);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_anti_affinity),
            cmocka_unit_test(test_affinity),
            cmocka_unit_test(test_spread),
            cmocka_unit_test(test_ports),
            cmocka_unit_test(test_switches),
            cmocka_unit_test(test_scores),
            cmocka_unit_test(test_bad_input),
            cmocka_unit_test(test_decode_defaults),
            cmocka_unit_test(test_bad_pod_in_session),
            cmocka_unit_test(test_random_against_full_scan),
            cmocka_unit_test(test_index_built_once),
            cmocka_unit_test(test_volcano),
        };
        return cmocka_run_group_tests_name("placement", tests, NULL, NULL);
}
