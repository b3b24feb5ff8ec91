/*
 * Queue quotas beyond the scenario tables: capacity's reclaimable,
 * preemptive and overused on hand-built candidates (test/unit/evict_test.c
 * runs them through the reclaim action), the conf rules
 * capacity brings (enableHierarchy, proportion and capacity together), and
 * what sessions publish about queues (deserved shares, a Closing queue
 * becoming Closed).  Expectations are worked out by hand in the comments,
 * from plugins/capacity.c's banner.
 *
 * The capacity tests open a session whose only tier is capacity, so the
 * framework's dispatchers (kb_reclaimable, kb_preemptive, kb_overused)
 * answer with capacity's own answer (kb_reclaimable in the candidates'
 * order).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "actions/actions-int.h"
#include "framework/framework.h"
#include "manifests.h"
#include "sim/sim.h"

/* clang-format off */
#define N16 NODE_RES("n1", "16", "64Gi", "110")
#define GROUP(name, queue, phase) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
        "metadata: {name: " name "}\nspec: {minMember: 1, queue: " queue "}\n" \
        "status: {phase: " phase "}\n"
/* A pod of group g asking requests ("{cpu: '1'}"), running on n1 or
 * pending. */
#define RUN(name, g, requests) \
        POD(name, IN_GROUP(g), "  schedulerName: kbatch\n  nodeName: n1\n" \
            "  containers: [{name: c, resources: {requests: " requests "}}]\n", "phase: Running")
#define WAIT(name, g, requests) \
        POD(name, IN_GROUP(g), "  schedulerName: kbatch\n" \
            "  containers: [{name: c, resources: {requests: " requests "}}]\n", "")
#define CPU1 "{cpu: '1', memory: 1Gi}"
#define ONLY_CAPACITY(extra) \
        "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: capacity\n" extra
/* clang-format on */

struct fixture {
        struct kb_cluster c;
        struct kb_conf conf;
        struct kb_snapshot snap;
        struct kb_result r;
        struct kb_session *s;
};

