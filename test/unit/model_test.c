/*
 * The session model kept between sessions (pkg/framework/keep.c,
 * update.c): a snapshot of the same generation uses the kept model again,
 * pods and PodGroups changed in place update it, anything else builds it
 * anew, and either way a session decides what a session on a fresh build
 * decides.  Every session here goes through
 * kb_test_session_model, which runs it on a fresh build, on the kept
 * model and on the kept model again and compares the three results; test
 * builds also compare the kept model with a fresh build field by field at
 * each open and close (KB_MODEL_CHECK).  The faults of issue 21: an object
 * that changes between sessions, a missed watch event followed by a
 * relist, a node deleted and re-added under the same name, a pod moving
 * from one group to another.
 */
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "framework/explain.h"
#include "framework/framework.h"
#include "manifests.h"
#include "sim/sim.h"
#include "testutil.h"

/* ---- on kbatch-sim's cluster ------------------------------------------------------ */

/* n1 and n2, 4 cpu each.  Gang a (2 x 1 cpu) fits; gang b (4 x 2 cpu,
 * minMember 4) does not once a holds 2 cpu; pod x waits in group a; pod y
 * (group c, queue qb) asks for a node of zone a, which none is; queue qb
 * weighs 3. */
/* clang-format off */
static const char *const cluster =
    NODE("n1") NODE("n2")
    QUEUE("qb", "weight: 3", "")
    GANG("a", "2", "2", "1", "")
    GANG("b", "4", "4", "2", ", queue: qb")
    POD("x", IN_GROUP("a"), "  schedulerName: kbatch\n" POD_REQ("1"), "phase: Pending")
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: c}\n"
    "spec: {minMember: 1, queue: qb}\n"
    POD("y", IN_GROUP("c"), "  schedulerName: kbatch\n  nodeSelector: {zone: a}\n" POD_REQ("1"),
        "phase: Pending");
/* clang-format on */

struct fix {
        struct kb_cluster c;
        struct kb_conf conf;
        struct kb_model *m;
        struct kb_result r;
        uint64_t built, reused, updated;
};

/* What a session did with the model first. */
enum use { BUILT, UPDATED, REUSED };

/* An object of the cluster changed in place, as kbatch-sim's own changes
 * say so (kb_cluster.gen). */
static void changed(struct fix *f, struct kb_meta *meta)
{
        meta->gen = ++f->c.gen;
}

static int setup(void **state)
{
        struct fix *f = kb_xcalloc(1, sizeof(*f));
        char err[512];
        kb_cluster_init(&f->c);
        f->c.now = 1.8e9;
        assert_int_equal(
            kb_cluster_load(&f->c, "model", cluster, strlen(cluster), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&f->c);
        assert_int_equal(kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), &f->conf,
                                       err, sizeof(err)),
                         0);
        f->m = kb_model_new();
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fix *f = *state;
        kb_model_free(f->m);
        kb_conf_release(&f->conf);
        kb_cluster_release(&f->c);
        free(f);
        return 0;
}

/* A session (checked three ways) and its decisions as text, applied to
 * the cluster; what it did with the model. */
static enum use session(struct fix *f, char **text)
{
        struct kb_snapshot snap;
        kb_cluster_snapshot(&f->c, &snap);
        uint64_t built = f->built, updated = f->updated;
        kb_test_session_model(f->m, &snap, &f->conf, &f->r);
        kb_model_counts(f->m, &f->built, &f->reused);
        f->updated = kb_model_updates(f->m);
        *text = kb_test_result_text(&f->r);
        kb_cluster_apply(&f->c, &f->r);
        kb_result_release(&f->r);
        return f->built > built ? BUILT : f->updated > updated ? UPDATED : REUSED;
}

/* Sessions until one leaves the cluster as it was (built and used again). */
static void settle(struct fix *f)
{
        for (int i = 0; i < 5; i++) {
                char *text;
                enum use u = session(f, &text);
                free(text);
                if (u == REUSED)
                        return;
        }
        fail_msg("the cluster never settled");
}

static struct kb_pod *pod(struct fix *f, const char *name)
{
        for (size_t i = 0; i < f->c.npods; i++)
                if (strcmp(f->c.pods[i]->meta.name, name) == 0)
                        return f->c.pods[i];
        fail_msg("no pod %s", name);
        return NULL;
}

static struct kb_podgroup *group(struct fix *f, const char *name)
{
        for (size_t i = 0; i < f->c.npodgroups; i++)
                if (strcmp(f->c.podgroups[i]->meta.name, name) == 0)
                        return f->c.podgroups[i];
        fail_msg("no podgroup %s", name);
        return NULL;
}

static void test_unchanged_used_again(void **state)
{
        struct fix *f = *state;
        settle(f);
        uint64_t built = f->built, reused = f->reused;
        char *text;
        assert_int_equal(session(f, &text), REUSED);
        assert_int_equal(f->built, built);
        /* Its first run and the helper's second both used the model. */
        assert_int_equal(f->reused, reused + 2);
        /* b waits: a and x hold 3 of the 8 cpu. */
        assert_null(strstr(text, "bind b-"));
        free(text);
}

static void test_pod_bound_between(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* Something else binds b-0 to n2 (and it runs). */
        struct kb_pod *p = pod(f, "b-0");
        p->node_name = kb_xstrdup("n2");
        p->phase = KB_POD_RUNNING;
        changed(f, &p->meta);
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        free(text);
}

static void test_pod_deleted(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* x goes: a's two pods stay bound, 1 cpu more is free. */
        struct kb_pod *x = pod(f, "x");
        size_t w = 0;
        for (size_t i = 0; i < f->c.npods; i++)
                if (f->c.pods[i] != x)
                        f->c.pods[w++] = f->c.pods[i];
        f->c.npods = w;
        kb_pod_free(x);
        f->c.gen++; /* the array changed, no object did */
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        assert_null(strstr(text, "bind x="));
        free(text);
}

static void test_min_member_changed(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* b now needs 2 of its pods: one on each node (a holds one cpu of
         * each). */
        group(f, "b")->min_member = 2;
        changed(f, &group(f, "b")->meta);
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        assert_non_null(strstr(text, "bind b-"));
        free(text);
}

