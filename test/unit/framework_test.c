/*
 * The framework's own rules: how tiers combine plugin answers, the default
 * orders, statements' undo, the heap, and — on random clusters — that the
 * node-selection caches place every task exactly where a full scan would.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"
#include "sim/sim.h"

/* ---- dispatchers ----------------------------------------------------------- */

/* A session opened on an empty snapshot with an empty conf: enough to
 * register callbacks and dispatch.  Tiers are set as the session sets them
 * while plugins open (kb__points_begin). */
static const struct kb_conf empty_conf;
static const struct kb_snapshot empty_snap;
static struct kb_result bare_result;

static struct kb_session *bare_session(void)
{
        return kb_session_open(&empty_snap, &empty_conf, &bare_result);
}

static void bare_free(struct kb_session *s)
{
        kb_session_close(s);
        kb_result_release(&bare_result);
}

static int vote_arg(void *arg, const struct kb_job *j)
{
        (void)j;
        return *(int *)arg;
}

/* Registers one vote per entry: votes[t][p] in tier t; 9 ends a tier. */
static bool pipelined_with(const int *votes, size_t n)
{
        struct kb_session *s = bare_session();
        struct kb_job j;
        memset(&j, 0, sizeof(j));
        int tier = 0;
        for (size_t i = 0; i < n; i++) {
                if (votes[i] == 9) {
                        tier++;
                        continue;
                }
                kb__points_begin(s, tier, NULL);
                kb_on_job_pipelined(s, vote_arg, (void *)&votes[i]);
        }
        bool r = kb_job_pipelined(s, &j);
        bare_free(s);
        return r;
}

static void test_votes(void **state)
{
        (void)state;
        /* Nobody has an opinion: yes. */
        assert_true(pipelined_with(NULL, 0));
        /* A reject anywhere before a deciding tier ends it: no. */
        const int reject_first[] = {-1, 1};
        assert_false(pipelined_with(reject_first, 2));
        /* Within a tier, a later reject still wins over an earlier permit. */
        const int permit_then_reject[] = {1, -1};
        assert_false(pipelined_with(permit_then_reject, 2));
        /* Tier 1 permits, so tier 2's reject is never asked. */
        const int tier_decides[] = {1, 0, 9, -1};
        assert_true(pipelined_with(tier_decides, 4));
        /* Tier 1 abstains entirely: tier 2's reject counts. */
        const int abstain_then_reject[] = {0, 0, 9, -1};
        assert_false(pipelined_with(abstain_then_reject, 4));
        /* Everyone abstains: yes. */
        const int all_abstain[] = {0, 9, 0};
        assert_true(pipelined_with(all_abstain, 3));
}

static int order_by_arg(void *arg, const struct kb_job *l, const struct kb_job *r)
{
        (void)l;
        (void)r;
        return *(int *)arg;
}

static void test_order_first_opinion(void **state)
{
        (void)state;
        struct kb_session *s = bare_session();
        struct kb_job a, b;
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        a.name = "ns/b-job";
        b.name = "ns/a-job";
        /* No plugin: creation time first, then name. */
        a.creation = 1;
        b.creation = 2;
        assert_true(kb_job_order(s, &a, &b) < 0);
        a.creation = b.creation = 5;
        assert_true(kb_job_order(s, &a, &b) > 0); /* "ns/a-job" first */
        /* A plugin without an opinion, then one that puts b first, then one
         * that would put a first: the first opinion wins. */
        static int zero = 0, pos = 1, neg = -1;
        kb_on_job_order(s, order_by_arg, &zero);
        kb_on_job_order(s, order_by_arg, &pos);
        kb_on_job_order(s, order_by_arg, &neg);
        assert_true(kb_job_order(s, &a, &b) > 0);
        bare_free(s);
}

static bool overused_arg(void *arg, const struct kb_queue_info *q)
{
        (void)q;
        return *(bool *)arg;
}

static bool ready_arg(void *arg, const struct kb_job *j)
{
        (void)j;
        return *(bool *)arg;
}

static void test_any_and_all(void **state)
{
        (void)state;
        static bool yes = true, no = false;
        struct kb_session *s = bare_session();
        struct kb_queue_info q;
        struct kb_job j;
        memset(&q, 0, sizeof(q));
        memset(&j, 0, sizeof(j));
        /* overused: any plugin saying yes is enough. */
        assert_false(kb_overused(s, &q));
        kb_on_overused(s, overused_arg, &no);
        assert_false(kb_overused(s, &q));
        kb_on_overused(s, overused_arg, &yes);
        assert_true(kb_overused(s, &q));
        /* jobReady: every plugin must agree. */
        assert_true(kb_job_ready(s, &j));
        kb_on_job_ready(s, ready_arg, &yes);
        assert_true(kb_job_ready(s, &j));
        kb_on_job_ready(s, ready_arg, &no);
        assert_false(kb_job_ready(s, &j));
        /* jobStarving: false when nobody answers, else all of the first
         * answering tier must agree; later tiers are not asked. */
        assert_false(kb_job_starving(s, &j));
        kb_on_job_starving(s, ready_arg, &yes);
        assert_true(kb_job_starving(s, &j));
        kb__points_begin(s, 1, NULL);
        kb_on_job_starving(s, ready_arg, &no);
        assert_true(kb_job_starving(s, &j));
        bare_free(s);
        s = bare_session();
        kb_on_job_starving(s, ready_arg, &yes);
        kb_on_job_starving(s, ready_arg, &no);
        assert_false(kb_job_starving(s, &j));
        bare_free(s);
}

