/* Quantities, resource vectors and the object decoders. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "value/value.h"

#define GI (INT64_C(1) << 30)
#define MI (INT64_C(1) << 20)

/* Decodes YAML text; the tree is freed before the object is looked at, so
 * an object that kept pointers into it shows up under ASan. */
static int decode(const char *text, struct kb_object *o, char *err, size_t errlen)
{
        struct kb_value *v = kb_test_yaml1(text);
        int rc = kb_object_decode(v, o, err, errlen);
        kb_value_free(v);
        return rc;
}

static void decode_ok(const char *text, struct kb_object *o, enum kb_kind kind)
{
        char err[512] = "";
        int rc = decode(text, o, err, sizeof(err));
        if (rc)
                print_error("decode: %s\n", err);
        assert_int_equal(rc, 0);
        assert_int_equal(o->kind, kind);
        assert_non_null(o->ptr);
}

/* ---- quantities ------------------------------------------------------- */

struct qcase {
        const char *text;
        bool milli;
        int rc;
        int64_t want;
};

static void test_quantity_parse(void **state)
{
        (void)state;
        static const struct qcase cases[] = {
            {"1", true, 0, 1000},
            {"1", false, 0, 1},
            {"0", true, 0, 0},
            {"0.5", true, 0, 500},
            {"0.5", false, 0, 1}, /* Value() rounds up */
            {"100m", true, 0, 100},
            {"100m", false, 0, 1},
            {"1.5Gi", false, 0, INT64_C(1610612736)}, /* 15 * 2^30 / 10 */
            {"1.000Gi", false, 0, GI},
            {"1e3", false, 0, 1000},
            {"1E3", false, 0, 1000},
            {"1e+3", false, 0, 1000},
            {"1e3", true, 0, 1000000},
            {"1k", false, 0, 1000},
            {"1Ki", false, 0, 1024},
            {"1M", false, 0, 1000000},
            {"1Mi", false, 0, MI},
            {"2Ti", false, 0, INT64_C(2) << 40},
            {"3P", false, 0, INT64_C(3000000000000000)},
            {"1E", false, 0, INT64_C(1000000000000000000)},
            {"7Ei", false, 0, INT64_C(8070450532247928832)}, /* 7 * 2^60 */
            {"0.1m", true, 0, 1},                            /* 0.1 milli rounds up to 1 */
            {"0.1m", false, 0, 1},
            {"1e-3", true, 0, 1},
            {"1e-3", false, 0, 1},
            {"1.5", false, 0, 2},
            {"-1", false, 0, -1},
            {"-1", true, 0, -1000},
            {"-0.5", false, 0, 0}, /* ceil(-0.5) */
            {"-1.5", false, 0, -1},
            {"+2", false, 0, 2},
            {".5", true, 0, 500},
            {"5.", false, 0, 5},
            {"0.0001", false, 0, 1},
            {"9223372036854775807", false, 0, INT64_MAX},
            {"-9223372036854775808", false, 0, INT64_MIN},
            {"9223372036854775.807", true, 0, INT64_MAX},
            {"9223372036854775808", false, KB_EOVERFLOW, 0},
            {"9223372036854775807", true, KB_EOVERFLOW, 0},
            {"8Ei", false, KB_EOVERFLOW, 0}, /* 2^63 */
            {"1e999", false, KB_EOVERFLOW, 0},
            {"1e19", false, KB_EOVERFLOW, 0},
            {"12Qi", false, KB_EBADQTY, 0},
            {"--1", false, KB_EBADQTY, 0},
            {"", false, KB_EBADQTY, 0},
            {"Gi", false, KB_EBADQTY, 0},
            {".", false, KB_EBADQTY, 0},
            {"-", false, KB_EBADQTY, 0},
            {"1e", false, KB_EBADQTY, 0},
            {"1e3Gi", false, KB_EBADQTY, 0},
            {"1ki", false, KB_EBADQTY, 0},
            {"1K", false, KB_EBADQTY, 0},
            {" 1", false, KB_EBADQTY, 0},
            {"1 ", false, KB_EBADQTY, 0},
            {"0x10", false, KB_EBADQTY, 0},
            {"1.2.3", false, KB_EBADQTY, 0},
            /* Found by the quantity fuzz target: a long mantissa times 2^60,
             * then times 1000 for milli, overflowed the 128-bit
             * intermediate before the range check.  The second wrapped to
             * a negative number that passed it: 1000 * 29514790517935282585
             * * 2^60 "parsed" as a negative quantity. */
            {"2222200000000000000006Ei", true, KB_EOVERFLOW, 0},
            {"29514790517935282585Ei", true, KB_EOVERFLOW, 0},
        };
        int failed = 0;
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                const struct qcase *c = &cases[i];
                int64_t got = 12345;
                int rc = kb_quantity_parse(c->text, c->milli, &got);
                if (rc != c->rc || (rc == 0 && got != c->want)) {
                        print_error("%s (milli %d): rc %d value %lld, want rc %d value %lld\n",
                                    c->text, c->milli, rc, (long long)got, c->rc,
                                    (long long)c->want);
                        failed++;
                }
        }
        assert_int_equal(failed, 0);
        int64_t x;
        assert_int_equal(kb_quantity_parse(NULL, false, &x), KB_EBADQTY);
}