static void test_queue_weight_changed(void **state)
{
        struct fix *f = *state;
        settle(f);
        for (size_t i = 0; i < f->c.nqueues; i++)
                if (strcmp(f->c.queues[i]->meta.name, "qb") == 0)
                        f->c.queues[i]->weight = 1;
        kb_cluster_changed(&f->c); /* by hand, not saying which */
        char *text;
        assert_int_equal(session(f, &text), BUILT);
        free(text);
}

static void test_node_readded(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* n2 goes and comes back under the same name with 8 cpu: b's four
         * pods (8 cpu) now fit. */
        char err[256];
        struct kb_cluster more;
        const char *text8 = NODE_RES("n2", "8", "16Gi", "110");
        kb_cluster_init(&more);
        assert_int_equal(kb_cluster_load(&more, "n2", text8, strlen(text8), err, sizeof(err)), 0);
        for (size_t i = 0; i < f->c.nnodes; i++)
                if (strcmp(f->c.nodes[i]->meta.name, "n2") == 0) {
                        kb_node_free(f->c.nodes[i]);
                        f->c.nodes[i] = more.nodes[0];
                        more.nnodes = 0;
                        /* Maybe at the address of the one freed. */
                        changed(f, &f->c.nodes[i]->meta);
                }
        assert_int_equal(more.nnodes, 0);
        kb_cluster_release(&more);
        char *text;
        /* The same name at the same position: read again, not built
         * (update_node.c). */
        assert_int_equal(session(f, &text), UPDATED);
        assert_non_null(strstr(text, "bind b-0=n2"));
        free(text);
}

/* ---- nodes changed in place (update_node.c) ---------------------------------------- */

static struct kb_node *node(struct fix *f, const char *name)
{
        for (size_t i = 0; i < f->c.nnodes; i++)
                if (strcmp(f->c.nodes[i]->meta.name, name) == 0)
                        return f->c.nodes[i];
        fail_msg("no node %s", name);
        return NULL;
}

/* The node named in text replaced by a new object read from it, where the
 * old one stood and maybe at its address (the cache on a watch event). */
static void replace_node(struct fix *f, const char *text)
{
        char err[256];
        struct kb_cluster more;
        kb_cluster_init(&more);
        assert_int_equal(kb_cluster_load(&more, "node", text, strlen(text), err, sizeof(err)), 0);
        assert_int_equal(more.nnodes, 1);
        for (size_t i = 0; i < f->c.nnodes; i++)
                if (strcmp(f->c.nodes[i]->meta.name, more.nodes[0]->meta.name) == 0) {
                        kb_node_free(f->c.nodes[i]);
                        f->c.nodes[i] = more.nodes[0];
                        more.nnodes = 0;
                        changed(f, &f->c.nodes[i]->meta);
                        break;
                }
        assert_int_equal(more.nnodes, 0);
        kb_cluster_release(&more);
}

static void test_node_heartbeat(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* A status heartbeat: n1 updated in place, n2 replaced by a copy
         * saying the same; nothing read differs. */
        changed(f, &node(f, "n1")->meta);
        replace_node(f, NODE("n2"));
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        assert_null(strstr(text, "bind "));
        free(text);
        settle(f);
}

static void test_node_shrinks(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* The node a-0 runs on loses all its cpu: its idle goes below
         * zero, as a build counts it.  b, now content with one pod,
         * places it on the other node only. */
        const char *on = pod(f, "a-0")->node_name;
        assert_non_null(on);
        const char *other = strcmp(on, "n1") == 0 ? "n2" : "n1";
        node(f, on)->allocatable.q[KB_RES_CPU] = 0;
        changed(f, &node(f, on)->meta);
        group(f, "b")->min_member = 1;
        changed(f, &group(f, "b")->meta);
        char *text, *want = kb_xasprintf("=%s", other), *off = kb_xasprintf("=%s", on);
        assert_int_equal(session(f, &text), UPDATED);
        assert_non_null(strstr(text, "bind b-"));
        assert_non_null(strstr(text, want));
        assert_null(strstr(text, off));
        free(text);
        free(want);
        free(off);
}

static void test_node_unschedulable(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* n1 cordoned (in place): b's pods go to n2 alone. */
        node(f, "n1")->unschedulable = true;
        changed(f, &node(f, "n1")->meta);
        group(f, "b")->min_member = 1;
        changed(f, &group(f, "b")->meta);
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        assert_non_null(strstr(text, "=n2"));
        assert_null(strstr(text, "=n1"));
        free(text);
}

static void test_node_tainted(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* n2 replaced by a copy with a NoSchedule taint: b's pods go to
         * n1 alone. */
        replace_node(
            f, NODE_X("n2", ALLOC4, "", "taints: [{key: k, value: v, effect: NoSchedule}]", ""));
        group(f, "b")->min_member = 1;
        changed(f, &group(f, "b")->meta);
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        assert_non_null(strstr(text, "=n1"));
        assert_null(strstr(text, "=n2"));
        free(text);
}

static void test_node_labels(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* y asks for zone a, which no node had: n2 gains the label (a
         * replaced object), and y goes there; read again, not built. */
        replace_node(f, NODE_X("n2", ALLOC4, ", labels: {zone: a}", "", ""));
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        assert_non_null(strstr(text, "bind y=n2"));
        free(text);
}

