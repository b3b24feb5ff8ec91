/*
 * preempt and reclaim: scenarios with every expected bind and eviction
 * worked out by hand in the comment above it, from the rules in the banners
 * of actions/preempt.c, actions/reclaim.c and actions/evict.c.  Like every
 * scenario table, each runs through the node-selection caches and as a full
 * scan.
 *
 * Victims are taken cheapest first, in Volcano's victim order: the task the
 * session would place last goes first, so of one job's pods x-x-0 .. x-x-3
 * (pod-name index order) x-x-3 goes first.
 */
#include <stdlib.h>

#include "testutil.h"

#include "manifests.h"
#include "actions/actions-int.h"

/* clang-format off */

#define PREEMPT_CONF \
        "actions: \"enqueue, allocate, preempt, backfill\"\n" \
        "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n" \
        "- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n" \
        "  - name: nodeorder\n"
#define RECLAIM_CONF \
        "actions: \"enqueue, allocate, reclaim, backfill\"\n" \
        "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n" \
        "- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n" \
        "  - name: nodeorder\n"

/* A running pod of group g on node, asking cpu and 1Gi; more metadata
 * (", namespace: x") and spec lines. */
#define RUN_POD(name, g, node, cpu, meta, spec) \
        POD(name, IN_GROUP(g) meta, "  schedulerName: kbatch\n  nodeName: " node "\n" spec POD_REQ(cpu), \
            "phase: Running")
/* A pending pod of group g. */
#define WAIT_POD(name, g, cpu, meta, spec) \
        POD(name, IN_GROUP(g) meta, "  schedulerName: kbatch\n" spec POD_REQ(cpu), "")
#define LO "  priorityClassName: lo\n"
#define HI "  priorityClassName: hi\n"
#define CLASSES PRIORITY_CLASS("lo", "10") PRIORITY_CLASS("hi", "1000")
#define LO_PG(name, min) PG(name, min, "2024-01-01", ", priorityClassName: lo")
#define HI_PG(name, min) PG(name, min, "2024-01-02", ", priorityClassName: hi")

