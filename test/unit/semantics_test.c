/*
 * Volcano master's semantics, one scenario per rule (issue: "Volcano master
 * semantics").  Each expected bind is worked out by hand in the comment
 * above it, from the rules in the action and plugin banners; where the rule
 * changed from Volcano v1.7 (what kbatch did before), the comment says what
 * the old rule would have bound, so that the scenario tells the two apart.
 * Like every scenario table, each runs through the node-selection caches
 * and as a full scan.
 *
 * Default conf unless a scenario says otherwise: tiers priority, gang,
 * conformance / overcommit, drf, predicates, proportion, nodeorder.
 * Proportion counts pods as a resource (each task asks one), so with a
 * 4-cpu / 8Gi / 110-pod node a queue requesting n one-cpu, 1Gi tasks
 * requests n cpu, n Gi and n pods.
 */
#include "testutil.h"

#include "manifests.h"

/* clang-format off */

/* A PodGroup in a namespace, created on a date, with more spec fields. */
#define PG_NS(ns, name, min, created, extra_spec) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
        "metadata: {name: " name ", namespace: " ns ", creationTimestamp: '" created "T00:00:00Z'}\n" \
        "spec: {minMember: " min extra_spec "}\n"
/* The same with a status phase. */
#define PG_PHASE(name, min, created, extra_spec, phase) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
        "metadata: {name: " name ", creationTimestamp: '" created "T00:00:00Z'}\n" \
        "spec: {minMember: " min extra_spec "}\nstatus: {phase: " phase "}\n"
/* A pending pod of ours in a group, asking 1 cpu / 1Gi; more annotations
 * (", volcano.sh/task-spec: ps") and spec lines spliced as in POD. */
#define MEMBER(name, group, ann_extra, spec_lines) \
        POD(name, ", annotations: {scheduling.k8s.io/group-name: " group ann_extra "}", \
            "  schedulerName: kbatch\n" spec_lines POD_REQ("1"), "")
/* The same in a namespace. */
#define MEMBER_NS(ns, name, group) \
        POD(name, ", namespace: " ns IN_GROUP(group), "  schedulerName: kbatch\n" POD_REQ("1"), "")
/* A running pod of ours in a group on node. */
#define RUNNING_MEMBER(name, group, node) \
        POD(name, IN_GROUP(group), "  schedulerName: kbatch\n  nodeName: " node "\n" POD_REQ("1"), \
            "phase: Running")
/* The same, being deleted: Releasing, its room future idle. */
#define FOREIGN_RELEASING(name, node, cpu) \
        POD(name, ", deletionTimestamp: '2024-01-01T00:00:00Z'", \
            "  schedulerName: default-scheduler\n  nodeName: " node "\n" POD_REQ(cpu), \
            "phase: Running")
#define NOWHERE "  nodeSelector: {zone: nowhere}\n"
#define ROLE(r) ", volcano.sh/task-spec: " r

/* Default conf with tiers given whole. */
#define CONF(tier2) \
        "actions: \"enqueue, allocate, backfill\"\n" \
        "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n" \
        "- plugins:\n" tier2