static void test_node_and_pod(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* In one session: a-0 ends, and its node shrinks to 1 cpu (its
         * heartbeat and a kubelet's reserve); the other keeps its 4. */
        struct kb_pod *p = pod(f, "a-0");
        const char *on = p->node_name;
        assert_non_null(on);
        node(f, on)->allocatable.q[KB_RES_CPU] /= 4;
        changed(f, &node(f, on)->meta);
        p->phase = KB_POD_SUCCEEDED;
        changed(f, &p->meta);
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        free(text);
        settle(f);
}

static void test_node_renamed(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* n2's place taken by n3: another node, so the model is built. */
        replace_node(f, NODE("n2"));
        struct kb_node *n = node(f, "n2");
        free(n->meta.name);
        n->meta.name = kb_xstrdup("n3");
        char *text;
        assert_int_equal(session(f, &text), BUILT);
        free(text);
}

static void test_pod_moves_group(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* x leaves group a for group b: b has five pods, x bound among a's
         * all the same (a pod on a node stays where it is). */
        struct kb_pod *x = pod(f, "x");
        free(x->group_name);
        x->group_name = kb_xstrdup("b");
        changed(f, &x->meta);
        char *text;
        /* Another job: only a build says so. */
        assert_int_equal(session(f, &text), BUILT);
        free(text);
}

/* ---- pods and PodGroups added and removed ------------------------------------------ */

/* Objects created between sessions: appended to the cluster's arrays, as
 * kbatch-sim's arrivals are, each of a new generation. */
static void add(struct fix *f, const char *text)
{
        char err[512];
        struct kb_cluster more;
        kb_cluster_init(&more);
        assert_int_equal(kb_cluster_load(&more, "more", text, strlen(text), err, sizeof(err)), 0);
        for (size_t i = 0; i < more.npodgroups; i++) {
                changed(f, &more.podgroups[i]->meta);
                KB_PUSH(f->c.podgroups, f->c.npodgroups, f->c.cappodgroups, more.podgroups[i]);
        }
        for (size_t i = 0; i < more.npods; i++) {
                changed(f, &more.pods[i]->meta);
                KB_PUSH(f->c.pods, f->c.npods, f->c.cappods, more.pods[i]);
        }
        more.npods = more.npodgroups = 0;
        kb_cluster_release(&more);
}

/* A pod of no group that asks for nothing (backfill places it whatever
 * the queues' shares); kbatch-sim makes a PodGroup for it, as kbatch
 * does for a workload's pods (podgroup-pod-solo). */
#define SOLO                                                                                       \
        POD("solo", "", "  schedulerName: kbatch\n  containers: [{name: c}]\n", "phase: Pending")

/* Pod name deleted: the others keep their order (kbatch-sim compacts). */
static void drop_pod(struct fix *f, const char *name)
{
        struct kb_pod *p = pod(f, name);
        size_t w = 0;
        for (size_t i = 0; i < f->c.npods; i++)
                if (f->c.pods[i] != p)
                        f->c.pods[w++] = f->c.pods[i];
        f->c.npods = w;
        kb_pod_free(p);
        f->c.gen++; /* the array changed, no object did */
}

static void drop_group(struct fix *f, const char *name)
{
        struct kb_podgroup *pg = group(f, name);
        size_t w = 0;
        for (size_t i = 0; i < f->c.npodgroups; i++)
                if (f->c.podgroups[i] != pg)
                        f->c.podgroups[w++] = f->c.podgroups[i];
        f->c.npodgroups = w;
        kb_podgroup_free(pg);
        f->c.gen++;
}

static void drop_solo(struct fix *f)
{
        drop_pod(f, "solo");
        drop_group(f, "podgroup-pod-solo");
}

/* Each session below is also run on a fresh build, and (KB_MODEL_CHECK)
 * the kept model compared with one field by field: an update that left
 * the model other than a build would fail there. */

static void test_gang_added(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* Gang d (2 x 1 cpu) arrives in queue qb, whose b waits for 8
         * cpu: 3 of the 8 are held, c fits. */
        add(f, GANG("d", "2", "2", "1", ", queue: qb"));
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        assert_non_null(strstr(text, "bind d-0="));
        assert_non_null(strstr(text, "bind d-1="));
        free(text);
        /* Its pods bound, in place: updated again, then settled. */
        assert_int_equal(session(f, &text), UPDATED);
        free(text);
        settle(f);
}

static void test_pods_added_to_gang(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* Two more pods of group a, after every pod the model knows. */
        add(f,
            POD("a-extra-0", IN_GROUP("a"), "  schedulerName: kbatch\n" POD_REQ("1"),
                "phase: Pending") POD("a-extra-1", IN_GROUP("a"),
                                      "  schedulerName: kbatch\n" POD_REQ("1"), "phase: Pending"));
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        /* They wait with x: the default queue's share is held. */
        assert_non_null(strstr(text, "podgroup default/a Running 2/0/0/3 "));
        free(text);
        settle(f);
}

static void test_unusable_pod_added_to_gang(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* A pod of group b whose placement fields cannot be read (as
         * decode leaves one: pod->invalid): b, read again, says so. */
        size_t n = f->c.npods;
        add(f, POD("b-bad", IN_GROUP("b"), "  schedulerName: kbatch\n" POD_REQ("2"),
                   "phase: Pending"));
        assert_int_equal(f->c.npods, n + 1);
        f->c.pods[n]->invalid = kb_xstrdup("pod default/b-bad: spec.affinity: unreadable");
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        assert_non_null(strstr(text, "spec.affinity: unreadable"));
        free(text);
        settle(f);
}

static void test_gang_removed(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* Gang a goes whole, its PodGroup and its three pods (x among
         * them): b's four pods of 2 cpu now fit. */
        drop_pod(f, "a-0");
        drop_pod(f, "a-1");
        drop_pod(f, "x");
        drop_group(f, "a");
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        assert_non_null(strstr(text, "bind b-0="));
        assert_null(strstr(text, "podgroup default/a"));
        free(text);
        settle(f);
}

static void test_pods_reordered(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* A producer that reorders its array (neither the cache nor
         * kbatch-sim does): a build orders the tasks as the array now
         * says, so the update appends the pods from the first one out of
         * place on, each read again, after dropping their old tasks. */
        size_t n = f->c.npods;
        assert_true(n >= 4);
        struct kb_pod *first = f->c.pods[1];
        f->c.pods[1] = f->c.pods[n - 1];
        f->c.pods[n - 1] = first;
        f->c.gen++;
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        free(text);
        settle(f);
}

static void test_group_removed_under_pods(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* b's PodGroup goes, its pods stay: they wait for a group that
         * does not exist, which only a build words (naming the first). */
        drop_group(f, "b");
        char *text;
        assert_int_equal(session(f, &text), BUILT);
        assert_non_null(strstr(text, "podgroup default/b not found"));
        free(text);
}

static void test_lone_pod_added_and_removed(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* A pod of no group, and the PodGroup made for it: a job, made
         * by the update. */
        add(f, SOLO);
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        assert_non_null(strstr(text, "bind solo="));
        free(text);
        settle(f);
        /* And gone again, with its PodGroup: its job with them. */
        drop_solo(f);
        assert_int_equal(session(f, &text), UPDATED);
        assert_null(strstr(text, "solo"));
        free(text);
        settle(f);
}

static void test_added_and_removed_together(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* x is deleted, gang d and solo arrive, between two sessions. */
        drop_pod(f, "x");
        add(f, GANG("d", "2", "2", "1", ", queue: qb") SOLO);
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        assert_non_null(strstr(text, "bind d-0="));
        assert_non_null(strstr(text, "bind solo="));
        free(text);
        settle(f);
}

static void test_removed_then_readded(void **state)
{
        struct fix *f = *state;
        settle(f);
        /* b-0 deleted, then made again: a new object of the same name,
         * at the end of the array, pending. */
        drop_pod(f, "b-0");
        char *text;
        assert_int_equal(session(f, &text), UPDATED);
        free(text);
        add(f,
            POD("b-0", IN_GROUP("b"), "  schedulerName: kbatch\n" POD_REQ("2"), "phase: Pending"));
        assert_int_equal(session(f, &text), UPDATED);
        free(text);
        /* Both between two sessions, and solo's too, with its PodGroup
         * (its job goes and comes back under the same name). */
        add(f, SOLO);
        settle(f);
        drop_pod(f, "b-1");
        drop_solo(f);
        add(f, POD("b-1", IN_GROUP("b"), "  schedulerName: kbatch\n" POD_REQ("2"), "phase: Pending")
                   SOLO);
        assert_int_equal(session(f, &text), UPDATED);
        free(text);
        settle(f);
}

static void test_no_generation(void **state)
{
        struct fix *f = *state;
        struct kb_snapshot snap;
        kb_cluster_snapshot(&f->c, &snap);
        snap.gen = 0; /* a producer that tracks nothing */
        for (int i = 0; i < 2; i++) {
                struct kb_result r;
                assert_int_equal(kb_session_run_model(f->m, &snap, &f->conf, &r), 0);
                kb_result_release(&r);
        }
        uint64_t built, reused;
        kb_model_counts(f->m, &built, &reused);
        assert_int_equal(built, 2);
        assert_int_equal(reused, 0);
}

/* ---- on the daemon's cache -------------------------------------------------------- */

static void put(struct kb_cache *c, enum kb_kind kind, const char *text)
{
        struct kb_value *v = NULL;
        assert_int_equal(kb_json_parse(text, strlen(text), &v, NULL, 0), 0);
        assert_int_equal(kb_cache_upsert(c, kind, v), 0);
        kb_value_free(v);
}

#define JNODE(name, cpu)                                                                           \
        "{\"metadata\":{\"name\":\"" name "\"},\"status\":{\"allocatable\":{\"cpu\":\"" cpu        \
        "\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}"
#define JPOD(name, uid, node)                                                                      \
        "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"uid\":\"" uid "\"},"     \
        "\"spec\":{\"schedulerName\":\"kbatch\"" node ",\"containers\":[{\"name\":\"c\","          \
        "\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]},\"status\":{\"phase\":\"Pending\"}}"
/* A kubelet's status update of a node: only the heartbeat time differs. */
#define JNODE_BEAT(name, cpu, time)                                                                \
        "{\"metadata\":{\"name\":\"" name "\"},\"status\":{\"allocatable\":{\"cpu\":\"" cpu        \
        "\",\"memory\":\"8Gi\",\"pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\","             \
        "\"status\":\"True\",\"lastHeartbeatTime\":\"2026-11-27T08:00:" time "Z\"}]}}"
#define JQUEUE "{\"metadata\":{\"name\":\"default\"},\"spec\":{\"weight\":1}}"
/* PodGroup g (minMember 2, phase given) and its pod: a replacement of
 * each is a new object, the old one freed. */
#define JPG(phase)                                                                                 \
        "{\"metadata\":{\"name\":\"g\",\"namespace\":\"default\",\"uid\":\"ug\"},"                 \
        "\"spec\":{\"minMember\":2},\"status\":{\"phase\":\"" phase "\"}}"
#define JGPOD(name, node)                                                                          \
        "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"uid\":\"u" name "\","    \
        "\"annotations\":{\"scheduling.k8s.io/group-name\":\"g\"}},"                               \
        "\"spec\":{\"schedulerName\":\"kbatch\"" node ",\"containers\":[{\"name\":\"c\","          \
        "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Pending\"}}"

static const char *const names[] = {"kbatch"};

/* A session on the cache's snapshot through m (checked three ways): its
 * decisions, and what it did with the model. */
static enum use cache_session(struct kb_cache *c, struct kb_model *m, const struct kb_conf *conf,
                              uint64_t *gen, char **text)
{
        struct kb_cache_snap *s = kb_cache_snapshot(c, names, 1, "default");
        uint64_t built, reused, built2, updated = kb_model_updates(m);
        kb_model_counts(m, &built, &reused);
        struct kb_result r;
        kb_test_session_model(m, &s->snap, conf, &r);
        kb_model_counts(m, &built2, &reused);
        *gen = s->snap.gen;
        *text = kb_test_result_text(&r);
        kb_result_release(&r);
        kb_cache_snapshot_free(s);
        return built2 > built ? BUILT : kb_model_updates(m) > updated ? UPDATED : REUSED;
}

/* The daemon's cache for the tests below: the default conf, a kept
 * model, a queue, nodes n1 and n2 (4 cpu) and pod p1 bound to n1. */
static struct kb_cache *cache_start(struct kb_conf *conf, struct kb_model **m)
{
        char err[256];
        assert_int_equal(kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), conf,
                                       err, sizeof(err)),
                         0);
        *m = kb_model_new();
        struct kb_cache *c = kb_cache_new();
        put(c, KB_KIND_QUEUE, JQUEUE);
        put(c, KB_KIND_NODE, JNODE("n1", "4"));
        put(c, KB_KIND_NODE, JNODE("n2", "4"));
        put(c, KB_KIND_POD, JPOD("p1", "u1", ",\"nodeName\":\"n1\""));
        return c;
}