static const struct kb_scenario preempt[] = {
    {
        /* An eviction preempt made stays counted when reclaim's later turn
         * for the same job is discarded.  The priority plugin alone in the
         * first tier: a job starves while any task is neither ready nor
         * pipelined, so hi (minMember 1, two 2-cpu pods) still starves
         * after preempt.  n1 (4 cpu) runs lo-x-0 (not preemptable) and
         * lo-x-1, 2 cpu each.  Preempt: hi-x-0 evicts lo-x-1 and is
         * pipelined on n1; hi-x-1 finds no victim (lo-x-0 may not go);
         * hi is pipelined (1 >= 1): committed.  Reclaim: hi still starves,
         * its turn evicts nothing (one queue: no other queue to take
         * from) and is discarded.  The condition still names preempt's
         * eviction (it said "pod group is not ready" when the discarded
         * turn reset the count). */
        .name = "preempt then reclaim: a discarded reclaim turn keeps preempt's evictions",
        .conf = "actions: \"enqueue, allocate, preempt, reclaim\"\n"
                "tiers:\n- plugins:\n  - name: priority\n"
                "- plugins:\n  - name: gang\n  - name: conformance\n  - name: drf\n"
                "  - name: predicates\n  - name: proportion\n  - name: nodeorder\n",
        .manifests = NODE("n1") CLASSES LO_PG("lo", "1")
            POD("lo-x-0", ", annotations: {scheduling.k8s.io/group-name: lo, "
                "volcano.sh/preemptable: 'false'}",
                "  schedulerName: kbatch\n  nodeName: n1\n" LO POD_REQ("2"), "phase: Running")
            RUN_POD("lo-x-1", "lo", "n1", "2", "", LO)
            HI_PG("hi", "1") WAIT_POD("hi-x-0", "hi", "2", "", HI) WAIT_POD("hi-x-1", "hi", "2", "", HI),
        .binds = "",
        .evicted = "lo-x-1",
        .nominated = "hi-x-0=n1",
        .message = "hi: 1 task(s) of other jobs are being evicted (preempt) to make room; 1 "
                   "pipelined task(s) wait for them; 1st of 1 waiting in queue default",
        .reasons = "hi=WaitingForEvictions",
    },
    {
        /* A gang with sub-groups is pipelined only when its minSubGroups
         * are (Volcano's gang plugin: JobPipelinedFn adds
         * CheckSubJobPipelined, and preempt commits its evictions only for
         * a pipelined job).  hi (minMember 2) has policy part (subGroupSize
         * 2, minSubGroups 2): sub-groups a {hi-x-0, hi-x-1} and b {hi-x-2,
         * hi-x-3}, 1 cpu each; lo (minMember 1) fills n1 with four 1-cpu
         * pods.  Allocate: no room.  Preempt: hi-x-0 evicts lo-x-3, hi-x-1
         * lo-x-2; hi is then no longer starving (2 of minMember 2), but
         * only sub-group a is pipelined, 1 < 2: the statement is
         * discarded, nothing is evicted (minMember alone would evict two
         * pods for a gang that cannot start). */
        .name = "preempt: a gang with sub-groups evicts only for its minSubGroups",
        .conf = PREEMPT_CONF,
        .manifests = NODE("n1") CLASSES LO_PG("lo", "1")
            RUN_POD("lo-x-0", "lo", "n1", "1", "", LO) RUN_POD("lo-x-1", "lo", "n1", "1", "", LO)
            RUN_POD("lo-x-2", "lo", "n1", "1", "", LO) RUN_POD("lo-x-3", "lo", "n1", "1", "", LO)
            PG("hi", "2", "2024-01-02", ", priorityClassName: hi, subGroupPolicy: [{name: part, "
               "matchLabelKeys: [part], subGroupSize: 2, minSubGroups: 2}]")
            WAIT_POD("hi-x-0", "hi", "1", ", labels: {part: a}", HI)
            WAIT_POD("hi-x-1", "hi", "1", ", labels: {part: a}", HI)
            WAIT_POD("hi-x-2", "hi", "1", ", labels: {part: b}", HI)
            WAIT_POD("hi-x-3", "hi", "1", ", labels: {part: b}", HI),
        .binds = "",
        .evicted = "",
        .nominated = "",
    },
    {
        /* n1 (4 cpu) runs gang lo (priority 10, minMember 2: lo-x-0 and
         * lo-x-1, 2 cpu each).  hi (1000, minMember 1) has one 2-cpu pod.
         * Allocate finds no room.  Preempt: hi starves; no free room; on n1
         * the candidates are lo's two pods (lo-x-1 first); the gang plugin
         * gives lo up only whole (cutting it to 1 < 2 is refused), priority
         * (10 < 1000) and conformance agree: both are evicted, hi-x-0 is
         * pipelined to n1 and the statement commits (hi is pipelined).
         * Session 2: the victims are gone and hi-x-0 binds to n1.  (Volcano
         * refuses to cut lo at all, and hi would wait.) */
        .name = "preempt: a high-priority gang evicts a low one whole",
        .conf = PREEMPT_CONF,
        .sessions = 2,
        .manifests = NODE("n1") CLASSES LO_PG("lo", "2")
            RUN_POD("lo-x-0", "lo", "n1", "2", "", LO) RUN_POD("lo-x-1", "lo", "n1", "2", "", LO)
            HI_PG("hi", "1") WAIT_POD("hi-x-0", "hi", "2", "", HI),
        .binds = "hi-x-0=n1",
        .evicted = "lo-x-0 lo-x-1",
        .phases = "hi=Running",
    },
    {
        /* lo has minMember 1 and four 1-cpu pods on n1; hi needs 2 cpu.
         * Cheapest first: lo-x-3, then lo-x-2 (lo keeps 2 >= 1); two are
         * enough.  Session 2: hi-x-0 binds. */
        .name = "preempt: only as many victims as the task needs",
        .conf = PREEMPT_CONF,
        .sessions = 2,
        .manifests = NODE("n1") CLASSES LO_PG("lo", "1")
            RUN_POD("lo-x-0", "lo", "n1", "1", "", LO) RUN_POD("lo-x-1", "lo", "n1", "1", "", LO)
            RUN_POD("lo-x-2", "lo", "n1", "1", "", LO) RUN_POD("lo-x-3", "lo", "n1", "1", "", LO)
            HI_PG("hi", "1") WAIT_POD("hi-x-0", "hi", "2", "", HI),
        .binds = "hi-x-0=n1",
        .evicted = "lo-x-2 lo-x-3",
    },
    {
        /* n1 is full of lo (four 1-cpu pods, minMember 1); n2 has 2 of its
         * 4 cpu taken by another scheduler's pod.  hi (minMember 2) has two
         * 2-cpu pods: allocate places hi-x-0 on n2 but not hi-x-1, and
         * undoes it.  Preempt: hi-x-0 goes to n2's free room without
         * evicting anything; hi-x-1 finds none and evicts lo-x-3 and lo-x-2
         * on n1 (n2's pods are not candidates: another scheduler's, and
         * hi's own pipelined one).  Both are pipelined. */
        .name = "preempt: free room first, evictions only for the rest",
        .conf = PREEMPT_CONF,
        .manifests = NODE("n1") NODE("n2") CLASSES LO_PG("lo", "1")
            RUN_POD("lo-x-0", "lo", "n1", "1", "", LO) RUN_POD("lo-x-1", "lo", "n1", "1", "", LO)
            RUN_POD("lo-x-2", "lo", "n1", "1", "", LO) RUN_POD("lo-x-3", "lo", "n1", "1", "", LO)
            POD("web", "", "  schedulerName: default-scheduler\n  nodeName: n2\n" POD_REQ("2"),
                "phase: Running")
            HI_PG("hi", "2") WAIT_POD("hi-x-0", "hi", "2", "", HI) WAIT_POD("hi-x-1", "hi", "2", "", HI),
        .binds = "",
        .evicted = "lo-x-2 lo-x-3",
        .nominated = "hi-x-0=n2 hi-x-1=n1",
        .message = "hi: 2 task(s) of other jobs are being evicted (preempt) to make room; 2 "
                   "pipelined task(s) wait for them; 1st of 1 waiting in queue default",
        .reasons = "hi=WaitingForEvictions",
    },
    {
        /* hi (minMember 3) wants three 2-cpu pods on a 4-cpu node that lo
         * (minMember 1, two 2-cpu pods) fills.  hi-x-0 evicts lo-x-1,
         * hi-x-1 evicts lo-x-0 (the last of lo, so lo goes whole), hi-x-2
         * finds nothing left: hi is not pipelined (2 < 3) and the
         * statement is discarded: nothing is evicted for a gang that does
         * not fit. */
        .name = "preempt: nothing is evicted unless the whole gang fits",
        .conf = PREEMPT_CONF,
        .manifests = NODE("n1") CLASSES LO_PG("lo", "1")
            RUN_POD("lo-x-0", "lo", "n1", "2", "", LO) RUN_POD("lo-x-1", "lo", "n1", "2", "", LO)
            HI_PG("hi", "3") WAIT_POD("hi-x-0", "hi", "2", "", HI)
            WAIT_POD("hi-x-1", "hi", "2", "", HI) WAIT_POD("hi-x-2", "hi", "2", "", HI),
        .binds = "",
        .evicted = "",
        .nominated = "",
    },
    {
        /* n1 and n2 (2 cpu each) each run one 2-cpu pod of gang lo
         * (minMember 2).  hi needs 2 cpu.  Per node the gang plugin refuses
         * lo's pod (lo would drop to 1 < 2, and it is not offered whole);
         * offered whole, lo is given up: both pods are evicted, and hi-x-0
         * goes to n1 (the freed nodes tie, n1 by name). */
        .name = "preempt: a gang spread over nodes is evicted whole",
        .conf = PREEMPT_CONF,
        .manifests = NODE_RES("n1", "2", "8Gi", "110") NODE_RES("n2", "2", "8Gi", "110") CLASSES
            LO_PG("lo", "2") RUN_POD("lo-x-0", "lo", "n1", "2", "", LO)
            RUN_POD("lo-x-1", "lo", "n2", "2", "", LO)
            HI_PG("hi", "1") WAIT_POD("hi-x-0", "hi", "2", "", HI),
        .binds = "",
        .evicted = "lo-x-0 lo-x-1",
        .nominated = "hi-x-0=n1",
    },
    {
        /* A session after a preemption: lo's pods are still terminating
         * (Releasing) on n1 and hi-x-0 carries status.nominatedNodeName n1;
         * lo2 runs on n2 and could be preempted too.  Allocate tries the
         * nominated node first: its future idle room fits, so hi-x-0 is
         * pipelined there again; hi is pipelined, not starving, and nothing
         * more is evicted. */
        .name = "preempt: a preemptor waiting for its victims evicts no more",
        .conf = PREEMPT_CONF,
        .manifests = NODE("n1") NODE("n2") CLASSES LO_PG("lo", "2")
            RUN_POD("lo-x-0", "lo", "n1", "2", ", deletionTimestamp: '2024-01-03T00:00:00Z'", LO)
            RUN_POD("lo-x-1", "lo", "n1", "2", ", deletionTimestamp: '2024-01-03T00:00:00Z'", LO)
            LO_PG("lo2", "1") RUN_POD("lo2-x-0", "lo2", "n2", "2", "", LO)
            RUN_POD("lo2-x-1", "lo2", "n2", "2", "", LO)
            HI_PG("hi", "1")
            POD("hi-x-0", IN_GROUP("hi"), "  schedulerName: kbatch\n" HI POD_REQ("2"),
                "nominatedNodeName: n1"),
        .binds = "",
        .evicted = "",
        .nominated = "hi-x-0=n1",
    },
    {
        /* The first scenario with lo in another queue: preempt evicts only
         * within the preemptor's queue (taking from other queues is
         * reclaim's business). */
        .name = "preempt: never across queues",
        .conf = PREEMPT_CONF,
        .manifests = NODE("n1") CLASSES QUEUE("other", "weight: 1", "")
            PG("lo", "2", "2024-01-01", ", priorityClassName: lo, queue: other")
            RUN_POD("lo-x-0", "lo", "n1", "2", "", LO) RUN_POD("lo-x-1", "lo", "n1", "2", "", LO)
            HI_PG("hi", "1") WAIT_POD("hi-x-0", "hi", "2", "", HI),
        .binds = "",
        .evicted = "",
    },
    {
        /* The first scenario with preemptionPolicy: Never on hi's pod: it
         * evicts nobody. */
        .name = "preempt: preemptionPolicy Never evicts nobody",
        .conf = PREEMPT_CONF,
        .manifests = NODE("n1") CLASSES LO_PG("lo", "2")
            RUN_POD("lo-x-0", "lo", "n1", "2", "", LO) RUN_POD("lo-x-1", "lo", "n1", "2", "", LO)
            HI_PG("hi", "1") WAIT_POD("hi-x-0", "hi", "2", "", HI "  preemptionPolicy: Never\n"),
        .binds = "",
        .evicted = "",
    },
    {
        /* The first scenario with lo in kube-system: conformance never
         * gives up its pods. */
        .name = "preempt: kube-system pods are never victims",
        .conf = PREEMPT_CONF,
        .manifests = NODE("n1") CLASSES
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: lo, namespace: kube-system}\n"
            "spec: {minMember: 1, priorityClassName: lo}\n"
            RUN_POD("lo-x-0", "lo", "n1", "2", ", namespace: kube-system", LO)
            RUN_POD("lo-x-1", "lo", "n1", "2", ", namespace: kube-system", LO)
            HI_PG("hi", "1") WAIT_POD("hi-x-0", "hi", "2", "", HI),
        .binds = "",
        .evicted = "",
    },
    {
        /* No preemption back and forth, three sessions, one 4-cpu node,
         * equal priorities.  y (minMember 1) runs y-x-0..3 and waits for
         * y-x-4, y-x-5; x (minMember 2) waits for two 1-cpu pods.
         * Session 1: allocate places nothing.  Preempt: x starves (0 < 2),
         * y does not (gang: 4 >= 1).  For x-x-0 the priority plugin gives up
         * nobody (equal), which passes the question to tier 2: drf keeps a
         * victim while x's share with the task (1/4) stays at or below y's
         * share without it (drf.c: equal counts, within 1e-6): y-x-3 (3/4),
         * y-x-2 (2/4) and y-x-1 (1/4), not y-x-0 (0).  One is enough: y-x-3.  For x-x-1, y holds 3: y-x-2
         * (2/4).  x is pipelined: y-x-2 and y-x-3 are evicted.
         * Session 2: they are gone; x (not ready) goes before y (ready):
         * x-x-0 and x-x-1 bind.  y's pending pods find no room; y is not
         * starving, so it evicts nothing.  Session 3: the same, nothing. */
        .name = "preempt: no eviction back and forth over three sessions",
        .conf = PREEMPT_CONF,
        .sessions = 3,
        .manifests = NODE("n1") PG("y", "1", "2024-01-01", "")
            RUN_POD("y-x-0", "y", "n1", "1", "", "") RUN_POD("y-x-1", "y", "n1", "1", "", "")
            RUN_POD("y-x-2", "y", "n1", "1", "", "") RUN_POD("y-x-3", "y", "n1", "1", "", "")
            WAIT_POD("y-x-4", "y", "1", "", "") WAIT_POD("y-x-5", "y", "1", "", "")
            PG("x", "2", "2024-01-02", "") WAIT_POD("x-x-0", "x", "1", "", "")
            WAIT_POD("x-x-1", "x", "1", "", ""),
        .binds = "x-x-0=n1 x-x-1=n1",
        .evicted = "y-x-2 y-x-3",
        .phases = "x=Running y=Running",
    },
    {
        /* Volcano master's preempt_test.go, "preempt low priority job in
         * same queue but not pod with preemptable=false or higher priority"
         * (its issue #2232).  Queue q (capability 3 cpu, 3Gi) runs lo
         * (priority 10, minMember 1): lo-x-0 marked volcano.sh/preemptable
         * "false", lo-x-1, and lo-x-2 whose pod priority is 1000, 1 cpu
         * each, on a 12-cpu node that has 9 cpu free.  hi (1000) wants one
         * 1-cpu pod: the node has room, but q is at its capability (3 + 1 >
         * 3), so allocate places nothing.  Preempt: the node fits hi-x-0
         * already, yet the queue must take it too: victims are evicted
         * until both hold.  lo-x-0 is no candidate; lo-x-2 is one (between
         * jobs the priority plugin compares job priorities, 10 < 1000) but
         * victims go cheapest first in task order, and lo-x-2's pod priority
         * puts it last: lo-x-1 goes, q holds 2 + 1 <= 3, and hi-x-0 is
         * pipelined on n1. */
        .name = "preempt: skips non-preemptable and higher-priority pods",
        .conf = "actions: \"enqueue, allocate, preempt\"\n"
                "tiers:\n- plugins:\n  - name: conformance\n  - name: gang\n"
                "  - name: priority\n  - name: proportion\n",
        .manifests = NODE_RES("n1", "12", "12Gi", "10") CLASSES
            QUEUE("q", "weight: 1, capability: {cpu: '3', memory: 3Gi}", "")
            PG("lo", "1", "2024-01-01", ", priorityClassName: lo, queue: q")
            POD("lo-x-0", ", annotations: {scheduling.k8s.io/group-name: lo, "
                "volcano.sh/preemptable: 'false'}",
                "  schedulerName: kbatch\n  nodeName: n1\n" LO POD_REQ("1"), "phase: Running")
            RUN_POD("lo-x-1", "lo", "n1", "1", "", LO)
            RUN_POD("lo-x-2", "lo", "n1", "1", "", "  priority: 1000\n")
            PG("hi", "1", "2024-01-02", ", priorityClassName: hi, queue: q")
            WAIT_POD("hi-x-0", "hi", "1", "", HI),
        .binds = "",
        .evicted = "lo-x-1",
        .nominated = "hi-x-0=n1",
    },
    {
        /* Volcano master's preempt_test.go, "preempt low priority job in
         * same queue" (its issue #3161): q's capability is 4 cpu; lo
         * (minMember 0) runs one 3-cpu pod on a 12-cpu node; hi wants a
         * 3-cpu pod.  The node has room, q does not (3 + 3 > 4): lo-x-0 is
         * evicted (lo keeps 0 >= minMember 0), q holds 0 + 3 <= 4, and
         * hi-x-0 is pipelined on n1. */
        .name = "preempt: a queue at its capability evicts for room the node has",
        .conf = "actions: \"enqueue, allocate, preempt\"\n"
                "tiers:\n- plugins:\n  - name: conformance\n  - name: gang\n"
                "  - name: priority\n  - name: proportion\n",
        .manifests = NODE_RES("n1", "12", "12Gi", "10") CLASSES
            QUEUE("q", "weight: 1, capability: {cpu: '4', memory: 4Gi}", "")
            PG("lo", "0", "2024-01-01", ", priorityClassName: lo, queue: q")
            RUN_POD("lo-x-0", "lo", "n1", "3", "", LO)
            PG("hi", "1", "2024-01-02", ", priorityClassName: hi, queue: q")
            WAIT_POD("hi-x-0", "hi", "3", "", HI),
        .binds = "",
        .evicted = "lo-x-0",
        .nominated = "hi-x-0=n1",
    },
};

