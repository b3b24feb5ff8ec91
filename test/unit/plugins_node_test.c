/*
 * The node-level plugins: predicates, nodeorder, binpack.  Their file-local
 * functions (KB_TESTABLE) are called directly on pods, nodes and tasks built
 * by hand; every expected number is worked out in the comment next to it.
 */
#include "testutil.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

/*
 * TEMPORARY, until branch api (pkg/api/decode.c) is merged into main: the
 * session code that the plugins' registration functions pull in calls these
 * two api functions.  Weak, so the real ones win as soon as they exist.
 */

/* ---- building blocks ----------------------------------------------------- */

#define Ki (INT64_C(1) << 10)
#define Mi (INT64_C(1) << 20)
#define Gi (INT64_C(1) << 30)

#define NARGS(...) (sizeof((char *[]){__VA_ARGS__}) / sizeof(char *))
#define KV(k, v)                                                                                   \
        {                                                                                          \
                .key = (k), .value = (v)                                                           \
        }
/* A requirement with values, and one without. */
#define REQ(k, o, ...)                                                                             \
        {                                                                                          \
                .key = (k), .op = (o), .values = (char *[]){__VA_ARGS__},                          \
                .nvalues = NARGS(__VA_ARGS__)                                                      \
        }
#define REQ0(k, o)                                                                                 \
        {                                                                                          \
                .key = (k), .op = (o)                                                              \
        }
#define TERM_E(...)                                                                                \
        {                                                                                          \
                .exprs = (struct kb_selector_req[]){__VA_ARGS__},                                  \
                .nexprs = sizeof((struct kb_selector_req[]){__VA_ARGS__}) /                        \
                          sizeof(struct kb_selector_req)                                           \
        }
#define TERM_F(...)                                                                                \
        {                                                                                          \
                .fields = (struct kb_selector_req[]){__VA_ARGS__},                                 \
                .nfields = sizeof((struct kb_selector_req[]){__VA_ARGS__}) /                       \
                           sizeof(struct kb_selector_req)                                          \
        }
#define TERM_EMPTY                                                                                 \
        {                                                                                          \
                0                                                                                  \
        }
/* A pod whose only placement spec is the given required terms. */
#define POD_REQUIRED(...)                                                                          \
        (&(struct kb_pod){.required = (struct kb_node_term[]){__VA_ARGS__},                        \
                          .nrequired = sizeof((struct kb_node_term[]){__VA_ARGS__}) /              \
                                       sizeof(struct kb_node_term)})
#define POD_SELECTOR(...)                                                                          \
        (&(struct kb_pod){.node_selector = (struct kb_kv[]){__VA_ARGS__},                          \
                          .nnode_selector =                                                        \
                              sizeof((struct kb_kv[]){__VA_ARGS__}) / sizeof(struct kb_kv)})
#define POD_TOLERATES(...)                                                                         \
        (&(struct kb_pod){.tolerations = (struct kb_toleration[]){__VA_ARGS__},                    \
                          .ntolerations = sizeof((struct kb_toleration[]){__VA_ARGS__}) /          \
                                          sizeof(struct kb_toleration)})
#define TOL(k, o, v, e)                                                                            \
        {                                                                                          \
                .key = (k), .op = (o), .value = (v), .effect = (e)                                 \
        }
#define TAINT(k, v, e)                                                                             \
        {                                                                                          \
                .key = (k), .value = (v), .effect = (e)                                            \
        }
#define NODE_TAINTED(...)                                                                          \
        (&(struct kb_node){.meta = {.name = "n1"},                                                 \
                           .ready = true,                                                          \
                           .taints = (struct kb_taint[]){__VA_ARGS__},                             \
                           .ntaints = sizeof((struct kb_taint[]){__VA_ARGS__}) /                   \
                                      sizeof(struct kb_taint)})

static struct kb_kv n1_labels[] = {
    KV("zone", "a"),
    KV("disk", "ssd"),
    KV("gpu-count", "8"),
    KV("bad-int", "eight"),
    KV("kubernetes.io/hostname", "n1"),
};

static const struct kb_node n1 = {
    .meta = {.name = "n1", .labels = n1_labels, .nlabels = KB_ARRAY_SIZE(n1_labels)},
    .ready = true,
};
static const struct kb_node n1_not_ready = {
    .meta = {.name = "n1", .labels = n1_labels, .nlabels = KB_ARRAY_SIZE(n1_labels)},
    .ready = false,
    .unschedulable = true,
};
static const struct kb_node n1_unschedulable = {
    .meta = {.name = "n1", .labels = n1_labels, .nlabels = KB_ARRAY_SIZE(n1_labels)},
    .ready = true,
    .unschedulable = true,
};

static const struct kb_pod plain = {0};

#define NS          KB_TAINT_NO_SCHEDULE
#define PNS         KB_TAINT_PREFER_NO_SCHEDULE
#define NE          KB_TAINT_NO_EXECUTE
#define EQ          KB_TOL_EQUAL
#define EX          KB_TOL_EXISTS
#define UNSCHED_KEY "node.kubernetes.io/unschedulable"