static const struct kb_scenario allocate[] = {
    {
        /* One 4-cpu node, 2 cpu held by another scheduler's pod.  Queues q1
         * and q2 (weight 1, same age: q1 first by name).  Namespace b has
         * jobs b1, b2 in q1; namespace a has a1, a2 in q2; each one 1-cpu
         * pod, minMember 1, the "1"s created first.
         * Deserved: each queue requests 2 cpu, 2Gi, 2 pods; half the
         * cluster each (2 cpu, 4Gi, 55 pods) capped at the request: both
         * deserve 2 cpu, 2Gi, 2 pods and are satisfied.
         * Master's allocate, one queue heap: q1 and q2 at share 0, q1 by
         * name: b1-0 to n1 (q1 share 1/2 in cpu, memory and pods = 0.5);
         * q2 now first (0 < 0.5): a1-0 to n1 (q2 0.5); n1 is full; q1 (tie,
         * name): b2-0 fits nowhere; q2: a2-0 fits nowhere.
         * Volcano v1.7's namespace level took namespace a first and kept
         * it while it had work: a1-0 and a2-0 would have bound instead. */
        .name = "allocate: one heap of queues across namespaces",
        .manifests = NODE("n1") FOREIGN("web", "n1", "2")
            QUEUE("q1", "weight: 1", "") QUEUE("q2", "weight: 1", "")
            PG_NS("b", "b1", "1", "2024-01-01", ", queue: q1")
            PG_NS("b", "b2", "1", "2024-01-02", ", queue: q1")
            PG_NS("a", "a1", "1", "2024-01-01", ", queue: q2")
            PG_NS("a", "a2", "1", "2024-01-02", ", queue: q2")
            MEMBER_NS("b", "b1-0", "b1") MEMBER_NS("b", "b2-0", "b2")
            MEMBER_NS("a", "a1-0", "a1") MEMBER_NS("a", "a2-0", "a2"),
        .binds = "b/b1-0=n1 a/a1-0=n1",
        .phases = "b/b1=Running a/a1=Running b/b2=Inqueue a/a2=Inqueue",
    },
    {
        /* Group x, minMember 2 of four pods x-p-0 .. x-p-3 (pod-name index
         * order); x-p-0 and x-p-1 select a zone no node has.  x-p-0 fits
         * nowhere; minMember 2 is below the 4 tasks and no role has a
         * minimum, so the turn goes on (NeedContinueAllocating); x-p-1 has
         * no role (no volcano.sh/task-spec), so it is tried too and fails;
         * x-p-2 and x-p-3 go to n1 and the gang is ready.  v1.7 stopped at
         * x-p-0 and bound nothing. */
        .name = "allocate: a gang goes on past a task that fits nowhere",
        .manifests = NODE("n1") PG("x", "2", "2024-01-01", "")
            MEMBER("x-p-0", "x", "", NOWHERE) MEMBER("x-p-1", "x", "", NOWHERE)
            MEMBER("x-p-2", "x", "", "") MEMBER("x-p-3", "x", "", ""),
        .binds = "x-p-2=n1 x-p-3=n1",
        .phases = "x=Running",
    },
    {
        /* Roles: r-ps-0 and r-ps-1 (task-spec ps), r-w-0 and r-w-1
         * (worker); r-ps-0 selects a zone no node has; minMember 2.  Task
         * order: index 0 first (r-ps-0 before r-w-0 by uid), then index 1.
         * r-ps-0 fails: role ps has failed in this session.  The turn goes
         * on (2 < 4 tasks, no role minimums).  r-w-0 to n1; r-ps-1 is
         * skipped without trying — one role, one spec (Volcano's
         * TaskHasFitErrors) — though it would fit; r-w-1 to n1: ready. */
        .name = "allocate: a role that fit nowhere is not tried again",
        .manifests = NODE("n1") PG("r", "2", "2024-01-01", "")
            MEMBER("r-ps-0", "r", ROLE("ps"), NOWHERE) MEMBER("r-ps-1", "r", ROLE("ps"), "")
            MEMBER("r-w-0", "r", ROLE("worker"), "") MEMBER("r-w-1", "r", ROLE("worker"), ""),
        .binds = "r-w-0=n1 r-w-1=n1",
        .phases = "r=Running",
    },
    {
        /* minTaskMember {ps: 1, worker: 2} with minMember 3 (the roles sum
         * to 3 <= 3, so they count).  m-ps-0 (the only ps) selects a zone
         * no node has and comes first (index 0, uid ps < w).  It fails;
         * the role ps needs 1 and holds 0, so the gang cannot complete:
         * the turn ends and nothing is placed. */
        .name = "allocate: a failed role short of its minimum ends the turn",
        .manifests = NODE("n1") PG("m", "3", "2024-01-01", ", minTaskMember: {ps: 1, worker: 2}")
            MEMBER("m-ps-0", "m", ROLE("ps"), NOWHERE) MEMBER("m-w-0", "m", ROLE("worker"), "")
            MEMBER("m-w-1", "m", ROLE("worker"), "") MEMBER("m-w-2", "m", ROLE("worker"), ""),
        .binds = "",
        .phases = "m=Inqueue",
        .message = "m: its minMember 3 pods do not all fit the free room: 0/1 nodes are available: 1 node(s) didn't match "
                   "Pod's node affinity/selector.",
        .reasons = "m=NotEnoughResources",
    },
    {
        /* minTaskMember {ps: 2, worker: 2} sums to 4 > minMember 2, so
         * only the count matters: after c-ps-0 fails, the pending tasks of
         * roles that have not failed (c-w-0, c-w-1) can still make 2, so
         * the turn goes on: c-w-0 to n1, c-ps-1 skipped (role ps failed),
         * c-w-1 to n1: ready. */
        .name = "allocate: with loose role minimums only the count decides",
        .manifests = NODE("n1") PG("c", "2", "2024-01-01", ", minTaskMember: {ps: 2, worker: 2}")
            MEMBER("c-ps-0", "c", ROLE("ps"), NOWHERE) MEMBER("c-ps-1", "c", ROLE("ps"), NOWHERE)
            MEMBER("c-w-0", "c", ROLE("worker"), "") MEMBER("c-w-1", "c", ROLE("worker"), ""),
        .binds = "c-w-0=n1 c-w-1=n1",
        .phases = "c=Running",
    },
    {
        /* Without enqueue in the conf, allocate admits a Pending group
         * itself: a gang of five 1-cpu pods on a 4-cpu node is placed four
         * times, the fifth fits nowhere (minMember 5 = all tasks: stop),
         * everything is undone, and the group closes as Inqueue — not
         * Pending — as Volcano's allocate moves it. */
        .name = "allocate: without enqueue a group that does not fit closes Inqueue",
        .conf = "actions: \"allocate, backfill\"\n"
                "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n"
                "- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n"
                "  - name: nodeorder\n",
        .manifests = NODE("n1") GANG("big", "5", "5", "1", ""),
        .binds = "",
        .phases = "big=Inqueue",
        .message = "big: can never fit: its minMember 5 task(s) ask cpu 5, more than the whole "
                   "cluster has (1 node(s): 4)",
        .reasons = "big=NeverFits",
    },
    {
        /* No task-order plugin (no priority): tasks go by Volcano's
         * CompareTask, the pod-name index first: t-x-0 (priority 0) before
         * t-x-1 (priority 100).  The 1-cpu node takes t-x-0, the job is
         * ready; its next turn tries t-x-1: no room.  (kbatch's old default
         * put the higher priority first.) */
        .name = "allocate: the default task order ignores priority",
        .conf = "actions: \"enqueue, allocate, backfill\"\n"
                "tiers:\n- plugins:\n  - name: gang\n"
                "- plugins:\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n",
        .manifests = NODE_RES("n1", "1", "8Gi", "110") PG("t", "1", "2024-01-01", "")
            MEMBER("t-x-1", "t", "", "  priority: 100\n") MEMBER("t-x-0", "t", "", "  priority: 0\n"),
        .binds = "t-x-0=n1",
    },
    {
        /* The same with the priority plugin: its task order puts t-x-1
         * (100) first, and it takes the node. */
        .name = "allocate: the priority plugin orders tasks by priority",
        .manifests = NODE_RES("n1", "1", "8Gi", "110") PG("t", "1", "2024-01-01", "")
            MEMBER("t-x-1", "t", "", "  priority: 100\n") MEMBER("t-x-0", "t", "", "  priority: 0\n"),
        .binds = "t-x-1=n1",
    },
};

