/*
 * Scenario tests for the actions and plugins: a cluster in, the binds out.
 * Every expected bind below is worked out by hand in the comment above it,
 * from the rules in the action and plugin banners.  Each scenario also runs
 * as a full scan of every node (see kb_run_scenario), so the node-selection
 * caches are checked against the plain algorithm on every case.
 *
 * With the default conf, nodes are scored by leastrequested + balancedresource
 * (nodeorder); on identical empty nodes the tie goes to the first name, and a
 * node that just took a task scores lower, so tasks spread: n1, n2, n1, ...
 */
#include "testutil.h"

/* Nodes: 4 cpu / 8Gi / 110 pods unless a scenario says otherwise. */
#define NODE(name) \
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n" \
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
#define NODE_RES(name, cpu, mem, pods) \
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n" \
        "status: {allocatable: {cpu: '" cpu "', memory: " mem ", pods: '" pods "'}}\n"
/* A PodGroup and a batch/v1 Job of n pods (name-0 .. name-(n-1)) joining it. */
#define GANG(name, min, n, cpu, extra_pg) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
        "metadata: {name: " name "}\nspec: {minMember: " min extra_pg "}\n" \
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: " name "}\n" \
        "spec:\n  parallelism: " n "\n  template:\n" \
        "    metadata: {annotations: {scheduling.k8s.io/group-name: " name "}}\n" \
        "    spec:\n      schedulerName: kbatch\n" \
        "      containers: [{name: c, resources: {requests: {cpu: '" cpu "', memory: 1Gi}}}]\n"

static const struct kb_scenario basics[] = {
    {
        /* Three 1-cpu tasks, two empty 4-cpu nodes: a-0 takes n1 (tie, first
         * name); n1 then scores lower (least 62 + balanced 87 vs n2's 81 +
         * 93), so a-1 takes n2; then both hold one task, a tie: a-2 to n1.
         * All three are ready together (minMember 3) and leave together. */
        .name = "gang with room binds all",
        .manifests = NODE("n1") NODE("n2") GANG("a", "3", "3", "1", ""),
        .binds = "a-0=n1 a-1=n2 a-2=n1",
        .phases = "a=Running",
    },
    {
        /* Five 1-cpu tasks, 2 cpu per node: four fit (n1, n2, n1, n2), the
         * fifth fits nowhere, so the gang is not ready (4 < 5) nor
         * pipelined: every assumption is rolled back and nothing binds.  The
         * group was admitted (no minResources), so it stays Inqueue. */
        .name = "gang without room binds nothing",
        .manifests = NODE_RES("n1", "2", "8Gi", "110") NODE_RES("n2", "2", "8Gi", "110")
            GANG("a", "5", "5", "1", ""),
        .binds = "",
        .phases = "a=Inqueue",
        .message = "5/5 tasks in gang unschedulable: 0/2 nodes are available: 2 Insufficient cpu.",
    },
    {
        /* Two gangs of three 1-cpu tasks race for one 4-cpu node.  "late"
         * sorts first by name but "early" was created first, and job order
         * falls back to creation time: early takes 3 cpu; late's first task
         * takes the last cpu, its second fits nowhere, late is rolled back. */
        .name = "two gangs race for one node: the older wins whole",
        .manifests = NODE("n1")
            GANG("late", "3", "3", "1", ", queue: default}\nmetadata: {name: late, creationTimestamp: '2024-01-02T00:00:00Z'")
            GANG("early", "3", "3", "1", ", queue: default}\nmetadata: {name: early, creationTimestamp: '2024-01-01T00:00:00Z'"),
        .binds = "early-0=n1 early-1=n1 early-2=n1",
        .phases = "early=Running late=Inqueue",
        .message = "late: 3/3 tasks in gang unschedulable: 0/1 nodes are available: 1 Insufficient cpu.",
    },
    {
        /* minMember 2 of 5 replicas on a 4-cpu node: the job is ready after
         * two tasks, commits them, and goes on a task per turn while there
         * is room: four bind, the fifth does not fit; the job is Running. */
        .name = "minMember below the replica count binds what fits",
        .manifests = NODE("n1") GANG("a", "2", "5", "1", ""),
        .binds = "a-0=n1 a-1=n1 a-2=n1 a-3=n1",
        .phases = "a=Running",
    },
    {
        /* Three pods, 2 cpu each, one 4-cpu node: minMember 2 binds two;
         * the third waits without undoing the gang. */
        .name = "gang of two out of three",
        .manifests = NODE("n1") GANG("a", "2", "3", "2", ""),
        .binds = "a-0=n1 a-1=n1",
        .phases = "a=Running",
    },
};

static void test_basics(void **state)
{
        (void)state;
        kb_run_scenarios(basics, KB_ARRAY_SIZE(basics));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_basics),
        };
        return cmocka_run_group_tests_name("scenarios", tests, NULL, NULL);
}