#define R_NOT_READY "node(s) were not ready"
#define R_UNSCHED   "node(s) were unschedulable"
#define R_AFFINITY  "node(s) didn't match Pod's node affinity/selector"

/* ---- predicates ---------------------------------------------------------- */

struct pred_case {
        const char *what;
        const struct kb_pod *pod;
        const struct kb_node *node;
        const char *want; /* NULL: fits */
};

static const struct pred_case pred_cases[] = {
    /* Readiness and unschedulable. */
    {"ready node, plain pod", &plain, &n1, NULL},
    {"not ready beats everything", POD_SELECTOR(KV("zone", "b")), &n1_not_ready, R_NOT_READY},
    {"not ready even with every toleration", POD_TOLERATES(TOL("", EX, "", NULL)), &n1_not_ready,
     R_NOT_READY},
    {"unschedulable", &plain, &n1_unschedulable, R_UNSCHED},
    {"unschedulable beats a selector mismatch", POD_SELECTOR(KV("zone", "b")), &n1_unschedulable,
     R_UNSCHED},
    {"unschedulable tolerated by key Exists NoSchedule",
     POD_TOLERATES(TOL(UNSCHED_KEY, EX, "", "NoSchedule")), &n1_unschedulable, NULL},
    {"unschedulable tolerated by key Equal with the empty value",
     POD_TOLERATES(TOL(UNSCHED_KEY, EQ, "", NULL)), &n1_unschedulable, NULL},
    {"unschedulable tolerated by Exists with empty key", POD_TOLERATES(TOL("", EX, "", "")),
     &n1_unschedulable, NULL},
    {"unschedulable not tolerated by the NoExecute effect",
     POD_TOLERATES(TOL(UNSCHED_KEY, EX, "", "NoExecute")), &n1_unschedulable, R_UNSCHED},
    {"unschedulable not tolerated by Equal with a value",
     POD_TOLERATES(TOL(UNSCHED_KEY, EQ, "true", NULL)), &n1_unschedulable, R_UNSCHED},

    /* nodeSelector: every key present with an equal value. */
    {"selector matches", POD_SELECTOR(KV("zone", "a"), KV("disk", "ssd")), &n1, NULL},
    {"selector value differs", POD_SELECTOR(KV("zone", "a"), KV("disk", "hdd")), &n1, R_AFFINITY},
    {"selector label missing", POD_SELECTOR(KV("rack", "r1")), &n1, R_AFFINITY},
    {"selector on the hostname label", POD_SELECTOR(KV("kubernetes.io/hostname", "n1")), &n1, NULL},

    /* Required node affinity, one operator at a time. */
    {"In matches", POD_REQUIRED(TERM_E(REQ("zone", KB_SEL_IN, "b", "a"))), &n1, NULL},
    {"In other value", POD_REQUIRED(TERM_E(REQ("zone", KB_SEL_IN, "b"))), &n1, R_AFFINITY},
    {"In label missing", POD_REQUIRED(TERM_E(REQ("rack", KB_SEL_IN, "r1"))), &n1, R_AFFINITY},
    {"In without values is malformed", POD_REQUIRED(TERM_E(REQ0("zone", KB_SEL_IN))), &n1,
     R_AFFINITY},
    {"NotIn other value", POD_REQUIRED(TERM_E(REQ("zone", KB_SEL_NOT_IN, "b"))), &n1, NULL},
    {"NotIn the value", POD_REQUIRED(TERM_E(REQ("zone", KB_SEL_NOT_IN, "b", "a"))), &n1,
     R_AFFINITY},
    {"NotIn label missing holds", POD_REQUIRED(TERM_E(REQ("rack", KB_SEL_NOT_IN, "r1"))), &n1,
     NULL},
    {"Exists present", POD_REQUIRED(TERM_E(REQ0("disk", KB_SEL_EXISTS))), &n1, NULL},
    {"Exists absent", POD_REQUIRED(TERM_E(REQ0("rack", KB_SEL_EXISTS))), &n1, R_AFFINITY},
    {"Exists with values is malformed", POD_REQUIRED(TERM_E(REQ("disk", KB_SEL_EXISTS, "ssd"))),
     &n1, R_AFFINITY},
    {"DoesNotExist absent", POD_REQUIRED(TERM_E(REQ0("rack", KB_SEL_DOES_NOT_EXIST))), &n1, NULL},
    {"DoesNotExist present", POD_REQUIRED(TERM_E(REQ0("disk", KB_SEL_DOES_NOT_EXIST))), &n1,
     R_AFFINITY},
    /* gpu-count is "8". */
    {"Gt 8 > 3", POD_REQUIRED(TERM_E(REQ("gpu-count", KB_SEL_GT, "3"))), &n1, NULL},
    {"Gt 8 > -1", POD_REQUIRED(TERM_E(REQ("gpu-count", KB_SEL_GT, "-1"))), &n1, NULL},
    {"Gt 8 > 8 is false", POD_REQUIRED(TERM_E(REQ("gpu-count", KB_SEL_GT, "8"))), &n1, R_AFFINITY},
    {"Lt 8 < 10", POD_REQUIRED(TERM_E(REQ("gpu-count", KB_SEL_LT, "10"))), &n1, NULL},
    {"Lt 8 < 8 is false", POD_REQUIRED(TERM_E(REQ("gpu-count", KB_SEL_LT, "8"))), &n1, R_AFFINITY},
    {"Gt on a non-integer label", POD_REQUIRED(TERM_E(REQ("bad-int", KB_SEL_GT, "3"))), &n1,
     R_AFFINITY},
    {"Lt on a non-integer label", POD_REQUIRED(TERM_E(REQ("bad-int", KB_SEL_LT, "3"))), &n1,
     R_AFFINITY},
    {"Gt on a missing label", POD_REQUIRED(TERM_E(REQ("rack", KB_SEL_GT, "3"))), &n1, R_AFFINITY},
    {"Gt with a non-integer value", POD_REQUIRED(TERM_E(REQ("gpu-count", KB_SEL_GT, "3.5"))), &n1,
     R_AFFINITY},
    {"Gt with two values", POD_REQUIRED(TERM_E(REQ("gpu-count", KB_SEL_GT, "3", "4"))), &n1,
     R_AFFINITY},
    /* matchFields: metadata.name only. */
    {"field name In", POD_REQUIRED(TERM_F(REQ("metadata.name", KB_SEL_IN, "n1"))), &n1, NULL},
    {"field name In other", POD_REQUIRED(TERM_F(REQ("metadata.name", KB_SEL_IN, "n2"))), &n1,
     R_AFFINITY},
    {"field name NotIn other", POD_REQUIRED(TERM_F(REQ("metadata.name", KB_SEL_NOT_IN, "n2"))), &n1,
     NULL},
    {"field name NotIn itself", POD_REQUIRED(TERM_F(REQ("metadata.name", KB_SEL_NOT_IN, "n1"))),
     &n1, R_AFFINITY},
    {"field other than metadata.name", POD_REQUIRED(TERM_F(REQ("metadata.uid", KB_SEL_IN, "n1"))),
     &n1, R_AFFINITY},
    {"field with Exists", POD_REQUIRED(TERM_F(REQ0("metadata.name", KB_SEL_EXISTS))), &n1,
     R_AFFINITY},
    /* Inside a term everything is ANDed. */
    {"term: expressions and fields ANDed",
     POD_REQUIRED({.exprs = (struct kb_selector_req[]){REQ("zone", KB_SEL_IN, "a")},
                   .nexprs = 1,
                   .fields = (struct kb_selector_req[]){REQ("metadata.name", KB_SEL_IN, "n2")},
                   .nfields = 1}),
     &n1, R_AFFINITY},
    {"term: two expressions ANDed, both hold",
     POD_REQUIRED(TERM_E(REQ("zone", KB_SEL_IN, "a"), REQ0("disk", KB_SEL_EXISTS))), &n1, NULL},
    {"term: two expressions ANDed, one fails",
     POD_REQUIRED(TERM_E(REQ("zone", KB_SEL_IN, "a"), REQ0("rack", KB_SEL_EXISTS))), &n1,
     R_AFFINITY},
    /* Terms are ORed; an empty term matches nothing. */
    {"empty term", POD_REQUIRED(TERM_EMPTY), &n1, R_AFFINITY},
    {"terms ORed, second matches",
     POD_REQUIRED(TERM_E(REQ("zone", KB_SEL_IN, "b")), TERM_E(REQ0("disk", KB_SEL_EXISTS))), &n1,
     NULL},
    {"terms ORed, none matches", POD_REQUIRED(TERM_EMPTY, TERM_E(REQ("zone", KB_SEL_IN, "b"))), &n1,
     R_AFFINITY},
    {"terms ORed, empty term skipped",
     POD_REQUIRED(TERM_EMPTY, TERM_E(REQ0("disk", KB_SEL_EXISTS))), &n1, NULL},
    /* Selector and affinity must both hold. */
    {"selector ok but affinity fails",
     &(struct kb_pod){.node_selector = (struct kb_kv[]){KV("zone", "a")},
                      .nnode_selector = 1,
                      .required = (struct kb_node_term[]){TERM_E(REQ("zone", KB_SEL_IN, "b"))},
                      .nrequired = 1},
     &n1, R_AFFINITY},
    {"affinity fails before an untolerated taint",
     POD_REQUIRED(TERM_E(REQ("zone", KB_SEL_IN, "b"))),
     &(struct kb_node){.meta = {.name = "n1"},
                       .ready = true,
                       .taints = (struct kb_taint[]){TAINT("dedicated", "gpu", NS)},
                       .ntaints = 1},
     R_AFFINITY},

    /* Taints against tolerations. */
    {"untolerated NoSchedule", &plain, NODE_TAINTED(TAINT("dedicated", "gpu", NS)),
     "node(s) had untolerated taint {dedicated: gpu}"},
    {"untolerated NoExecute", &plain, NODE_TAINTED(TAINT("evict", "now", NE)),
     "node(s) had untolerated taint {evict: now}"},
    {"untolerated taint without a value", &plain, NODE_TAINTED(TAINT("bare", "", NS)),
     "node(s) had untolerated taint {bare: }"},
    {"PreferNoSchedule is ignored", &plain, NODE_TAINTED(TAINT("soft", "x", PNS)), NULL},
    {"Exists with empty key tolerates all", POD_TOLERATES(TOL("", EX, "", NULL)),
     NODE_TAINTED(TAINT("dedicated", "gpu", NS), TAINT("evict", "now", NE)), NULL},
    {"Equal key and value", POD_TOLERATES(TOL("dedicated", EQ, "gpu", "NoSchedule")),
     NODE_TAINTED(TAINT("dedicated", "gpu", NS)), NULL},
    {"Equal value mismatch", POD_TOLERATES(TOL("dedicated", EQ, "cpu", "NoSchedule")),
     NODE_TAINTED(TAINT("dedicated", "gpu", NS)), "node(s) had untolerated taint {dedicated: gpu}"},
    {"Equal other key", POD_TOLERATES(TOL("other", EQ, "gpu", NULL)),
     NODE_TAINTED(TAINT("dedicated", "gpu", NS)), "node(s) had untolerated taint {dedicated: gpu}"},
    {"empty effect matches every effect", POD_TOLERATES(TOL("evict", EX, "", "")),
     NODE_TAINTED(TAINT("evict", "now", NE)), NULL},
    {"NULL effect matches every effect", POD_TOLERATES(TOL("dedicated", EQ, "gpu", NULL)),
     NODE_TAINTED(TAINT("dedicated", "gpu", NS)), NULL},
    {"effect mismatch", POD_TOLERATES(TOL("evict", EX, "", "NoSchedule")),
     NODE_TAINTED(TAINT("evict", "now", NE)), "node(s) had untolerated taint {evict: now}"},
    {"Exists ignores the value", POD_TOLERATES(TOL("dedicated", EX, "", "NoSchedule")),
     NODE_TAINTED(TAINT("dedicated", "anything", NS)), NULL},
    {"first untolerated taint is reported", POD_TOLERATES(TOL("a", EQ, "1", NULL)),
     NODE_TAINTED(TAINT("a", "1", NS), TAINT("soft", "x", PNS), TAINT("b", "2", NE),
                  TAINT("c", "3", NS)),
     "node(s) had untolerated taint {b: 2}"},
};

