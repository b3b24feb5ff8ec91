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

/* A session with no state: enough to register callbacks and dispatch. */
static struct kb_session *bare_session(void)
{
        static const struct kb_conf conf;
        struct kb_session *s = kb_xcalloc(1, sizeof(*s));
        kb_pool_init(&s->pool, 0);
        s->conf = &conf;
        return s;
}

static void bare_free(struct kb_session *s)
{
        free(s->job_order.v);
        free(s->job_pipelined.v);
        free(s->job_enqueueable.v);
        free(s->job_ready.v);
        free(s->job_starving.v);
        free(s->overused.v);
        free(s->preemptable.v);
        free(s->predicate.v);
        free(s->node_order.v);
        kb_pool_release(&s->pool);
        free(s);
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
                s->cur_tier = tier;
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
        /* jobStarving: false when nobody answers, else all must agree. */
        assert_false(kb_job_starving(s, &j));
        kb_on_job_starving(s, ready_arg, &yes);
        assert_true(kb_job_starving(s, &j));
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
                if (mask & (1u << i))
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
        for (int i = 0; i < 4; i++)
                cand[i] = &tasks[i];
        s->cur_tier = 0;
        kb_on_preemptable(s, victims_mask, &none);
        s->cur_tier = 1;
        kb_on_preemptable(s, victims_mask, &m0110);
        kb_on_preemptable(s, victims_mask, &m0011);
        s->cur_tier = 2;
        kb_on_preemptable(s, victims_mask, &m1000);
        /* Tier 0 has no opinion; tier 1 intersects {1,2} and {0,1} = {1};
         * tier 2 is never asked. */
        size_t n = kb_preemptable(s, &preemptor, cand, 4, out);
        assert_int_equal(n, 1);
        assert_ptr_equal(out[0], &tasks[1]);
        bare_free(s);
}

/* The pod-name index rule: job-worker-10 after job-worker-9; without an
 * index, creation time decides. */
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
        /* Numeric index, not string order and not creation. */
        assert_true(kb_task_order(s, &t9, &t10) < 0);
        /* One side without an index: creation time (10 < 15). */
        assert_true(kb_task_order(s, &t10, &tx) < 0);
        /* Priority beats everything. */
        t10.priority = 5;
        assert_true(kb_task_order(s, &t10, &t9) < 0);
        bare_free(s);
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

static char *run_binds(const char *manifests, const char *conf_text, bool full_scan, int sessions)
{
        struct kb_cluster c;
        struct kb_conf conf;
        char err[512];
        struct kb_buf out;
        kb_buf_init(&out);
        kb_cluster_init(&c);
        assert_int_equal(
            kb_cluster_load(&c, "random", manifests, strlen(manifests), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&c);
        assert_int_equal(kb_conf_parse(conf_text, strlen(conf_text), &conf, err, sizeof(err)), 0);
        conf.full_scan = full_scan;
        for (int i = 0; i < sessions; i++) {
                struct kb_snapshot snap;
                struct kb_result r;
                kb_cluster_snapshot(&c, &snap);
                assert_int_equal(kb_session_run(&snap, &conf, &r), 0);
                /* Every action and plugin is timed, in conf order. */
                assert_int_equal(r.naction_times, conf.nactions);
                for (size_t k = 0; k < conf.nactions; k++) {
                        assert_string_equal(r.action_times[k].name, conf.actions[k].name);
                        assert_true(r.action_times[k].seconds >= 0);
                }
                size_t np = 0;
                for (size_t t = 0; t < conf.ntiers; t++)
                        for (size_t p = 0; p < conf.tiers[t].nplugins; p++, np++)
                                assert_string_equal(r.plugin_times[np].name,
                                                    conf.tiers[t].plugins[p].name);
                assert_int_equal(r.nplugin_times, np);
                for (size_t k = 0; k < r.nbinds; k++)
                        kb_buf_printf(&out, "%s=%s ", r.binds[k].pod->meta.name, r.binds[k].node);
                for (size_t k = 0; k < r.npodgroups; k++)
                        kb_buf_printf(&out, "[%s %s %s] ", r.podgroups[k].name,
                                      kb_pg_phase_name(r.podgroups[k].phase),
                                      r.podgroups[k].cond_message ? r.podgroups[k].cond_message
                                                                  : "");
                kb_cluster_apply(&c, &r);
                kb_result_release(&r);
        }
        kb_conf_release(&conf);
        kb_cluster_release(&c);
        return kb_buf_detach(&out);
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
                        char *cached = run_binds(m, confs[c], false, 2);
                        char *full = run_binds(m, confs[c], true, 2);
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
            cmocka_unit_test(test_task_default_order),
            cmocka_unit_test(test_heap),
            cmocka_unit_test(test_caches_match_full_scan),
        };
        return cmocka_run_group_tests_name("framework", tests, NULL, NULL);
}
