/*
 * Network topology placement (PodGroup spec.networkTopology, HyperNodes,
 * node-label tiers): scenarios with every expected bind worked out by hand
 * in the comment above it, from the rules in the banners of
 * actions/topology.c and pkg/framework/topology.c; then the session's
 * warnings about HyperNodes that do not fit together, and the conf's
 * errors.  Like every scenario table, each runs through the
 * node-selection caches and as a full scan.
 *
 * The cluster, unless a scenario says otherwise: block b1 holds racks r1
 * (nodes n1, n2) and r2 (n3, n4), nodes of 4 cpu, 8Gi, 110 pods; other
 * schedulers' pods (1Gi each) take cpu as each scenario says.  Gang pods
 * ask 1 cpu and 1Gi.  The domain binpack score is the mean over cpu and
 * memory of (used + the gang's request) / allocatable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "framework/framework.h"
#include "manifests.h"
#include "sim/sim.h"

/* clang-format off */

#define LNODE(name, rack, block) \
        NODE_X(name, ALLOC4, ", labels: {rack: " rack ", block: " block "}", "", "")
#define RACKS LNODE("n1", "r1", "b1") LNODE("n2", "r1", "b1") LNODE("n3", "r2", "b1") LNODE("n4", "r2", "b1")
/* Another scheduler's running pod on node, asking cpu and 1Gi. */
#define FOREIGN(name, node, cpu) \
        POD(name, "", "  schedulerName: default-scheduler\n  nodeName: " node "\n" POD_REQ(cpu), \
            "phase: Running")
#define HARD(tier) ", networkTopology: {mode: hard, highestTierAllowed: " tier "}"
#define SOFT(tier) ", networkTopology: {mode: soft, highestTierAllowed: " tier "}"
/* A running pod of group g on node. */
#define RUNNING(name, g, node) \
        POD(name, IN_GROUP(g), "  schedulerName: kbatch\n  nodeName: " node "\n" POD_REQ("1"), \
            "phase: Running")
#define HN(name, tier, members) \
        "---\napiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: " name "}\n" \
        "spec: {tier: " tier ", members: [" members "]}\n"
/* A HyperNode with a tierName. */
#define HNT(name, tier, tier_name, members) \
        "---\napiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: " name "}\n" \
        "spec: {tier: " tier ", tierName: " tier_name ", members: [" members "]}\n"
#define M_NODE(n) "{type: Node, selector: {exactMatch: {name: " n "}}}"
#define M_HN(n) "{type: HyperNode, selector: {exactMatch: {name: " n "}}}"

#define TOPOLOGY_PLUGIN \
        "  - name: network-topology-aware\n    arguments:\n" \
        "      hypernode.tier1.label: rack\n      hypernode.tier2.label: block\n"
/* Volcano's default conf plus the plugin naming the tier labels. */
#define CONF_LABELS \
        "actions: \"enqueue, allocate, backfill\"\n" \
        "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n" \
        "- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n" \
        "  - name: proportion\n  - name: nodeorder\n" TOPOLOGY_PLUGIN
/* The same scoring nodes with binpack instead of nodeorder. */
#define CONF_BINPACK \
        "actions: \"enqueue, allocate, backfill\"\n" \
        "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n" \
        "- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n" \
        "  - name: binpack\n" TOPOLOGY_PLUGIN

/* RACKS with the hostname label that anti-affinity on the hostname reads
 * (a node without the label is in no domain of that key, and the rule does
 * not hold there). */
#define HNODE(name, rack, block) \
        NODE_X(name, ALLOC4, ", labels: {rack: " rack ", block: " block ", kubernetes.io/hostname: " \
               name "}", "", "")
#define HRACKS HNODE("n1", "r1", "b1") HNODE("n2", "r1", "b1") HNODE("n3", "r2", "b1") HNODE("n4", "r2", "b1")
/* Pod NAME of group g, 1 cpu and 1Gi, labelled app: g, with required
 * anti-affinity on the hostname against the pods labelled app: g. */
#define SPREAD_POD(name, g) \
        POD(name, ", labels: {app: " g "}, annotations: {scheduling.k8s.io/group-name: " g "}", \
            "  schedulerName: kbatch\n  affinity:\n    podAntiAffinity:\n" \
            "      requiredDuringSchedulingIgnoredDuringExecution:\n" \
            "      - labelSelector: {matchLabels: {app: " g "}}\n" \
            "        topologyKey: kubernetes.io/hostname\n" POD_REQ("1"), "")

/* Another scheduler's running pod labelled app: x on node, asking cpu. */
#define XPOD(name, node, cpu) \
        POD(name, ", labels: {app: x}", "  schedulerName: default-scheduler\n  nodeName: " node "\n" \
            POD_REQ(cpu), "phase: Running")
/* Pod NAME of group g, 1 cpu, with required pod affinity on the hostname
 * to the pods labelled app: x. */
#define NEAR_X_POD(name, g) \
        POD(name, IN_GROUP(g), \
            "  schedulerName: kbatch\n  affinity:\n    podAffinity:\n" \
            "      requiredDuringSchedulingIgnoredDuringExecution:\n" \
            "      - labelSelector: {matchLabels: {app: x}}\n" \
            "        topologyKey: kubernetes.io/hostname\n" POD_REQ("1"), "")