/* Queues qa and qb (weight 1) on two 4-cpu, 8Gi nodes.  qa runs job a
 * (minMember 1): a-x-0..3 on n1, a-x-4..7 on n2, 1 cpu and 1Gi each; qb's
 * job b (minMember 2) waits for two such pods.  Deserved (proportion): qb
 * requests 2 cpu, 2Gi, 2 pods and gets them in round 1; qa gets 4 cpu, then
 * the 2 left: qa 6 cpu, 8Gi, 8 pods; qb 2 cpu, 2Gi, 2 pods.  qa holds 8 cpu:
 * 2 above its share. */
#define QUEUES(qa_spec) \
        NODE("n1") NODE("n2") QUEUE("qa", qa_spec, "") QUEUE("qb", "weight: 1", "")
#define A_ON_N1 \
        RUN_POD("a-x-0", "a", "n1", "1", "", "") RUN_POD("a-x-1", "a", "n1", "1", "", "") \
        RUN_POD("a-x-2", "a", "n1", "1", "", "") RUN_POD("a-x-3", "a", "n1", "1", "", "")
#define A_ON_N2 \
        RUN_POD("a-x-4", "a", "n2", "1", "", "") RUN_POD("a-x-5", "a", "n2", "1", "", "") \
        RUN_POD("a-x-6", "a", "n2", "1", "", "") RUN_POD("a-x-7", "a", "n2", "1", "", "")
#define B_WAITS(extra) \
        PG("b", "2", "2024-01-02", ", queue: qb" extra) WAIT_POD("b-x-0", "b", "1", "", "") \
        WAIT_POD("b-x-1", "b", "1", "", "")

