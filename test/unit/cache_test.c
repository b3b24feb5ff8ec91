/* pkg/cache: upsert/replace/remove, relist sweeps, binding marks in
 * snapshots, and objects kept alive by a snapshot across an update. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "testutil.h"

static struct kb_value *json(const char *text)
{
        struct kb_value *v = NULL;
        assert_int_equal(kb_json_parse(text, strlen(text), &v, NULL, 0), 0);
        return v;
}

static void put(struct kb_cache *c, enum kb_kind kind, const char *text)
{
        struct kb_value *v = json(text);
        assert_int_equal(kb_cache_upsert(c, kind, v), 0);
        kb_value_free(v);
}

#define POD(name, uid, node)                                                                       \
        "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"uid\":\"" uid "\"},"     \
        "\"spec\":{\"schedulerName\":\"kbatch\"" node ",\"containers\":[{\"name\":\"c\","          \
        "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Pending\"}}"

static void test_upsert_remove_relist(void **state)
{
        struct kb_cache *c = kb_cache_new();
        put(c, KB_KIND_NODE,
            "{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"4\"}}}");
        put(c, KB_KIND_POD, POD("p1", "u1", ""));
        put(c, KB_KIND_POD, POD("p2", "u2", ""));
        assert_int_equal(kb_cache_count(c, KB_KIND_POD), 2);
        const struct kb_pod *p = kb_cache_get(c, KB_KIND_POD, "default", "p1");
        assert_non_null(p);
        assert_null(p->node_name);
        put(c, KB_KIND_POD, POD("p1", "u1", ",\"nodeName\":\"n1\""));
        p = kb_cache_get(c, KB_KIND_POD, "default", "p1");
        assert_string_equal(p->node_name, "n1");

        /* A relist that no longer has p2 removes it. */
        kb_cache_list_begin(c, KB_KIND_POD);
        put(c, KB_KIND_POD, POD("p1", "u1", ",\"nodeName\":\"n1\""));
        kb_cache_list_end(c, KB_KIND_POD);
        assert_int_equal(kb_cache_count(c, KB_KIND_POD), 1);
        struct kb_value *v = json("{\"metadata\":{\"name\":\"p1\",\"namespace\":\"default\"}}");
        kb_cache_remove(c, KB_KIND_POD, v);
        kb_value_free(v);
        assert_int_equal(kb_cache_count(c, KB_KIND_POD), 0);
        kb_cache_free(c);
}

/* A pod with a resourceVersion, from a source as a reflector feeds it. */
#define PODRV(name, uid, rv, sched, node)                                                          \
        "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"uid\":\"" uid            \
        "\",\"resourceVersion\":\"" rv "\"},\"spec\":{\"schedulerName\":\"" sched "\"" node        \
        ",\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Pending\"}}"

static void feed(struct kb_cache *c, unsigned src, const char *op, const char *text)
{
        void *arg = kb_cache_feed_source(c, KB_KIND_POD, src);
        struct kb_value *v = text ? json(text) : NULL;
        if (!strcmp(op, "upsert"))
                kb_cache_reflector_ops.upsert(arg, v);
        else if (!strcmp(op, "remove"))
                kb_cache_reflector_ops.remove(arg, v);
        else if (!strcmp(op, "begin"))
                kb_cache_reflector_ops.list_begin(arg);
        else
                kb_cache_reflector_ops.list_end(arg);
        kb_value_free(v);
}

/* Two pod sources as the daemon has them: 0 bound pods ("spec.nodeName!="),
 * 1 our scheduler's pods ("spec.schedulerName=kbatch"). */
