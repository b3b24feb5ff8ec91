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

#include "manifests.h"

/* The tables are laid out by hand; clang-format would break them. */
/* clang-format off */

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
        .message = "a: can never fit: its minMember 5 task(s) ask cpu 5, more than the whole "
                   "cluster has (2 node(s): 4); 1st of 1 waiting in queue default",
        .reasons = "a=NeverFits",
    },
    {
        /* Two gangs of three 1-cpu tasks race for one 4-cpu node.  "late"
         * sorts first by name but "early" was created first, and job order
         * falls back to creation time: early takes 3 cpu; late's first task
         * takes the last cpu, its second fits nowhere, late is rolled back. */
        .name = "two gangs race for one node: the older wins whole",
        .manifests = NODE("n1")
            PG("late", "3", "2024-01-02", ", queue: default") JOB("late", "late", "3", "", REQ1, "")
            PG("early", "3", "2024-01-01", ", queue: default") JOB("early", "early", "3", "", REQ1, ""),
        .binds = "early-0=n1 early-1=n1 early-2=n1",
        .phases = "early=Running late=Inqueue",
        .message = "late: its minMember 3 pods do not all fit the free room: 0/1 nodes are available: 1 Insufficient cpu.; "
                   "1st of 1 waiting in queue default",
        .reasons = "late=NotEnoughResources",
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
    {
        /* minTaskMember {ps: 1, worker: 1} with minMember 2 (the roles sum
         * to 2 <= 2, so they are checked).  Workers carry priority 10 and
         * go first: tf-worker-0, -1, -2 take 3 cpu of n1; after the second
         * the gang has 2 >= minMember ready tasks, but no ps, so it is not
         * ready.  tf-ps-0 needs a node labelled role=ps: none.  Not ready,
         * not pipelined (the ps role has nothing even pipelined): all three
         * workers are rolled back.  unready = 2 - 0 ready = 2 of 4 tasks. */
        .name = "minTaskMember blocks a gang whose count is ready",
        .manifests = NODE("n1") PG("tf", "2", "2024-01-01", ", minTaskMember: {ps: 1, worker: 1}")
            JOB("tf-worker", "tf", "3", ", volcano.sh/task-spec: worker", REQ1,
                "      priority: 10\n")
            JOB("tf-ps", "tf", "1", ", volcano.sh/task-spec: ps", REQ1,
                "      nodeSelector: {role: ps}\n"),
        .binds = "",
        .phases = "tf=Inqueue",
        .message = "tf: minMember 2 is met, but role ps's minTaskMember 1 pod(s) do not all "
                   "fit the free room: 0/1 nodes are available: 1 node(s) didn't match Pod's node "
                   "affinity/selector.; 1st of 1 waiting in queue default",
        .reasons = "tf=NotEnoughResources",
    },
    {
        /* The same roles with room: tf-worker-0 (priority 10) to n1 (tie,
         * first name), tf-worker-1 to n2 (174 against n1's 149), then
         * tf-ps-0 to n1 (149 each, first name).  Only now is the ps role
         * met; the gang is ready and all three bind together. */
        .name = "minTaskMember satisfied binds every role",
        .manifests = NODE("n1") NODE("n2")
            PG("tf", "2", "2024-01-01", ", minTaskMember: {ps: 1, worker: 1}")
            JOB("tf-worker", "tf", "2", ", volcano.sh/task-spec: worker", REQ1,
                "      priority: 10\n")
            JOB("tf-ps", "tf", "1", ", volcano.sh/task-spec: ps", REQ1, ""),
        .binds = "tf-worker-0=n1 tf-worker-1=n2 tf-ps-0=n1",
        .phases = "tf=Running",
    },
    {
        /* A pod with no group annotation is a job of its own, minMember 1,
         * in the default queue: it binds to n1 (two empty nodes tie). */
        .name = "lone pod without a group binds",
        .manifests = NODE("n1") NODE("n2")
            POD("solo", "", "  schedulerName: kbatch\n" POD_REQ("1"), ""),
        .binds = "solo=n1",
    },
    {
        /* The pod names group x, which does not exist: its job is invalid
         * and never considered; the condition says why. */
        .name = "missing PodGroup: nothing binds, the reason is given",
        .manifests = NODE("n1")
            POD("orphan", IN_GROUP("x"), "  schedulerName: kbatch\n" POD_REQ("1"), ""),
        .binds = "",
        .message = "podgroup default/x not found",
    },
    {
        /* The same with a best-effort pod.  Pending best-effort pods count
         * as ready for the gang, but an invalid job never runs: backfill
         * skips it and the condition is still the reason, not Scheduled. */
        .name = "missing PodGroup of a best-effort pod: the reason is given",
        .manifests = NODE("n1")
            POD("orphan", IN_GROUP("x"), "  schedulerName: kbatch\n  containers: [{name: c}]\n", ""),
        .binds = "",
        .message = "podgroup default/x not found",
    },
    {
        /* A lone pod called x beside PodGroup x (minMember 3, two pods):
         * the pod is a job of its own, not a third member of the gang.  So
         * the gang stays 2 of 3 (nothing of it binds) and the pod binds
         * alone to n1.  Had it joined, the gang would be ready with three
         * and all three would bind. */
        .name = "a lone pod named like a PodGroup is not in its gang",
        .manifests = NODE("n1")
            PG("x", "3", "2024-01-01", "") JOB("x", "x", "2", "", REQ1, "")
            POD("x", "", "  schedulerName: kbatch\n" POD_REQ("1"), ""),
        .binds = "x=n1",
        .message = "default/x: Not enough valid tasks for gang-scheduling, valid: 2, min: 3",
    },
    {
        /* The same beside a missing group y and a lone pod y: the pod of
         * the missing group waits with the reason, the lone pod binds. */
        .name = "a lone pod named like a missing group is not in it",
        .manifests = NODE("n1")
            POD("y-0", IN_GROUP("y"), "  schedulerName: kbatch\n" POD_REQ("1"), "")
            POD("y", "", "  schedulerName: kbatch\n" POD_REQ("1"), ""),
        .binds = "y=n1",
        .message = "podgroup default/y not found",
    },
};