static const struct kb_scenario placement[] = {
    {
        /* Racks that interleave the names: r1 holds n1 and n3, r2 n2 and
         * n4, so in topology order the nodes go n1, n3, n2, n4, not by
         * name.  Pod a-0 (no networkTopology of its own) must share a host
         * with an app=x pod: n2 (one of 3 cpu) or n3 (one of 1 cpu).
         * nodeorder's leastrequested prefers the emptier: n3 (cpu 2 of 4,
         * memory 2 of 8Gi: (50 + 75) / 2 = 62) over n2 (cpu 4 of 4: (0 +
         * 75) / 2 = 37); balancedresource also prefers n3 (1 - |0.5 -
         * 0.25| / 2 -> 87 against 1 - |1 - 0.25| / 2 -> 62).  The nodes the
         * affinity lists must be compared by their places in that order,
         * not by their indices. */
        .name = "topology order: a node list from pod affinity picks the best node",
        .conf = CONF_LABELS,
        .manifests = HNODE("n1", "r1", "b1") HNODE("n2", "r2", "b1") HNODE("n3", "r1", "b1")
            HNODE("n4", "r2", "b1") XPOD("x2", "n2", "3") XPOD("x3", "n3", "1")
                PG("a", "1", "2024-01-01", "") NEAR_X_POD("a-0", "a"),
        .binds = "a-0=n3",
    },
    {
        /* Every node free; gang g (two pods, hard, highestTierAllowed 1)
         * whose pods may not share a host.  Tier 1: r1 and r2 score alike
         * (binpack), r1 by name.  In r1 binpack would put both on n1, but
         * g-1's anti-affinity sees g-0 there (assumed in this session):
         * g-0 n1, g-1 n2, within r1. */
        .name = "topology and anti-affinity: the gang spreads over hosts within its rack",
        .conf = CONF_BINPACK,
        .manifests = HRACKS PG("g", "2", "2024-01-01", HARD("1")) SPREAD_POD("g-0", "g")
            SPREAD_POD("g-1", "g"),
        .binds = "g-0=n1 g-1=n2",
        .domains = "g=r1",
    },
    {
        /* The same gang of three: a rack has two hosts, so in r1 g-2 fits
         * no node (both hold a g pod) and r1 is rolled back whole, r2
         * likewise; the hard gang waits, never split over racks.  The
         * message is the domain refusal's, which reports room only: the
         * largest allowed domain by room, r1 and r2 alike (8 cpu, 16Gi,
         * 220 pods free), r1 by name; it does not say that anti-affinity
         * is what refused (a placement inside a domain keeps no fit error
         * today; left as a known gap). */
        .name = "topology and anti-affinity: a gang no rack's hosts can hold waits",
        .conf = CONF_BINPACK,
        .manifests = HRACKS PG("g", "3", "2024-01-01", HARD("1")) SPREAD_POD("g-0", "g")
            SPREAD_POD("g-1", "g") SPREAD_POD("g-2", "g"),
        .binds = "",
        .message = "g: no network topology domain of tier <= 1 can hold the whole gang (3 more "
                   "task(s) need at least cpu: 3, memory: 3Gi, pods: 3); the largest, r1 (tier "
                   "1), has cpu: 8, memory: 16Gi, pods: 220 free",
    },
    {
        /* r1 has 1 cpu free (n1 3 taken, n2 4), r2 is empty.  Gang g, two
         * pods, hard, highestTierAllowed 2: tier 1 first; r1 is short of
         * the 2 cpu the gang needs, r2 holds it.  In r2 binpack puts g-0 on
         * n3 (n3, n4 tie: name) and g-1 on n3 again (now the fuller).
         * Were the block tried first (its score, cpu (7+2)/16 and memory
         * (2+2)/32, beats r2's 2/8 and 2/16), binpack would put g-0 on n1
         * and g-1 on n3: split over racks. */
        .name = "topology: the lowest tier that fits comes first",
        .conf = CONF_BINPACK,
        .manifests = RACKS FOREIGN("f1", "n1", "3") FOREIGN("f2", "n2", "4")
            GANG("g", "2", "2", "1", HARD("2")),
        .binds = "g-0=n3 g-1=n3",
        .domains = "g=r2",
    },
    {
        /* r1 has 2 cpu free (n1 and n2 3 taken each), r2 8.  Gang g of two,
         * hard, tier 1: both racks hold it.  Scores: r1 cpu (6+2)/8 = 1,
         * memory (2+2)/16 = 0.25, mean 0.625; r2 (0+2)/8 and 2/16, 0.1875.
         * The tightest, r1, first: g-0 on n1 (n1, n2 tie: name), g-1 on n2
         * (n1 is full).  Without the domain binpack, nodeorder's least
         * requested would spread it over the empty n3 and n4. */
        .name = "topology: the tightest fit among domains of one tier",
        .conf = CONF_LABELS,
        .manifests = RACKS FOREIGN("f1", "n1", "3") FOREIGN("f2", "n2", "3")
            GANG("g", "2", "2", "1", HARD("1")),
        .binds = "g-0=n1 g-1=n2",
        .domains = "g=r1",
    },
    {
        /* Every node has 2 cpu taken: each rack has 4 free, the block 8.
         * Gang g of five, hard, tier 1: no rack holds five, and the gang is
         * not split; it waits.  Both racks cover 4/5 of the cpu it needs
         * (memory 14Gi and 218 pods free each): the largest is r1 by name.
         * Without the constraint it would bind over both racks. */
        .name = "topology: a hard gang waits rather than be split",
        .conf = CONF_LABELS,
        .manifests = RACKS FOREIGN("f1", "n1", "2") FOREIGN("f2", "n2", "2")
            FOREIGN("f3", "n3", "2") FOREIGN("f4", "n4", "2") GANG("g", "5", "5", "1", HARD("1")),
        .binds = "",
        .phases = "g=Inqueue",
        .message = "g: no network topology domain of tier <= 1 "
                   "can hold the whole gang (5 more task(s) need at least cpu: 5, memory: 5Gi, "
                   "pods: 5); the largest, r1 (tier 1), has cpu: 4, memory: 14Gi, pods: 218 free",
        .domains = "g=-",
    },
    {
        /* The same gang with highestTierAllowed 2: no rack holds it, the
         * block does (8 free).  In b1 each pod goes nearest those placed
         * (Volcano's network-topology-aware node score: 100 on the job's
         * own rack, 0 where the common ancestor is the top tier, b1), and
         * within a rack nodeorder spreads: g-0 n1 (all tie: name), g-1 n2
         * (r1, n1 the fuller now), g-2 n1, g-3 n2; r1 is full, so g-4 n3
         * (by nodeorder and name alone: n1 n2 n3 n4 n1). */
        .name = "topology: highestTierAllowed lets a gang span a block",
        .conf = CONF_LABELS,
        .manifests = RACKS FOREIGN("f1", "n1", "2") FOREIGN("f2", "n2", "2")
            FOREIGN("f3", "n3", "2") FOREIGN("f4", "n4", "2") GANG("g", "5", "5", "1", HARD("2")),
        .binds = "g-0=n1 g-1=n2 g-2=n1 g-3=n2 g-4=n3",
        .domains = "g=b1",
    },
    {
        /* highestTierName names the tier by its label key: rack, tier 1.
         * The gang of five then waits as with highestTierAllowed 1, where
         * with no bound at all it would span b1. */
        .name = "topology: highestTierName names the tier",
        .conf = CONF_LABELS,
        .manifests = RACKS FOREIGN("f1", "n1", "2") FOREIGN("f2", "n2", "2")
            FOREIGN("f3", "n3", "2") FOREIGN("f4", "n4", "2")
            GANG("g", "5", "5", "1", ", networkTopology: {highestTierName: rack}"),
        .binds = "",
        .message = "g: no network topology domain at or below a "
                   "domain of tierName rack can hold the whole gang",
    },
    {
        /* highestTierAllowed 0: no domain is that low, so none may hold the
         * gang, and it waits saying so. */
        .name = "topology: no domain of an allowed tier",
        .conf = CONF_LABELS,
        .manifests = RACKS GANG("g", "1", "1", "1", HARD("0")),
        .binds = "",
        .message = "g: no network topology domain of tier <= 0 "
                   "exists to hold the gang",
    },
    {
        /* Soft, and no rack holds the five: the gang falls back to every
         * node, placed as without a topology (nodeorder spreads it as in
         * the block above).  Its domain is then b1. */
        .name = "topology: a soft gang falls back to every node",
        .conf = CONF_LABELS,
        .manifests = RACKS FOREIGN("f1", "n1", "2") FOREIGN("f2", "n2", "2")
            FOREIGN("f3", "n3", "2") FOREIGN("f4", "n4", "2") GANG("g", "5", "5", "1", SOFT("1")),
        .binds = "g-0=n1 g-1=n2 g-2=n1 g-3=n2 g-4=n3",
        .domains = "g=b1",
    },
    {
        /* Soft, and both racks hold four: the gang goes to one rack, r1
         * (tie: name): g-0 n1, g-1 n2, g-2 n1, g-3 n2.  Without the
         * preference nodeorder would spread it over all four nodes. */
        .name = "topology: a soft gang prefers one domain",
        .conf = CONF_LABELS,
        .manifests = RACKS FOREIGN("f1", "n1", "2") FOREIGN("f2", "n2", "2")
            FOREIGN("f3", "n3", "2") FOREIGN("f4", "n4", "2") GANG("g", "4", "4", "1", SOFT("1")),
        .binds = "g-0=n1 g-1=n2 g-2=n1 g-3=n2",
        .domains = "g=r1",
    },
    {
        /* The cluster of "the tightest fit" defined by HyperNodes instead of
         * labels: r1 lists n1 and n2 by a pattern, r2 its nodes by label,
         * b1 both racks by name.  The same domains, the same binds. */
        .name = "topology: HyperNodes give what the labels give",
        .manifests = RACKS FOREIGN("f1", "n1", "3") FOREIGN("f2", "n2", "3")
            HN("r1", "1", "{type: Node, selector: {regexMatch: {pattern: '^n[12]$'}}}")
            HN("r2", "1", "{type: Node, selector: {labelMatch: {matchLabels: {rack: r2}}}}")
            HN("b1", "2", M_HN("r1") ", " M_HN("r2"))
            GANG("g", "2", "2", "1", HARD("1")),
        .binds = "g-0=n1 g-1=n2",
        .domains = "g=r1",
    },
    {
        /* Gang g (minMember 3) has g-0 and g-1 running on n1 and g-2
         * pending; r2 is the tighter rack (n3 and n4 have 3 cpu taken).  A
         * gang with tasks on nodes stays within the highest allowed domain
         * above them, r1: g-2 goes to n2, the emptier node there.  Ranked
         * afresh, r2 (score 1 in cpu) would have taken it: split. */
        .name = "topology: a gang with tasks placed stays in their domain",
        .conf = CONF_LABELS,
        .manifests = RACKS FOREIGN("f3", "n3", "3") FOREIGN("f4", "n4", "3")
            PG("g", "3", "2024-01-01", HARD("1")) RUNNING("g-0", "g", "n1") RUNNING("g-1", "g", "n1")
            POD("g-2", IN_GROUP("g"), "  schedulerName: kbatch\n" POD_REQ("1"), ""),
        .binds = "g-2=n2",
        .domains = "g=r1",
    },
    {
        /* A rescheduled gang's next pods go near its running ones (Volcano:
         * allocateResourcesForTasks hands each task the job's
         * AllocatedHyperNode, and network-topology-aware's batchNodeOrderFn
         * scores nodes on that rack 100, nodes whose common ancestor with
         * it is the top tier 0).  Other pods take 3 cpu of n1, n2 and n4,
         * 2 of n3; gang g (hard tier 2, minMember 4) runs g-0 on n3 (r2)
         * and g-1..g-3 wait.  Every node has 1 cpu free: no rack holds 3,
         * so b1.  g-1 n3 and g-2 n4 (r2, g-0's rack; n3 first by name),
         * then r2 is full and g-3 takes n1 (all alike: name).  By nodeorder
         * and name alone: n1, n2, n3. */
        .name = "topology: a rescheduled gang goes on next to its running pods",
        .conf = CONF_LABELS,
        .manifests = RACKS FOREIGN("f1", "n1", "3") FOREIGN("f2", "n2", "3")
            FOREIGN("f3", "n3", "2") FOREIGN("f4", "n4", "3")
            PG("g", "4", "2024-01-01", HARD("2")) RUNNING("g-0", "g", "n3")
            POD("g-1", IN_GROUP("g"), "  schedulerName: kbatch\n" POD_REQ("1"), "")
            POD("g-2", IN_GROUP("g"), "  schedulerName: kbatch\n" POD_REQ("1"), "")
            POD("g-3", IN_GROUP("g"), "  schedulerName: kbatch\n" POD_REQ("1"), ""),
        .binds = "g-1=n3 g-2=n4 g-3=n1",
        .domains = "g=b1",
    },
    {
        /* The same with mode soft: b1 is the allowed domain it tries
         * first, and the pods go the same way. */
        .name = "topology: a rescheduled soft gang goes on next to its running pods",
        .conf = CONF_LABELS,
        .manifests = RACKS FOREIGN("f1", "n1", "3") FOREIGN("f2", "n2", "3")
            FOREIGN("f3", "n3", "2") FOREIGN("f4", "n4", "3")
            PG("g", "4", "2024-01-01", SOFT("2")) RUNNING("g-0", "g", "n3")
            POD("g-1", IN_GROUP("g"), "  schedulerName: kbatch\n" POD_REQ("1"), "")
            POD("g-2", IN_GROUP("g"), "  schedulerName: kbatch\n" POD_REQ("1"), "")
            POD("g-3", IN_GROUP("g"), "  schedulerName: kbatch\n" POD_REQ("1"), ""),
        .binds = "g-1=n3 g-2=n4 g-3=n1",
        .domains = "g=b1",
    },
    {
        /* Volcano master's allocate_test.go, "hard network topology
         * constrain and tasks in job rescheduled, can allocate job when
         * LCAHyperNode is empty": HyperNodes s0 (s0-n1, s0-n2) and s1
         * (s1-n3, s1-n4), tier 1 both, and nothing above them.  Gang g
         * (hard, highestTierAllowed 2, minMember 2) runs g-0 and g-1 (2 cpu
         * each) on s0's nodes, which are full, and g-2 waits.  Volcano keeps
         * a rescheduled gang to the domains whose lowest common HyperNode
         * with its own is within the allowed tier; s1 and s0 have none
         * (different trees), and Volcano lets such a domain take the task:
         * g-2 goes to s1 (s1-n3, the first of two empty nodes). */
        .name = "topology: a gang's tasks may go to a domain with no common ancestor",
        .manifests = NODE_RES("s0-n1", "2", "8Gi", "110") NODE_RES("s0-n2", "2", "8Gi", "110")
            NODE_RES("s1-n3", "2", "8Gi", "110") NODE_RES("s1-n4", "2", "8Gi", "110")
            HN("s0", "1", M_NODE("s0-n1") ", " M_NODE("s0-n2"))
            HN("s1", "1", M_NODE("s1-n3") ", " M_NODE("s1-n4"))
            PG("g", "2", "2024-01-01", HARD("2"))
            POD("g-0", IN_GROUP("g"), "  schedulerName: kbatch\n  nodeName: s0-n1\n" POD_REQ("2"),
                "phase: Running")
            POD("g-1", IN_GROUP("g"), "  schedulerName: kbatch\n  nodeName: s0-n2\n" POD_REQ("2"),
                "phase: Running")
            POD("g-2", IN_GROUP("g"), "  schedulerName: kbatch\n" POD_REQ("2"), ""),
        .binds = "g-2=s1-n3",
    },
    {
        /* The same with a tier-2 HyperNode s2 above s0 and s1 and
         * highestTierAllowed 1: the common ancestor, s2, is wider than
         * allowed, and g-2 stays pending (Volcano's "can not allocate job
         * when cross highestTierAllowed tier"). */
        .name = "topology: a gang's tasks never go past the allowed common ancestor",
        .manifests = NODE_RES("s0-n1", "2", "8Gi", "110") NODE_RES("s0-n2", "2", "8Gi", "110")
            NODE_RES("s1-n3", "2", "8Gi", "110") NODE_RES("s1-n4", "2", "8Gi", "110")
            HN("s0", "1", M_NODE("s0-n1") ", " M_NODE("s0-n2"))
            HN("s1", "1", M_NODE("s1-n3") ", " M_NODE("s1-n4"))
            HN("s2", "2", M_HN("s0") ", " M_HN("s1"))
            PG("g", "2", "2024-01-01", HARD("1"))
            POD("g-0", IN_GROUP("g"), "  schedulerName: kbatch\n  nodeName: s0-n1\n" POD_REQ("2"),
                "phase: Running")
            POD("g-1", IN_GROUP("g"), "  schedulerName: kbatch\n  nodeName: s0-n2\n" POD_REQ("2"),
                "phase: Running")
            POD("g-2", IN_GROUP("g"), "  schedulerName: kbatch\n" POD_REQ("2"), ""),
        .binds = "",
    },
    {
        /* Volcano master's allocate_test.go, "hard network topology
         * constrain and task in job rescheduled, can allocate job when the
         * tier corresponding to highestTierName not reached and
         * hyperNodesInfo has three tier": the PodGroup's recorded HyperNode
         * has no matching allocation (its running pods g-0, g-1 are on
         * s0-n1 and s0-n2, nodes no longer in the cluster).  Racks s3..s6
         * (tierName volcano.sh/task-spec) under s1, s2 (volcano.sh/job-spec)
         * under s0; gang hard, highestTierName volcano.sh/job-spec,
         * minMember 2.  The gang has nothing on a known node, so it is
         * placed afresh, in the tightest rack that holds g-2: s4 and s5
         * (2 cpu each) score 2/2 against s3's 2/4, s4 by name: g-2=s4-n1
         * (Volcano: 1 bind). */
        .name = "topology: a gang whose placed pods are on unknown nodes is placed afresh",
        .manifests = NODE_RES("s3-n1", "2", "8Gi", "110") NODE_RES("s3-n2", "2", "8Gi", "110")
            NODE_RES("s4-n1", "2", "8Gi", "110") NODE_RES("s5-n1", "2", "8Gi", "110")
            HNT("s3", "1", "volcano.sh/task-spec", M_NODE("s3-n1") ", " M_NODE("s3-n2"))
            HNT("s4", "1", "volcano.sh/task-spec", M_NODE("s4-n1"))
            HNT("s5", "1", "volcano.sh/task-spec", M_NODE("s5-n1"))
            HNT("s1", "2", "volcano.sh/job-spec", M_HN("s3") ", " M_HN("s4"))
            HNT("s2", "2", "volcano.sh/job-spec", M_HN("s5")) HN("s0", "3", M_HN("s1") ", " M_HN("s2"))
            PG("g", "2", "2024-01-01",
               ", networkTopology: {mode: hard, highestTierName: volcano.sh/job-spec}")
            POD("g-0", IN_GROUP("g"), "  schedulerName: kbatch\n  nodeName: s0-n1\n" POD_REQ("2"),
                "phase: Running")
            POD("g-1", IN_GROUP("g"), "  schedulerName: kbatch\n  nodeName: s0-n2\n" POD_REQ("2"),
                "phase: Running")
            POD("g-2", IN_GROUP("g"), "  schedulerName: kbatch\n" POD_REQ("2"), ""),
        .binds = "g-2=s4-n1",
    },
    {
        /* Volcano master's "hard network topology with highestTierName
         * constrain and tasks in job rescheduled, can allocate job when
         * here is no corresponding highestTierAllowed for highestTierName":
         * no HyperNode has tierName volcano.sh/hypercluster, so Volcano
         * finds no tier for it and places the gang without a limit
         * (updateJobTier leaves highestTierAllowed unset; a hard mode
         * without one is no hard constraint).  g-0, g-1 run on s0's nodes;
         * g-2 goes to s1-n3 (Volcano: 1 bind). */
        .name = "topology: a highestTierName no HyperNode carries sets no limit",
        .manifests = NODE_RES("s0-n1", "2", "8Gi", "110") NODE_RES("s0-n2", "2", "8Gi", "110")
            NODE_RES("s1-n3", "2", "8Gi", "110") NODE_RES("s1-n4", "2", "8Gi", "110")
            HNT("s0", "1", "volcano.sh/task-spec", M_NODE("s0-n1") ", " M_NODE("s0-n2"))
            HNT("s1", "1", "volcano.sh/task-spec", M_NODE("s1-n3") ", " M_NODE("s1-n4"))
            PG("g", "2", "2024-01-01",
               ", networkTopology: {mode: hard, highestTierName: volcano.sh/hypercluster}")
            POD("g-0", IN_GROUP("g"), "  schedulerName: kbatch\n  nodeName: s0-n1\n" POD_REQ("2"),
                "phase: Running")
            POD("g-1", IN_GROUP("g"), "  schedulerName: kbatch\n  nodeName: s0-n2\n" POD_REQ("2"),
                "phase: Running")
            POD("g-2", IN_GROUP("g"), "  schedulerName: kbatch\n" POD_REQ("2"), ""),
        .binds = "g-2=s1-n3",
    },
    {
        /* No HyperNode and no tier labels: a hard gang has nowhere to go
         * and says so; a gang without the constraint binds. */
        .name = "topology: a hard gang without a topology waits",
        .manifests = NODE("n1") GANG("g", "1", "1", "1", HARD("1")) GANG("h", "1", "1", "1", ""),
        .binds = "h-0=n1",
        .message = "g: no network topology domain of tier <= 1 "
                   "exists to hold the gang (define HyperNodes, or node-label tiers with "
                   "network-topology-aware's hypernode.tier<N>.label)",
    },
};