#define BOUND ",\"nodeName\":\"n1\""
static void test_sources(void **state)
{
        struct kb_cache *c = kb_cache_new();

        /* Ours, pending: only source 1 has it.  Bound: both report it,
         * source 1's older copy arriving last must not win. */
        feed(c, 1, "upsert", PODRV("a", "ua", "3", "kbatch", ""));
        feed(c, 0, "upsert", PODRV("a", "ua", "5", "kbatch", BOUND));
        feed(c, 1, "upsert", PODRV("a", "ua", "4", "kbatch", ""));
        const struct kb_pod *p = kb_cache_get(c, KB_KIND_POD, "default", "a");
        assert_non_null(p);
        assert_string_equal(p->node_name, "n1");
        assert_string_equal(p->meta.resource_version, "5");

        /* Deleted: it goes when the last source says so. */
        feed(c, 1, "remove", PODRV("a", "ua", "6", "kbatch", BOUND));
        assert_non_null(kb_cache_get(c, KB_KIND_POD, "default", "a"));
        feed(c, 0, "remove", PODRV("a", "ua", "6", "kbatch", BOUND));
        assert_null(kb_cache_get(c, KB_KIND_POD, "default", "a"));

        /* Another scheduler's pod arrives from source 0 once bound; a
         * relist of source 1 (which never had it) keeps it, one of source 0
         * without it removes it. */
        feed(c, 0, "upsert", PODRV("web", "uw", "7", "default-scheduler", BOUND));
        feed(c, 1, "begin", NULL);
        feed(c, 1, "end", NULL);
        assert_non_null(kb_cache_get(c, KB_KIND_POD, "default", "web"));
        feed(c, 0, "begin", NULL);
        feed(c, 0, "end", NULL);
        assert_null(kb_cache_get(c, KB_KIND_POD, "default", "web"));

        /* A pod recreated under its name: the new uid replaces the old
         * copy whatever the versions, and the old one's DELETED from the
         * other source leaves the new one alone. */
        feed(c, 0, "upsert", PODRV("b", "old", "9", "kbatch", BOUND));
        feed(c, 1, "upsert", PODRV("b", "new", "8", "kbatch", ""));
        p = kb_cache_get(c, KB_KIND_POD, "default", "b");
        assert_string_equal(p->meta.uid, "new");
        feed(c, 0, "remove", PODRV("b", "old", "10", "kbatch", BOUND));
        p = kb_cache_get(c, KB_KIND_POD, "default", "b");
        assert_non_null(p);
        assert_string_equal(p->meta.uid, "new");

        /* A refresh updates a held object and adds none. */
        struct kb_value *v = json(PODRV("b", "new", "11", "kbatch", BOUND));
        assert_int_equal(kb_cache_refresh(c, KB_KIND_POD, v), 0);
        kb_value_free(v);
        p = kb_cache_get(c, KB_KIND_POD, "default", "b");
        assert_string_equal(p->node_name, "n1");
        v = json(PODRV("zz", "uz", "12", "kbatch", ""));
        assert_int_equal(kb_cache_refresh(c, KB_KIND_POD, v), 0);
        kb_value_free(v);
        assert_null(kb_cache_get(c, KB_KIND_POD, "default", "zz"));
        kb_cache_free(c);
}

static void test_binding_marks(void **state)
{
        static const char *const names[] = {"kbatch"};
        struct kb_cache *c = kb_cache_new();
        put(c, KB_KIND_NODE,
            "{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"4\"}}}");
        put(c, KB_KIND_POD, POD("p1", "u1", ""));
        const struct kb_pod *p = kb_cache_get(c, KB_KIND_POD, "default", "p1");
        kb_cache_assume(c, p, "n1");
        assert_true(kb_cache_binding(c, "default", "p1"));

        /* The snapshot shows the pod on its node (the node object's own
         * name, which the snapshot holds); it keeps the original alive
         * across an update. */
        struct kb_cache_snap *s = kb_cache_snapshot(c, names, 1, NULL);
        assert_int_equal(s->snap.npods, 1);
        assert_int_equal(s->nassumed, 1);
        assert_null(s->snap.pods[0]->node_name);
        assert_non_null(s->snap.assumed_node);
        assert_string_equal(s->snap.assumed_node[0], "n1");
        assert_string_equal(s->snap.pods[0]->meta.name, "p1");
        put(c, KB_KIND_POD, POD("p1", "u1", ""));
        assert_true(kb_cache_binding(c, "default", "p1"));
        assert_string_equal(s->snap.pods[0]->meta.uid, "u1");

        /* An acknowledged bind stays marked until the watch shows it. */
        kb_cache_bind_done(c, "default", "p1", true);
        assert_true(kb_cache_binding(c, "default", "p1"));
        put(c, KB_KIND_POD, POD("p1", "u1", ",\"nodeName\":\"n1\""));
        assert_false(kb_cache_binding(c, "default", "p1"));
        kb_cache_snapshot_free(s);

        /* A failed bind forgets the mark: the pod is pending again. */
        put(c, KB_KIND_POD, POD("p2", "u2", ""));
        kb_cache_assume(c, kb_cache_get(c, KB_KIND_POD, "default", "p2"), "n2");
        kb_cache_bind_done(c, "default", "p2", false);
        assert_false(kb_cache_binding(c, "default", "p2"));
        s = kb_cache_snapshot(c, names, 1, NULL);
        assert_int_equal(s->nassumed, 0);
        kb_cache_snapshot_free(s);

        /* A pod marked for a node the cache does not have is not assumed
         * anywhere (the dispatcher never binds a marked pod twice). */
        kb_cache_assume(c, kb_cache_get(c, KB_KIND_POD, "default", "p2"), "gone");
        s = kb_cache_snapshot(c, names, 1, NULL);
        assert_int_equal(s->nassumed, 0);
        kb_cache_snapshot_free(s);

        /* A pod recreated under the same name drops the old mark. */
        kb_cache_assume(c, kb_cache_get(c, KB_KIND_POD, "default", "p2"), "n2");
        put(c, KB_KIND_POD, POD("p2", "u3", ""));
        assert_false(kb_cache_binding(c, "default", "p2"));

        char *dump = kb_cache_dump_json(c);
        assert_non_null(strstr(dump, "\"default/p2\""));
        free(dump);
        kb_cache_free(c);
}