static const struct kb_scenario queues[] = {
    {
        /* Queues alpha (priority 0) and beta (spec.priority 10), weight 1
         * each; n1 has 2 of its 4 cpu free (another scheduler's pod holds
         * 2).  Gangs a (alpha) and b (beta), two 1-cpu pods each, minMember
         * 2.  Both queues deserve their 2 cpu, both start at share 0; the
         * higher priority goes first: b-0, b-1 to n1; then a-0 fits
         * nowhere and a is undone.  Ordered by share and name alone, alpha
         * would have gone first and a would have bound. */
        .name = "queue order: spec.priority before share",
        .manifests = NODE("n1") FOREIGN("web", "n1", "2")
            QUEUE("alpha", "weight: 1", "") QUEUE("beta", "weight: 1, priority: 10", "")
            GANG("a", "2", "2", "1", ", queue: alpha") GANG("b", "2", "2", "1", ", queue: beta"),
        .binds = "b-0=n1 b-1=n1",
        .phases = "a=Inqueue b=Running",
    },
    {
        /* Queues a and c weigh 1 each; c is Closed with a pending gang of
         * eight 1-cpu pods, a has eight too; n1 has 8 cpu.  c can place
         * nothing, so its demand counts toward no share: a requests 8 cpu
         * and deserves all 8 (the second round of water-filling gives it
         * what c did not take), and a-0 .. a-7 bind.  Counting c's demand,
         * as Volcano does, the first round would split the cluster 4/4,
         * nothing would remain, and a would stop at 4.  c says why it
         * waits (minMember 1 of its 8 tasks is short). */
        .name = "queue state: a closed queue's pending demand shrinks no one's share",
        .manifests = NODE_RES("n1", "8", "32Gi", "110") QUEUE("a", "weight: 1", "")
            QUEUE("c", "weight: 1", "state: Closed")
            GANG("a", "1", "8", "1", ", queue: a") GANG("c", "1", "8", "1", ", queue: c"),
        .binds = "a-0=n1 a-1=n1 a-2=n1 a-3=n1 a-4=n1 a-5=n1 a-6=n1 a-7=n1",
        .phases = "c=Pending",
        .message = "c: queue c is Closed; 1st of 1 waiting in queue c",
        .reasons = "c=QueueClosed",
    },
    {
        /* Group ci was admitted (Inqueue) before its queue closed: it
         * takes no task, and says why. */
        .name = "queue state: an admitted group in a Closed queue says the queue is closed",
        .manifests = NODE("n1") QUEUE("c", "weight: 1", "state: Closed")
            PG_PHASE("ci", "1", "2024-01-01", ", queue: c", "Inqueue") JOB("ci", "ci", "1", "", REQ1, ""),
        .binds = "",
        .phases = "ci=Inqueue",
        .message = "ci: queue c is Closed",
        .reasons = "ci=QueueClosed",
    },
    {
        /* A queue of weight 0 (below the CRD's minimum) is read as weight
         * 1 with a warning, as Volcano's scheduler reads it, instead of
         * failing the whole manifest: its gang binds. */
        .name = "queue weight 0 counts as 1",
        .manifests = NODE("n1") QUEUE("zero", "weight: 0", "")
            GANG("z", "1", "1", "1", ", queue: zero"),
        .binds = "z-0=n1",
        .phases = "z=Running",
    },
};