/*
 * Queues.  The proportion plugin gives each queue a deserved share by
 * weighted water-filling (banner of plugins/proportion.c); allocate skips a
 * task when allocated + request would pass deserved (allocatable).
 */
static const struct kb_scenario queues[] = {
    {
        /* One node of 12 cpu / 48Gi; queue a weight 1, b weight 2, each with
         * a job of 12 one-cpu pods (minMember 1): requests 12 cpu, 12Gi each.
         * Round 1: weight 3; a gets cpu 12*1/3 = 4, b 12*2/3 = 8; memory a
         * 48/3 = 16 capped at its request 12Gi, b 32 capped at 12Gi.
         * Neither request fits (cpu 12 > 4, > 8).  Remaining cpu 0, memory
         * 24Gi.  Round 2: nothing changes for either, both meet; done.
         * a deserves 4 cpu, b 8, and the node is exactly full.
         * Which pods: the jobs are named a-w and b-w so that pod names have
         * three parts and a pod-name index (a-w-10 is index 10).  Named
         * a-0 .. a-11, they would have none (Volcano's GetPodIndexUnderTask
         * wants at least three '-'-separated parts) and tasks would go by
         * uid, a string: a-0, a-1, a-10, a-11, a-2, ... */
        .name = "queue weights 1:2 split a node 4:8",
        .manifests = NODE_RES("n1", "12", "48Gi", "110") QUEUE("a", "weight: 1", "")
            QUEUE("b", "weight: 2", "") GANG("a-w", "1", "12", "1", ", queue: a")
            GANG("b-w", "1", "12", "1", ", queue: b"),
        .binds = "a-w-0=n1 a-w-1=n1 a-w-2=n1 a-w-3=n1 "
                 "b-w-0=n1 b-w-1=n1 b-w-2=n1 b-w-3=n1 b-w-4=n1 b-w-5=n1 b-w-6=n1 b-w-7=n1",
        .phases = "a-w=Running b-w=Running",
    },
    {
        /* Queue capped with capability cpu 2 (memory uncapped); a job of
         * four 1-cpu pods, minMember 1, on two 4-cpu nodes.  Deserved cpu =
         * min(8 * 1/1, cap 2, request 4) = 2: two tasks are allocatable.
         * c-0 to n1 (tie), c-1 to n2 (174 > 149); c-2 and c-3 are skipped. */
        .name = "queue capability caps the binds",
        .manifests = NODE("n1") NODE("n2") QUEUE("capped", "weight: 1, capability: {cpu: '2'}", "")
            GANG("c", "1", "4", "1", ", queue: capped"),
        .binds = "c-0=n1 c-1=n2",
        .phases = "c=Running",
    },
    {
        /* The group asks minResources cpu 3 of a queue capped at cpu 2:
         * overcommit (first in tier 2) permits (3 <= 4 * 1.2), proportion
         * rejects (3 + 0 allocated + 0 admitted > 2), and a reject is final:
         * the group stays Pending. */
        .name = "minResources above the queue capability stays Pending",
        .manifests = NODE("n1") QUEUE("capped", "weight: 1, capability: {cpu: '2'}", "")
            GANG("big", "1", "1", "1", ", queue: capped, minResources: {cpu: '3'}"),
        .binds = "",
        .phases = "big=Pending",
        .message = "queue resource quota insufficient",
    },
    {
        /* 8 cpu / 64Gi; queue a weight 1 with guarantee cpu 6, queue b
         * weight 3; 8 one-cpu pods each (minMember 1).  Real capability: a
         * 8 - 6 + 6 = 8, b 8 - 6 + 0 = 2.  Round 1 (weight 4): a cpu
         * 8/4 = 2, floored at its guarantee: 6; b 8*3/4 = 6, capped at 2.
         * Memory: each capped at its 8Gi request.  Remaining cpu 0; round 2
         * changes nothing.  a deserves 6, b 2 (without the guarantee the
         * weights would give a 2 and b 6). */
        .name = "queue guarantee floors the deserved share",
        .manifests = NODE_RES("n1", "8", "64Gi", "110")
            QUEUE("a", "weight: 1, guarantee: {resource: {cpu: '6'}}", "")
            QUEUE("b", "weight: 3", "") GANG("a", "1", "8", "1", ", queue: a")
            GANG("b", "1", "8", "1", ", queue: b"),
        .binds = "a-0=n1 a-1=n1 a-2=n1 a-3=n1 a-4=n1 a-5=n1 b-0=n1 b-1=n1",
        .phases = "a=Running b=Running",
    },
    {
        /* A Closed queue admits nothing: proportion's enqueueable rejects
         * and says which queue. */
        .name = "closed queue keeps its group Pending",
        .manifests = NODE("n1") QUEUE("shut", "weight: 1", "state: Closed")
            GANG("a", "1", "1", "1", ", queue: shut"),
        .binds = "",
        .phases = "a=Pending",
        .message = "queue shut is Closed",
    },
    {
        /* The group names a queue that does not exist: invalid, never
         * admitted. */
        .name = "unknown queue",
        .manifests = NODE("n1") GANG("a", "1", "1", "1", ", queue: nope"),
        .binds = "",
        .phases = "a=Pending",
        .message = "queue nope not found",
    },
};

