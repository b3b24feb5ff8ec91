/*
 * Why is my job pending: every waiting PodGroup's condition names what
 * blocks it, with the numbers, its reason matching (README, "Why is my job
 * pending"), and its place among the waiting gangs of its queue.  Each
 * expected message is worked out by hand in the comment above it, from the
 * rules in plugins/gang.c (why_waiting), plugins/proportion.c
 * (explain_refusal) and pkg/framework/close.c (positions).
 */
#include "testutil.h"

#include "manifests.h"

/* clang-format off */

/* A running 1-cpu pod of group g on node. */
#define RUN_POD(name, g, node) \
        POD(name, IN_GROUP(g), "  schedulerName: kbatch\n  nodeName: " node "\n" POD_REQ("1"), \
            "phase: Running")
/* A pending 1-cpu pod of group g. */
#define WAIT_POD(name, g) POD(name, IN_GROUP(g), "  schedulerName: kbatch\n" POD_REQ("1"), "")

static const struct kb_scenario why[] = {
    {
        /* Two 4-cpu nodes (8 cpu, 16Gi).  Queue qb (capability cpu 3) runs
         * r (two 1-cpu pods on n1); its gang b (minMember 2) waits for two
         * more.  Deserved: default asks nothing; qb asks 4 cpu, 4Gi, 4
         * pods and gets half the cluster, 4 cpu, capped by its capability:
         * 3.  b-0: 2 + 1 <= 3, placed; b-1: 3 + 1 > 3, refused, though n2
         * has room.  b is not ready and is undone.  The numbers are those
         * before b's turn: b needs 2 cpu, qb deserves 3 and holds 2, its
         * capability is 3. */
        .name = "quota: the numbers of the queue that refuses the gang",
        .manifests = NODE("n1") NODE("n2") QUEUE("qb", "weight: 1, capability: {cpu: '3'}", "")
            PG("r", "1", "2024-01-01", ", queue: qb") RUN_POD("r-0", "r", "n1") RUN_POD("r-1", "r", "n1")
            PG("b", "2", "2024-01-02", ", queue: qb") WAIT_POD("b-0", "b") WAIT_POD("b-1", "b"),
        .binds = "",
        .message = "b: queue qb: gang needs cpu 2, deserved 3, allocated 2, capability 3; 1st of "
                   "1 waiting in queue qb",
        .reasons = "b=QueueQuotaExceeded",
    },
    {
        /* The first scenario with capacity: qb deserves 2 cpu and may
         * borrow up to its capability, 3 (the cluster, 8, bounds nothing
         * more).  b-0: 2 + 1 <= 3; b-1: 3 + 1 > 3, refused.  Numbers
         * before b's turn: it needs 2, qb deserves 2, holds 2, may hold 3
         * (capacity's capability is the real one). */
        .name = "quota: capacity gives its numbers too",
        .conf = "actions: \"enqueue, allocate, backfill\"\n"
                "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n"
                "- plugins:\n  - name: drf\n  - name: predicates\n  - name: capacity\n"
                "  - name: nodeorder\n",
        .manifests = NODE("n1") NODE("n2")
            QUEUE("qb", "deserved: {cpu: '2'}, capability: {cpu: '3'}", "")
            PG("r", "1", "2024-01-01", ", queue: qb") RUN_POD("r-0", "r", "n1") RUN_POD("r-1", "r", "n1")
            PG("b", "2", "2024-01-02", ", queue: qb") WAIT_POD("b-0", "b") WAIT_POD("b-1", "b"),
        .binds = "",
        .message = "b: queue qb: gang needs cpu 2, deserved 2, allocated 2, capability 3; 1st of "
                   "1 waiting in queue qb",
        .reasons = "b=QueueQuotaExceeded",
    },
    {
        /* Queue qb capped at 2 cpu; gang b asks three 1-cpu pods (minMember
         * 3).  The cluster (8 cpu) could hold it, the queue never can: qb
         * deserves min(request 3, capability 2) = 2, so b-2 is refused (2 +
         * 1 > 2), and b's minMember pods ask 3 > the 2 the queue may ever
         * hold. */
        .name = "quota: a gang its queue can never hold says so",
        .manifests = NODE("n1") NODE("n2") QUEUE("qb", "weight: 1, capability: {cpu: '2'}", "")
            PG("b", "3", "2024-01-02", ", queue: qb") WAIT_POD("b-0", "b") WAIT_POD("b-1", "b")
            WAIT_POD("b-2", "b"),
        .binds = "",
        .message = "b: queue qb can never hold the gang: its minMember 3 task(s) need cpu 3, the "
                   "most the queue may hold is 2",
        .reasons = "b=NeverFits",
    },
    {
        /* One 4-cpu node; three gangs in queue default, oldest first: g1
         * (three 1-cpu pods) takes 3 cpu; g3-0 takes the last, g3-1 fits
         * nowhere: g3 is undone; g2 likewise.  g2 and g3 wait, both
         * Inqueue, equal in priority, readiness and share (nothing
         * allocated): by creation, g3 (created 01-02) is 1st and g2
         * (01-03) 2nd of 2 — the opposite of name order, so creation is
         * what numbers them. */
        .name = "position: waiting gangs are numbered in the order they are considered",
        .manifests = NODE("n1") PG("g1", "3", "2024-01-01", "") WAIT_POD("g1-0", "g1")
            WAIT_POD("g1-1", "g1") WAIT_POD("g1-2", "g1")
            PG("g2", "2", "2024-01-03", "") WAIT_POD("g2-0", "g2") WAIT_POD("g2-1", "g2")
            PG("g3", "2", "2024-01-02", "") WAIT_POD("g3-0", "g3") WAIT_POD("g3-1", "g3"),
        .binds = "g1-0=n1 g1-1=n1 g1-2=n1",
        .message = "g2: its minMember 2 pods do not all fit the free room: 0/1 nodes are available: 1 Insufficient cpu.; 2nd of "
                   "2 waiting in queue default",
        .reasons = "g2=NotEnoughResources g3=NotEnoughResources",
    },
    {
        /* The same, with g2 at priority 1000: g2 goes before g1 and takes
         * 2 cpu, g1 (3) finds 2 and waits, g3 takes the last 2.  Only g1
         * waits: 1st of 1. */
        .name = "position: priority first, as allocate considers them",
        .manifests = NODE("n1") PRIORITY_CLASS("hi", "1000")
            PG("g1", "3", "2024-01-01", "") WAIT_POD("g1-0", "g1") WAIT_POD("g1-1", "g1")
            WAIT_POD("g1-2", "g1")
            PG("g3", "2", "2024-01-03", "") WAIT_POD("g3-0", "g3") WAIT_POD("g3-1", "g3")
            PG("g2", "2", "2024-01-02", ", priorityClassName: hi") WAIT_POD("g2-0", "g2")
            WAIT_POD("g2-1", "g2"),
        .binds = "g2-0=n1 g2-1=n1 g3-0=n1 g3-1=n1",
        .message = "g1: its minMember 3 pods do not all fit the free room: 0/1 nodes are available: 1 Insufficient cpu.; 1st of "
                   "1 waiting in queue default",
        .reasons = "g1=NotEnoughResources",
    },
    {
        /* A PodGroup naming a queue that does not exist cannot be
         * considered: no position. */
        .name = "a missing queue is named, with its reason",
        .manifests = NODE("n1") PG("q", "1", "2024-01-01", ", queue: nope") WAIT_POD("q-0", "q"),
        .binds = "",
        .message = "q: queue nope not found\n",
        .reasons = "q=QueueNotFound",
    },
    {
        /* Pods naming a PodGroup that does not exist: reported under the
         * group's name. */
        .name = "a missing PodGroup is named, with its reason",
        .manifests = NODE("n1") WAIT_POD("ghost-0", "ghost"),
        .binds = "",
        .message = "ghost: podgroup default/ghost not found",
        .reasons = "ghost=PodGroupNotFound",
    },
    {
        /* minMember 3 with two pods: Volcano's words and numbers. */
        .name = "a gang with too few pods: NotEnoughTasks",
        .manifests = NODE("n1") PG("few", "3", "2024-01-01", "") WAIT_POD("few-0", "few")
            WAIT_POD("few-1", "few"),
        .binds = "",
        .message = "few: Not enough valid tasks for gang-scheduling, valid: 2, min: 3\n",
        .reasons = "few=NotEnoughTasks",
    },
    {
        /* Two pods name the group but ask for Volcano (a Volcano Job still
         * saying schedulerName: volcano), one asks for kbatch: kbatch's
         * alone cannot make minMember 3, so the group is not admitted and
         * says why (issue 23, point 1). */
        .name = "a group whose pods ask for another scheduler says so",
        .manifests = NODE("n1") PG("vc", "3", "2024-01-01", "")
            POD("vc-0", IN_GROUP("vc"), "  schedulerName: volcano\n" POD_REQ("1"), "")
            POD("vc-1", IN_GROUP("vc"), "  schedulerName: volcano\n" POD_REQ("1"), "")
            POD("vc-2", IN_GROUP("vc"), "  schedulerName: kbatch\n" POD_REQ("1"), ""),
        .binds = "",
        .phases = "vc=Pending",
        .message = "vc: 2 pods ask for scheduler volcano; kbatch serves kbatch (set the pods' "
                   "spec.schedulerName, or a Volcano Job's, to it)",
        .reasons = "vc=OtherScheduler",
    },
    {
        /* A pod asking 8 cpu where the largest of two nodes has 4: no
         * other pod's leaving would help. */
        .name = "a pod larger than any node can never fit",
        .manifests = NODE("n1") NODE("n2") PG("big", "1", "2024-01-01", "")
            POD("big-0", IN_GROUP("big"), "  schedulerName: kbatch\n" POD_REQ("8"), ""),
        .binds = "",
        .message = "big: can never fit: pod big-0 asks cpu 8, more than any node has (the largest "
                   "of 2: 4); 1st of 1 waiting in queue default",
        .reasons = "big=NeverFits",
    },
    {
        /* A pod of kbatch's with no group asks 6 cpu: n1 has 4.  It is a
         * job of its own; it fits nowhere and is reported as a pod, in
         * kube-scheduler's words, with no PodGroup to carry a condition. */
        .name = "a pod without a group that fits nowhere is reported",
        .manifests = NODE("n1") POD("solo", "", "  schedulerName: kbatch\n" POD_REQ("6"), ""),
        .binds = "",
        .message = "pod default/solo: 0/1 nodes are available: 1 Insufficient cpu.\n",
        .lone = true,
    },
    {
        /* The same pod in a PodGroup of its own (kbatch makes
         * podgroup-pod-solo: minMember 1, minResources its 6 cpu): the
         * group is not admitted, the cluster's 4 cpu times overcommit's 1.2
         * being 4.8; as 6 is more than the cluster's 4 it never will be:
         * NeverFits (issue 23, point 5). */
        .name = "a pod without a group gets a PodGroup that says why it waits",
        .manifests = NODE("n1") POD("solo", "", "  schedulerName: kbatch\n" POD_REQ("6"), ""),
        .binds = "",
        .message = "default/podgroup-pod-solo: can never fit: its minResources ask cpu 6, more "
                   "than the whole cluster has (1 node(s): 4); nor with overcommit's factor 1.2 "
                   "(4.8)",
        .reasons = "podgroup-pod-solo=NeverFits",
    },
    {
        /* Group big asks 4.5 cpu of a 4-cpu cluster, while held (Inqueue)
         * keeps 1 cpu: overcommit's room is 4 * 1.2 = 4.8, and 1 + 4.5 >
         * 4.8 refuses big.  Alone it would be admitted (4.5 <= 4.8, as
         * Volcano's overcommit admits it), but its pods could never all
         * be placed on 4 cpu: NeverFits, saying both. */
        .name = "never fits at admission: overcommit may admit it, not fit it",
        .manifests = NODE("n1")
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: held, creationTimestamp: '2024-01-01T00:00:00Z'}\n"
            "spec: {minMember: 1, minResources: {cpu: '1'}}\nstatus: {phase: Inqueue}\n"
            PG("big", "1", "2024-01-02", ", minResources: {cpu: 4500m}"),
        .binds = "",
        .message = "big: can never fit: its minResources ask cpu 4.5, more than the whole cluster "
                   "has (1 node(s): 4); overcommit (factor 1.2) may admit it, up to 4.8, but not "
                   "fit it",
        .reasons = "big=NeverFits",
    },
    {
        /* The same without overcommit in the conf: the cluster alone. */
        .name = "never fits at admission: without overcommit, the cluster's numbers alone",
        .conf = "actions: \"enqueue, allocate, backfill\"\n"
                "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n"
                "- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n"
                "  - name: nodeorder\n",
        .manifests = NODE("n1") PG("big", "1", "2024-01-02", ", minResources: {cpu: '5'}"),
        .binds = "",
        .message = "big: can never fit: its minResources ask cpu 5, more than the whole cluster "
                   "has (1 node(s): 4)\n",
        .reasons = "big=NeverFits",
    },
};


