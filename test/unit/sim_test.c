/*
 * The simulator's loader (bad input is refused with a message naming the
 * file, the line, the object and the field, and leaves the cluster as it
 * was) and the conf parser (Volcano's format, its flag spellings, names
 * kbatch lacks).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "framework/framework.h"
#include "sim/sim.h"

/* ---- the loader ------------------------------------------------------------- */

struct counts {
        size_t nodes, pods, podgroups, queues, priorityclasses, namespaces;
};

static struct counts count(const struct kb_cluster *c)
{
        return (struct counts){c->nnodes,           c->npods,      c->npodgroups, c->nqueues,
                               c->npriorityclasses, c->nnamespaces};
}

static void assert_counts_equal(struct counts a, struct counts b)
{
        assert_int_equal(a.nodes, b.nodes);
        assert_int_equal(a.pods, b.pods);
        assert_int_equal(a.podgroups, b.podgroups);
        assert_int_equal(a.queues, b.queues);
        assert_int_equal(a.priorityclasses, b.priorityclasses);
        assert_int_equal(a.namespaces, b.namespaces);
}

/* Something of every kind, loaded before each bad input so that a rollback
 * has objects to keep as well as objects to drop. */
static const char base_manifests[] =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    "status: {allocatable: {cpu: '4', memory: 8Gi}}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team-a}\n"
    "spec: {schedulerName: kbatch, containers: [{name: c}]}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata: {name: pg, namespace: team-a}\nspec: {minMember: 1}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
    "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
    "value: 1000\n"
    "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n";

/* Loads text into a cluster that holds base_manifests and expects it to be
 * refused with exactly want, the cluster unchanged. */
static void expect_refused(const char *text, const char *want)
{
        struct kb_cluster c;
        char err[1024] = "";
        kb_cluster_init(&c);
        assert_int_equal(kb_cluster_load(&c, "base.yaml", base_manifests, strlen(base_manifests),
                                         err, sizeof(err)),
                         0);
        struct counts before = count(&c);
        struct kb_node *n1 = c.nodes[0];
        int rc = kb_cluster_load(&c, "bad.yaml", text, strlen(text), err, sizeof(err));
        if (rc != KB_EBADINPUT || strcmp(err, want) != 0)
                print_error("want: %s\ngot (rc %d): %s\n", want, rc, err);
        assert_int_equal(rc, KB_EBADINPUT);
        assert_string_equal(err, want);
        assert_counts_equal(before, count(&c));
        /* What was there is still there, and still usable. */
        assert_ptr_equal(c.nodes[0], n1);
        assert_string_equal(c.nodes[0]->meta.name, "n1");
        assert_string_equal(c.pods[0]->meta.name, "p");
        kb_cluster_release(&c);
}

static void test_malformed_yaml(void **state)
{
        (void)state;
        /* The flow mapping opened on line 3 never closes; libyaml notices
         * at the end of the text (line 4) and says what it expected. */
        expect_refused("apiVersion: v1\nkind: Node\nmetadata: {name: n2\n",
                       "bad.yaml:4: did not find expected ',' or '}' while parsing a flow "
                       "mapping");
}

static void test_malformed_json(void **state)
{
        (void)state;
        expect_refused("{\"apiVersion\": \"v1\",\n \"kind\": }\n",
                       "bad.yaml:2: parse error: unallowed token at this point in JSON text");
}

static void test_not_a_map(void **state)
{
        (void)state;
        /* The second document (a list, starting on line 5) is refused after
         * the first was added: the rollback drops n2 again. */
        expect_refused("apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n---\n- a\n- b\n",
                       "bad.yaml:5: a manifest must be a map, not a array");
}

static void test_bad_quantity(void **state)
{
        (void)state;
        expect_refused("apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
                       "status: {allocatable: {cpu: 12Qi}}\n",
                       "bad.yaml:1: node n2: status.allocatable.cpu: malformed quantity \"12Qi\"");
        /* In a pod, the path goes down to the container. */
        expect_refused(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: team-a}\n"
            "spec:\n  containers:\n  - name: c\n    resources: {requests: {memory: 1Gx}}\n",
            "bad.yaml:1: pod team-a/q: spec.containers[0].resources.requests.memory: "
            "malformed quantity \"1Gx\"");
}

static void test_negative_min_member(void **state)
{
        (void)state;
        expect_refused("apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n---\n"
                       "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                       "metadata: {name: train, namespace: team-a}\nspec: {minMember: -3}\n",
                       "bad.yaml:5: podgroup team-a/train: spec.minMember: must be >= 0, got -3");
}

static void test_duplicate(void **state)
{
        (void)state;
        /* Twice in one text, and once more against what is loaded. */
        expect_refused("apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n---\n"
                       "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n",
                       "bad.yaml:5: node n2: defined twice");
        expect_refused("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team-a}\n"
                       "spec: {containers: [{name: c}]}\n",
                       "bad.yaml:1: pod team-a/p: defined twice");
}

static void test_job_without_template(void **state)
{
        (void)state;
        expect_refused("apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\n"
                       "spec: {parallelism: 2}\n",
                       "bad.yaml:1: job default/train: spec.template: required");
}

static void test_unknown_kind_skipped(void **state)
{
        (void)state;
        struct kb_cluster c;
        char err[256] = "";
        const char *text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n---\n"
                           "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n";
        kb_cluster_init(&c);
        kb_test_log_start();
        assert_int_equal(kb_cluster_load(&c, "mixed.yaml", text, strlen(text), err, sizeof(err)),
                         0);
        assert_true(kb_test_log_contains(
            "mixed.yaml:1: kind apps/v1 Deployment is not read by kbatch; skipped"));
        kb_test_log_stop();
        assert_int_equal(c.nnodes, 1);
        assert_int_equal(c.npods + c.npodgroups + c.nqueues, 0);
        kb_cluster_release(&c);
}

static void test_job_pods(void **state)
{
        (void)state;
        struct kb_cluster c;
        char err[256] = "";
        const char *text =
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\n"
            "spec:\n  parallelism: 3\n  completions: 2\n  template:\n"
            "    metadata: {annotations: {scheduling.k8s.io/group-name: g}}\n"
            "    spec: {schedulerName: kbatch, containers: [{name: c}]}\n";
        kb_cluster_init(&c);
        assert_int_equal(kb_cluster_load(&c, "job.yaml", text, strlen(text), err, sizeof(err)), 0);
        /* completions 2 < parallelism 3: two pods, <job>-<index>. */
        assert_int_equal(c.npods, 2);
        assert_string_equal(c.pods[0]->meta.name, "train-0");
        assert_string_equal(c.pods[1]->meta.name, "train-1");
        assert_string_equal(c.pods[1]->meta.namespace, "ml");
        assert_string_equal(c.pods[1]->group_name, "g");
        assert_string_equal(kb_meta_label(&c.pods[1]->meta, "job-name"), "train");
        kb_cluster_release(&c);
}

/* ---- session results the simulator reports ------------------------------------ */

/*
 * A PodGroup naming a missing queue sorts before one in the default queue;
 * the default queue's counts must come from its own group (Running), not
 * from its neighbour's entry (Pending).  And a pod naming a missing
 * PodGroup gets an entry of its own (no object) saying so.
 */
static void test_statuses_line_up(void **state)
{
        (void)state;
        struct kb_cluster c;
        struct kb_conf conf;
        struct kb_snapshot snap;
        struct kb_result r;
        char err[256] = "";
        const char *text =
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
            "status: {allocatable: {cpu: '4', memory: 8Gi}}\n"
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: a}\nspec: {minMember: 1, queue: nope}\n"
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: b}\nspec: {minMember: 1}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: b-0, annotations: "
            "{scheduling.k8s.io/group-name: b}}\n"
            "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
            "'1'}}}]}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: o-0, annotations: "
            "{scheduling.k8s.io/group-name: x}}\n"
            "spec: {schedulerName: kbatch, containers: [{name: c}]}\n";
        kb_cluster_init(&c);
        assert_int_equal(kb_cluster_load(&c, "s.yaml", text, strlen(text), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&c);
        assert_int_equal(kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), &conf,
                                       err, sizeof(err)),
                         0);
        kb_cluster_snapshot(&c, &snap);
        assert_int_equal(kb_session_run(&snap, &conf, &r), 0);
        assert_int_equal(r.nbinds, 1);
        assert_int_equal(r.nqueues, 1);
        assert_string_equal(r.queues[0].name, "default");
        assert_int_equal(r.queues[0].running, 1);
        assert_int_equal(r.queues[0].pending, 0);
        assert_int_equal(r.npodgroups, 3);
        assert_string_equal(r.podgroups[0].name, "default/a");
        assert_int_equal(r.podgroups[0].phase, KB_PG_PENDING);
        assert_non_null(strstr(r.podgroups[0].cond_message, "queue nope not found"));
        assert_string_equal(r.podgroups[1].name, "default/b");
        assert_int_equal(r.podgroups[1].phase, KB_PG_RUNNING);
        assert_null(r.podgroups[2].pg);
        assert_string_equal(r.podgroups[2].name, "default/x");
        assert_non_null(strstr(r.podgroups[2].cond_message, "podgroup default/x not found"));
        /* Applying skips the entry without an object. */
        kb_cluster_apply(&c, &r);
        kb_result_release(&r);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
}

static int parse(const char *text, struct kb_conf *conf, char *err, size_t n);

/* ---- durations and runtimes -------------------------------------------------- */