/*
 * Ordering.  The default conf asks priority, then gang (jobs not ready
 * first), then drf (lower dominant share first); with no opinion, the
 * earlier creation, then namespace/name.
 */
#define RACE(prio_hi) \
        NODE("n1") PRIORITY_CLASS("high", "1000") PRIORITY_CLASS("low", "10") \
        PG("lo", "3", "2024-01-01", ", priorityClassName: low") \
        JOB("lo", "lo", "3", "", REQ1, "") \
        PG("hi", "3", "2024-01-02", ", priorityClassName: " prio_hi) \
        JOB("hi", "hi", "3", "", REQ1, "")
/* drf: job a (created first) already runs one 1-cpu pod on n1 and has two
 * more pending; b (created later) has three pending; minMember 3 each, so
 * neither is ready and gang has no opinion.  3 cpu are left on n1: only
 * one of them can complete. */
/* Two gangs of minMember 3, each with a pod running on n1 (a: 1 cpu, b:
 * 500m) and two 1-cpu pods waiting: both partly bound (gang ranks them
 * alike), 2.5 cpu free. */
#define DRF_CLUSTER \
        NODE("n1") PG("a", "3", "2024-01-01", "") JOB("a", "a", "2", "", REQ1, "") \
        POD("a-running", IN_GROUP("a"), "  schedulerName: kbatch\n  nodeName: n1\n" POD_REQ("1"), \
            "phase: Running") \
        PG("b", "3", "2024-01-02", "") JOB("b", "b", "2", "", REQ1, "") \
        POD("b-running", IN_GROUP("b"), "  schedulerName: kbatch\n  nodeName: n1\n" POD_REQ("500m"), \
            "phase: Running")

static const struct kb_scenario ordering[] = {
    {
        /* "hi" (priority 1000) was created a day after "lo" (10), yet goes
         * first: it takes 3 of n1's 4 cpu; lo-0 takes the last one, lo-1
         * fits nowhere and lo is rolled back. */
        .name = "higher-priority gang wins a contended node",
        .manifests = RACE("high"),
        .binds = "hi-0=n1 hi-1=n1 hi-2=n1",
        .phases = "hi=Running lo=Inqueue",
        .message = "lo: its minMember 3 pods do not all fit the free room: 0/1 nodes are available: 1 Insufficient cpu.; 1st "
                   "of 1 waiting in queue default",
        .reasons = "lo=NotEnoughResources",
    },
    {
        /* Priority's job order disabled (enableJobOrder: false): gang and
         * drf have no opinion (neither ready, neither holds anything), so
         * the older "lo" goes first and wins. */
        .name = "enableJobOrder: false silences priority",
        .conf = CONF_TIERS("    enableJobOrder: false\n", "", "", ""),
        .manifests = RACE("high"),
        .binds = "lo-0=n1 lo-1=n1 lo-2=n1",
        .phases = "lo=Running hi=Inqueue",
    },
    {
        /* One group, minMember 1, on a 2-cpu node; pods tp-t-0 (no class:
         * 0), tp-t-1 (high: 1000), tp-t-2 (low: 10).  Tasks go by priority:
         * tp-t-1, tp-t-2, then tp-t-0, which finds no room.  (By name index
         * alone tp-t-0 and tp-t-1 would have bound.) */
        .name = "task priority orders tasks within a job",
        .manifests = NODE_RES("n1", "2", "8Gi", "110") PRIORITY_CLASS("high", "1000")
            PRIORITY_CLASS("low", "10") PG("tp", "1", "2024-01-01", "")
            POD("tp-t-0", IN_GROUP("tp"), "  schedulerName: kbatch\n" POD_REQ("1"), "")
            POD("tp-t-1", IN_GROUP("tp"),
                "  schedulerName: kbatch\n  priorityClassName: high\n" POD_REQ("1"), "")
            POD("tp-t-2", IN_GROUP("tp"),
                "  schedulerName: kbatch\n  priorityClassName: low\n" POD_REQ("1"), ""),
        .binds = "tp-t-1=n1 tp-t-2=n1",
        .phases = "tp=Running",
    },
    {
        /* drf: a holds 1 cpu of 4 (share 0.25), b 500m (0.125; memory 1Gi
         * of 8 each): b goes first although a is older, its two pods take 2
         * of the 2.5 free cpu and b is ready; a's next pod fits nowhere.  a
         * keeps a running pod while this session found it unschedulable:
         * Volcano calls that phase Unknown. */
        .name = "drf puts the job holding more last",
        .manifests = DRF_CLUSTER,
        .binds = "b-0=n1 b-1=n1",
        .phases = "b=Running a=Unknown",
    },
    {
        /* drf's job order disabled with Volcano's other spelling
         * (enabledJobOrder: false): no plugin has an opinion, the older a
         * goes first, a-0 and a-1 complete it (3 with the running one);
         * b-0 finds 500m, b has nothing to bind. */
        .name = "enabledJobOrder: false silences drf",
        .conf = CONF_TIERS("", "", "    enabledJobOrder: false\n", ""),
        .manifests = DRF_CLUSTER,
        .binds = "a-0=n1 a-1=n1",
        .phases = "a=Running b=Unknown",
    },
};