static void test_cache_generations(void **state)
{
        (void)state;
        struct kb_conf conf;
        struct kb_model *m;
        struct kb_cache *c = cache_start(&conf, &m);
        put(c, KB_KIND_POD, JPOD("p2", "u2", ""));
        uint64_t g1, g2;
        char *text;

        assert_int_equal(cache_session(c, m, &conf, &g1, &text), BUILT);
        assert_non_null(strstr(text, "bind p2="));
        free(text);
        /* Nothing changed: the same generation, the model used again. */
        assert_int_equal(cache_session(c, m, &conf, &g2, &text), REUSED);
        assert_true(g1 != 0 && g2 == g1);
        free(text);

        /* The bind is assumed (a mark): a new generation, p2 on its node. */
        kb_cache_assume(c, kb_cache_get(c, KB_KIND_POD, "default", "p2"), "n1");
        assert_int_equal(cache_session(c, m, &conf, &g2, &text), UPDATED);
        assert_true(g2 != g1);
        assert_null(strstr(text, "bind p2="));
        free(text);

        /* A missed watch event (p1 deleted), then a relist that replaces
         * every object: all new, p1 gone. */
        kb_cache_list_begin(c, KB_KIND_POD);
        put(c, KB_KIND_POD, JPOD("p2", "u2", ",\"nodeName\":\"n1\""));
        kb_cache_list_end(c, KB_KIND_POD);
        g1 = g2;
        assert_int_equal(cache_session(c, m, &conf, &g2, &text), UPDATED);
        assert_true(g2 != g1);
        free(text);
        /* A relist that finds the nodes as they were changes nothing:
         * the cache keeps each node (nothing read of it changed) and its
         * generation, and the model is used as it is. */
        kb_cache_list_begin(c, KB_KIND_NODE);
        put(c, KB_KIND_NODE, JNODE("n1", "4"));
        put(c, KB_KIND_NODE, JNODE("n2", "4"));
        kb_cache_list_end(c, KB_KIND_NODE);
        g1 = g2;
        assert_int_equal(cache_session(c, m, &conf, &g2, &text), REUSED);
        assert_true(g2 == g1);
        free(text);

        /* n2 deleted and re-added under the same name with room for a pod
         * that waits: the new node is the one used. */
        put(c, KB_KIND_POD, JPOD("p3", "u3", ""));
        put(c, KB_KIND_POD, JPOD("p4", "u4", ""));
        struct kb_value *v = NULL;
        assert_int_equal(kb_json_parse(JNODE("n2", "4"), strlen(JNODE("n2", "4")), &v, NULL, 0), 0);
        kb_cache_remove(c, KB_KIND_NODE, v);
        kb_value_free(v);
        assert_int_equal(cache_session(c, m, &conf, &g2, &text), BUILT);
        assert_null(strstr(text, "=n2"));
        free(text);
        put(c, KB_KIND_NODE, JNODE("n2", "8"));
        assert_int_equal(cache_session(c, m, &conf, &g2, &text), BUILT);
        assert_non_null(strstr(text, "bind p3=n2"));
        free(text);

        /* A relist that replaces every pod, none gone: each is a new
         * object of a later generation where the old one stood, read
         * again (p3 bound on n2 now, by the watch). */
        kb_cache_list_begin(c, KB_KIND_POD);
        put(c, KB_KIND_POD, JPOD("p2", "u2", ",\"nodeName\":\"n1\""));
        put(c, KB_KIND_POD, JPOD("p3", "u3", ",\"nodeName\":\"n2\""));
        put(c, KB_KIND_POD, JPOD("p4", "u4", ""));
        kb_cache_list_end(c, KB_KIND_POD);
        assert_int_equal(cache_session(c, m, &conf, &g2, &text), UPDATED);
        free(text);

        /* A gang: its PodGroup and pods replaced by the watch (the old
         * objects freed) update the model, which reads none of the old
         * ones' strings. */
        put(c, KB_KIND_PODGROUP, JPG("Inqueue"));
        put(c, KB_KIND_POD, JGPOD("g-0", ""));
        put(c, KB_KIND_POD, JGPOD("g-1", ""));
        /* Added at the end of the cache's order: an update. */
        assert_int_equal(cache_session(c, m, &conf, &g2, &text), UPDATED);
        assert_non_null(strstr(text, "bind g-0="));
        free(text);
        put(c, KB_KIND_PODGROUP, JPG("Running"));
        put(c, KB_KIND_POD, JGPOD("g-0", ",\"nodeName\":\"n1\""));
        put(c, KB_KIND_POD, JGPOD("g-1", ",\"nodeName\":\"n1\""));
        assert_int_equal(cache_session(c, m, &conf, &g2, &text), UPDATED);
        assert_non_null(strstr(text, "podgroup default/g Running"));
        free(text);

        /* Kubelets' heartbeats: the watch sends n1, then n2, as copies
         * that differ in a condition's time alone.  Nothing kbatch reads
         * changed, so the cache keeps its objects and its generation: the
         * model is used as it is.  p4 (2 cpu) still goes where it went:
         * n2 (8 cpu, p3 holds 2). */
        uint64_t g3 = g2;
        put(c, KB_KIND_NODE, JNODE_BEAT("n1", "4", "00"));
        assert_int_equal(cache_session(c, m, &conf, &g2, &text), REUSED);
        assert_true(g2 == g3);
        assert_non_null(strstr(text, "bind p4=n2"));
        free(text);
        put(c, KB_KIND_NODE, JNODE_BEAT("n1", "4", "10"));
        put(c, KB_KIND_NODE, JNODE_BEAT("n2", "8", "10"));
        assert_int_equal(cache_session(c, m, &conf, &g2, &text), REUSED);
        assert_non_null(strstr(text, "bind p4=n2"));
        free(text);
        /* n2's allocatable falls to 1 cpu, below the 2 its pod p3 holds:
         * the watch replaces it (the old object freed), read again where
         * it stood, and p4 fits nowhere now. */
        put(c, KB_KIND_NODE, JNODE_BEAT("n2", "1", "20"));
        assert_int_equal(cache_session(c, m, &conf, &g2, &text), UPDATED);
        assert_null(strstr(text, "bind p4="));
        free(text);

        kb_cache_free(c);
        kb_model_free(m);
        kb_conf_release(&conf);
}