static const struct kb_scenario reclaim[] = {
    {
        /* The first scenario with b's pods in two sub-groups of 2
         * (policy part, minSubGroups 2; b-x-2 and b-x-3 added): reclaim
         * takes a-x-3 for b-x-0 and a-x-2 for b-x-1, then b stops starving
         * (2 of minMember 2), but only sub-group a is pipelined, 1 < 2, so
         * the evictions are discarded (Volcano's reclaim commits only for a
         * pipelined job, and the gang plugin's JobPipelinedFn checks
         * CheckSubJobPipelined). */
        .name = "reclaim: a gang with sub-groups reclaims only for its minSubGroups",
        .conf = RECLAIM_CONF,
        .manifests = QUEUES("weight: 1") PG("a", "1", "2024-01-01", ", queue: qa") A_ON_N1 A_ON_N2
            PG("b", "2", "2024-01-02", ", queue: qb, subGroupPolicy: [{name: part, matchLabelKeys: "
               "[part], subGroupSize: 2, minSubGroups: 2}]")
            WAIT_POD("b-x-0", "b", "1", ", labels: {part: a}", "")
            WAIT_POD("b-x-1", "b", "1", ", labels: {part: a}", "")
            WAIT_POD("b-x-2", "b", "1", ", labels: {part: b}", "")
            WAIT_POD("b-x-3", "b", "1", ", labels: {part: b}", ""),
        .binds = "",
        .evicted = "",
    },
    {
        /* Session 1: allocate finds no room for b.  Reclaim: qb is below
         * its share (0 + 1 <= 2).  b-x-0: on n1 the candidates are a-x-3 ..
         * a-x-0; gang and conformance give up all four, proportion only
         * while qa stays above its 6 cpu: a-x-3 (8 > 6) and a-x-2 (7 > 6);
         * every plugin must agree, so {a-x-3, a-x-2}; one is enough.  n2
         * costs the same (a-x-7): n1 by order.  b-x-1: qa holds 7: a-x-2.
         * b is pipelined and the evictions commit.  Session 2: b-x-0 and
         * b-x-1 bind to n1. */
        .name = "reclaim: a queue below its share takes room back",
        .conf = RECLAIM_CONF,
        .sessions = 2,
        .manifests = QUEUES("weight: 1") PG("a", "1", "2024-01-01", ", queue: qa") A_ON_N1 A_ON_N2
            B_WAITS(""),
        .binds = "b-x-0=n1 b-x-1=n1",
        .evicted = "a-x-2 a-x-3",
        .phases = "b=Running",
    },
    {
        /* The same with qa's spec.reclaimable false: none of its pods is a
         * candidate; b waits. */
        .name = "reclaim: reclaimable false protects a queue",
        .conf = RECLAIM_CONF,
        .manifests = QUEUES("weight: 1, reclaimable: false") PG("a", "1", "2024-01-01", ", queue: qa")
            A_ON_N1 A_ON_N2 B_WAITS(""),
        .binds = "",
        .evicted = "",
    },
    {
        /* qa runs 4 pods on n1 (its whole request), qb runs b-x-0..3 on n2
         * and c (qb, minMember 2) waits for two.  qb requests 6 cpu and
         * deserves 4 (half the cluster), which it holds: 4 + 1 > 4, so qb
         * may not reclaim, and nothing is evicted. */
        .name = "reclaim: a queue at its share takes nothing",
        .conf = RECLAIM_CONF,
        .manifests = QUEUES("weight: 1") PG("a", "1", "2024-01-01", ", queue: qa") A_ON_N1
            PG("b", "1", "2024-01-01", ", queue: qb")
            RUN_POD("b-x-0", "b", "n2", "1", "", "") RUN_POD("b-x-1", "b", "n2", "1", "", "")
            RUN_POD("b-x-2", "b", "n2", "1", "", "") RUN_POD("b-x-3", "b", "n2", "1", "", "")
            PG("c", "2", "2024-01-02", ", queue: qb") WAIT_POD("c-x-0", "c", "1", "", "")
            WAIT_POD("c-x-1", "c", "1", "", ""),
        .binds = "",
        .evicted = "",
    },
    {
        /* The first scenario with overcommit (factor 1.0) and b asking
         * minResources cpu 2: the cluster is full (8 - 8 used = 0 idle), so
         * overcommit keeps b Pending at enqueue.  Volcano's reclaim skips
         * Pending jobs and b would wait forever (its issue #4756); kbatch's
         * reclaims for it exactly as before (qb is within its share: 0 + 1
         * <= 2), and b, pipelined, is admitted: Inqueue. */
        .name = "reclaim: a job kept Pending by enqueue reclaims too",
        .conf = "actions: \"enqueue, allocate, reclaim, backfill\"\n"
                "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n"
                "- plugins:\n  - name: overcommit\n    arguments: {overcommit-factor: 1.0}\n"
                "  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n",
        .manifests = QUEUES("weight: 1") PG("a", "1", "2024-01-01", ", queue: qa") A_ON_N1 A_ON_N2
            B_WAITS(", minResources: {cpu: '2'}"),
        .binds = "",
        .evicted = "a-x-2 a-x-3",
        .nominated = "b-x-0=n1 b-x-1=n1",
        .phases = "b=Inqueue",
    },
    {
        /* qa runs 7 pods (a-x-0..2 on n1, a-x-4..7 on n2): n1 has 1 cpu
         * free.  Deserved: qa 4 then 2: 6; qb 2.  b-x-0 takes n1's free cpu
         * without evicting anyone; b-x-1 evicts one pod (a-x-2: qa holds 7 >
         * 6).  Volcano counts only the evicted pods' room and would evict
         * one per task. */
        .name = "reclaim: a node's free room counts before evicting",
        .conf = RECLAIM_CONF,
        .manifests = QUEUES("weight: 1") PG("a", "1", "2024-01-01", ", queue: qa")
            RUN_POD("a-x-0", "a", "n1", "1", "", "") RUN_POD("a-x-1", "a", "n1", "1", "", "")
            RUN_POD("a-x-2", "a", "n1", "1", "", "") A_ON_N2 B_WAITS(""),
        .binds = "",
        .evicted = "a-x-2",
        .nominated = "b-x-0=n1 b-x-1=n1",
    },
    {
        /* qa runs gang g (minMember 4) on n1 and job h (minMember 1) on n2,
         * four 1-cpu pods each; qb's b (minMember 4) waits for four.
         * Deserved: qa 4, qb 4.  b-x-0: on n1 only g whole would do (4
         * victims), on n2 one pod of h (h-x-3): n2.  b-x-1, b-x-2: h-x-2,
         * h-x-1 on n2 (on n1, proportion gives up only 3 of g's 4 pods now,
         * and g may not be cut).  b-x-3: h-x-0 (the last of h, so h goes
         * whole) rather than g.  g keeps its gang; qa is down to its 4. */
        .name = "reclaim: a gang is never cut below its minMember",
        .conf = RECLAIM_CONF,
        .manifests = QUEUES("weight: 1") PG("g", "4", "2024-01-01", ", queue: qa")
            RUN_POD("g-x-0", "g", "n1", "1", "", "") RUN_POD("g-x-1", "g", "n1", "1", "", "")
            RUN_POD("g-x-2", "g", "n1", "1", "", "") RUN_POD("g-x-3", "g", "n1", "1", "", "")
            PG("h", "1", "2024-01-01", ", queue: qa")
            RUN_POD("h-x-0", "h", "n2", "1", "", "") RUN_POD("h-x-1", "h", "n2", "1", "", "")
            RUN_POD("h-x-2", "h", "n2", "1", "", "") RUN_POD("h-x-3", "h", "n2", "1", "", "")
            PG("b", "4", "2024-01-02", ", queue: qb") WAIT_POD("b-x-0", "b", "1", "", "")
            WAIT_POD("b-x-1", "b", "1", "", "") WAIT_POD("b-x-2", "b", "1", "", "")
            WAIT_POD("b-x-3", "b", "1", "", ""),
        .binds = "",
        .evicted = "h-x-0 h-x-1 h-x-2 h-x-3",
        .nominated = "b-x-0=n2 b-x-1=n2 b-x-2=n2 b-x-3=n2",
    },
    {
        /* Three queues on three 2-cpu nodes: qc runs c-x-0 and c-x-1 on n1,
         * qa runs a-x-0 and a-x-1 on n2 and a-x-2 on n3 (1 cpu free there);
         * b (qb, minMember 2) waits for two.  Deserved: a third each, 2 cpu
         * (qb and qc request just that); qa holds 3.  b-x-0 takes n3's free
         * cpu.  b-x-1 needs a victim: on n1 every plugin but proportion
         * gives qc's pods up, and qc holds only its share, so none; on n2
         * and n3 one of qa's (3 > 2): n2 by order, a-x-1.  (With Volcano's
         * rule the first tier, gang and conformance, would decide alone,
         * and n1's c-x-1 would go.) */
        .name = "reclaim: a queue within its share loses nothing",
        .conf = RECLAIM_CONF,
        .manifests = NODE_RES("n1", "2", "8Gi", "110") NODE_RES("n2", "2", "8Gi", "110")
            NODE_RES("n3", "2", "8Gi", "110") QUEUE("qa", "weight: 1", "")
            QUEUE("qb", "weight: 1", "") QUEUE("qc", "weight: 1", "")
            PG("c", "1", "2024-01-01", ", queue: qc")
            RUN_POD("c-x-0", "c", "n1", "1", "", "") RUN_POD("c-x-1", "c", "n1", "1", "", "")
            PG("a", "1", "2024-01-01", ", queue: qa")
            RUN_POD("a-x-0", "a", "n2", "1", "", "") RUN_POD("a-x-1", "a", "n2", "1", "", "")
            RUN_POD("a-x-2", "a", "n3", "1", "", "") B_WAITS(""),
        .binds = "",
        .evicted = "a-x-1",
        .nominated = "b-x-0=n3 b-x-1=n2",
    },
    {
        /* The first scenario with capacity in place of proportion: qa and
         * qb each deserve 4 cpu and 4Gi; qa borrowed the whole cluster (8
         * cpu, 8Gi).  b-x-0: qb may take it (0 + 1 <= 4 in cpu and memory:
         * preemptive); on n1 capacity gives up qa's pods while qa stays
         * above what it deserves (8, 7, 6, 5 > 4: all four), gang and
         * conformance agree; one is enough, the cheapest: a-x-3 (n2's a-x-7
         * costs the same: n1 by order).  b-x-1: a-x-2 likewise.  Session 2:
         * both bind to n1. */
        .name = "reclaim: capacity, a queue takes back what it deserves",
        .conf = "actions: \"enqueue, allocate, reclaim, backfill\"\n"
                "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n"
                "- plugins:\n  - name: drf\n  - name: predicates\n  - name: capacity\n"
                "  - name: nodeorder\n",
        .sessions = 2,
        .manifests = NODE("n1") NODE("n2") QUEUE("qa", "deserved: {cpu: '4', memory: 4Gi}", "")
            QUEUE("qb", "deserved: {cpu: '4', memory: 4Gi}", "")
            PG("a", "1", "2024-01-01", ", queue: qa") A_ON_N1 A_ON_N2 B_WAITS(""),
        .binds = "b-x-0=n1 b-x-1=n1",
        .evicted = "a-x-2 a-x-3",
        .phases = "b=Running",
    },
    {
        /* The same, but qa deserves all 8 cpu and 8Gi, and b (minMember 1)
         * asks for one pod: qa holds exactly what it deserves (8 > 8 is
         * false), capacity gives none of its pods up, and b waits. */
        .name = "reclaim: capacity, a queue within what it deserves loses nothing",
        .conf = "actions: \"enqueue, allocate, reclaim, backfill\"\n"
                "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n"
                "- plugins:\n  - name: drf\n  - name: predicates\n  - name: capacity\n"
                "  - name: nodeorder\n",
        .manifests = NODE("n1") NODE("n2") QUEUE("qa", "deserved: {cpu: '8', memory: 8Gi}", "")
            QUEUE("qb", "deserved: {cpu: '4', memory: 4Gi}", "")
            PG("a", "1", "2024-01-01", ", queue: qa") A_ON_N1 A_ON_N2
            PG("b", "1", "2024-01-02", ", queue: qb") WAIT_POD("b-x-0", "b", "1", "", ""),
        .binds = "",
        .evicted = "",
    },
    {
        /* The first scenario's qa, with b (qb, minMember 5) waiting for five
         * 1-cpu pods.  Deserved: round 1 gives each queue 4 cpu, and qb
         * (asking 5) keeps 4; nothing is left for round 2.  b-x-0 .. b-x-3
         * could each evict one of qa's pods (qa holds 8 > 4), but b-x-4
         * would take qb to 5 > 4: not preemptive.  b, 4 of 5, is not
         * pipelined, so its turn is discarded: nothing is evicted for a gang
         * that does not fit. */
        .name = "reclaim: nothing is evicted for a gang that cannot fit",
        .conf = RECLAIM_CONF,
        .manifests = QUEUES("weight: 1") PG("a", "1", "2024-01-01", ", queue: qa") A_ON_N1 A_ON_N2
            PG("b", "5", "2024-01-02", ", queue: qb") WAIT_POD("b-x-0", "b", "1", "", "")
            WAIT_POD("b-x-1", "b", "1", "", "") WAIT_POD("b-x-2", "b", "1", "", "")
            WAIT_POD("b-x-3", "b", "1", "", "") WAIT_POD("b-x-4", "b", "1", "", ""),
        .binds = "",
        .evicted = "",
        .nominated = "",
    },
};