static void test_quantity_format(void **state)
{
        (void)state;
        static const struct {
                int64_t v;
                bool milli, binary;
                const char *want;
        } cases[] = {
            {500, true, false, "500m"},
            {2000, true, false, "2"},
            {1500, true, false, "1500m"},
            {0, true, false, "0"},
            {1610612736, false, true, "1536Mi"},
            {GI, false, true, "1Gi"},
            {1024, false, true, "1Ki"},
            {1000, false, true, "1000"},
            {0, false, true, "0"},
            {INT64_C(8070450532247928832), false, true, "7Ei"},
            {5, false, false, "5"},
            {1024, false, false, "1024"},
            {-3000, true, false, "-3"},
            {-1500, true, false, "-1500m"},
            {INT64_MIN, false, false, "-9223372036854775808"},
            {INT64_MAX, true, false, "9223372036854775807m"},
            {-2048, false, true, "-2Ki"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                char buf[48];
                kb_quantity_format(cases[i].v, cases[i].milli, cases[i].binary, buf, sizeof(buf));
                assert_string_equal(buf, cases[i].want);
        }
        /* Cut short as snprintf cuts: n - 1 bytes and the terminator. */
        char small[4];
        kb_quantity_format(1536 * 1024, false, true, small, sizeof(small));
        assert_string_equal(small, "153");
        kb_quantity_format(12, false, true, small, sizeof(small));
        assert_string_equal(small, "12");
        kb_quantity_format(3 * 1024, false, true, small, sizeof(small));
        assert_string_equal(small, "3Ki");
        kb_quantity_format(30 * 1024, false, true, small, sizeof(small));
        assert_string_equal(small, "30K");
}

/* kb_format_decimal and kb_quantity_human print whole numbers without
 * snprintf: what they print must be what "%.2f" with trailing zeros
 * dropped printed, for whole numbers and fractions alike. */
static void test_format_decimal(void **state)
{
        (void)state;
        static const double vs[] = {0.0, -0.0, 1, -1, 8, 32, 100, 1e6, -123456789.0,
                                    9007199254740991.0, 9007199254740992.0, 1e20, -1e20,
                                    0.5, 0.25, 9.3, 1.005, 0.125, -0.001, 2.675, 1e-9,
                                    12345.678, -7.5};
        for (size_t i = 0; i < KB_ARRAY_SIZE(vs); i++) {
                char want[400], got[400];
                snprintf(want, sizeof(want), "%.2f", vs[i]);
                char *dot = strchr(want, '.');
                char *end = want + strlen(want);
                while (end > dot + 1 && end[-1] == '0')
                        *--end = '\0';
                if (end == dot + 1)
                        *dot = '\0';
                if (strcmp(want, "-0") == 0)
                        strcpy(want, "0");
                kb_format_decimal(vs[i], 2, got, sizeof(got));
                assert_string_equal(got, want);
        }
        char buf[8];
        assert_int_equal(kb_format_i64(-1234567890, buf, sizeof(buf)), 11);
        assert_string_equal(buf, "-123456");
        assert_int_equal(kb_format_i64(0, buf, sizeof(buf)), 1);
        assert_string_equal(buf, "0");
        /* Human quantities: memory in binary units, cpu from millicores. */
        kb_quantity_human(32.0 * 1024 * 1024 * 1024, false, true, buf, sizeof(buf));
        assert_string_equal(buf, "32Gi");
        kb_quantity_human(1536.0 * 1024 * 1024, false, true, buf, sizeof(buf));
        assert_string_equal(buf, "1.5Gi");
        kb_quantity_human(8000, true, false, buf, sizeof(buf));
        assert_string_equal(buf, "8");
        kb_quantity_human(250, true, false, buf, sizeof(buf));
        assert_string_equal(buf, "0.25");
}

/* ---- resource vectors ------------------------------------------------- */

static void test_res_table(void **state)
{
        (void)state;
        assert_true(kb_res_count() >= 3);
        assert_int_equal(kb_res_lookup("cpu"), KB_RES_CPU);
        assert_int_equal(kb_res_lookup("memory"), KB_RES_MEMORY);
        assert_int_equal(kb_res_lookup("pods"), KB_RES_PODS);
        assert_int_equal(kb_res_lookup("example.com/never-used"), -1);

        int gpu = kb_res_intern("nvidia.com/gpu");
        assert_true(gpu >= 3);
        assert_int_equal(kb_res_intern("nvidia.com/gpu"), gpu);
        assert_int_equal(kb_res_lookup("nvidia.com/gpu"), gpu);
        assert_string_equal(kb_res_name(gpu), "nvidia.com/gpu");
        assert_string_equal(kb_res_name(-1), "?");
        assert_string_equal(kb_res_name(KB_RES_MAX), "?");

        int eph = kb_res_intern("ephemeral-storage");
        int huge = kb_res_intern("hugepages-2Mi");
        assert_true(kb_res_is_milli(KB_RES_CPU));
        assert_false(kb_res_is_milli(KB_RES_MEMORY));
        assert_false(kb_res_is_milli(KB_RES_PODS));
        assert_true(kb_res_is_milli(gpu));
        assert_false(kb_res_is_milli(eph));
        assert_true(kb_res_is_bytes(KB_RES_MEMORY));
        assert_true(kb_res_is_bytes(eph));
        assert_true(kb_res_is_bytes(huge));
        assert_false(kb_res_is_bytes(KB_RES_CPU));
        assert_false(kb_res_is_bytes(gpu));
}

static void test_res_vectors(void **state)
{
        (void)state;
        int gpu = kb_res_intern("nvidia.com/gpu");
        struct kb_res a = {{0}}, b = {{0}};
        char buf[256];

        assert_true(kb_res_is_empty(&a));
        a.q[KB_RES_PODS] = 1;
        assert_true(kb_res_is_empty(&a)); /* the pods slot does not count */
        a.q[KB_RES_CPU] = 2000;
        a.q[KB_RES_MEMORY] = 4 * GI;
        a.q[gpu] = 1000;
        assert_false(kb_res_is_empty(&a));

        kb_res_format(&a, false, buf, sizeof(buf));
        assert_string_equal(buf, "cpu: 2, memory: 4Gi, nvidia.com/gpu: 1");
        kb_res_format(&a, true, buf, sizeof(buf));
        assert_string_equal(buf, "cpu: 2, memory: 4Gi, pods: 1, nvidia.com/gpu: 1");

        b.q[KB_RES_CPU] = 500;
        b.q[KB_RES_MEMORY] = GI;
        kb_res_add(&b, &a);
        assert_int_equal(b.q[KB_RES_CPU], 2500);
        assert_int_equal(b.q[KB_RES_MEMORY], 5 * GI);
        assert_int_equal(b.q[gpu], 1000);
        assert_true(kb_res_le(&a, &b));
        assert_false(kb_res_le(&b, &a));
        assert_int_equal(kb_res_first_short(&a, &b), -1);
        assert_int_equal(kb_res_first_short(&b, &a), KB_RES_CPU);
        kb_res_sub(&b, &a);
        assert_int_equal(b.q[KB_RES_CPU], 500);
        assert_int_equal(b.q[gpu], 0);
        assert_int_equal(b.q[KB_RES_PODS], 0);

        struct kb_res u;
        kb_res_fill(&u, KB_RES_UNLIMITED);
        for (int i = 0; i < KB_RES_MAX; i++)
                assert_true(u.q[i] == KB_RES_UNLIMITED);
        assert_true(kb_res_le(&a, &u));
        kb_res_format(&u, true, buf, sizeof(buf));
        assert_string_equal(buf, ""); /* unlimited slots are skipped */
        u.q[KB_RES_CPU] = 1500;
        kb_res_format(&u, true, buf, sizeof(buf));
        assert_string_equal(buf, "cpu: 1500m");

        /* A short buffer truncates, never overruns. */
        char small[8];
        kb_res_format(&a, false, small, sizeof(small));
        assert_true(strlen(small) < sizeof(small));
}

static void test_res_decode(void **state)
{
        (void)state;
        struct kb_value *v = kb_test_yaml1("cpu: 1.5\nmemory: 1Gi\nnvidia.com/gpu: \"2\"\n");
        struct kb_res r = {{0}};
        char err[256];
        assert_int_equal(kb_res_decode(v, "spec.minResources", &r, err, sizeof(err)), 0);
        assert_int_equal(r.q[KB_RES_CPU], 1500);
        assert_int_equal(r.q[KB_RES_MEMORY], GI);
        assert_int_equal(r.q[kb_res_lookup("nvidia.com/gpu")], 2000);
        /* It adds. */
        assert_int_equal(kb_res_decode(v, "x", &r, err, sizeof(err)), 0);
        assert_int_equal(r.q[KB_RES_CPU], 3000);
        kb_value_free(v);

        assert_int_equal(kb_res_decode(NULL, "x", &r, err, sizeof(err)), 0);

        static const struct {
                const char *yaml;
                const char *err;
        } bad[] = {
            {"cpu: 12Qi\n", "spec.minResources.cpu: malformed quantity \"12Qi\""},
            {"memory: 1e999\n", "spec.minResources.memory: value out of range \"1e999\""},
            {"cpu: -1\n", "spec.minResources.cpu: must not be negative, got \"-1\""},
            {"cpu: [1]\n", "spec.minResources.cpu: must be a quantity, got array"},
            {"cpu: true\n", "spec.minResources.cpu: must be a quantity, got boolean"},
            {"cpu: null\n", "spec.minResources.cpu: must be a quantity, got null"},
            {"[cpu]\n", "spec.minResources: must be an object, got array"},
            {"\"\": 1\n", "spec.minResources: empty resource name"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(bad); i++) {
                struct kb_res z = {{0}};
                v = kb_test_yaml1(bad[i].yaml);
                assert_int_equal(kb_res_decode(v, "spec.minResources", &z, err, sizeof(err)),
                                 KB_EBADINPUT);
                assert_string_equal(err, bad[i].err);
                kb_value_free(v);
        }
        /* No message buffer is fine too. */
        v = kb_test_yaml1("cpu: bad\n");
        assert_int_equal(kb_res_decode(v, "x", &r, NULL, 0), KB_EBADINPUT);
        kb_value_free(v);
}

/* ---- pods ------------------------------------------------------------- */

static const char pod_full[] =
    "apiVersion: v1\n"
    "kind: Pod\n"
    "metadata:\n"
    "  name: train-0\n"
    "  namespace: team-a\n"
    "  uid: 1234-abcd\n"
    "  resourceVersion: \"42\"\n"
    "  labels: {app: train, tier: 1}\n"
    "  annotations:\n"
    "    scheduling.k8s.io/group-name: train\n"
    "    scheduling.volcano.sh/group-name: other\n"
    "  creationTimestamp: \"2024-01-02T03:04:05Z\"\n"
    "  deletionTimestamp: \"2024-01-02T03:05:05Z\"\n"
    "spec:\n"
    "  schedulerName: kbatch\n"
    "  nodeName: n1\n"
    "  priorityClassName: high\n"
    "  priority: 1000\n"
    "  preemptionPolicy: Never\n"
    "  nodeSelector: {disk: ssd}\n"
    "  affinity:\n"
    "    nodeAffinity:\n"
    "      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "        nodeSelectorTerms:\n"
    "        - matchExpressions:\n"
    "          - {key: zone, operator: In, values: [a, b]}\n"
    "          - {key: gpu, operator: Exists}\n"
    "          - {key: cores, operator: Gt, values: [\"8\"]}\n"
    "          matchFields:\n"
    "          - {key: metadata.name, operator: NotIn, values: [n9]}\n"
    "        - matchExpressions:\n"
    "          - {key: zone, operator: DoesNotExist}\n"
    "          - {key: mem, operator: NotIn, values: [x]}\n"
    "      preferredDuringSchedulingIgnoredDuringExecution:\n"
    "      - weight: 20\n"
    "        preference:\n"
    "          matchExpressions:\n"
    "          - {key: mem, operator: Lt, values: [\"-3\"]}\n"
    "  tolerations:\n"
    "  - {key: dedicated, operator: Equal, value: ml, effect: NoSchedule}\n"
    "  - {operator: Exists}\n"
    "  - {key: k2}\n"
    "  containers:\n"
    "  - name: a\n"
    "    resources:\n"
    "      requests: {cpu: 500m, memory: 1Gi, nvidia.com/gpu: 1}\n"
    "      limits: {cpu: 1, memory: 2Gi, nvidia.com/gpu: 1}\n"
    "status:\n"
    "  phase: Running\n"
    "  nominatedNodeName: n2\n";

static void test_pod_full(void **state)
{
        (void)state;
        struct kb_object o;
        decode_ok(pod_full, &o, KB_KIND_POD);
        const struct kb_pod *p = o.pod;
        int gpu = kb_res_lookup("nvidia.com/gpu");

        assert_string_equal(p->meta.name, "train-0");
        assert_string_equal(p->meta.namespace, "team-a");
        assert_string_equal(p->meta.uid, "1234-abcd");
        assert_string_equal(p->meta.resource_version, "42");
        assert_int_equal(p->meta.nlabels, 2);
        assert_string_equal(kb_meta_label(&p->meta, "app"), "train");
        assert_string_equal(kb_meta_label(&p->meta, "tier"), "1");
        assert_null(kb_meta_label(&p->meta, "nope"));
        assert_string_equal(kb_meta_annotation(&p->meta, KB_GROUP_ANNOTATION), "train");
        assert_null(kb_meta_annotation(&p->meta, "app"));
        assert_true(p->meta.creation == 1704164645.0);
        assert_true(p->meta.deletion == 1704164705.0);

        assert_string_equal(p->scheduler_name, "kbatch");
        assert_string_equal(p->node_name, "n1");
        assert_string_equal(p->nominated_node_name, "n2");
        assert_string_equal(p->priority_class_name, "high");
        assert_string_equal(p->group_name, "train"); /* the k8s key wins */
        assert_true(p->has_priority);
        assert_int_equal(p->priority, 1000);
        assert_true(p->preempt_never);
        assert_int_equal(p->nnode_selector, 1);
        assert_string_equal(p->node_selector[0].key, "disk");
        assert_string_equal(p->node_selector[0].value, "ssd");

        assert_int_equal(p->nrequired, 2);
        const struct kb_node_term *t = &p->required[0];
        assert_int_equal(t->nexprs, 3);
        assert_string_equal(t->exprs[0].key, "zone");
        assert_int_equal(t->exprs[0].op, KB_SEL_IN);
        assert_int_equal(t->exprs[0].nvalues, 2);
        assert_string_equal(t->exprs[0].values[0], "a");
        assert_string_equal(t->exprs[0].values[1], "b");
        assert_int_equal(t->exprs[1].op, KB_SEL_EXISTS);
        assert_int_equal(t->exprs[1].nvalues, 0);
        assert_int_equal(t->exprs[2].op, KB_SEL_GT);
        assert_string_equal(t->exprs[2].values[0], "8");
        assert_int_equal(t->nfields, 1);
        assert_string_equal(t->fields[0].key, "metadata.name");
        assert_int_equal(t->fields[0].op, KB_SEL_NOT_IN);
        assert_string_equal(t->fields[0].values[0], "n9");
        t = &p->required[1];
        assert_int_equal(t->nexprs, 2);
        assert_int_equal(t->exprs[0].op, KB_SEL_DOES_NOT_EXIST);
        assert_int_equal(t->exprs[1].op, KB_SEL_NOT_IN);
        assert_int_equal(t->nfields, 0);

        assert_int_equal(p->npreferred, 1);
        assert_int_equal(p->preferred[0].weight, 20);
        assert_int_equal(p->preferred[0].term.nexprs, 1);
        assert_int_equal(p->preferred[0].term.exprs[0].op, KB_SEL_LT);
        assert_string_equal(p->preferred[0].term.exprs[0].values[0], "-3");

        assert_int_equal(p->ntolerations, 3);
        assert_string_equal(p->tolerations[0].key, "dedicated");
        assert_string_equal(p->tolerations[0].value, "ml");
        assert_string_equal(p->tolerations[0].effect, "NoSchedule");
        assert_int_equal(p->tolerations[0].op, KB_TOL_EQUAL);
        assert_string_equal(p->tolerations[1].key, "");
        assert_string_equal(p->tolerations[1].value, "");
        assert_null(p->tolerations[1].effect);
        assert_int_equal(p->tolerations[1].op, KB_TOL_EXISTS);
        assert_string_equal(p->tolerations[2].key, "k2");
        assert_int_equal(p->tolerations[2].op, KB_TOL_EQUAL); /* the default */

        assert_int_equal(p->requests.q[KB_RES_CPU], 500);
        assert_int_equal(p->requests.q[KB_RES_MEMORY], GI);
        assert_int_equal(p->requests.q[gpu], 1000);
        assert_int_equal(p->requests.q[KB_RES_PODS], 1);
        assert_false(p->best_effort);
        assert_int_equal(p->phase, KB_POD_RUNNING);
        assert_false(kb_pod_terminal(p));

        kb_object_release(&o);
        assert_int_equal(o.kind, KB_KIND_NONE);
        assert_null(o.ptr);
        kb_object_release(&o); /* twice is harmless */
}

static void test_pod_defaults(void **state)
{
        (void)state;
        struct kb_object o;
        decode_ok("apiVersion: v1\nkind: Pod\n"
                  "metadata: {name: p, annotations: {scheduling.volcano.sh/group-name: g}}\n"
                  "spec: {containers: [{name: a}]}\n",
                  &o, KB_KIND_POD);
        const struct kb_pod *p = o.pod;
        assert_string_equal(p->meta.namespace, "default");
        assert_string_equal(p->meta.uid, "pod:default/p");
        assert_null(p->meta.resource_version);
        assert_int_equal(p->meta.nlabels, 0);
        assert_true(p->meta.creation == 0.0);
        assert_string_equal(p->scheduler_name, "default-scheduler");
        assert_null(p->node_name);
        assert_null(p->nominated_node_name);
        assert_null(p->priority_class_name);
        assert_string_equal(p->group_name, "g"); /* the volcano key as fallback */
        assert_false(p->has_priority);
        assert_int_equal(p->priority, 0);
        assert_false(p->preempt_never);
        assert_int_equal(p->nrequired, 0);
        assert_int_equal(p->npreferred, 0);
        assert_int_equal(p->ntolerations, 0);
        assert_true(p->best_effort);
        assert_int_equal(p->requests.q[KB_RES_PODS], 1);
        assert_int_equal(p->requests.q[KB_RES_CPU], 0);
        assert_int_equal(p->phase, KB_POD_PENDING);
        kb_object_release(&o);

        /* Bare minimum: no spec at all, explicit nulls, terminal phases. */
        decode_ok("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: \"\", labels: null}\n"
                  "spec: {nodeName: \"\", priority: null}\nstatus: {phase: Succeeded}\n",
                  &o, KB_KIND_POD);
        assert_string_equal(o.pod->meta.namespace, "default");
        assert_null(o.pod->node_name);
        assert_false(o.pod->has_priority);
        assert_null(o.pod->group_name);
        assert_int_equal(o.pod->phase, KB_POD_SUCCEEDED);
        assert_true(kb_pod_terminal(o.pod));
        kb_object_release(&o);
}

/* Declared runtimes (issue 19): each source, its rank, and a bad value
 * named and counted as unset. */
static void test_declared_runtime(void **state)
{
        (void)state;
        struct kb_object o, g;
        const int64_t S = 1000000000LL;
        /* Every source at once: the pod's activeDeadlineSeconds wins. */
        decode_ok("apiVersion: v1\nkind: Pod\n"
                  "metadata: {name: p, namespace: ml, labels: "
                  "{kueue.x-k8s.io/max-exec-time-seconds: '300'}, annotations: "
                  "{kbatch.io/runtime-limit: 1h}}\n"
                  "spec: {activeDeadlineSeconds: 600, containers: [{name: a}]}\n"
                  "status: {startTime: '2026-11-26T10:00:00Z'}\n",
                  &o, KB_KIND_POD);
        decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                  "metadata: {name: g, namespace: ml, annotations: "
                  "{kbatch.io/job-active-deadline-seconds: '900', kbatch.io/runtime-limit: 2h}}\n"
                  "spec: {minMember: 1}\n",
                  &g, KB_KIND_PODGROUP);
        struct kb_pod *p = o.pod;
        struct kb_podgroup *pg = g.podgroup;
        assert_true(p->start_time == 1795687200.0);
        assert_int_equal(p->active_deadline, 600 * S);
        assert_int_equal(p->kueue_limit, 300 * S);
        assert_int_equal(p->runtime_limit, 3600 * S);
        assert_null(p->runtime_invalid);
        assert_int_equal(pg->job_deadline, 900 * S);
        assert_int_equal(pg->runtime_limit, 7200 * S);
        assert_int_equal(kb_pod_declared_runtime(p, pg), 600 * S);
        /* Then the Job's, the kueue label, the PodGroup's annotation, the
         * pod's. */
        p->active_deadline = 0;
        assert_int_equal(kb_pod_declared_runtime(p, pg), 900 * S);
        pg->job_deadline = 0;
        assert_int_equal(kb_pod_declared_runtime(p, pg), 300 * S);
        p->kueue_limit = 0;
        assert_int_equal(kb_pod_declared_runtime(p, pg), 7200 * S);
        assert_int_equal(kb_pod_declared_runtime(p, NULL), 3600 * S);
        p->runtime_limit = 0;
        assert_int_equal(kb_pod_declared_runtime(p, NULL), 0); /* unbounded */
        kb_object_release(&o);
        kb_object_release(&g);

        /* Bad values are named, and count as unset. */
        static const struct {
                const char *fields;
                const char *want;
        } bad[] = {
            {"annotations: {kbatch.io/runtime-limit: 1h}}\nspec: {activeDeadlineSeconds: 0, ",
             "pod ml/p: spec.activeDeadlineSeconds: must be greater than 0 (and at most "
             "9223372036), got 0"},
            {"annotations: {kbatch.io/runtime-limit: 1h}}\nspec: {activeDeadlineSeconds: -5, ",
             "pod ml/p: spec.activeDeadlineSeconds: must be greater than 0 (and at most "
             "9223372036), got -5"},
            {"annotations: {kbatch.io/runtime-limit: 1h}}\nspec: {activeDeadlineSeconds: 1.5, ",
             "pod ml/p: spec.activeDeadlineSeconds: must be a whole number of seconds, got \"1.5\""},
            {"labels: {kueue.x-k8s.io/max-exec-time-seconds: 5m}, annotations: "
             "{kbatch.io/runtime-limit: 1h}}\nspec: {",
             "pod ml/p: label kueue.x-k8s.io/max-exec-time-seconds: must be a whole number of "
             "seconds, got \"5m\""},
            {"annotations: {kbatch.io/runtime-limit: 12Qi}}\nspec: {",
             "pod ml/p: annotation kbatch.io/runtime-limit: "},
            {"annotations: {kbatch.io/runtime-limit: -1h}}\nspec: {",
             "pod ml/p: annotation kbatch.io/runtime-limit: \"-1h\": must be greater than 0"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                char *y = kb_xasprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: "
                                       "ml, %scontainers: [{name: a}]}\n",
                                       bad[i].fields);
                decode_ok(y, &o, KB_KIND_POD);
                free(y);
                p = o.pod;
                assert_non_null(p->runtime_invalid);
                if (strncmp(p->runtime_invalid, bad[i].want, strlen(bad[i].want)))
                        fail_msg("case %zu: got \"%s\"", i, p->runtime_invalid);
                assert_int_equal(p->active_deadline, 0);
                assert_int_equal(p->kueue_limit, 0);
                /* The annotation still counts where it is good. */
                assert_int_equal(kb_pod_declared_runtime(p, NULL), i < 4 ? 3600 * S : 0);
                kb_object_release(&o);
        }
}

static int64_t pod_cpu(const char *spec_yaml, int64_t *memory, bool *best_effort)
{
        char doc[2048];
        struct kb_object o;
        snprintf(doc, sizeof(doc), "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n%s",
                 spec_yaml);
        decode_ok(doc, &o, KB_KIND_POD);
        int64_t cpu = o.pod->requests.q[KB_RES_CPU];
        if (memory)
                *memory = o.pod->requests.q[KB_RES_MEMORY];
        if (best_effort)
                *best_effort = o.pod->best_effort;
        assert_int_equal(o.pod->requests.q[KB_RES_PODS], 1);
        kb_object_release(&o);
        return cpu;
}

static void test_pod_requests(void **state)
{
        (void)state;
        int64_t mem;
        bool be;

        /* max(1 + 2, 4, 1) + 0.25 cores; max(1Gi + 1Gi, 3Gi, 0) + 100Mi. */
        assert_int_equal(pod_cpu("  containers:\n"
                                 "  - resources: {requests: {cpu: 1, memory: 1Gi}}\n"
                                 "  - resources: {requests: {cpu: 2, memory: 1Gi}}\n"
                                 "  initContainers:\n"
                                 "  - resources: {requests: {cpu: 4}}\n"
                                 "  - resources: {requests: {cpu: 1, memory: 3Gi}}\n"
                                 "  overhead: {cpu: 250m, memory: 100Mi}\n",
                                 &mem, &be),
                         4250);
        assert_int_equal(mem, 3 * GI + 100 * MI);
        assert_false(be);

        /* The containers' sum wins over a smaller init container. */
        assert_int_equal(pod_cpu("  containers:\n"
                                 "  - resources: {requests: {cpu: 3}}\n"
                                 "  initContainers:\n"
                                 "  - resources: {requests: {cpu: 1}}\n",
                                 NULL, NULL),
                         3000);

        /* Limits stand in for absent requests, resource by resource. */
        assert_int_equal(pod_cpu("  containers:\n"
                                 "  - resources: {limits: {cpu: 2, memory: 1Gi}}\n"
                                 "  - resources:\n"
                                 "      requests: {cpu: 500m}\n"
                                 "      limits: {cpu: 1, memory: 2Gi}\n",
                                 &mem, NULL),
                         2500);
        assert_int_equal(mem, 3 * GI);

        /* A request of 0 is a request: the limit does not replace it. */
        assert_int_equal(pod_cpu("  containers:\n"
                                 "  - resources: {requests: {cpu: 0}, limits: {cpu: 2}}\n",
                                 NULL, &be),
                         0);
        assert_true(be);

        /* Limits-only init containers count too. */
        assert_int_equal(pod_cpu("  containers: [{resources: {requests: {cpu: 1}}}]\n"
                                 "  initContainers: [{resources: {limits: {cpu: 5}}}]\n",
                                 NULL, NULL),
                         5000);

        /* A sidecar (restartPolicy Always) runs beside everything after it:
         * containers 1 + sidecar 1 = 2; the later init container needs 3 + 1
         * = 4; the pod needs max(2, 4) = 4. */
        assert_int_equal(pod_cpu("  containers: [{resources: {requests: {cpu: 1}}}]\n"
                                 "  initContainers:\n"
                                 "  - restartPolicy: Always\n"
                                 "    resources: {requests: {cpu: 1}}\n"
                                 "  - resources: {requests: {cpu: 3}}\n",
                                 NULL, NULL),
                         4000);
        /* A sidecar after the init containers adds to the containers only. */
        assert_int_equal(pod_cpu("  containers: [{resources: {requests: {cpu: 1}}}]\n"
                                 "  initContainers:\n"
                                 "  - resources: {requests: {cpu: 2}}\n"
                                 "  - restartPolicy: Always\n"
                                 "    resources: {requests: {cpu: 500m}}\n",
                                 NULL, NULL),
                         2000);

        /* Overhead alone makes a pod request something. */
        assert_int_equal(pod_cpu("  containers: [{name: a}]\n"
                                 "  overhead: {cpu: 100m}\n",
                                 NULL, &be),
                         100);
        assert_false(be);

        /* Only the pods slot requested is still best effort. */
        assert_int_equal(pod_cpu("  containers: [{resources: {requests: {pods: 3}}}]\n", NULL, &be),
                         0);
        assert_true(be);
}

/* ---- nodes ------------------------------------------------------------ */

static void test_node(void **state)
{
        (void)state;
        struct kb_object o;
        decode_ok("apiVersion: v1\n"
                  "kind: Node\n"
                  "metadata: {name: n1, namespace: ignored, labels: {zone: a}}\n"
                  "spec:\n"
                  "  unschedulable: true\n"
                  "  taints:\n"
                  "  - {key: dedicated, value: ml, effect: NoSchedule}\n"
                  "  - {key: gpu, effect: PreferNoSchedule}\n"
                  "  - {key: bad, effect: NoExecute}\n"
                  "status:\n"
                  "  capacity: {cpu: \"64\", memory: 256Gi, pods: \"250\"}\n"
                  "  allocatable: {cpu: 63500m, memory: 250Gi, pods: 110, nvidia.com/gpu: 8}\n"
                  "  conditions:\n"
                  "  - {type: MemoryPressure, status: \"False\"}\n"
                  "  - {type: Ready, status: \"True\"}\n",
                  &o, KB_KIND_NODE);
        const struct kb_node *n = o.node;
        assert_string_equal(n->meta.name, "n1");
        assert_null(n->meta.namespace);
        assert_string_equal(n->meta.uid, "node:n1");
        assert_string_equal(kb_meta_label(&n->meta, "zone"), "a");
        assert_true(n->unschedulable);
        assert_true(n->ready);
        assert_int_equal(n->allocatable.q[KB_RES_CPU], 63500);
        assert_int_equal(n->allocatable.q[KB_RES_MEMORY], 250 * GI);
        assert_int_equal(n->allocatable.q[KB_RES_PODS], 110);
        assert_int_equal(n->allocatable.q[kb_res_lookup("nvidia.com/gpu")], 8000);
        assert_int_equal(n->ntaints, 3);
        assert_string_equal(n->taints[0].key, "dedicated");
        assert_string_equal(n->taints[0].value, "ml");
        assert_int_equal(n->taints[0].effect, KB_TAINT_NO_SCHEDULE);
        assert_string_equal(n->taints[1].value, "");
        assert_int_equal(n->taints[1].effect, KB_TAINT_PREFER_NO_SCHEDULE);
        assert_int_equal(n->taints[2].effect, KB_TAINT_NO_EXECUTE);
        kb_object_release(&o);

        /* Capacity only, no conditions: all of it, ready, 110 pods. */
        decode_ok("apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
                  "status: {capacity: {cpu: 4, memory: 8Gi}}\n",
                  &o, KB_KIND_NODE);
        assert_int_equal(o.node->allocatable.q[KB_RES_CPU], 4000);
        assert_int_equal(o.node->allocatable.q[KB_RES_MEMORY], 8 * GI);
        assert_int_equal(o.node->allocatable.q[KB_RES_PODS], 110);
        assert_true(o.node->ready);
        assert_false(o.node->unschedulable);
        assert_int_equal(o.node->ntaints, 0);
        kb_object_release(&o);

        /* Allocatable replaces capacity as a whole list, never mixed. */
        decode_ok("apiVersion: v1\nkind: Node\nmetadata: {name: n3}\n"
                  "status:\n"
                  "  allocatable: {cpu: 2, pods: 5}\n"
                  "  capacity: {cpu: 4, memory: 8Gi, pods: 10}\n"
                  "  conditions: [{type: Ready, status: \"False\"}]\n",
                  &o, KB_KIND_NODE);
        assert_int_equal(o.node->allocatable.q[KB_RES_CPU], 2000);
        assert_int_equal(o.node->allocatable.q[KB_RES_MEMORY], 0);
        assert_int_equal(o.node->allocatable.q[KB_RES_PODS], 5);
        assert_false(o.node->ready);
        kb_object_release(&o);

        decode_ok("apiVersion: v1\nkind: Node\nmetadata: {name: n4}\n"
                  "status: {conditions: [{type: Ready, status: Unknown}]}\n",
                  &o, KB_KIND_NODE);
        assert_false(o.node->ready);
        kb_object_release(&o);
        decode_ok("apiVersion: v1\nkind: Node\nmetadata: {name: n5}\n"
                  "status: {conditions: [{type: Ready}]}\n",
                  &o, KB_KIND_NODE);
        assert_false(o.node->ready);
        kb_object_release(&o);
}

/* kb_node_same: a node as it was, and each change of it; only what
 * kbatch reads makes a difference. */
#define NODE_META                                                                                  \
        "name: n1, uid: u1, resourceVersion: \"10\", creationTimestamp: "                          \
        "\"2026-11-27T10:00:00Z\", labels: {zone: a, rack: r1}, annotations: {note: x}"
#define NODE_SPEC  "taints: [{key: k, value: v, effect: NoSchedule}]"
#define NODE_ALLOC "allocatable: {cpu: 4, memory: 8Gi}, capacity: {cpu: 8, memory: 16Gi}"
#define NODE_COND                                                                                  \
        "conditions: [{type: Ready, status: \"True\", lastHeartbeatTime: "                         \
        "\"2026-11-27T10:00:00Z\"}, {type: DiskPressure, status: \"False\"}]"
#define NODE_IMAGES "images: [{names: [\"img:1\", \"img@sha256:ab\"], sizeBytes: 100}]"
#define NODE_Y(meta, spec, alloc, cond, images)                                                    \
        "apiVersion: v1\nkind: Node\nmetadata: {" meta "}\nspec: {" spec "}\nstatus: {" alloc      \
        ", " cond ", " images "}\n"
#define NODE_BASE NODE_Y(NODE_META, NODE_SPEC, NODE_ALLOC, NODE_COND, NODE_IMAGES)

static void test_node_same(void **state)
{
        (void)state;
        static const struct {
                const char *what;
                const char *text;
                bool same;
        } cases[] = {
            {"itself", NODE_BASE, true},
            {"a heartbeat: resourceVersion, lastHeartbeatTime, addresses",
             NODE_Y("name: n1, uid: u1, resourceVersion: \"11\", creationTimestamp: "
                    "\"2026-11-27T10:00:00Z\", labels: {zone: a, rack: r1}, annotations: {note: x}",
                    NODE_SPEC, NODE_ALLOC,
                    "conditions: [{type: Ready, status: \"True\", lastHeartbeatTime: "
                    "\"2026-11-27T10:05:00Z\"}, {type: DiskPressure, status: \"False\", "
                    "lastHeartbeatTime: \"2026-11-27T10:05:00Z\"}], addresses: [{type: "
                    "InternalIP, address: 10.0.0.1}]",
                    NODE_IMAGES),
             true},
            {"capacity alone (allocatable is read)",
             NODE_Y(NODE_META, NODE_SPEC, "allocatable: {cpu: 4, memory: 8Gi}, capacity: {cpu: 16}",
                    NODE_COND, NODE_IMAGES),
             true},
            {"Ready False, not True",
             NODE_Y(NODE_META, NODE_SPEC, NODE_ALLOC,
                    "conditions: [{type: Ready, status: \"False\"}]", NODE_IMAGES),
             false},
            {"no Ready condition at all (ready)",
             NODE_Y(NODE_META, NODE_SPEC, NODE_ALLOC, "conditions: []", NODE_IMAGES), true},
            {"name",
             NODE_Y("name: n2, uid: u1, creationTimestamp: \"2026-11-27T10:00:00Z\", labels: "
                    "{zone: a, rack: r1}, annotations: {note: x}",
                    NODE_SPEC, NODE_ALLOC, NODE_COND, NODE_IMAGES),
             false},
            {"uid (deleted and made again)",
             NODE_Y("name: n1, uid: u2, creationTimestamp: \"2026-11-27T10:00:00Z\", labels: "
                    "{zone: a, rack: r1}, annotations: {note: x}",
                    NODE_SPEC, NODE_ALLOC, NODE_COND, NODE_IMAGES),
             false},
            {"creationTimestamp",
             NODE_Y("name: n1, uid: u1, creationTimestamp: \"2026-11-27T10:00:01Z\", labels: "
                    "{zone: a, rack: r1}, annotations: {note: x}",
                    NODE_SPEC, NODE_ALLOC, NODE_COND, NODE_IMAGES),
             false},
            {"deletionTimestamp",
             NODE_Y(NODE_META ", deletionTimestamp: \"2026-11-27T11:00:00Z\"", NODE_SPEC,
                    NODE_ALLOC, NODE_COND, NODE_IMAGES),
             false},
            {"a label's value",
             NODE_Y("name: n1, uid: u1, creationTimestamp: \"2026-11-27T10:00:00Z\", labels: "
                    "{zone: b, rack: r1}, annotations: {note: x}",
                    NODE_SPEC, NODE_ALLOC, NODE_COND, NODE_IMAGES),
             false},
            {"a label's key",
             NODE_Y("name: n1, uid: u1, creationTimestamp: \"2026-11-27T10:00:00Z\", labels: "
                    "{zone: a, row: r1}, annotations: {note: x}",
                    NODE_SPEC, NODE_ALLOC, NODE_COND, NODE_IMAGES),
             false},
            {"a label fewer",
             NODE_Y("name: n1, uid: u1, creationTimestamp: \"2026-11-27T10:00:00Z\", labels: "
                    "{zone: a}, annotations: {note: x}",
                    NODE_SPEC, NODE_ALLOC, NODE_COND, NODE_IMAGES),
             false},
            {"an annotation",
             NODE_Y("name: n1, uid: u1, creationTimestamp: \"2026-11-27T10:00:00Z\", labels: "
                    "{zone: a, rack: r1}, annotations: {note: y}",
                    NODE_SPEC, NODE_ALLOC, NODE_COND, NODE_IMAGES),
             false},
            {"allocatable cpu",
             NODE_Y(NODE_META, NODE_SPEC, "allocatable: {cpu: 3, memory: 8Gi}", NODE_COND,
                    NODE_IMAGES),
             false},
            {"allocatable: a resource more",
             NODE_Y(NODE_META, NODE_SPEC, "allocatable: {cpu: 4, memory: 8Gi, example.com/fpga: 1}",
                    NODE_COND, NODE_IMAGES),
             false},
            {"unschedulable (cordoned)",
             NODE_Y(NODE_META, NODE_SPEC ", unschedulable: true", NODE_ALLOC, NODE_COND,
                    NODE_IMAGES),
             false},
            {"a taint's effect",
             NODE_Y(NODE_META, "taints: [{key: k, value: v, effect: NoExecute}]", NODE_ALLOC,
                    NODE_COND, NODE_IMAGES),
             false},
            {"a taint's value",
             NODE_Y(NODE_META, "taints: [{key: k, value: w, effect: NoSchedule}]", NODE_ALLOC,
                    NODE_COND, NODE_IMAGES),
             false},
            {"a taint's key",
             NODE_Y(NODE_META, "taints: [{key: j, value: v, effect: NoSchedule}]", NODE_ALLOC,
                    NODE_COND, NODE_IMAGES),
             false},
            {"a taint more",
             NODE_Y(NODE_META,
                    "taints: [{key: k, value: v, effect: NoSchedule}, {key: k, effect: NoExecute}]",
                    NODE_ALLOC, NODE_COND, NODE_IMAGES),
             false},
            {"an image's name",
             NODE_Y(NODE_META, NODE_SPEC, NODE_ALLOC, NODE_COND,
                    "images: [{names: [\"img:2\", \"img@sha256:ab\"], sizeBytes: 100}]"),
             false},
            {"an image's names, one fewer",
             NODE_Y(NODE_META, NODE_SPEC, NODE_ALLOC, NODE_COND,
                    "images: [{names: [\"img:1\"], sizeBytes: 100}]"),
             false},
            {"an image's size",
             NODE_Y(NODE_META, NODE_SPEC, NODE_ALLOC, NODE_COND,
                    "images: [{names: [\"img:1\", \"img@sha256:ab\"], sizeBytes: 101}]"),
             false},
            {"an image more",
             NODE_Y(NODE_META, NODE_SPEC, NODE_ALLOC, NODE_COND,
                    "images: [{names: [\"img:1\", \"img@sha256:ab\"], sizeBytes: 100}, "
                    "{names: [\"other\"]}]"),
             false},
        };
        struct kb_object base;
        decode_ok(NODE_BASE, &base, KB_KIND_NODE);
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                struct kb_object o;
                decode_ok(cases[i].text, &o, KB_KIND_NODE);
                bool ab = kb_node_same(base.node, o.node), ba = kb_node_same(o.node, base.node);
                if (ab != cases[i].same || ba != cases[i].same)
                        fail_msg("%s: kb_node_same %d/%d, want %d", cases[i].what, ab, ba,
                                 cases[i].same);
                assert_true(kb_node_same(o.node, o.node));
                kb_object_release(&o);
        }
        kb_object_release(&base);
}

