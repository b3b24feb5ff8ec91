/*
 * The capacity plugin (Volcano master's), one scenario per rule, queue
 * states included (semantics_test.c has proportion's).  Each expected bind is worked out
 * by hand in the comment above it from the rules in plugins/capacity.c's
 * banner; like every scenario table, each runs through the node-selection
 * caches and as a full scan.
 *
 * Conf unless a scenario says otherwise: enqueue, allocate, backfill;
 * tiers priority, gang / predicates, capacity, nodeorder.  Every pod asks
 * 1Gi of memory besides its cpu; no queue here caps memory, so cpu
 * decides.  Jobs of minMember 1 take one task per turn, and the queue goes
 * back into allocate's heap after each turn.
 */
#include "testutil.h"

#include "manifests.h"

/* clang-format off */

#define CONF_WITH(plugin) \
        "actions: \"enqueue, allocate, backfill\"\n" \
        "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n" \
        "- plugins:\n  - name: predicates\n" plugin "  - name: nodeorder\n"
#define FLAT CONF_WITH("  - name: capacity\n")
#define TREE CONF_WITH("  - name: capacity\n    enableHierarchy: true\n")
#define N8 NODE_RES("n1", "8", "32Gi", "110")
/* A PodGroup with a status phase, and a running member of it on n1. */
#define PG_PHASE(name, min, created, extra_spec, phase) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
        "metadata: {name: " name ", creationTimestamp: '" created "T00:00:00Z'}\n" \
        "spec: {minMember: " min extra_spec "}\nstatus: {phase: " phase "}\n"
#define RUNNING(name, group) \
        POD(name, IN_GROUP(group), "  schedulerName: kbatch\n  nodeName: n1\n" POD_REQ("1"), \
            "phase: Running")

/* clang-format on */

static const struct kb_scenario limits[] = {
    {
        /* Queue a deserves 2 cpu and is capped at 6; nobody else asks.
         * Deserved is no limit: a borrows up to its real capability,
         * min(8 - 0 guarantees + 0, 6) = 6.  Its gang of eight 1-cpu pods
         * (minMember 1) places a-0 .. a-5; a-6 finds 6 + 1 > 6. */
        .name = "capacity: a queue borrows beyond deserved up to its capability",
        .conf = FLAT,
        .manifests = N8 QUEUE("a", "deserved: {cpu: '2'}, capability: {cpu: '6'}", "")
            GANG("a", "1", "8", "1", ", queue: a"),
        .binds = "a-0=n1 a-1=n1 a-2=n1 a-3=n1 a-4=n1 a-5=n1",
        .phases = "a=Running",
    },
    {
        /* Queue g is guaranteed 3 cpu and has no job; queue a (deserved
         * 2, no capability) may hold the cluster less every guarantee:
         * 8 - 3 + 0 = 5.  a-0 .. a-4 bind, 3 cpu stay free for g. */
        .name = "capacity: another queue's guarantee is kept free",
        .conf = FLAT,
        .manifests = N8 QUEUE("a", "deserved: {cpu: '2'}", "")
            QUEUE("g", "deserved: {cpu: '3'}, guarantee: {resource: {cpu: '3'}}", "")
                GANG("a", "1", "8", "1", ", queue: a"),
        .binds = "a-0=n1 a-1=n1 a-2=n1 a-3=n1 a-4=n1",
    },
    {
        /* a deserves 6, b 2, each has eight 1-cpu pods; the lower share
         * (allocated/deserved) goes first, a tie to the name.  a 0 = b 0:
         * a-0 (1/6); b-0 (1/2); a-1 (2/6), a-2 (3/6); tie at 1/2: a-3
         * (4/6); b-1 (2/2); a-4 (5/6), a-5 (6/6): n1's 8 cpu are taken.
         * Each queue ends at what it deserves. */
        .name = "capacity: shares lead each queue to what it deserves",
        .conf = FLAT,
        .manifests =
            N8 QUEUE("a", "deserved: {cpu: '6'}", "") QUEUE("b", "deserved: {cpu: '2'}", "")
                GANG("a", "1", "8", "1", ", queue: a") GANG("b", "1", "8", "1", ", queue: b"),
        .binds = "a-0=n1 a-1=n1 a-2=n1 a-3=n1 a-4=n1 a-5=n1 b-0=n1 b-1=n1",
    },
};