/*
 * Node plugins.  With the default conf a 1-cpu/1Gi task scores 81 + 93 =
 * 174 on an empty 4-cpu/8Gi node and 62 + 87 = 149 on one already holding
 * such a task (nodeorder banner); predicates filter before any score.
 * Labels used below: n1 {zone: a, gpus: "2"}, n2 {zone: b, gpus: "8"}, n3
 * none.
 */
#define LABELLED                                                                                   \
        NODE_X("n1", ALLOC4, ", labels: {zone: a, gpus: '2'}", "", "")                             \
        NODE_X("n2", ALLOC4, ", labels: {zone: b, gpus: '8'}", "", "")                             \
        NODE_X("n3", ALLOC4, "", "", "")
#define TAINTED                                                                                    \
        NODE_X("n1", ALLOC4, "", "taints: [{key: dedicated, value: gpu, effect: NoSchedule}]", "") \
        NODE_X("n2", ALLOC4, "", "taints: [{key: other, value: x, effect: NoSchedule}]", "")
#define BINPACK_CONF                                                                               \
        CONF_TIERS("", "", "", "    arguments: {leastrequested.weight: 0, balancedresource.weight: 0}\n") \
        "  - name: binpack\n"

static const struct kb_scenario nodes[] = {
    {
        /* Two single-pod jobs (j1 before j2 by name): j1-0 to n1 (tie), j2-0
         * to n2 (174 > 149): the default conf spreads. */
        .name = "default conf spreads",
        .manifests = NODE("n1") NODE("n2") GANG("j1", "1", "1", "1", "") GANG("j2", "1", "1", "1", ""),
        .binds = "j1-0=n1 j2-0=n2",
    },
    {
        /* leastrequested and balancedresource at weight 0, binpack on:
         * j1-0 ties on empty nodes (cpu 1/4, memory 1/8: (0.25 + 0.125) / 2
         * * 100 = 18.75 each) and goes to n1; then n1 scores (2/4 + 2/8) / 2
         * * 100 = 37.5 against n2's 18.75: j2-0 packs onto n1. */
        .name = "binpack packs",
        .conf = BINPACK_CONF,
        .manifests = NODE("n1") NODE("n2") GANG("j1", "1", "1", "1", "") GANG("j2", "1", "1", "1", ""),
        .binds = "j1-0=n1 j2-0=n1",
    },
    {
        /* n1 has an untolerated NoSchedule taint: both tasks go to n2. */
        .name = "NoSchedule taint keeps untolerating pods off",
        .manifests = NODE_X("n1", ALLOC4, "",
                            "taints: [{key: dedicated, value: gpu, effect: NoSchedule}]", "")
            NODE("n2") GANG("a", "2", "2", "1", ""),
        .binds = "a-0=n2 a-1=n2",
    },
    {
        /* tol tolerates key dedicated (Exists, any value and effect): only
         * n1; both its pods go there.  plain (first by name) tolerates
         * nothing and fits no node, each for its own taint. */
        .name = "Exists toleration",
        .manifests = TAINTED GANG("plain", "1", "1", "1", "")
            JOB("tol", "tol", "2", "", REQ1, "      tolerations: [{key: dedicated, operator: Exists}]\n")
            PG("tol", "2", "2024-01-01", ""),
        .binds = "tol-0=n1 tol-1=n1",
        .message = "plain: 0/2 nodes are available: 1 node(s) had "
                   "untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {other: "
                   "x}.",
    },
    {
        /* eq tolerates dedicated=gpu:NoSchedule exactly: n1.  wrong
         * tolerates dedicated=cpu: an Equal toleration needs the value,
         * so it fits nowhere. */
        .name = "Equal toleration needs the value",
        .manifests = TAINTED
            PG("eq", "1", "2024-01-01", "")
            JOB("eq", "eq", "1", "", REQ1,
                "      tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]\n")
            PG("wrong", "1", "2024-01-01", "")
            JOB("wrong", "wrong", "1", "", REQ1,
                "      tolerations: [{key: dedicated, operator: Equal, value: cpu}]\n"),
        .binds = "eq-0=n1",
        .message = "wrong: 0/2 nodes are available: 1 node(s) had "
                   "untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {other: "
                   "x}.",
    },
    {
        /* PreferNoSchedule does not filter: the only node takes the pod. */
        .name = "PreferNoSchedule taint is not a filter",
        .manifests = NODE_X("n1", ALLOC4, "", "taints: [{key: soft, value: x, effect: PreferNoSchedule}]", "")
            GANG("a", "1", "1", "1", ""),
        .binds = "a-0=n1",
    },
    {
        /* a (no affinity; created at time 0, so before x) spreads: a-0 to
         * n1 (three-way tie), a-1 to n2 (174, ahead of n3 by name, over
         * n1's 149).  x needs zone In [b]: only n2, loaded or not. */
        .name = "node affinity In",
        .manifests = LABELLED GANG("a", "2", "2", "1", "")
            PG("x", "2", "2024-01-01", "")
            JOB("x", "x", "2", "", REQ1, AFFINITY(TERM("{key: zone, operator: In, values: [b]}"))),
        .binds = "x-0=n2 x-1=n2 a-0=n1 a-1=n2",
        .phases = "x=Running a=Running",
    },
    {
        /* zone NotIn [a]: n2 and n3 (no label passes NotIn).  x-0 to n2
         * (tie with n3, first name), x-1 to n3 (174 > 149). */
        .name = "node affinity NotIn",
        .manifests = LABELLED PG("x", "2", "2024-01-01", "")
            JOB("x", "x", "2", "", REQ1, AFFINITY(TERM("{key: zone, operator: NotIn, values: [a]}"))),
        .binds = "x-0=n2 x-1=n3",
    },
    {
        /* zone Exists: n1 and n2; x-0 to n1 (tie), x-1 to n2. */
        .name = "node affinity Exists",
        .manifests = LABELLED PG("x", "2", "2024-01-01", "")
            JOB("x", "x", "2", "", REQ1, AFFINITY(TERM("{key: zone, operator: Exists}"))),
        .binds = "x-0=n1 x-1=n2",
    },
    {
        /* gpus Gt 4: n2 (8); gpus Lt 4: n1 (2); n3 has no label, which
         * fails both. */
        .name = "node affinity Gt and Lt",
        .manifests = LABELLED PG("gt", "1", "2024-01-01", "")
            JOB("gt", "gt", "1", "", REQ1, AFFINITY(TERM("{key: gpus, operator: Gt, values: ['4']}")))
            PG("lt", "1", "2024-01-01", "")
            JOB("lt", "lt", "1", "", REQ1, AFFINITY(TERM("{key: gpus, operator: Lt, values: ['4']}"))),
        .binds = "gt-0=n2 lt-0=n1",
    },
    {
        /* Two terms ORed: zone In [a] (n1) or gpus Gt 4 (n2); n3 matches
         * neither.  x-0 to n1 (tie), x-1 to n2 (174 > 149), x-2 to n1 (149
         * each, first name). */
        .name = "node affinity terms are ORed",
        .manifests = LABELLED PG("x", "3", "2024-01-01", "")
            JOB("x", "x", "3", "", REQ1,
                AFFINITY(TERM("{key: zone, operator: In, values: [a]}")
                         TERM("{key: gpus, operator: Gt, values: ['4']}"))),
        .binds = "x-0=n1 x-1=n2 x-2=n1",
    },
    {
        /* nodeSelector zone: a: only n1. */
        .name = "nodeSelector",
        .manifests = LABELLED PG("x", "2", "2024-01-01", "")
            JOB("x", "x", "2", "", REQ1, "      nodeSelector: {zone: a}\n"),
        .binds = "x-0=n1 x-1=n1",
    },
    {
        /* n1 is cordoned (spec.unschedulable): both tasks go to n2. */
        .name = "cordoned node is skipped",
        .manifests = NODE_X("n1", ALLOC4, "", "unschedulable: true", "") NODE("n2")
            GANG("a", "2", "2", "1", ""),
        .binds = "a-0=n2 a-1=n2",
    },
    {
        /* n1 reports Ready False: both tasks go to n2. */
        .name = "NotReady node is skipped",
        .manifests = NODE_X("n1", ALLOC4, "", "", ", conditions: [{type: Ready, status: 'False'}]")
            NODE("n2") GANG("a", "2", "2", "1", ""),
        .binds = "a-0=n2 a-1=n2",
    },
    {
        /* Only a cordoned and a NotReady node: no place, and the message
         * counts each reason (sorted as strings). */
        .name = "cordoned and NotReady nodes explain themselves",
        .manifests = NODE_X("n1", ALLOC4, "", "unschedulable: true", "")
            NODE_X("n2", ALLOC4, "", "", ", conditions: [{type: Ready, status: 'False'}]")
            GANG("a", "1", "1", "1", ""),
        .binds = "",
        .message = "a: 0/2 nodes are available: 1 node(s) were not ready, "
                   "1 node(s) were unschedulable.; 1st of 1 waiting in queue default",
        .reasons = "a=NotEnoughResources",
    },
    {
        /* A node for 2 pods and a gang of 3: a-0 and a-1 fit, a-2 finds the
         * pod slots gone; the gang is rolled back. */
        .name = "pods-per-node limit",
        .manifests = NODE_RES("n1", "4", "8Gi", "2") GANG("a", "3", "3", "1", ""),
        .binds = "",
        .message = "a: can never fit: its minMember 3 task(s) need 3 pod slot(s), the whole "
                   "cluster has 2 (1 node(s))",
        .reasons = "a=NeverFits",
    },
    {
        /* Pods asking nvidia.com/gpu 2 each: n1 has no GPU, n2 has 4.
         * g-0 and g-1 go to n2; g-2 fits nowhere, but minMember 2 is met. */
        .name = "scalar resource nvidia.com/gpu",
        .manifests = NODE("n1") NODE_X("n2", ALLOC4 ", nvidia.com/gpu: '4'", "", "", "")
            PG("g", "2", "2024-01-01", "")
            JOB("g", "g", "3", "", "{cpu: '1', memory: 1Gi, nvidia.com/gpu: '2'}", ""),
        .binds = "g-0=n2 g-1=n2",
        .phases = "g=Running",
    },
    {
        /* status.nominatedNodeName n2 is feasible: taken first, although
         * n1 wins the tie otherwise. */
        .name = "nominated node is taken first",
        .manifests = NODE("n1") NODE("n2") PG("nom", "1", "2024-01-01", "")
            POD("nom-p-0", IN_GROUP("nom"), "  schedulerName: kbatch\n" POD_REQ("1"),
                "nominatedNodeName: n2"),
        .binds = "nom-p-0=n2",
    },
    {
        /* The nominated node is cordoned: ignored, the usual choice (n1). */
        .name = "infeasible nominated node is ignored",
        .manifests = NODE("n1") NODE_X("n2", ALLOC4, "", "unschedulable: true", "")
            PG("nom", "1", "2024-01-01", "")
            POD("nom-p-0", IN_GROUP("nom"), "  schedulerName: kbatch\n" POD_REQ("1"),
                "nominatedNodeName: n2"),
        .binds = "nom-p-0=n1",
    },
};