/* ---- podgroups -------------------------------------------------------- */

static void test_podgroup(void **state)
{
        (void)state;
        struct kb_object o;
        decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\n"
                  "kind: PodGroup\n"
                  "metadata: {name: train, namespace: team-a, uid: u-1}\n"
                  "spec:\n"
                  "  minMember: 4\n"
                  "  minTaskMember: {ps: 1, worker: 3}\n"
                  "  minResources: {cpu: \"8\", memory: 16Gi}\n"
                  "  queue: research\n"
                  "  priorityClassName: high\n"
                  "status:\n"
                  "  phase: Running\n"
                  "  running: 3\n"
                  "  succeeded: 1\n"
                  "  failed: 0\n"
                  "  conditions:\n"
                  "  - type: Scheduled\n"
                  "    status: \"True\"\n"
                  "    reason: tasks all scheduled\n"
                  "    message: 4/4 tasks\n"
                  "    transitionID: abc-123\n"
                  "    lastTransitionTime: \"2024-01-02T03:04:05Z\"\n"
                  "  - {type: Unschedulable, status: \"False\"}\n",
                  &o, KB_KIND_PODGROUP);
        const struct kb_podgroup *pg = o.podgroup;
        assert_string_equal(pg->meta.name, "train");
        assert_string_equal(pg->meta.namespace, "team-a");
        assert_string_equal(pg->meta.uid, "u-1");
        assert_int_equal(pg->min_member, 4);
        assert_int_equal(pg->nmin_task_member, 2);
        assert_string_equal(pg->min_task_member[0].name, "ps");
        assert_int_equal(pg->min_task_member[0].min, 1);
        assert_string_equal(pg->min_task_member[1].name, "worker");
        assert_int_equal(pg->min_task_member[1].min, 3);
        assert_true(pg->has_min_resources);
        assert_int_equal(pg->min_resources.q[KB_RES_CPU], 8000);
        assert_int_equal(pg->min_resources.q[KB_RES_MEMORY], 16 * GI);
        assert_string_equal(pg->queue, "research");
        assert_string_equal(pg->priority_class_name, "high");
        assert_string_equal(pg->phase, "Running");
        assert_int_equal(pg->running, 3);
        assert_int_equal(pg->succeeded, 1);
        assert_int_equal(pg->failed, 0);
        assert_int_equal(pg->nconditions, 2);
        const struct kb_condition *c = &pg->conditions[0];
        assert_string_equal(c->type, "Scheduled");
        assert_string_equal(c->status, "True");
        assert_string_equal(c->reason, "tasks all scheduled");
        assert_string_equal(c->message, "4/4 tasks");
        assert_string_equal(c->transition_id, "abc-123");
        assert_true(c->last_transition == 1704164645.0);
        assert_null(pg->conditions[1].reason);
        assert_true(pg->conditions[1].last_transition == 0.0);
        kb_object_release(&o);

        decode_ok(
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\n", &o,
            KB_KIND_PODGROUP);
        pg = o.podgroup;
        assert_string_equal(pg->meta.namespace, "default");
        assert_string_equal(pg->meta.uid, "podgroup:default/pg");
        assert_int_equal(pg->min_member, 1);
        assert_int_equal(pg->nmin_task_member, 0);
        assert_false(pg->has_min_resources);
        assert_true(kb_res_is_empty(&pg->min_resources));
        assert_string_equal(pg->queue, "default");
        assert_null(pg->priority_class_name);
        assert_null(pg->phase);
        assert_int_equal(pg->nconditions, 0);
        kb_object_release(&o);

        /* An explicit 0 stays 0; an empty queue is the default one. */
        decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                  "metadata: {name: pg}\nspec: {minMember: 0, queue: \"\", minResources: {}}\n",
                  &o, KB_KIND_PODGROUP);
        assert_int_equal(o.podgroup->min_member, 0);
        assert_string_equal(o.podgroup->queue, "default");
        assert_true(o.podgroup->has_min_resources);
        kb_object_release(&o);
}