/* Victims: first tier with an opinion; intersection within it. */
static int victims_mask(void *arg, const struct kb_task *p, struct kb_task *const *cand, size_t n,
                        struct kb_task **out)
{
        (void)p;
        unsigned mask = *(unsigned *)arg;
        if (mask == 0xffffffffu)
                return -1; /* no opinion */
        int k = 0;
        for (size_t i = 0; i < n; i++)
                if (mask & (1u << cand[i]->index))
                        out[k++] = cand[i];
        return k;
}

static void test_victims(void **state)
{
        (void)state;
        static unsigned none = 0xffffffffu, m0110 = 0x6, m0011 = 0x3, m1000 = 0x8;
        struct kb_session *s = bare_session();
        struct kb_task tasks[4], *cand[4], *out[4], preemptor;
        memset(tasks, 0, sizeof(tasks));
        for (int i = 0; i < 4; i++) {
                tasks[i].index = (uint32_t)i;
                cand[i] = &tasks[i];
        }
        kb__points_begin(s, 0, NULL);
        kb_on_preemptable(s, victims_mask, &none, 0);
        kb__points_begin(s, 1, NULL);
        kb_on_preemptable(s, victims_mask, &m0110, 0);
        kb_on_preemptable(s, victims_mask, &m0011, 0);
        kb__points_begin(s, 2, NULL);
        kb_on_preemptable(s, victims_mask, &m1000, 0);
        /* Tier 0 has no opinion; tier 1 intersects {1,2} and {0,1} = {1};
         * tier 2 is never asked. */
        size_t n = kb_preemptable(s, &preemptor, cand, 4, out);
        assert_int_equal(n, 1);
        assert_ptr_equal(out[0], &tasks[1]);
        bare_free(s);

        /* Volcano master: a plugin naming no victim empties its tier, and
         * the next tier decides. */
        static unsigned empty = 0;
        s = bare_session();
        kb__points_begin(s, 0, NULL);
        kb_on_preemptable(s, victims_mask, &m0110, 0);
        kb_on_preemptable(s, victims_mask, &empty, 0);
        kb_on_preemptable(s, victims_mask, &m0011, 0); /* not asked */
        kb__points_begin(s, 1, NULL);
        kb_on_preemptable(s, victims_mask, &m1000, 0);
        n = kb_preemptable(s, &preemptor, cand, 4, out);
        assert_int_equal(n, 1);
        assert_ptr_equal(out[0], &tasks[3]);
        bare_free(s);

        /* ... and an intersection that comes out empty lets the next plugin
         * of the tier start afresh: {1,2} & {3} = {}, then {0,1}. */
        s = bare_session();
        kb_on_preemptable(s, victims_mask, &m0110, 0);
        kb_on_preemptable(s, victims_mask, &m1000, 0);
        kb_on_preemptable(s, victims_mask, &m0011, 0);
        n = kb_preemptable(s, &preemptor, cand, 4, out);
        assert_int_equal(n, 2);
        assert_ptr_equal(out[0], &tasks[0]);
        assert_ptr_equal(out[1], &tasks[1]);
        bare_free(s);

        /* A veto (KB_VETO) holds in every tier: tier 0 protects task 1 and
         * names no victim (so tier 1 decides), tier 1 names {1,2}: {2}. */
        static unsigned m1101 = 0xd;
        s = bare_session();
        kb_on_preemptable(s, victims_mask, &m1101, KB_VETO);
        kb_on_preemptable(s, victims_mask, &empty, 0);
        kb__points_begin(s, 1, NULL);
        kb_on_preemptable(s, victims_mask, &m0110, 0);
        n = kb_preemptable(s, &preemptor, cand, 4, out);
        assert_int_equal(n, 1);
        assert_ptr_equal(out[0], &tasks[2]);
        bare_free(s);

        /* Reclaimable (kbatch): every opinion in every tier must agree;
         * tier 0's {1,2} and tier 1's {0,1}: {1}; abstaining counts for
         * nothing; one plugin naming none leaves none. */
        s = bare_session();
        kb_on_reclaimable(s, victims_mask, &m0110);
        kb__points_begin(s, 1, NULL);
        kb_on_reclaimable(s, victims_mask, &none);
        kb_on_reclaimable(s, victims_mask, &m0011);
        n = kb_reclaimable(s, &preemptor, cand, 4, out);
        assert_int_equal(n, 1);
        assert_ptr_equal(out[0], &tasks[1]);
        kb_on_reclaimable(s, victims_mask, &empty);
        assert_int_equal(kb_reclaimable(s, &preemptor, cand, 4, out), 0);
        bare_free(s);
}