static const struct kb_scenario enqueue[] = {
    {
        /* Proportion votes before overcommit (tier 2 reordered).  n1 has 4
         * cpu, 2 held by another scheduler's pod.  Group A asks
         * minResources cpu 3 (three 1-cpu pods), B asks 2 (two), A older.
         * A: proportion permits (3 + 0 allocated + 0 reserved <= 4),
         * overcommit (factor 1.0: 4 - 2 used = 2 idle) rejects 3 > 2: A
         * stays Pending.  Volcano's proportion charges A's 3 cpu inside
         * its vote all the same; kbatch charges only in jobEnqueued, after
         * every vote admitted the group, so nothing is charged for A.
         * B: proportion 2 + 0 + 0 <= 4, overcommit 2 <= 2: admitted.  Its
         * two pods fit n1's 2 free cpu.  Charged in the vote, B would have
         * met 2 + 3 > 4 and nothing would bind. */
        .name = "enqueue: a group charges its reservation only once admitted",
        .conf = CONF("  - name: drf\n  - name: predicates\n  - name: proportion\n"
                     "  - name: overcommit\n    arguments: {overcommit-factor: 1.0}\n"
                     "  - name: nodeorder\n"),
        .manifests = NODE("n1") FOREIGN("web", "n1", "2")
            PG("ga", "3", "2024-01-01", ", minResources: {cpu: '3'}")
            JOB("ga", "ga", "3", "", REQ1, "")
            PG("gb", "2", "2024-01-02", ", minResources: {cpu: '2'}")
            JOB("gb", "gb", "2", "", REQ1, ""),
        .binds = "gb-0=n1 gb-1=n1",
        .phases = "ga=Pending gb=Running",
        .message = "ga: resource in cluster is overused: not enough cpu for the group's "
                   "minResources: it needs 3, the cluster has 2 idle (overcommitted) of which 0 "
                   "is reserved for admitted groups",
        .reasons = "ga=NotEnoughResources",
    },
    {
        /* g1 is Inqueue (minMember 2, minResources cpu 2) and already runs
         * g1-0 (1 cpu) on n1; g1-1 waits.  g2 (minResources cpu 2, two
         * pods) is Pending.  overcommit-factor 2.0 keeps overcommit out of
         * the way (8 - 1 used = 7 >= 2 reserved by g1 + 2).
         * Proportion: the queue holds 1 cpu; g1 reserves only what it does
         * not hold yet, 2 - 1 = 1; nothing is elastic.  2 + 1 + 1 - 0 = 4
         * <= 4: g2 is admitted.  (Reserving g1's whole minResources: 5 > 4,
         * and g2 would wait.)
         * Allocate: the queue deserves its request (4 cpu).  drf puts g2
         * (share 0) before g1 (1 of 4 cpu: 0.25): g2-0, g2-1 to n1, ready;
         * then g1-1 to n1: g1 has 2, ready. */
        .name = "enqueue: an Inqueue group reserves only what it does not hold",
        .conf = CONF_TIERS("", "    arguments: {overcommit-factor: 2.0}\n", "", ""),
        .manifests = NODE("n1")
            PG_PHASE("g1", "2", "2024-01-01", ", minResources: {cpu: '2'}", "Inqueue")
            RUNNING_MEMBER("g1-0", "g1", "n1") MEMBER("g1-1", "g1", "", "")
            PG("g2", "2", "2024-01-02", ", minResources: {cpu: '2'}")
            JOB("g2", "g2", "2", "", REQ1, ""),
        .binds = "g2-0=n1 g2-1=n1 g1-1=n1",
        .phases = "g1=Running g2=Running",
    },
    {
        /* r is Running with minMember 1 and minResources cpu 3, and holds
         * 1 cpu (r-0 on n1): it has its minMember, so the 2 cpu of its
         * minResources it does not hold stay reserved.  n asks
         * minResources cpu 2: 2 + 1 allocated + 2 reserved - 0 elastic = 5
         * > 4: n waits.  (No overcommit in this conf: proportion decides.)
         * Without reserving a Running group's unfilled part, n would be
         * admitted and its pod bound. */
        .name = "enqueue: a Running group's unfilled minResources stay reserved",
        .conf = CONF("  - name: drf\n  - name: predicates\n  - name: proportion\n"
                     "  - name: nodeorder\n"),
        .manifests = NODE("n1")
            PG_PHASE("r", "1", "2024-01-01", ", minResources: {cpu: '3'}", "Running")
            RUNNING_MEMBER("r-0", "r", "n1")
            PG("n", "1", "2024-01-02", ", minResources: {cpu: '2'}") JOB("n", "n", "1", "", REQ1, ""),
        .binds = "",
        .phases = "n=Pending",
        .message = "queue resource quota insufficient: queue default: insufficient cpu: the group "
                   "needs 2, the queue has 1 allocated, 2 reserved for admitted groups, 0 elastic, "
                   "capability 4",
    },
};