#define PG(name, rv, cpu)                                                                          \
        "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"uid\":\"u-" name         \
        "\",\"resourceVersion\":\"" rv "\"},\"spec\":{\"minMember\":1,\"minResources\":{"          \
        "\"cpu\":\"" cpu "\"}}}"

/* The cache keeps only the metadata sessions read. */
static void test_trim(void **state)
{
        struct kb_cache *c = kb_cache_new();
        put(c, KB_KIND_POD,
            "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u\","
            "\"labels\":{\"job-name\":\"j\"},\"annotations\":{\"volcano.sh/task-spec\":"
            "\"worker\",\"scheduling.k8s.io/group-name\":\"g\",\"big\":\"x\"}},"
            "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
        const struct kb_pod *p = kb_cache_get(c, KB_KIND_POD, "default", "p");
        assert_int_equal(p->meta.nlabels, 1); /* inter-pod affinity reads them */
        assert_int_equal(p->meta.nannotations, 1);
        assert_string_equal(kb_meta_annotation(&p->meta, "volcano.sh/task-spec"), "worker");
        assert_string_equal(p->group_name, "g");

        /* Pods with the same labels share one copy of them, which outlives
         * any one of the pods. */
        put(c, KB_KIND_POD,
            "{\"metadata\":{\"name\":\"q\",\"namespace\":\"default\",\"uid\":\"v\","
            "\"labels\":{\"job-name\":\"j\"}},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
        put(c, KB_KIND_POD,
            "{\"metadata\":{\"name\":\"r\",\"namespace\":\"default\",\"uid\":\"w\","
            "\"labels\":{\"job-name\":\"k\"}},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
        p = kb_cache_get(c, KB_KIND_POD, "default", "p");
        const struct kb_pod *q = kb_cache_get(c, KB_KIND_POD, "default", "q");
        const struct kb_pod *r = kb_cache_get(c, KB_KIND_POD, "default", "r");
        assert_ptr_equal(p->meta.labels, q->meta.labels);
        assert_ptr_not_equal(p->meta.labels, r->meta.labels);
        struct kb_value *v = json("{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"}}");
        kb_cache_remove(c, KB_KIND_POD, v);
        kb_value_free(v);
        assert_string_equal(kb_meta_label(&q->meta, "job-name"), "j");
        assert_string_equal(kb_meta_label(&r->meta, "job-name"), "k");
        kb_cache_free(c);
}

static void test_invalid(void **state)
{
        struct kb_cache *c = kb_cache_new();
        unsigned gen = kb_cache_invalid_gen(c);
        /* Undecodable: not cached, remembered with the field. */
        struct kb_value *v = json(PG("a", "1", "-1"));
        assert_int_equal(kb_cache_upsert(c, KB_KIND_PODGROUP, v), KB_EBADINPUT);
        kb_value_free(v);
        assert_null(kb_cache_get(c, KB_KIND_PODGROUP, "default", "a"));
        const struct kb_cache_invalid *inv =
            kb_cache_invalid_get(c, KB_KIND_PODGROUP, "default", "a");
        assert_non_null(inv);
        assert_string_equal(inv->uid, "u-a");
        assert_string_equal(inv->resource_version, "1");
        assert_non_null(strstr(inv->message, "podgroup default/a: spec.minResources.cpu"));
        assert_true(kb_cache_invalid_gen(c) != gen);

        /* Fixed: cached, forgotten as invalid. */
        put(c, KB_KIND_PODGROUP, PG("a", "2", "1"));
        assert_non_null(kb_cache_get(c, KB_KIND_PODGROUP, "default", "a"));
        assert_null(kb_cache_invalid_get(c, KB_KIND_PODGROUP, "default", "a"));

        /* A valid group updated into an invalid one leaves the cache. */
        v = json(PG("a", "3", "-3"));
        assert_int_equal(kb_cache_upsert(c, KB_KIND_PODGROUP, v), KB_EBADINPUT);
        kb_value_free(v);
        assert_null(kb_cache_get(c, KB_KIND_PODGROUP, "default", "a"));
        assert_non_null(kb_cache_invalid_get(c, KB_KIND_PODGROUP, "default", "a"));

        /* A relist without it, or its deletion, forgets it. */
        kb_cache_list_begin(c, KB_KIND_PODGROUP);
        kb_cache_list_end(c, KB_KIND_PODGROUP);
        assert_null(kb_cache_invalid_get(c, KB_KIND_PODGROUP, "default", "a"));
        v = json(PG("b", "4", "-1"));
        kb_cache_upsert(c, KB_KIND_PODGROUP, v);
        assert_non_null(kb_cache_invalid_get(c, KB_KIND_PODGROUP, "default", "b"));
        kb_cache_remove(c, KB_KIND_PODGROUP, v);
        kb_value_free(v);
        assert_null(kb_cache_invalid_get(c, KB_KIND_PODGROUP, "default", "b"));
        kb_cache_free(c);
}

/* A Volcano Job and the PodGroup its controller makes (owned by it, no
 * pods yet: Volcano's controller makes them only once the group is
 * admitted). */
#define VCJOB(sched, uid)                                                                          \
        "{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\",\"metadata\":{"            \
        "\"name\":\"test-job\",\"namespace\":\"default\",\"uid\":\"" uid "\"},\"spec\":{"          \
        "\"schedulerName\":\"" sched "\",\"minAvailable\":2,\"tasks\":[{\"name\":\"t\","           \
        "\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}}]}}"
#define VCPG(owner_uid)                                                                            \
        "{\"metadata\":{\"name\":\"test-job-j1\",\"namespace\":\"default\",\"uid\":\"pg1\","       \
        "\"ownerReferences\":[{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\","     \
        "\"name\":\"test-job\",\"uid\":\"" owner_uid "\",\"controller\":true}]},"                  \
        "\"spec\":{\"minMember\":2,\"minResources\":{\"cpu\":\"2\"}}}"

/* Runs a session on c's snapshot and returns the PodGroup's phase, and
 * its condition's reason and message ("-" when none) in why. */
static enum kb_pg_phase vc_session(struct kb_cache *c, char *why, size_t len, int32_t *inqueue)
{
        static const char *const names[] = {"kbatch"};
        struct kb_conf conf;
        char err[256];
        assert_int_equal(kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), &conf,
                                       err, sizeof(err)),
                         0);
        struct kb_cache_snap *s = kb_cache_snapshot(c, names, 1, NULL);
        struct kb_result r;
        assert_int_equal(kb_session_run(&s->snap, &conf, &r), 0);
        assert_int_equal(r.npodgroups, 1);
        const struct kb_pg_status *st = &r.podgroups[0];
        enum kb_pg_phase phase = st->phase;
        snprintf(why, len, "%s: %s", st->cond_reason ? st->cond_reason : "-",
                 st->cond_message ? st->cond_message : "-");
        *inqueue = -1;
        for (size_t i = 0; i < r.nqueues; i++)
                if (!strcmp(r.queues[i].name, "default"))
                        *inqueue = r.queues[i].inqueue;
        kb_result_release(&r);
        kb_conf_release(&conf);
        kb_cache_snapshot_free(s);
        return phase;
}