static int victim_tasks_mask(void *arg, struct kb_task *const *cand, size_t n, struct kb_task **out)
{
        unsigned mask = *(unsigned *)arg;
        int k = 0;
        for (size_t i = 0; i < n; i++)
                if (mask & (1u << i))
                        out[k++] = cand[i];
        return k;
}

/* Victim tasks (rescheduling): a union within a tier, in candidate order,
 * each task once; the first tier that names any decides. */
static void test_victim_tasks(void **state)
{
        (void)state;
        static unsigned none = 0, m0110 = 0x6, m0011 = 0x3, m1000 = 0x8;
        struct kb_session *s = bare_session();
        struct kb_task tasks[4], *cand[4], *out[4];
        memset(tasks, 0, sizeof(tasks));
        for (int i = 0; i < 4; i++)
                cand[i] = &tasks[i];
        assert_int_equal(kb_victim_tasks(s, cand, 4, out), 0);
        kb__points_begin(s, 0, NULL);
        kb_on_victim_tasks(s, victim_tasks_mask, &none);
        kb__points_begin(s, 1, NULL);
        kb_on_victim_tasks(s, victim_tasks_mask, &m0110);
        kb_on_victim_tasks(s, victim_tasks_mask, &m0011);
        kb__points_begin(s, 2, NULL);
        kb_on_victim_tasks(s, victim_tasks_mask, &m1000);
        /* Tier 0 names none; tier 1: {1,2} + {0,1} = {0,1,2}. */
        size_t n = kb_victim_tasks(s, cand, 4, out);
        assert_int_equal(n, 3);
        assert_ptr_equal(out[0], &tasks[0]);
        assert_ptr_equal(out[1], &tasks[1]);
        assert_ptr_equal(out[2], &tasks[2]);
        bare_free(s);
}

/* Volcano's CompareTask: job-worker-10 after job-worker-9; without an
 * index (or with equal ones), creation time, then uid. */
static void test_task_default_order(void **state)
{
        (void)state;
        struct kb_session *s = bare_session();
        struct kb_pod p9, p10, px;
        struct kb_task t9, t10, tx;
        memset(&p9, 0, sizeof(p9));
        memset(&p10, 0, sizeof(p10));
        memset(&px, 0, sizeof(px));
        memset(&t9, 0, sizeof(t9));
        memset(&t10, 0, sizeof(t10));
        memset(&tx, 0, sizeof(tx));
        p9.meta.name = "job-worker-9";
        p10.meta.name = "job-worker-10";
        px.meta.name = "lonely";
        p9.meta.creation = 20;
        p10.meta.creation = 10;
        px.meta.creation = 15;
        t9.pod = &p9;
        t10.pod = &p10;
        tx.pod = &px;
        t9.name = "a";
        t10.name = "b";
        tx.name = "c";
        /* As the session makes tasks (open.c). */
        t9.name_index = kb__pod_name_index(p9.meta.name);
        t10.name_index = kb__pod_name_index(p10.meta.name);
        tx.name_index = kb__pod_name_index(px.meta.name);
        assert_int_equal(t9.name_index, 9);
        assert_int_equal(t10.name_index, 10);
        assert_int_equal(tx.name_index, -1);
        /* Two dashes at least, digits only after the last, not too big. */
        assert_int_equal(kb__pod_name_index("job-3"), -1);
        assert_int_equal(kb__pod_name_index("a-b-"), -1);
        assert_int_equal(kb__pod_name_index("a-b-1x"), -1);
        assert_int_equal(kb__pod_name_index("a-b-c-007"), 7);
        assert_int_equal(kb__pod_name_index("a-b-99999999999"), -1);
        /* Numeric index, not string order and not creation. */
        assert_true(kb_task_order(s, &t9, &t10) < 0);
        /* One side without an index: creation time (10 < 15). */
        assert_true(kb_task_order(s, &t10, &tx) < 0);
        /* Priority is the priority plugin's business, not the default
         * order's (Volcano's CompareTask ignores it). */
        t10.priority = 5;
        assert_true(kb_task_order(s, &t9, &t10) < 0);
        /* Equal index and creation: the uid decides. */
        struct kb_pod pa, pb;
        struct kb_task ta, tb;
        memset(&pa, 0, sizeof(pa));
        memset(&pb, 0, sizeof(pb));
        memset(&ta, 0, sizeof(ta));
        memset(&tb, 0, sizeof(tb));
        pa.meta.name = "x-y-1";
        pb.meta.name = "z-w-1";
        pa.meta.uid = "uid-b";
        pb.meta.uid = "uid-a";
        ta.pod = &pa;
        tb.pod = &pb;
        ta.name = "default/x-y-1";
        tb.name = "default/z-w-1";
        ta.name_index = kb__pod_name_index(pa.meta.name);
        tb.name_index = kb__pod_name_index(pb.meta.name);
        assert_true(kb_task_order(s, &tb, &ta) < 0);
        bare_free(s);
}