/* Best-effort pods: no requests; allocate leaves them to backfill. */
#define BE_JOB(name, group, n)                                                                     \
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: " name "}\n"                      \
        "spec:\n  parallelism: " n "\n  template:\n"                                               \
        "    metadata: {annotations: {scheduling.k8s.io/group-name: " group "}}\n"                \
        "    spec:\n      schedulerName: kbatch\n      containers: [{name: c}]\n"

static const struct kb_scenario backfill[] = {
    {
        /* Two best-effort pods: backfill scores them like any task; they
         * request nothing, so both empty nodes score 100 + 100 and n1 wins
         * the tie; n1 still has no cpu or memory requested after be-0, so
         * be-1 ties the same way. */
        .name = "best-effort pods are placed by backfill",
        .manifests = NODE("n1") NODE("n2") PG("be", "2", "2024-01-01", "") BE_JOB("be", "be", "2"),
        .binds = "be-0=n1 be-1=n1",
        .phases = "be=Running",
    },
    {
        /* The same without backfill in the conf: allocate never takes a
         * best-effort task, so nothing binds.  The group was admitted. */
        .name = "best-effort pods wait without backfill",
        .conf = "actions: \"enqueue, allocate\"\n"
                "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n"
                "- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n"
                "  - name: nodeorder\n",
        .manifests = NODE("n1") NODE("n2") PG("be", "2", "2024-01-01", "") BE_JOB("be", "be", "2"),
        .binds = "",
        .phases = "be=Inqueue",
    },
    {
        /* A node for 2 pods, 3 best-effort pods in a group of minMember 1:
         * be-0 and be-1 take the slots, be-2 finds "Too many pods".  The
         * gang counts pending best-effort pods as ready (Volcano's
         * ReadyTaskNum), so the two commit. */
        .name = "pods-per-node limit stops best-effort pods",
        .manifests = NODE_RES("n1", "4", "8Gi", "2") PG("be", "1", "2024-01-01", "")
            BE_JOB("be", "be", "3"),
        .binds = "be-0=n1 be-1=n1",
        .phases = "be=Running",
    },
};