/* clang-format on */

TABLE_TEST(placement)

/* clang-format off */

/* ---- sub-groups (spec.subGroupPolicy) ---------------------------------------------- */

/*
 * Volcano master's allocate_test.go partition cases (the sub-group policy
 * tests, first written as "bunch" policies), on its clusters: nodes of 2
 * cpu and 4Gi, pods of 2 cpu (and 1Gi here), so a node takes one pod.
 * Two-level clusters: racks s0 {s0-n1, s0-n2} and s1 {s1-n3, s1-n4}
 * (tier 1) under s2 (tier 2).  Most of Volcano's cases check the number
 * of binds only (MinimalBindCheck); the nodes below follow kbatch's
 * tie-break (the domain name where Volcano picks at random), worked out in
 * each comment.  Domain scores are the mean over cpu and memory of (used +
 * the sub-group's pending request) / allocatable, 0 when it overflows.
 */
#define SG_NODE(n) NODE_RES(n, "2", "4Gi", "10")
#define SG_RACKS2 SG_NODE("s0-n1") SG_NODE("s0-n2") SG_NODE("s1-n3") SG_NODE("s1-n4") \
        HN("s0", "1", M_NODE("s0-n1") ", " M_NODE("s0-n2")) \
        HN("s1", "1", M_NODE("s1-n3") ", " M_NODE("s1-n4")) \
        HN("s2", "2", M_HN("s0") ", " M_HN("s1"))