/*
 * kube-batch's preempt_test.go and reclaim_test.go (also Volcano v1.7.0's
 * reclaim_test.go), under Volcano master's rules.  kube-batch preempted for
 * every job with a pending task and counted only the victims' room;
 * Volcano master acts only for starving jobs (its gang plugin's
 * jobStarving: ready plus pipelined below minMember; reclaim too since
 * v1.8) and counts the node's future idle room.  So a group with
 * minMember 0, kube-batch's default, never preempts nor reclaims (README,
 * Differences from Volcano).  The PodGroups are Inqueue, as Volcano's
 * transcriptions have them.
 */
#define KB_CONF(action) \
        "actions: \"" action "\"\n" \
        "tiers:\n- plugins:\n  - name: conformance\n  - name: gang\n"
#define KB_PG(name, min, queue) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
        "metadata: {name: " name "}\nspec: {minMember: " min ", queue: " queue "}\n" \
        "status: {phase: Inqueue}\n"
#define KB_TWO_JOBS(min2) \
        NODE_RES("n1", "2", "2Gi", "110") QUEUE("q1", "weight: 1", "") KB_PG("pg1", "0", "q1") \
        RUN_POD("a-x-0", "pg1", "n1", "1", "", "") RUN_POD("a-x-1", "pg1", "n1", "1", "", "") \
        KB_PG("pg2", min2, "q1") WAIT_POD("b-x-0", "pg2", "1", "", "") \
        WAIT_POD("b-x-1", "pg2", "1", "", "")
#define KB_OVERUSED(min) \
        NODE_RES("n1", "3", "3Gi", "110") QUEUE("q1", "weight: 1", "") \
        QUEUE("q2", "weight: 1", "") KB_PG("pg1", min, "q1") \
        RUN_POD("a-x-0", "pg1", "n1", "1", "", "") RUN_POD("a-x-1", "pg1", "n1", "1", "", "") \
        RUN_POD("a-x-2", "pg1", "n1", "1", "", "") KB_PG("pg2", min, "q2") \
        WAIT_POD("b-x-0", "pg2", "1", "", "")