/* A PodGroup whose Volcano Job asks for another scheduler is not admitted
 * (no pod can say so: none exists before admission) and says why; with
 * the Job saying kbatch, or the owner a Job of another uid, it is
 * admitted (issue 23, point 1). */
static void test_vcjob_owner(void **state)
{
        (void)state;
        struct kb_cache *c = kb_cache_new();
        char why[512];
        int32_t inqueue;
        put(c, KB_KIND_NODE,
            "{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"4\","
            "\"pods\":\"10\"}}}");
        put(c, KB_KIND_QUEUE,
            "{\"metadata\":{\"name\":\"default\",\"uid\":\"q\"},\"spec\":{\"weight\":1}}");
        put(c, KB_KIND_VCJOB, VCJOB("volcano", "j1"));
        put(c, KB_KIND_PODGROUP, VCPG("j1"));

        static const char *const names[] = {"kbatch"};
        struct kb_cache_snap *s = kb_cache_snapshot(c, names, 1, NULL);
        assert_non_null(s->snap.pg_foreign);
        assert_string_equal(s->snap.pg_foreign[0].scheduler, "volcano");
        assert_string_equal(s->snap.pg_foreign[0].name, "test-job");
        /* The Job is held by the snapshot: replacing it in the cache
         * leaves the strings the session reads. */
        put(c, KB_KIND_VCJOB, VCJOB("volcano", "j1"));
        assert_string_equal(s->snap.pg_foreign[0].ns, "default");
        kb_cache_snapshot_free(s);

        assert_int_equal(vc_session(c, why, sizeof(why), &inqueue), KB_PG_PENDING);
        assert_string_equal(why, "OtherScheduler: Volcano Job default/test-job asks for scheduler "
                                 "volcano; kbatch serves kbatch (set the Volcano Job's "
                                 "spec.schedulerName to it)");
        assert_int_equal(inqueue, 0);

        /* Switched to kbatch: admitted. */
        put(c, KB_KIND_VCJOB, VCJOB("kbatch", "j1"));
        assert_int_equal(vc_session(c, why, sizeof(why), &inqueue), KB_PG_INQUEUE);
        assert_int_equal(inqueue, 1);

        /* A Job of the same name but another uid does not own the group. */
        put(c, KB_KIND_VCJOB, VCJOB("volcano", "j2"));
        assert_int_equal(vc_session(c, why, sizeof(why), &inqueue), KB_PG_INQUEUE);

        /* No uid in the reference: matched by name. */
        put(c, KB_KIND_PODGROUP, VCPG(""));
        assert_int_equal(vc_session(c, why, sizeof(why), &inqueue), KB_PG_PENDING);
        assert_non_null(strstr(why, "OtherScheduler: Volcano Job default/test-job"));

        /* Admitted by another scheduler (Volcano's, running beside
         * kbatch): left to it, no condition of kbatch's. */
        put(c, KB_KIND_PODGROUP,
            "{\"metadata\":{\"name\":\"test-job-j1\",\"namespace\":\"default\",\"uid\":"
            "\"pg1\",\"ownerReferences\":[{\"apiVersion\":\"batch.volcano.sh/v1alpha1\","
            "\"kind\":\"Job\",\"name\":\"test-job\",\"uid\":\"j2\"}]},\"spec\":{"
            "\"minMember\":2,\"minResources\":{\"cpu\":\"2\"}},\"status\":{\"phase\":"
            "\"Inqueue\"}}");
        assert_int_equal(vc_session(c, why, sizeof(why), &inqueue), KB_PG_INQUEUE);
        assert_null(strstr(why, "OtherScheduler"));

        /* The Job gone: nothing to say. */
        struct kb_value *v = json(VCJOB("volcano", "j2"));
        kb_cache_remove(c, KB_KIND_VCJOB, v);
        kb_value_free(v);
        s = kb_cache_snapshot(c, names, 1, NULL);
        assert_null(s->snap.pg_foreign);
        kb_cache_snapshot_free(s);
        kb_cache_free(c);
}