/* Three tiers: s3 {s3-n1, s3-n2}, s4, s5, s6 (tier 1); s1 {s3, s4} and s2
 * {s5, s6} (tier 2); s0 {s1, s2} (tier 3). */
#define M_RE(p) "{type: Node, selector: {regexMatch: {pattern: " p "}}}"
#define SG_RACKS3 SG_NODE("s3-n1") SG_NODE("s3-n2") SG_NODE("s4-n1") SG_NODE("s4-n2") \
        SG_NODE("s5-n1") SG_NODE("s5-n2") SG_NODE("s6-n1") SG_NODE("s6-n2") \
        HN("s3", "1", M_RE("^s3-")) HN("s4", "1", M_RE("^s4-")) \
        HN("s5", "1", M_RE("^s5-")) HN("s6", "1", M_RE("^s6-")) \
        HN("s1", "2", M_HN("s3") ", " M_HN("s4")) HN("s2", "2", M_HN("s5") ", " M_HN("s6")) \
        HN("s0", "3", M_HN("s1") ", " M_HN("s2"))
/* A sub-group policy keyed on one label, with its networkTopology ("" for
 * none) and more fields. */
#define SGP(name, key, topo, extra) \
        "{name: " name ", matchLabelKeys: [" key "]" topo extra "}"
#define SG_HARD(tier) ", networkTopology: {mode: hard, highestTierAllowed: " tier "}"
#define SG_SOFT ", networkTopology: {mode: soft}"
#define SUBGROUPS(...) ", subGroupPolicy: [" __VA_ARGS__ "]"
/* Pod name of group pg1 with labels, pending or running on node. */
#define SG_REQ "  containers: [{name: c, resources: {requests: {cpu: '2'}}}]\n"
#define SG_POD(name, labels) \
        POD(name, ", labels: {" labels "}" IN_GROUP("pg1"), "  schedulerName: kbatch\n" SG_REQ, "")
#define SG_RUN(name, labels, node) \
        POD(name, ", labels: {" labels "}" IN_GROUP("pg1"), \
            "  schedulerName: kbatch\n  nodeName: " node "\n" SG_REQ, "phase: Running")
/* Another scheduler's running pod of 2 cpu on node. */
#define SG_X(name, node) \
        POD(name, "", "  nodeName: " node "\n" SG_REQ, "phase: Running")
#define MASTER "volcano.sh/task-spec: master"
#define WORKER "volcano.sh/task-spec: worker"
#define TASK_SPEC "volcano.sh/task-spec"