static void test_predicates_table(void **state)
{
        (void)state;
        for (size_t i = 0; i < KB_ARRAY_SIZE(pred_cases); i++) {
                const struct pred_case *c = &pred_cases[i];
                char buf[256];
                const char *got = predicates_check(c->pod, c->node, buf, sizeof(buf));
                if (!kb_streq(got, c->want)) {
                        print_error("case %zu (%s): got \"%s\", want \"%s\"\n", i, c->what,
                                    got ? got : "(fits)", c->want ? c->want : "(fits)");
                        fail();
                }
        }
}

/* Static reasons are returned as static strings (the callback interns only
 * the taint message, which lives in buf). */
static void test_predicates_static_reasons(void **state)
{
        (void)state;
        char buf[256];
        const char *a = predicates_check(&plain, &n1_unschedulable, buf, sizeof(buf));
        assert_string_equal(a, R_UNSCHED);
        assert_ptr_not_equal(a, buf);
        const char *b =
            predicates_check(&plain, NODE_TAINTED(TAINT("k", "v", NS)), buf, sizeof(buf));
        assert_ptr_equal(b, buf);
}

/* ---- nodeorder ----------------------------------------------------------- */

static struct kb_value *yaml_map(const char *text)
{
        struct kb_value **docs;
        size_t n;
        char err[256];
        if (!*text)
                return kb_value_new(KB_VOBJECT);
        assert_int_equal(kb_yaml_parse(text, strlen(text), &docs, &n, err, sizeof(err)), 0);
        assert_int_equal(n, 1);
        struct kb_value *v = docs[0];
        free(docs);
        return v;
}