/* ---- the session model ----------------------------------------------------------- */

/* A cluster loaded from manifests, kept for a test's session. */
struct loaded {
        struct kb_cluster c;
        struct kb_conf conf;
        struct kb_snapshot snap;
        struct kb_result r;
};

static struct kb_session *open_on(struct loaded *l, const char *manifests, const char *conf)
{
        char err[512];
        kb_cluster_init(&l->c);
        assert_int_equal(
            kb_cluster_load(&l->c, "test", manifests, strlen(manifests), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&l->c);
        const char *text = conf ? conf : kb_default_conf_yaml;
        assert_int_equal(kb_conf_parse(text, strlen(text), &l->conf, err, sizeof(err)), 0);
        kb_cluster_snapshot(&l->c, &l->snap);
        return kb_session_open(&l->snap, &l->conf, &l->r);
}

static void close_on(struct loaded *l, struct kb_session *s)
{
        if (s)
                kb_session_close(s);
        kb_result_release(&l->r);
        kb_conf_release(&l->conf);
        kb_cluster_release(&l->c);
}

/* The names on a node's task list, in order, space-separated. */
static void node_list(const struct kb_node_info *n, char *buf, size_t len)
{
        size_t off = 0;
        uint32_t count = 0;
        buf[0] = '\0';
        for (const struct kb_task *t = n->tasks; t; t = t->node_next) {
                off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? " " : "",
                                        t->pod->meta.name);
                count++;
                /* The back links agree with the forward ones. */
                if (t->node_next)
                        assert_ptr_equal(t->node_next->node_prev, t);
                else
                        assert_ptr_equal(n->tasks_tail, t);
                assert_int_equal(t->node, (int32_t)n->index);
        }
        assert_int_equal(count, n->ntasks);
}

static struct kb_task *task_named(struct kb_session *s, const char *name)
{
        size_t njobs;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        for (size_t i = 0; i < njobs; i++)
                for (uint32_t k = 0; k < jobs[i]->ntasks; k++)
                        if (strcmp(jobs[i]->tasks[k]->pod->meta.name, name) == 0)
                                return jobs[i]->tasks[k];
        fail_msg("no task %s", name);
        return NULL;
}

#define MODEL_CLUSTER                                                                              \
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"                                  \
        "status: {allocatable: {cpu: '8', memory: 8Gi, pods: '110'}}\n"                            \
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"                                  \
        "status: {allocatable: {cpu: '8', memory: 8Gi, pods: '110'}}\n"                            \
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: web, labels: {app: web}}\n"              \
        "spec: {schedulerName: default-scheduler, nodeName: n1, priority: 7,\n"                    \
        "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\nstatus: {phase: "          \
        "Running}\n"                                                                               \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"                         \
        "metadata: {name: a}\nspec: {minMember: 1}\n"                                              \
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: a-0, annotations: "                      \
        "{scheduling.k8s.io/group-name: a}}\n"                                                     \
        "spec: {schedulerName: kbatch, nodeName: n2,\n"                                            \
        "  containers: [{name: c, resources: {requests: {cpu: '2'}}}]}\nstatus: {phase: "          \
        "Running}\n"                                                                               \
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: old, deletionTimestamp: "                \
        "'2024-01-01T00:00:00Z'}\n"                                                                \
        "spec: {schedulerName: other, nodeName: n2,\n"                                             \
        "  containers: [{name: c, resources: {requests: {cpu: '3'}}}]}\nstatus: {phase: "          \
        "Running}\n"                                                                               \
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: done}\n"                                 \
        "spec: {schedulerName: other, nodeName: n2,\n"                                             \
        "  containers: [{name: c, resources: {requests: {cpu: '3'}}}]}\n"                          \
        "status: {phase: Succeeded}\n"                                                             \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"                         \
        "metadata: {name: b}\nspec: {minMember: 2}\n"                                              \
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: b-0, annotations: "                      \
        "{scheduling.k8s.io/group-name: b}}\n"                                                     \
        "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "        \
        "'1'}}}]}\n"                                                                               \
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: b-1, annotations: "                      \
        "{scheduling.k8s.io/group-name: b}}\n"                                                     \
        "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "        \
        "'1'}}}]}\n"

/*
 * Every node lists the tasks on it — ours and other schedulers' (with their
 * labels and priority), bound, running, releasing — but not finished ones;
 * statements keep the lists and the sums current and discard restores both.
 */