static const struct kb_scenario kube_batch[] = {
    {
        /* "one Job with two Pods on one node": pg1 (minMember 0) runs two
         * 1-cpu pods on a 3-cpu node and has two more pending.  kube-batch
         * evicted one of them for the other.  pg1 is not starving (2 >= 0):
         * nothing is evicted, nothing pipelined. */
        .name = "kube-batch: one job, two pods, one node (minMember 0)",
        .conf = KB_CONF("preempt"),
        .manifests = NODE_RES("n1", "3", "3Gi", "110") QUEUE("q1", "weight: 1", "")
            KB_PG("pg1", "0", "q1") RUN_POD("p-x-0", "pg1", "n1", "1", "", "")
            RUN_POD("p-x-1", "pg1", "n1", "1", "", "") WAIT_POD("p-x-2", "pg1", "1", "", "")
            WAIT_POD("p-x-3", "pg1", "1", "", ""),
        .binds = "",
        .evicted = "",
        .nominated = "",
    },
    {
        /* Volcano's revision of the same case: minMember 3.  pg1 starves
         * (2 < 3); p-x-2 takes the free cpu (no eviction) and pg1 is
         * pipelined (2 + 1 >= 3): nothing more is done. */
        .name = "kube-batch: one job, two pods, one node (minMember 3)",
        .conf = KB_CONF("preempt"),
        .manifests = NODE_RES("n1", "3", "3Gi", "110") QUEUE("q1", "weight: 1", "")
            KB_PG("pg1", "3", "q1") RUN_POD("p-x-0", "pg1", "n1", "1", "", "")
            RUN_POD("p-x-1", "pg1", "n1", "1", "", "") WAIT_POD("p-x-2", "pg1", "1", "", "")
            WAIT_POD("p-x-3", "pg1", "1", "", ""),
        .binds = "",
        .evicted = "",
        .nominated = "p-x-2=n1",
    },
    {
        /* "two Jobs on one node" with pg2's minMember 0: kube-batch evicted
         * both of pg1's pods; pg2 is not starving: nothing. */
        .name = "kube-batch: two jobs, one node (minMember 0)",
        .conf = KB_CONF("preempt"),
        .manifests = KB_TWO_JOBS("0"),
        .binds = "",
        .evicted = "",
    },
    {
        /* The same with pg2's minMember 2 (Volcano's revision): pg2
         * starves; without the priority plugin the gang plugin alone gives
         * pg1's pods up (2 > 0, then 1 > 0): b-x-0 evicts a-x-1, b-x-1
         * evicts a-x-0, pg2 is pipelined and both evictions commit, as in
         * kube-batch. */
        .name = "kube-batch: two jobs, one node (minMember 2)",
        .conf = KB_CONF("preempt"),
        .manifests = KB_TWO_JOBS("2"),
        .binds = "",
        .evicted = "a-x-0 a-x-1",
        .nominated = "b-x-0=n1 b-x-1=n1",
    },
    {
        /* Reclaim's "Two Queue with one Queue overusing resource": q1's
         * pg1 fills the 3-cpu node, q2's pg2 waits for one pod.  With
         * minMember 0 (kube-batch, Volcano v1.7.0) one pod was evicted;
         * Volcano master reclaims only for starving jobs: nothing. */
        .name = "kube-batch: reclaim from an overused queue (minMember 0)",
        .conf = KB_CONF("reclaim"),
        .manifests = KB_OVERUSED("0"),
        .binds = "",
        .evicted = "",
    },
    {
        /* Volcano master's version, minMember 1: pg2 starves; the gang
         * plugin gives up pg1's pods above its minMember, cheapest first:
         * a-x-2 is evicted and b-x-0 pipelined on n1. */
        .name = "kube-batch: reclaim from an overused queue (minMember 1)",
        .conf = KB_CONF("reclaim"),
        .manifests = KB_OVERUSED("1"),
        .binds = "",
        .evicted = "a-x-2",
        .nominated = "b-x-0=n1",
    },
};

/*
 * Topology-aware preemption (preempt's argument
 * enableTopologyAwarePreemption: true), after Volcano master's
 * TestTopologyAwarePreempt and kube-scheduler's DefaultPreemption.
 */
#define TOPO_CONF \
        "actions: \"enqueue, allocate, preempt\"\n" \
        "tiers:\n- plugins:\n  - name: conformance\n  - name: gang\n  - name: priority\n" \
        "  - name: proportion\n  - name: predicates\n" \
        "configurations:\n- name: preempt\n  arguments: {enableTopologyAwarePreemption: true}\n"
#define ANTI_TEST \
        "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n" \
        "      - labelSelector: {matchLabels: {test: test}}\n" \
        "        topologyKey: kubernetes.io/hostname\n"
/* n1 (2 cpu, 2 pods) runs pg1's p1 (labelled test=test, with hostname
 * anti-affinity against test=test) and pg2's p2, both priority 10,
 * minMember 0; q's capability is 2 cpu.  pg3 (1000) wants p3, labelled
 * test=test with the same anti-affinity. */
#define ANTI_CASE \
        NODE_X("n1", "cpu: '2', memory: 4Gi, pods: '2'", ", labels: {kubernetes.io/hostname: n1}", \
               "", "") CLASSES QUEUE("q", "weight: 1, capability: {cpu: '2', memory: 2Gi}", "") \
        PG("pg1", "0", "2024-01-01", ", priorityClassName: lo, queue: q") \
        POD("p1", ", labels: {test: test}, annotations: {scheduling.k8s.io/group-name: pg1}", \
            "  schedulerName: kbatch\n  nodeName: n1\n" LO ANTI_TEST POD_REQ("1"), "phase: Running") \
        PG("pg2", "0", "2024-01-02", ", priorityClassName: lo, queue: q") \
        RUN_POD("p2", "pg2", "n1", "1", "", LO) \
        PG("pg3", "1", "2024-01-03", ", priorityClassName: hi, queue: q") \
        POD("p3", ", labels: {test: test}, annotations: {scheduling.k8s.io/group-name: pg3}", \
            "  schedulerName: kbatch\n" HI ANTI_TEST POD_REQ("1"), "")
/* n1 (2 cpu) runs a's one 2-cpu pod, of pod priority 500 (its group's is
 * 10); n2 (2 cpu) runs b's two 1-cpu pods of priority 10; hi (1000) wants
 * a 2-cpu pod. */
#define PICK_CASE \
        NODE_RES("n1", "2", "8Gi", "110") NODE_RES("n2", "2", "8Gi", "110") CLASSES \
        PRIORITY_CLASS("mid", "500") LO_PG("a", "1") \
        RUN_POD("a-x-0", "a", "n1", "2", "", "  priorityClassName: mid\n") \
        LO_PG("b", "1") RUN_POD("b-x-0", "b", "n2", "1", "", LO) \
        RUN_POD("b-x-1", "b", "n2", "1", "", LO) HI_PG("hi", "1") \
        WAIT_POD("hi-x-0", "hi", "2", "", HI)