static const struct kb_scenario subgroups[] = {
    {
        /* "podgroup hard network topology constrain and bunch hard network
         * topology constrain, can allocate job according to the network
         * topology constrain of bunch policy": s0 {s0-n1, s0-n2}, s1
         * {s1-n3} under s2; gang hard tier 2, minMember 3; policy task1
         * (task-spec, size 1, hard tier 1) takes p1, policy task2
         * (task-instance, size 2, hard tier 1) p2 and p3.  No rack holds 3
         * pods, so the gang plays in s2.  task1's sub-group goes first
         * ("/task1-master" < "/task2-worker"): s1 scores 2/2 = 1 against
         * s0's 2/4, so p1 takes s1-n3 (Volcano's expectation too); task2's
         * two pods then fit s0 only. */
        .name = "sub-groups: each sub-group within its own rack",
        .manifests = SG_NODE("s0-n1") SG_NODE("s0-n2") SG_NODE("s1-n3")
            HN("s0", "1", M_NODE("s0-n1") ", " M_NODE("s0-n2")) HN("s1", "1", M_NODE("s1-n3"))
            HN("s2", "2", M_HN("s0") ", " M_HN("s1"))
            PG("pg1", "3", "2024-01-01", HARD("2") SUBGROUPS(
                SGP("task1", TASK_SPEC, SG_HARD("1"), ", subGroupSize: 1") ", "
                SGP("task2", "volcano.sh/task-instance", SG_HARD("1"), ", subGroupSize: 2")))
            SG_POD("p1", MASTER) SG_POD("p2", "volcano.sh/task-instance: worker")
            SG_POD("p3", "volcano.sh/task-instance: worker"),
        .binds = "p1=s1-n3 p2=s0-n1 p3=s0-n2",
    },
    {
        /* "pg hard and bunch hard, can allocate job when highestTierAllowed
         * not reached": gang hard tier 2, minMember 3; task1 (task-spec,
         * hard tier 1, size 1): sub-groups master {p1} and worker {p2, p3}.
         * Racks hold 2 pods, so the gang plays in s2.  master: s0 and s1
         * tie at 2/4, s0 by name: p1=s0-n1.  worker (4 cpu pending): s0
         * would overflow (score 0), s1 scores 4/4: p2=s1-n3; whole at one
         * pod, it goes back in line, and its next pod must share a tier-1
         * domain with p2 (s0's common ancestor with s1 is s2, tier 2):
         * p3=s1-n4.  Volcano expects 3 binds. */
        .name = "sub-groups: a hard sub-group keeps its later pods with its first",
        .manifests = SG_RACKS2 PG("pg1", "3", "2024-01-01",
                                  HARD("2") SUBGROUPS(SGP("task1", TASK_SPEC, SG_HARD("1"), "")))
            SG_POD("p1", MASTER) SG_POD("p2", WORKER) SG_POD("p3", WORKER),
        .binds = "p1=s0-n1 p2=s1-n3 p3=s1-n4",
    },
    {
        /* "podgroup soft network topology constrain and bunch hard network
         * topology constrain, can allocate job when resources are enough",
         * with the racks' names swapped (Volcano's answer does not depend
         * on them): s0 {s0-n1} and s1 {s1-n2, s1-n3}; soft gang of 3;
         * task1 (task-spec, size 2, hard tier 1) takes p1 and p2, task2
         * (task-instance, size 1) p3.  A soft gang plays on every node:
         * task1's pair fits s1 only (s0 would overflow), p3 then takes
         * s0-n1.  (Without sub-groups the pair would split: p1=s0-n1.) */
        .name = "sub-groups: a soft gang with hard sub-groups",
        .manifests = SG_NODE("s0-n1") SG_NODE("s1-n2") SG_NODE("s1-n3")
            HN("s0", "1", M_NODE("s0-n1")) HN("s1", "1", M_NODE("s1-n2") ", " M_NODE("s1-n3"))
            HN("s2", "2", M_HN("s0") ", " M_HN("s1"))
            PG("pg1", "3", "2024-01-01", SOFT("2") SUBGROUPS(
                SGP("task1", TASK_SPEC, SG_HARD("1"), ", subGroupSize: 2") ", "
                SGP("task2", "volcano.sh/task-instance", SG_HARD("1"), ", subGroupSize: 1")))
            SG_POD("p1", MASTER) SG_POD("p2", MASTER) SG_POD("p3", "volcano.sh/task-instance: worker"),
        .binds = "p1=s1-n2 p2=s1-n3 p3=s0-n1",
    },
    {
        /* "pg soft and bunch hard, can not allocate job when cross
         * highestTierAllowed tier": soft gang, minMember 3, master p1 and
         * workers p2, p3, p4 (task1, hard tier 1, size 1).  master: s0 by
         * name (p1=s0-n1).  worker (6 cpu pending, both racks would
         * overflow: score 0): s0, p2=s0-n2.  Its next pod must share a
         * tier-1 domain with p2: s0 is full and s1's common ancestor with
         * s0 is tier 2; the sub-group drops out with 2 of minMember 3
         * placed: nothing binds (Volcano: 0). */
        .name = "sub-groups: a hard sub-group never crosses its tier",
        .manifests = SG_RACKS2 PG("pg1", "3", "2024-01-01",
                                  SOFT("2") SUBGROUPS(SGP("task1", TASK_SPEC, SG_HARD("1"), "")))
            SG_POD("p1", MASTER) SG_POD("p2", WORKER) SG_POD("p3", WORKER) SG_POD("p4", WORKER),
        .binds = "",
        .message = "pg1: the gang's sub-groups (spec.subGroupPolicy) cannot all be placed; the "
                   "last that did not fit: task1-worker",
    },
    {
        /* "pg soft and bunch hard and tasks in job rescheduled, can
         * allocate job when resources are enough": p1 (master) runs on
         * s0-n1, p2 (worker) on s1-n3; p3 (worker) waits.  The worker
         * sub-group's placed pod is in s1: s0's common ancestor with it
         * is s2 (tier 2 > 1), so p3 goes to s1-n4, as Volcano expects. */
        .name = "sub-groups: a rescheduled sub-group returns to its rack",
        .manifests = SG_RACKS2 PG("pg1", "2", "2024-01-01",
                                  SOFT("2") SUBGROUPS(SGP("task1", TASK_SPEC, SG_HARD("1"), "")))
            SG_RUN("p1", MASTER, "s0-n1") SG_RUN("p2", WORKER, "s1-n3") SG_POD("p3", WORKER),
        .binds = "p3=s1-n4",
    },
    {
        /* "pg soft and bunch hard and tasks in job rescheduled, can not
         * allocate job when cross highestTierAllowed tier and hyperNodesInfo
         * has three tier": task1 hard tier 2; the worker sub-group runs in
         * s3 (p2) and s4 (p3, p4), within s1 (tier 2), all full; p5 could
         * only go to s5 or s6, whose common ancestor with s1 is s0 (tier
         * 3): nothing binds (Volcano: 0). */
        .name = "sub-groups: three tiers, a rescheduled sub-group stays under its tier",
        .manifests = SG_RACKS3 PG("pg1", "2", "2024-01-01",
                                  SOFT("3") SUBGROUPS(SGP("task1", TASK_SPEC, SG_HARD("2"), "")))
            SG_RUN("p1", MASTER, "s3-n1") SG_RUN("p2", WORKER, "s3-n2") SG_RUN("p3", WORKER, "s4-n1")
            SG_RUN("p4", WORKER, "s4-n2") SG_POD("p5", WORKER),
        .binds = "",
    },
    {
        /* minSubGroups not satisfied: policy worker (key
         * volcano.sh/partition-id, subGroupSize 2, minSubGroups 2, hard
         * tier 1); partitions 0 {w0, w1} and 1 {w2, w3}; gang minMember 2.
         * s1-n4 is taken by another scheduler's pod, so only s0 holds a
         * whole partition: partition 0 takes s0, partition 1 fits no rack,
         * and with one of two sub-groups whole nothing binds (Volcano's
         * CheckSubJobReady).  Without the policy minMember 2 would bind. */
        .name = "sub-groups: minSubGroups not satisfied",
        .manifests = SG_RACKS2 SG_X("x", "s1-n4")
            PG("pg1", "2", "2024-01-01", SUBGROUPS(SGP("worker", "volcano.sh/partition-id",
                                                       SG_HARD("1"),
                                                       ", subGroupSize: 2, minSubGroups: 2")))
            SG_POD("w0", "volcano.sh/partition-id: '0'") SG_POD("w1", "volcano.sh/partition-id: '0'")
            SG_POD("w2", "volcano.sh/partition-id: '1'") SG_POD("w3", "volcano.sh/partition-id: '1'"),
        .binds = "",
        .message = "pg1: the gang's sub-groups (spec.subGroupPolicy) cannot all be placed; the "
                   "last that did not fit: worker-1",
    },
    {
        /* The same with room for both partitions, on racks whose nodes
         * interleave by name: s0 {n1, n3}, s1 {n2, n4}.  Each partition
         * takes a rack of its own: partition 0 first (lower match value),
         * s0 by name on a tie; partition 1 then fits s1 only.  (Without
         * sub-groups the pods go by node name: n1, n2, n3, n4.) */
        .name = "sub-groups: minSubGroups met, one rack per partition",
        .manifests = SG_NODE("n1") SG_NODE("n2") SG_NODE("n3") SG_NODE("n4")
            HN("s0", "1", M_NODE("n1") ", " M_NODE("n3")) HN("s1", "1", M_NODE("n2") ", " M_NODE("n4"))
            PG("pg1", "2", "2024-01-01", SUBGROUPS(SGP("worker", "volcano.sh/partition-id",
                                                       SG_HARD("1"),
                                                       ", subGroupSize: 2, minSubGroups: 2")))
            SG_POD("w0", "volcano.sh/partition-id: '0'") SG_POD("w1", "volcano.sh/partition-id: '0'")
            SG_POD("w2", "volcano.sh/partition-id: '1'") SG_POD("w3", "volcano.sh/partition-id: '1'"),
        .binds = "w0=n1 w1=n3 w2=n2 w3=n4",
    },
    {
        /* Pods no policy takes form the default sub-group, which needs one
         * pod, has the PodGroup's topology and goes first (its id sorts
         * before every policy's, as Volcano's job UID before its sub-job
         * UIDs).  Gang hard tier 2, minMember 3: ps (no part label) and
         * partition 0 {w0, w1} (subGroupSize 2, hard tier 1).  No rack holds
         * 6 cpu: the gang plays in s2.  ps: s0 and s1 tie at 2/4, s0 by name:
         * ps=s0-n1.  The partition then fits s1 only (s0 has one node
         * left): w0=s1-n3, w1=s1-n4.  (Placed by name, w1 would go to s1-n3
         * after w0 took s0-n2.) */
        .name = "sub-groups: the default sub-group goes first",
        .manifests = SG_RACKS2
            PG("pg1", "3", "2024-01-01", HARD("2") SUBGROUPS(SGP("worker", "part", SG_HARD("1"),
                                                                ", subGroupSize: 2")))
            SG_POD("ps", "role: ps") SG_POD("w0", "part: '0'") SG_POD("w1", "part: '0'"),
        .binds = "ps=s0-n1 w0=s1-n3 w1=s1-n4",
    },
    {
        /* A sub-group whole only on room being freed is pipelined, and the
         * gang with it: rack s0's s0-n2 holds a terminating pod, s1's s1-n4
         * another scheduler's pod.  Partition 0 {w0, w1} (subGroupSize 2,
         * hard tier 1): in s0 (first by name; both racks would overflow,
         * score 0) w0 takes s0-n1's idle room and w1 is pipelined onto
         * s0-n2.  The gang (minMember 2) is pipelined, not ready: nothing
         * binds, w1 is nominated to s0-n2.  (Without the sub-group the
         * gang binds at once, split: w0=s0-n1, w1=s1-n3.) */
        .name = "sub-groups: a sub-group whole on room being freed is pipelined",
        .manifests = SG_RACKS2 SG_X("x4", "s1-n4")
            POD("old", ", deletionTimestamp: '2024-01-01T00:00:00Z'",
                "  schedulerName: default-scheduler\n  nodeName: s0-n2\n" SG_REQ, "phase: Running")
            PG("pg1", "2", "2024-01-01", SUBGROUPS(SGP("worker", "part", SG_HARD("1"),
                                                       ", subGroupSize: 2")))
            SG_POD("w0", "part: '0'") SG_POD("w1", "part: '0'"),
        .binds = "",
        .nominated = "w1=s0-n2",
    },
    {
        /* minSubGroups above the sub-groups the pods form: the gang can
         * never run (Volcano's CheckSubJobValid, in the gang plugin's
         * validJobFn, with its words), and says so. */
        .name = "sub-groups: fewer sub-groups than minSubGroups",
        .manifests = SG_RACKS2
            PG("pg1", "1", "2024-01-01", SUBGROUPS(SGP("worker", "volcano.sh/partition-id", "",
                                                       ", minSubGroups: 3")))
            SG_POD("w0", "volcano.sh/partition-id: '0'") SG_POD("w2", "volcano.sh/partition-id: '1'"),
        .binds = "",
        .message = "pg1: Not enough valid subGroups of each task for gang-scheduling: "
                   "spec.subGroupPolicy[0] (worker): minSubGroups is 3 but the gang's pods "
                   "form 2 sub-group(s) of it",
    },
    {
        /* Sub-groups across HyperNode tiers: policy a (hard tier 1) and b
         * (hard tier 2), two pods each, in a gang hard tier 3 of the
         * three-tier cluster, where other pods take s3-n1, s4-n1 and s5-n1.
         * No rack or tier-2 domain has the gang's 8 cpu free, so it plays
         * in s0.  a first ("/a-x" < "/b-y"): only s6 has room for 4 cpu
         * (score 4/4; s3, s4, s5 would overflow): a0=s6-n1, a1=s6-n2.  b:
         * no rack has two free nodes, so tier 2: s1 scores (4 + 4)/8 = 1,
         * s2 would overflow (6 + 4 > 8): b0=s3-n2, b1=s4-n2. */
        .name = "sub-groups: sub-groups across HyperNode tiers",
        .manifests = SG_RACKS3 SG_X("x3", "s3-n1") SG_X("x4", "s4-n1") SG_X("x5", "s5-n1")
            PG("pg1", "4", "2024-01-01", HARD("3") SUBGROUPS(
                SGP("a", "role", SG_HARD("1"), ", subGroupSize: 2") ", "
                SGP("b", "part", SG_HARD("2"), ", subGroupSize: 2")))
            SG_POD("a0", "role: x") SG_POD("a1", "role: x") SG_POD("b0", "part: y") SG_POD("b1", "part: y"),
        .binds = "a0=s6-n1 a1=s6-n2 b0=s3-n2 b1=s4-n2",
    },
    {
        /* The priority plugin orders sub-groups by their tasks' highest
         * priority (Volcano's priority SubJobOrderFn, ahead of gang's in
         * the default conf).  Nodes n1, n2 take one pod each; policy part
         * (size 2, minSubGroups 1), minMember 2: sub-group a {a1, a2}
         * (priority 10) and b {b1, b2} (priority 1000).  b goes first and
         * is the one sub-group needed: b1=n1, b2=n2, and the gang is ready
         * (by match value and id alone, a would go first and take both). */
        .name = "sub-groups: the higher-priority sub-group goes first",
        .manifests = SG_NODE("n1") SG_NODE("n2")
            PRIORITY_CLASS("lo", "10") PRIORITY_CLASS("hi", "1000")
            PG("pg1", "2", "2024-01-01", SUBGROUPS(SGP("part", "part", "",
                                                       ", subGroupSize: 2, minSubGroups: 1")))
            POD("a1", ", labels: {part: a}" IN_GROUP("pg1"), "  schedulerName: kbatch\n  priorityClassName: lo\n" SG_REQ, "")
            POD("a2", ", labels: {part: a}" IN_GROUP("pg1"), "  schedulerName: kbatch\n  priorityClassName: lo\n" SG_REQ, "")
            POD("b1", ", labels: {part: b}" IN_GROUP("pg1"), "  schedulerName: kbatch\n  priorityClassName: hi\n" SG_REQ, "")
            POD("b2", ", labels: {part: b}" IN_GROUP("pg1"), "  schedulerName: kbatch\n  priorityClassName: hi\n" SG_REQ, ""),
        .binds = "b1=n1 b2=n2",
    },
    {
        /* A soft sub-group keeps its pods near its first (Volcano master:
         * allocate.go's allocateResourcesForTasks hands each task the
         * sub-group's AllocatedHyperNode, and network-topology-aware's
         * batchNodeOrderFnForNetworkAwarePods scores nodes on that
         * HyperNode 100, nodes whose common ancestor with it is the top
         * tier 0).  Racks r1 {n1, n3} and r2 {n2, n4} under b; policy part
         * (soft, size 2): sub-groups a {a1, a2} and b {b1, b2}, a first
         * ("/part-a" < "/part-b").  a1 takes the best node, n1 (all alike,
         * then name); a2 stays in a1's rack: n3 (by name alone it would be
         * n2).  b1 takes n2, the best left, and b2 its rack's n4.  Which
         * node a1 takes is a tie (Volcano: at random); that each sub-group
         * ends in one rack is not. */
        .name = "sub-groups: a soft sub-group keeps its pods in one rack",
        .manifests = SG_NODE("n1") SG_NODE("n2") SG_NODE("n3") SG_NODE("n4")
            HN("r1", "1", M_NODE("n1") ", " M_NODE("n3")) HN("r2", "1", M_NODE("n2") ", " M_NODE("n4"))
            HN("b", "2", M_HN("r1") ", " M_HN("r2"))
            PG("pg1", "4", "2024-01-01", SUBGROUPS(SGP("part", "part", SG_SOFT, ", subGroupSize: 2")))
            SG_POD("a1", "part: a") SG_POD("a2", "part: a") SG_POD("b1", "part: b") SG_POD("b2", "part: b"),
        .binds = "a1=n1 a2=n3 b1=n2 b2=n4",
    },
    {
        /* A soft sub-group spread over two racks goes on in the rack that
         * holds more of its pods (Volcano's scoreWithTaskNum among nodes of
         * the best score: here every node's common ancestor with the
         * sub-group's HyperNode b is the top tier, score 0, so the tie is
         * 100 * its pods on the node's rack / its 4 pods: r2 50, r1 25).
         * Racks r1 {n1, n3}, r2 {n2, n4, n5}; a1 runs on n1, a2 on n2, a3
         * on n4; a4 waits: n5 in r2 (by name alone, n3). */
        .name = "sub-groups: a soft sub-group goes on where most of its pods run",
        .manifests = SG_NODE("n1") SG_NODE("n2") SG_NODE("n3") SG_NODE("n4") SG_NODE("n5")
            HN("r1", "1", M_NODE("n1") ", " M_NODE("n3"))
            HN("r2", "1", M_NODE("n2") ", " M_NODE("n4") ", " M_NODE("n5"))
            HN("b", "2", M_HN("r1") ", " M_HN("r2"))
            PG("pg1", "4", "2024-01-01", SUBGROUPS(SGP("part", "part", SG_SOFT, ", subGroupSize: 4")))
            SG_RUN("a1", "part: a", "n1") SG_RUN("a2", "part: a", "n2") SG_RUN("a3", "part: a", "n4")
            SG_POD("a4", "part: a"),
        .binds = "a4=n5",
    },
    {
        /* Inside the domain a hard sub-group plays in, its pods keep near
         * each other too (the same node score applies to hard sub-groups).
         * Racks r1 {n1, n3}, r2 {n2, n4, n5}, n5 taken by another pod;
         * policy part (hard tier 2, size 3): no rack has 3 free nodes, so
         * b.  a1 takes n1 (best, then name); a2 its rack's n3; a3 then n2
         * (by name alone: n1, n2, n3). */
        .name = "sub-groups: a hard sub-group keeps its pods near inside its domain",
        .manifests = SG_NODE("n1") SG_NODE("n2") SG_NODE("n3") SG_NODE("n4") SG_NODE("n5")
            HN("r1", "1", M_NODE("n1") ", " M_NODE("n3"))
            HN("r2", "1", M_NODE("n2") ", " M_NODE("n4") ", " M_NODE("n5"))
            HN("b", "2", M_HN("r1") ", " M_HN("r2")) SG_X("x5", "n5")
            PG("pg1", "3", "2024-01-01", SUBGROUPS(SGP("part", "part", SG_HARD("2"), ", subGroupSize: 3")))
            SG_POD("a1", "part: a") SG_POD("a2", "part: a") SG_POD("a3", "part: a"),
        .binds = "a1=n1 a2=n3 a3=n2",
    },
};