static const struct kb_scenario order[] = {
    {
        /* hi has spec.priority 10 and deserves 1 cpu, lo deserves 8; n1
         * has 2 cpu.  Priority comes before share: hi-0, then hi again
         * (share 1 but priority 10): hi-1; n1 is full.  By share alone
         * lo-0 would have gone second. */
        .name = "capacity: queue order by spec.priority before share",
        .conf = FLAT,
        .manifests = NODE_RES("n1", "2", "8Gi", "110") QUEUE(
            "hi", "priority: 10, deserved: {cpu: '1'}", "") QUEUE("lo", "deserved: {cpu: '8'}", "")
            GANG("hi", "1", "2", "1", ", queue: hi") GANG("lo", "1", "2", "1", ", queue: lo"),
        .binds = "hi-0=n1 hi-1=n1",
    },
    {
        /* team deserves 1 cpu and runs tr-0 (1 cpu): share 1/1.  besteffort
         * deserves nothing: share 1.  At equal shares the queue that
         * deserves something goes first, so tp-0 takes n1's last cpu and
         * bp-0 finds no room.  By name alone besteffort would have won. */
        .name = "capacity: at equal shares a queue that deserves something goes first",
        .conf = FLAT,
        .manifests = NODE_RES("n1", "2", "8Gi", "110") QUEUE("besteffort", "", "")
            QUEUE("team", "deserved: {cpu: '1'}", "")
                PG_PHASE("tr", "1", "2024-01-01", ", queue: team", "Running") RUNNING("tr-0", "tr")
                    GANG("tp", "1", "1", "1", ", queue: team")
                        GANG("bp", "1", "1", "1", ", queue: besteffort"),
        .binds = "tp-0=n1",
    },
};

static const struct kb_scenario tree[] = {
    {
        /* root -> org (capability 6 cpu) -> team -> {x, y}, x and y
         * deserving 2 each, eight 1-cpu pods each; n1 has 8 cpu.  team
         * and x, y take org's capability of 6.  x and y are siblings and
         * alternate by share: x-0, y-0, x-1, y-1, x-2, y-2; then team
         * holds 6 and 6 + 1 > 6 refuses every task: org's capability
         * bounds its grandchildren, 2 cpu stay free. */
        .name = "capacity hierarchy: a parent's capability bounds its children",
        .conf = TREE,
        .manifests = N8 QUEUE("org", "capability: {cpu: '6'}", "") QUEUE("team", "parent: org", "")
            QUEUE("x", "parent: team, deserved: {cpu: '2'}", "")
                QUEUE("y", "parent: team, deserved: {cpu: '2'}", "")
                    GANG("x", "1", "8", "1", ", queue: x") GANG("y", "1", "8", "1", ", queue: y"),
        .binds = "x-0=n1 x-1=n1 x-2=n1 y-0=n1 y-1=n1 y-2=n1",
    },
    {
        /* Three levels: root -> dept (capability 6, deserved 6) -> {team
         * (capability 4, deserved 4) -> {p1, p2}, q}; p1, p2 and q
         * deserve 2 each; p1 and p2 have eight 1-cpu pods, q one; n1 has
         * 12 cpu.  Real capabilities: dept 6, team 4, p1 and p2 4 (they
         * take team's), q 6.  p1 and p2 alternate by share (team's share
         * against q's is the one at open, 0): p1-0, p2-0, p1-1, p2-1; then
         * team holds 4 and refuses the rest of p1 and p2; q-0 fits dept
         * (4 + 1 <= 6).  Five binds on a 12-cpu node. */
        .name = "capacity hierarchy: three levels, each capability bounds its subtree",
        .conf = TREE,
        .manifests = NODE_RES("n1", "12", "48Gi", "110")
            QUEUE("dept", "capability: {cpu: '6'}, deserved: {cpu: '6'}", "")
                QUEUE("team", "parent: dept, capability: {cpu: '4'}, deserved: {cpu: '4'}", "")
                    QUEUE("p1", "parent: team, deserved: {cpu: '2'}", "")
                        QUEUE("p2", "parent: team, deserved: {cpu: '2'}", "")
                            QUEUE("q", "parent: dept, deserved: {cpu: '2'}", "")
                                GANG("p1", "1", "8", "1", ", queue: p1")
                                    GANG("p2", "1", "8", "1", ", queue: p2")
                                        GANG("q", "1", "1", "1", ", queue: q"),
        .binds = "p1-0=n1 p1-1=n1 p2-0=n1 p2-1=n1 q-0=n1",
    },
    {
        /* Queue x names a parent that does not exist: its job says so
         * and waits; queue y (under the implicit root) is not affected
         * (Volcano would stop scheduling every queue). */
        .name = "capacity hierarchy: a queue with a missing parent says so",
        .conf = TREE,
        .manifests = N8 QUEUE("x", "parent: nope", "") QUEUE("y", "", "")
            GANG("gx", "1", "1", "1", ", queue: x") GANG("gy", "1", "1", "1", ", queue: y"),
        .binds = "gy-0=n1",
        .phases = "gx=Pending gy=Running",
        .message = "gx: queue x: spec.parent: no queue named nope",
        .reasons = "gx=QueueInvalid",
    },
    {
        /* u and v are each other's parent; w is fine. */
        .name = "capacity hierarchy: a cycle of parents says so",
        .conf = TREE,
        .manifests = N8 QUEUE("u", "parent: v", "") QUEUE("v", "parent: u", "") QUEUE("w", "", "")
            GANG("gu", "1", "1", "1", ", queue: u") GANG("gw", "1", "1", "1", ", queue: w"),
        .binds = "gw-0=n1",
        .message =
            "queue u: spec.parent: its parents form a cycle that never reaches the root queue",
    },
    {
        /* A job in queue p, which has a child c: jobs go to leaves. */
        .name = "capacity hierarchy: a job in a parent queue says so",
        .conf = TREE,
        .manifests = N8 QUEUE("p", "", "") QUEUE("c", "parent: p", "")
            GANG("gp", "1", "1", "1", ", queue: p") GANG("gc", "1", "1", "1", ", queue: c"),
        .binds = "gc-0=n1",
        .message = "queue p has child queues: with capacity's hierarchy, jobs go to the queues "
                   "without children",
    },
};