static void test_duration_parse(void **state)
{
        (void)state;
        static const struct {
                const char *text;
                int64_t ns;
        } good[] = {
            {"30m", 1800000000000LL},
            {"1h30m", 5400000000000LL},
            /* 1 h + 0.5 h */
            {"1.5h", 5400000000000LL},
            {"90s", 90000000000LL},
            {".5s", 500000000LL},
            {"5.s", 5000000000LL},
            {"250ms", 250000000LL},
            {"1us", 1000LL},
            {"1\xc2\xb5s", 1000LL},
            {"7ns", 7LL},
            /* 2 h 45 m 30.5 s = 7200 + 2700 + 30.5 = 9930.5 s */
            {"2h45m30.5s", 9930500000000LL},
            {"0", 0},
            {"-2s", -2000000000LL},
            {"+3s", 3000000000LL},
            /* A fraction finer than a nanosecond is cut: 1.0000000009 s. */
            {"1.0000000009s", 1000000000LL},
            /* The largest: 2^63 - 1 ns. */
            {"9223372036854775807ns", INT64_MAX},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(good); i++) {
                int64_t ns = -42;
                char why[256] = "";
                if (kb_duration_parse(good[i].text, &ns, why, sizeof(why)) != 0 || ns != good[i].ns)
                        print_error("%s: got %lld (%s), want %lld\n", good[i].text, (long long)ns,
                                    why, (long long)good[i].ns);
                assert_int_equal(ns, good[i].ns);
        }
        static const struct {
                const char *text, *why;
        } bad[] = {
            {"", "empty duration (want a Go duration such as 30m, 1h30m or 90s)"},
            {"30", "missing unit in duration \"30\" (units: ns, us, ms, s, m, h)"},
            {"30x", "unknown unit \"x\" in duration \"30x\" (units: ns, us, ms, s, m, h)"},
            {"1.5.5s", "missing unit in duration \"1.5.5s\" (units: ns, us, ms, s, m, h)"},
            {"1d", "unknown unit \"d\" in duration \"1d\" (units: ns, us, ms, s, m, h)"},
            {"s", "invalid duration \"s\""},
            {".s", "invalid duration \".s\""},
            {"-", "invalid duration \"-\""},
            /* As Go: a unit runs to the next digit or dot. */
            {"1h-5m", "unknown unit \"h-\" in duration \"1h-5m\" (units: ns, us, ms, s, m, h)"},
            {"1 h", "unknown unit \" h\" in duration \"1 h\" (units: ns, us, ms, s, m, h)"},
            /* 3,000,000 h is 1.08e19 ns, past 2^63 - 1. */
            {"3000000h", "duration \"3000000h\" is too long (at most about 292 years)"},
            {"9223372036854775808ns",
             "duration \"9223372036854775808ns\" is too long (at most about 292 years)"},
            {"2562047h47m16.854775808s",
             "duration \"2562047h47m16.854775808s\" is too long (at most about 292 years)"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(bad); i++) {
                int64_t ns = -42;
                char why[256] = "";
                int rc = kb_duration_parse(bad[i].text, &ns, why, sizeof(why));
                if (rc != KB_EBADINPUT || strcmp(why, bad[i].why) != 0)
                        print_error("%s: rc %d, why \"%s\"\n", bad[i].text, rc, why);
                assert_int_equal(rc, KB_EBADINPUT);
                assert_string_equal(why, bad[i].why);
                assert_int_equal(ns, -42);
        }
}

static void test_duration_format(void **state)
{
        (void)state;
        static const struct {
                int64_t ns;
                const char *text;
        } cases[] = {
            {0, "0s"},
            {5400000000000LL, "1h30m"},
            {7200000000000LL, "2h"},
            {90000000000LL, "1m30s"},
            {1500000000LL, "1.5s"},
            {250000000LL, "250ms"},
            {-45000000000LL, "-45s"},
            {3601000000000LL, "1h1s"},
            /* Found by the quantity fuzz target ("1.us5h"): "%g" printed
             * "5h1e-06s" and "25h1m1s" for these, which read back as an
             * error and as a nanosecond less. */
            {18000000001000LL, "5h0.000001s"},
            {90061000000001LL, "25h1m1.000000001s"},
            {1500LL, "1.5us"},
            {1234567LL, "1.234567ms"},
            {-999999999LL, "-999.999999ms"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                char buf[32];
                int64_t back;
                char why[256];
                kb_duration_format(cases[i].ns, buf, sizeof(buf));
                assert_string_equal(buf, cases[i].text);
                /* What is printed reads back as the same duration. */
                assert_int_equal(kb_duration_parse(buf, &back, why, sizeof(why)), 0);
                assert_true(back == cases[i].ns);
        }
}

/* A runtime annotation that is no Go duration is bad input at load, named
 * by pod and annotation; so is a negative one. */
static void test_runtime_annotation_refused(void **state)
{
        (void)state;
        expect_refused("apiVersion: v1\nkind: Pod\n"
                       "metadata: {name: q, namespace: team-a, annotations: "
                       "{kbatch.io/runtime: 30x}}\n"
                       "spec: {containers: [{name: c}]}\n",
                       "bad.yaml:1: pod team-a/q: annotation kbatch.io/runtime: unknown unit "
                       "\"x\" in duration \"30x\" (units: ns, us, ms, s, m, h)");
        expect_refused("apiVersion: v1\nkind: Pod\n"
                       "metadata: {name: q, namespace: team-a, annotations: "
                       "{kbatch.io/runtime: -5m}}\n"
                       "spec: {containers: [{name: c}]}\n",
                       "bad.yaml:1: pod team-a/q: annotation kbatch.io/runtime: \"-5m\": a "
                       "runtime must not be negative");
        /* kbatch-apiserver's annotation counts when kbatch.io/runtime is
         * absent, and is checked the same way. */
        expect_refused("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: team-a}\n"
                       "spec:\n  template:\n"
                       "    metadata: {annotations: {kbatch.io/sim-duration: \"60\"}}\n"
                       "    spec: {containers: [{name: c}]}\n",
                       "bad.yaml:1: pod team-a/j-0: annotation kbatch.io/sim-duration: missing "
                       "unit in duration \"60\" (units: ns, us, ms, s, m, h)");
}

/* Nearest rank: the value at rank ceil(p/100 * n). */
static void test_percentile(void **state)
{
        (void)state;
        const double three[] = {0, 300, 1200}, two[] = {300, 1500}, one[] = {42};
        double twenty[20];
        for (int i = 0; i < 20; i++)
                twenty[i] = i + 1;
        /* n = 3: p50 rank ceil(1.5) = 2, p95 rank ceil(2.85) = 3. */
        assert_true(kb_sim_percentile(three, 3, 50) == 300);
        assert_true(kb_sim_percentile(three, 3, 95) == 1200);
        /* n = 2: p50 rank ceil(1) = 1, p95 rank ceil(1.9) = 2. */
        assert_true(kb_sim_percentile(two, 2, 50) == 300);
        assert_true(kb_sim_percentile(two, 2, 95) == 1500);
        /* n = 20: p95 is exactly rank 19, p50 rank 10, p100 the max. */
        assert_true(kb_sim_percentile(twenty, 20, 95) == 19);
        assert_true(kb_sim_percentile(twenty, 20, 50) == 10);
        assert_true(kb_sim_percentile(twenty, 20, 100) == 20);
        assert_true(kb_sim_percentile(twenty, 20, 1) == 1);
        assert_true(kb_sim_percentile(one, 1, 50) == 42);
        assert_true(kb_sim_percentile(one, 0, 50) == 0);
}

/* ---- the clock ---------------------------------------------------------------------- */

struct steps {
        int64_t times[64];
        size_t binds[64];
        size_t evictions[64];
        long n;
};

static void record_step(void *arg, const struct kb_sim_step *step)
{
        struct steps *st = arg;
        if (st->n < 64) {
                st->times[st->n] = step->time / 1000000000LL;
                st->binds[st->n] = step->r->nbinds;
                st->evictions[st->n] = step->r->nevictions;
        }
        st->n++;
}

/* Set by a test whose pods of no group stay jobs of their own (kbatch-sim
 * --workload-podgroups=false), for run_timed. */
static bool lone_pods;

static void run_timed(const char *text, const char *conf_text, struct kb_cluster *c,
                      struct kb_sim_report *rep, struct steps *st)
{
        struct kb_conf conf;
        struct kb_sim_opts o;
        char err[512] = "";
        kb_cluster_init(c);
        c->workload_podgroups = !lone_pods;
        c->now = 1.8e9;
        if (kb_cluster_load(c, "t.yaml", text, strlen(text), err, sizeof(err)))
                print_error("load: %s\n", err);
        kb_cluster_ensure_default_queue(c);
        assert_int_equal(parse(conf_text, &conf, err, sizeof(err)), 0);
        kb_sim_opts_init(&o);
        memset(st, 0, sizeof(*st));
        int rc = kb_sim_run(c, &conf, &o, record_step, st, rep, err, sizeof(err));
        if (rc)
                print_error("run: %s\n", err);
        assert_int_equal(rc, 0);
        kb_conf_release(&conf);
}

static const struct kb_sim_gang *gang(const struct kb_sim_report *rep, const char *name)
{
        for (size_t i = 0; i < rep->ngangs; i++)
                if (strcmp(rep->gangs[i].name, name) == 0)
                        return &rep->gangs[i];
        fail_msg("no gang %s", name);
        return NULL;
}

/*
 * One 4-cpu node.  Gang a (2 x 1 cpu, 90s) arrives at 0, gang b (4 x 1 cpu,
 * 30s) at 10s.  Sessions, a period of 1 s:
 *   0    a binds; nothing else waits  next event: b arrives at 10
 *   10   b is admitted (Inqueue), 2 cpu free for 4: waits     again at 11
 *   11   nothing                      next event: a ends at 90
 *   90   a Completed, b binds; nothing waits    next event: b ends at 120
 *   120  b Completed: every gang finished
 * Five sessions for two minutes; makespan 120 s, b waited 80 s.
 */
static const char clock_manifests[] =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    "status: {allocatable: {cpu: '4', memory: 8Gi}}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata: {name: a, creationTimestamp: '2025-01-01T00:00:00Z'}\nspec: {minMember: 2}\n"
    "---\napiVersion: batch/v1\nkind: Job\n"
    "metadata: {name: a, creationTimestamp: '2025-01-01T00:00:00Z'}\n"
    "spec:\n  parallelism: 2\n  template:\n"
    "    metadata: {annotations: {scheduling.k8s.io/group-name: a, kbatch.io/runtime: 90s}}\n"
    "    spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
    "'1'}}}]}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata: {name: b, creationTimestamp: '2025-01-01T00:00:10Z'}\nspec: {minMember: 4}\n"
    "---\napiVersion: batch/v1\nkind: Job\n"
    "metadata: {name: b, creationTimestamp: '2025-01-01T00:00:10Z'}\n"
    "spec:\n  parallelism: 4\n  template:\n"
    "    metadata: {annotations: {scheduling.k8s.io/group-name: b, kbatch.io/runtime: 30s}}\n"
    "    spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
    "'1'}}}]}\n";

static void test_clock_jumps(void **state)
{
        (void)state;
        struct kb_cluster c;
        struct kb_sim_report rep;
        struct steps st;
        run_timed(clock_manifests, kb_default_conf_yaml, &c, &rep, &st);
        const int64_t want[] = {0, 10, 11, 90, 120};
        assert_int_equal(st.n, 5);
        assert_int_equal(rep.sessions, 5);
        for (size_t i = 0; i < KB_ARRAY_SIZE(want); i++)
                assert_int_equal(st.times[i], want[i]);
        assert_int_equal(st.binds[0], 2);
        assert_int_equal(st.binds[3], 4);
        assert_int_equal(rep.stop, KB_SIM_DONE);
        assert_int_equal(rep.makespan, 120 * 1000000000LL);
        const struct kb_sim_gang *b = gang(&rep, "default/b");
        assert_int_equal(b->arrival, 10 * 1000000000LL);
        assert_int_equal(b->start, 90 * 1000000000LL);
        assert_int_equal(b->end, 120 * 1000000000LL);
        /* Time 0 is 2025-01-01T00:00:00Z. */
        assert_true(rep.origin == 1735689600.0);
        kb_sim_report_release(&rep);
        kb_cluster_release(&c);
}

/*
 * A Standard Workload Format trace (kbatch-sim --swf) on four one-cpu
 * nodes (the header's MaxNodes; a node is one processor by default):
 *   job 1  submit 0,  run 100, 2 procs, requested 120 s
 *   job 2  submit 10, run 50,  4 procs (field 5 is -1: field 8's 4)
 *   job 3  submit 20, run 5,   1 proc
 *   job 4  run 0: skipped;  job 5  9 procs: wider than the machine
 * Greedy, as allocate is: 1 starts at 0; 2 needs all four, two are busy:
 * it waits; 3 fits at 20 and starts; at 100, 1 ends and 2 starts.
 * Waits 0, 90, 0: mean 30, p50 0, p95 90, max 90.  Bounded slowdowns
 * max(1, (wait + run) / max(run, 10)): 1, (90 + 50) / 50 = 2.8, and
 * max(1, 5 / 10) = 1: mean 1.6.  Wide (half the cpu or more): 1 and 2, the
 * longest wait 90.
 */
static const char swf_trace[] = "; Version: 2\n"
                                "; MaxNodes: 4\n"
                                "1 0 -1 100 2 -1 -1 2 120 -1 1 -1 -1 -1 0 -1 -1 -1\n"
                                "2 10 -1 50 -1 -1 -1 4 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"
                                "\n"
                                "3 20 -1 5 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"
                                "4 30 -1 0 1 -1 -1 -1 -1 -1 0 -1 -1 -1 0 -1 -1 -1\n"
                                "5 40 -1 10 9 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n";

static void test_swf_trace(void **state)
{
        (void)state;
        const int64_t S = 1000000000LL;
        struct kb_cluster c;
        struct kb_swf_opts so;
        struct kb_swf_stats st;
        struct kb_conf conf;
        struct kb_sim_opts o;
        struct kb_sim_report rep;
        struct steps steps = {0};
        char err[512] = "";
        kb_cluster_init(&c);
        kb_swf_opts_init(&so);
        assert_int_equal(kb_cluster_swf(&c, "t.swf", swf_trace, strlen(swf_trace), &so, &st, err,
                                        sizeof(err)),
                         0);
        assert_int_equal(st.jobs, 3);
        assert_int_equal(st.pods, 7);
        assert_int_equal(st.skipped_runtime, 1);
        assert_int_equal(st.skipped_wide, 1);
        assert_int_equal(st.nodes, 4);
        assert_int_equal(c.nnodes, 4);
        assert_int_equal(c.nodes[0]->allocatable.q[KB_RES_CPU], 1000);
        assert_int_equal(c.npodgroups, 3);
        assert_string_equal(c.podgroups[1]->meta.name, "job-000002");
        assert_int_equal(c.podgroups[1]->min_member, 4);
        /* Declared: the requested time, else the run time. */
        assert_int_equal(kb_pod_declared_runtime(c.pods[0], c.podgroups[0]), 120 * S);
        assert_int_equal(kb_pod_declared_runtime(c.pods[2], c.podgroups[1]), 50 * S);
        assert_string_equal(kb_meta_annotation(&c.pods[0]->meta, KB_RUNTIME_ANNOTATION), "100s");

        kb_cluster_ensure_default_queue(&c);
        assert_int_equal(parse(kb_default_conf_yaml, &conf, err, sizeof(err)), 0);
        kb_sim_opts_init(&o);
        assert_int_equal(kb_sim_run(&c, &conf, &o, record_step, &steps, &rep, err, sizeof(err)),
                         0);
        assert_int_equal(rep.stop, KB_SIM_DONE);
        assert_int_equal(gang(&rep, "default/job-000002")->start, 100 * S);
        assert_int_equal(gang(&rep, "default/job-000003")->start, 20 * S);
        struct kb_sim_jobs j;
        kb_sim_report_jobs(&rep, &j);
        assert_int_equal(j.finished, 3);
        assert_true(j.wait_mean == 30);
        assert_true(j.wait_p50 == 0);
        assert_true(j.wait_p95 == 90);
        assert_true(j.wait_max == 90);
        assert_true(fabs(j.slowdown_mean - 1.6) < 1e-9);
        assert_int_equal(j.wide, 2);
        assert_true(j.wide_wait_max == 90);
        kb_sim_report_release(&rep);
        kb_conf_release(&conf);
        kb_cluster_release(&c);

        /* Malformed lines are named with their field; nothing is kept. */
        static const struct {
                const char *text, *want;
        } bad[] = {
            {"; MaxNodes: 4\n1 0 -1 abc 2 -1 -1 -1 -1\n",
             "t.swf:2: field 4 (run time): want a whole number, got \"abc\""},
            {"1 0 -1 10\n", "t.swf:1: field 5 (allocated processors): want a whole number, got \"\""},
            {"1 -5 -1 10 1 -1 -1 -1 -1\n",
             "t.swf:1: field 2 (submit time): must not be negative, got -5"},
            {"1 0 -1 10 1 -1 -1 -1 -1\n",
             "t.swf: no node count: give --swf-nodes (the header has neither MaxNodes nor "
             "MaxProcs)"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(bad); i++) {
                kb_cluster_init(&c);
                assert_int_equal(kb_cluster_swf(&c, "t.swf", bad[i].text, strlen(bad[i].text), &so,
                                                &st, err, sizeof(err)),
                                 KB_EBADINPUT);
                assert_string_equal(err, bad[i].want);
                assert_int_equal(c.npods, 0);
                kb_cluster_release(&c);
        }
        /* Two processors a node: MaxProcs 8 makes four nodes. */
        kb_cluster_init(&c);
        assert_int_equal(kb_swf_res_parse("cpu=2,memory=2Gi", "--swf-node", &so.node, err,
                                          sizeof(err)),
                         0);
        const char two[] = "; MaxProcs: 8\n1 0 -1 10 8 -1 -1 -1 -1\n";
        assert_int_equal(kb_cluster_swf(&c, "t.swf", two, strlen(two), &so, &st, err, sizeof(err)),
                         0);
        assert_int_equal(st.nodes, 4);
        assert_int_equal(st.processors, 8);
        assert_int_equal(st.jobs, 1);
        kb_cluster_release(&c);
        assert_int_equal(kb_swf_res_parse("cpu=1,memory=12Qi", "--swf-node", &so.node, err,
                                          sizeof(err)),
                         KB_EBADINPUT);
        assert_non_null(strstr(err, "--swf-node"));
}

/*
 * Greedy, EASY and conservative backfilling on one hand-worked trace: five
 * one-cpu nodes, runtimes declared exactly (SWF field 9 is -1), sessions at
 * every arrival and end.
 *   A  t0  3 procs 100 s     B  t1  4 procs 50 s      C  t2  5 procs 100 s
 *   D  t3  1 proc  200 s     E  t4  1 proc  300 s
 * Greedy (allocate alone): A at 0; B and C wait; D (t3) and E (t4) take the
 * two free nodes.  At 100 A ends but D and E hold two: B waits for D's end
 * at 203, C for E's at 304.  B 203, C 304, D 3, E 4.
 * EASY (depth 1): at t3 B's shadow time is 100 (A ends) with one node
 * spare: D (ends 203) takes it.  At t4 nothing is spare: E would hold a
 * node B needs at 100 and waits.  B starts at 100; C's shadow is then 203
 * (D's end), and E still waits; C 203, E after C at 303.
 * Conservative (depth all): at t3 B is reserved [100, 150) and C [150,
 * 250); D would hold a node C needs at 150: it waits, reserved at 250,
 * as E.  B 100, C 150, D 250, E 250.
 */
static const char three_ways[] = "; MaxNodes: 5\n"
                                 "1 0 -1 100 3 -1 -1 -1 -1\n"
                                 "2 1 -1 50 4 -1 -1 -1 -1\n"
                                 "3 2 -1 100 5 -1 -1 -1 -1\n"
                                 "4 3 -1 200 1 -1 -1 -1 -1\n"
                                 "5 4 -1 300 1 -1 -1 -1 -1\n";

static const char resv_conf[] = "actions: \"enqueue, allocate, backfill\"\n"
                                "tiers:\n"
                                "- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n"
                                "- plugins:\n"
                                "  - {name: overcommit}\n  - {name: drf}\n  - {name: predicates}\n"
                                "  - {name: proportion}\n  - {name: nodeorder}\n"
                                "  - name: reservation\n"
                                "    arguments: {depth: %s, resolution: 1s}\n";

static void sum_backfilled(void *arg, const struct kb_sim_step *step)
{
        *(uint32_t *)arg += step->r->backfilled;
}

/* Runs trace under conf_text: the gangs start at want[] (seconds), and as
 * many tasks are backfilled (placed with a reservation ahead) in all. */
/* An SWF trace run until done under conf_text, fn told of each session:
 * the report (release it). */
static void run_swf(const char *trace, const char *conf_text, kb_sim_step_fn fn, void *arg,
                    struct kb_sim_report *rep)
{
        struct kb_cluster c;
        struct kb_swf_opts so;
        struct kb_swf_stats st;
        struct kb_conf conf;
        struct kb_sim_opts o;
        char err[512] = "";
        kb_cluster_init(&c);
        kb_swf_opts_init(&so);
        assert_int_equal(kb_cluster_swf(&c, "t.swf", trace, strlen(trace), &so, &st, err,
                                        sizeof(err)),
                         0);
        kb_cluster_ensure_default_queue(&c);
        if (parse(conf_text, &conf, err, sizeof(err)))
                fail_msg("conf: %s", err);
        kb_sim_opts_init(&o);
        assert_int_equal(kb_sim_run(&c, &conf, &o, fn, arg, rep, err, sizeof(err)), 0);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
}

static void starts_under_bf(const char *trace, const char *conf_text, const int64_t *want,
                            size_t n, uint32_t backfilled)
{
        uint32_t got_bf = 0;
        struct kb_sim_report rep;
        run_swf(trace, conf_text, sum_backfilled, &got_bf, &rep);
        assert_int_equal(rep.stop, KB_SIM_DONE);
        if (backfilled != UINT32_MAX)
                assert_int_equal(got_bf, backfilled);
        for (size_t i = 0; i < n; i++) {
                char name[48];
                snprintf(name, sizeof(name), "default/job-%06zu", i + 1);
                int64_t got = gang(&rep, name)->start / 1000000000LL;
                if (got != want[i])
                        fail_msg("%s started at %lld, want %lld", name, (long long)got,
                                 (long long)want[i]);
        }
        kb_sim_report_release(&rep);
}

/* What the waiting gangs say at t4 under depth all: each its expected
 * start, and whose end it waits for (the times are origin + 100, 150, 250:
 * the origin is the SWF reader's epoch base, 1.7e9). */
struct said {
        char msg[3][200];
        double start[3];
};

static void record_said(void *arg, const struct kb_sim_step *step)
{
        struct said *sd = arg;
        if (step->time != 4 * 1000000000LL)
                return;
        for (size_t i = 0; i < step->r->npodgroups; i++) {
                const struct kb_pg_status *st = &step->r->podgroups[i];
                int k = !strcmp(st->name, "default/job-000002")   ? 0
                        : !strcmp(st->name, "default/job-000003") ? 1
                        : !strcmp(st->name, "default/job-000004") ? 2
                                                                  : -1;
                if (k >= 0 && st->cond_message) {
                        snprintf(sd->msg[k], sizeof(sd->msg[k]), "%s", st->cond_message);
                        sd->start[k] = st->expected_start;
                }
        }
}

static void test_reservation_said(void **state)
{
        (void)state;
        struct kb_sim_report rep;
        struct said sd = {0};
        char *text = kb_xasprintf(resv_conf, "all");
        run_swf(three_ways, text, record_said, &sd, &rep);
        free(text);
        assert_string_equal(sd.msg[0], "expected to start at 2023-11-14T22:15:00Z on 4 node(s), "
                                       "when default/job-000001 ends; 1st of 4 waiting in queue "
                                       "default");
        assert_string_equal(sd.msg[1], "expected to start at 2023-11-14T22:15:50Z on 5 node(s), "
                                       "when default/job-000002 ends; 2nd of 4 waiting in queue "
                                       "default");
        assert_string_equal(sd.msg[2], "expected to start at 2023-11-14T22:17:30Z on 1 node(s), "
                                       "when default/job-000003 ends; 3rd of 4 waiting in queue "
                                       "default");
        assert_true(sd.start[0] == 1.7e9 + 100);
        assert_true(sd.start[1] == 1.7e9 + 150);
        assert_true(sd.start[2] == 1.7e9 + 250);
        kb_sim_report_release(&rep);
}

/* An unusable declared runtime is named in a Warning (reason
 * InvalidRuntime) and in the waiting gang's condition, and the gang is
 * planned as unbounded: here the runner declares nothing usable, so the
 * wide gang gets no expected start. */
struct warned {
        char warning[300], reason[40], msg[300];
};

static void record_warned(void *arg, const struct kb_sim_step *step)
{
        struct warned *w = arg;
        for (size_t i = 0; i < step->r->nwarnings; i++)
                if (strstr(step->r->warnings[i].message, "activeDeadlineSeconds")) {
                        snprintf(w->warning, sizeof(w->warning), "%s",
                                 step->r->warnings[i].message);
                        snprintf(w->reason, sizeof(w->reason), "%s",
                                 step->r->warnings[i].reason);
                }
        for (size_t i = 0; i < step->r->npodgroups; i++)
                if (!strcmp(step->r->podgroups[i].name, "default/wide") &&
                    step->r->podgroups[i].cond_message)
                        snprintf(w->msg, sizeof(w->msg), "%s", step->r->podgroups[i].cond_message);
}

static void test_reservation_bad_runtime(void **state)
{
        (void)state;
        static const char text[] =
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
            "status: {allocatable: {cpu: '2', memory: 8Gi}}\n"
            "---\napiVersion: v1\nkind: Pod\n"
            "metadata: {name: runner, creationTimestamp: '2025-01-01T00:00:00Z', annotations: "
            "{kbatch.io/runtime: 1h}}\n"
            "spec: {schedulerName: kbatch, activeDeadlineSeconds: -5, containers: [{name: c, "
            "resources: {requests: {cpu: '1'}}}]}\n"
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: wide, creationTimestamp: '2025-01-01T00:00:01Z'}\n"
            "spec: {minMember: 2}\n"
            "---\napiVersion: batch/v1\nkind: Job\n"
            "metadata: {name: wide, creationTimestamp: '2025-01-01T00:00:01Z'}\n"
            "spec:\n  parallelism: 2\n  template:\n"
            "    metadata: {annotations: {scheduling.k8s.io/group-name: wide, kbatch.io/runtime: "
            "1m}}\n"
            "    spec: {schedulerName: kbatch, activeDeadlineSeconds: 60, containers: [{name: c, "
            "resources: {requests: {cpu: '1'}}}]}\n";
        struct kb_cluster c;
        struct kb_conf conf;
        struct kb_sim_opts o;
        struct kb_sim_report rep;
        struct warned w = {0};
        char err[512] = "";
        kb_cluster_init(&c);
        c.now = 1.8e9;
        if (kb_cluster_load(&c, "t.yaml", text, strlen(text), err, sizeof(err)))
                fail_msg("load: %s", err);
        kb_cluster_ensure_default_queue(&c);
        char *ct = kb_xasprintf(resv_conf, "1");
        assert_int_equal(parse(ct, &conf, err, sizeof(err)), 0);
        free(ct);
        kb_sim_opts_init(&o);
        o.max_sessions = 3;
        assert_int_equal(kb_sim_run(&c, &conf, &o, record_warned, &w, &rep, err, sizeof(err)), 0);
        assert_string_equal(w.reason, "InvalidRuntime");
        assert_string_equal(w.warning, "pod default/runner: spec.activeDeadlineSeconds: must be "
                                       "greater than 0 (and at most 9223372036), got -5; the "
                                       "reservation plugin counts it as undeclared (unbounded)");
        /* One 2-cpu node, the runner holds 1: the gang's two pods do not
         * both fit; no start can be expected. */
        assert_string_equal(w.msg, "its minMember 2 pods do not all fit the free room: 0/1 nodes "
                                   "are available: 1 Insufficient cpu.; no expected start: 1 "
                                   "pod(s) holding the room it needs "
                                   "declare no runtime (activeDeadlineSeconds, "
                                   "kbatch.io/runtime-limit); 1st of 1 waiting in queue default");
        kb_sim_report_release(&rep);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
}

static void starts_under(const char *trace, const char *conf_text, const int64_t *want, size_t n)
{
        starts_under_bf(trace, conf_text, want, n, UINT32_MAX);
}

/* A batch/v1 Job's activeDeadlineSeconds reaches the PodGroup made for its
 * pods (kbatch.io/job-active-deadline-seconds), as the daemon's does: the
 * gang's declared runtime. */
static void test_job_deadline(void **state)
{
        (void)state;
        static const char text[] =
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, uid: j1}\n"
            "spec:\n  parallelism: 2\n  activeDeadlineSeconds: 3600\n  template:\n"
            "    spec: {schedulerName: kbatch, containers: [{name: c}]}\n";
        struct kb_cluster c;
        char err[512] = "";
        kb_cluster_init(&c);
        if (kb_cluster_load(&c, "t.yaml", text, strlen(text), err, sizeof(err)))
                fail_msg("load: %s", err);
        assert_int_equal(c.npodgroups, 1);
        assert_int_equal(c.podgroups[0]->job_deadline, 3600 * 1000000000LL);
        assert_int_equal(kb_pod_declared_runtime(c.pods[0], c.podgroups[0]), 3600 * 1000000000LL);
        kb_cluster_release(&c);
}

static void test_reservation_three_ways(void **state)
{
        (void)state;
        static const int64_t greedy[] = {0, 203, 304, 3, 4};
        static const int64_t easy[] = {0, 100, 203, 3, 303};
        static const int64_t conservative[] = {0, 100, 150, 250, 250};
        /* Backfilled: D under EASY (placed at 3 with B reserved); none
         * under conservative (D and E start at 250, nothing ahead). */
        starts_under_bf(three_ways, kb_default_conf_yaml, greedy, 5, 0);
        char *conf = kb_xasprintf(resv_conf, "1");
        starts_under_bf(three_ways, conf, easy, 5, 1);
        free(conf);
        conf = kb_xasprintf(resv_conf, "all");
        starts_under_bf(three_ways, conf, conservative, 5, 0);
        free(conf);
}

/*
 * The banner's example (plugins/reservation.c), on four nodes: A (2 procs,
 * 100 s) runs; W (4 procs, 50 s) waits for 100; S (1 proc, 60 s, t20) ends
 * at 80 and may use reserved room; L (1 proc, 500 s, t21) would hold a
 * node W needs: it waits for W's end at 150.  Declared runtimes longer than
 * the actual ones (field 9) move the plan, not the run: S declaring 75 s
 * still ends (by its declaration) at 95, before 100; declaring 120 s it
 * would end at 140: it waits until W has started and ended, and starts at
 * 150 with L.
 */
static void test_reservation_declared(void **state)
{
        (void)state;
        char *conf = kb_xasprintf(resv_conf, "1");
        static const int64_t easy[] = {0, 100, 20, 150};
        starts_under("; MaxNodes: 4\n1 0 -1 100 2 -1 -1 -1 -1\n2 10 -1 50 4 -1 -1 -1 -1\n"
                     "3 20 -1 60 1 -1 -1 -1 75\n4 21 -1 500 1 -1 -1 -1 -1\n",
                     conf, easy, 4);
        static const int64_t late[] = {0, 100, 150, 150};
        starts_under("; MaxNodes: 4\n1 0 -1 100 2 -1 -1 -1 -1\n2 10 -1 50 4 -1 -1 -1 -1\n"
                     "3 20 -1 60 1 -1 -1 -1 120\n4 21 -1 500 1 -1 -1 -1 -1\n",
                     conf, late, 4);
        free(conf);
        /* Bad arguments are refused when the conf loads, by name. */
        struct kb_conf c;
        char err[512];
        static const char *const bad[][2] = {
            {"depth: -1", "depth: want a whole number >= 1 or \"all\", got \"-1\""},
            {"window: abc", "window: want a duration (24h, 60s), got \"abc\""},
            {"resolution: 0s", "resolution: must be greater than 0, got \"0s\""},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(bad); i++) {
                char *text = kb_xasprintf("actions: allocate\ntiers:\n- plugins:\n"
                                          "  - name: reservation\n    arguments: {%s}\n",
                                          bad[i][0]);
                assert_int_not_equal(parse(text, &c, err, sizeof(err)), 0);
                if (!strstr(err, bad[i][1]))
                        fail_msg("%s: got \"%s\"", bad[i][0], err);
                free(text);
        }
}

/*
 * A hard-topology gang is reserved within one domain
 * (plugins/reservation_domain.c).  Racks r1 {n1, n2} and r2 {n3, n4} of
 * one-cpu nodes (node label rack, network-topology-aware's tier 1);
 * other pods of ours hold them until 100, 300 (r1) and 150, 200 (r2),
 * declared and actual.  Gang wide (2 pods of 1 cpu, 50 s, hard,
 * highestTierAllowed 1) arrives at 1, then s1 and s2 (1 pod, 1000 s) at 2
 * and 3.  Depth 1, resolution 1 s.
 *   Reservation: at 150 n1 and n3 are free, but in no one rack; at 200 r2
 *   holds the gang: n3 and n4 from 200 to 250.  r1 is not blocked: s1
 *   takes n1 at 100 (it would hold it until 1100, far past 200).  s2
 *   may not take n3 at 150 (reserved from 200): it waits for wide's end,
 *   250, and takes n3.  wide 200 on n3 and n4, s1 100, s2 250.
 *   Without a reservation (greedy, or today's plugin, which plans no
 *   topology gang): s1 takes n1 at 100, s2 n3 at 150, and no rack has two
 *   free nodes until s1 ends at 1100: wide 1100 on n1 and n2.
 */
#define RACK_NODE(name, rack)                                                                      \
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name ", labels: {rack: " rack "}}\n" \
        "status: {allocatable: {cpu: '1', memory: 8Gi, pods: '110'}}\n"
/* A pod of ours running on node since time 0, for secs (declared too). */
#define HOLDER(name, node, secs)                                                                   \
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name ", creationTimestamp: "           \
        "'2025-01-01T00:00:00Z', annotations: {kbatch.io/runtime: " secs "s}}\n"                   \
        "spec: {schedulerName: kbatch, nodeName: " node ", activeDeadlineSeconds: " secs           \
        ", containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\nstatus: {phase: Running}\n"
/* A gang of n one-cpu pods arriving at second at, running secs. */
#define TGANG(name, n, at, secs, topology)                                                         \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"                         \
        "metadata: {name: " name ", creationTimestamp: '2025-01-01T00:00:0" at "Z'}\n"             \
        "spec: {minMember: " n topology "}\n"                                                      \
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: " name                             \
        ", creationTimestamp: '2025-01-01T00:00:0" at "Z'}\n"                                      \
        "spec:\n  parallelism: " n "\n  template:\n"                                               \
        "    metadata: {annotations: {scheduling.k8s.io/group-name: " name                         \
        ", kbatch.io/runtime: " secs "s}}\n"                                                       \
        "    spec: {schedulerName: kbatch, activeDeadlineSeconds: " secs                           \
        ", containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
#define RACKS_1CPU                                                                                 \
        RACK_NODE("n1", "r1") RACK_NODE("n2", "r1") RACK_NODE("n3", "r2") RACK_NODE("n4", "r2")
#define HOLDERS(a, b, c, d)                                                                        \
        HOLDER("h1", "n1", a) HOLDER("h2", "n2", b) HOLDER("h3", "n3", c) HOLDER("h4", "n4", d)

static const char topo_resv_conf[] =
    "actions: \"enqueue, allocate, backfill\"\n"
    "tiers:\n"
    "- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n"
    "- plugins:\n"
    "  - {name: overcommit}\n  - {name: drf}\n  - {name: predicates}\n"
    "  - {name: proportion}\n  - {name: nodeorder}\n"
    "  - name: network-topology-aware\n    arguments: {hypernode.tier1.label: rack}\n"
    "%s";
static const char topo_resv_plugin[] = "  - name: reservation\n"
                                       "    arguments: {depth: 1, resolution: 1s}\n";

/* What a session at time said of default/wide, and where its pods went. */
struct topo_seen {
        int64_t at; /* the session to read the condition from, in s */
        char msg[400];
        double start;
        char nodes[64];
};

static void record_topo(void *arg, const struct kb_sim_step *step)
{
        struct topo_seen *ts = arg;
        for (size_t i = 0; i < step->r->nbinds; i++) {
                const struct kb_bind *b = &step->r->binds[i];
                if (!strncmp(b->pod->meta.name, "wide-", 5)) {
                        size_t len = strlen(ts->nodes);
                        snprintf(ts->nodes + len, sizeof(ts->nodes) - len, "%s%s", len ? "," : "",
                                 b->node);
                }
        }
        if (step->time != ts->at * 1000000000LL)
                return;
        for (size_t i = 0; i < step->r->npodgroups; i++) {
                const struct kb_pg_status *st = &step->r->podgroups[i];
                if (!strcmp(st->name, "default/wide") && st->cond_message) {
                        snprintf(ts->msg, sizeof(ts->msg), "%s", st->cond_message);
                        ts->start = st->expected_start;
                }
        }
}

/* Runs manifests under topo_resv_conf (with the plugin when resv), reading
 * default/wide's condition at second at; returns the report. */
static void run_topo(const char *manifests, bool resv, struct topo_seen *ts,
                     struct kb_sim_report *rep)
{
        struct kb_cluster c;
        struct kb_conf conf;
        struct kb_sim_opts o;
        char err[512] = "";
        kb_cluster_init(&c);
        if (kb_cluster_load(&c, "t.yaml", manifests, strlen(manifests), err, sizeof(err)))
                fail_msg("load: %s", err);
        kb_cluster_ensure_default_queue(&c);
        char *ct = kb_xasprintf(topo_resv_conf, resv ? topo_resv_plugin : "");
        if (parse(ct, &conf, err, sizeof(err)))
                fail_msg("conf: %s", err);
        free(ct);
        kb_sim_opts_init(&o);
        o.time_limit = 3600 * 1000000000LL;
        o.time_limit_set = true;
        assert_int_equal(kb_sim_run(&c, &conf, &o, record_topo, ts, rep, err, sizeof(err)), 0);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
}

static int64_t started(const struct kb_sim_report *rep, const char *name)
{
        return gang(rep, name)->start / 1000000000LL;
}

static void test_reservation_topology_domain(void **state)
{
        (void)state;
        static const char manifests[] =
            RACKS_1CPU HOLDERS("100", "300", "150", "200")
                TGANG("wide", "2", "1", "50", ", networkTopology: {mode: hard, highestTierAllowed: 1}")
                    TGANG("s1", "1", "2", "1000", "") TGANG("s2", "1", "3", "1000", "");
        struct kb_sim_report rep;
        struct topo_seen ts = {.at = 3};
        run_topo(manifests, true, &ts, &rep);
        assert_int_equal(rep.stop, KB_SIM_DONE);
        assert_int_equal(started(&rep, "default/wide"), 200);
        assert_string_equal(ts.nodes, "n3,n4");
        assert_int_equal(started(&rep, "default/s1"), 100);
        assert_int_equal(started(&rep, "default/s2"), 250);
        /* Said beforehand, with the domain and whose end it waits for. */
        assert_true(ts.start == rep.origin + 200);
        assert_string_equal(ts.msg, "expected to start at 2025-01-01T00:03:20Z on 2 node(s) in "
                                    "r2, when default/podgroup-pod-h4 ends; 1st of 3 waiting in "
                                    "queue default");
        kb_sim_report_release(&rep);

        /* Without the plugin: greedy. */
        struct topo_seen g = {.at = 3};
        run_topo(manifests, false, &g, &rep);
        assert_int_equal(started(&rep, "default/wide"), 1100);
        assert_string_equal(g.nodes, "n1,n2");
        assert_int_equal(started(&rep, "default/s2"), 150);
        kb_sim_report_release(&rep);
}

/*
 * A hard gang no allowed domain can ever hold gets no expected start, and
 * says why (after allocate's own word on the room now): wide (3 pods,
 * highestTierAllowed 1) on racks of two one-cpu nodes.  The same gang,
 * soft, may spread: it is reserved as an untopologied gang, for when a
 * third node frees up (n1 at 100, n3 at 150, n4 at 200; n2 holds until
 * 300): 200.
 */
static void test_reservation_topology_never(void **state)
{
        (void)state;
        static const char hard[] =
            RACKS_1CPU HOLDERS("100", "300", "150", "200")
                TGANG("wide", "3", "1", "50", ", networkTopology: {mode: hard, highestTierAllowed: 1}");
        struct kb_sim_report rep;
        struct topo_seen ts = {.at = 1};
        run_topo(hard, true, &ts, &rep);
        assert_true(ts.start == 0);
        assert_string_equal(ts.msg, "no network topology domain of tier <= 1 can hold the whole "
                                    "gang (3 more task(s) need at least cpu: 3, pods: 3); the "
                                    "largest, r1 (tier 1), has memory: 16Gi, pods: 218 free; no "
                                    "expected start: no network topology domain of tier <= 1 is "
                                    "large enough for the whole gang (cpu: 3, pods: 3) even "
                                    "empty; the largest, r1, has cpu: 2, memory: 16Gi, pods: 220; "
                                    "1st of 1 waiting in queue default");
        kb_sim_report_release(&rep);

        static const char soft[] =
            RACKS_1CPU HOLDERS("100", "300", "150", "200")
                TGANG("wide", "3", "1", "50", ", networkTopology: {mode: soft, highestTierAllowed: 1}");
        struct topo_seen so = {.at = 1};
        run_topo(soft, true, &so, &rep);
        assert_true(so.start == rep.origin + 200);
        assert_int_equal(started(&rep, "default/wide"), 200);
        kb_sim_report_release(&rep);
}

/*
 * The Inqueue timeout on the clock.  One 4-cpu node; big (minResources cpu
 * 4, two pods of 3 cpu: never placed) arrives at 0, small (minResources cpu
 * 2, one 2-cpu pod of 10m) at 1s.  At 0 big is admitted and reserves the
 * node's 4 cpu; at 1 small is refused (overcommit: 4 + 2 > 4 x 1.2).
 * Nothing changes until big's timeout (10m): the clock jumps to 600, where
 * big goes back to Pending and small is admitted and binds.  small ends at
 * 1200.  big never starts; the run stops at its 2h limit.
 */
static void test_clock_inqueue_timeout(void **state)
{
        (void)state;
        static const char text[] =
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
            "status: {allocatable: {cpu: '4', memory: 8Gi}}\n"
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: big, creationTimestamp: '2025-01-01T00:00:00Z'}\n"
            "spec: {minMember: 2, minResources: {cpu: '4'}}\n"
            "---\napiVersion: batch/v1\nkind: Job\n"
            "metadata: {name: big, creationTimestamp: '2025-01-01T00:00:00Z'}\n"
            "spec:\n  parallelism: 2\n  template:\n"
            "    metadata: {annotations: {scheduling.k8s.io/group-name: big}}\n"
            "    spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
            "'3'}}}]}\n"
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: small, creationTimestamp: '2025-01-01T00:00:01Z'}\n"
            "spec: {minMember: 1, minResources: {cpu: '2'}}\n"
            "---\napiVersion: v1\nkind: Pod\n"
            "metadata: {name: small-0, creationTimestamp: '2025-01-01T00:00:01Z',\n"
            "  annotations: {scheduling.k8s.io/group-name: small, kbatch.io/runtime: 10m}}\n"
            "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
            "'2'}}}]}\n";
        struct kb_cluster c;
        struct kb_conf conf;
        struct kb_sim_opts o;
        struct kb_sim_report rep;
        struct steps st;
        char err[512] = "";
        kb_cluster_init(&c);
        c.now = 1.8e9;
        assert_int_equal(kb_cluster_load(&c, "t.yaml", text, strlen(text), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&c);
        assert_int_equal(parse(kb_default_conf_yaml, &conf, err, sizeof(err)), 0);
        kb_sim_opts_init(&o);
        o.time_limit = 7200 * 1000000000LL;
        memset(&st, 0, sizeof(st));
        assert_int_equal(kb_sim_run(&c, &conf, &o, record_step, &st, &rep, err, sizeof(err)), 0);
        const struct kb_sim_gang *small = gang(&rep, "default/small");
        assert_int_equal(small->arrival, 1 * 1000000000LL);
        assert_int_equal(small->start, 600 * 1000000000LL);
        assert_int_equal(small->end, 1200 * 1000000000LL);
        assert_int_equal(gang(&rep, "default/big")->start, -1);
        assert_int_equal(rep.stop, KB_SIM_TIME_LIMIT);
        /* No session between the one at 1 s (or the quiet one after it) and
         * the timeout at 600 s: the clock jumped. */
        for (long i = 0; i < st.n && i < 64; i++)
                assert_true(st.times[i] <= 2 || st.times[i] >= 600);
        kb_sim_report_release(&rep);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
}