/*
 * Enqueue.  overcommit admits a group with minResources while they fit the
 * cluster's allocatable * overcommit-factor (1.2 by default) less what is
 * used and already admitted.
 */
#define OVERCOMMIT_GROUP                                                                           \
        NODE("n1") PG("oc", "2", "2024-01-01", ", minResources: {cpu: '6'}")                       \
        JOB("oc", "oc", "2", "", REQ1, "")

static const struct kb_scenario enqueue[] = {
    {
        /* 4 cpu * 1.2 = 4.8 < 6: overcommit rejects, the group stays
         * Pending and nothing binds. */
        .name = "overcommit keeps a group too big for the cluster Pending",
        .manifests = OVERCOMMIT_GROUP,
        .binds = "",
        .phases = "oc=Pending",
        .message = "overused",
    },
    {
        /* overcommit-factor 2.0: 4 * 2 = 8 >= 6, overcommit permits.  But
         * proportion then compares minResources with the queue's real
         * capability, which without a capability is the cluster less other
         * queues' guarantees: 6 > 4, rejected.  Volcano's proportion does
         * the same (realCapability is never nil there), so no factor admits
         * a group larger than the cluster while proportion is on. */
        .name = "overcommit-factor 2.0 still meets proportion's real capability",
        .conf = CONF_TIERS("", "    arguments: {overcommit-factor: 2.0}\n", "", ""),
        .manifests = OVERCOMMIT_GROUP,
        .binds = "",
        .phases = "oc=Pending",
        .message = "queue resource quota insufficient: queue default: insufficient cpu: the "
                   "group needs 6, the queue has 0 allocated, 0 reserved for admitted groups, 0 "
                   "elastic, capability 4",
    },
    {
        /* The same factor with proportion left out of the conf: overcommit
         * alone decides, 6 <= 8, the group is admitted and its two 1-cpu
         * pods fit n1. */
        .name = "overcommit-factor 2.0 admits it",
        .conf = "actions: \"enqueue, allocate, backfill\"\n"
                "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n"
                "- plugins:\n  - name: overcommit\n    arguments: {overcommit-factor: 2.0}\n"
                "  - name: drf\n  - name: predicates\n  - name: nodeorder\n",
        .manifests = OVERCOMMIT_GROUP,
        .binds = "oc-0=n1 oc-1=n1",
        .phases = "oc=Running",
    },
    {
        /* overcommit counts what is used, by any scheduler: a
         * default-scheduler pod holds 3 of n1's 4 cpu.  A group with
         * minResources cpu 2 (two 500m pods): 4 * 1.2 - 3 = 1.8 < 2,
         * rejected; proportion would have permitted (2 <= 4, the queue
         * holds nothing). */
        .name = "overcommit subtracts used resources",
        .manifests = NODE("n1")
            POD("web", "", "  schedulerName: default-scheduler\n  nodeName: n1\n" POD_REQ("3"),
                "phase: Running")
            PG("oc", "2", "2024-01-01", ", minResources: {cpu: '2'}")
            JOB("oc", "oc", "2", "", "{cpu: 500m, memory: 1Gi}", ""),
        .binds = "",
        .phases = "oc=Pending",
        .message = "resource in cluster is overused: not enough cpu",
    },
    {
        /* The same at factor 2.0: 8 - 3 = 5 >= 2, and proportion permits
         * (2 <= 4): admitted.  The queue deserves its request, 1 cpu, and
         * both 500m pods fit the free cpu of n1. */
        .name = "overcommit-factor 2.0 makes room over used resources",
        .conf = CONF_TIERS("", "    arguments: {overcommit-factor: 2.0}\n", "", ""),
        .manifests = NODE("n1")
            POD("web", "", "  schedulerName: default-scheduler\n  nodeName: n1\n" POD_REQ("3"),
                "phase: Running")
            PG("oc", "2", "2024-01-01", ", minResources: {cpu: '2'}")
            JOB("oc", "oc", "2", "", "{cpu: 500m, memory: 1Gi}", ""),
        .binds = "oc-0=n1 oc-1=n1",
        .phases = "oc=Running",
    },
    {
        /* Without enqueue in the conf a Pending group is allocated as if
         * admitted (Volcano's allocate skips Pending jobs only when enqueue
         * is configured). */
        .name = "no enqueue action: Pending groups are allocated",
        .conf = "actions: \"allocate, backfill\"\n"
                "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n"
                "- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n"
                "  - name: proportion\n  - name: nodeorder\n",
        .manifests = OVERCOMMIT_GROUP,
        .binds = "oc-0=n1 oc-1=n1",
        .phases = "oc=Running",
    },
};