/* A pod of big asking 3 cpu (two of them never fit the 4-cpu node). */
#define BIG_POD(name) POD(name, IN_GROUP("big"), "  schedulerName: kbatch\n" POD_REQ("3"), "")
/* small: one 2-cpu pod, minResources cpu 2, created after big. */
#define SMALL \
        PG("small", "1", "2024-01-02", ", minResources: {cpu: '2'}") \
        POD("small-0", IN_GROUP("small"), "  schedulerName: kbatch\n" POD_REQ("2"), "")

static const struct kb_scenario inqueue[] = {
    {
        /* n1 has 4 cpu.  big was admitted 15 minutes ago and still has
         * nothing placed (its pods ask 6 cpu together); it reserves its
         * minResources, cpu 4, the whole node.  The default timeout is
         * 10m: as the session opens big goes back to Pending and its
         * reservation is freed.  Enqueue: big is in its backoff (1m);
         * small asks cpu 2: proportion 2 + 0 + 0 <= 4, overcommit (4 x 1.2
         * idle) 0 + 2 <= 4.8: admitted, and small-0 binds to n1. */
        .name = "inqueue timeout: a group that cannot become ready gives its reservation back",
        .manifests = NODE("n1")
            PG_INQ("big", "2", "2024-01-01", ", minResources: {cpu: '4'}", "", "Inqueue", "True",
                  "Admitted", "07:45:00")
            BIG_POD("big-0") BIG_POD("big-1") SMALL,
        .binds = "small-0=n1",
        .phases = "big=Pending small=Running",
        .message = "big: not ready within 10m of its admission to queue default: sent back to "
                   "Pending, its reservation freed; admitted again in 1m at the soonest",
        .reasons = "big=InqueueTimeout",
    },
    {
        /* The same, admitted 5 minutes ago: within its timeout, big keeps
         * its 4 cpu reserved; small is refused by overcommit, which votes
         * first (4 reserved + 2 > 4 x 1.2), and nothing binds.  big, whose
         * pods ask 6 cpu of a 4-cpu cluster, says it can never fit. */
        .name = "inqueue timeout: within its timeout a group keeps its reservation",
        .manifests = NODE("n1")
            PG_INQ("big", "2", "2024-01-01", ", minResources: {cpu: '4'}", "", "Inqueue", "True",
                  "Admitted", "07:55:00")
            BIG_POD("big-0") BIG_POD("big-1") SMALL,
        .binds = "",
        .phases = "big=Inqueue small=Pending",
        .reasons = "small=NotEnoughResources big=NeverFits",
    },
    {
        /* Admitted 5 minutes ago, but its annotation sets 2m: sent back. */
        .name = "inqueue timeout: a PodGroup's annotation sets its own",
        .manifests = NODE("n1")
            PG_INQ("big", "2", "2024-01-01", ", minResources: {cpu: '4'}",
                  ", annotations: {kbatch.io/inqueue-timeout: 2m}", "Inqueue", "True", "Admitted",
                  "07:55:00")
            BIG_POD("big-0") BIG_POD("big-1") SMALL,
        .binds = "small-0=n1",
        .phases = "big=Pending small=Running",
        .message = "big: not ready within 2m of its admission",
    },
    {
        /* inqueueTimeout: 0 in the conf turns the timeout off: 15 minutes
         * on, big still holds its reservation and small waits. */
        .name = "inqueue timeout: the conf can turn it off",
        .conf = "actions: \"enqueue, allocate, backfill\"\n"
                "configurations:\n- name: enqueue\n  arguments: {inqueueTimeout: '0'}\n"
                "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n"
                "- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n"
                "  - name: proportion\n  - name: nodeorder\n",
        .manifests = NODE("n1")
            PG_INQ("big", "2", "2024-01-01", ", minResources: {cpu: '4'}", "", "Inqueue", "True",
                  "Admitted", "07:45:00")
            BIG_POD("big-0") BIG_POD("big-1") SMALL,
        .binds = "",
        .phases = "big=Inqueue small=Pending",
    },
    {
        /* big was sent back 30 seconds ago: its backoff (1m) has 30s to
         * run, and enqueue leaves it Pending though the node is free. */
        .name = "inqueue timeout: a group sent back waits out its backoff",
        .manifests = NODE("n1")
            PG_INQ("big", "2", "2024-01-01", ", minResources: {cpu: '4'}", "", "Pending", "False",
                  "InqueueTimeout", "07:59:30")
            BIG_POD("big-0") BIG_POD("big-1"),
        .binds = "",
        .phases = "big=Pending",
        .message = "big: sent back to Pending by its Inqueue timeout; admitted again in 30s at the "
                   "soonest",
        .reasons = "big=InqueueTimeout",
    },
    {
        /* Sent back 2 minutes ago: the backoff is over and big is admitted
         * again (proportion 4 + 0 + 0 <= 4, overcommit 4 <= 4.8); its pods
         * still fit nowhere, so it waits Inqueue. */
        .name = "inqueue timeout: after its backoff a group is admitted again",
        .manifests = NODE("n1")
            PG_INQ("big", "2", "2024-01-01", ", minResources: {cpu: '4'}", "", "Pending", "False",
                  "InqueueTimeout", "07:58:00")
            BIG_POD("big-0") BIG_POD("big-1"),
        .binds = "",
        .phases = "big=Inqueue",
    },
};

/* clang-format on */

TABLE_TEST(why)
TABLE_TEST(inqueue)

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_why),
            cmocka_unit_test(test_inqueue),
        };
        return cmocka_run_group_tests_name("why", tests, NULL, NULL);
}