static int gpu_slot(void)
{
        int g = kb_res_intern("nvidia.com/gpu");
        assert_true(g > KB_RES_PODS);
        return g;
}

/* A task with a cpu / memory (/ gpu) request, and a node with allocatable
 * and used the same way.  GPUs are counted in milli-units, as kbatch stores
 * extended resources. */
static struct kb_task task_of(const struct kb_pod *pod, int64_t cpu, int64_t mem, int64_t gpus)
{
        /* A task points at its requests (a pod's, in a session): these
         * live in a ring, long enough for the tasks a test holds at once. */
        static struct kb_res reqs[16];
        static unsigned next;
        struct kb_res *r = &reqs[next++ % KB_ARRAY_SIZE(reqs)];
        memset(r, 0, sizeof(*r));
        r->q[KB_RES_CPU] = cpu;
        r->q[KB_RES_MEMORY] = mem;
        r->q[KB_RES_PODS] = 1;
        if (gpus)
                r->q[gpu_slot()] = gpus * 1000;
        return (struct kb_task){.pod = pod, .node = -1, .resreq = r};
}

static struct kb_node_info node_of(const struct kb_node *node, int64_t cpu, int64_t mem,
                                   int64_t gpus, int64_t used_cpu, int64_t used_mem,
                                   int64_t used_gpus)
{
        struct kb_node_info n = {.node = node, .name = node->meta.name};
        n.allocatable.q[KB_RES_CPU] = cpu;
        n.allocatable.q[KB_RES_MEMORY] = mem;
        n.allocatable.q[KB_RES_PODS] = 110;
        n.used.q[KB_RES_CPU] = used_cpu;
        n.used.q[KB_RES_MEMORY] = used_mem;
        if (gpus || used_gpus) {
                n.allocatable.q[gpu_slot()] = gpus * 1000;
                n.used.q[gpu_slot()] = used_gpus * 1000;
        }
        n.idle = n.allocatable;
        kb_res_sub(&n.idle, &n.used);
        return n;
}