/*
 * Volcano's partition cases whose answer the PodGroup-level rules already
 * gave before sub-groups were planned: kept to hold the sub-group path to
 * the same answer (they pass without it too).
 */
static const struct kb_scenario subgroups_kept[] = {
    {
        /* "pg hard and bunch hard, can allocate job when multi hyperNodes
         * are available": gang hard tier 2, minMember 2, p1 master and p2
         * worker (task1: hard tier 1).  Both racks hold the gang (tier 1):
         * in each, master scores 2/4 and worker then 4/4, equal sums; s0
         * first by topology.c's order (name). */
        .name = "sub-groups: two racks can take the gang",
        .manifests = SG_RACKS2 PG("pg1", "2", "2024-01-01",
                                  HARD("2") SUBGROUPS(SGP("task1", TASK_SPEC, SG_HARD("1"), "")))
            SG_POD("p1", MASTER) SG_POD("p2", WORKER),
        .binds = "p1=s0-n1 p2=s0-n2",
    },
    {
        /* "pg hard and bunch hard, minavailable < replicas": minMember 1:
         * rack s0 takes master p1 and the gang is ready; its next turn is
         * anchored under s2 by p1 and places worker p2 in s0 first (tier
         * 1, s0 scores 4/4 against s1's 2/4). */
        .name = "sub-groups: minMember below the replicas",
        .manifests = SG_RACKS2 PG("pg1", "1", "2024-01-01",
                                  HARD("2") SUBGROUPS(SGP("task1", TASK_SPEC, SG_HARD("1"), "")))
            SG_POD("p1", MASTER) SG_POD("p2", WORKER),
        .binds = "p1=s0-n1 p2=s0-n2",
    },
    {
        /* "podgroup hard network topology constrain and bunch soft network
         * topology constrain, can allocate job when resources are enough":
         * gang hard tier 2, minMember 3, soft sub-groups.  No rack holds 6
         * cpu, so the gang plays in s2, where soft sub-groups take any node:
         * master p1=s0-n1 (first by name), workers p2=s0-n2, p3=s1-n3. */
        .name = "sub-groups: a hard gang with soft sub-groups",
        .manifests = SG_RACKS2 PG("pg1", "3", "2024-01-01",
                                  HARD("2") SUBGROUPS(SGP("task1", TASK_SPEC, SG_SOFT, "")))
            SG_POD("p1", MASTER) SG_POD("p2", WORKER) SG_POD("p3", WORKER),
        .binds = "p1=s0-n1 p2=s0-n2 p3=s1-n3",
    },
    {
        /* "pg hard and bunch soft, two available hyperNodes, can allocate
         * job to nodes with affinity": s0 {s0-n1} and s1 {s1-n2, labelled
         * nodeRole: master}; gang hard tier 1 of one pod that selects
         * nodeRole: master.  s0 plays first (name) and fails; s1 takes it. */
        .name = "sub-groups: the rack whose node passes the predicates",
        .manifests = SG_NODE("s0-n1")
            NODE_X("s1-n2", "cpu: '2', memory: 4Gi, pods: '10'", ", labels: {nodeRole: master}", "", "")
            HN("s0", "1", M_NODE("s0-n1")) HN("s1", "1", M_NODE("s1-n2"))
            PG("pg1", "1", "2024-01-01", HARD("1") SUBGROUPS(SGP("task1", TASK_SPEC, SG_SOFT, "")))
            POD("p1", ", labels: {" MASTER "}" IN_GROUP("pg1"),
                "  schedulerName: kbatch\n  nodeSelector: {nodeRole: master}\n" SG_REQ, ""),
        .binds = "p1=s1-n2",
    },
    {
        /* "pg hard and bunch soft and tasks in job rescheduled, can
         * allocate job when cross highestTierAllowed tier and
         * hyperNodesInfo has three tier": gang hard tier 2 running p1, p2
         * in s3 (full); p3 waits.  The gang stays under s1 (the highest
         * allowed domain above s3): s4 takes p3, at s4-n1. */
        .name = "sub-groups: three tiers, a rescheduled hard gang stays under its tier",
        .manifests = SG_RACKS3 PG("pg1", "2", "2024-01-01",
                                  HARD("2") SUBGROUPS(SGP("task1", TASK_SPEC, SG_SOFT, "")))
            SG_RUN("p1", MASTER, "s3-n1") SG_RUN("p2", WORKER, "s3-n2") SG_POD("p3", WORKER),
        .binds = "p3=s4-n1",
    },
};

