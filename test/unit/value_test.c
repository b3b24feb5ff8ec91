/* The document tree: JSON and YAML in, JSON out, building and reading. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "value/value.h"

static void test_json_roundtrip(void **state)
{
        (void)state;
        const char *in = "{\"a\":1,\"b\":[true,null,\"x\\\"y\"],\"c\":{\"d\":1.5e3}}";
        struct kb_value *v;
        assert_int_equal(kb_json_parse(in, strlen(in), &v, NULL, 0), 0);
        char *out = kb_json_emit(v, false);
        assert_string_equal(out, in);
        free(out);
        int64_t i;
        assert_int_equal(kb_value_int(kb_value_get(v, "a"), &i), 0);
        assert_int_equal(i, 1);
        assert_string_equal(kb_value_text(kb_value_dig(v, "c", "d")), "1.5e3");
        kb_value_free(v);
}

static void test_json_errors(void **state)
{
        (void)state;
        const char *bad[] = {"{", "{\"a\":}", "", "[1,2", "{\"a\":1}x", "nul"};
        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
                struct kb_value *v = NULL;
                char err[256] = "";
                assert_int_equal(kb_json_parse(bad[k], strlen(bad[k]), &v, err, sizeof(err)),
                                 KB_EBADINPUT);
                assert_true(err[0] != '\0');
                assert_null(v);
        }
}

static void test_json_depth_limit(void **state)
{
        (void)state;
        size_t n = 100000;
        char *deep = malloc(n + 1);
        memset(deep, '[', n);
        deep[n] = '\0';
        struct kb_value *v = NULL;
        char err[256];
        assert_int_equal(kb_json_parse(deep, n, &v, err, sizeof(err)), KB_EBADINPUT);
        assert_non_null(strstr(err, "nesting"));
        free(deep);
}

static void test_yaml_scalars(void **state)
{
        (void)state;
        struct kb_value *v =
            kb_test_yaml1("a: 3\nb: \"3\"\nc: true\nd: ~\ne: 1.5Gi\nf: 0.5\ng: 'x'\n"
                          "h:\nk8s: [1, two]\n");
        assert_int_equal(kb_value_get(v, "a")->type, KB_VNUMBER);
        assert_int_equal(kb_value_get(v, "b")->type, KB_VSTRING);
        assert_int_equal(kb_value_get(v, "c")->type, KB_VBOOL);
        assert_int_equal(kb_value_get(v, "d")->type, KB_VNULL);
        assert_string_equal(kb_value_str(kb_value_get(v, "e")), "1.5Gi");
        assert_int_equal(kb_value_get(v, "f")->type, KB_VNUMBER);
        assert_int_equal(kb_value_get(v, "h")->type, KB_VNULL);
        assert_int_equal(kb_value_get(v, "k8s")->arr.n, 2);
        assert_int_equal(kb_value_get(v, "e")->line, 5);
        kb_value_free(v);
}

static void test_yaml_multidoc(void **state)
{
        (void)state;
        const char *text = "---\na: 1\n---\n---\n# only a comment\n---\nb: 2\n...\n";
        struct kb_value **docs;
        size_t n;
        assert_int_equal(kb_yaml_parse(text, strlen(text), &docs, &n, NULL, 0), 0);
        assert_int_equal(n, 2);
        assert_non_null(kb_value_get(docs[0], "a"));
        assert_non_null(kb_value_get(docs[1], "b"));
        kb_value_free_docs(docs, n);
}

static void test_yaml_errors(void **state)
{
        (void)state;
        const char *bad[] = {"a: [1, 2\n", "a: b: c\n", "? [a]\n: 1\n", "a: *nope\n", "\tx: 1\n"};
        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
                struct kb_value **docs = NULL;
                size_t n = 0;
                char err[256] = "";
                assert_int_equal(kb_yaml_parse(bad[k], strlen(bad[k]), &docs, &n, err, sizeof(err)),
                                 KB_EBADINPUT);
                assert_non_null(strstr(err, "line "));
        }
}

static void test_yaml_aliases_bounded(void **state)
{
        (void)state;
        const char *ok = "base: &b {x: 1}\ncopy: *b\n";
        struct kb_value *v = kb_test_yaml1(ok);
        assert_true(kb_value_equal(kb_value_get(v, "base"), kb_value_get(v, "copy")));
        kb_value_free(v);

        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_adds(&b, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for (int i = 1; i < 12; i++)
                kb_buf_printf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i,
                              i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
        struct kb_value **docs;
        size_t n;
        char err[256];
        assert_int_equal(kb_yaml_parse(b.data, b.len, &docs, &n, err, sizeof(err)), KB_EBADINPUT);
        assert_non_null(strstr(err, "alias"));
        kb_buf_release(&b);
}

static void test_build_and_edit(void **state)
{
        (void)state;
        struct kb_value *o = kb_value_new(KB_VOBJECT);
        kb_value_set(o, "x", kb_value_new_int(-42));
        kb_value_set(o, "y", kb_value_new_string("s"));
        kb_value_set(o, "x", kb_value_new_double(0.25));
        struct kb_value *meta = kb_value_ensure_object(o, "metadata");
        kb_value_set(meta, "name", kb_value_new_string("n"));
        char *out = kb_json_emit(o, false);
        assert_string_equal(out, "{\"x\":0.25,\"y\":\"s\",\"metadata\":{\"name\":\"n\"}}");
        free(out);
        struct kb_value *c = kb_value_clone(o);
        assert_true(kb_value_equal(o, c));
        assert_true(kb_value_del(c, "y"));
        assert_false(kb_value_del(c, "y"));
        assert_false(kb_value_equal(o, c));
        kb_value_free(c);
        kb_value_free(o);
}

static void test_int_reading(void **state)
{
        (void)state;
        struct kb_value *v =
            kb_test_yaml1("a: 3.0\nb: 3.5\nc: 99999999999999999999\nd: \"7\"\ne: x\n");
        int64_t i;
        assert_int_equal(kb_value_int(kb_value_get(v, "a"), &i), 0);
        assert_int_equal(i, 3);
        assert_int_equal(kb_value_int(kb_value_get(v, "b"), &i), KB_EBADINPUT);
        assert_int_equal(kb_value_int(kb_value_get(v, "c"), &i), KB_EOVERFLOW);
        assert_int_equal(kb_value_int(kb_value_get(v, "d"), &i), 0);
        assert_int_equal(i, 7);
        assert_int_equal(kb_value_int(kb_value_get(v, "e"), &i), KB_EBADINPUT);
        assert_int_equal(kb_value_int(NULL, &i), KB_EBADINPUT);
        kb_value_free(v);
}

static void test_time(void **state)
{
        (void)state;
        double t;
        assert_int_equal(kb_parse_time("1970-01-01T00:00:00Z", &t), 0);
        assert_true(t == 0);
        assert_int_equal(kb_parse_time("2024-02-29T12:00:01.5+01:00", &t), 0);
        assert_true(t == 1709204401.5);
        assert_int_equal(kb_parse_time("2024-02-29", &t), KB_EBADINPUT);
        char buf[32];
        kb_format_time(1709204401, buf, sizeof(buf));
        assert_string_equal(buf, "2024-02-29T11:00:01Z");
}

/* The pool parser builds the same tree as kb_json_parse. */
static void test_json_pool(void **state)
{
        static const char *const docs[] = {
            "{\"a\":[1,2.5,-3e2],\"b\":{},\"c\":[],\"d\":null,\"e\":true,\"f\":\"x\\u00e9\"}",
            "[{\"k\":\"v\"},[[[]]],\"\",0]",
            "{\"dup\":1,\"other\":2,\"dup\":3}",
            "\"just a string\"",
        };
        for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
                struct kb_value *a = NULL, *b = NULL;
                struct kb_pool pool;
                kb_pool_init(&pool, 64);
                assert_int_equal(kb_json_parse(docs[i], strlen(docs[i]), &a, NULL, 0), 0);
                assert_int_equal(kb_json_parse_pool(docs[i], strlen(docs[i]), &pool, &b, NULL, 0),
                                 0);
                assert_true(kb_value_equal(a, b));
                kb_value_free(a);
                kb_pool_release(&pool);
        }
        /* The last of repeated keys wins, and appears once. */
        struct kb_pool pool;
        kb_pool_init(&pool, 0);
        struct kb_value *v;
        assert_int_equal(kb_json_parse_pool(docs[2], strlen(docs[2]), &pool, &v, NULL, 0), 0);
        assert_int_equal(v->obj.n, 2);
        int64_t n = 0;
        assert_int_equal(kb_value_int(kb_value_get(v, "dup"), &n), 0);
        assert_int_equal(n, 3);
        /* Errors say why, and nesting is bounded. */
        char err[128];
        assert_int_equal(kb_json_parse_pool("{\"a\":", 5, &pool, &v, err, sizeof(err)),
                         KB_EBADINPUT);
        assert_null(v);
        assert_true(err[0]);
        assert_int_equal(kb_json_parse_pool("  ", 2, &pool, &v, err, sizeof(err)), KB_EBADINPUT);
        assert_true(err[0]);
        char deep[600];
        memset(deep, '[', 300);
        memset(deep + 300, ']', 300);
        assert_int_equal(kb_json_parse_pool(deep, 600, &pool, &v, err, sizeof(err)), KB_EBADINPUT);
        assert_non_null(strstr(err, "nesting deeper than"));
        kb_pool_release(&pool);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_json_roundtrip), cmocka_unit_test(test_json_errors),
            cmocka_unit_test(test_json_pool),      cmocka_unit_test(test_json_depth_limit),
            cmocka_unit_test(test_yaml_scalars),   cmocka_unit_test(test_yaml_multidoc),
            cmocka_unit_test(test_yaml_errors),    cmocka_unit_test(test_yaml_aliases_bounded),
            cmocka_unit_test(test_build_and_edit), cmocka_unit_test(test_int_reading),
            cmocka_unit_test(test_time),
        };
        return cmocka_run_group_tests_name("value", tests, NULL, NULL);
}