static const struct kb_scenario enqueue[] = {
    {
        /* Queue a, capability 4 cpu.  Group r runs r-0 (1 cpu) with
         * minMember 1 and minResources cpu 3: it holds its minMember, so
         * the 2 cpu it does not hold stay reserved.  n1 (minResources cpu
         * 1, older) asks 1 + 1 allocated + 2 reserved - 0 elastic = 4 <=
         * 4: admitted, and its 1 cpu joins the reservations (3).  n2 (cpu
         * 1): 1 + 1 + 3 = 5 > 4: it waits, with the numbers.  n1-0 binds
         * (1 + 1 <= 4). */
        .name = "capacity: enqueue while minResources + allocated + reserved fits",
        .conf = FLAT,
        .manifests = N8 QUEUE("a", "capability: {cpu: '4'}", "") PG_PHASE(
            "r", "1", "2024-01-01", ", queue: a, minResources: {cpu: '3'}", "Running")
            RUNNING("r-0", "r") PG("n1", "1", "2024-01-02", ", queue: a, minResources: {cpu: '1'}")
                JOB("n1", "n1", "1", "", REQ1, "")
                    PG("n2", "1", "2024-01-03", ", queue: a, minResources: {cpu: '1'}")
                        JOB("n2", "n2", "1", "", REQ1, ""),
        .binds = "n1-0=n1",
        .phases = "n1=Running n2=Pending",
        .message = "n2: queue resource quota insufficient: queue a: insufficient cpu: the group "
                   "needs 1, the queue has 1 allocated, 3 reserved for admitted groups, 0 "
                   "elastic, capability 4",
        .reasons = "n2=QueueQuotaExceeded",
    },
    {
        /* root -> p (capability 3) -> {l1, l2}.  l1 runs r (2 cpu, its
         * minResources: nothing reserved, nothing elastic).  n in l2 asks
         * minResources cpu 2: l2 itself (real capability 3, nothing held)
         * admits 2 <= 3, but p: 2 + 2 allocated = 4 > 3: n waits and the
         * message names p. */
        .name = "capacity hierarchy: enqueue checks every ancestor",
        .conf = TREE,
        .manifests = N8 QUEUE("p", "capability: {cpu: '3'}", "") QUEUE("l1", "parent: p", "")
            QUEUE("l2", "parent: p", "")
                PG_PHASE("r", "2", "2024-01-01", ", queue: l1, minResources: {cpu: '2'}", "Running")
                    RUNNING("r-0", "r") RUNNING("r-1", "r")
                        PG("n", "2", "2024-01-02", ", queue: l2, minResources: {cpu: '2'}")
                            JOB("n", "n", "2", "", REQ1, ""),
        .binds = "",
        .phases = "n=Pending",
        .message = "queue resource quota insufficient: queue p, parent of l2: insufficient cpu: "
                   "the group needs 2, the queue has 2 allocated, 0 reserved for admitted groups, "
                   "0 elastic, capability 3",
    },
};