struct res_case {
        const char *what;
        int64_t cpu, mem, used_cpu, used_mem; /* node */
        int64_t req_cpu, req_mem;             /* task */
        int64_t least, most, balanced;
};

static const struct res_case res_cases[] = {
    /* requested 2000m / 4Gi.  least: cpu (4000-2000)*100/4000 = 50,
     * mem (8Gi-4Gi)*100/8Gi = 50 -> (50+50)/2 = 50.  most: 2000*100/4000
     * = 50, 50 -> 50.  balanced: 0.5, 0.5 -> std 0 -> 100. */
    {"the brief's node", 4000, 8 * Gi, 1000, 2 * Gi, 1000, 2 * Gi, 50, 50, 100},
    /* requested 1000m / 6Gi.  least: 3000*100/4000 = 75, 2Gi*100/8Gi = 25
     * -> 50.  most: 25, 75 -> 50.  balanced: 0.25, 0.75 -> std 0.25 -> 75. */
    {"unbalanced", 4000, 8 * Gi, 0, 4 * Gi, 1000, 2 * Gi, 50, 50, 75},
    /* requested 1000m / 4Gi.  least: 75, 50 -> 125/2 = 62 (integer
     * division).  most: 25, 50 -> 75/2 = 37.  balanced: 0.25, 0.5 -> std
     * 0.125 -> (1-0.125)*100 = 87.5 -> 87. */
    {"integer division of the mean", 4000, 8 * Gi, 0, 2 * Gi, 1000, 2 * Gi, 62, 37, 87},
    /* requested 1000m / 1Gi of 3000m / 3Gi.  least: 2000*100/3000 = 66
     * (66.6 truncated) twice -> 66.  most: 100000/3000 = 33 twice -> 33.
     * balanced: 1/3, 1/3 -> 100. */
    {"per-resource truncation", 3000, 3 * Gi, 0, 0, 1000, 1 * Gi, 66, 33, 100},
    /* requested 1500m (> 1000m) / 512Mi of 1Gi.  least: cpu 0 (over),
     * mem (1024-512)*100/1024 = 50 -> (0+50)/2 = 25.  most: cpu clamped to
     * capacity -> 100, mem 50 -> 75.  balanced: cpu 1.5 capped to 1, mem
     * 0.5 -> std 0.25 -> 75. */
    {"over capacity", 1000, 1 * Gi, 1000, 0, 500, 512 * Mi, 25, 75, 75},
    /* Memory allocatable 0 is left out.  requested 500m of 2000m.  least:
     * 1500*100/2000 = 75 over one resource -> 75.  most: 25.  balanced:
     * one fraction -> std 0 -> 100. */
    {"zero memory allocatable", 2000, 0, 0, 0, 500, 0, 75, 25, 100},
    /* Nothing allocatable: no resource counts -> 0, 0; balanced 100. */
    {"nothing allocatable", 0, 0, 0, 0, 500, 1 * Gi, 0, 0, 100},
    /* An empty node and an empty request: least 100, most 0, balanced
     * 0, 0 -> 100. */
    {"best effort on an empty node", 4000, 8 * Gi, 0, 0, 0, 0, 100, 0, 100},
};

static void test_nodeorder_resource_scores(void **state)
{
        (void)state;
        int gpu = gpu_slot();
        for (size_t i = 0; i < KB_ARRAY_SIZE(res_cases); i++) {
                const struct res_case *c = &res_cases[i];
                struct kb_task t = task_of(&plain, c->req_cpu, c->req_mem, 0);
                struct kb_node_info n =
                    node_of(&n1, c->cpu, c->mem, 0, c->used_cpu, c->used_mem, 0);
                int64_t least = nodeorder_least_requested(&t, &n);
                int64_t most = nodeorder_most_requested(&t, &n);
                int64_t bal = nodeorder_balanced_resource(&t, &n, gpu);
                if (least != c->least || most != c->most || bal != c->balanced) {
                        print_error("case %zu (%s): least %" PRId64 " most %" PRId64
                                    " balanced %" PRId64 ", want %" PRId64 " %" PRId64 " %" PRId64
                                    "\n",
                                    i, c->what, least, most, bal, c->least, c->most, c->balanced);
                        fail();
                }
        }
}