/* A node as a reflector feeds it from source src; taint NULL for none. */
static void node_feed(struct kb_cache *c, unsigned src, const char *uid, const char *rv,
                      const char *zone, const char *cpu, const char *taint, const char *ready,
                      const char *heartbeat)
{
        char text[1024];
        char taints[128] = "";
        if (taint)
                snprintf(taints, sizeof(taints),
                         "\"taints\":[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"%s\"}]", taint);
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"name\":\"n1\",\"uid\":\"%s\",\"resourceVersion\":\"%s\","
                 "\"labels\":{\"zone\":\"%s\"}},\"spec\":{%s},\"status\":{\"allocatable\":"
                 "{\"cpu\":\"%s\",\"memory\":\"8Gi\"},\"conditions\":[{\"type\":\"Ready\","
                 "\"status\":\"%s\",\"lastHeartbeatTime\":\"%s\"}]}}",
                 uid, rv, zone, taints, cpu, ready, heartbeat);
        struct kb_value *v = json(text);
        kb_cache_reflector_ops.upsert(kb_cache_feed_source(c, KB_KIND_NODE, src), v);
        kb_value_free(v);
}

static void count_change(void *arg, enum kb_kind kind)
{
        (*(int *)arg)++;
}

/* The snapshot's one node and generation. */
static const struct kb_node *snap_node(struct kb_cache *c, uint64_t *gen)
{
        static const char *const names[] = {"kbatch"};
        struct kb_cache_snap *s = kb_cache_snapshot(c, names, 1, NULL);
        assert_int_equal(s->snap.nnodes, 1);
        const struct kb_node *n = s->snap.nodes[0];
        *gen = s->snap.gen;
        kb_cache_snapshot_free(s); /* the cache still holds the node */
        return n;
}