static const struct kb_scenario states[] = {
    {
        /* c is Closed, k Closing, o Open.  Pending groups of c and k are
         * not admitted; ci, admitted before c closed, takes no task; op
         * binds. */
        .name = "capacity: Closed and Closing queues admit nothing, a Closed one places nothing",
        .conf = FLAT,
        .manifests =
            N8 QUEUE("c", "", "state: Closed") QUEUE("k", "", "state: Closing") QUEUE("o", "", "")
                GANG("cp", "1", "1", "1", ", queue: c") GANG("kp", "1", "1", "1", ", queue: k")
                    PG_PHASE("ci", "1", "2024-01-01", ", queue: c", "Inqueue")
                        JOB("ci", "ci", "1", "", REQ1, "") GANG("op", "1", "1", "1", ", queue: o"),
        .binds = "op-0=n1",
        .phases = "cp=Pending kp=Pending ci=Inqueue op=Running",
        .message = "kp: queue k is Closing; 1st of 1 waiting in queue k",
        .reasons = "kp=QueueClosed ci=QueueClosed cp=QueueClosed",
    },
    {
        /* The same Inqueue group in a Closed queue says why it waits. */
        .name = "capacity: an admitted group in a Closed queue says the queue is closed",
        .conf = FLAT,
        .manifests = N8 QUEUE("c", "", "state: Closed") PG_PHASE(
            "ci", "1", "2024-01-01", ", queue: c", "Inqueue") JOB("ci", "ci", "1", "", REQ1, ""),
        .binds = "",
        .message = "ci: queue c is Closed",
        .reasons = "ci=QueueClosed",
    },
    {
        /* Capacity with hierarchy: root -> p (capability 4) -> {a, c}; c
         * is Closed and holds ci, admitted earlier with minResources cpu
         * 4 and nothing placed.  c places nothing, so ci reserves nothing
         * in p: an (minResources cpu 2) fits a (2 <= 4) and p (2 + 0
         * reserved <= 4) and its two pods bind.  Counting ci's 4, p would
         * have refused (2 + 4 > 4). */
        .name = "capacity: a closed queue's reservations do not crowd its siblings",
        .conf = TREE,
        .manifests = N8 QUEUE("p", "capability: {cpu: '4'}", "") QUEUE("a", "parent: p", "")
            QUEUE("c", "parent: p", "state: Closed")
                PG_PHASE("ci", "1", "2024-01-01", ", queue: c, minResources: {cpu: '4'}", "Inqueue")
                    JOB("ci", "ci", "1", "", REQ1, "")
                        PG("an", "2", "2024-01-02", ", queue: a, minResources: {cpu: '2'}")
                            JOB("an", "an", "2", "", REQ1, ""),
        .binds = "an-0=n1 an-1=n1",
        .phases = "an=Running ci=Inqueue",
    },
};

/*
 * Volcano master's capacity_test.go, Test_capacityPlugin_OnSessionOpenWithHierarchy,
 * transcribed: its actions (enqueue, reclaim, allocate) and its one tier
 * (capacity with enableHierarchy, predicates, gang) with exactly the
 * extension points that test enables (a PluginOption flag it leaves unset
 * is off there): gang only says whether a job starves, so a job is ready
 * and pipelined with any task placed.  Queues built there
 * with BuildQueueWithResourcesQuantity(name, deserved, capability).
 */
/* clang-format off */
#define VTREE \
        "actions: \"enqueue, reclaim, allocate\"\n" \
        "tiers:\n- plugins:\n  - name: capacity\n    enableHierarchy: true\n" \
        "    enableAllocatable: true\n    enablePreemptive: true\n" \
        "    enableReclaimable: true\n    enableQueueOrder: true\n" \
        "    enableJobEnqueued: true\n    enableOverused: false\n" \
        "  - name: predicates\n    enablePredicate: true\n    enableNodeOrder: false\n" \
        "  - name: gang\n    enableJobStarving: true\n    enableJobOrder: false\n" \
        "    enableJobReady: false\n    enableJobPipelined: false\n" \
        "    enablePreemptable: false\n    enableReclaimable: false\n"