/*
 * State and accounting: what takes room on a node besides our binds.
 */
#define OTHER_POD(name, node, phase, cpu)                                                          \
        POD(name, "", "  schedulerName: default-scheduler\n  nodeName: " node "\n" POD_REQ(cpu),  \
            "phase: " phase)

static const struct kb_scenario accounting[] = {
    {
        /* A default-scheduler pod runs on n1 with all 4 cpu: every task of
         * the gang goes to n2 (without it: n1, n2, n1). */
        .name = "another scheduler's running pod takes its node's room",
        .manifests = NODE("n1") NODE("n2") OTHER_POD("web", "n1", "Running", "4")
            GANG("a", "3", "3", "1", ""),
        .binds = "a-0=n2 a-1=n2 a-2=n2",
    },
    {
        /* The same pod Succeeded holds nothing: the usual n1, n2, n1. */
        .name = "a Succeeded pod takes no room",
        .manifests = NODE("n1") NODE("n2") OTHER_POD("web", "n1", "Succeeded", "4")
            GANG("a", "3", "3", "1", ""),
        .binds = "a-0=n1 a-1=n2 a-2=n1",
    },
    {
        /* A pending pod of another scheduler is not ours to bind. */
        .name = "another scheduler's pending pod is never bound",
        .manifests = NODE("n1") POD("web", "", "  schedulerName: default-scheduler\n" POD_REQ("1"), "")
            GANG("a", "1", "1", "1", ""),
        .binds = "a-0=n1",
    },
    {
        /* A Running pod with a deletionTimestamp is Releasing: its 4 cpu
         * are not idle, only future-idle.  a-0 fits future idle (0 + 4 - 0)
         * but not idle (0), so it is pipelined: the gang is not ready
         * (0 < 1) but pipelined, so the statement is kept, nothing binds,
         * and the group stays Inqueue.  The kept pipeline nominates a-0 to n1. */
        .name = "a Releasing pod's room is future idle: pipelined, not bound",
        .manifests = NODE("n1")
            POD("old", ", deletionTimestamp: '2024-01-01T00:00:00Z'",
                "  schedulerName: default-scheduler\n  nodeName: n1\n" POD_REQ("4"), "phase: Running")
            GANG("a", "1", "1", "1", ""),
        .binds = "",
        .phases = "a=Inqueue",
        .message = "a: pod group is not ready, 1 Pipelined; 1 pipelined task(s) wait for room "
                   "that terminating pods free; 1st of 1 waiting in queue default",
        .reasons = "a=WaitingForTermination",
        .nominated = "a-0=n1",
    },
    {
        /* The same Releasing pod, but a gang of two 4-cpu tasks: a-0 is
         * pipelined on n1's future idle, a-1 fits nowhere; the gang is
         * neither ready nor pipelined (1 < 2), the statement is discarded,
         * and with it the pipeline: nothing is nominated. */
        .name = "a discarded pipeline nominates nothing",
        .manifests = NODE("n1")
            POD("old", ", deletionTimestamp: '2024-01-01T00:00:00Z'",
                "  schedulerName: default-scheduler\n  nodeName: n1\n" POD_REQ("4"), "phase: Running")
            GANG("a", "2", "2", "4", ""),
        .binds = "",
        .nominated = "",
    },
    {
        /* Each pod: containers 1 cpu, an init container 3 cpu, overhead
         * 500m: max(1, 3) + 0.5 = 3.5 cpu.  Two fit a 7-cpu node exactly. */
        .name = "init containers and overhead count: exact fit",
        .manifests = NODE_RES("n1", "7", "8Gi", "110") PG("i", "2", "2024-01-01", "")
            JOB("i", "i", "2", "", REQ1,
                "      initContainers: [{name: init, resources: {requests: {cpu: '3'}}}]\n"
                "      overhead: {cpu: 500m}\n"),
        .binds = "i-0=n1 i-1=n1",
        .phases = "i=Running",
    },
    {
        /* The same on 6900m: 3.5 + 3.5 = 7 > 6.9, the second fits nowhere
         * (with requests of 1 cpu, or 3, or 3.45, both would fit). */
        .name = "init containers and overhead count: no fit",
        .manifests = NODE_RES("n1", "6900m", "8Gi", "110") PG("i", "2", "2024-01-01", "")
            JOB("i", "i", "2", "", REQ1,
                "      initContainers: [{name: init, resources: {requests: {cpu: '3'}}}]\n"
                "      overhead: {cpu: 500m}\n"),
        .binds = "",
        .message = "i: can never fit: its minMember 2 task(s) ask cpu 7, more than the whole "
                   "cluster has (1 node(s): 6.9)",
        .reasons = "i=NeverFits",
    },
};