/*
 * sla's waiting time on the clock.  One 4-cpu node, Volcano's default conf
 * with sla (sla-waiting-time 5m) in the first tier.  hold (minResources cpu
 * 3, one 3-cpu pod of 1h) arrives at 0, is admitted and binds.  late
 * (minResources cpu 2, one 1-cpu pod of 10m) arrives at 1 s: overcommit
 * (3 + 2 > 4 x 1.2) and proportion (2 + 3 > 4) reject it.  Nothing else
 * happens before hold ends at 3600, but late's waiting time runs out at
 * 301: the clock stops there, sla permits late in the first tier, and its
 * pod takes the free cpu (proportion's deserved is 4: 3 + 1 fits).  late
 * runs 301 .. 901.  Without the deadline on the clock, late would start at
 * 3600.
 */
static void test_clock_sla(void **state)
{
        (void)state;
        static const char text[] =
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
            "status: {allocatable: {cpu: '4', memory: 8Gi}}\n"
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: hold, creationTimestamp: '2025-01-01T00:00:00Z'}\n"
            "spec: {minMember: 1, minResources: {cpu: '3'}}\n"
            "---\napiVersion: v1\nkind: Pod\n"
            "metadata: {name: hold-0, creationTimestamp: '2025-01-01T00:00:00Z',\n"
            "  annotations: {scheduling.k8s.io/group-name: hold, kbatch.io/runtime: 1h}}\n"
            "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
            "'3'}}}]}\n"
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: late, creationTimestamp: '2025-01-01T00:00:01Z'}\n"
            "spec: {minMember: 1, minResources: {cpu: '2'}}\n"
            "---\napiVersion: v1\nkind: Pod\n"
            "metadata: {name: late-0, creationTimestamp: '2025-01-01T00:00:01Z',\n"
            "  annotations: {scheduling.k8s.io/group-name: late, kbatch.io/runtime: 10m}}\n"
            "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
            "'1'}}}]}\n";
        static const char conf[] = "actions: \"enqueue, allocate, backfill\"\n"
                                   "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n"
                                   "  - name: conformance\n  - name: sla\n"
                                   "    arguments: {sla-waiting-time: 5m}\n"
                                   "- plugins:\n  - name: overcommit\n  - name: drf\n"
                                   "  - name: predicates\n  - name: proportion\n"
                                   "  - name: nodeorder\n";
        struct kb_cluster c;
        struct kb_sim_report rep;
        struct steps st;
        run_timed(text, conf, &c, &rep, &st);
        const struct kb_sim_gang *late = gang(&rep, "default/late");
        assert_int_equal(late->arrival, 1 * 1000000000LL);
        assert_int_equal(late->start, 301 * 1000000000LL);
        assert_int_equal(late->end, 901 * 1000000000LL);
        assert_int_equal(gang(&rep, "default/hold")->end, 3600 * 1000000000LL);
        kb_sim_report_release(&rep);
        kb_cluster_release(&c);
}