/* clang-format on */

TABLE_TEST(subgroups)
TABLE_TEST(subgroups_kept)

/* ---- HyperNodes that do not fit together ---------------------------------------- */

/* What one session over manifests says: its warnings ("object: message"
 * lines), binds ("pod=node " each) and HyperNode statuses. */
struct outcome {
        char *warnings, *binds;
        size_t nhypernodes;
};

static void run_session(const char *manifests, const char *conf_text, struct outcome *out)
{
        struct kb_cluster c;
        struct kb_conf conf;
        struct kb_snapshot snap;
        struct kb_result r;
        char err[512];
        struct kb_buf w, b;
        kb_buf_init(&w);
        kb_buf_init(&b);
        kb_cluster_init(&c);
        assert_int_equal(kb_cluster_load(&c, "t", manifests, strlen(manifests), err, sizeof(err)),
                         0);
        kb_cluster_ensure_default_queue(&c);
        assert_int_equal(kb_conf_parse(conf_text, strlen(conf_text), &conf, err, sizeof(err)), 0);
        kb_cluster_snapshot(&c, &snap);
        assert_int_equal(kb_session_run(&snap, &conf, &r), 0);
        for (size_t i = 0; i < r.nwarnings; i++)
                kb_buf_printf(&w, "%s: %s\n", r.warnings[i].object, r.warnings[i].message);
        for (size_t i = 0; i < r.nbinds; i++)
                kb_buf_printf(&b, "%s=%s ", r.binds[i].pod->meta.name, r.binds[i].node);
        out->warnings = kb_buf_detach(&w);
        out->binds = kb_buf_detach(&b);
        out->nhypernodes = r.nhypernodes;
        kb_result_release(&r);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
}