/*
 * Several sessions: between them bound pods run on their nodes and
 * PodGroups take the session's phase.
 */
static const struct kb_scenario sessions[] = {
    {
        /* Session 1 binds the gang (n1, n2, n1); in session 2 its pods run
         * there, nothing is pending, nothing more binds, and the group is
         * Running. */
        .name = "a bound gang runs and stays put",
        .manifests = NODE("n1") NODE("n2") GANG("a", "3", "3", "1", ""),
        .sessions = 2,
        .binds = "a-0=n1 a-1=n2 a-2=n1",
        .phases = "a=Running",
    },
    {
        /* Five 1-cpu tasks on two 2-cpu nodes cannot fit in session 1 nor,
         * with nothing changed, in session 2. */
        .name = "a gang that cannot fit still cannot",
        .manifests = NODE_RES("n1", "2", "8Gi", "110") NODE_RES("n2", "2", "8Gi", "110")
            GANG("a", "5", "5", "1", ""),
        .sessions = 2,
        .binds = "",
        .phases = "a=Inqueue",
        .message = "a: can never fit: its minMember 5 task(s) ask cpu 5, more than the whole "
                   "cluster has (2 node(s): 4); 1st of 1 waiting in queue default",
        .reasons = "a=NeverFits",
    },
    {
        /* Session 1: "first" (older) fills n1 with three tasks, "second"
         * (3 tasks, minMember 3) finds 1 cpu and is rolled back.  Session 2:
         * first's pods run and hold 3 cpu; second still finds 1 cpu: no
         * more binds. */
        .name = "a waiting gang keeps waiting behind a running one",
        .manifests = NODE("n1") PG("first", "3", "2024-01-01", "") JOB("first", "first", "3", "", REQ1, "")
            PG("second", "3", "2024-01-02", "") JOB("second", "second", "3", "", REQ1, ""),
        .sessions = 2,
        .binds = "first-0=n1 first-1=n1 first-2=n1",
        .phases = "first=Running second=Inqueue",
    },
};

/* clang-format on */

TABLE_TEST(basics)
TABLE_TEST(queues)
TABLE_TEST(ordering)
TABLE_TEST(nodes)
TABLE_TEST(backfill)
TABLE_TEST(enqueue)
TABLE_TEST(accounting)
TABLE_TEST(sessions)

/* The tables hold at least 40 scenarios; a shrinking suite should be a
 * decision, not an accident. */
static void test_count(void **state)
{
        (void)state;
        size_t n = KB_ARRAY_SIZE(basics) + KB_ARRAY_SIZE(queues) + KB_ARRAY_SIZE(ordering) +
                   KB_ARRAY_SIZE(nodes) + KB_ARRAY_SIZE(backfill) + KB_ARRAY_SIZE(enqueue) +
                   KB_ARRAY_SIZE(accounting) + KB_ARRAY_SIZE(sessions);
        print_message("[ SCENARIOS ] %zu\n", n);
        assert_true(n >= 40);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_basics),     cmocka_unit_test(test_queues),
            cmocka_unit_test(test_ordering),   cmocka_unit_test(test_nodes),
            cmocka_unit_test(test_backfill),   cmocka_unit_test(test_enqueue),
            cmocka_unit_test(test_accounting), cmocka_unit_test(test_sessions),
            cmocka_unit_test(test_count),
        };
        return cmocka_run_group_tests_name("scenarios", tests, NULL, NULL);
}