static void test_nodeorder_balanced_gpu(void **state)
{
        (void)state;
        int gpu = gpu_slot();
        /* Node 8000m / 32Gi / 4 GPUs, nothing used; task 2000m / 8Gi / 2
         * GPUs: fractions 0.25, 0.25, 0.5; mean 1/3; squared deviations
         * 1/144, 1/144, 4/144; variance 6/144/3 = 1/72; std = 0.11785;
         * (1 - 0.11785) * 100 = 88.2 -> 88. */
        struct kb_task t = task_of(&plain, 2000, 8 * Gi, 2);
        struct kb_node_info n = node_of(&n1, 8000, 32 * Gi, 4, 0, 0, 0);
        assert_int_equal(nodeorder_balanced_resource(&t, &n, gpu), 88);

        /* The same node for a task without GPUs: the GPU is left out;
         * 0.25, 0.25 -> 100. */
        struct kb_task t2 = task_of(&plain, 2000, 8 * Gi, 0);
        assert_int_equal(nodeorder_balanced_resource(&t2, &n, gpu), 100);

        /* A GPU task on a node without GPUs: allocatable 0, left out:
         * 0.25, 0.25 -> 100. */
        struct kb_node_info n2 = node_of(&n1, 8000, 32 * Gi, 0, 0, 0, 0);
        assert_int_equal(nodeorder_balanced_resource(&t, &n2, gpu), 100);

        /* No GPU resource in the process (slot -1): cpu and memory only. */
        assert_int_equal(nodeorder_balanced_resource(&t, &n, -1), 100);
}

/* Preferred terms against n1: 10 [zone In a] matches; 5 [disk Exists]
 * matches; 7 [zone In b] does not; [disk Exists] with weight 0 counts for
 * nothing; 3 {} is empty and matches nothing; 4 [metadata.name In n1]
 * matches. */
static struct kb_preferred_term preferred[] = {
    {10, TERM_E(REQ("zone", KB_SEL_IN, "a"))},
    {5, TERM_E(REQ0("disk", KB_SEL_EXISTS))},
    {7, TERM_E(REQ("zone", KB_SEL_IN, "b"))},
    {0, TERM_E(REQ0("disk", KB_SEL_EXISTS))},
    {3, TERM_EMPTY},
    {4, TERM_F(REQ("metadata.name", KB_SEL_IN, "n1"))},
};
static const struct kb_pod pod_preferring = {
    .preferred = preferred,
    .npreferred = KB_ARRAY_SIZE(preferred),
};

static void test_nodeorder_node_affinity(void **state)
{
        (void)state;
        struct kb_task t = task_of(&pod_preferring, 1000, 2 * Gi, 0);
        struct kb_node_info n = node_of(&n1, 4000, 8 * Gi, 0, 0, 0, 0);
        /* 10 + 5 + 4 = 19. */
        assert_int_equal(nodeorder_node_affinity(&t, &n), 19);

        /* A node with no labels named n2 matches none: 0. */
        struct kb_node bare = {.meta = {.name = "n2"}, .ready = true};
        struct kb_node_info nb = node_of(&bare, 4000, 8 * Gi, 0, 0, 0, 0);
        assert_int_equal(nodeorder_node_affinity(&t, &nb), 0);

        /* No preferred terms: 0. */
        struct kb_task tp = task_of(&plain, 1000, 2 * Gi, 0);
        assert_int_equal(nodeorder_node_affinity(&tp, &n), 0);
}

struct weight_case {
        const char *args;
        int64_t least, most, balanced, affinity;
        double score;
};

/*
 * One node and task for every row: node 4000m / 8Gi with 0 / 2Gi used, the
 * preferring task asking 1000m / 2Gi: least 62, most 37, balanced 87 (the
 * "integer division of the mean" row above), affinity 19.
 */
static const struct weight_case weight_cases[] = {
    /* Volcano master's defaults 1, 0, 1, 2: 62 + 87 + 19*2 = 187. */
    {"", 1, 0, 1, 2, 187},
    /* 62*2 + 37*3 + 0 + 19*4 = 124 + 111 + 76 = 311; the ignored
     * Volcano weights change nothing. */
    {"leastrequested.weight: 2\nmostrequested.weight: 3\nbalancedresource.weight: 0\n"
     "nodeaffinity.weight: 4\npodaffinity.weight: 9\ntainttoleration.weight: 9\n"
     "imagelocality.weight: 9\npodtopologyspread.weight: 9\nselectorspread.weight: 9\n",
     2, 3, 0, 4, 311},
    /* Only mostrequested: 37 * 1 = 37. */
    {"leastrequested.weight: 0\nmostrequested.weight: 1\nbalancedresource.weight: 0\n"
     "nodeaffinity.weight: 0\n",
     0, 1, 0, 0, 37},
    /* Every weight 0: 0. */
    {"leastrequested.weight: 0\nbalancedresource.weight: 0\nnodeaffinity.weight: 0\n", 0, 0, 0, 0,
     0},
};