static const struct kb_scenario backfill[] = {
    {
        /* n1 has one pod slot.  Queues low (priority 0) and high
         * (priority 10); group a (queue low) and b (queue high), one
         * best-effort pod each.  Backfill walks queues in queue order:
         * high first, b-0 takes the slot; a-0 is short of pods.  (Walking
         * jobs by name, a-0 would have taken it.) */
        .name = "backfill: queues in queue order",
        .manifests = NODE_RES("n1", "4", "8Gi", "1")
            QUEUE("low", "weight: 1", "") QUEUE("high", "weight: 1, priority: 10", "")
            PG("a", "1", "2024-01-01", ", queue: low") PG("b", "1", "2024-01-02", ", queue: high")
            POD("a-0", IN_GROUP("a"), "  schedulerName: kbatch\n  containers: [{name: c}]\n", "")
            POD("b-0", IN_GROUP("b"), "  schedulerName: kbatch\n  containers: [{name: c}]\n", ""),
        .binds = "b-0=n1",
        .phases = "b=Running",
    },
};

static const struct kb_scenario scoring[] = {
    {
        /* Idle room before room being freed (Volcano master's two node
         * gradients).  n1 (4 cpu, 8Gi, 1 pod) has its only pod slot held
         * by a Releasing 100m pod: x-0 (1 cpu, 1Gi) fits its future idle
         * room only.  n2 (4 cpu, 8Gi, 110 pods) runs another scheduler's
         * 2-cpu pod and has room now.  Scores: n1 least (72 + 75) / 2 =
         * 73, balanced |0.275 - 0.25| / 2 -> 98: 171; n2 (25 + 75) / 2 =
         * 50, |0.75 - 0.25| / 2 -> 75: 125.  The best score alone would
         * pipeline x-0 onto n1; nodes with idle room come first, so it
         * binds to n2 now. */
        .name = "allocate: a node with free room before one being freed",
        .manifests = NODE_RES("n1", "4", "8Gi", "1") NODE("n2")
            FOREIGN_RELEASING("old", "n1", "100m") FOREIGN("web", "n2", "2")
            PG("x", "1", "2024-01-01", "") MEMBER("x-0", "x", "", ""),
        .binds = "x-0=n2",
        .nominated = "",
    },
    {
        /* binpack alone scores (nodeorder's weights 0).  n1 (4 cpu, 16Gi)
         * and n2 (4 cpu, 8Gi) each hold a Releasing pod of 3 cpu, 1Gi:
         * idle 1 cpu, future idle 4.  x-0 asks 2 cpu, 4Gi: it fits no
         * node's idle room, both nodes' future idle room: it will be
         * pipelined.  binpack: used 3 + 2 = 5 > 4 cpu on both, so both
         * score 0 (Volcano master), a tie: n1 by name.  The old rule
         * (overflowing cpu adds 0 but keeps its weight) gave n1 (0 + 5/16)
         * / 2 and n2 (0 + 5/8) / 2, and n2 would have won. */
        .name = "binpack: a resource that would overflow zeroes the node",
        .conf = "actions: \"enqueue, allocate, backfill\"\n"
                "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n"
                "- plugins:\n  - name: predicates\n  - name: proportion\n"
                "  - name: nodeorder\n    arguments: {leastrequested.weight: 0, "
                "balancedresource.weight: 0, nodeaffinity.weight: 0}\n"
                "  - name: binpack\n",
        .manifests = NODE_RES("n1", "4", "16Gi", "110") NODE_RES("n2", "4", "8Gi", "110")
            FOREIGN_RELEASING("old1", "n1", "3") FOREIGN_RELEASING("old2", "n2", "3")
            PG("x", "1", "2024-01-01", "")
            POD("x-0", IN_GROUP("x"), "  schedulerName: kbatch\n"
                "  containers: [{name: c, resources: {requests: {cpu: '2', memory: 4Gi}}}]\n", ""),
        .binds = "",
        .nominated = "x-0=n1",
    },
    {
        /* nodeaffinity's default weight is 2 (Volcano master).  The pod
         * prefers zone a with weight 15.  n1 (zone b) is empty; n2 (zone
         * a) runs another scheduler's 1-cpu, 1Gi pod.  For a 1-cpu, 1Gi
         * pod: n1 leastrequested (75 + 87) / 2 = 81, balanced |0.25 -
         * 0.125| / 2 -> 93: 174.  n2: (50 + 75) / 2 = 62, |0.5 - 0.25| / 2
         * -> 87: 149, plus 15 * 2 = 179 > 174: n2.  At weight 1, 164 <
         * 174 and n1 would win (next scenario). */
        .name = "nodeorder: node affinity weighs 2 by default",
        .manifests = NODE_X("n1", ALLOC4, ", labels: {zone: b}", "", "")
            NODE_X("n2", ALLOC4, ", labels: {zone: a}", "", "") FOREIGN("web", "n2", "1")
            PG("p", "1", "2024-01-01", "")
            MEMBER("p-0", "p", "", "  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                   "[{weight: 15, preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}]}}\n"),
        .binds = "p-0=n2",
    },
    {
        /* The same with nodeaffinity.weight 1: 149 + 15 = 164 < 174, n1. */
        .name = "nodeorder: node affinity at weight 1",
        .conf = CONF_TIERS("", "", "", "    arguments: {nodeaffinity.weight: 1}\n"),
        .manifests = NODE_X("n1", ALLOC4, ", labels: {zone: b}", "", "")
            NODE_X("n2", ALLOC4, ", labels: {zone: a}", "", "") FOREIGN("web", "n2", "1")
            PG("p", "1", "2024-01-01", "")
            MEMBER("p-0", "p", "", "  affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
                   "[{weight: 15, preference: {matchExpressions: [{key: zone, operator: In, values: [a]}]}}]}}\n"),
        .binds = "p-0=n1",
    },
};