static const struct kb_scenario topology_aware[] = {
    {
        /* Volcano master's "preempt low-priority pod when high-priority pod
         * has PodAntiAffinity conflict".  Allocate: n1 is full.  Preempt:
         * p3's filters fail on n1 (p1's anti-affinity, and its own), but
         * pass with n1's candidates gone, so n1 is a candidate.  q is at its
         * capability (2 + 1 > 2).  Victims cheapest first: pg2 (created
         * last) before pg1: p2 is removed: the room fits and q takes p3, but
         * p1 still blocks; p1 is removed: everything passes.  Reprieve,
         * highest first: without p1 the anti-affinity fails (p1 stays a
         * victim); without p2 (p2 back on n1) the room (2 cpu, 2 pods), q
         * (1 + 1 <= 2) and the filters pass: p2 is given back.  Only p1 is
         * evicted and p3 is pipelined on n1.  Without the argument, n1's
         * filters fail and nothing is evicted. */
        .name = "topology-aware: the pod in the preemptor's anti-affinity is the victim",
        .conf = TOPO_CONF,
        .manifests = ANTI_CASE,
        .binds = "",
        .evicted = "p1",
        .nominated = "p3=n1",
    },
    {
        /* kube-scheduler's node order.  n1 needs one victim (a-x-0, pod
         * priority 500), n2 two (b-x-1 then b-x-0: b keeps minMember 1 after
         * the first, and goes whole with the second).  kbatch's own rule
         * (fewest victims) would pick n1; pickOneNodeForPreemption first
         * compares the highest victim priority: n1 500, n2 10: n2. */
        .name = "topology-aware: the node whose victims have the lowest priority wins",
        .conf = TOPO_CONF,
        .manifests = PICK_CASE,
        .binds = "",
        .evicted = "b-x-0 b-x-1",
        .nominated = "hi-x-0=n2",
    },
    {
        /* The same without the argument: the fewest victims, n1. */
        .name = "preempt: without topology-aware preemption the fewest victims win",
        .conf = "actions: \"enqueue, allocate, preempt\"\n"
                "tiers:\n- plugins:\n  - name: conformance\n  - name: gang\n"
                "  - name: priority\n  - name: proportion\n  - name: predicates\n",
        .manifests = PICK_CASE,
        .binds = "",
        .evicted = "a-x-0",
        .nominated = "hi-x-0=n1",
    },
    {
        /* Host ports: n1 (4 cpu) runs lo's a-x-0 (1 cpu, hostPort 8080) and
         * a-x-1 (1 cpu), minMember 1; hi-x-0 asks 1 cpu and hostPort 8080.
         * n1 has room but the port is taken: allocate places nothing.
         * Preempt: cheapest first, a-x-1 is removed (the port is still
         * taken), then a-x-0 (lo goes whole): everything passes.  Reprieve:
         * without a-x-0 the port clashes (a victim); a-x-1 can stay (lo
         * keeps 1 >= minMember 1).  a-x-0 is evicted, hi-x-0 pipelined. */
        .name = "topology-aware: the pod holding the host port is the victim",
        .conf = TOPO_CONF,
        .manifests = NODE("n1") CLASSES LO_PG("lo", "1")
            POD("a-x-0", IN_GROUP("lo"), "  schedulerName: kbatch\n  nodeName: n1\n" LO
                "  containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}], "
                "resources: {requests: {cpu: '1', memory: 1Gi}}}]\n", "phase: Running")
            RUN_POD("a-x-1", "lo", "n1", "1", "", LO) HI_PG("hi", "1")
            POD("hi-x-0", IN_GROUP("hi"), "  schedulerName: kbatch\n" HI
                "  containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}], "
                "resources: {requests: {cpu: '1', memory: 1Gi}}}]\n", ""),
        .binds = "",
        .evicted = "a-x-0",
        .nominated = "hi-x-0=n1",
    },
    {
        /* Topology spread: n1 (zone a, 2 cpu) runs x's x-x-0 (app=x) and y's
         * y-x-0, 1 cpu each, priority 10; n2 (zone b) is full with another
         * scheduler's pod.  hi-x-0 (app=x, 1 cpu) spreads app=x over zones
         * with maxSkew 1: on n1 zone a would count 2 against zone b's 0.
         * Victims cheapest first: y-x-0 (y created last) makes room, but the
         * skew still fails; x-x-0 too: it passes.  Reprieve: without x-x-0
         * the skew fails; y-x-0 is given back (2 cpu, skew 1 - 0).  x-x-0
         * is evicted.  Without the argument n1's filters fail and nothing
         * happens. */
        .name = "topology-aware: the pod that breaks the preemptor's spread is the victim",
        .conf = TOPO_CONF,
        .manifests = NODE_X("n1", "cpu: '2', memory: 8Gi, pods: '110'", ", labels: {zone: a}", "", "")
            NODE_X("n2", "cpu: '2', memory: 8Gi, pods: '110'", ", labels: {zone: b}", "", "")
            FOREIGN("web", "n2", "2") CLASSES
            PG("x", "1", "2024-01-01", ", priorityClassName: lo")
            RUN_POD("x-x-0", "x", "n1", "1", ", labels: {app: x}", LO)
            PG("y", "1", "2024-01-02", ", priorityClassName: lo")
            RUN_POD("y-x-0", "y", "n1", "1", "", LO) HI_PG("hi", "1")
            POD("hi-x-0", ", labels: {app: x}, annotations: {scheduling.k8s.io/group-name: hi}",
                "  schedulerName: kbatch\n" HI
                "  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: zone\n"
                "    whenUnsatisfiable: DoNotSchedule\n    labelSelector: {matchLabels: {app: x}}\n"
                POD_REQ("1"), ""),
        .binds = "",
        .evicted = "x-x-0",
        .nominated = "hi-x-0=n1",
    },
    {
        /* Node affinity is no victim's doing: PICK_CASE with hi-x-0 asking
         * for nodes labelled pool=b, which only n1 has.  n2 (the cheaper
         * node) fails the filter even with its victims gone and is no
         * candidate: a-x-0 on n1 is evicted. */
        .name = "topology-aware: a node that fails node affinity is no candidate",
        .conf = TOPO_CONF,
        .manifests = NODE_X("n1", "cpu: '2', memory: 8Gi, pods: '110'", ", labels: {pool: b}", "", "")
            NODE_RES("n2", "2", "8Gi", "110") CLASSES PRIORITY_CLASS("mid", "500") LO_PG("a", "1")
            RUN_POD("a-x-0", "a", "n1", "2", "", "  priorityClassName: mid\n")
            LO_PG("b", "1") RUN_POD("b-x-0", "b", "n2", "1", "", LO)
            RUN_POD("b-x-1", "b", "n2", "1", "", LO) HI_PG("hi", "1")
            WAIT_POD("hi-x-0", "hi", "2", "", HI "  nodeSelector: {pool: b}\n"),
        .binds = "",
        .evicted = "a-x-0",
        .nominated = "hi-x-0=n1",
    },
    {
        /* PodDisruptionBudgets, kube-scheduler's first criterion: n1 and n2
         * (2 cpu) each run one 2-cpu pod of priority 10 (a-x-0 labelled
         * app=a, b-x-0 app=b); budget pdb-a covers app=a and allows no
         * disruption.  hi-x-0 (2 cpu) needs one victim either way, of the
         * same priority: n1 would win the tie by name, but its victim breaks
         * pdb-a (0 - 1 < 0) and n2's breaks none: n2. */
        .name = "topology-aware: a node whose victims break no budget wins",
        .conf = TOPO_CONF,
        .manifests = NODE_RES("n1", "2", "8Gi", "110") NODE_RES("n2", "2", "8Gi", "110") CLASSES
            LO_PG("a", "1") RUN_POD("a-x-0", "a", "n1", "2", ", labels: {app: a}", LO)
            LO_PG("b", "1") RUN_POD("b-x-0", "b", "n2", "2", ", labels: {app: b}", LO)
            "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\n"
            "metadata: {name: pdb-a, namespace: default}\n"
            "spec: {maxUnavailable: 0, selector: {matchLabels: {app: a}}}\n"
            "status: {disruptionsAllowed: 0}\n"
            HI_PG("hi", "1") WAIT_POD("hi-x-0", "hi", "2", "", HI),
        .binds = "",
        .evicted = "b-x-0",
        .nominated = "hi-x-0=n2",
    },
    {
        /* The same budget allowing one disruption: nothing breaks, the
         * nodes tie and n1 (first by name) wins. */
        .name = "topology-aware: a budget with room left breaks nothing",
        .conf = TOPO_CONF,
        .manifests = NODE_RES("n1", "2", "8Gi", "110") NODE_RES("n2", "2", "8Gi", "110") CLASSES
            LO_PG("a", "1") RUN_POD("a-x-0", "a", "n1", "2", ", labels: {app: a}", LO)
            LO_PG("b", "1") RUN_POD("b-x-0", "b", "n2", "2", ", labels: {app: b}", LO)
            "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\n"
            "metadata: {name: pdb-a, namespace: default}\n"
            "spec: {maxUnavailable: 1, selector: {matchLabels: {app: a}}}\n"
            "status: {disruptionsAllowed: 1}\n"
            HI_PG("hi", "1") WAIT_POD("hi-x-0", "hi", "2", "", HI),
        .binds = "",
        .evicted = "a-x-0",
        .nominated = "hi-x-0=n1",
    },
    {
        /* preemptionPolicy: Never on p3: it evicts nobody, topology-aware
         * or not (Volcano's case #3642). */
        .name = "topology-aware: preemptionPolicy Never evicts nobody",
        .conf = TOPO_CONF,
        .manifests = NODE_RES("n1", "1", "1Gi", "1") CLASSES LO_PG("lo", "0")
            RUN_POD("lo-x-0", "lo", "n1", "1", "", LO) HI_PG("hi", "1")
            WAIT_POD("hi-x-0", "hi", "1", "", HI "  preemptionPolicy: Never\n"),
        .binds = "",
        .evicted = "",
    },
};