/* A PodGroup's owner that is a Volcano Job (as Volcano's job controller
 * sets it), whatever else owns it; a batch/v1 Job is not one. */
static void test_podgroup_vcjob_owner(void **state)
{
        (void)state;
        struct kb_object o;
        decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                  "metadata:\n  name: test-job-7c1e\n  ownerReferences:\n"
                  "  - {apiVersion: batch/v1, kind: Job, name: other, uid: b1}\n"
                  "  - {apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name: test-job, "
                  "uid: 7c1e, controller: true}\n",
                  &o, KB_KIND_PODGROUP);
        const struct kb_owner_ref *r = o.podgroup->vcjob;
        assert_non_null(r);
        assert_string_equal(r->name, "test-job");
        assert_string_equal(r->uid, "7c1e");
        kb_object_release(&o);

        decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                  "metadata:\n  name: pg\n  ownerReferences:\n"
                  "  - {apiVersion: batch/v1, kind: Job, name: other, uid: b1}\n",
                  &o, KB_KIND_PODGROUP);
        assert_null(o.podgroup->vcjob);
        kb_object_release(&o);

        char err[512] = "";
        assert_int_equal(decode("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                                "metadata:\n  name: pg\n  ownerReferences:\n"
                                "  - {apiVersion: batch.volcano.sh/v1alpha1, kind: Job}\n",
                                &o, err, sizeof(err)),
                         KB_EBADINPUT);
        assert_string_equal(err, "podgroup default/pg: metadata.ownerReferences[0].name: an owner "
                                 "reference needs a kind and a name");
}