/* Every pod Succeeded, every PodGroup Completed, and every object back in
 * the cluster (finished ones leave it during the run). */
static void test_clock_completion(void **state)
{
        (void)state;
        struct kb_cluster c;
        struct kb_sim_report rep;
        struct steps st;
        run_timed(clock_manifests, kb_default_conf_yaml, &c, &rep, &st);
        assert_int_equal(c.npods, 6);
        assert_int_equal(c.npodgroups, 2);
        for (size_t i = 0; i < c.npods; i++)
                assert_int_equal(c.pods[i]->phase, KB_POD_SUCCEEDED);
        for (size_t i = 0; i < c.npodgroups; i++)
                assert_string_equal(c.podgroups[i]->phase, "Completed");
        /* cpu in use: 2 of 4 until 90, 4 of 4 until 120, then none. */
        assert_int_equal(rep.used.n, 3);
        assert_int_equal(rep.used.v[0].v.q[KB_RES_CPU], 2000);
        assert_int_equal(rep.used.v[1].t, 90 * 1000000000LL);
        assert_int_equal(rep.used.v[1].v.q[KB_RES_CPU], 4000);
        assert_int_equal(rep.used.v[2].v.q[KB_RES_CPU], 0);
        kb_sim_report_release(&rep);
        kb_cluster_release(&c);
}