static void del(struct kb_cache *c, enum kb_kind kind, const char *text)
{
        struct kb_value *v = NULL;
        assert_int_equal(kb_json_parse(text, strlen(text), &v, NULL, 0), 0);
        kb_cache_remove(c, kind, v);
        kb_value_free(v);
}

/* The daemon's cache: pods of no group (a job each, no PodGroup made for
 * them) and a gang created and deleted between sessions. */
static void test_cache_added_removed(void **state)
{
        (void)state;
        struct kb_conf conf;
        struct kb_model *m;
        struct kb_cache *c = cache_start(&conf, &m);
        uint64_t gen;
        char *text;
        assert_int_equal(cache_session(c, m, &conf, &gen, &text), BUILT);
        free(text);

        /* A pod created: its job made by the update. */
        put(c, KB_KIND_POD, JPOD("p2", "u2", ""));
        assert_int_equal(cache_session(c, m, &conf, &gen, &text), UPDATED);
        assert_non_null(strstr(text, "bind p2="));
        free(text);
        /* Deleted before it was bound, and p3 created. */
        del(c, KB_KIND_POD, JPOD("p2", "u2", ""));
        put(c, KB_KIND_POD, JPOD("p3", "u3", ""));
        assert_int_equal(cache_session(c, m, &conf, &gen, &text), UPDATED);
        assert_null(strstr(text, "bind p2="));
        assert_non_null(strstr(text, "bind p3="));
        free(text);
        /* p3 deleted and made again (another uid), between two sessions:
         * the new object comes last in the cache's order, a job of the
         * same name again. */
        del(c, KB_KIND_POD, JPOD("p3", "u3", ""));
        put(c, KB_KIND_POD, JPOD("p3", "u3b", ""));
        assert_int_equal(cache_session(c, m, &conf, &gen, &text), UPDATED);
        assert_non_null(strstr(text, "bind p3="));
        free(text);

        /* A gang arrives (its PodGroup after its pods, as the watches
         * may deliver them: the pods wait for a group that does not
         * exist, which only a build words right), then goes whole. */
        put(c, KB_KIND_POD, JGPOD("g-0", ""));
        put(c, KB_KIND_POD, JGPOD("g-1", ""));
        assert_int_equal(cache_session(c, m, &conf, &gen, &text), BUILT);
        assert_non_null(strstr(text, "podgroup default/g not found"));
        free(text);
        put(c, KB_KIND_PODGROUP, JPG("Inqueue"));
        assert_int_equal(cache_session(c, m, &conf, &gen, &text), BUILT);
        assert_non_null(strstr(text, "bind g-0="));
        free(text);
        del(c, KB_KIND_POD, JGPOD("g-0", ""));
        del(c, KB_KIND_POD, JGPOD("g-1", ""));
        del(c, KB_KIND_PODGROUP, JPG("Inqueue"));
        assert_int_equal(cache_session(c, m, &conf, &gen, &text), UPDATED);
        assert_null(strstr(text, "default/g"));
        free(text);

        kb_cache_free(c);
        kb_model_free(m);
        kb_conf_release(&conf);
}