/*
 * Gangs left partly bound (a crash mid-dispatch, a failed bind) complete
 * before other gangs take the room they need (kbatch's rule; Volcano can
 * starve them).
 */
#define BOUND_MEMBER(name, group, node, cpu) \
        POD(name, IN_GROUP(group), "  schedulerName: kbatch\n  nodeName: " node "\n" POD_REQ(cpu), \
            "phase: Running")
#define WAITING_MEMBER(name, group, cpu) \
        POD(name, IN_GROUP(group), "  schedulerName: kbatch\n" POD_REQ(cpu), "")

static const struct kb_scenario partial[] = {
    {
        /* Two 8-cpu nodes.  Gang a (minMember 8) has a-0..a-3 bound on n1
         * and a-4 on n2; a-5..a-7 wait.  Gang b (minMember 11, newer)
         * waits whole.  11 cpu are free (4 on n1, 7 on n2).  a is partly
         * bound, so it goes first among the jobs not ready: n1 would be at
         * 5 cpu and 5Gi of 8 cpu, 32Gi: least (37 + 84) / 2 = 60, balanced
         * -> 76: 136.  n2 at 2, 3 and 4 cpu scores 84 + 90 = 174, 76 + 85 =
         * 161, 68 + 81 = 149: a-5, a-6 and a-7 all go to n2; a is ready.  b finds 8 cpu for 11 tasks: undone.
         * Ordered by drf alone, b (share 0) would go before a (5/16), take
         * all 11 cpu, and a would hold its 5 forever. */
        .name = "a partly bound gang completes before a new one takes its room",
        .manifests = NODE_RES("n1", "8", "32Gi", "110") NODE_RES("n2", "8", "32Gi", "110")
            PG("a", "8", "2024-01-01", "")
            BOUND_MEMBER("a-0", "a", "n1", "1") BOUND_MEMBER("a-1", "a", "n1", "1")
            BOUND_MEMBER("a-2", "a", "n1", "1") BOUND_MEMBER("a-3", "a", "n1", "1")
            BOUND_MEMBER("a-4", "a", "n2", "1") WAITING_MEMBER("a-5", "a", "1")
            WAITING_MEMBER("a-6", "a", "1") WAITING_MEMBER("a-7", "a", "1")
            PG("b", "11", "2024-01-02", "") JOB("b", "b", "11", "", REQ1, ""),
        .binds = "a-5=n2 a-6=n2 a-7=n2",
        .phases = "a=Running b=Inqueue",
    },
    {
        /* n1 (8 cpu) runs a-0 and a-1 (1 cpu each) of gang a (minMember 4)
         * and another scheduler's 3-cpu pod: 3 cpu free.  a-2 (3 cpu) takes
         * them, a-3 (3 cpu) fits nowhere.  a could complete if the other
         * pod went (8 - 2 = 6 >= 3 + 3), so the room a-2 took is held for a:
         * nothing binds.  c (one 2-cpu pod) finds no room.  Undoing a's
         * turn, as Volcano does, would have let c take 2 of the 3 cpu. */
        .name = "a partly bound gang holds the room it found",
        .manifests = NODE_RES("n1", "8", "8Gi", "110") FOREIGN("web", "n1", "3")
            PG("a", "4", "2024-01-01", "")
            BOUND_MEMBER("a-0", "a", "n1", "1") BOUND_MEMBER("a-1", "a", "n1", "1")
            WAITING_MEMBER("a-2", "a", "3") WAITING_MEMBER("a-3", "a", "3")
            PG("c", "1", "2024-01-02", "") WAITING_MEMBER("c-0", "c", "2"),
        .binds = "",
        /* Running tasks in a gang found unschedulable: Unknown (Volcano). */
        .phases = "a=Unknown c=Inqueue",
        .message = "a: the gang holds 2 placed task(s) of minMember 4; room for the rest is "
                   "kept for it as it frees up (0/1 nodes are available: 1 Insufficient cpu.); "
                   "1st of 2 waiting in queue default",
        .reasons = "a=NotEnoughResources",
    },
    {
        /* Gang a (minMember 3) runs a-0 (2 cpu) on n1 (8 cpu); a-1 and a-2
         * ask 4 cpu each.  Even alone on the node, a would have 6 cpu for
         * 8: it can never complete, so it holds nothing, says why with the
         * numbers, and c (4 cpu) binds in the room a-1 was given. */
        .name = "a partly bound gang that can never complete holds nothing",
        .manifests = NODE_RES("n1", "8", "8Gi", "110")
            PG("a", "3", "2024-01-01", "") BOUND_MEMBER("a-0", "a", "n1", "2")
            WAITING_MEMBER("a-1", "a", "4") WAITING_MEMBER("a-2", "a", "4")
            PG("c", "1", "2024-01-02", "") WAITING_MEMBER("c-0", "c", "4"),
        .binds = "c-0=n1",
        .message = "a: the gang holds 1 placed task(s) and needs 2 more, but only 1 of its 2 "
                   "waiting task(s) would fit even if nothing else ran (1 node(s), the largest "
                   "with cpu: 8, memory: 8Gi): it can never complete (0/1 nodes are available: "
                   "1 Insufficient cpu.)",
        .reasons = "a=NeverFits",
    },
};

/* clang-format on */

TABLE_TEST(allocate)
TABLE_TEST(partial)
TABLE_TEST(queues)
TABLE_TEST(enqueue)
TABLE_TEST(backfill)
TABLE_TEST(scoring)

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_allocate), cmocka_unit_test(test_queues),
            cmocka_unit_test(test_enqueue),  cmocka_unit_test(test_backfill),
            cmocka_unit_test(test_scoring),  cmocka_unit_test(test_partial),
        };
        return cmocka_run_group_tests_name("semantics", tests, NULL, NULL);
}