/*
 * Preemption on the clock.  One 2-cpu node; gang low (2 x 1 cpu, 1h,
 * priority 1, grace 10 s) runs from 0; gang high (2 x 1 cpu, 60 s, priority
 * 1000) arrives at 30 s.  At 30 preempt evicts both low pods and high waits
 * pipelined; they are gone at 40 (the grace period), when high binds and
 * low's pods come back Pending (their Job recreates them).  high ends at
 * 100, low binds again then and runs its whole hour: it ends at 3700.
 */
static void test_clock_eviction_grace(void **state)
{
        (void)state;
        const char *text =
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
            "status: {allocatable: {cpu: '2', memory: 8Gi}}\n"
            "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: lo}\n"
            "value: 1\n"
            "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: hi}\n"
            "value: 1000\n"
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: low, creationTimestamp: '2025-01-01T00:00:00Z'}\n"
            "spec: {minMember: 2, priorityClassName: lo}\n"
            "---\napiVersion: batch/v1\nkind: Job\n"
            "metadata: {name: low, creationTimestamp: '2025-01-01T00:00:00Z'}\n"
            "spec:\n  parallelism: 2\n  template:\n"
            "    metadata: {annotations: {scheduling.k8s.io/group-name: low, kbatch.io/runtime: "
            "1h}}\n"
            "    spec: {schedulerName: kbatch, priorityClassName: lo, "
            "terminationGracePeriodSeconds: 10,\n"
            "      containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: high, creationTimestamp: '2025-01-01T00:00:30Z'}\n"
            "spec: {minMember: 2, priorityClassName: hi}\n"
            "---\napiVersion: batch/v1\nkind: Job\n"
            "metadata: {name: high, creationTimestamp: '2025-01-01T00:00:30Z'}\n"
            "spec:\n  parallelism: 2\n  template:\n"
            "    metadata: {annotations: {scheduling.k8s.io/group-name: high, kbatch.io/runtime: "
            "60s}}\n"
            "    spec: {schedulerName: kbatch, priorityClassName: hi,\n"
            "      containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n";
        const char *conf = "actions: \"enqueue, allocate, preempt, backfill\"\n"
                           "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n"
                           "  - name: conformance\n"
                           "- plugins:\n  - name: drf\n  - name: predicates\n"
                           "  - name: proportion\n  - name: nodeorder\n";
        struct kb_cluster c;
        struct kb_sim_report rep;
        struct steps st;
        run_timed(text, conf, &c, &rep, &st);
        size_t evicted_at = SIZE_MAX;
        for (long i = 0; i < st.n && i < 64; i++)
                if (st.evictions[i] && evicted_at == SIZE_MAX)
                        evicted_at = (size_t)i;
        assert_true(evicted_at != SIZE_MAX);
        assert_int_equal(st.times[evicted_at], 30);
        assert_int_equal(st.evictions[evicted_at], 2);
        const struct kb_sim_gang *low = gang(&rep, "default/low"),
                                 *high = gang(&rep, "default/high");
        assert_int_equal(low->evictions, 2);
        assert_int_equal(low->start, 0);
        assert_int_equal(high->arrival, 30 * 1000000000LL);
        assert_int_equal(high->start, 40 * 1000000000LL);
        assert_int_equal(high->end, 100 * 1000000000LL);
        assert_int_equal(low->end, 3700 * 1000000000LL);
        assert_int_equal(rep.makespan, 3700 * 1000000000LL);
        assert_int_equal(rep.stop, KB_SIM_DONE);
        kb_sim_report_release(&rep);
        kb_cluster_release(&c);
}