#define VQ(name, parent, spec) QUEUE(name, "parent: " parent spec, "")
/* A pod of group g asking req (a requests map), on node (or "" pending). */
#define VPOD(name, g, node, req, status) \
        POD(name, IN_GROUP(g), "  schedulerName: kbatch\n" node \
            "  containers: [{name: c, resources: {requests: " req "}}]\n", status)
#define ON_N1 "  nodeName: n1\n"
#define Q3_TREE QUEUE("root", "", "") \
        VQ("q3", "root", ", deserved: {cpu: '4', memory: 4Gi, pods: '10'}, " \
           "capability: {cpu: '4', memory: 4Gi, pods: '10'}") \
        VQ("q4", "root", ", deserved: {cpu: '2', memory: 2Gi, pods: '1'}, " \
           "capability: {cpu: '4', memory: 4Gi, pods: '4'}") \
        VQ("q31", "q3", ", deserved: {cpu: '2', memory: 2Gi, pods: '2'}, " \
           "capability: {cpu: '4', memory: 4Gi, pods: '4'}") \
        VQ("q32", "q3", ", deserved: {cpu: '2', memory: 2Gi, pods: '2'}, " \
           "capability: {cpu: '4', memory: 4Gi, pods: '4'}")
#define VN1 NODE_RES("n1", "8", "8Gi", "11")
/* clang-format on */

static const struct kb_scenario volcano_tree[] = {
    {
        /* case2 "Pod allocatable when queue has not exceed capability":
         * root -> q3 (deserved and capability 4 cpu, 4Gi, 10 pods) -> {q31,
         * q32} (deserved 2 cpu, 2Gi, 2 pods; capability 4, 4Gi, 4 pods);
         * q4 beside q3.  pg3 (minMember 2, Inqueue) in q31: p3 and p4, 2
         * cpu and 2Gi each.  q31's real capability: q3's 4 (no guarantees
         * anywhere), within its own 4: p3 (2 <= 4) and p4 (4 <= 4) fit,
         * and q3 (4 <= 4) too: both bind on n1. */
        .name = "volcano hierarchy case2: a child below its capability allocates",
        .conf = VTREE,
        .manifests = VN1 Q3_TREE PG_PHASE("pg3", "2", "2024-01-01", ", queue: q31", "Inqueue")
            VPOD("p3", "pg3", "", "{cpu: '2', memory: 2Gi}", "")
                VPOD("p4", "pg3", "", "{cpu: '2', memory: 2Gi}", ""),
        .binds = "p3=n1 p4=n1",
    },
    {
        /* case3 "Can reclaim from other queues when allocated < deserved":
         * the same queues; n1 (8 cpu, 8Gi) is full: p5 (4 cpu, q4), p6
         * (2 cpu, q31, not preemptable) and p7 (2 cpu, q31).  pg6 in q32
         * (Inqueue) asks p8, 2 cpu: q32 holds 0 of its deserved 2, so it
         * may reclaim.  Victims in Volcano's order: q31 first (it shares
         * q3 with the reclaimer), p6 is not preemptable; p7: q31 holds 4
         * > 2 deserved in cpu: a victim, and its 2 cpu are enough, so q4's
         * p5 (4 > 2 too) is left.  p7 is evicted, p8 pipelined on n1. */
        .name = "volcano hierarchy case3: reclaim from a sibling above its deserved",
        .conf = VTREE,
        .manifests = VN1 Q3_TREE PG_PHASE("pg4", "1", "2024-01-01", ", queue: q4", "Running")
            VPOD("p5", "pg4", ON_N1, "{cpu: '4', memory: 4Gi}",
                 "phase: Running") PG_PHASE("pg5", "1", "2024-01-01", ", queue: q31", "Running")
                POD("p6",
                    ", annotations: {scheduling.k8s.io/group-name: pg5, "
                    "volcano.sh/preemptable: 'false'}",
                    "  schedulerName: kbatch\n" ON_N1
                    "  containers: [{name: c, resources: {requests: {cpu: '2', memory: 2Gi}}}]\n",
                    "phase: Running")
                    VPOD("p7", "pg5", ON_N1, "{cpu: '2', memory: 2Gi}", "phase: Running")
                        PG_PHASE("pg6", "1", "2024-01-01", ", queue: q32", "Inqueue")
                            VPOD("p8", "pg6", "", "{cpu: '2', memory: 2Gi}", ""),
        .binds = "",
        .evicted = "p7",
    },
    {
        /* case8 "When the queue's deserved value has a scalar resource
         * set, the check can pass": root -> q8 (deserved 4 cpu, 4Gi, 8
         * nvidia.com/gpu) -> {q81, q82} (deserved 2, 2Gi, 4 gpu each), no
         * capabilities.  p12 in q81 asks 2 cpu, 2Gi, 1 gpu on a node of 8
         * cpu, 8Gi, 8 gpu: nothing limits q81, so it binds. */
        .name = "volcano hierarchy case8: a scalar resource in deserved",
        .conf = VTREE,
        .manifests = NODE_RES("n-gpu", "8", "8Gi", "10', nvidia.com/gpu: '8") QUEUE("root", "", "")
            VQ("q8", "root", ", deserved: {cpu: '4', memory: 4Gi, nvidia.com/gpu: '8'}")
                VQ("q81", "q8", ", deserved: {cpu: '2', memory: 2Gi, nvidia.com/gpu: '4'}")
                    VQ("q82", "q8", ", deserved: {cpu: '2', memory: 2Gi, nvidia.com/gpu: '4'}")
                        PG_PHASE("pg12", "1", "2024-01-01", ", queue: q81", "Inqueue") VPOD(
                            "p12", "pg12", "", "{cpu: '2', memory: 2Gi, nvidia.com/gpu: '1'}", ""),
        .binds = "p12=n-gpu",
    },
    {
        /* case9 "When some scalar resources are 0 in deserved, the check
         * can still pass": q9 and q91 deserve hugepages-1Gi 0 besides cpu,
         * memory and gpu; the node has hugepages-1Gi 0.  p13 asks 2 cpu,
         * 2Gi, 1 gpu and no hugepages: the zero it does not ask for blocks
         * nothing, and it binds. */
        .name = "volcano hierarchy case9: a zero scalar in deserved",
        .conf = VTREE,
        .manifests = NODE_RES("n2", "8", "8Gi", "10', nvidia.com/gpu: '8', hugepages-1Gi: '0")
            QUEUE("root", "", "") VQ("q9", "root",
                                     ", deserved: {cpu: '2', memory: 2Gi, nvidia.com/gpu: '8', "
                                     "hugepages-1Gi: '0'}")
                VQ("q91", "q9",
                   ", deserved: {cpu: '2', memory: 2Gi, nvidia.com/gpu: '4', "
                   "hugepages-1Gi: '0'}")
                    PG_PHASE("pg13", "1", "2024-01-01", ", queue: q91", "Inqueue")
                        VPOD("p13", "pg13", "", "{cpu: '2', memory: 2Gi, nvidia.com/gpu: '1'}", ""),
        .binds = "p13=n2",
    },
};