/* ---- network topology ------------------------------------------------- */

static void test_network_topology(void **state)
{
        (void)state;
        struct kb_object o;
        decode_ok(
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\n"
            "spec: {networkTopology: {highestTierAllowed: 2}}\n",
            &o, KB_KIND_PODGROUP);
        /* mode defaults to hard, as the CRD's default says. */
        assert_int_equal(o.podgroup->topology_mode, KB_TOPOLOGY_HARD);
        assert_int_equal(o.podgroup->highest_tier, 2);
        assert_null(o.podgroup->highest_tier_name);
        assert_null(o.podgroup->unevaluated);
        kb_object_release(&o);
        decode_ok(
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\n"
            "spec: {networkTopology: {mode: soft, highestTierName: rack}}\n",
            &o, KB_KIND_PODGROUP);
        assert_int_equal(o.podgroup->topology_mode, KB_TOPOLOGY_SOFT);
        assert_int_equal(o.podgroup->highest_tier, -1);
        assert_string_equal(o.podgroup->highest_tier_name, "rack");
        kb_object_release(&o);
        decode_ok(
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\n", &o,
            KB_KIND_PODGROUP);
        assert_int_equal(o.podgroup->topology_mode, KB_TOPOLOGY_NONE);
        kb_object_release(&o);

        /* spec.subGroupPolicy, field by field; a soft sub-group topology is
         * read but not acted on, and said so. */
        decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                  "metadata: {name: pg}\nspec:\n  subGroupPolicy:\n"
                  "  - {name: worker, subGroupSize: 4, minSubGroups: 2,\n"
                  "     labelSelector: {matchLabels: {volcano.sh/task-spec: worker}},\n"
                  "     matchLabelKeys: [volcano.sh/partition-id],\n"
                  "     networkTopology: {highestTierName: rack}}\n"
                  "  - {name: ps, networkTopology: {mode: soft, highestTierAllowed: 1}}\n",
                  &o, KB_KIND_PODGROUP);
        const struct kb_podgroup *pg = o.podgroup;
        assert_int_equal(pg->nsubgroups, 2);
        assert_string_equal(pg->subgroups[0].name, "worker");
        assert_int_equal(pg->subgroups[0].size, 4);
        assert_int_equal(pg->subgroups[0].min_groups, 2);
        assert_true(pg->subgroups[0].selector.set);
        assert_int_equal(pg->subgroups[0].selector.nreqs, 1);
        assert_int_equal(pg->subgroups[0].nmatch_keys, 1);
        assert_string_equal(pg->subgroups[0].match_keys[0], "volcano.sh/partition-id");
        assert_int_equal(pg->subgroups[0].topology_mode, KB_TOPOLOGY_HARD);
        assert_int_equal(pg->subgroups[0].highest_tier, -1);
        assert_string_equal(pg->subgroups[0].highest_tier_name, "rack");
        /* Volcano's defaults: a sub-group of 1, no minimum of sub-groups. */
        assert_int_equal(pg->subgroups[1].size, 1);
        assert_int_equal(pg->subgroups[1].min_groups, 0);
        assert_false(pg->subgroups[1].selector.set);
        assert_int_equal(pg->subgroups[1].topology_mode, KB_TOPOLOGY_SOFT);
        assert_int_equal(pg->subgroups[1].highest_tier, 1);
        /* A soft sub-group topology is acted on (a node preference): not
         * listed as unevaluated. */
        assert_null(pg->unevaluated);
        kb_object_release(&o);

        /* Volcano's tier was once a string; RE2's \d is rewritten for POSIX. */
        decode_ok("apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\n"
                  "metadata: {name: rack-1}\n"
                  "spec:\n  tier: \"1\"\n  tierName: rack\n  members:\n"
                  "  - {type: Node, selector: {exactMatch: {name: n1}}}\n"
                  "  - {type: Node, selector: {regexMatch: {pattern: '^gpu-\\d+$'}}}\n"
                  "  - {type: Node, selector: {labelMatch: {matchLabels: {rack: r1},"
                  " matchExpressions: [{key: bad, operator: DoesNotExist}]}}}\n"
                  "  - {type: HyperNode, selector: {regexMatch: {pattern: '[\\w.]-x'}}}\n"
                  "status: {nodeCount: 7}\n",
                  &o, KB_KIND_HYPERNODE);
        const struct kb_hypernode *hn = o.hypernode;
        assert_null(hn->meta.namespace);
        assert_string_equal(hn->meta.uid, "hypernode:rack-1");
        assert_int_equal(hn->tier, 1);
        assert_string_equal(hn->tier_name, "rack");
        assert_int_equal(hn->node_count, 7);
        assert_int_equal(hn->nmembers, 4);
        assert_int_equal(hn->members[0].type, KB_HN_NODE);
        assert_int_equal(hn->members[0].match, KB_HN_EXACT);
        assert_true(kb_hn_member_matches(&hn->members[0], "n1", NULL));
        assert_false(kb_hn_member_matches(&hn->members[0], "n10", NULL));
        /* Unanchored unless the pattern anchors, as Go's MatchString. */
        assert_true(kb_hn_member_matches(&hn->members[1], "gpu-12", NULL));
        assert_false(kb_hn_member_matches(&hn->members[1], "gpu-1x", NULL));
        assert_false(kb_hn_member_matches(&hn->members[1], "gpu-", NULL));
        struct kb_meta m = {0};
        struct kb_kv l1[] = {{"rack", "r1"}}, l2[] = {{"rack", "r1"}, {"bad", ""}};
        m.labels = l1;
        m.nlabels = 1;
        assert_true(kb_hn_member_matches(&hn->members[2], "any", &m));
        m.labels = l2;
        m.nlabels = 2;
        assert_false(kb_hn_member_matches(&hn->members[2], "any", &m));
        assert_false(kb_hn_member_matches(&hn->members[2], "any", NULL));
        assert_int_equal(hn->members[3].type, KB_HN_HYPERNODE);
        assert_true(kb_hn_member_matches(&hn->members[3], "a.b_c-x", NULL));
        assert_false(kb_hn_member_matches(&hn->members[3], "-x", NULL));
        kb_object_release(&o);
}

/* ---- queues ----------------------------------------------------------- */

static void test_queue(void **state)
{
        (void)state;
        struct kb_object o;
        int gpu = kb_res_intern("nvidia.com/gpu");
        decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\n"
                  "kind: Queue\n"
                  "metadata: {name: research}\n"
                  "spec:\n"
                  "  weight: 4\n"
                  "  capability: {cpu: \"100\", nvidia.com/gpu: 8}\n"
                  "  guarantee: {resource: {cpu: \"10\"}}\n"
                  "  deserved: {cpu: \"50\", memory: 100Gi}\n"
                  "  reclaimable: false\n"
                  "  priority: 7\n"
                  "  parent: root\n"
                  "status: {state: Closing}\n",
                  &o, KB_KIND_QUEUE);
        const struct kb_queue *q = o.queue;
        assert_string_equal(q->meta.name, "research");
        assert_null(q->meta.namespace);
        assert_string_equal(q->meta.uid, "queue:research");
        assert_int_equal(q->weight, 4);
        assert_true(q->has_capability);
        assert_int_equal(q->capability.q[KB_RES_CPU], 100000);
        assert_int_equal(q->capability.q[gpu], 8000);
        assert_true(q->capability.q[KB_RES_MEMORY] == KB_RES_UNLIMITED);
        assert_true(q->capability.q[KB_RES_PODS] == KB_RES_UNLIMITED);
        assert_int_equal(q->guarantee.q[KB_RES_CPU], 10000);
        assert_int_equal(q->guarantee.q[KB_RES_MEMORY], 0);
        assert_true(q->has_deserved);
        assert_int_equal(q->deserved.q[KB_RES_CPU], 50000);
        assert_int_equal(q->deserved.q[KB_RES_MEMORY], 100 * GI);
        assert_false(q->reclaimable);
        assert_int_equal(q->priority, 7);
        assert_string_equal(q->parent, "root");
        assert_int_equal(q->state, KB_QUEUE_CLOSING);
        kb_object_release(&o);

        decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n",
                  &o, KB_KIND_QUEUE);
        q = o.queue;
        assert_int_equal(q->weight, 1);
        assert_false(q->has_capability);
        for (int i = 0; i < KB_RES_MAX; i++)
                assert_true(q->capability.q[i] == KB_RES_UNLIMITED);
        assert_true(kb_res_is_empty(&q->guarantee));
        assert_false(q->has_deserved);
        assert_true(q->reclaimable);
        assert_int_equal(q->priority, 0);
        assert_null(q->parent);
        assert_int_equal(q->state, KB_QUEUE_OPEN);
        kb_object_release(&o);

        /* Weight 0 reads as 1, with a warning naming the queue and field
         * (Volcano's scheduler does the same instead of dropping it). */
        kb_test_log_start();
        decode_ok("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: z}\n"
                  "spec: {weight: 0}\n",
                  &o, KB_KIND_QUEUE);
        assert_int_equal(o.queue->weight, 1);
        assert_true(
            kb_test_log_contains("queue z: spec.weight: 0 is below the minimum 1; using 1"));
        kb_test_log_stop();
        kb_object_release(&o);

        static const char *const states[] = {"Open", "Closed", "Closing", "Unknown"};
        for (int s = 0; s < 4; s++) {
                char doc[256];
                snprintf(doc, sizeof(doc),
                         "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                         "metadata: {name: q}\nspec: {weight: 65535}\nstatus: {state: %s}\n",
                         states[s]);
                decode_ok(doc, &o, KB_KIND_QUEUE);
                assert_int_equal(o.queue->state, s);
                assert_int_equal(o.queue->weight, 65535);
                assert_string_equal(kb_queue_state_name(o.queue->state), states[s]);
                kb_object_release(&o);
        }
}

