/* pkg/cache: upsert/replace/remove, relist sweeps, binding marks in
 * snapshots, and objects kept alive by a snapshot across an update. */
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

static void test_binding_marks(void **state)
{
        static const char *const names[] = {"kbatch"};
        struct kb_cache *c = kb_cache_new();
        put(c, KB_KIND_POD, POD("p1", "u1", ""));
        const struct kb_pod *p = kb_cache_get(c, KB_KIND_POD, "default", "p1");
        kb_cache_assume(c, p, "n1");
        assert_true(kb_cache_binding(c, "default", "p1"));

        /* The snapshot shows the pod on its node; it keeps the original
         * alive across an update. */
        struct kb_cache_snap *s = kb_cache_snapshot(c, names, 1, NULL);
        assert_int_equal(s->snap.npods, 1);
        assert_string_equal(s->snap.pods[0]->node_name, "n1");
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

        /* A pod recreated under the same name drops the old mark. */
        kb_cache_assume(c, kb_cache_get(c, KB_KIND_POD, "default", "p2"), "n2");
        put(c, KB_KIND_POD, POD("p2", "u3", ""));
        assert_false(kb_cache_binding(c, "default", "p2"));

        char *dump = kb_cache_dump_json(c);
        assert_non_null(strstr(dump, "\"default/p2\""));
        free(dump);
        kb_cache_free(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_upsert_remove_relist),
            cmocka_unit_test(test_binding_marks),
        };
        return cmocka_run_group_tests_name("cache", tests, NULL, NULL);
}