static void test_nodeorder_weights(void **state)
{
        (void)state;
        struct kb_task t = task_of(&pod_preferring, 1000, 2 * Gi, 0);
        struct kb_node_info n = node_of(&n1, 4000, 8 * Gi, 0, 0, 2 * Gi, 0);
        for (size_t i = 0; i < KB_ARRAY_SIZE(weight_cases); i++) {
                const struct weight_case *c = &weight_cases[i];
                struct kb_value *args = yaml_map(c->args);
                struct kb__nodeorder no;
                nodeorder_conf(args, &no);
                kb_value_free(args);
                assert_int_equal(no.least, c->least);
                assert_int_equal(no.most, c->most);
                assert_int_equal(no.balanced, c->balanced);
                assert_int_equal(no.affinity, c->affinity);
                double got = nodeorder_score(&no, &t, &n);
                if (fabs(got - c->score) > 1e-9) {
                        print_error("case %zu: score %g, want %g\n", i, got, c->score);
                        fail();
                }
        }
}

/* ---- binpack ------------------------------------------------------------- */

static const char *binpack_args = "binpack.weight: 10\n"
                                  "binpack.cpu: 1\n"
                                  "binpack.memory: 1\n"
                                  "binpack.resources: nvidia.com/gpu, example.com/foo\n"
                                  "binpack.resources.nvidia.com/gpu: 2\n";

static struct kb__binpack binpack_from(const char *text)
{
        struct kb_value *args = yaml_map(text);
        struct kb__binpack bp;
        binpack_conf(args, &bp);
        kb_value_free(args);
        return bp;
}

static void assert_near(double got, double want)
{
        if (fabs(got - want) > 1e-9) {
                print_error("got %.12g, want %.12g\n", got, want);
                fail();
        }
}

static void test_binpack_conf(void **state)
{
        (void)state;
        int gpu = gpu_slot();
        int foo = kb_res_intern("example.com/foo");
        assert_true(foo > KB_RES_PODS);

        struct kb__binpack bp = binpack_from(binpack_args);
        assert_int_equal(bp.weight, 10);
        assert_true(bp.has[KB_RES_CPU] && bp.res[KB_RES_CPU] == 1);
        assert_true(bp.has[KB_RES_MEMORY] && bp.res[KB_RES_MEMORY] == 1);
        assert_true(bp.has[gpu] && bp.res[gpu] == 2);
        assert_true(bp.has[foo] && bp.res[foo] == 1); /* default 1 */
        assert_false(bp.has[KB_RES_PODS]);

        /* Defaults: weight 1, cpu 1, memory 1, nothing else. */
        bp = binpack_from("");
        assert_int_equal(bp.weight, 1);
        assert_true(bp.has[KB_RES_CPU] && bp.res[KB_RES_CPU] == 1);
        assert_true(bp.has[KB_RES_MEMORY] && bp.res[KB_RES_MEMORY] == 1);
        assert_false(bp.has[gpu]);

        /* Negative weights mean 1; spaces and empty items in the list are
         * skipped; a name no object uses is ignored; binpack.cpu wins over
         * "cpu" in the list. */
        bp = binpack_from("binpack.cpu: -3\n"
                          "binpack.memory: 0\n"
                          "binpack.resources: '  nvidia.com/gpu ,, unknown.io/x , cpu,pods'\n"
                          "binpack.resources.nvidia.com/gpu: -1\n"
                          "binpack.resources.cpu: 7\n");
        assert_int_equal(bp.res[KB_RES_CPU], 1);
        assert_true(bp.has[KB_RES_MEMORY] && bp.res[KB_RES_MEMORY] == 0);
        assert_true(bp.has[gpu] && bp.res[gpu] == 1);
        assert_false(bp.has[KB_RES_PODS]);
        assert_int_equal(kb_res_lookup("unknown.io/x"), -1);
}