/* ---- priority classes, namespaces, dispatch --------------------------- */

static void test_priorityclass_namespace(void **state)
{
        (void)state;
        struct kb_object o;
        decode_ok("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
                  "metadata: {name: high}\nvalue: 1000000\nglobalDefault: true\n"
                  "preemptionPolicy: Never\n",
                  &o, KB_KIND_PRIORITYCLASS);
        assert_string_equal(o.priorityclass->meta.name, "high");
        assert_null(o.priorityclass->meta.namespace);
        assert_string_equal(o.priorityclass->meta.uid, "priorityclass:high");
        assert_int_equal(o.priorityclass->value, 1000000);
        assert_true(o.priorityclass->global_default);
        assert_true(o.priorityclass->preempt_never);
        kb_object_release(&o);

        decode_ok("apiVersion: scheduling.k8s.io/v1beta1\nkind: PriorityClass\n"
                  "metadata: {name: low}\nvalue: -5\npreemptionPolicy: PreemptLowerPriority\n",
                  &o, KB_KIND_PRIORITYCLASS);
        assert_int_equal(o.priorityclass->value, -5);
        assert_false(o.priorityclass->global_default);
        assert_false(o.priorityclass->preempt_never);
        kb_object_release(&o);

        decode_ok("apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, labels: {a: b}}\n", &o,
                  KB_KIND_NAMESPACE);
        assert_string_equal(o.namespace->meta.name, "team-a");
        assert_null(o.namespace->meta.namespace);
        assert_string_equal(o.namespace->meta.uid, "namespace:team-a");
        assert_string_equal(kb_meta_label(&o.namespace->meta, "a"), "b");
        kb_object_release(&o);
}

/* PodDisruptionBudgets, as preemption reads them. */
static void test_pdb(void **state)
{
        (void)state;
        struct kb_object o;
        char err[256];
        decode_ok("apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
                  "metadata: {name: web, namespace: team-a}\n"
                  "spec: {minAvailable: 2, selector: {matchLabels: {app: web}}}\n"
                  "status: {disruptionsAllowed: 1}\n",
                  &o, KB_KIND_PDB);
        assert_string_equal(o.pdb->meta.namespace, "team-a");
        assert_int_equal(o.pdb->disruptions_allowed, 1);
        struct kb_pod pod = {.meta = {.name = "w", .namespace = "team-a"}};
        struct kb_kv web = {"app", "web"};
        pod.meta.labels = &web;
        pod.meta.nlabels = 1;
        assert_true(kb_pdb_covers(o.pdb, &pod));
        pod.meta.namespace = "team-b";
        assert_false(kb_pdb_covers(o.pdb, &pod));
        kb_object_release(&o);
        /* An empty selector covers nothing in preemption. */
        decode_ok("apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
                  "metadata: {name: all, namespace: team-a}\nspec: {selector: {}}\n",
                  &o, KB_KIND_PDB);
        pod.meta.namespace = "team-a";
        assert_false(kb_pdb_covers(o.pdb, &pod));
        assert_int_equal(o.pdb->disruptions_allowed, 0);
        kb_object_release(&o);
        assert_int_equal(decode("apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
                                "metadata: {name: web, namespace: team-a}\n"
                                "status: {disruptionsAllowed: lots}\n",
                                &o, err, sizeof(err)),
                         KB_EBADINPUT);
        assert_non_null(strstr(err, "poddisruptionbudget team-a/web: status.disruptionsAllowed"));
}

static void test_dispatch(void **state)
{
        (void)state;
        struct kb_object o;
        char err[256];

        o.kind = KB_KIND_POD;
        assert_int_equal(
            decode("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n", &o, err, sizeof(err)),
            KB_ENOTFOUND);
        assert_string_equal(err, "kind batch/v1 Job is not read by kbatch");
        assert_int_equal(o.kind, KB_KIND_NONE);
        assert_null(o.ptr);
        kb_object_release(&o);

        /* A kind kbatch reads, at a version it does not. */
        assert_int_equal(decode("apiVersion: scheduling.volcano.sh/v1alpha1\nkind: PodGroup\n"
                                "metadata: {name: pg}\n",
                                &o, err, sizeof(err)),
                         KB_ENOTFOUND);
        assert_string_equal(err,
                            "kind scheduling.volcano.sh/v1alpha1 PodGroup is not read by kbatch");

        /* Without a message buffer. */
        assert_int_equal(decode("apiVersion: batch/v1\nkind: Job\n", &o, NULL, 0), KB_ENOTFOUND);

        /* The kind decoders work on their own too. */
        struct kb_value *v = kb_test_yaml1("metadata: {name: n1}\n");
        struct kb_node *n;
        assert_int_equal(kb_node_decode(v, &n, err, sizeof(err)), 0);
        assert_string_equal(n->meta.name, "n1");
        kb_node_free(n);
        struct kb_pod *p = (struct kb_pod *)1;
        assert_int_equal(kb_pod_decode(NULL, &p, err, sizeof(err)), KB_EBADINPUT);
        assert_null(p);
        assert_string_equal(err, "pod: document: must be an object, got null");
        kb_value_free(v);

        /* JSON, as the API server sends it, decodes the same way. */
        static const char json[] =
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"j\","
            "\"namespace\":\"ns\",\"uid\":\"6f1c\",\"resourceVersion\":\"7\","
            "\"creationTimestamp\":\"2024-01-02T03:04:05Z\"},\"spec\":{\"priority\":100,"
            "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"250m\","
            "\"memory\":\"64Mi\"}}}]},\"status\":{\"phase\":\"Pending\"}}";
        assert_int_equal(kb_json_parse(json, strlen(json), &v, err, sizeof(err)), 0);
        assert_int_equal(kb_object_decode(v, &o, err, sizeof(err)), 0);
        kb_value_free(v);
        assert_int_equal(o.kind, KB_KIND_POD);
        assert_string_equal(o.pod->meta.uid, "6f1c");
        assert_int_equal(o.pod->priority, 100);
        assert_int_equal(o.pod->requests.q[KB_RES_CPU], 250);
        assert_int_equal(o.pod->requests.q[KB_RES_MEMORY], 64 * MI);
        kb_object_release(&o);

        /* Frees take NULL. */
        kb_node_free(NULL);
        kb_pod_free(NULL);
        kb_podgroup_free(NULL);
        kb_queue_free(NULL);
        kb_priorityclass_free(NULL);
        kb_namespace_free(NULL);
        kb_meta_release(NULL);
        kb_object_release(NULL);

        assert_string_equal(kb_pod_phase_name(KB_POD_PENDING), "Pending");
        assert_string_equal(kb_pod_phase_name(KB_POD_RUNNING), "Running");
        assert_string_equal(kb_pod_phase_name(KB_POD_SUCCEEDED), "Succeeded");
        assert_string_equal(kb_pod_phase_name(KB_POD_FAILED), "Failed");
        assert_string_equal(kb_pod_phase_name(KB_POD_UNKNOWN), "Unknown");
        assert_string_equal(kb_queue_state_name(KB_QUEUE_OPEN), "Open");
}

/* ---- bad documents ---------------------------------------------------- */

#define POD "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\n"
#define PG                                                                                         \
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"                              \
        "metadata: {name: train, namespace: team-a}\n"
#define Q    "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q1}\n"
#define NODE "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
#define PC   "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
#define REQ                                                                                        \
        "spec:\n  affinity:\n    nodeAffinity:\n"                                                  \
        "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
#define REQ_PATH                                                                                   \
        "pod ns/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."     \
        "nodeSelectorTerms"
#define PREF_PATH                                                                                  \
        "pod ns/p: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"