static void test_node_task_lists(void **state)
{
        (void)state;
        struct loaded l;
        struct kb_session *s = open_on(&l, MODEL_CLUSTER, NULL);
        size_t nn;
        struct kb_node_info *nodes = kb_session_nodes(s, &nn);
        char buf[256];
        assert_int_equal(nn, 2);
        node_list(&nodes[0], buf, sizeof(buf));
        assert_string_equal(buf, "web");
        node_list(&nodes[1], buf, sizeof(buf));
        assert_string_equal(buf, "a-0 old");

        /* Another scheduler's pod: no job, but its labels and priority. */
        const struct kb_task *web = nodes[0].tasks;
        assert_null(web->job);
        assert_string_equal(kb_meta_label(&web->pod->meta, "app"), "web");
        assert_int_equal(web->priority, 7);
        assert_int_equal(web->status, KB_TASK_RUNNING);
        assert_int_equal(nodes[1].tasks_tail->status, KB_TASK_RELEASING);
        /* n2: a-0 (2) and old (3, releasing) are used; old is releasing. */
        assert_int_equal(nodes[1].used.q[KB_RES_CPU], 5000);
        assert_int_equal(nodes[1].releasing.q[KB_RES_CPU], 3000);
        assert_int_equal(nodes[1].idle.q[KB_RES_CPU], 3000);

        struct kb_node_info before[2];
        memcpy(before, nodes, sizeof(before));
        struct kb_task *b0 = task_named(s, "b-0"), *b1 = task_named(s, "b-1");
        struct kb_task *a0 = task_named(s, "a-0");
        struct kb_statement *st = kb_statement_new(s);
        kb_statement_allocate(st, b0, &nodes[0]);
        kb_statement_pipeline(st, b1, &nodes[1]);
        kb_statement_evict(st, a0, "preempt", "test", NULL);
        node_list(&nodes[0], buf, sizeof(buf));
        assert_string_equal(buf, "web b-0");
        node_list(&nodes[1], buf, sizeof(buf));
        assert_string_equal(buf, "a-0 old b-1");
        assert_int_equal(b0->status, KB_TASK_ALLOCATED);
        assert_int_equal(b1->status, KB_TASK_PIPELINED);
        assert_int_equal(a0->status, KB_TASK_RELEASING);
        assert_int_equal(nodes[0].idle.q[KB_RES_CPU], 6000);
        assert_int_equal(nodes[1].pipelined.q[KB_RES_CPU], 1000);
        assert_int_equal(nodes[1].releasing.q[KB_RES_CPU], 5000);
        assert_int_equal(b0->job->count[KB_TASK_ALLOCATED], 1);

        kb_statement_discard(st);
        node_list(&nodes[0], buf, sizeof(buf));
        assert_string_equal(buf, "web");
        node_list(&nodes[1], buf, sizeof(buf));
        assert_string_equal(buf, "a-0 old");
        assert_int_equal(b0->status, KB_TASK_PENDING);
        assert_int_equal(b0->node, -1);
        assert_int_equal(a0->status, KB_TASK_RUNNING);
        for (int i = 0; i < 2; i++) {
                assert_memory_equal(&nodes[i].idle, &before[i].idle, sizeof(struct kb_res));
                assert_memory_equal(&nodes[i].used, &before[i].used, sizeof(struct kb_res));
                assert_memory_equal(&nodes[i].releasing, &before[i].releasing,
                                    sizeof(struct kb_res));
                assert_memory_equal(&nodes[i].pipelined, &before[i].pipelined,
                                    sizeof(struct kb_res));
        }
        assert_int_equal(b0->job->count[KB_TASK_PENDING], 2);
        close_on(&l, s);
}

/* Lone pods that differ one placement field at a time, classed one after
 * another as allocate classes a job's tasks. */
#define CLASS_POD(name, extra, cpu)                                                                \
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\n"                             \
        "spec: {schedulerName: kbatch, " extra "containers: [{name: c, image: img,\n"              \
        "  resources: {requests: {cpu: '" cpu "'}}}]}\n"
#define AFFINITY                                                                                   \
        "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "               \
        "{nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}}, "

/*
 * Placement classes: tasks share one exactly when their placement fields
 * are equal, whatever task was classed just before (class.c tells most
 * from the task before without a key).
 */
static void test_placement_classes(void **state)
{
        (void)state;
        struct loaded l;
        /* clang-format off */
        static const char manifests[] =
            "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
            "status: {allocatable: {cpu: '8', memory: 8Gi, pods: '110'}}\n"
            CLASS_POD("p-a", "", "1")
            CLASS_POD("p-b", "", "1")
            CLASS_POD("p-c", "tolerations: [{key: x, operator: Exists}], ", "1")
            CLASS_POD("p-d", "tolerations: [{key: x, operator: Exists, effect: NoSchedule}], ", "1")
            CLASS_POD("p-e", "tolerations: [{key: x, operator: Exists, effect: NoSchedule}], ", "1")
            CLASS_POD("p-f", "nodeSelector: {zone: a}, ", "1")
            CLASS_POD("p-g", "nodeSelector: {zone: b}, ", "1")
            CLASS_POD("p-h", "nodeSelector: {zone: b}, ", "1")
            CLASS_POD("p-i", "", "2")
            CLASS_POD("p-j", AFFINITY, "1")
            CLASS_POD("p-k", AFFINITY, "1")
            CLASS_POD("p-l", "", "1");
        /* clang-format on */
        struct kb_session *s = open_on(&l, manifests, NULL);
        static const char *const names[] = {"p-a", "p-b", "p-c", "p-d", "p-e", "p-f",
                                            "p-g", "p-h", "p-i", "p-j", "p-k", "p-l"};
        /* Tasks of equal placement fields share a letter. */
        static const char same[] = "aabccdeefgga";
        uint32_t cls[KB_ARRAY_SIZE(names)];
        for (size_t i = 0; i < KB_ARRAY_SIZE(names); i++)
                cls[i] = kb_task_class(s, task_named(s, names[i]));
        for (size_t i = 0; i < KB_ARRAY_SIZE(names); i++)
                for (size_t k = 0; k < i; k++)
                        if ((cls[i] == cls[k]) != (same[i] == same[k]))
                                fail_msg("%s and %s: classes %u and %u", names[k], names[i], cls[k],
                                         cls[i]);
        /* p-l (plain again, after an affinity pod) joins p-a's class. */
        assert_int_equal(cls[11], cls[0]);
        close_on(&l, s);
}