/* kb_job_need by counts, for a job whose tasks share one request, is the
 * sum its loop takes task by task.  Ten tasks of (2 cpu, 3 memory), in
 * every mix of Pending, Allocated, Pipelined and Running for minMember 0
 * to 12: own = 2 x (Allocated + Pipelined), need = the first lack of
 * those and the Pending ones, gang = the first minMember tasks; the same
 * job with request_alike cleared takes the loop. */
static void test_job_need_alike(void **state)
{
        (void)state;
        struct kb_res req = {0};
        req.q[KB_RES_CPU] = 2000;
        req.q[KB_RES_MEMORY] = 3;
        struct kb_task tasks[10];
        struct kb_task *ptrs[10];
        const enum kb_task_status mix[] = {KB_TASK_PENDING, KB_TASK_ALLOCATED, KB_TASK_PIPELINED,
                                           KB_TASK_RUNNING};
        for (unsigned seed = 0; seed < 64; seed++)
                for (int32_t min = 0; min <= 12; min++) {
                        struct kb_job j = {0};
                        memset(tasks, 0, sizeof(tasks));
                        for (int i = 0; i < 10; i++) {
                                tasks[i].resreq = &req;
                                tasks[i].status = mix[(seed >> (i % 6)) % 4];
                                tasks[i].job = &j;
                                ptrs[i] = &tasks[i];
                                j.count[tasks[i].status]++;
                        }
                        j.tasks = ptrs;
                        j.ntasks = 10;
                        j.min_available = min;
                        struct kb_res n1, g1, o1, n2, g2, o2;
                        j.request_alike = &req;
                        kb_job_need(&j, &n1, &g1, &o1);
                        j.request_alike = NULL;
                        j.requests_differ = true;
                        kb_job_need(&j, &n2, &g2, &o2);
                        assert_memory_equal(&n1, &n2, sizeof(n1));
                        assert_memory_equal(&g1, &g2, sizeof(g1));
                        assert_memory_equal(&o1, &o2, sizeof(o1));
                        uint32_t mine = j.count[KB_TASK_ALLOCATED] + j.count[KB_TASK_PIPELINED];
                        assert_int_equal(o1.q[KB_RES_CPU], 2000 * (int64_t)mine);
                        assert_int_equal(g1.q[KB_RES_MEMORY], 3 * (int64_t)(min < 10 ? min : 10));
                }
}

/* ---- a session that repeats the last one (repeat.c) ------------------------------- */

/* A session on the kept model as it stands (not applied), its text, and
 * whether it repeated the last result; the text is checked against a
 * session on a fresh build. */
static bool run_kept(struct fix *f, const struct kb_conf *conf, char **text)
{
        struct kb_snapshot snap;
        struct kb_result fresh;
        kb_cluster_snapshot(&f->c, &snap);
        assert_int_equal(kb_session_run(&snap, conf, &fresh), 0);
        uint64_t before = kb_model_repeats(f->m);
        assert_int_equal(kb_session_run_model(f->m, &snap, conf, &f->r), 0);
        bool repeated = f->r.repeated;
        assert_int_equal(kb_model_repeats(f->m), before + repeated);
        *text = kb_test_result_text(&f->r);
        char *want = kb_test_result_text(&fresh);
        assert_string_equal(*text, want);
        free(want);
        kb_result_release(&fresh);
        kb_result_release(&f->r);
        return repeated;
}