static void open_session(struct fixture *f, const char *conf, const char *manifests)
{
        char err[512];
        kb_cluster_init(&f->c);
        f->c.now = 1.8e9;
        assert_int_equal(
            kb_cluster_load(&f->c, "test", manifests, strlen(manifests), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&f->c);
        if (kb_conf_parse(conf, strlen(conf), &f->conf, err, sizeof(err))) {
                fprintf(stderr, "conf: %s\n", err);
                fail();
        }
        kb_cluster_snapshot(&f->c, &f->snap);
        f->s = kb_session_open(&f->snap, &f->conf, &f->r);
}

static void close_session(struct fixture *f)
{
        kb_session_close(f->s);
        kb_result_release(&f->r);
        kb_conf_release(&f->conf);
        kb_cluster_release(&f->c);
}

static struct kb_task *task(struct fixture *f, const char *pod)
{
        size_t njobs;
        struct kb_job **jobs = kb_session_jobs(f->s, &njobs);
        for (size_t j = 0; j < njobs; j++)
                for (uint32_t i = 0; i < jobs[j]->ntasks; i++)
                        if (strcmp(jobs[j]->tasks[i]->pod->meta.name, pod) == 0)
                                return jobs[j]->tasks[i];
        fprintf(stderr, "no task %s\n", pod);
        fail();
        return NULL;
}

/* The victims capacity picks for the reclaimer among the candidates (pod
 * names separated by spaces), in its order, as "a b c". */
static char *victims(struct fixture *f, const char *reclaimer, const char *candidates)
{
        struct kb_task *cand[32], *out[32];
        size_t n = 0;
        char *copy = kb_xstrdup(candidates), *save = NULL;
        for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
                cand[n++] = task(f, tok);
        free(copy);
        size_t k = kb_reclaimable(f->s, task(f, reclaimer), cand, n, out);
        struct kb_buf b;
        kb_buf_init(&b);
        for (size_t i = 0; i < k; i++)
                kb_buf_printf(&b, "%s%s", i ? " " : "", out[i]->pod->meta.name);
        return kb_buf_detach(&b);
}

static int by_name(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Names sorted, as "a b c". */
static char *sorted(const char *names)
{
        char *copy = kb_xstrdup(names), *save = NULL, *tok[32];
        size_t n = 0;
        for (char *t = strtok_r(copy, " ", &save); t && n < 32; t = strtok_r(NULL, " ", &save))
                tok[n++] = t;
        qsort(tok, n, sizeof(*tok), by_name);
        struct kb_buf b;
        kb_buf_init(&b);
        for (size_t i = 0; i < n; i++)
                kb_buf_printf(&b, "%s%s", i ? " " : "", tok[i]);
        free(copy);
        return kb_buf_detach(&b);
}

/* kb_reclaimable answers in the candidates' order (its victims are every
 * plugin's consent; the action sorts them itself), so the victims are
 * compared as sets: which ones capacity gives up is what its walk order
 * decides, and that is what the expectations below work out. */
static void expect_victims(struct fixture *f, const char *reclaimer, const char *candidates,
                           const char *want)
{
        char *got = victims(f, reclaimer, candidates);
        char *g = sorted(got), *w = sorted(want);
        if (strcmp(g, w))
                fprintf(stderr, "victims: got \"%s\", want \"%s\"\n", got, want);
        assert_string_equal(g, w);
        free(got);
        free(g);
        free(w);
}

/*
 * Flat queues on a 16-cpu node.  r (deserves 4) reclaims for gr-0, which
 * asks 1 cpu and nothing else.  a deserves 2 and runs ga-0 .. ga-3 (1 cpu
 * each); b deserves and is guaranteed 2 and runs gb-0 (1 cpu) and gb-1 (2
 * cpu); e deserves nothing and runs ge-0; m deserves 4 and runs gm-0,
 * which asks memory only.
 * Victim order: reverse queue order.  Shares: a 4/2 = 2, b 3/2 = 1.5,
 * e 1 (deserves nothing), m 0 and r 0 (m first by name): the walk goes a,
 * b, e, m, each job's tasks last index first.
 *   ga-3: a holds 4 > 2 deserved: victim, a's copy 3; ga-2: 3 > 2, victim,
 *   2; ga-1, ga-0: 2 > 2 fails.
 *   gb-1 (2 cpu): b would keep 3 - 2 = 1 < its guarantee 2: kept.
 *   gb-0: 3 - 1 = 2 keeps the guarantee, 3 > 2: victim.
 *   ge-0: e deserves nothing it uses: an immediate victim.
 *   gm-0: shares no resource with gr-0 (pods aside): skipped.
 */
/* clang-format off */
static const char flat_queues[] =
    N16 QUEUE("r", "deserved: {cpu: '4'}", "") QUEUE("a", "deserved: {cpu: '2'}", "")
    QUEUE("b", "deserved: {cpu: '2'}, guarantee: {resource: {cpu: '2'}}", "")
    QUEUE("e", "", "") QUEUE("m", "deserved: {cpu: '4'}", "")
    GROUP("gr", "r", "Inqueue") WAIT("gr-0", "gr", "{cpu: '1'}")
    GROUP("ga", "a", "Running") RUN("ga-0", "ga", CPU1) RUN("ga-1", "ga", CPU1)
    RUN("ga-2", "ga", CPU1) RUN("ga-3", "ga", CPU1)
    GROUP("gb", "b", "Running") RUN("gb-0", "gb", CPU1) RUN("gb-1", "gb", "{cpu: '2', memory: 1Gi}")
    GROUP("ge", "e", "Running") RUN("ge-0", "ge", CPU1)
    GROUP("gm", "m", "Running") RUN("gm-0", "gm", "{memory: 1Gi}");
/* clang-format on */

static void test_reclaimable_flat(void **state)
{
        (void)state;
        struct fixture f;
        open_session(&f, ONLY_CAPACITY(""), flat_queues);
        expect_victims(&f, "gr-0", "gm-0 ge-0 gb-0 gb-1 ga-0 ga-1 ga-2 ga-3",
                       "ga-3 ga-2 gb-0 ge-0");
        /* Candidates are weighed against the queue as it is, one list at a
         * time: a alone gives the same two. */
        expect_victims(&f, "gr-0", "ga-0 ga-1 ga-2 ga-3", "ga-3 ga-2");
        close_session(&f);
}

/*
 * root -> p (deserves 2) -> {r, v1} and root -> v2; r, v1 and v2 deserve
 * 1 cpu each; v1 and v2 run two 1-cpu tasks each.  Queue order: r (0),
 * then v1 (its side, p, at 2/2 = 1) before v2 (2/1 = 2).  With hierarchy
 * the queue closer to the reclaimer's goes first: v1 shares p with r, v2
 * only the root.  Each is 1 above what it deserves: v1j-1, then v2j-1.
 * Without hierarchy (reverse queue order): v2 first.
 */
/* clang-format off */
static const char order_queues[] =
    N16 QUEUE("p", "deserved: {cpu: '2'}", "") QUEUE("r", "parent: p, deserved: {cpu: '1'}", "")
    QUEUE("v1", "parent: p, deserved: {cpu: '1'}", "") QUEUE("v2", "deserved: {cpu: '1'}", "")
    GROUP("gr", "r", "Inqueue") WAIT("gr-0", "gr", CPU1)
    GROUP("v1j", "v1", "Running") RUN("v1j-0", "v1j", CPU1) RUN("v1j-1", "v1j", CPU1)
    GROUP("v2j", "v2", "Running") RUN("v2j-0", "v2j", CPU1) RUN("v2j-1", "v2j", CPU1);
/* clang-format on */

static void test_reclaimable_order(void **state)
{
        (void)state;
        const char *queues = order_queues;
        struct fixture f;
        open_session(&f, ONLY_CAPACITY("    enableHierarchy: true\n"), queues);
        expect_victims(&f, "gr-0", "v2j-0 v2j-1 v1j-0 v1j-1", "v1j-1 v2j-1");
        close_session(&f);
        open_session(&f, ONLY_CAPACITY(""), queues);
        expect_victims(&f, "gr-0", "v2j-0 v2j-1 v1j-0 v1j-1", "v2j-1 v1j-1");
        close_session(&f);
}

/*
 * root -> {p -> v, r}: v deserves 1 and runs three 1-cpu tasks; r
 * (deserves 5) reclaims.
 *   ancestorReclaimLevel 0: v holds 3 > 1: vj-2, then 2 > 1: vj-1.
 *   level 1, p deserving 3: v's ancestor one level up is p, r's is the
 *   root, so p is checked too: p holds 3 > 3 fails: no victim.
 *   level 1, p deserving 2: vj-2 (v 3 > 1, p 3 > 2), copies 2 and 2; vj-1:
 *   v 2 > 1 but p 2 > 2 fails.
 */
/* clang-format off */
static const char ancestor_queues[] =
    N16 "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: p}\n"
    "spec: {%s}\n"
    QUEUE("v", "parent: p, deserved: {cpu: '1'}", "") QUEUE("r", "deserved: {cpu: '5'}", "")
    GROUP("gr", "r", "Inqueue") WAIT("gr-0", "gr", CPU1)
    GROUP("vj", "v", "Running") RUN("vj-0", "vj", CPU1) RUN("vj-1", "vj", CPU1)
    RUN("vj-2", "vj", CPU1);
/* clang-format on */

static void test_reclaimable_ancestors(void **state)
{
        (void)state;
        static const struct {
                const char *conf, *p, *want;
        } cases[] = {
            {"    enableHierarchy: true\n", "deserved: {cpu: '3'}", "vj-2 vj-1"},
            {"    enableHierarchy: true\n    arguments: {ancestorReclaimLevel: 1}\n",
             "deserved: {cpu: '3'}", ""},
            {"    enableHierarchy: true\n    arguments: {ancestorReclaimLevel: 1}\n",
             "deserved: {cpu: '2'}", "vj-2"},
            /* Beyond the tree's depth (2) only the root is up there: as 1. */
            {"    enableHierarchy: true\n    arguments: {ancestorReclaimLevel: 1000000000000}\n",
             "deserved: {cpu: '3'}", ""},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                char conf[256];
                char *manifests = kb_xasprintf(ancestor_queues, cases[i].p);
                snprintf(conf, sizeof(conf), ONLY_CAPACITY("%s"), cases[i].conf);
                struct fixture f;
                open_session(&f, conf, manifests);
                expect_victims(&f, "gr-0", "vj-0 vj-1 vj-2", cases[i].want);
                close_session(&f);
                free(manifests);
        }
}

/*
 * Preemptive: may a queue take a 1-cpu task by eviction?  r1, r2, r3
 * deserve 2 cpu, are capped at 3, and run 1, 2 and 3 tasks:
 *   r1: 1 + 1 = 2 within the capability and, in cpu, within deserved: yes;
 *   r2: 3 within the capability, but above deserved in every resource the
 *       task asks (cpu 3 > 2, memory 3Gi > 0): no;
 *   r3: 4 > 3: no.
 * rc is r1 but Closed: no.
 */
/* clang-format off */
#define RQ "deserved: {cpu: '2'}, capability: {cpu: '3'}"
static const char preemptive_queues[] =
    N16 QUEUE("r1", RQ, "") QUEUE("r2", RQ, "") QUEUE("r3", RQ, "") QUEUE("rc", RQ, "state: Closed")
    GROUP("g1", "r1", "Running") RUN("g1-0", "g1", CPU1) WAIT("g1-1", "g1", CPU1)
    GROUP("g2", "r2", "Running") RUN("g2-0", "g2", CPU1) RUN("g2-1", "g2", CPU1)
    WAIT("g2-2", "g2", CPU1)
    GROUP("g3", "r3", "Running") RUN("g3-0", "g3", CPU1) RUN("g3-1", "g3", CPU1)
    RUN("g3-2", "g3", CPU1) WAIT("g3-3", "g3", CPU1)
    GROUP("gc", "rc", "Running") RUN("gc-0", "gc", CPU1) WAIT("gc-1", "gc", CPU1);
#undef RQ
/* clang-format on */

static void test_preemptive_flat(void **state)
{
        (void)state;
        struct fixture f;
        open_session(&f, ONLY_CAPACITY(""), preemptive_queues);
        static const struct {
                const char *queue, *task;
                bool want;
        } cases[] = {{"r1", "g1-1", true},
                     {"r2", "g2-2", false},
                     {"r3", "g3-3", false},
                     {"rc", "gc-1", false}};
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                struct kb_queue_info *q = kb_session_queue(f.s, cases[i].queue);
                assert_int_equal(kb_preemptive(f.s, q, task(&f, cases[i].task)), cases[i].want);
        }
        close_session(&f);
}

/* clang-format off */
static const char ancestor_preempt[] =
    N16 QUEUE("p", "deserved: {cpu: '4'}", "") QUEUE("q1", "parent: p, deserved: {cpu: '1'}", "")
    QUEUE("s", "parent: p", "") GROUP("g", "q1", "Running") RUN("g-0", "g", CPU1)
    WAIT("g-1", "g", CPU1)
    QUEUE("capped", "parent: p, deserved: {cpu: '4'}, capability: {cpu: '2'}", "")
    GROUP("h", "capped", "Running") RUN("h-0", "h", CPU1) RUN("h-1", "h", CPU1)
    WAIT("h-2", "h", CPU1);
/* clang-format on */

/* root -> p (deserves 4) -> {q1 (deserves 1), s, capped}; q1 runs one
 * 1-cpu task.  Another would put q1 at 2 > 1: q1 itself may not; with
 * ancestorReclaimLevel 1, p at 3 + 1 <= 4 may.  capped deserves 4 but is
 * capped at 2 and runs two: a third is within deserved (3 <= 4) but not
 * within the capability: never (with hierarchy, deserved is not cut to the
 * capability). */
static void test_preemptive_ancestor(void **state)
{
        (void)state;
        static const char *const confs[] = {
            ONLY_CAPACITY("    enableHierarchy: true\n"),
            ONLY_CAPACITY("    enableHierarchy: true\n    arguments: {ancestorReclaimLevel: 1}\n")};
        for (int i = 0; i < 2; i++) {
                struct fixture f;
                open_session(&f, confs[i], ancestor_preempt);
                assert_int_equal(kb_preemptive(f.s, kb_session_queue(f.s, "q1"), task(&f, "g-1")),
                                 i == 1);
                assert_false(kb_preemptive(f.s, kb_session_queue(f.s, "capped"), task(&f, "h-2")));
                close_session(&f);
        }
}

/* clang-format off */
static const char overused_flat[] =
    NODE_RES("n1", "2", "2Gi", "110") QUEUE("full", "", "") QUEUE("other", "", "")
    GROUP("g", "full", "Running") RUN("g-0", "g", CPU1) RUN("g-1", "g", CPU1);
#define OVERUSED_TREE(cap, lspec) \
    NODE_RES("n1", "8", "8Gi", "110") QUEUE("p", "capability: " cap, "") \
    QUEUE("l", "parent: p" lspec, "") \
    QUEUE("m", "parent: p", "") GROUP("g", "l", "Running") RUN("g-0", "g", CPU1) \
    GROUP("h", "m", "Running") RUN("h-0", "h", CPU1)
/* clang-format on */

/*
 * Overused (kbatch's): a queue that could take no task, not even by
 * reclaim.  Flat, on a node of 2 cpu and 2Gi: full holds both (2 cpu,
 * 2Gi): every resource its real capability counts is reached: overused;
 * other holds nothing: not.  With hierarchy, l and m under p (capability 2
 * cpu and 2Gi) hold 1 cpu and 1Gi each: p is full, but l is below its own
 * real capability (p's, handed down) and may still reclaim from m, as
 * Volcano's capacity_test.go ("case3: Can reclaim from other queues when
 * allocated < deserved") does inside a full parent: not overused.  With l
 * capped at 1 cpu and 1Gi itself, l is full: overused.  With l capped in
 * cpu alone (memory has no limit), a task asking memory alone could still
 * go: not overused.
 */
static void test_overused(void **state)
{
        (void)state;
        struct fixture f;
        open_session(&f, ONLY_CAPACITY(""), overused_flat);
        assert_true(kb_overused(f.s, kb_session_queue(f.s, "full")));
        assert_false(kb_overused(f.s, kb_session_queue(f.s, "other")));
        close_session(&f);
        open_session(&f, ONLY_CAPACITY("    enableHierarchy: true\n"),
                     OVERUSED_TREE("{cpu: '2', memory: 2Gi}", ""));
        assert_false(kb_overused(f.s, kb_session_queue(f.s, "l")));
        close_session(&f);
        open_session(
            &f, ONLY_CAPACITY("    enableHierarchy: true\n"),
            OVERUSED_TREE("{cpu: '2', memory: 2Gi}", ", capability: {cpu: '1', memory: 1Gi}"));
        assert_true(kb_overused(f.s, kb_session_queue(f.s, "l")));
        close_session(&f);
        open_session(&f, ONLY_CAPACITY("    enableHierarchy: true\n"),
                     OVERUSED_TREE("{cpu: '2'}", ", capability: {cpu: '1'}"));
        assert_false(kb_overused(f.s, kb_session_queue(f.s, "l")));
        close_session(&f);
}

/* ---- the conf ------------------------------------------------------------------- */

static int parse(const char *text, struct kb_conf *conf, char *err, size_t len)
{
        return kb_conf_parse(text, strlen(text), conf, err, len);
}

static void test_conf(void **state)
{
        (void)state;
        struct kb_conf conf;
        char err[512] = "";
        /* Both quota plugins, in one tier or in two: accepted, as in
         * Volcano (a warning says what it means; capacity_test.c has the
         * votes combined), and nothing is skipped. */
        assert_int_equal(parse("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n"
                               "  - name: proportion\n  - name: capacity\n",
                               &conf, err, sizeof(err)),
                         0);
        assert_int_equal(conf.nskipped, 0);
        kb_conf_release(&conf);
        assert_int_equal(parse("actions: allocate\ntiers:\n- plugins:\n  - name: capacity\n"
                               "- plugins:\n  - name: proportion\n",
                               &conf, err, sizeof(err)),
                         0);
        assert_int_equal(conf.ntiers, 2);
        kb_conf_release(&conf);
        /* capacity and drf act on enableHierarchy (capacity on
         * ancestorReclaimLevel too); nodeorder does not; DRA quotas are
         * Volcano's and skipped when asked for. */
        assert_int_equal(parse("actions: allocate\ntiers:\n- plugins:\n  - name: drf\n"
                               "    enableHierarchy: true\n  - name: capacity\n"
                               "    enableHierarchy: true\n"
                               "    arguments: {ancestorReclaimLevel: 2,\n"
                               "      capacity.DRAConsumableCapacityEnable: false,\n"
                               "      capacity.DynamicResourceAllocationEnable: true}\n"
                               "  - name: nodeorder\n    enableHierarchy: true\n",
                               &conf, err, sizeof(err)),
                         0);
        char summary[256];
        kb_conf_skipped_summary(&conf, summary, sizeof(summary));
        assert_string_equal(summary, "argument capacity capacity.DynamicResourceAllocationEnable, "
                                     "flag nodeorder enableHierarchy");
        assert_true(conf.tiers[0].plugins[0].hierarchy);
        assert_true(conf.tiers[0].plugins[1].hierarchy);
        assert_false(conf.tiers[0].plugins[2].hierarchy);
        kb_conf_release(&conf);
        assert_int_equal(parse("actions: allocate\ntiers:\n- plugins:\n  - name: capacity\n"
                               "    enableHierarchy: yes\n",
                               &conf, err, sizeof(err)),
                         KB_EBADCONF);
        assert_string_equal(err, "tiers[0].plugins[0].enableHierarchy: must be true or false");
}

/* ---- what sessions publish ------------------------------------------------------ */

static const struct kb_queue_status *status_of(const struct kb_result *r, const char *name)
{
        for (size_t i = 0; i < r->nqueues; i++)
                if (strcmp(r->queues[i].name, name) == 0)
                        return &r->queues[i];
        fail();
        return NULL;
}

/* clang-format off */
static const char closed_beside[] =
    NODE_RES("n1", "8", "32Gi", "110") QUEUE("a", "deserved: {cpu: '3'}", "")
    QUEUE("c", "deserved: {cpu: '2'}", "state: Closed")
    GANG("a", "1", "8", "1", ", queue: a") GANG("c", "1", "8", "1", ", queue: c");
/* clang-format on */

/*
 * A Closed queue c with eight pending 1-cpu pods beside a with eight, on 8
 * cpu.  Proportion: a deserves all 8 cpu (c's demand counts nowhere; with
 * it, 4).  Capacity: a deserves its spec.deserved, 3, whatever c asks;
 * c's published share is its own.
 */
static void test_deserved_published(void **state)
{
        (void)state;
        const char *manifests = closed_beside;
        const char *confs[] = {ONLY_CAPACITY(""),
                               "actions: allocate\ntiers:\n- plugins:\n  - name: proportion\n"};
        const int64_t want_a[] = {3000, 8000};
        for (int i = 0; i < 2; i++) {
                struct fixture f;
                open_session(&f, confs[i], manifests);
                assert_int_equal(kb_session_execute(f.s), 0);
                kb_session_close(f.s);
                assert_int_equal(status_of(&f.r, "a")->deserved.q[KB_RES_CPU], want_a[i]);
                kb_result_release(&f.r);
                kb_conf_release(&f.conf);
                kb_cluster_release(&f.c);
        }
}

/* clang-format off */
static const char closing_queues[] =
    NODE("n1") QUEUE("idle", "", "state: Closing") QUEUE("busy", "", "state: Closing")
    QUEUE("waiting", "", "state: Closing") QUEUE("done", "", "state: Closing")
    QUEUE("fresh", "", "") QUEUE("open", "", "state: Open")
    GROUP("r", "busy", "Running") RUN("r-0", "r", CPU1)
    GROUP("w", "waiting", "Pending")
    GROUP("d", "done", "Running")
    POD("d-0", IN_GROUP("d"), "  schedulerName: kbatch\n  nodeName: n1\n" POD_REQ("1"),
        "phase: Succeeded");
/* clang-format on */

/*
 * Queue states after a session: a Closing queue with no work is Closed —
 * idle (no job), done (its one pod succeeded) — and the session says it
 * set the state; busy (a pod running) and waiting (a group with no pod yet)
 * stay Closing; a queue without a state is Open, set by the session; one
 * already Open is left alone (the daemon does not write it back).
 */
static void test_queue_states(void **state)
{
        (void)state;
        static const struct {
                const char *queue;
                enum kb_queue_state state;
                bool changed;
        } want[] = {{"idle", KB_QUEUE_CLOSED, true},   {"done", KB_QUEUE_CLOSED, true},
                    {"busy", KB_QUEUE_CLOSING, false}, {"waiting", KB_QUEUE_CLOSING, false},
                    {"fresh", KB_QUEUE_OPEN, true},    {"open", KB_QUEUE_OPEN, false}};
        struct fixture f;
        open_session(&f, ONLY_CAPACITY(""), closing_queues);
        assert_int_equal(kb_session_execute(f.s), 0);
        kb_session_close(f.s);
        for (size_t i = 0; i < KB_ARRAY_SIZE(want); i++) {
                const struct kb_queue_status *qs = status_of(&f.r, want[i].queue);
                assert_string_equal(kb_queue_state_name(qs->state),
                                    kb_queue_state_name(want[i].state));
                assert_int_equal(qs->state_changed, want[i].changed);
        }
        /* Between simulated sessions the cluster takes the new state. */
        kb_cluster_apply(&f.c, &f.r);
        kb_result_release(&f.r);
        kb_cluster_snapshot(&f.c, &f.snap);
        f.s = kb_session_open(&f.snap, &f.conf, &f.r);
        assert_int_equal(kb_session_queue(f.s, "idle")->state, KB_QUEUE_CLOSED);
        close_session(&f);
}

/* clang-format off */
static const char tree_running[] =
    N16 QUEUE("p", "", "") QUEUE("l1", "parent: p", "") QUEUE("l2", "parent: p", "")
    QUEUE("q", "", "")
    GROUP("r", "l1", "Running") RUN("r-0", "r", CPU1) RUN("r-1", "r", CPU1)
    GROUP("t", "l2", "Running") RUN("t-0", "t", CPU1)
    GROUP("u", "q", "Running") RUN("u-0", "u", CPU1);
/* clang-format on */

/*
 * A parent's allocated in its status is its subtree's.  Under capacity
 * with enableHierarchy, root -> {p -> {l1, l2}, q}: l1 runs 2 cpu, l2 1,
 * q 1; p holds no job itself, so it shows 2 + 1 = 3 cpu; the leaves show
 * their own.  Without the hierarchy (proportion), spec.parent means
 * nothing and p shows 0.
 */
static void test_parent_allocated(void **state)
{
        (void)state;
        const char *confs[] = {ONLY_CAPACITY("    enableHierarchy: true\n"),
                               "actions: allocate\ntiers:\n- plugins:\n  - name: proportion\n"};
        const int64_t want_p[] = {3000, 0};
        for (int i = 0; i < 2; i++) {
                struct fixture f;
                open_session(&f, confs[i], tree_running);
                assert_int_equal(kb_session_execute(f.s), 0);
                kb_session_close(f.s);
                assert_int_equal(status_of(&f.r, "p")->allocated.q[KB_RES_CPU], want_p[i]);
                assert_int_equal(status_of(&f.r, "l1")->allocated.q[KB_RES_CPU], 2000);
                assert_int_equal(status_of(&f.r, "l2")->allocated.q[KB_RES_CPU], 1000);
                assert_int_equal(status_of(&f.r, "q")->allocated.q[KB_RES_CPU], 1000);
                kb_result_release(&f.r);
                kb_conf_release(&f.conf);
                kb_cluster_release(&f.c);
        }
}

/*
 * A queue's refusal is taken for every pending task of the job that asks
 * for the same (actions/tasks.c): the queue is asked once, not once per
 * task, and what the job reports is the same.  n1 and n2 have 16 cpu
 * each; queue q (capability 8 cpu) runs r (8 cpu on n1), so proportion
 * deserves it 8 and it can take nothing more, though n2 is free.  Gang g
 * waits in q with five 1-cpu pods, all alike: allocate asks q about g-0,
 * is refused, and takes that for g-1..g-4.  Gang h (pods of 1, 2, 1, 2
 * and 1 cpu) is asked about pod by pod.  Both report q's numbers.
 */
#define BUSY_QUEUES \
        N16 NODE_RES("n2", "16", "64Gi", "110") QUEUE("q", "weight: 1, capability: {cpu: '8'}", "") \
        GROUP("run", "q", "Running") RUN("r", "run", "{cpu: '8', memory: 1Gi}")
#define ALIKE_CONF \
        "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n" \
        "  - name: proportion\n  - name: predicates\n"
static void test_refusal_taken_for_alike_tasks(void **state)
{
        (void)state;
        static const char manifests[] =
            BUSY_QUEUES
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: g}\nspec: {minMember: 5, queue: q}\nstatus: {phase: Inqueue}\n"
            WAIT("g-0", "g", CPU1) WAIT("g-1", "g", CPU1) WAIT("g-2", "g", CPU1)
            WAIT("g-3", "g", CPU1) WAIT("g-4", "g", CPU1);
        const struct kb_scenario alike = {
            .name = "five alike tasks, one refusal",
            .conf = ALIKE_CONF,
            .manifests = manifests,
            .binds = "",
            .phases = "g=Inqueue",
            .message = "queue q: gang needs cpu 5, deserved 8, allocated 8, capability 8",
        };
        kb__alloc_queue_asks = 0;
        kb_run_scenario(&alike);
        /* Once per session; the runner runs each twice (node search by index
         * and by full scan), each KB_TEST_SESSION_RUNS times. */
        assert_int_equal(kb__alloc_queue_asks, 1 * 2 * KB_TEST_SESSION_RUNS);

        static const char mixed_manifests[] =
            BUSY_QUEUES
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: h}\nspec: {minMember: 5, queue: q}\nstatus: {phase: Inqueue}\n"
            WAIT("h-0", "h", CPU1) WAIT("h-1", "h", "{cpu: '2', memory: 1Gi}")
            WAIT("h-2", "h", CPU1) WAIT("h-3", "h", "{cpu: '2', memory: 1Gi}")
            WAIT("h-4", "h", CPU1);
        const struct kb_scenario mixed = {
            .name = "tasks that differ are asked about one by one",
            .conf = ALIKE_CONF,
            .manifests = mixed_manifests,
            .binds = "",
            .phases = "h=Inqueue",
            .message = "queue q: gang needs cpu 7, deserved 8, allocated 8, capability 8",
        };
        kb__alloc_queue_asks = 0;
        kb_run_scenario(&mixed);
        assert_int_equal(kb__alloc_queue_asks, 5 * 2 * KB_TEST_SESSION_RUNS);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_reclaimable_flat),
            cmocka_unit_test(test_reclaimable_order),
            cmocka_unit_test(test_reclaimable_ancestors),
            cmocka_unit_test(test_preemptive_flat),
            cmocka_unit_test(test_preemptive_ancestor),
            cmocka_unit_test(test_overused),
            cmocka_unit_test(test_conf),
            cmocka_unit_test(test_deserved_published),
            cmocka_unit_test(test_queue_states),
            cmocka_unit_test(test_parent_allocated),
            cmocka_unit_test(test_refusal_taken_for_alike_tasks),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