/* The lifecycle pair: open, one action by hand, close, gives what
 * kb_session_run gives. */
static void test_session_lifecycle(void **state)
{
        (void)state;
        struct loaded l;
        struct kb_session *s = open_on(&l, MODEL_CLUSTER, NULL);
        size_t njobs;
        kb_session_jobs(s, &njobs);
        assert_int_equal(njobs, 2); /* a and b; foreign pods join no job */
        kb_action_find("enqueue")->execute(s);
        kb_action_find("allocate")->execute(s);
        kb_session_close(s);
        /* b-0 and b-1 bind together; nothing else. */
        assert_int_equal(l.r.nbinds, 2);
        struct kb_result again;
        assert_int_equal(kb_session_run(&l.snap, &l.conf, &again), 0);
        assert_int_equal(again.nbinds, 2);
        for (size_t i = 0; i < 2; i++) {
                assert_ptr_equal(again.binds[i].pod, l.r.binds[i].pod);
                assert_string_equal(again.binds[i].node, l.r.binds[i].node);
        }
        kb_result_release(&again);
        close_on(&l, NULL);
}

/* ---- the purity contract ----------------------------------------------------------- */

#define PURITY_CLUSTER                                                                             \
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {ok: 'yes'}}\n"             \
        "status: {allocatable: {cpu: '8', memory: 8Gi, pods: '110'}}\n"                            \
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2, labels: {ok: 'yes'}}\n"             \
        "status: {allocatable: {cpu: '8', memory: 8Gi, pods: '110'}}\n"                            \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"                         \
        "metadata: {name: p}\nspec: {minMember: 1}\n"                                              \
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: p}\n"                              \
        "spec:\n  parallelism: 6\n  template:\n"                                                   \
        "    metadata: {annotations: {scheduling.k8s.io/group-name: p}}\n"                         \
        "    spec:\n      schedulerName: kbatch\n"                                                 \
        "      containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"

/* Honest: reads only the node's labels. */
static const char *labelled(void *arg, const struct kb_task *t, const struct kb_node_info *n)
{
        (void)arg;
        (void)t;
        return kb_streq(kb_meta_label(&n->node->meta, "ok"), "yes") ? NULL : "not ok";
}

/* Reads the task's name, which tasks of one class do not share. */
static const char *by_name(void *arg, const struct kb_task *t, const struct kb_node_info *n)
{
        (void)arg;
        (void)n;
        return strstr(t->name, "-3") ? "not for task 3" : NULL;
}

/* Reads the node's accounting: a verdict that changes during the session. */
static const char *busy(void *arg, const struct kb_task *t, const struct kb_node_info *n)
{
        (void)arg;
        (void)t;
        return n->ntasks >= 2 ? "busy" : NULL;
}

/* Scores by task, not by placement spec. */
static double by_index(void *arg, const struct kb_task *t, const struct kb_node_info *n)
{
        (void)arg;
        (void)n;
        return (double)t->index;
}

/* Callbacks a test adds to a session (any may be zero). */
struct extra {
        kb_predicate_fn pred;   /* registered KB_PURE */
        kb_node_order_fn order; /* registered KB_PURE */
        struct kb_filter filter;
        struct kb_batch_scorer scorer;
};

/* Runs allocate over PURITY_CLUSTER with x's callbacks registered; returns
 * the purity violations, and the binds to n2 in *n2 (may be NULL). */