static const struct {
        const char *yaml;
        const char *err;
} bad_docs[] = {
#define PGH "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\n"
#define HNH "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: h1}\n"
    /* Dispatch and metadata. */
    {"[1, 2]\n", "object: document: must be an object, got array"},
    {"apiVersion: v1\nmetadata: {name: x}\n", "object x: kind: required"},
    {"kind: Pod\nmetadata: {name: x, namespace: ns}\n", "object ns/x: apiVersion: required"},
    {"apiVersion: v1\nkind: 3\n", "object: kind: must be a string, got number"},
    {"apiVersion: [v1]\nkind: Pod\n", "object: apiVersion: must be a string, got array"},
    {"apiVersion: v1\nkind: Pod\nmetadata: {namespace: a}\n", "pod: metadata.name: required"},
    {"apiVersion: v1\nkind: Pod\n", "pod: metadata.name: required"},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: \"\"}\n", "pod: metadata.name: required"},
    {"apiVersion: v1\nkind: Pod\nmetadata: [a]\n", "pod: metadata: must be an object, got array"},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: {a: 1}}\n",
     "pod: metadata.name: must be a string, got object"},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: [x]}\n",
     "pod: metadata.namespace: must be a string, got array"},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns, labels: [a]}\n",
     "pod ns/p: metadata.labels: must be an object, got array"},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: [b]}}\n",
     "pod default/p: metadata.labels.a: must be a string, got array"},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {a: true}}\n",
     "pod default/p: metadata.annotations.a: must be a string, got boolean"},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: yesterday}\n",
     "pod default/p: metadata.creationTimestamp: malformed time \"yesterday\" (want RFC 3339)"},
    {"apiVersion: v1\nkind: Pod\nmetadata: {name: p, deletionTimestamp: 5}\n",
     "pod default/p: metadata.deletionTimestamp: must be an RFC 3339 time string, got number"},
    {NODE "spec: hello\n", "node n1: spec: must be an object, got string"},

    /* Pod scalars. */
    {POD "spec: x\n", "pod ns/p: spec: must be an object, got string"},
    {POD "status: [x]\n", "pod ns/p: status: must be an object, got array"},
    {POD "spec: {priority: high}\n", "pod ns/p: spec.priority: must be an integer, got \"high\""},
    {POD "spec: {priority: 1.5}\n", "pod ns/p: spec.priority: must be an integer, got \"1.5\""},
    {POD "spec: {priority: 3000000000}\n",
     "pod ns/p: spec.priority: must be a 32-bit integer, got 3000000000"},
    {POD "spec: {priority: 1e999}\n", "pod ns/p: spec.priority: value out of range \"1e999\""},
    {POD "spec: {priority: [1]}\n", "pod ns/p: spec.priority: must be an integer, got array"},
    {POD "spec: {preemptionPolicy: Sometimes}\n",
     "pod ns/p: spec.preemptionPolicy: must be PreemptLowerPriority or Never, got \"Sometimes\""},
    {POD "spec: {schedulerName: [a]}\n",
     "pod ns/p: spec.schedulerName: must be a string, got array"},
    {POD "spec: {nodeSelector: [a]}\n",
     "pod ns/p: spec.nodeSelector: must be an object, got array"},
    {POD "status: {phase: Bogus}\n",
     "pod ns/p: status.phase: must be Pending, Running, Succeeded, Failed or Unknown, got "
     "\"Bogus\""},

    /* Pod resources. */
    {POD "spec: {containers: [{resources: {requests: {cpu: 12Qi}}}]}\n",
     "pod ns/p: spec.containers[0].resources.requests.cpu: malformed quantity \"12Qi\""},
    {POD "spec: {containers: [{}, {resources: {requests: {memory: 1e999}}}]}\n",
     "pod ns/p: spec.containers[1].resources.requests.memory: value out of range \"1e999\""},
    {POD "spec: {initContainers: [{resources: {limits: {cpu: -1}}}]}\n",
     "pod ns/p: spec.initContainers[0].resources.limits.cpu: must not be negative, got \"-1\""},
    {POD "spec: {overhead: {cpu: x}}\n", "pod ns/p: spec.overhead.cpu: malformed quantity \"x\""},
    {POD "spec: {containers: [{resources: {requests: {cpu: 2}, limits: {cpu: 1}}}]}\n",
     "pod ns/p: spec.containers[0].resources.requests.cpu: must be <= the limit 1"},
    {POD "spec: {containers: [{resources: {requests: {memory: 5Ei}}}, "
         "{resources: {requests: {memory: 5Ei}}}]}\n",
     "pod ns/p: spec.containers[1]: value out of range (sum of the containers' requests)"},
    {POD "spec: {containers: {a: 1}}\n", "pod ns/p: spec.containers: must be a list, got object"},
    {POD "spec: {containers: [a]}\n",
     "pod ns/p: spec.containers[0]: must be an object, got string"},
    {POD "spec: {containers: [{resources: 1}]}\n",
     "pod ns/p: spec.containers[0].resources: must be an object, got number"},

    /* Node affinity. */
    {POD REQ "        - matchExpressions:\n"
             "          - {key: a, operator: Exists}\n"
             "          - {key: zone, operator: In}\n",
     REQ_PATH "[0].matchExpressions[1].values: must be non-empty for operator In"},
    {POD REQ "        - matchExpressions: [{key: zone, operator: NotIn, values: []}]\n",
     REQ_PATH "[0].matchExpressions[0].values: must be non-empty for operator NotIn"},
    {POD REQ "        - matchExpressions: [{key: cores, operator: Gt, values: [abc]}]\n",
     REQ_PATH "[0].matchExpressions[0].values: must be an integer for operator Gt, got \"abc\""},
    {POD REQ "        - matchExpressions: [{key: cores, operator: Lt, values: [\"1\", \"2\"]}]\n",
     REQ_PATH "[0].matchExpressions[0].values: must hold exactly one integer for operator Lt, got "
              "2 values"},
    {POD REQ "        - matchExpressions: [{key: cores, operator: Gt}]\n",
     REQ_PATH "[0].matchExpressions[0].values: must hold exactly one integer for operator Gt, got "
              "0 values"},
    {POD REQ "        - matchExpressions: [{key: a, operator: Exists, values: [x]}]\n",
     REQ_PATH "[0].matchExpressions[0].values: must be empty for operator Exists"},
    {POD REQ "        - matchExpressions: [{key: a, operator: DoesNotExist, values: [x]}]\n",
     REQ_PATH "[0].matchExpressions[0].values: must be empty for operator DoesNotExist"},
    {POD REQ "        - matchExpressions: [{key: a, operator: Near, values: [x]}]\n",
     REQ_PATH "[0].matchExpressions[0].operator: unknown operator \"Near\""},
    {POD REQ "        - matchExpressions: [{key: a}]\n",
     REQ_PATH "[0].matchExpressions[0].operator: required"},
    {POD REQ "        - matchExpressions: [{operator: Exists}]\n",
     REQ_PATH "[0].matchExpressions[0].key: required"},
    {POD REQ "        - matchExpressions: [{key: a, operator: In, values: [[x]]}]\n",
     REQ_PATH "[0].matchExpressions[0].values[0]: must be a string, got array"},
    {POD REQ "        - matchExpressions: [{key: a, operator: In, values: x}]\n",
     REQ_PATH "[0].matchExpressions[0].values: must be a list, got string"},
    {POD REQ "        - {}\n"
             "        - matchFields: [{key: metadata.labels, operator: In, values: [x]}]\n",
     REQ_PATH "[1].matchFields[0].key: must be metadata.name, got \"metadata.labels\""},
    {POD REQ "        - matchFields: [{key: metadata.name, operator: Exists}]\n",
     REQ_PATH "[0].matchFields[0].operator: must be In or NotIn for a field selector, got Exists"},
    {POD REQ "        - matchFields: [{key: metadata.name, operator: In, values: [a, b]}]\n",
     REQ_PATH "[0].matchFields[0].values: must hold exactly one value for a field selector, got 2"},
    {POD REQ "        - x\n", REQ_PATH "[0]: must be an object, got string"},
    {POD REQ "          []\n", REQ_PATH ": must have at least one term"},
    {POD "spec: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {}}}}\n",
     REQ_PATH ": must have at least one term"},
    {POD "spec: {affinity: x}\n", "pod ns/p: spec.affinity: must be an object, got string"},
    {POD "spec: {affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
         "[{weight: 0, preference: {}}]}}}\n",
     PREF_PATH "[0].weight: must be between 1 and 100, got 0"},
    {POD "spec: {affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
         "[{weight: 101}]}}}\n",
     PREF_PATH "[0].weight: must be between 1 and 100, got 101"},
    {POD "spec: {affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
         "[{preference: {}}]}}}\n",
     PREF_PATH "[0].weight: required"},
    {POD "spec: {affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
         "[{weight: 1, preference: {matchExpressions: [{key: a, operator: In}]}}]}}}\n",
     PREF_PATH "[0].preference.matchExpressions[0].values: must be non-empty for operator In"},

    /* Tolerations. */
    {POD "spec: {tolerations: [{key: a, operator: Foo}]}\n",
     "pod ns/p: spec.tolerations[0].operator: must be Equal or Exists, got \"Foo\""},
    {POD "spec: {tolerations: [{key: a, effect: NoWay}]}\n",
     "pod ns/p: spec.tolerations[0].effect: must be NoSchedule, PreferNoSchedule or NoExecute, "
     "got \"NoWay\""},
    {POD "spec: {tolerations: [{key: a}, {value: b}]}\n",
     "pod ns/p: spec.tolerations[1].operator: must be Exists when key is empty"},
    {POD "spec: {tolerations: [{key: a, operator: Exists, value: b}]}\n",
     "pod ns/p: spec.tolerations[0].value: must be empty when operator is Exists"},
    {POD "spec: {tolerations: {key: a}}\n",
     "pod ns/p: spec.tolerations: must be a list, got object"},

    /* Nodes. */
    {NODE "spec: {taints: [{key: a, effect: Bogus}]}\n",
     "node n1: spec.taints[0].effect: must be NoSchedule, PreferNoSchedule or NoExecute, got "
     "\"Bogus\""},
    {NODE "spec: {taints: [{key: a}]}\n", "node n1: spec.taints[0].effect: required"},
    {NODE "spec: {taints: [{effect: NoSchedule}]}\n", "node n1: spec.taints[0].key: required"},
    {NODE "spec: {unschedulable: \"yes\"}\n",
     "node n1: spec.unschedulable: must be a boolean, got string"},
    {NODE "status: {allocatable: {cpu: 2x}}\n",
     "node n1: status.allocatable.cpu: malformed quantity \"2x\""},
    {NODE "status: {capacity: {memory: -1Gi}}\n",
     "node n1: status.capacity.memory: must not be negative, got \"-1Gi\""},
    {NODE "status: {conditions: [{type: Ready, status: true}]}\n",
     "node n1: status.conditions[0].status: must be a string, got boolean"},
    {NODE "status: {conditions: [x]}\n",
     "node n1: status.conditions[0]: must be an object, got string"},

    /* PodGroups. */
    {PG "spec: {minMember: abc}\n",
     "podgroup team-a/train: spec.minMember: must be an integer, got \"abc\""},
    {PG "spec: {minMember: -3}\n", "podgroup team-a/train: spec.minMember: must be >= 0, got -3"},
    {PG "spec: {minMember: 2147483648}\n",
     "podgroup team-a/train: spec.minMember: must be a 32-bit integer, got 2147483648"},
    {PG "spec: {minTaskMember: {worker: -1}}\n",
     "podgroup team-a/train: spec.minTaskMember.worker: must be >= 0, got -1"},
    {PG "spec: {minTaskMember: {worker: null}}\n",
     "podgroup team-a/train: spec.minTaskMember.worker: must be an integer, got null"},
    {PG "spec: {minTaskMember: [1]}\n",
     "podgroup team-a/train: spec.minTaskMember: must be an object, got array"},
    {PG "spec: {minResources: {cpu: \"-2\"}}\n",
     "podgroup team-a/train: spec.minResources.cpu: must not be negative, got \"-2\""},
    {PG "spec: {queue: [a]}\n", "podgroup team-a/train: spec.queue: must be a string, got array"},
    {PG "status: {running: -1}\n", "podgroup team-a/train: status.running: must be >= 0, got -1"},
    {PG "status: {conditions: [{type: A, lastTransitionTime: never}]}\n",
     "podgroup team-a/train: status.conditions[0].lastTransitionTime: malformed time \"never\" "
     "(want RFC 3339)"},
    {PG "status: {conditions: [{type: [A]}]}\n",
     "podgroup team-a/train: status.conditions[0].type: must be a string, got array"},

    /* Queues. */
    {Q "spec: {weight: -1}\n", "queue q1: spec.weight: must be between 0 and 65535, got -1"},
    {Q "spec: {weight: 70000}\n", "queue q1: spec.weight: must be between 0 and 65535, got 70000"},
    {Q "spec: {capability: {cpu: lots}}\n",
     "queue q1: spec.capability.cpu: malformed quantity \"lots\""},
    {Q "spec: {guarantee: {resource: {memory: 1Qi}}}\n",
     "queue q1: spec.guarantee.resource.memory: malformed quantity \"1Qi\""},
    {Q "spec: {guarantee: [1]}\n", "queue q1: spec.guarantee: must be an object, got array"},
    {Q "spec: {deserved: {cpu: -1}}\n",
     "queue q1: spec.deserved.cpu: must not be negative, got \"-1\""},
    {Q "spec: {reclaimable: 1}\n", "queue q1: spec.reclaimable: must be a boolean, got number"},
    {Q "status: {state: Paused}\n",
     "queue q1: status.state: must be Open, Closed, Closing or Unknown, got \"Paused\""},

    /* Priority classes. */
    {PC "value: 3000000000\n",
     "priorityclass high: value: must be a 32-bit integer, got 3000000000"},
    {PC "value: ten\n", "priorityclass high: value: must be an integer, got \"ten\""},
    {PC "globalDefault: yes\n", "priorityclass high: globalDefault: must be a boolean, got string"},
    {PC "preemptionPolicy: Always\n",
     "priorityclass high: preemptionPolicy: must be PreemptLowerPriority or Never, got \"Always\""},
    {"apiVersion: v1\nkind: Namespace\nmetadata: {name: a, labels: 3}\n",
     "namespace a: metadata.labels: must be an object, got number"},

    /* PodGroup networkTopology. */
    {PGH "spec: {networkTopology: {mode: strict}}\n",
     "podgroup default/pg: spec.networkTopology.mode: must be hard or soft, got \"strict\""},
    {PGH "spec: {networkTopology: {highestTierAllowed: -1}}\n",
     "podgroup default/pg: spec.networkTopology.highestTierAllowed: must be >= 0, got -1"},
    {PGH "spec: {networkTopology: {highestTierAllowed: 1, highestTierName: rack}}\n",
     "podgroup default/pg: spec.networkTopology: highestTierAllowed and highestTierName cannot "
     "both be set"},
    {PGH "spec: {networkTopology: hard}\n",
     "podgroup default/pg: spec.networkTopology: must be an object, got string"},
    /* PodGroup subGroupPolicy. */
    {PGH "spec: {subGroupPolicy: [{matchLabelKeys: [a]}]}\n",
     "podgroup default/pg: spec.subGroupPolicy[0].name: must be set"},
    {PGH "spec: {subGroupPolicy: [{name: a}, {name: a}]}\n",
     "podgroup default/pg: spec.subGroupPolicy[1].name: duplicate name \"a\""},
    {PGH "spec: {subGroupPolicy: [{name: a, subGroupSize: -2}]}\n",
     "podgroup default/pg: spec.subGroupPolicy[0].subGroupSize: must be >= 0, got -2"},
    {PGH "spec: {subGroupPolicy: [{name: a, minSubGroups: x}]}\n",
     "podgroup default/pg: spec.subGroupPolicy[0].minSubGroups: must be an integer, got \"x\""},
    {PGH "spec: {subGroupPolicy: [{name: a, matchLabelKeys: [k, '']}]}\n",
     "podgroup default/pg: spec.subGroupPolicy[0].matchLabelKeys[1]: must be a label key, got "
     "\"\""},
    {PGH "spec: {subGroupPolicy: [{name: a, networkTopology: {mode: strict}}]}\n",
     "podgroup default/pg: spec.subGroupPolicy[0].networkTopology.mode: must be hard or soft, "
     "got \"strict\""},
    {PGH "spec: {subGroupPolicy: [{name: a, networkTopology: {highestTierAllowed: 1, "
         "highestTierName: rack}}]}\n",
     "podgroup default/pg: spec.subGroupPolicy[0].networkTopology: highestTierAllowed and "
     "highestTierName cannot both be set"},
    {PGH "spec: {subGroupPolicy: {name: a}}\n",
     "podgroup default/pg: spec.subGroupPolicy: must be a list, got object"},
    {PGH "spec: {subGroupPolicy: [{name: a, labelSelector: {matchLabels: x}}]}\n",
     "podgroup default/pg: spec.subGroupPolicy[0].labelSelector.matchLabels: must be an object, "
     "got string"},

    /* HyperNodes. */
    {HNH "spec: {tier: -1}\n", "hypernode h1: spec.tier: must be >= 0, got -1"},
    {HNH "spec: {members: []}\n", "hypernode h1: spec.tier: required"},
    {HNH "spec: {tier: one}\n", "hypernode h1: spec.tier: must be an integer, got \"one\""},
    {HNH "spec: {tier: 1, members: [{type: Rack, selector: {exactMatch: {name: a}}}]}\n",
     "hypernode h1: spec.members[0].type: must be Node or HyperNode, got \"Rack\""},
    {HNH "spec: {tier: 1, members: [{selector: {exactMatch: {name: a}}}]}\n",
     "hypernode h1: spec.members[0].type: required"},
    {HNH "spec: {tier: 1, members: [{type: Node}]}\n",
     "hypernode h1: spec.members[0].selector: one of exactMatch, regexMatch and labelMatch is "
     "required"},
    {HNH "spec: {tier: 1, members: [{type: Node, selector: {exactMatch: {name: a},"
         " regexMatch: {pattern: b}}}]}\n",
     "hypernode h1: spec.members[0].selector: exactly one of exactMatch, regexMatch and "
     "labelMatch may be set"},
    {HNH "spec: {tier: 1, members: [{type: Node, selector: {exactMatch: {name: ''}}}]}\n",
     "hypernode h1: spec.members[0].selector.exactMatch.name: required"},
    {HNH "spec: {tier: 1, members: [{type: Node, selector: {regexMatch: {pattern: 'n[1-'}}}]}\n",
     "hypernode h1: spec.members[0].selector.regexMatch.pattern: invalid regular expression "
     "\"n[1-\": Unmatched [, [^, [:, [., or [="},
    {HNH "spec: {tier: 1, members: [{type: Node, selector: {regexMatch: {pattern: '(?i)n'}}}]}\n",
     "hypernode h1: spec.members[0].selector.regexMatch.pattern: invalid regular expression "
     "\"(?i)n\": Invalid preceding regular expression"},
    {HNH "spec: {tier: 1, members: [{type: Node, selector: {labelMatch: {matchExpressions:"
         " [{key: gpu, operator: Gt, values: ['1']}]}}}]}\n",
     "hypernode h1: spec.members[0].selector.labelMatch.matchExpressions[0].operator: must be "
     "In, NotIn, Exists or DoesNotExist in a label selector, got Gt"},
    {HNH "spec: {tier: 1, members: [{type: Node, selector: {labelMatch: {matchLabels: [a]}}}]}\n",
     "hypernode h1: spec.members[0].selector.labelMatch.matchLabels: must be an object, got "
     "array"},
    {HNH "spec: {tier: 1}\nstatus: {nodeCount: -2}\n",
     "hypernode h1: status.nodeCount: must be an integer >= 0, got \"-2\""},
};