/*
 * proportion and capacity in one conf, as Volcano allows (its
 * preempt_test.go's TestTopologyAwarePreempt runs both): each plugin keeps
 * its own shares and every vote must pass (pkg/framework/points.c).
 */
#define BOTH CONF_WITH("  - name: proportion\n  - name: capacity\n    enableHierarchy: true\n")

static const struct kb_scenario both[] = {
    {
        /* root -> p (capability 6 cpu) -> {a, b}; a has weight 3 and
         * deserves 2 cpu (capacity), b weight 1 and deserves 4; each has
         * eight 1-cpu pods; n1 has 8 cpu.  proportion (weights, only a and
         * b have jobs): a deserves 6, b 2, and allocatable holds each
         * there.  capacity: p's capability bounds a + b at 6.  Queue
         * order asks proportion (listed first), then capacity on a tie.
         * a-0 (0 = 0 in both, then the name); b-0 (a 1/6 > b 0); a-1
         * (2/6 < b's 1/2), a-2 (3/6); 1/2 = 1/2, capacity: a 3/2 > b 1/4:
         * b-1 (b at 2 of 2); a-3 (4/6 < 1); now p holds 6: a-4 is refused
         * by capacity, b-2 by proportion.  a 4, b 2.  proportion alone
         * would give a 6, b 2 (the node is full), capacity alone a 2, b 4
         * (by its shares); today a conf naming both is refused. */
        .name = "proportion and capacity: every vote must pass",
        .conf = BOTH,
        .manifests = N8 QUEUE("p", "capability: {cpu: '6'}", "")
            QUEUE("a", "parent: p, weight: 3, deserved: {cpu: '2'}", "")
                QUEUE("b", "parent: p, weight: 1, deserved: {cpu: '4'}", "")
                    GANG("a", "1", "8", "1", ", queue: a") GANG("b", "1", "8", "1", ", queue: b"),
        .binds = "a-0=n1 a-1=n1 a-2=n1 a-3=n1 b-0=n1 b-1=n1",
    },
    {
        /* The same queues and jobs with the two plugins listed the other
         * way round: capacity's queue order is asked first.  a-0 (0 = 0,
         * name); b-0 (a 1/2 > 0); b-1 (1/4 < 1/2); a 1/2 = b 2/4, then
         * proportion: a 1/6 < b 2/2: a-1 (2/2); b-2 is refused by
         * proportion (2 + 1 > 2), and b's job is done; a-2, a-3 (p at 6:
         * a 4, b 2); a-4 is refused by capacity.  The same binds: the
         * quotas, not the order, decide here. */
        .name = "proportion and capacity: the other order, the same quotas",
        .conf = CONF_WITH("  - name: capacity\n    enableHierarchy: true\n  - name: proportion\n"),
        .manifests = N8 QUEUE("p", "capability: {cpu: '6'}", "")
            QUEUE("a", "parent: p, weight: 3, deserved: {cpu: '2'}", "")
                QUEUE("b", "parent: p, weight: 1, deserved: {cpu: '4'}", "")
                    GANG("a", "1", "8", "1", ", queue: a") GANG("b", "1", "8", "1", ", queue: b"),
        .binds = "a-0=n1 a-1=n1 a-2=n1 a-3=n1 b-0=n1 b-1=n1",
    },
    {
        /* Enqueue with both in one tier: a group is admitted only when
         * neither rejects it.  root -> p (capability 4 cpu) -> a; group g
         * in a asks minResources cpu 5.  proportion sees a alone (no
         * capability of its own: real capability 8) and admits; capacity
         * hands p's capability down to a (4) and rejects: g waits, with
         * capacity's numbers.  proportion alone would bind g-0. */
        .name = "proportion and capacity: enqueue needs capacity's vote too",
        .conf = BOTH,
        .manifests = N8 QUEUE("p", "capability: {cpu: '4'}", "") QUEUE("a", "parent: p", "")
            PG("g", "1", "2024-01-01", ", queue: a, minResources: {cpu: '5'}")
                JOB("g", "g", "1", "", REQ1, ""),
        .binds = "",
        .phases = "g=Pending",
        .message = "queue resource quota insufficient: queue a: insufficient cpu: the group "
                   "needs 5, the queue has 0 allocated, 0 reserved for admitted groups, 0 "
                   "elastic, capability 4",
        .reasons = "g=QueueQuotaExceeded",
    },
    {
        /* And proportion's: root -> p (guarantee 4 cpu) -> a; g in a asks
         * minResources cpu 5.  capacity: the implicit root has no limit,
         * so neither has p nor a: admitted.  proportion counts p's
         * guarantee against a flat cluster: a may hold 8 - 4 = 4 < 5:
         * rejected, with proportion's numbers.  capacity alone would
         * bind g-0. */
        .name = "proportion and capacity: enqueue needs proportion's vote too",
        .conf = BOTH,
        .manifests = N8 QUEUE("p", "guarantee: {resource: {cpu: '4'}}", "") QUEUE(
            "a", "parent: p", "") PG("g", "1", "2024-01-01", ", queue: a, minResources: {cpu: '5'}")
            JOB("g", "g", "1", "", REQ1, ""),
        .binds = "",
        .phases = "g=Pending",
        .message = "queue resource quota insufficient: queue a: insufficient cpu: the group "
                   "needs 5, the queue has 0 allocated, 0 reserved for admitted groups, 0 "
                   "elastic, capability 4",
        .reasons = "g=QueueQuotaExceeded",
    },
};

TABLE_TEST(limits)
TABLE_TEST(order)
TABLE_TEST(tree)
TABLE_TEST(enqueue)
TABLE_TEST(states)
TABLE_TEST(both)
TABLE_TEST(volcano_tree)

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_limits),       cmocka_unit_test(test_order),
            cmocka_unit_test(test_tree),         cmocka_unit_test(test_enqueue),
            cmocka_unit_test(test_states),       cmocka_unit_test(test_both),
            cmocka_unit_test(test_volcano_tree),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