static void expect_contains(const char *text, const char *needle)
{
        if (!strstr(text, needle)) {
                fprintf(stderr, "want \"%s\" in:\n%s\n", needle, text);
                fail();
        }
}

/* A cycle (x and y list each other), a missing member, a child whose tier
 * is not below its parent's, a node listed by two racks (q and r1, the
 * same tier: q, first by name, keeps it): each is dropped with a warning
 * naming the HyperNode and the field, and the rest still schedules: rack q
 * holds n1 and takes the hard gang.  Every HyperNode gets its node count. */
static void test_bad_hypernodes(void **state)
{
        (void)state;
        struct outcome o;
        run_session(NODE("n1") NODE("n2") HN("r1", "1", M_NODE("n1")) HN("q", "1", M_NODE("n1"))
                        HN("x", "3", M_HN("y") ", " M_NODE("n2")) HN("y", "2", M_HN("x")) HN(
                            "z", "2", M_HN("missing") ", " M_HN("w")) HN("w", "2", M_NODE("n9"))
                            GANG("g", "1", "1", "1", ", networkTopology: {highestTierAllowed: 1}"),
                    kb_default_conf_yaml, &o);
        expect_contains(o.warnings, "hypernode y: spec.members[0]: hypernode x closes a cycle "
                                    "(x -> y -> x); ignored");
        expect_contains(o.warnings, "hypernode z: spec.members[0].selector.exactMatch.name: "
                                    "hypernode missing not found; ignored");
        expect_contains(o.warnings, "hypernode z: spec.members[1]: hypernode w has tier 2, not "
                                    "below this one's 2; ignored");
        expect_contains(o.warnings, "hypernode r1: spec.members[0]: 1 node(s) also listed by a "
                                    "hypernode that is neither above nor below this one (node "
                                    "n1); each node belongs to the lowest tier listing it");
        assert_string_equal(o.binds, "g-0=n1 ");
        assert_int_equal(o.nhypernodes, 6);
        free(o.warnings);
        free(o.binds);
}

/* Labels in the conf leave HyperNode objects aside, with a warning each. */
static void test_labels_leave_hypernodes_aside(void **state)
{
        (void)state;
        struct outcome o;
        run_session(RACKS HN("r9", "1", M_NODE("n1")), CONF_LABELS, &o);
        assert_string_equal(o.warnings, "hypernode r9: ignored: the scheduler conf derives the "
                                        "network topology from node labels "
                                        "(network-topology-aware's tier labels)\n");
        assert_int_equal(o.nhypernodes, 0);
        free(o.warnings);
        free(o.binds);
}

/* ---- the conf ------------------------------------------------------------------------ */

static void expect_conf_error(const char *args, const char *want)
{
        char *text = kb_xasprintf("actions: \"allocate\"\ntiers:\n- plugins:\n"
                                  "  - name: network-topology-aware\n    arguments: {%s}\n",
                                  args);
        struct kb_conf conf;
        char err[512] = "";
        int rc = kb_conf_parse(text, strlen(text), &conf, err, sizeof(err));
        if (rc == 0)
                kb_conf_release(&conf);
        free(text);
        assert_int_equal(rc, KB_EBADCONF);
        assert_string_equal(err, want);
}

static void test_conf_errors(void **state)
{
        (void)state;
        expect_conf_error("hypernode.tier2.label: block",
                          "tiers[0].plugins[0] (network-topology-aware).arguments."
                          "hypernode.tier1.label: missing; tiers must run from 1 with no gap "
                          "(hypernode.tier2.label is set)");
        expect_conf_error("hypernode.tier1.label: rack, hypernode.tier2.label: rack",
                          "tiers[0].plugins[0] (network-topology-aware).arguments."
                          "hypernode.tier2.label: rack is already tier 1's label");
        expect_conf_error("hypernode.tierx.label: rack",
                          "tiers[0].plugins[0] (network-topology-aware).arguments."
                          "hypernode.tierx.label: unknown key; tier labels are "
                          "hypernode.tier<N>.label with N = 1, 2, ...");
        expect_conf_error("hypernode.tier1.label: ''",
                          "tiers[0].plugins[0] (network-topology-aware).arguments."
                          "hypernode.tier1.label: must be a node label key, got \"\"");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_placement),
            cmocka_unit_test(test_subgroups),
            cmocka_unit_test(test_subgroups_kept),
            cmocka_unit_test(test_bad_hypernodes),
            cmocka_unit_test(test_labels_leave_hypernodes_aside),
            cmocka_unit_test(test_conf_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