/* A gang that can never fit stops the run once nothing else can change,
 * with its reason; the others finish. */
static void test_clock_stuck(void **state)
{
        (void)state;
        const char *text =
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
            "status: {allocatable: {cpu: '2', memory: 8Gi}}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: ok, annotations: "
            "{kbatch.io/runtime: 5m}}\n"
            "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
            "'1'}}}]}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: big}\n"
            "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
            "'4'}}}]}\n"
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: huge}\nspec: {minMember: 1}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: huge-0, annotations: "
            "{scheduling.k8s.io/group-name: huge}}\n"
            "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
            "'3'}}}]}\n";
        struct kb_cluster c;
        struct kb_sim_report rep;
        struct steps st;
        lone_pods = true;
        run_timed(text, kb_default_conf_yaml, &c, &rep, &st);
        lone_pods = false;
        assert_int_equal(rep.stop, KB_SIM_STUCK);
        /* The lone pod ran the 5 minutes it declared; huge never started. */
        const struct kb_sim_gang *ok = gang(&rep, "default/ok"), *huge = gang(&rep, "default/huge");
        assert_true(ok->lone);
        assert_int_equal(ok->end, 300 * 1000000000LL);
        assert_int_equal(huge->start, -1);
        /* Its reason is the PodGroup's condition message (the gang
         * plugin's words; they name the 3 cpu the pod asks for). */
        assert_non_null(huge->why);
        assert_non_null(strstr(huge->why, "cpu 3"));
        assert_int_equal(rep.makespan, 300 * 1000000000LL);
        /* A lone pod that never fits says why as well. */
        const struct kb_sim_gang *big = gang(&rep, "default/big");
        assert_true(big->lone);
        assert_int_equal(big->start, -1);
        assert_non_null(big->why);
        assert_non_null(strstr(big->why, "Insufficient cpu"));
        kb_sim_report_release(&rep);
        kb_cluster_release(&c);
}