/* A kubelet's heartbeat (a new resourceVersion and lastHeartbeatTime, nothing
 * kbatch reads) is not a change: the cached node, the generation and the
 * snapshots stay as they were, so a session on them may repeat the last.
 * Anything kbatch reads is a change. */
static void test_node_heartbeat(void **state)
{
        struct kb_cache *c = kb_cache_new();
        int changes = 0;
        kb_cache_on_change(c, count_change, &changes);
        node_feed(c, 0, "u1", "10", "a", "4", NULL, "True", "2026-11-27T10:00:00Z");
        uint64_t gen, gen2;
        const struct kb_node *n = snap_node(c, &gen);
        assert_int_equal(changes, 1);

        node_feed(c, 0, "u1", "20", "a", "4", NULL, "True", "2026-11-27T10:00:10Z");
        assert_ptr_equal(snap_node(c, &gen2), n);
        assert_int_equal(gen2, gen);
        assert_int_equal(changes, 1);
        assert_ptr_equal(kb_cache_get(c, KB_KIND_NODE, NULL, "n1"), n);
        /* The newest version is remembered beside the kept object: a copy
         * older than it (15, from another source) still loses, although
         * the kept object says 10. */
        assert_string_equal(n->meta.resource_version, "10");
        char *dump = kb_cache_dump_json(c);
        assert_non_null(strstr(dump, "\"resourceVersion\": \"20\""));
        free(dump);
        node_feed(c, 1, "u1", "15", "a", "8", NULL, "True", "2026-11-27T10:00:05Z");
        assert_ptr_equal(snap_node(c, &gen2), n);
        assert_int_equal(gen2, gen);
        /* And a relist that finds it the same keeps it and the generation,
         * though its end is news (on_change), whichever source. */
        void *src0 = kb_cache_feed_source(c, KB_KIND_NODE, 0);
        kb_cache_reflector_ops.list_begin(src0);
        node_feed(c, 0, "u1", "25", "a", "4", NULL, "True", "2026-11-27T10:00:20Z");
        kb_cache_reflector_ops.list_end(src0);
        assert_ptr_equal(snap_node(c, &gen2), n);
        assert_int_equal(gen2, gen);
        assert_int_equal(changes, 2);
        /* Source 1 (which sent 15) leaves; source 0 still holds it. */
        void *src1 = kb_cache_feed_source(c, KB_KIND_NODE, 1);
        kb_cache_reflector_ops.list_begin(src1);
        kb_cache_reflector_ops.list_end(src1);
        assert_ptr_equal(snap_node(c, &gen2), n);
        assert_int_equal(gen2, gen);
        assert_int_equal(changes, 3);

        /* Each thing kbatch reads is a change, shown by the next snapshot. */
        node_feed(c, 0, "u1", "30", "b", "4", NULL, "True", "2026-11-27T10:00:30Z");
        n = snap_node(c, &gen2);
        assert_true(gen2 > gen);
        assert_string_equal(kb_meta_label(&n->meta, "zone"), "b");
        assert_string_equal(n->meta.resource_version, "30");
        gen = gen2;
        node_feed(c, 0, "u1", "31", "b", "2", NULL, "True", "2026-11-27T10:00:31Z");
        n = snap_node(c, &gen2);
        assert_true(gen2 > gen);
        assert_int_equal(n->allocatable.q[KB_RES_CPU], 2000);
        gen = gen2;
        node_feed(c, 0, "u1", "32", "b", "2", "NoSchedule", "True", "2026-11-27T10:00:32Z");
        n = snap_node(c, &gen2);
        assert_true(gen2 > gen);
        assert_int_equal(n->ntaints, 1);
        gen = gen2;
        node_feed(c, 0, "u1", "33", "b", "2", "NoSchedule", "False", "2026-11-27T10:00:33Z");
        n = snap_node(c, &gen2);
        assert_true(gen2 > gen);
        assert_false(n->ready);
        gen = gen2;

        /* Deleted and made again under its name, with all else the same:
         * a new uid is a change. */
        node_feed(c, 0, "u2", "40", "b", "2", "NoSchedule", "False", "2026-11-27T10:00:33Z");
        const struct kb_node *n2 = snap_node(c, &gen2);
        assert_true(gen2 > gen);
        assert_ptr_not_equal(n2, n);
        assert_string_equal(n2->meta.uid, "u2");
        kb_cache_free(c);
}