static unsigned checked_run(struct extra x, size_t *n2)
{
        struct loaded l;
        const char *conf = "actions: \"enqueue, allocate\"\n"
                           "tiers:\n- plugins:\n  - name: gang\n"
                           "- plugins:\n  - name: predicates\n  - name: nodeorder\n";
        struct kb_session *s = open_on(&l, PURITY_CLUSTER, conf);
        if (x.pred)
                kb_on_predicate(s, x.pred, NULL, KB_PURE);
        if (x.order)
                kb_on_node_order(s, x.order, NULL, KB_PURE);
        if (x.filter.check)
                kb_on_filter(s, x.filter, NULL);
        if (x.scorer.score)
                kb_on_batch_node_order(s, x.scorer, NULL);
        kb__purity_violations = 0;
        kb__purity_abort = false;
        kb_test_log_start();
        assert_int_equal(kb_session_execute(s), 0);
        kb_test_log_stop();
        kb__purity_abort = true;
        kb_session_close(s);
        for (size_t i = 0; n2 && i < l.r.nbinds; i++)
                *n2 += strcmp(l.r.binds[i].node, "n2") == 0;
        close_on(&l, NULL);
        return kb__purity_violations;
}

static unsigned purity_run(kb_predicate_fn pred, kb_node_order_fn order)
{
        return checked_run((struct extra){.pred = pred, .order = order}, NULL);
}

static void test_purity_contract(void **state)
{
        (void)state;
        /* Honest callbacks: no violation, here or in any scenario test
         * (test builds abort on the first one). */
        assert_int_equal(purity_run(labelled, NULL), 0);
        /* A predicate that reads the task's name answers differently for
         * two tasks of one placement class. */
        assert_true(purity_run(by_name, NULL) > 0);
        /* A predicate that reads the node's accounting changes its verdict
         * during the session. */
        assert_true(purity_run(busy, NULL) > 0);
        /* A node order that reads the task's index. */
        assert_true(purity_run(NULL, by_index) > 0);
}

/* Placement filters and batch scorers: never cached, so they may read
 * anything; but their hints must not hide a node that passes, and a
 * scorer saying its scores do not vary must mean it. */

static bool scope_none(void *arg, const struct kb_task *t, struct kb_filter_hint *h)
{
        (void)arg;
        (void)t;
        (void)h;
        return true;
}

/* Hints that only n2 (index 1) can pass, though busy() lets n1 pass too. */
static bool scope_lies(void *arg, const struct kb_task *t, struct kb_filter_hint *h)
{
        static const uint32_t only_n2[] = {1};
        (void)arg;
        (void)t;
        h->nodes = only_n2;
        h->nnodes = 1;
        return true;
}

static bool never_varies(void *arg, const struct kb_task *t, const uint32_t **nodes, size_t *n)
{
        (void)arg;
        (void)t;
        *nodes = NULL;
        *n = 0;
        return false;
}

/* Prefers n2 strongly. */
static void prefer_n2(void *arg, const struct kb_task *t, struct kb_node_info *const *nodes,
                      size_t n, double *scores)
{
        (void)arg;
        (void)t;
        for (size_t i = 0; i < n; i++)
                scores[i] += nodes[i]->index == 1 ? 1000 : 0;
}

static unsigned filter_run(struct kb_filter f, struct kb_batch_scorer b, size_t *n2_binds)
{
        *n2_binds = 0;
        return checked_run((struct extra){.filter = f, .scorer = b}, n2_binds);
}

static void test_filter_contract(void **state)
{
        (void)state;
        size_t n2;
        /* A filter reading the node's task list, honestly scoped: no
         * violation; each node takes two tasks (busy at 2), four bind. */
        assert_int_equal(
            filter_run((struct kb_filter){scope_none, busy}, (struct kb_batch_scorer){0}, &n2), 0);
        assert_int_equal(n2, 2);
        /* A hint narrower than the truth: the cache misses n1. */
        assert_true(
            filter_run((struct kb_filter){scope_lies, busy}, (struct kb_batch_scorer){0}, &n2) > 0);
        /* An honest batch scorer (varies anywhere): every task on n2. */
        assert_int_equal(
            filter_run((struct kb_filter){0}, (struct kb_batch_scorer){NULL, prefer_n2}, &n2), 0);
        assert_int_equal(n2, 6);
        /* One that says its scores never vary, but they do. */
        assert_true(filter_run((struct kb_filter){0},
                               (struct kb_batch_scorer){never_varies, prefer_n2}, &n2) > 0);
}

/* ---- heap ------------------------------------------------------------------- */

static int int_cmp(void *ctx, const void *a, const void *b)
{
        (void)ctx;
        return *(const int *)a - *(const int *)b;
}

static void test_heap(void **state)
{
        (void)state;
        int vals[200];
        struct kb_heap h;
        kb_heap_init(&h, int_cmp, NULL);
        srand(7);
        for (int i = 0; i < 200; i++) {
                vals[i] = rand() % 1000;
                kb_heap_push(&h, &vals[i]);
        }
        int prev = -1;
        for (int i = 0; i < 200; i++) {
                int *v = kb_heap_pop(&h);
                assert_true(*v >= prev);
                prev = *v;
        }
        assert_null(kb_heap_pop(&h));
        kb_heap_release(&h);
}

/* ---- caches against full scans, on random clusters ---------------------------- */