/* Nothing changed: the settled cluster's session repeats the last result
 * (b and y wait, nothing binds), under the same conf only. */
static void test_unchanged_repeated(void **state)
{
        struct fix *f = *state;
        settle(f);
        char *text;
        assert_true(run_kept(f, &f->conf, &text));
        assert_null(strstr(text, "bind "));
        free(text);
        /* The same text parsed again is another conf: run, and kept. */
        struct kb_conf other;
        char err[256];
        assert_int_equal(kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), &other,
                                       err, sizeof(err)),
                         0);
        assert_false(run_kept(f, &other, &text));
        free(text);
        assert_true(run_kept(f, &other, &text));
        free(text);
        assert_false(run_kept(f, &f->conf, &text));
        free(text);
        kb_conf_release(&other);
        /* One object changed: run again. */
        changed(f, &group(f, "b")->meta);
        assert_false(run_kept(f, &f->conf, &text));
        free(text);
        assert_true(run_kept(f, &f->conf, &text));
        free(text);
}

/* A session that binds is not repeated: on the same snapshot (its binds
 * not applied) the next session runs and binds the same pods again. */
static void test_binds_not_repeated(void **state)
{
        struct fix *f = *state;
        char *first, *second;
        assert_false(run_kept(f, &f->conf, &first));
        assert_non_null(strstr(first, "bind a-0"));
        assert_false(run_kept(f, &f->conf, &second));
        assert_string_equal(second, first);
        free(first);
        free(second);
}

/* A fixture on text of its own, its clock at 08:00 (1.8e9). */
static void fix_load(struct fix *f, const char *text)
{
        char err[512];
        memset(f, 0, sizeof(*f));
        kb_cluster_init(&f->c);
        f->c.now = 1.8e9;
        assert_int_equal(kb_cluster_load(&f->c, "clock", text, strlen(text), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&f->c);
        assert_int_equal(kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), &f->conf,
                                       err, sizeof(err)),
                         0);
        f->m = kb_model_new();
}

static void fix_release(struct fix *f)
{
        kb_model_free(f->m);
        kb_conf_release(&f->conf);
        kb_cluster_release(&f->c);
}

/* A clock that matters: the Inqueue timeout.  n1 has 4 cpu; big (2 pods
 * of 3 cpu, minResources cpu 4) was admitted at 07:55 and reserves the
 * node; at 08:00, within its 10m timeout, small (2 cpu) is refused by
 * overcommit (4 + 2 > 4 x 1.2) and nothing binds (why_test's inqueue
 * scenarios work the same figures).  Nothing changes but the clock: the
 * session says its decisions hold until 08:05 (the timeout's turning
 * point, a millisecond early), so it is repeated at 08:00 and 08:04:59;
 * at 08:05 big's timeout sends it back to Pending, its reservation freed,
 * and small-0 binds to n1: that session runs.  A repeat there would have
 * bound nothing.  Each result is also checked against a fresh build. */
static void test_clock_turning_point(void **state)
{
        (void)state;
        struct fix f;
        /* clang-format off */
        static const char text[] = NODE("n1")
            PG_INQ("big", "2", "2024-01-01", ", minResources: {cpu: '4'}", "", "Inqueue", "True",
                   "Admitted", "07:55:00")
            POD("big-0", IN_GROUP("big"), "  schedulerName: kbatch\n" POD_REQ("3"), "")
            POD("big-1", IN_GROUP("big"), "  schedulerName: kbatch\n" POD_REQ("3"), "")
            PG("small", "1", "2024-01-02", ", minResources: {cpu: '2'}")
            POD("small-0", IN_GROUP("small"), "  schedulerName: kbatch\n" POD_REQ("2"), "");
        /* clang-format on */
        fix_load(&f, text);
        char *at8, *again, *at859, *at805;
        assert_false(run_kept(&f, &f.conf, &at8));
        assert_null(strstr(at8, "bind "));
        assert_true(run_kept(&f, &f.conf, &again));
        assert_string_equal(again, at8);
        f.c.now = 1.8e9 + 299;
        assert_true(run_kept(&f, &f.conf, &at859));
        assert_string_equal(at859, at8);
        /* A clock gone back (07:59) runs: turning points look forward. */
        f.c.now = 1.8e9 - 60;
        free(again);
        assert_false(run_kept(&f, &f.conf, &again));
        assert_string_equal(again, at8);
        f.c.now = 1.8e9 + 300;
        assert_false(run_kept(&f, &f.conf, &at805));
        assert_non_null(strstr(at805, "bind small-0=n1"));
        free(at8);
        free(again);
        free(at859);
        free(at805);
        fix_release(&f);
}

/* A clock read for a message is not repeated: big, sent back at 07:59:30,
 * waits out its 1m backoff, and its condition says how long is left
 * ("admitted again in 30s"), which the clock changes every second. */
static void test_clock_read_not_repeated(void **state)
{
        (void)state;
        struct fix f;
        /* clang-format off */
        static const char text[] = NODE("n1")
            PG_INQ("big", "2", "2024-01-01", ", minResources: {cpu: '4'}", "", "Pending", "False",
                   "InqueueTimeout", "07:59:30")
            POD("big-0", IN_GROUP("big"), "  schedulerName: kbatch\n" POD_REQ("3"), "")
            POD("big-1", IN_GROUP("big"), "  schedulerName: kbatch\n" POD_REQ("3"), "");
        /* clang-format on */
        fix_load(&f, text);
        char *a, *b;
        assert_false(run_kept(&f, &f.conf, &a));
        assert_non_null(strstr(a, "admitted again in 30s"));
        f.c.now = 1.8e9 + 10;
        assert_false(run_kept(&f, &f.conf, &b));
        assert_non_null(strstr(b, "admitted again in 20s"));
        free(a);
        free(b);
        fix_release(&f);
}