/* Pods that never started ran no runtime, default or not: the report
 * counts only those that ran the default (issue 23: it counted every pod
 * of ours without kbatch.io/runtime). */
static void test_clock_default_runtime_counted_when_run(void **state)
{
        (void)state;
        const char *text =
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
            "status: {allocatable: {cpu: '2', memory: 8Gi}}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: plain}\n"
            "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
            "'1'}}}]}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: timed, annotations: "
            "{kbatch.io/runtime: 5m}}\n"
            "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
            "'1'}}}]}\n"
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: huge}\nspec: {minMember: 2}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: huge-0, annotations: "
            "{scheduling.k8s.io/group-name: huge}}\n"
            "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
            "'3'}}}]}\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: huge-1, annotations: "
            "{scheduling.k8s.io/group-name: huge}}\n"
            "spec: {schedulerName: kbatch, containers: [{name: c, resources: {requests: {cpu: "
            "'3'}}}]}\n";
        struct kb_cluster c;
        struct kb_sim_report rep;
        struct steps st;
        lone_pods = true;
        run_timed(text, kb_default_conf_yaml, &c, &rep, &st);
        lone_pods = false;
        assert_int_equal(rep.stop, KB_SIM_STUCK);
        assert_int_equal(gang(&rep, "default/huge")->start, -1);
        assert_int_equal(gang(&rep, "default/plain")->end, 3600 * 1000000000LL);
        /* plain ran the default hour; huge's two pods never ran. */
        assert_int_equal(rep.default_runtime_pods, 1);
        kb_sim_report_release(&rep);
        kb_cluster_release(&c);
}

/* ---- the conf ---------------------------------------------------------------- */

/* Volcano's default volcano-scheduler.conf, as its chart ships it. */
static const char volcano_default_conf[] = "actions: \"enqueue, allocate, backfill\"\n"
                                           "tiers:\n"
                                           "- plugins:\n"
                                           "  - name: priority\n"
                                           "  - name: gang\n"
                                           "    enablePreemptable: false\n"
                                           "  - name: conformance\n"
                                           "- plugins:\n"
                                           "  - name: overcommit\n"
                                           "  - name: drf\n"
                                           "    enablePreemptable: false\n"
                                           "  - name: predicates\n"
                                           "  - name: proportion\n"
                                           "  - name: nodeorder\n"
                                           "  - name: binpack\n";

static int parse(const char *text, struct kb_conf *conf, char *err, size_t n)
{
        return kb_conf_parse(text, strlen(text), conf, err, n);
}

static void test_conf_volcano_default(void **state)
{
        (void)state;
        struct kb_conf conf;
        char err[256] = "";
        assert_int_equal(parse(volcano_default_conf, &conf, err, sizeof(err)), 0);
        assert_int_equal(conf.nactions, 3);
        assert_string_equal(conf.actions[0].name, "enqueue");
        assert_string_equal(conf.actions[1].name, "allocate");
        assert_string_equal(conf.actions[2].name, "backfill");
        assert_int_equal(conf.ntiers, 2);
        assert_int_equal(conf.tiers[0].nplugins, 3);
        assert_int_equal(conf.tiers[1].nplugins, 6);
        assert_string_equal(conf.tiers[0].plugins[1].name, "gang");
        assert_int_equal(conf.tiers[0].plugins[1].enabled[KB_POINT_PREEMPTABLE], 0);
        assert_int_equal(conf.tiers[0].plugins[1].enabled[KB_POINT_JOB_ORDER], 1);
        assert_string_equal(conf.tiers[1].plugins[5].name, "binpack");
        assert_true(kb_conf_has_action(&conf, "allocate"));
        assert_false(kb_conf_has_action(&conf, "preempt"));
        kb_conf_release(&conf);

        /* And kbatch's own default, which the scenarios run on. */
        assert_int_equal(parse(kb_default_conf_yaml, &conf, err, sizeof(err)), 0);
        assert_int_equal(conf.ntiers, 2);
        assert_int_equal(conf.tiers[1].nplugins, 5);
        kb_conf_release(&conf);
}

static void test_conf_flag_spellings(void **state)
{
        (void)state;
        struct kb_conf conf;
        char err[256] = "";
        const char *text = "actions: allocate\n"
                           "tiers:\n- plugins:\n"
                           "  - name: priority\n    enableJobOrder: false\n"
                           "  - name: drf\n    enabledJobOrder: false\n"
                           "  - name: gang\n    enabledJobReady: false\n    enableJobOrder: true\n";
        assert_int_equal(parse(text, &conf, err, sizeof(err)), 0);
        const struct kb_plugin_conf *p = conf.tiers[0].plugins;
        assert_int_equal(p[0].enabled[KB_POINT_JOB_ORDER], 0);
        assert_int_equal(p[0].enabled[KB_POINT_TASK_ORDER], 1);
        assert_int_equal(p[1].enabled[KB_POINT_JOB_ORDER], 0);
        assert_int_equal(p[2].enabled[KB_POINT_JOB_READY], 0);
        assert_int_equal(p[2].enabled[KB_POINT_JOB_ORDER], 1);
        /* One flag governs both node-order points. */
        kb_conf_release(&conf);
        assert_int_equal(parse("actions: allocate\ntiers:\n- plugins:\n  - name: nodeorder\n"
                               "    enabledNodeOrder: false\n",
                               &conf, err, sizeof(err)),
                         0);
        assert_int_equal(conf.tiers[0].plugins[0].enabled[KB_POINT_NODE_ORDER], 0);
        assert_int_equal(conf.tiers[0].plugins[0].enabled[KB_POINT_BATCH_NODE_ORDER], 0);
        kb_conf_release(&conf);
}

static void expect_conf_error(const char *text, const char *want)
{
        struct kb_conf conf;
        char err[512] = "";
        int rc = parse(text, &conf, err, sizeof(err));
        if (rc != KB_EBADCONF || strcmp(err, want) != 0)
                print_error("want: %s\ngot (rc %d): %s\n", want, rc, err);
        assert_int_equal(rc, KB_EBADCONF);
        assert_string_equal(err, want);
        /* A failed parse leaves nothing to release. */
        assert_int_equal(conf.nactions, 0);
        assert_int_equal(conf.ntiers, 0);
}

static void test_conf_errors(void **state)
{
        (void)state;
        expect_conf_error("actions: \"enqueue, allocat\"\n", "actions: unknown action \"allocat\"");
        expect_conf_error("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: gnag\n",
                          "tiers[0].plugins[1].name: unknown plugin \"gnag\"");
        expect_conf_error("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n"
                          "    enableJobReady: 1\n",
                          "tiers[0].plugins[0].enableJobReady: must be true or false");
        expect_conf_error("actions: allocate\ntiers:\n- plugins:\n  - name: gang\n"
                          "    enabledJobOrder: \"no\"\n",
                          "tiers[0].plugins[0].enabledJobOrder: must be true or false");
        /* A broken YAML conf: the flow sequence on line 1 never closes. */
        expect_conf_error("actions: [enqueue, allocate\ntiers: []\n",
                          "line 2: did not find expected ',' or ']' while parsing a flow "
                          "sequence");
        expect_conf_error("- actions\n", "the conf must be one YAML map");
        expect_conf_error("tiers: []\n", "actions: required");
        /* The enqueue action's durations (pkg/framework/inqueue.c). */
        expect_conf_error("actions: \"enqueue, allocate\"\nconfigurations:\n"
                          "- name: enqueue\n  arguments: {inqueueTimeout: 10x}\n",
                          "configurations[0] (enqueue).arguments.inqueueTimeout: unknown unit "
                          "\"x\" in duration \"10x\" (units: ns, us, ms, s, m, h)");
        expect_conf_error("actions: \"enqueue, allocate\"\nconfigurations:\n"
                          "- name: enqueue\n  arguments: {inqueueBackoff: -1m}\n",
                          "configurations[0] (enqueue).arguments.inqueueBackoff: must not be "
                          "negative, got \"-1m\"");
        expect_conf_error("actions: \"enqueue, allocate\"\nconfigurations:\n"
                          "- name: enqueue\n  arguments: {inqueueTimeout: 600}\n",
                          "configurations[0] (enqueue).arguments.inqueueTimeout: must be a "
                          "duration such as \"10m\"");
        /* preempt's topology-aware switch (actions/preempt.c). */
        expect_conf_error("actions: \"allocate, preempt\"\nconfigurations:\n"
                          "- name: preempt\n  arguments: {enableTopologyAwarePreemption: \"yes\"}\n",
                          "configurations[0] (preempt).arguments.enableTopologyAwarePreemption: "
                          "must be true or false, got string");
}

