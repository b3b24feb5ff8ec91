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
         * block does (8 free).  In b1 nodeorder spreads it: g-0 n1 (all
         * tie: name), g-1 n2 (n1 is the fuller now), g-2 n3, g-3 n4, g-4
         * n1 (all tie again). */
        .name = "topology: highestTierAllowed lets a gang span a block",
        .conf = CONF_LABELS,
        .manifests = RACKS FOREIGN("f1", "n1", "2") FOREIGN("f2", "n2", "2")
            FOREIGN("f3", "n3", "2") FOREIGN("f4", "n4", "2") GANG("g", "5", "5", "1", HARD("2")),
        .binds = "g-0=n1 g-1=n2 g-2=n3 g-3=n4 g-4=n1",
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
        .binds = "g-0=n1 g-1=n2 g-2=n3 g-3=n4 g-4=n1",
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
            cmocka_unit_test(test_bad_hypernodes),
            cmocka_unit_test(test_labels_leave_hypernodes_aside),
            cmocka_unit_test(test_conf_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