/* The reservation plugin's turning points.  n1 and n2 (4 cpu) each run a
 * 4-cpu pod of another scheduler with a declared runtime: r1 from 07:50
 * for 30m (ends 08:20), r2 from 07:30 for 1h (ends 08:30).  Gang w (one
 * 4-cpu pod) waits; the plan looks 15m ahead (window), on a 1s grid.
 *   08:00  the window reaches 08:15: no end within it, so "no expected
 *          start within the reservation window"; r1's end enters the
 *          window at 08:05, r2's at 08:15: the plan holds until 08:05.
 *   08:04  repeated.
 *   08:05  runs: w is reserved at 08:20 on n1, when r1 ends; holds until
 *          08:15 (r2's end enters the window).
 *   08:10  repeated.  08:15 runs (the same words).  08:19 repeated.
 *   08:20  runs: r1 is past its declared end and still runs, so it is
 *          expected to end with the clock: w's start is now, and the
 *          plan holds at this clock alone; 08:21 runs again.
 * Every result is checked against a fresh build (run_kept); a repeat at
 * 08:05 or 08:21 would have said the earlier words. */
static void test_reservation_turning_points(void **state)
{
        (void)state;
        struct fix f;
#define RUNNING(name, node, start, secs)                                                           \
        POD(name, "",                                                                              \
            "  schedulerName: default-scheduler\n  nodeName: " node                                \
            "\n  activeDeadlineSeconds: " secs "\n" POD_REQ("4"),                                  \
            "phase: Running, startTime: '2027-01-15T" start "Z'")
        /* clang-format off */
        static const char text[] = NODE("n1") NODE("n2")
            RUNNING("r1", "n1", "07:50:00", "1800") RUNNING("r2", "n2", "07:30:00", "3600")
            PG("w", "1", "2024-01-01", "")
            POD("w-0", IN_GROUP("w"), "  schedulerName: kbatch\n  activeDeadlineSeconds: 600\n"
                POD_REQ("4"), "");
        /* clang-format on */
#undef RUNNING
        static const char conf[] =
            "actions: \"enqueue, allocate, backfill\"\n"
            "tiers:\n- plugins: [{name: priority}, {name: gang}, {name: conformance}]\n"
            "- plugins:\n  - {name: overcommit}\n  - {name: drf}\n  - {name: predicates}\n"
            "  - {name: proportion}\n  - {name: nodeorder}\n"
            "  - name: reservation\n    arguments: {depth: 1, window: 15m, resolution: 1s}\n";
        char err[512];
        fix_load(&f, text);
        kb_conf_release(&f.conf);
        assert_int_equal(kb_conf_parse(conf, strlen(conf), &f.conf, err, sizeof(err)), 0);
        static const struct {
                int min, sec;
                bool repeated;
                const char *says;
        } steps[] = {
            {0, 0, false, "no expected start within the reservation window (15m)"},
            {4, 0, true, "no expected start within the reservation window (15m)"},
            {5, 0, false,
             "expected to start at 2027-01-15T08:20:00Z on 1 node(s), when "
             "default/r1 ends"},
            {10, 0, true, "expected to start at 2027-01-15T08:20:00Z"},
            {15, 0, false, "expected to start at 2027-01-15T08:20:00Z"},
            {19, 59, true, "expected to start at 2027-01-15T08:20:00Z"},
            {20, 0, false, "expected to start at 2027-01-15T08:20:00Z on 1 node(s)"},
            {21, 0, false, "expected to start at 2027-01-15T08:21:00Z on 1 node(s)"},
        };
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
                f.c.now = 1.8e9 + 60 * steps[i].min + steps[i].sec;
                char *text_i;
                bool repeated = run_kept(&f, &f.conf, &text_i);
                if (repeated != steps[i].repeated || !strstr(text_i, steps[i].says))
                        fail_msg("08:%02d:%02d: %s, want %s and \"%s\"; got:\n%s", steps[i].min,
                                 steps[i].sec, repeated ? "repeated" : "ran",
                                 steps[i].repeated ? "repeated" : "ran", steps[i].says, text_i);
                free(text_i);
        }
        fix_release(&f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_unchanged_used_again, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pod_bound_between, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pod_deleted, setup, teardown),
            cmocka_unit_test_setup_teardown(test_min_member_changed, setup, teardown),
            cmocka_unit_test_setup_teardown(test_queue_weight_changed, setup, teardown),
            cmocka_unit_test_setup_teardown(test_node_readded, setup, teardown),
            cmocka_unit_test_setup_teardown(test_node_heartbeat, setup, teardown),
            cmocka_unit_test_setup_teardown(test_node_shrinks, setup, teardown),
            cmocka_unit_test_setup_teardown(test_node_unschedulable, setup, teardown),
            cmocka_unit_test_setup_teardown(test_node_tainted, setup, teardown),
            cmocka_unit_test_setup_teardown(test_node_labels, setup, teardown),
            cmocka_unit_test_setup_teardown(test_node_and_pod, setup, teardown),
            cmocka_unit_test_setup_teardown(test_node_renamed, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pod_moves_group, setup, teardown),
            cmocka_unit_test_setup_teardown(test_no_generation, setup, teardown),
            cmocka_unit_test_setup_teardown(test_gang_added, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pods_added_to_gang, setup, teardown),
            cmocka_unit_test_setup_teardown(test_unusable_pod_added_to_gang, setup, teardown),
            cmocka_unit_test_setup_teardown(test_gang_removed, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pods_reordered, setup, teardown),
            cmocka_unit_test_setup_teardown(test_group_removed_under_pods, setup, teardown),
            cmocka_unit_test_setup_teardown(test_lone_pod_added_and_removed, setup, teardown),
            cmocka_unit_test_setup_teardown(test_added_and_removed_together, setup, teardown),
            cmocka_unit_test_setup_teardown(test_removed_then_readded, setup, teardown),
            cmocka_unit_test_setup_teardown(test_unchanged_repeated, setup, teardown),
            cmocka_unit_test_setup_teardown(test_binds_not_repeated, setup, teardown),
            cmocka_unit_test(test_clock_turning_point),
            cmocka_unit_test(test_clock_read_not_repeated),
            cmocka_unit_test(test_reservation_turning_points),
            cmocka_unit_test(test_job_need_alike),
            cmocka_unit_test(test_cache_generations),
            cmocka_unit_test(test_cache_added_removed),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