static void test_conf_unimplemented_skipped(void **state)
{
        (void)state;
        struct kb_conf conf;
        char err[256] = "";
        const char *text = "actions: \"enqueue, allocate, shuffle, backfill\"\n"
                           "tiers:\n- plugins:\n  - name: priority\n  - name: task-topology\n"
                           "  - name: gang\n";
        kb_test_log_start();
        assert_int_equal(parse(text, &conf, err, sizeof(err)), 0);
        assert_true(kb_test_log_contains("action shuffle is not implemented by kbatch yet"));
        assert_true(kb_test_log_contains("plugin task-topology is not implemented by kbatch yet"));
        kb_test_log_stop();
        assert_int_equal(conf.nactions, 3);
        assert_false(kb_conf_has_action(&conf, "shuffle"));
        assert_int_equal(conf.tiers[0].nplugins, 2);
        assert_string_equal(conf.tiers[0].plugins[0].name, "priority");
        assert_string_equal(conf.tiers[0].plugins[1].name, "gang");
        kb_conf_release(&conf);
}

static void test_conf_configurations(void **state)
{
        (void)state;
        struct kb_conf conf;
        char err[256] = "";
        const char *text = "actions: \"enqueue, allocate\"\n"
                           "tiers:\n- plugins:\n  - name: gang\n"
                           "configurations:\n"
                           "- name: enqueue\n  arguments: {overcommit-factor: 1.5}\n"
                           "- name: reclaim\n  arguments: {x: 1}\n";
        kb_test_log_start();
        assert_int_equal(parse(text, &conf, err, sizeof(err)), 0);
        /* An action not in the list: a warning, not an error. */
        assert_true(kb_test_log_contains("configurations[1]: action reclaim is not in actions"));
        kb_test_log_stop();
        assert_true(kb_args_double(conf.actions[0].arguments, "overcommit-factor", 1.2) == 1.5);
        /* allocate has no configuration: an empty object, never NULL. */
        assert_non_null(conf.actions[1].arguments);
        assert_int_equal(conf.actions[1].arguments->type, KB_VOBJECT);
        assert_int_equal(conf.actions[1].arguments->obj.n, 0);
        kb_conf_release(&conf);
}

/* Fields kbatch reads but does not evaluate yet are reported per job, never
 * ignored in silence: the group's, then each distinct set of pod fields
 * with the first pod carrying it; a pod without a group gets its own. */
static void test_unevaluated_fields_reported(void **state)
{
        (void)state;
        const char *text =
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
            "status: {allocatable: {cpu: '4', memory: 8Gi}}\n"
            "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: g}\nspec: {minMember: 2, subGroupPolicy: [{name: s, "
            "networkTopology: {mode: soft}}]}\n"
            "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: g}\nspec:\n"
            "  parallelism: 3\n  template:\n"
            "    metadata: {annotations: {scheduling.k8s.io/group-name: g}}\n"
            "    spec:\n      schedulerName: kbatch\n"
            "      affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution:\n"
            "        [{topologyKey: zone, labelSelector: {}}]}}\n"
            "      containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: solo}\nspec:\n"
            "  schedulerName: kbatch\n"
            "  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone,\n"
            "    whenUnsatisfiable: DoNotSchedule}]\n"
            "  resourceClaims: [{name: gpu, resourceClaimName: gpu-claim}]\n"
            "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: []}}\n"
            "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec:\n"
            "  schedulerName: kbatch\n"
            "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n";
        struct kb_cluster c;
        struct kb_conf conf;
        struct kb_snapshot snap;
        struct kb_result r;
        char err[512];
        kb_cluster_init(&c);
        /* solo stays a pod of no group, for the warning on a pod. */
        c.workload_podgroups = false;
        assert_int_equal(kb_cluster_load(&c, "t", text, strlen(text), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&c);
        assert_int_equal(parse(kb_default_conf_yaml, &conf, err, sizeof(err)), 0);
        kb_cluster_snapshot(&c, &snap);
        assert_int_equal(kb_session_run(&snap, &conf, &r), 0);
        /* Pod affinity, topology spread and a soft sub-group topology
         * (a node preference, actions/subgroups.c) are evaluated: g's
         * pods have nothing to list. */
        assert_int_equal(r.nwarnings, 1);
        assert_string_equal(r.warnings[0].object, "pod default/solo");
        assert_null(r.warnings[0].pg);
        assert_string_equal(r.warnings[0].pod->meta.name, "solo");
        assert_string_equal(r.warnings[0].message,
                            "kbatch does not evaluate these fields yet and schedules as if they "
                            "were absent: pod solo: spec.resourceClaims");
        kb_result_release(&r);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
}

/* What kbatch reads but does not act on is recorded, in conf order, and
 * --strict-conf refuses it; what asks for nothing is not. */
static void test_conf_skipped_listed(void **state)
{
        (void)state;
        struct kb_conf conf;
        char err[1024] = "", summary[1024];
        const char *text = "actions: \"enqueue, allocate, shuffle, backfill, elect\"\n"
                           "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n"
                           "- plugins:\n  - name: overcommit\n    enableHierarchy: true\n"
                           "  - name: tdm\n"
                           "  - name: predicates\n"
                           "    arguments: {predicate.NodeAffinityEnable: false,\n"
                           "                predicate.PodAffinityEnable: false,\n"
                           "                predicate.GPUSharingEnable: true}\n"
                           "  - name: nodeorder\n"
                           "    arguments: {leastrequested.weight: 2, podaffinity.weight: 0,\n"
                           "                selectorspread.weight: 3, bogus.weight: 1}\n"
                           "  - name: binpack\n"
                           "    arguments: {binpack.resources: nvidia.com/gpu,\n"
                           "                binpack.resources.nvidia.com/gpu: 2}\n"
                           "configurations:\n- name: allocate\n  arguments: {x: 1}\n"
                           "shards: 3\n";
        kb_test_log_start();
        assert_int_equal(parse(text, &conf, err, sizeof(err)), 0);
        /* Each is also a warning that names where it is. */
        assert_true(kb_test_log_contains("action shuffle is not implemented by kbatch yet"));
        assert_true(kb_test_log_contains("tiers[1].plugins[0].enableHierarchy: not supported"));
        assert_true(kb_test_log_contains(
            "tiers[1].plugins[3].arguments.bogus.weight: unknown argument of nodeorder"));
        assert_true(kb_test_log_contains("tiers[1].plugins[3].arguments.selectorspread.weight: "
                                         "not supported by kbatch's nodeorder yet"));
        kb_test_log_stop();
        assert_int_equal(conf.nactions, 3);
        kb_conf_skipped_summary(&conf, summary, sizeof(summary));
        /* Not listed: predicate.NodeAffinityEnable (acted on),
         * predicate.PodAffinityEnable: false and podaffinity.weight: 0 (they
         * ask for nothing kbatch lacks), binpack's resource weights. */
        assert_string_equal(summary,
                            "action shuffle, action elect, flag overcommit enableHierarchy, plugin "
                            "tdm, argument predicates predicate.GPUSharingEnable, argument "
                            "nodeorder selectorspread.weight, argument nodeorder bogus.weight, "
                            "argument allocate x, key shards");
        assert_int_equal(kb_conf_strict(&conf, err, sizeof(err)), KB_EBADCONF);
        assert_non_null(strstr(err, "--strict-conf: kbatch would skip 9 item(s): action "
                                    "shuffle, action elect"));
        kb_conf_release(&conf);

        /* Volcano's default conf skips nothing. */
        assert_int_equal(parse(volcano_default_conf, &conf, err, sizeof(err)), 0);
        assert_int_equal(conf.nskipped, 0);
        assert_int_equal(kb_conf_strict(&conf, err, sizeof(err)), 0);
        kb_conf_release(&conf);
}

/* A conf that would leave the scheduler idle is an error, not a silence. */
static void test_conf_no_action(void **state)
{
        (void)state;
        kb_test_log_start();
        expect_conf_error("actions: \"\"\n",
                          "actions: no action given; the scheduler would do nothing (the default "
                          "is \"enqueue, allocate, backfill\")");
        expect_conf_error("actions: \" , \"\n",
                          "actions: no action given; the scheduler would do nothing (the default "
                          "is \"enqueue, allocate, backfill\")");
        expect_conf_error("actions: \"shuffle, elect\"\n",
                          "actions: \"shuffle, elect\": none of these is implemented by "
                          "kbatch; the scheduler would do nothing");
        kb_test_log_stop();
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_malformed_yaml),
            cmocka_unit_test(test_malformed_json),
            cmocka_unit_test(test_not_a_map),
            cmocka_unit_test(test_bad_quantity),
            cmocka_unit_test(test_negative_min_member),
            cmocka_unit_test(test_duplicate),
            cmocka_unit_test(test_job_without_template),
            cmocka_unit_test(test_unknown_kind_skipped),
            cmocka_unit_test(test_job_pods),
            cmocka_unit_test(test_statuses_line_up),
            cmocka_unit_test(test_conf_volcano_default),
            cmocka_unit_test(test_conf_flag_spellings),
            cmocka_unit_test(test_conf_errors),
            cmocka_unit_test(test_conf_unimplemented_skipped),
            cmocka_unit_test(test_conf_configurations),
            cmocka_unit_test(test_conf_skipped_listed),
            cmocka_unit_test(test_unevaluated_fields_reported),
            cmocka_unit_test(test_conf_no_action),
            cmocka_unit_test(test_duration_parse),
            cmocka_unit_test(test_duration_format),
            cmocka_unit_test(test_runtime_annotation_refused),
            cmocka_unit_test(test_percentile),
            cmocka_unit_test(test_clock_jumps),
            cmocka_unit_test(test_swf_trace),
            cmocka_unit_test(test_job_deadline),
            cmocka_unit_test(test_reservation_three_ways),
            cmocka_unit_test(test_reservation_bad_runtime),
            cmocka_unit_test(test_reservation_said),
            cmocka_unit_test(test_reservation_declared),
            cmocka_unit_test(test_reservation_topology_domain),
            cmocka_unit_test(test_reservation_topology_never),
            cmocka_unit_test(test_clock_inqueue_timeout),
            cmocka_unit_test(test_clock_sla),
            cmocka_unit_test(test_clock_completion),
            cmocka_unit_test(test_clock_eviction_grace),
            cmocka_unit_test(test_clock_stuck),
            cmocka_unit_test(test_clock_default_runtime_counted_when_run),
        };
        return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
