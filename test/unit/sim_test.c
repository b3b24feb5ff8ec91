/*
 * The simulator's loader (bad input is refused with a message naming the
 * file, the line, the object and the field, and leaves the cluster as it
 * was) and the conf parser (Volcano's format, its flag spellings, names
 * kbatch lacks).
 */
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
            "metadata: {name: g}\nspec: {minMember: 2, subGroupPolicy: [{name: s}]}\n"
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
        assert_int_equal(kb_cluster_load(&c, "t", text, strlen(text), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&c);
        assert_int_equal(parse(kb_default_conf_yaml, &conf, err, sizeof(err)), 0);
        kb_cluster_snapshot(&c, &snap);
        assert_int_equal(kb_session_run(&snap, &conf, &r), 0);
        assert_int_equal(r.nwarnings, 2);
        assert_string_equal(r.warnings[0].object, "podgroup default/g");
        assert_non_null(r.warnings[0].pg);
        /* Pod affinity and topology spread are evaluated: not listed. */
        assert_string_equal(r.warnings[0].message,
                            "kbatch does not evaluate these fields yet and schedules as if they "
                            "were absent: spec.subGroupPolicy");
        assert_string_equal(r.warnings[1].object, "pod default/solo");
        assert_null(r.warnings[1].pg);
        assert_string_equal(r.warnings[1].pod->meta.name, "solo");
        assert_string_equal(r.warnings[1].message,
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
                           "- plugins:\n  - name: drf\n    enableHierarchy: true\n"
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
                            "action shuffle, action elect, flag drf enableHierarchy, plugin "
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
        };
        return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