/* clang-format on */

/*
 * The "nothing to spare" memo is kept per rule set, not per preemptor job:
 * a node that gave nothing to one gang's preemptors is not looked at again
 * for the next gang of the queue when it has not changed and the next gang
 * has no task on it (the same candidates).  n0..n7 (2 cpu) hold gangs
 * lo0..lo3 (4 pods of 1 cpu, minMember 4, priority 10) striped: lo g's pod
 * i on node (4g + i) mod 8, so every node holds pods of two gangs and no
 * node can give anything without cutting a gang.  hi0 then hi1 (4 pods of 1
 * cpu, minMember 4, priority 1000) wait.
 *
 * Preempt, hi0-x-0: no free room; parts: all 8 nodes are looked at and
 * give nothing (8 scans); whole: lo0 first (same priority, size and
 * creation as the others, first by name), evicted from n0..n3, and hi0's
 * four pods take the room it leaves.  hi1-x-0: n0..n3 changed and are
 * looked at again (4 scans); n4..n7 did not, and the memo hi0's scans left
 * answers for them; whole: lo1 goes, from n4..n7 (lo0's pods are being
 * released and not offered again).  12 scans a run; a memo kept per job
 * looks at n4..n7 again for hi1: 16.  Each scenario runs twice (caches and
 * full scan), so 24.  The jobs are sorted for whole-gang eviction once a
 * run: for hi1 their order still holds (lo0 has nothing placed, the others
 * are unchanged), where sorting at every call did it twice.
 */
#define STRIPE_NODES NODE_RES("n0", "2", "8Gi", "110") NODE_RES("n1", "2", "8Gi", "110") \
        NODE_RES("n2", "2", "8Gi", "110") NODE_RES("n3", "2", "8Gi", "110") \
        NODE_RES("n4", "2", "8Gi", "110") NODE_RES("n5", "2", "8Gi", "110") \
        NODE_RES("n6", "2", "8Gi", "110") NODE_RES("n7", "2", "8Gi", "110")
#define STRIPE_GANG(g, a, b, c, d) LO_PG(g, "4") \
        RUN_POD(g "-x-0", g, a, "1", "", LO) RUN_POD(g "-x-1", g, b, "1", "", LO) \
        RUN_POD(g "-x-2", g, c, "1", "", LO) RUN_POD(g "-x-3", g, d, "1", "", LO)
#define HI_GANG(g, created) PG(g, "4", created, ", priorityClassName: hi") \
        WAIT_POD(g "-x-0", g, "1", "", HI) WAIT_POD(g "-x-1", g, "1", "", HI) \
        WAIT_POD(g "-x-2", g, "1", "", HI) WAIT_POD(g "-x-3", g, "1", "", HI)

static void test_memo_per_rule_set(void **state)
{
        (void)state;
        static const char *const parts[] = {
            STRIPE_NODES CLASSES,
            STRIPE_GANG("lo0", "n0", "n1", "n2", "n3") STRIPE_GANG("lo1", "n4", "n5", "n6", "n7"),
            STRIPE_GANG("lo2", "n0", "n1", "n2", "n3") STRIPE_GANG("lo3", "n4", "n5", "n6", "n7"),
            HI_GANG("hi0", "2024-01-02") HI_GANG("hi1", "2024-01-03"),
        };
        char *manifests = kb_xasprintf("%s%s%s%s", parts[0], parts[1], parts[2], parts[3]);
        const struct kb_scenario sc = {
            .name = "preempt: a node that gave nothing is not asked again for the same rules",
            .conf = PREEMPT_CONF,
            .manifests = manifests,
            .binds = "",
            .evicted = "lo0-x-0 lo0-x-1 lo0-x-2 lo0-x-3 lo1-x-0 lo1-x-1 lo1-x-2 lo1-x-3",
            .phases = "lo2=Running lo3=Running",
        };
        kb__evict_node_scans = kb__evict_whole_sorts = 0;
        kb_run_scenario(&sc);
        assert_int_equal(kb__evict_node_scans, 24 * KB_TEST_SESSION_RUNS);
        assert_int_equal(kb__evict_whole_sorts, 2 * KB_TEST_SESSION_RUNS);
        free(manifests);
}

/*
 * The cheapest node is found without asking every node for its victims.
 * n0..n3 (2 cpu) each hold one whole gang of two 1-cpu pods (minMember 2,
 * priority 10): g0 made 2024-01-01 on n0, g1 01-04 on n1, g2 01-03 on n2,
 * g3 01-04 on n3.  hi (one 1-cpu pod, priority 1000) waits, and the one
 * queue is at its share, so a node's victims are checked against the
 * queue too.  Any node can give only its whole gang: 2 victims of priority
 * 10, so the cheapest is the newest gang (Volcano's victim order takes the
 * newest first), and of g1 and g3, equal, the first node: n1.  Each node's
 * bound (without the vote) is exact here; asked cheapest bound first: n1,
 * then n3 (equal, not chosen), then n2's bound is dearer than n1's offer
 * and the search stops.  2 nodes asked a run (a scan asks 4), 4 in the two
 * runs.  Session 2: hi-x-0 binds to n1.
 */
#define WHOLE_GANG(g, node, day) PG(g, "2", "2024-01-" day, ", priorityClassName: lo") \
        RUN_POD(g "-x-0", g, node, "1", ", creationTimestamp: '2024-01-" day "T00:00:00Z'", LO) \
        RUN_POD(g "-x-1", g, node, "1", ", creationTimestamp: '2024-01-" day "T00:00:00Z'", LO)

static void test_cheapest_node_by_bounds(void **state)
{
        (void)state;
        static const char *const parts[] = {
            NODE_RES("n0", "2", "8Gi", "110") NODE_RES("n1", "2", "8Gi", "110")
                NODE_RES("n2", "2", "8Gi", "110") NODE_RES("n3", "2", "8Gi", "110") CLASSES,
            WHOLE_GANG("g0", "n0", "01") WHOLE_GANG("g1", "n1", "04"),
            WHOLE_GANG("g2", "n2", "03") WHOLE_GANG("g3", "n3", "04"),
            HI_PG("hi", "1") WAIT_POD("hi-x-0", "hi", "1", "", HI),
        };
        char *manifests = kb_xasprintf("%s%s%s%s", parts[0], parts[1], parts[2], parts[3]);
        const struct kb_scenario sc = {
            .name = "preempt: the cheapest node is found without asking every node",
            .conf = PREEMPT_CONF,
            .sessions = 2,
            .manifests = manifests,
            .binds = "hi-x-0=n1",
            .evicted = "g1-x-0 g1-x-1",
        };
        kb__evict_offers = 0;
        kb_run_scenario(&sc);
        assert_int_equal(kb__evict_offers, 4 * KB_TEST_SESSION_RUNS);
        free(manifests);
}

TABLE_TEST(preempt)
TABLE_TEST(reclaim)
TABLE_TEST(kube_batch)
TABLE_TEST(topology_aware)

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_preempt),
            cmocka_unit_test(test_reclaim),
            cmocka_unit_test(test_kube_batch),
            cmocka_unit_test(test_topology_aware),
            cmocka_unit_test(test_memo_per_rule_set),
            cmocka_unit_test(test_cheapest_node_by_bounds),
        };
        return cmocka_run_group_tests_name("evict", tests, NULL, NULL);
}
