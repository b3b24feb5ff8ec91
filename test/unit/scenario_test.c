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
#include <string.h>

#include "testutil.h"

#include "framework/framework.h"
#include "manifests.h"
#include "sim/sim.h"

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
        /* Volcano master's allocate_test.go, "prepredicate failed and tasks
         * are not used up, continue on until min member meet": the role is
         * in the label volcano.sh/task-spec only (Volcano's job controller
         * writes both; getTaskRole in pkg/scheduler/api/job_info.go reads
         * the annotation, then the label).  minMember 2, minTaskMember
         * {master: 1, worker: 1}; n1 (1 cpu, nodeRole master), n2 (1 cpu,
         * worker).  No pod name has an index, no uid: task order by name.
         * p0 (master) to n1; p1 (master) fits nowhere (n1 full, n2 the
         * wrong role); p2 (worker) to n2: two ready, one of each role, the
         * gang is ready and binds; p3 finds no room.  Read from the
         * annotation alone, no pod has a role and the gang is refused
         * ("Not enough valid pods of each task"). */
        .name = "the task role from the label volcano.sh/task-spec",
        .manifests =
            NODE_X("n1", "cpu: '1', memory: 2Gi, pods: '10'", ", labels: {nodeRole: master}", "", "")
            NODE_X("n2", "cpu: '1', memory: 2Gi, pods: '10'", ", labels: {nodeRole: worker}", "", "")
            PG("pg1", "2", "2024-01-01", ", minTaskMember: {master: 1, worker: 1}")
            POD("p0", ", labels: {volcano.sh/task-spec: master}" IN_GROUP("pg1"),
                "  schedulerName: kbatch\n  nodeSelector: {nodeRole: master}\n" POD_REQ("1"), "")
            POD("p1", ", labels: {volcano.sh/task-spec: master}" IN_GROUP("pg1"),
                "  schedulerName: kbatch\n  nodeSelector: {nodeRole: master}\n" POD_REQ("1"), "")
            POD("p2", ", labels: {volcano.sh/task-spec: worker}" IN_GROUP("pg1"),
                "  schedulerName: kbatch\n  nodeSelector: {nodeRole: worker}\n" POD_REQ("1"), "")
            POD("p3", ", labels: {volcano.sh/task-spec: worker}" IN_GROUP("pg1"),
                "  schedulerName: kbatch\n  nodeSelector: {nodeRole: worker}\n" POD_REQ("1"), ""),
        .binds = "p0=n1 p2=n2",
        .phases = "pg1=Running",
    },
    {
        /* allocate_test.go, "master's min member can not be allocated,
         * break from allocating": the same pods (roles in labels), but
         * minTaskMember {master: 2, worker: 0} and n2 with 2 cpu.  p0 to
         * n1; p1 (master) fits nowhere; p2 and p3 to n2: three
         * placed, above minMember 2, but master has 1 of its 2: not ready,
         * not pipelined, everything is rolled back. */
        .name = "the task role from the label: a role short of its minimum binds nothing",
        .manifests =
            NODE_X("n1", "cpu: '1', memory: 2Gi, pods: '10'", ", labels: {nodeRole: master}", "", "")
            NODE_X("n2", "cpu: '2', memory: 2Gi, pods: '10'", ", labels: {nodeRole: worker}", "", "")
            PG("pg1", "2", "2024-01-01", ", minTaskMember: {master: 2, worker: 0}")
            POD("p0", ", labels: {volcano.sh/task-spec: master}" IN_GROUP("pg1"),
                "  schedulerName: kbatch\n  nodeSelector: {nodeRole: master}\n" POD_REQ("1"), "")
            POD("p1", ", labels: {volcano.sh/task-spec: master}" IN_GROUP("pg1"),
                "  schedulerName: kbatch\n  nodeSelector: {nodeRole: master}\n" POD_REQ("1"), "")
            POD("p2", ", labels: {volcano.sh/task-spec: worker}" IN_GROUP("pg1"),
                "  schedulerName: kbatch\n  nodeSelector: {nodeRole: worker}\n" POD_REQ("1"), "")
            POD("p3", ", labels: {volcano.sh/task-spec: worker}" IN_GROUP("pg1"),
                "  schedulerName: kbatch\n  nodeSelector: {nodeRole: worker}\n" POD_REQ("1"), ""),
        .binds = "",
        .phases = "pg1=Inqueue",
    },
    {
        /* The annotation wins over the label: p0's annotation says worker
         * (its label master), so the gang has two workers and no master
         * and is refused, as Volcano's getTaskRole decides. */
        .name = "the task role: the annotation before the label",
        .manifests = NODE("n1")
            PG("pg1", "2", "2024-01-01", ", minTaskMember: {master: 1, worker: 1}")
            POD("p0", ", labels: {volcano.sh/task-spec: master}, annotations: "
                "{scheduling.k8s.io/group-name: pg1, volcano.sh/task-spec: worker}",
                "  schedulerName: kbatch\n" POD_REQ("1"), "")
            POD("p1", ", labels: {volcano.sh/task-spec: worker}" IN_GROUP("pg1"),
                "  schedulerName: kbatch\n" POD_REQ("1"), ""),
        .binds = "",
        .message = "Not enough valid pods of each task",
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
         * the group stays Pending.  Its minResources exceed the capability
         * itself, so it can never be admitted: NeverFits, with the
         * numbers (issue 23, points 2 and 5). */
        .name = "minResources above the queue capability stays Pending",
        .manifests = NODE("n1") QUEUE("capped", "weight: 1, capability: {cpu: '2'}", "")
            GANG("big", "1", "1", "1", ", queue: capped, minResources: {cpu: '3'}"),
        .binds = "",
        .phases = "big=Pending",
        .message = "queue capped can never hold the gang: its minResources ask cpu 3, the "
                   "queue's capability is 2",
        .reasons = "big=NeverFits",
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
         * Pending and nothing binds.  6 is more than the cluster's 4
         * without overcommit: it can never be admitted (issue 23, point 5). */
        .name = "overcommit keeps a group too big for the cluster Pending",
        .manifests = OVERCOMMIT_GROUP,
        .binds = "",
        .phases = "oc=Pending",
        .message = "can never fit: its minResources ask cpu 6, more than the whole cluster has "
                   "(1 node(s): 4)",
        .reasons = "oc=NeverFits",
    },
    {
        /* overcommit-factor 2.0: 4 * 2 = 8 >= 6, overcommit permits.  But
         * proportion then compares minResources with the queue's real
         * capability, which without a capability is the cluster less other
         * queues' guarantees: 6 > 4, rejected.  Volcano's proportion does
         * the same (realCapability is never nil there), so no factor admits
         * a group larger than the cluster while proportion is on: it is
         * told NeverFits (issue 23, point 5). */
        .name = "overcommit-factor 2.0 still meets proportion's real capability",
        .conf = CONF_TIERS("", "    arguments: {overcommit-factor: 2.0}\n", "", ""),
        .manifests = OVERCOMMIT_GROUP,
        .binds = "",
        .phases = "oc=Pending",
        .message = "can never fit: its minResources ask cpu 6, more than the whole cluster has "
                   "(1 node(s): 4)",
        .reasons = "oc=NeverFits",
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


/*
 * The sla plugin (Volcano's plugins/sla): a job's waiting time is its
 * PodGroup's annotation volcano.sh/sla-waiting-time, else sla-waiting-time,
 * else the plugin's argument.  Jobs with one go first, by deadline
 * (creation + waiting time); a job past its deadline is permitted at
 * enqueue.  The scenarios' clock reads 2027-01-15T08:00:00Z (testutil.c).
 */
#define SLA_CONF(args) \
        "actions: \"enqueue, allocate, backfill\"\n" \
        "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: sla\n" args \
        "- plugins:\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n"
/* A PodGroup created at ts, with metadata extra (", annotations: {...}"),
 * spec extra and a status body. */
#define PG_AT(name, min, ts, meta_extra, extra_spec, status) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
        "metadata: {name: " name ", creationTimestamp: '2027-01-15T" ts ":00Z'" meta_extra "}\n" \
        "spec: {minMember: " min extra_spec "}\nstatus: {" status "}\n"

static const struct kb_scenario sla[] = {
    {
        /* Global waiting time 5m; queue q capped at 4 cpu; n1 has 8.  r
         * (Inqueue, minResources cpu 3, its pods fit no node) reserves 3.
         * g (created 07:50, deadline 07:55: passed) asks minResources cpu
         * 2: proportion would reject it (2 + 3 reserved > 4), but sla, in
         * the first tier, permits it and the second tier is not asked; its
         * 2 join the reservations.  h (07:59, deadline 08:04) is left to
         * proportion: 1 + 5 > 4, rejected.  Allocate: q deserves 4 (its
         * request 6 capped at 4); r goes first (deadline 07:05) and fits
         * nowhere; g-0 and g-1 fit q's share and n1: g binds.  Without
         * sla, g would be rejected and h admitted (1 + 3 <= 4) and bound. */
        .name = "sla: a job past its waiting time is admitted whatever its queue's room",
        .conf = SLA_CONF("    arguments: {sla-waiting-time: 5m}\n"),
        .manifests = NODE_RES("n1", "8", "32Gi", "110")
            QUEUE("q", "weight: 1, capability: {cpu: '4'}", "")
            PG_AT("r", "3", "07:00", "", ", queue: q, minResources: {cpu: '3'}", "phase: Inqueue")
            JOB("r", "r", "3", "", REQ1, "      nodeSelector: {disk: ssd}\n")
            PG_AT("g", "2", "07:50", "", ", queue: q, minResources: {cpu: '2'}", "")
            JOB("g", "g", "2", "", REQ1, "")
            PG_AT("h", "1", "07:59", "", ", queue: q, minResources: {cpu: '1'}", "")
            JOB("h", "h", "1", "", REQ1, ""),
        .binds = "g-0=n1 g-1=n1",
        .phases = "g=Running h=Pending r=Inqueue",
        .reasons = "h=QueueQuotaExceeded",
    },
    {
        /* The same, with proportion in sla's own tier: its reject is final
         * (Volcano's vote), so g waits too; r and g reserve nothing new. */
        .name = "sla: a quota plugin in the same tier still rejects",
        .conf = "actions: \"enqueue, allocate, backfill\"\n"
                "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: proportion\n"
                "  - name: sla\n    arguments: {sla-waiting-time: 5m}\n"
                "- plugins:\n  - name: predicates\n  - name: nodeorder\n",
        .manifests = NODE_RES("n1", "8", "32Gi", "110")
            QUEUE("q", "weight: 1, capability: {cpu: '4'}", "")
            PG_AT("r", "3", "07:00", "", ", queue: q, minResources: {cpu: '3'}", "phase: Inqueue")
            JOB("r", "r", "3", "", REQ1, "      nodeSelector: {disk: ssd}\n")
            PG_AT("g", "2", "07:50", "", ", queue: q, minResources: {cpu: '2'}", "")
            JOB("g", "g", "2", "", REQ1, ""),
        .binds = "",
        .phases = "g=Pending r=Inqueue",
        .reasons = "g=QueueQuotaExceeded",
    },
    {
        /* No global waiting time; late (created 07:00) has the annotation
         * sla-waiting-time: 2h, early (06:00) none.  A job with a waiting
         * time goes first, passed or not: late takes three of n1's four
         * cpu, early's first task the last, its second fits nowhere and
         * early is rolled back.  By creation, early would have won. */
        .name = "sla: a job with a waiting time goes before one without",
        .conf = SLA_CONF(""),
        .manifests = NODE("n1")
            PG_AT("early", "3", "06:00", "", "", "") JOB("early", "early", "3", "", REQ1, "")
            PG_AT("late", "3", "07:00", ", annotations: {sla-waiting-time: 2h}", "", "")
            JOB("late", "late", "3", "", REQ1, ""),
        .binds = "late-0=n1 late-1=n1 late-2=n1",
        .phases = "late=Running early=Inqueue",
    },
    {
        /* Global 10m.  x (07:00) says volcano.sh/sla-waiting-time: 2h and
         * sla-waiting-time: 1m; the first key wins: deadline 09:00.  y
         * (07:30) takes the global 10m: deadline 07:40, so y goes first
         * and wins n1.  Reading the second key (07:01) or the global
         * (07:10) for x, x would have won. */
        .name = "sla: the earlier deadline first, volcano.sh/sla-waiting-time first",
        .conf = SLA_CONF("    arguments: {sla-waiting-time: 10m}\n"),
        .manifests = NODE("n1")
            PG_AT("x", "3", "07:00",
                  ", annotations: {volcano.sh/sla-waiting-time: 2h, sla-waiting-time: 1m}", "", "")
            JOB("x", "x", "3", "", REQ1, "")
            PG_AT("y", "3", "07:30", "", "", "") JOB("y", "y", "3", "", REQ1, ""),
        .binds = "y-0=n1 y-1=n1 y-2=n1",
        .phases = "y=Running x=Inqueue",
    },
    {
        /* x's volcano.sh/sla-waiting-time is no duration: as Volcano's
         * SetPodGroup, the plain annotation is read next: 2h, deadline
         * 09:00, so y (global 10m: 07:40) goes first.  Falling back to
         * the global instead, x (07:10) would have won. */
        .name = "sla: a bad volcano.sh/sla-waiting-time falls through to sla-waiting-time",
        .conf = SLA_CONF("    arguments: {sla-waiting-time: 10m}\n"),
        .manifests = NODE("n1")
            PG_AT("x", "3", "07:00",
                  ", annotations: {volcano.sh/sla-waiting-time: soon, sla-waiting-time: 2h}", "", "")
            JOB("x", "x", "3", "", REQ1, "")
            PG_AT("y", "3", "07:30", "", "", "") JOB("y", "y", "3", "", REQ1, ""),
        .binds = "y-0=n1 y-1=n1 y-2=n1",
        .phases = "y=Running x=Inqueue",
    },
};

/*
 * drf with enableHierarchy (hierarchical drf, Volcano v1.7.0's hdrf; the
 * banner of plugins/hdrf.c has the rules).  Queues are placed in the tree
 * by their annotations volcano.sh/hierarchy and volcano.sh/hierarchy-weights.
 */
#define HQUEUE(name, hier, weights) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n" \
        "metadata: {name: " name ", annotations: {volcano.sh/hierarchy: " hier ", " \
        "volcano.sh/hierarchy-weights: " weights "}}\nspec: {weight: 1}\n"
/* Volcano's hdrf_test.go tier: drf (hierarchy, queue order, job order)
 * and proportion (enqueued, queue order, reclaimable), nothing else. */
#define HDRF_VOLCANO_CONF \
        "actions: allocate\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n" \
        "    enablePreemptable: false\n  - name: proportion\n    enableAllocatable: false\n" \
        "    enableOverused: false\n    enablePreemptive: false\n"
#define HDRF_CONF(actions) \
        "actions: \"" actions "\"\ntiers:\n- plugins:\n  - name: gang\n  - name: drf\n" \
        "    enableHierarchy: true\n  - name: predicates\n"
/* An Inqueue PodGroup of minMember 0 in queue q, and n pods asking cpu and
 * mem (hdrf_test.go's pgSpec). */
#define HPG(name, q, n, cpu, mem) \
        PG_PHASE_MIN(name, q) JOB(name, name, n, "", "{cpu: '" cpu "', memory: " mem "}", "")
#define PG_PHASE_MIN(name, q) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
        "metadata: {name: " name "}\nspec: {minMember: 0, queue: " q "}\nstatus: {phase: Inqueue}\n"

/* pg1, pg2, pg31: ten tasks each; pg32, pg4: fifteen (pod names have no
 * index: tasks go by name, pg1-0, pg1-1, pg1-10, ...). */
#define BLOCKING_BINDS \
        "pg1-0=n pg1-1=n pg1-10=n pg1-11=n pg1-12=n pg1-13=n pg1-14=n pg1-15=n pg1-16=n " \
        "pg1-17=n pg2-0=n pg2-1=n pg2-10=n pg2-11=n pg2-12=n pg2-13=n pg2-14=n pg2-15=n " \
        "pg2-16=n pg2-17=n pg31-0=n pg31-1=n pg31-10=n pg31-11=n pg31-12=n pg31-13=n " \
        "pg31-14=n pg31-15=n pg31-16=n pg31-17=n pg32-0=n pg32-1=n pg32-10=n pg32-11=n " \
        "pg32-12=n pg32-13=n pg32-14=n pg32-15=n pg32-16=n pg32-17=n pg32-18=n pg32-19=n " \
        "pg32-2=n pg32-20=n pg32-21=n pg4-0=n pg4-1=n pg4-10=n pg4-11=n pg4-12=n " \
        "pg4-13=n pg4-14=n pg4-15=n pg4-16=n pg4-17=n pg4-18=n pg4-19=n pg4-2=n pg4-20=n " \
        "pg4-21=n"

static const struct kb_scenario hdrf[] = {
    {
        /* hdrf_test.go, "rescaling test": 10 cpu, 10G; root -> sci (50)
         * with pg1 (ten tasks of 1 cpu, 1G); root -> eng (50) -> {dev (50)
         * with pg21 (1 cpu), prod (50) with pg22 (1G)}.  Whenever sci and
         * eng tie, eng's share is dev's and prod's rescaled to the smaller
         * of their shares (not their sum): pg1 at k cpu and kG has share
         * k/10, eng with pg21 at k cpu and pg22 at kG has k/10 too.  So
         * each subtree takes a turn in step (ties by name: root-eng-dev
         * and root-eng-prod before root-sci), and under eng dev and prod
         * alternate; the node is full when each job holds 5: pg1 5 cpu
         * and 5G, pg21 5 cpu, pg22 5G.  (This and the next one pass
         * without the hierarchy too, proportion's order giving the same
         * split; they are kept as Volcano's own checks.  The ones after
         * them tell the hierarchy apart.) */
        .name = "hdrf: Volcano's rescaling test",
        .conf = HDRF_VOLCANO_CONF,
        .manifests = NODE_RES("n", "10", "10G", "110")
            HQUEUE("root-sci", "root/sci", "100/50")
            HQUEUE("root-eng-dev", "root/eng/dev", "100/50/50")
            HQUEUE("root-eng-prod", "root/eng/prod", "100/50/50")
            HPG("pg1", "root-sci", "10", "1", "1G")
            HPG("pg21", "root-eng-dev", "10", "1", "0")
            HPG("pg22", "root-eng-prod", "10", "0", "1G"),
        .binds = "pg1-0=n pg1-1=n pg1-2=n pg1-3=n pg1-4=n "
                 "pg21-0=n pg21-1=n pg21-2=n pg21-3=n pg21-4=n "
                 "pg22-0=n pg22-1=n pg22-2=n pg22-3=n pg22-4=n",
    },
    {
        /* hdrf_test.go, "blocking nodes test": 30 cpu, 30G; under the root
         * pg1, pg2 and pg4 (weight 25 each) and pg3 (25) -> {pg31, pg32}
         * (50 each); thirty tasks per job, of 1 cpu (pg1, pg2, pg31) or 1G
         * (pg32, pg4).  The three cpu jobs share the cpu evenly, 10 each;
         * once cpu is gone they are saturated and stop blocking: the
         * memory jobs pg32 and pg4 split the memory, 15G each, pg3's
         * share being pg32's once pg31 is saturated. */
        .name = "hdrf: Volcano's blocking nodes test",
        .conf = HDRF_VOLCANO_CONF,
        .manifests = NODE_RES("n", "30", "30G", "200")
            HQUEUE("root-pg1", "root/pg1", "100/25") HQUEUE("root-pg2", "root/pg2", "100/25")
            HQUEUE("root-pg3-pg31", "root/pg3/pg31", "100/25/50")
            HQUEUE("root-pg3-pg32", "root/pg3/pg32", "100/25/50")
            HQUEUE("root-pg4", "root/pg4", "100/25")
            HPG("pg1", "root-pg1", "30", "1", "0") HPG("pg2", "root-pg2", "30", "1", "0")
            HPG("pg31", "root-pg3-pg31", "30", "1", "0")
            HPG("pg32", "root-pg3-pg32", "30", "0", "1G")
            HPG("pg4", "root-pg4", "30", "0", "1G"),
        .binds = BLOCKING_BINDS,
    },
    {
        /* The same without proportion, whose queue order broke the ties
         * above: a tie between sci and eng now goes by queue name, to eng
         * (root-eng-dev, root-eng-prod before root-sci), and eng's share
         * is the smaller of dev's and prod's, so it moves only once both
         * have taken a task: pg21-0, pg22-0, pg1-0, then pg21 and pg22 a
         * task each for every one of pg1's, out of step by one.  cpu runs
         * out at pg21 6, pg1 4 (pg1 is then saturated: the cpu it asks for
         * is gone); pg22 takes the memory pg1 leaves: 6G.  Today
         * (hierarchy skipped) queues would go by name alone: root-eng-dev
         * all 10 cpu, root-eng-prod all 10G, pg1 nothing. */
        .name = "hdrf: rescaling without proportion",
        .conf = "actions: allocate\ntiers:\n- plugins:\n  - name: drf\n"
                "    enableHierarchy: true\n",
        .manifests = NODE_RES("n", "10", "10G", "110")
            HQUEUE("root-sci", "root/sci", "100/50")
            HQUEUE("root-eng-dev", "root/eng/dev", "100/50/50")
            HQUEUE("root-eng-prod", "root/eng/prod", "100/50/50")
            HPG("pg1", "root-sci", "10", "1", "1G")
            HPG("pg21", "root-eng-dev", "10", "1", "0")
            HPG("pg22", "root-eng-prod", "10", "0", "1G"),
        .binds = "pg1-0=n pg1-1=n pg1-2=n pg1-3=n "
                 "pg21-0=n pg21-1=n pg21-2=n pg21-3=n pg21-4=n pg21-5=n "
                 "pg22-0=n pg22-1=n pg22-2=n pg22-3=n pg22-4=n pg22-5=n",
    },
    {
        /* Weights: root -> a (3), root -> b (1); eight 1-cpu pods each
         * (and 1Gi: cpu dominates on 8 cpu, 32Gi).  a goes first while
         * a/3 < b/1: 0 = 0 (name): a 1; b 1; a 2, a 3 (1/8 = 3/8 / 3,
         * name); a 4; b 2; a 5, a 6: the node is full, a 6 b 2.  Without
         * the hierarchy, a (first by name) would take all eight. */
        .name = "hdrf: level weights divide the cluster",
        .conf = HDRF_CONF("allocate"),
        .manifests = NODE_RES("n1", "8", "32Gi", "110")
            HQUEUE("a", "root/a", "1/3") HQUEUE("b", "root/b", "1/1")
            GANG("ga", "1", "8", "1", ", queue: a") GANG("gb", "1", "8", "1", ", queue: b"),
        .binds = "ga-0=n1 ga-1=n1 ga-2=n1 ga-3=n1 ga-4=n1 ga-5=n1 gb-0=n1 gb-1=n1",
    },
    {
        /* Queues without the annotations take their place from
         * spec.parent and spec.weight (Volcano master's
         * BuildEffectiveQueueHierarchy): dev under eng (weight 3), ops
         * (weight 1) under the root.  At the top, eng's share / 3 against
         * ops' / 1, as in the case above: dev 6, ops 2 (ties by queue
         * name: dev first). */
        .name = "hdrf: spec.parent and spec.weight without annotations",
        .conf = HDRF_CONF("allocate"),
        .manifests = NODE_RES("n1", "8", "32Gi", "110") QUEUE("eng", "weight: 3", "")
            QUEUE("dev", "parent: eng", "") QUEUE("ops", "weight: 1", "")
            GANG("gd", "1", "8", "1", ", queue: dev") GANG("go", "1", "8", "1", ", queue: ops"),
        .binds = "gd-0=n1 gd-1=n1 gd-2=n1 gd-3=n1 gd-4=n1 gd-5=n1 go-0=n1 go-1=n1",
    },
    {
        /* Reclaim: a (root/a, weight 4) runs four 1-cpu pods, the whole
         * of n1 (4 cpu); b (root/b, weight 1) has one pending.  With b's
         * task given, b's share is 1/4 per weight 1 = 0.25; a without one
         * of its tasks 3/4 per weight 4 = 0.19: b would not come first, so
         * no task of a is a victim (gang alone would give up three). */
        .name = "hdrf: reclaim spares a queue its weight keeps ahead",
        .conf = HDRF_CONF("enqueue, reclaim"),
        .manifests = NODE("n1") HQUEUE("a", "root/a", "1/4") HQUEUE("b", "root/b", "1/1")
            PG_PHASE_MIN("ra", "a")
            POD("ra-0", IN_GROUP("ra"), "  schedulerName: kbatch\n  nodeName: n1\n" POD_REQ("1"), "phase: Running")
            POD("ra-1", IN_GROUP("ra"), "  schedulerName: kbatch\n  nodeName: n1\n" POD_REQ("1"), "phase: Running")
            POD("ra-2", IN_GROUP("ra"), "  schedulerName: kbatch\n  nodeName: n1\n" POD_REQ("1"), "phase: Running")
            POD("ra-3", IN_GROUP("ra"), "  schedulerName: kbatch\n  nodeName: n1\n" POD_REQ("1"), "phase: Running")
            GANG("gb", "1", "1", "1", ", queue: b"),
        .binds = "",
        .evicted = "",
    },
    {
        /* The same with a at weight 1: b with its task 0.25, a without one
         * 0.75: b comes first, every task of a is a victim, and reclaim
         * takes the cheapest one (the last in task order), ra-3. */
        .name = "hdrf: reclaim from a queue above its weighted share",
        .conf = HDRF_CONF("enqueue, reclaim"),
        .manifests = NODE("n1") HQUEUE("a", "root/a", "1/1") HQUEUE("b", "root/b", "1/1")
            PG_PHASE_MIN("ra", "a")
            POD("ra-0", IN_GROUP("ra"), "  schedulerName: kbatch\n  nodeName: n1\n" POD_REQ("1"), "phase: Running")
            POD("ra-1", IN_GROUP("ra"), "  schedulerName: kbatch\n  nodeName: n1\n" POD_REQ("1"), "phase: Running")
            POD("ra-2", IN_GROUP("ra"), "  schedulerName: kbatch\n  nodeName: n1\n" POD_REQ("1"), "phase: Running")
            POD("ra-3", IN_GROUP("ra"), "  schedulerName: kbatch\n  nodeName: n1\n" POD_REQ("1"), "phase: Running")
            GANG("gb", "1", "1", "1", ", queue: b"),
        .binds = "",
        .evicted = "ra-3",
    },
};

/* clang-format on */

/* A waiting time that is no positive duration: in the conf, refused with
 * the key; on a PodGroup, ignored (as Volcano does) with a warning naming
 * the annotation, and the plugin's own waiting time applies. */
static void test_sla_invalid(void **state)
{
        (void)state;
        struct kb_conf conf;
        char err[512];
        const char *bad = SLA_CONF("    arguments: {sla-waiting-time: 5x}\n");
        assert_int_equal(kb_conf_parse(bad, strlen(bad), &conf, err, sizeof(err)), KB_EBADCONF);
        assert_string_equal(err, "tiers[0].plugins[2] (sla).arguments.sla-waiting-time: unknown "
                                 "unit \"x\" in duration \"5x\" (units: ns, us, ms, s, m, h)");
        bad = SLA_CONF("    arguments: {sla-waiting-time: 0s}\n");
        assert_int_equal(kb_conf_parse(bad, strlen(bad), &conf, err, sizeof(err)), KB_EBADCONF);
        assert_string_equal(err, "tiers[0].plugins[2] (sla).arguments.sla-waiting-time: must be "
                                 "above zero, got \"0s\"");
        /* An argument sla does not know is said and recorded, never
         * silently dropped. */
        const char *odd = SLA_CONF("    arguments: {sla-waiting-time: 5m, sla-grace: 1m}\n");
        assert_int_equal(kb_conf_parse(odd, strlen(odd), &conf, err, sizeof(err)), 0);
        char summary[128];
        kb_conf_skipped_summary(&conf, summary, sizeof(summary));
        assert_string_equal(summary, "argument sla sla-grace");
        kb_conf_release(&conf);

        /* A misspelled arguments key is a slip, not a feature kbatch
         * lacks: refused, naming the key and what was meant (issue 23,
         * point 7). */
        bad = SLA_CONF("    argumnts: {sla-waiting-time: 5m}\n");
        assert_int_equal(kb_conf_parse(bad, strlen(bad), &conf, err, sizeof(err)), KB_EBADCONF);
        assert_string_equal(err, "tiers[0].plugins[2].argumnts: unknown key, did you mean "
                                 "arguments?");

        /* x's annotation is no duration: ignored with a warning, so the
         * global 10m applies (deadline 07:10) and x goes before y (07:40). */
        const char *text = NODE("n1")
            PG_AT("x", "3", "07:00", ", annotations: {volcano.sh/sla-waiting-time: soon}", "", "")
                JOB("x", "x", "3", "", REQ1, "") PG_AT("y", "3", "07:30", "", "", "")
                    JOB("y", "y", "3", "", REQ1, "");
        const char *good = SLA_CONF("    arguments: {sla-waiting-time: 10m}\n");
        struct kb_cluster c;
        struct kb_snapshot snap;
        struct kb_result r;
        kb_cluster_init(&c);
        c.now = 1.8e9;
        assert_int_equal(kb_cluster_load(&c, "t", text, strlen(text), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&c);
        assert_int_equal(kb_conf_parse(good, strlen(good), &conf, err, sizeof(err)), 0);
        kb_cluster_snapshot(&c, &snap);
        assert_int_equal(kb_session_run(&snap, &conf, &r), 0);
        assert_int_equal(r.nwarnings, 1);
        assert_string_equal(r.warnings[0].object, "podgroup default/x");
        assert_non_null(r.warnings[0].pg);
        assert_string_equal(r.warnings[0].message,
                            "metadata.annotations.volcano.sh/sla-waiting-time: invalid "
                            "duration \"soon\"; ignored (the sla plugin's waiting time applies, "
                            "if any)");
        assert_int_equal(r.nbinds, 3);
        assert_string_equal(r.binds[0].pod->meta.name, "x-0");
        kb_result_release(&r);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
}

TABLE_TEST(basics)
TABLE_TEST(queues)
TABLE_TEST(ordering)
TABLE_TEST(nodes)
TABLE_TEST(backfill)
TABLE_TEST(enqueue)
TABLE_TEST(accounting)
TABLE_TEST(sessions)
TABLE_TEST(sla)
TABLE_TEST(hdrf)

/* The tables hold at least 40 scenarios; a shrinking suite should be a
 * decision, not an accident. */
static void test_count(void **state)
{
        (void)state;
        size_t n = KB_ARRAY_SIZE(basics) + KB_ARRAY_SIZE(queues) + KB_ARRAY_SIZE(ordering) +
                   KB_ARRAY_SIZE(nodes) + KB_ARRAY_SIZE(backfill) + KB_ARRAY_SIZE(enqueue) +
                   KB_ARRAY_SIZE(accounting) + KB_ARRAY_SIZE(sessions) + KB_ARRAY_SIZE(sla) +
                   KB_ARRAY_SIZE(hdrf);
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
            cmocka_unit_test(test_sla),        cmocka_unit_test(test_sla_invalid),
            cmocka_unit_test(test_hdrf),       cmocka_unit_test(test_count),
        };
        return cmocka_run_group_tests_name("scenarios", tests, NULL, NULL);
}