/* A list's end moves the generation only if the list changed something:
 * the empty list of a kind the server does not serve (the reflector
 * reports one every 10 s while a CRD is missing) does not. */
static void test_relist_generation(void **state)
{
        static const char *const names[] = {"kbatch"};
        struct kb_cache *c = kb_cache_new();
        int changes = 0;
        kb_cache_on_change(c, count_change, &changes);
        put(c, KB_KIND_POD, POD("p1", "u1", ""));
        put(c, KB_KIND_POD, POD("p2", "u2", ""));
        struct kb_cache_snap *s = kb_cache_snapshot(c, names, 1, NULL);
        uint64_t gen = s->snap.gen;
        kb_cache_snapshot_free(s);

        kb_cache_list_begin(c, KB_KIND_VCJOB);
        kb_cache_list_end(c, KB_KIND_VCJOB);
        assert_int_equal(changes, 3); /* news: the kind is complete */
        s = kb_cache_snapshot(c, names, 1, NULL);
        assert_int_equal(s->snap.gen, gen);
        kb_cache_snapshot_free(s);

        /* A relist that replaces a pod, or drops one, is a change. */
        kb_cache_list_begin(c, KB_KIND_POD);
        put(c, KB_KIND_POD, POD("p1", "u1", ""));
        put(c, KB_KIND_POD, POD("p2", "u2", ""));
        kb_cache_list_end(c, KB_KIND_POD);
        s = kb_cache_snapshot(c, names, 1, NULL);
        assert_true(s->snap.gen > gen);
        gen = s->snap.gen;
        kb_cache_snapshot_free(s);
        kb_cache_list_begin(c, KB_KIND_POD);
        kb_cache_list_end(c, KB_KIND_POD);
        assert_int_equal(kb_cache_count(c, KB_KIND_POD), 0);
        s = kb_cache_snapshot(c, names, 1, NULL);
        assert_true(s->snap.gen > gen);
        kb_cache_snapshot_free(s);
        kb_cache_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_upsert_remove_relist),
            cmocka_unit_test(test_binding_marks),
            cmocka_unit_test(test_sources),
            cmocka_unit_test(test_invalid),
            cmocka_unit_test(test_trim),
            cmocka_unit_test(test_vcjob_owner),
            cmocka_unit_test(test_node_heartbeat),
            cmocka_unit_test(test_relist_generation),
        };
        return cmocka_run_group_tests_name("cache", tests, NULL, NULL);
}