static void test_bad_documents(void **state)
{
        (void)state;
        for (size_t i = 0; i < KB_ARRAY_SIZE(bad_docs); i++) {
                struct kb_object o;
                char err[512] = "";
                int rc = decode(bad_docs[i].yaml, &o, err, sizeof(err));
                if (rc != KB_EBADINPUT || strcmp(err, bad_docs[i].err) != 0)
                        fail_msg("case %zu: rc %d\n got: %s\nwant: %s", i, rc, err,
                                 bad_docs[i].err);
                assert_int_equal(o.kind, KB_KIND_NONE);
                assert_null(o.ptr);
                /* A short buffer truncates the message, never overruns. */
                char small[6];
                assert_int_equal(decode(bad_docs[i].yaml, &o, small, sizeof(small)), KB_EBADINPUT);
                assert_true(strlen(small) < sizeof(small));
        }
}

/* ---- robustness ------------------------------------------------------- */

/* Every slot of a tree: array elements and member values. */
struct slots {
        struct kb_value **v[4096];
        size_t n;
};

static void collect_slots(struct kb_value *v, struct slots *s)
{
        if (v->type == KB_VARRAY) {
                for (size_t i = 0; i < v->arr.n; i++) {
                        assert_true(s->n < KB_ARRAY_SIZE(s->v));
                        s->v[s->n++] = &v->arr.v[i];
                        collect_slots(v->arr.v[i], s);
                }
        } else if (v->type == KB_VOBJECT) {
                for (size_t i = 0; i < v->obj.n; i++) {
                        assert_true(s->n < KB_ARRAY_SIZE(s->v));
                        s->v[s->n++] = &v->obj.m[i].val;
                        collect_slots(v->obj.m[i].val, s);
                }
        }
}

/*
 * Replaces each value of each well-formed document, one at a time, with
 * values of every type: the decoders must answer 0 or an error with a
 * message, and never crash or leak (ASan and LeakSanitizer watch).
 */
static void test_mutations_never_crash(void **state)
{
        (void)state;
        static const char *const docs[] = {
            pod_full,
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {a: b}}\n"
            "spec: {unschedulable: true, taints: [{key: a, value: b, effect: NoSchedule}]}\n"
            "status: {allocatable: {cpu: 1}, capacity: {cpu: 2},"
            " conditions: [{type: Ready, status: \"True\"}]}\n",
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
            "metadata: {name: pg, namespace: a, creationTimestamp: \"2024-01-02T03:04:05Z\"}\n"
            "spec: {minMember: 2, minTaskMember: {a: 1}, minResources: {cpu: 1}, queue: q,"
            " priorityClassName: h}\n"
            "status: {phase: Running, running: 1, succeeded: 1, failed: 1, conditions: [{type: A,"
            " status: \"True\", reason: r, message: m, transitionID: t,"
            " lastTransitionTime: \"2024-01-02T03:04:05Z\"}]}\n",
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
            "spec: {weight: 2, capability: {cpu: 1}, guarantee: {resource: {cpu: 1}},"
            " deserved: {cpu: 1}, reclaimable: true, priority: 1, parent: p}\n"
            "status: {state: Open}\n",
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: h}\n"
            "value: 5\nglobalDefault: false\npreemptionPolicy: Never\n",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
            "spec:\n  containers: [{resources: {requests: {cpu: 1}, limits: {cpu: 2}}}]\n"
            "  initContainers: [{restartPolicy: Always, resources: {requests: {memory: 1Gi}}}]\n"
            "  overhead: {cpu: 1m}\n",
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: pg}\n"
            "spec: {networkTopology: {mode: soft, highestTierAllowed: 2}}\n",
            "apiVersion: topology.volcano.sh/v1alpha1\nkind: HyperNode\nmetadata: {name: h}\n"
            "spec: {tier: 2, tierName: block, members: [{type: HyperNode, selector: {exactMatch:"
            " {name: r1}}}, {type: Node, selector: {regexMatch: {pattern: '^n\\d+$'}}},"
            " {type: Node, selector: {labelMatch: {matchLabels: {a: b}, matchExpressions:"
            " [{key: c, operator: In, values: [d]}]}}}]}\nstatus: {nodeCount: 3}\n",
        };
        const char *junk[] = {"null",  "true", "-7",         "1e999", "\"\"",
                              "\"x\"", "[]",   "[1, \"a\"]", "{}",    "{a: {b: c}}"};
        struct kb_value *junkv[KB_ARRAY_SIZE(junk)];
        for (size_t j = 0; j < KB_ARRAY_SIZE(junk); j++)
                junkv[j] =
                    strcmp(junk[j], "null") ? kb_test_yaml1(junk[j]) : kb_value_new(KB_VNULL);

        size_t decodes = 0;
        for (size_t d = 0; d < KB_ARRAY_SIZE(docs); d++) {
                struct kb_value *doc = kb_test_yaml1(docs[d]);
                static struct slots sl;
                sl.n = 0;
                collect_slots(doc, &sl);
                for (size_t s = 0; s < sl.n; s++) {
                        struct kb_value *orig = *sl.v[s];
                        for (size_t j = 0; j < KB_ARRAY_SIZE(junk); j++) {
                                struct kb_object o;
                                char err[256] = "";
                                *sl.v[s] = junkv[j];
                                int rc = kb_object_decode(doc, &o, err, sizeof(err));
                                decodes++;
                                if (rc == 0) {
                                        assert_int_not_equal(o.kind, KB_KIND_NONE);
                                        kb_object_release(&o);
                                } else {
                                        assert_true(rc == KB_EBADINPUT || rc == KB_ENOTFOUND);
                                        assert_int_equal(o.kind, KB_KIND_NONE);
                                        assert_true(err[0] != '\0');
                                }
                        }
                        *sl.v[s] = orig;
                }
                kb_value_free(doc);
        }
        assert_true(decodes > 1000);
        for (size_t j = 0; j < KB_ARRAY_SIZE(junk); j++)
                kb_value_free(junkv[j]);
}

/* Runs last: it fills the process-wide resource table. */
static void test_res_table_full(void **state)
{
        (void)state;
        char name[32], err[256];
        int last = -1;
        for (int i = 0; kb_res_count() < KB_RES_MAX; i++) {
                snprintf(name, sizeof(name), "example.com/r%d", i);
                last = kb_res_intern(name);
                assert_true(last >= 3);
        }
        assert_int_equal(last, KB_RES_MAX - 1);
        assert_int_equal(kb_res_intern("example.com/one-too-many"), KB_ETOOMANYRES);
        assert_int_equal(kb_res_lookup("example.com/one-too-many"), -1);

        /* A node keeps what fits and drops the rest. */
        struct kb_object o;
        decode_ok("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                  "status: {allocatable: {cpu: 2, example.com/one-too-many: 1, pods: 10}}\n",
                  &o, KB_KIND_NODE);
        assert_int_equal(o.node->allocatable.q[KB_RES_CPU], 2000);
        assert_int_equal(o.node->allocatable.q[KB_RES_PODS], 10);
        kb_object_release(&o);

        /* Anything else that names it fails, naming the field. */
        assert_int_equal(decode(POD "spec: {containers: [{resources: {requests: "
                                    "{example.com/one-too-many: 1}}}]}\n",
                                &o, err, sizeof(err)),
                         KB_EBADINPUT);
        assert_string_equal(err, "pod ns/p: spec.containers[0].resources.requests.example.com/"
                                 "one-too-many: too many distinct resource names (kbatch keeps "
                                 "at most 16)");
        assert_int_equal(
            decode(Q "spec: {capability: {example.com/one-too-many: 1}}\n", &o, err, sizeof(err)),
            KB_EBADINPUT);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_quantity_parse),
            cmocka_unit_test(test_quantity_format),
            cmocka_unit_test(test_format_decimal),
            cmocka_unit_test(test_res_table),
            cmocka_unit_test(test_res_vectors),
            cmocka_unit_test(test_res_decode),
            cmocka_unit_test(test_pod_full),
            cmocka_unit_test(test_pod_defaults),
            cmocka_unit_test(test_pod_requests),
            cmocka_unit_test(test_declared_runtime),
            cmocka_unit_test(test_node),
            cmocka_unit_test(test_node_same),
            cmocka_unit_test(test_podgroup),
            cmocka_unit_test(test_podgroup_vcjob_owner),
            cmocka_unit_test(test_network_topology),
            cmocka_unit_test(test_queue),
            cmocka_unit_test(test_priorityclass_namespace),
            cmocka_unit_test(test_pdb),
            cmocka_unit_test(test_dispatch),
            cmocka_unit_test(test_bad_documents),
            cmocka_unit_test(test_mutations_never_crash),
            cmocka_unit_test(test_res_table_full), /* last: fills the table */
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