static void test_binpack_score(void **state)
{
        (void)state;
        int bar = kb_res_intern("example.com/bar"); /* exists, not configured */
        struct kb__binpack bp = binpack_from(binpack_args);
        /* Node 8 cpu / 32Gi / 4 GPUs with 4 cpu / 8Gi / 1 GPU used. */
        struct kb_node_info n = node_of(&n1, 8000, 32 * Gi, 4, 4000, 8 * Gi, 1);

        /* 2 cpu / 8Gi / 1 GPU: cpu 6000/8000*1 = 0.75, memory 16Gi/32Gi*1 =
         * 0.5, gpu 2000/4000*2 = 1.0; 2.25 / (1+1+2) = 0.5625; *100*10 =
         * 562.5. */
        struct kb_task t = task_of(&plain, 2000, 8 * Gi, 1);
        assert_near(binpack_score(&bp, &t, &n), 562.5);

        /* No GPU requested: the GPU is skipped, weight and all: (0.75 + 0.5)
         * / 2 = 0.625 -> 625. */
        t = task_of(&plain, 2000, 8 * Gi, 0);
        assert_near(binpack_score(&bp, &t, &n), 625);

        /* A requested resource without a weight is skipped: cpu only, 0.75 /
         * 1 -> 750. */
        t = task_of(&plain, 2000, 0, 0);
        struct kb_res with_bar = *t.resreq;
        with_bar.q[bar] = 5000;
        t.resreq = &with_bar;
        assert_near(binpack_score(&bp, &t, &n), 750);

        /* cpu alone past capacity (4000 + 5000 > 8000): 0 / 1 -> 0. */
        t = task_of(&plain, 5000, 0, 0);
        assert_near(binpack_score(&bp, &t, &n), 0);

        /* cpu past capacity, memory fits: one overflowing resource makes
         * the whole node score 0 (Volcano master), not (0 + 0.5) / 2. */
        t = task_of(&plain, 5000, 8 * Gi, 0);
        assert_near(binpack_score(&bp, &t, &n), 0);

        /* A GPU task on a node without GPUs: allocatable 0 adds 0, weight 2
         * counts: (0.75 + 0.5 + 0) / 4 = 0.3125 -> 312.5. */
        struct kb_node_info cpu_node = node_of(&n1, 8000, 32 * Gi, 0, 4000, 8 * Gi, 0);
        t = task_of(&plain, 2000, 8 * Gi, 1);
        assert_near(binpack_score(&bp, &t, &cpu_node), 312.5);

        /* The fuller node wins: the same task on an empty node: cpu 2/8 =
         * 0.25, memory 8/32 = 0.25, gpu 1/4*2 = 0.5; 1.0/4 = 0.25 -> 250. */
        struct kb_node_info empty = node_of(&n1, 8000, 32 * Gi, 4, 0, 0, 0);
        assert_near(binpack_score(&bp, &t, &empty), 250);

        /* Nothing requested at all: weightSum 0 -> 0. */
        t = task_of(&plain, 0, 0, 0);
        assert_near(binpack_score(&bp, &t, &n), 0);

        /* Weights too large for int64 sums (found by the conf fuzz target):
         * binpack.weight 5473093272154232148 made 100 * weight overflow
         * (UBSan stops the test), and cpu and memory weights near INT64_MAX
         * their sum.  The score is the same formula in double: cpu 0.75,
         * memory 0.5, equal weights -> 0.625 * 100 * weight. */
        bp = binpack_from("binpack.weight: 5473093272154232148\n"
                          "binpack.cpu: 9223372036854775807\n"
                          "binpack.memory: 9223372036854775807\n");
        t = task_of(&plain, 2000, 8 * Gi, 0);
        double got = binpack_score(&bp, &t, &n);
        double want = 0.625 * 100 * 5473093272154232148.0;
        assert_true(fabs(got - want) <= want * 1e-12);
}

static void test_binpack_weights(void **state)
{
        (void)state;
        struct kb_node_info n = node_of(&n1, 8000, 32 * Gi, 4, 4000, 8 * Gi, 1);
        struct kb_task t = task_of(&plain, 2000, 8 * Gi, 0);

        /* Defaults: (0.75 + 0.5) / 2 * 100 * 1 = 62.5. */
        struct kb__binpack bp = binpack_from("");
        assert_near(binpack_score(&bp, &t, &n), 62.5);

        /* cpu 3, memory 1: (0.75*3 + 0.5) / 4 = 2.75 / 4 = 0.6875 -> 68.75. */
        bp = binpack_from("binpack.cpu: 3\nbinpack.memory: 1\n");
        assert_near(binpack_score(&bp, &t, &n), 68.75);

        /* cpu 0: cpu adds 0 and no weight: 0.5 / 1 -> 50. */
        bp = binpack_from("binpack.cpu: 0\n");
        assert_near(binpack_score(&bp, &t, &n), 50);

        /* binpack.weight 0: the plugin registers nothing; the formula gives 0. */
        bp = binpack_from("binpack.weight: 0\n");
        assert_int_equal(bp.weight, 0);
        assert_near(binpack_score(&bp, &t, &n), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_predicates_table),
            cmocka_unit_test(test_predicates_static_reasons),
            cmocka_unit_test(test_nodeorder_resource_scores),
            cmocka_unit_test(test_nodeorder_balanced_gpu),
            cmocka_unit_test(test_nodeorder_node_affinity),
            cmocka_unit_test(test_nodeorder_weights),
            cmocka_unit_test(test_binpack_conf),
            cmocka_unit_test(test_binpack_score),
            cmocka_unit_test(test_binpack_weights),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