static char *random_cluster(unsigned seed)
{
        struct kb_buf b;
        kb_buf_init(&b);
        srand(seed);
        int nodes = 3 + rand() % 12;
        for (int i = 0; i < nodes; i++) {
                kb_buf_printf(&b,
                              "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%02d, labels: "
                              "{zone: z%d, size: '%d'}}\n",
                              i, rand() % 3, 1 + rand() % 8);
                if (rand() % 4 == 0)
                        kb_buf_printf(&b,
                                      "spec: {taints: [{key: t, value: v%d, effect: "
                                      "NoSchedule}]}\n",
                                      rand() % 2);
                kb_buf_printf(&b,
                              "status: {allocatable: {cpu: '%d', memory: %dGi, pods: '%d', "
                              "example.com/gpu: '%d'}}\n",
                              2 + rand() % 14, 4 + rand() % 60, 3 + rand() % 20, rand() % 3);
        }
        kb_buf_adds(&b, "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                        "metadata: {name: qa}\nspec: {weight: 2}\n"
                        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                        "metadata: {name: qb}\nspec: {weight: 1}\n");
        int groups = 2 + rand() % 12;
        for (int g = 0; g < groups; g++) {
                int size = 1 + rand() % 6;
                int min = 1 + rand() % size;
                kb_buf_printf(&b,
                              "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                              "metadata: {name: g%02d, creationTimestamp: "
                              "'2024-01-01T00:00:%02dZ'}\nspec: {minMember: %d, queue: %s}\n",
                              g, rand() % 60, min, rand() % 2 ? "qa" : "qb");
                for (int p = 0; p < size; p++) {
                        kb_buf_printf(&b,
                                      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: "
                                      "g%02d-%d, annotations: {scheduling.k8s.io/group-name: "
                                      "g%02d}}\nspec:\n  schedulerName: kbatch\n",
                                      g, p, g);
                        if (rand() % 4 == 0)
                                kb_buf_printf(&b, "  nodeSelector: {zone: z%d}\n", rand() % 3);
                        if (rand() % 4 == 0)
                                kb_buf_adds(&b, "  tolerations: [{key: t, operator: Exists}]\n");
                        if (rand() % 5 == 0)
                                kb_buf_printf(&b,
                                              "  affinity: {nodeAffinity: "
                                              "{preferredDuringSchedulingIgnoredDuringExecution: "
                                              "[{weight: %d, preference: {matchExpressions: [{key: "
                                              "size, operator: Gt, values: ['%d']}]}}]}}\n",
                                              1 + rand() % 100, rand() % 8);
                        if (rand() % 6 == 0) {
                                kb_buf_adds(&b, "  containers: [{name: c}]\n");
                        } else {
                                kb_buf_printf(&b,
                                              "  containers: [{name: c, resources: {requests: "
                                              "{cpu: '%dm', memory: %dMi%s}}}]\n",
                                              100 + rand() % 3000, 100 + rand() % 8000,
                                              rand() % 5 == 0 ? ", example.com/gpu: '1'" : "");
                        }
                }
        }
        return kb_buf_detach(&b);
}

static void test_caches_match_full_scan(void **state)
{
        (void)state;
        const char *binpack = "actions: \"enqueue, allocate, backfill\"\n"
                              "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n"
                              "- plugins:\n  - name: drf\n  - name: predicates\n"
                              "  - name: proportion\n  - name: nodeorder\n"
                              "    arguments: {leastrequested.weight: 0, mostrequested.weight: 2}\n"
                              "  - name: binpack\n"
                              "    arguments: {binpack.resources: example.com/gpu}\n";
        const char *confs[] = {kb_default_conf_yaml, binpack};
        int total_binds = 0;
        for (unsigned seed = 1; seed <= 60; seed++) {
                char *m = random_cluster(seed);
                for (size_t c = 0; c < KB_ARRAY_SIZE(confs); c++) {
                        char *cached = kb_test_run_binds(m, confs[c], false, 2);
                        char *full = kb_test_run_binds(m, confs[c], true, 2);
                        if (strcmp(cached, full) != 0) {
                                fprintf(stderr, "seed %u conf %zu:\ncached: %s\nfull:   %s\n", seed,
                                        c, cached, full);
                                fail();
                        }
                        for (const char *p = cached; (p = strchr(p, '=')); p++)
                                total_binds++;
                        free(cached);
                        free(full);
                }
                free(m);
        }
        /* The clusters must actually place things for the comparison to
         * mean anything. */
        assert_true(total_binds > 300);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_votes),
            cmocka_unit_test(test_order_first_opinion),
            cmocka_unit_test(test_any_and_all),
            cmocka_unit_test(test_victims),
            cmocka_unit_test(test_victim_tasks),
            cmocka_unit_test(test_task_default_order),
            cmocka_unit_test(test_node_task_lists),
            cmocka_unit_test(test_placement_classes),
            cmocka_unit_test(test_session_lifecycle),
            cmocka_unit_test(test_purity_contract),
            cmocka_unit_test(test_filter_contract),
            cmocka_unit_test(test_heap),
            cmocka_unit_test(test_caches_match_full_scan),
        };
        return cmocka_run_group_tests_name("framework", tests, NULL, NULL);
}
