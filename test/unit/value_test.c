/* The document tree: JSON and YAML in, JSON out, building and reading. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/value-int.h"
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

/* ---- hostile input: sizes and shapes chosen to cost -------------------- */

#define BIG_KEYS 80000

/* {"metadata":{"labels":{"k00000":"v00000",...,"k00007":"again"}}}: a pod's
 * 80,000 labels (1.3 MB, which a real cluster stores), the last repeating
 * an earlier key. */
static char *big_labels(bool yaml)
{
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_adds(&b, yaml ? "metadata:\n  labels:\n" : "{\"metadata\":{\"labels\":{");
        for (int i = 0; i < BIG_KEYS; i++)
                if (yaml)
                        kb_buf_printf(&b, "    k%05d: v%05d\n", i, i);
                else
                        kb_buf_printf(&b, "%s\"k%05d\":\"v%05d\"", i ? "," : "", i, i);
        kb_buf_adds(&b, yaml ? "    k00007: again\n" : ",\"k00007\":\"again\"}}}");
        char *s = kb_xstrdup(b.data);
        kb_buf_release(&b);
        return s;
}

/* Checks the labels, reading every key back; returns the key comparisons
 * that reading took. */
static unsigned long long check_labels(const struct kb_value *doc)
{
        const struct kb_value *l = kb_value_dig(doc, "metadata", "labels");
        assert_non_null(l);
        assert_int_equal(l->obj.n, BIG_KEYS);
        /* The last of the repeated key wins, in the first one's place. */
        assert_string_equal(l->obj.m[7].key, "k00007");
        assert_string_equal(kb_value_str(l->obj.m[7].val), "again");
        unsigned long long before = kb__value_key_compares;
        char key[16], want[16];
        for (int i = 0; i < BIG_KEYS; i++) {
                snprintf(key, sizeof(key), "k%05d", i);
                snprintf(want, sizeof(want), "v%05d", i);
                const char *got = kb_value_str(kb_value_get(l, key));
                assert_non_null(got);
                if (i != 7)
                        assert_string_equal(got, want);
        }
        assert_null(kb_value_get(l, "k99999"));
        return kb__value_key_compares - before;
}

/* Building an object checks each new key against the earlier ones; with a
 * scan that is n^2/2 comparisons (3.2 billion here, about 10 s in each
 * parser), with the index about n.  The bound, n log2 n, is what one sort
 * would cost; counted, not timed. */
static void test_many_keys_linear(void **state)
{
        (void)state;
        const unsigned long long bound = (unsigned long long)BIG_KEYS * 17; /* log2 n < 17 */
        char *json = big_labels(false), *yaml = big_labels(true);
        char err[256] = "";

        kb__value_key_compares = 0;
        struct kb_value *v = NULL;
        assert_int_equal(kb_json_parse(json, strlen(json), &v, err, sizeof(err)), 0);
        assert_true(kb__value_key_compares < bound);
        assert_true(check_labels(v) < 2 * BIG_KEYS);

        /* A copy is indexed too, and so are objects after a removal. */
        struct kb_value *c = kb_value_clone(v);
        kb__value_key_compares = 0;
        assert_true(check_labels(c) < 2 * BIG_KEYS);
        struct kb_value *l = kb_value_dig(c, "metadata", "labels");
        assert_true(kb_value_del(l, "k00003"));
        assert_null(kb_value_get(l, "k00003"));
        assert_string_equal(kb_value_str(kb_value_get(l, "k79999")), "v79999");
        assert_string_equal(kb_value_str(kb_value_get(l, "k00004")), "v00004");
        for (int i = 0; i < BIG_KEYS - KB_VALUE_INDEX_MIN + 1; i++)
                kb_value_free(kb_value_take(l, l->obj.m[l->obj.n - 1].key));
        assert_int_equal(l->obj.n, KB_VALUE_INDEX_MIN - 2);
        assert_null(l->obj.idx);
        assert_string_equal(kb_value_str(kb_value_get(l, "k00001")), "v00001");
        kb_value_free(c);
        kb_value_free(v);

        kb__value_key_compares = 0;
        struct kb_pool pool;
        kb_pool_init(&pool, 0);
        assert_int_equal(kb_json_parse_pool(json, strlen(json), &pool, &v, err, sizeof(err)), 0);
        assert_true(kb__value_key_compares < bound);
        assert_true(check_labels(v) < 2 * BIG_KEYS);
        kb_pool_release(&pool);

        kb__value_key_compares = 0;
        struct kb_value **docs;
        size_t n;
        assert_int_equal(kb_yaml_parse(yaml, strlen(yaml), &docs, &n, err, sizeof(err)), 0);
        assert_true(kb__value_key_compares < bound);
        assert_int_equal(n, 1);
        assert_true(check_labels(docs[0]) < 2 * BIG_KEYS);
        kb_value_free_docs(docs, n);
        free(json);
        free(yaml);
}

/* A frozen copy (what kbatch-apiserver stores) reads and emits as the
 * tree it copies; each distinct text is written once and equal leaves are
 * one node; it is one allocation (kb_value_free_frozen is a single free,
 * so ASan's leak check would see any other); a clone is an ordinary tree. */
static void test_freeze(void **state)
{
        (void)state;
        const char *in =
            "{\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"x\"},\"managedFields\":["
            "{\"manager\":\"m\",\"time\":\"2026-01-01T00:00:00Z\",\"fieldsV1\":"
            "{\"f:metadata\":{\"f:labels\":{\"f:app\":{}}}}},"
            "{\"manager\":\"k\",\"time\":\"2026-01-01T00:00:00Z\",\"fieldsV1\":"
            "{\"f:status\":{\"f:phase\":{}}}}]},"
            "\"spec\":{\"n\":1,\"s\":\"1\",\"x\":1.50,\"t\":true,\"f\":false,\"z\":null,"
            "\"e\":[],\"o\":{},\"a\":[1,\"1\",[],{},null]},\"status\":{\"phase\":\"x\"}}";
        struct kb_value *v;
        assert_int_equal(kb_json_parse(in, strlen(in), &v, NULL, 0), 0);
        struct kb_value *f = kb_value_freeze(v);
        char *a = kb_json_emit(v, false), *b = kb_json_emit(f, true), *c = kb_json_emit(v, true);
        free(a);
        a = kb_json_emit(f, false);
        assert_string_equal(a, in);
        assert_string_equal(b, c);
        free(a);
        free(b);
        free(c);
        assert_true(kb_value_equal(f, v));
        kb_value_free(v);

        const struct kb_value *mf = kb_value_dig(f, "metadata", "managedFields");
        const struct kb_value *m0 = mf->arr.v[0], *m1 = mf->arr.v[1];
        assert_ptr_equal(m0->obj.m[1].key, m1->obj.m[1].key); /* "time" */
        assert_ptr_equal(kb_value_get(m0, "time"), kb_value_get(m1, "time"));
        assert_ptr_equal(kb_value_dig(f, "metadata", "labels", "app"),
                         kb_value_dig(f, "status", "phase")); /* both "x" */
        const struct kb_value *spec = kb_value_get(f, "spec");
        assert_int_equal(kb_value_get(spec, "n")->type, KB_VNUMBER);
        assert_int_equal(kb_value_get(spec, "s")->type, KB_VSTRING);
        assert_ptr_equal(kb_value_get(spec, "n")->s, kb_value_get(spec, "s")->s);
        assert_string_equal(kb_value_text(kb_value_get(spec, "x")), "1.50");
        assert_int_equal(spec->obj.n, spec->obj.cap);

        /* A clone is an ordinary tree: it can be changed and freed. */
        struct kb_value *cl = kb_value_clone(f);
        kb_value_set(kb_value_get(cl, "spec"), "o", kb_value_new_string("y"));
        kb_value_append(kb_value_dig(cl, "spec", "e"), kb_value_new_int(2));
        kb_value_free(kb_value_take(cl, "status"));
        kb_value_free(cl);
        kb_value_free_frozen(f);

        /* Leaves and empty containers as the root are still one block. */
        const char *roots[] = {"{}", "[]", "null", "true", "\"s\"", "7"};
        for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
                assert_int_equal(kb_json_parse(roots[i], strlen(roots[i]), &v, NULL, 0), 0);
                f = kb_value_freeze(v);
                a = kb_json_emit(f, false);
                assert_string_equal(a, roots[i]);
                free(a);
                kb_value_free(v);
                kb_value_free_frozen(f);
        }

        /* A large object keeps its key index. */
        char *json = big_labels(false);
        assert_int_equal(kb_json_parse(json, strlen(json), &v, NULL, 0), 0);
        f = kb_value_freeze(v);
        kb_value_free(v);
        kb__value_key_compares = 0;
        assert_true(check_labels(f) < 2 * BIG_KEYS);
        kb_value_free_frozen(f);
        free(json);
}

static bool share_labels(const char *key)
{
        return !strcmp(key, "labels") || !strcmp(key, "list");
}

/* Values the rule names are kept once, by content (a number's literal
 * and the order of members included), for as long as a tree points at
 * them; each tree still reads and emits as it was. */
static void test_freeze_shared(void **state)
{
        (void)state;
        static const char *const common[] = {"labels", "n", "1"};
        const char *in[] = {
            "{\"labels\":{\"a\":\"1\",\"b\":\"2\"},\"list\":[1],\"n\":0}",
            "{\"labels\":{\"a\":\"1\",\"b\":\"2\"},\"list\":[1],\"n\":1}",
            "{\"labels\":{\"b\":\"2\",\"a\":\"1\"},\"list\":[1.0],\"n\":2}",
            "{\"labels\":{},\"list\":[],\"x\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}",
        };
        struct kb_value_shares *t = kb_value_shares_new(share_labels, common, 3);
        struct kb_value *f[4];
        for (int i = 0; i < 4; i++) {
                struct kb_value *v;
                assert_int_equal(kb_json_parse(in[i], strlen(in[i]), &v, NULL, 0), 0);
                f[i] = kb_value_freeze_shared(v, t);
                kb_value_free(v);
                char *out = kb_json_emit(f[i], false);
                assert_string_equal(out, in[i]);
                free(out);
        }
        /* {a,b}, [1], {b,a}, [1.0]: empty ones are not kept. */
        assert_int_equal(kb_value_shares_count(t), 4);
        assert_ptr_equal(kb_value_get(f[0], "labels"), kb_value_get(f[1], "labels"));
        assert_ptr_equal(kb_value_get(f[0], "list"), kb_value_get(f[1], "list"));
        assert_ptr_not_equal(kb_value_get(f[0], "labels"), kb_value_get(f[2], "labels"));
        assert_ptr_not_equal(kb_value_get(f[0], "list"), kb_value_get(f[2], "list"));
        assert_ptr_equal(kb_value_get(f[0], "labels"), kb_value_dig(f[3], "x", "labels"));
        /* Common texts: the table's copy, as keys and as leaves of either type. */
        assert_ptr_equal(f[0]->obj.m[2].key, common[1]);
        assert_ptr_equal(kb_value_get(f[1], "n")->s, common[2]);
        assert_int_equal(kb_value_get(f[1], "n")->type, KB_VNUMBER);
        kb_value_free_frozen(f[2]);
        assert_int_equal(kb_value_shares_count(t), 2);
        kb_value_free_frozen(f[0]);
        kb_value_free_frozen(f[1]);
        assert_int_equal(kb_value_shares_count(t), 1);
        kb_value_free_frozen(f[3]);
        assert_int_equal(kb_value_shares_count(t), 0);
        kb_value_shares_free(t);
}

/* The 701-byte "billion laughs": nine aliases of nine aliases, nine levels
 * deep, would be 9^9 nodes.  It is refused at its first expansion that
 * passes ten nodes per event plus 10,000, naming the problem and the
 * alias; the copies made before then stay under that. */
static void test_yaml_alias_bomb(void **state)
{
        (void)state;
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_adds(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\n"
                        "  annotations:\n    a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\","
                        "\"lol\",\"lol\",\"lol\",\"lol\"]\n");
        for (char c = 'b'; c <= 'i'; c++)
                kb_buf_printf(&b, "    %c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", c, c,
                              c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
        struct kb_value **docs = NULL;
        size_t n = 0;
        char err[256] = "";
        assert_int_equal(kb_yaml_parse(b.data, b.len, &docs, &n, err, sizeof(err)), KB_EBADINPUT);
        assert_non_null(
            strstr(err, "line 10: document contains excessive aliasing: *d would make"));
        kb_buf_release(&b);

        /* A block reused as a manifest reuses it stays well within. */
        const char *ok = "defaults: &d {cpu: 1, memory: 1Gi, labels: {a: b, c: d}}\n"
                         "x: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n";
        struct kb_value *v = kb_test_yaml1(ok);
        assert_int_equal(kb_value_get(v, "x")->arr.n, 14);
        kb_value_free(v);
}

/* An escaped NUL would cut a C string short (annotation "g\u0000evil" was
 * stored as "g"): the JSON and YAML parsers (kbatch-apiserver's requests,
 * kbatch-sim's files) refuse it, naming the field.  The pooled parser reads
 * what the scheduler lists from a real API server, which accepts a NUL in
 * an annotation's value: there each NUL becomes U+FFFD, so the page still
 * parses and no name is cut short into another. */
static void test_nul_refused(void **state)
{
        (void)state;
        static const struct {
                const char *json, *yaml, *want;
        } cases[] = {
            {"{\"metadata\":{\"annotations\":{\"g\\u0000evil\":\"x\"}}}",
             "metadata:\n  annotations:\n    \"g\\0evil\": x\n",
             "metadata.annotations: a NUL character (\\u0000) in the key \"g\\u0000evil\" is not "
             "accepted"},
            {"{\"metadata\":{\"annotations\":{\"g\":\"a\\u0000b\"}}}",
             "metadata:\n  annotations:\n    g: \"a\\0b\"\n",
             "metadata.annotations.g: a NUL character (\\u0000) in a string is not accepted"},
            {"{\"spec\":{\"containers\":[{\"name\":\"c\"},{\"args\":[\"x\",\"\\u0000\"]}]}}",
             "spec:\n  containers:\n  - name: c\n  - args: [x, \"\\0\"]\n",
             "spec.containers[1].args[1]: a NUL character"},
            {"\"\\u0000\"", "\"\\0\"\n", "(the document): a NUL character"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                char err[256] = "";
                struct kb_value *v = NULL;
                assert_int_equal(
                    kb_json_parse(cases[i].json, strlen(cases[i].json), &v, err, sizeof(err)),
                    KB_EBADINPUT);
                assert_non_null(strstr(err, cases[i].want));
                struct kb_pool pool;
                kb_pool_init(&pool, 0);
                assert_int_equal(kb_json_parse_pool(cases[i].json, strlen(cases[i].json), &pool, &v,
                                                    err, sizeof(err)),
                                 0);
                kb_pool_release(&pool);
                struct kb_value **docs = NULL;
                size_t n = 0;
                err[0] = '\0';
                assert_int_equal(kb_yaml_parse(cases[i].yaml, strlen(cases[i].yaml), &docs, &n, err,
                                               sizeof(err)),
                                 KB_EBADINPUT);
                assert_non_null(strstr(err, cases[i].want));
        }
}

static void test_nul_pooled(void **state)
{
        (void)state;
        static const char doc[] =
            "{\"metadata\":{\"annotations\":{\"g\\u0000x\":\"a\\u0000b\\u0000\","
            "\"scheduling.k8s.io/group-name\":\"g\\u0000evil\"}}}";
        struct kb_pool pool;
        struct kb_value *v = NULL;
        char err[256] = "";
        kb_pool_init(&pool, 0);
        assert_int_equal(kb_json_parse_pool(doc, sizeof(doc) - 1, &pool, &v, err, sizeof(err)), 0);
        const struct kb_value *a = kb_value_dig(v, "metadata", "annotations");
        assert_int_equal(a->obj.n, 2);
        assert_string_equal(a->obj.m[0].key, "g\xEF\xBF\xBDx");
        assert_string_equal(kb_value_str(a->obj.m[0].val), "a\xEF\xBF\xBD"
                                                           "b\xEF\xBF\xBD");
        assert_string_equal(kb_value_str(a->obj.m[1].val), "g\xEF\xBF\xBD"
                                                           "evil");
        kb_pool_release(&pool);
}

/* A raw NUL byte inside a JSON string is no JSON (yajl refuses control
 * characters there), which the parsers' quick NUL check relies on. */
static void test_raw_nul_refused(void **state)
{
        (void)state;
        static const char doc[] = "{\"a\":\"x\0y\",\"b\0c\":1}";
        char err[256] = "";
        struct kb_value *v = NULL;
        assert_int_equal(kb_json_parse(doc, sizeof(doc) - 1, &v, err, sizeof(err)), KB_EBADINPUT);
        struct kb_pool pool;
        kb_pool_init(&pool, 0);
        assert_int_equal(kb_json_parse_pool(doc, sizeof(doc) - 1, &pool, &v, err, sizeof(err)),
                         KB_EBADINPUT);
        kb_pool_release(&pool);
        static const char key[] = "{\"b\0c\":1}";
        assert_int_equal(kb_json_parse(key, sizeof(key) - 1, &v, err, sizeof(err)), KB_EBADINPUT);
}

/* Repeated keys: the last wins, in the first one's place, and each repeat
 * is noted as kube-apiserver's strict decoding names it. */
static void test_duplicate_keys_noted(void **state)
{
        (void)state;
        const char *json = "{\"metadata\":{\"labels\":{\"a\":\"1\",\"a\":\"2\"},\"name\":\"x\","
                           "\"name\":\"y\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
                           "\"i\",\"name\":\"d\"}]}}";
        struct kb_value_dups d = {0};
        struct kb_value *v = NULL;
        assert_int_equal(kb_json_parse_dups(json, strlen(json), &v, &d, NULL, 0), 0);
        assert_int_equal(d.n, 3);
        assert_string_equal(d.v[0], "duplicate field \"metadata.labels.a\"");
        assert_string_equal(d.v[1], "duplicate field \"metadata.name\"");
        assert_string_equal(d.v[2], "duplicate field \"spec.containers[0].name\"");
        assert_string_equal(kb_value_str(kb_value_dig(v, "metadata", "name")), "y");
        assert_string_equal(kb_value_get(v, "metadata")->obj.m[1].key, "name");
        kb_value_free(v);
        kb_value_dups_release(&d);

        const char *yaml = "metadata:\n  labels:\n    a: \"1\"\n    a: \"2\"\n";
        struct kb_value **docs;
        size_t n;
        assert_int_equal(kb_yaml_parse_dups(yaml, strlen(yaml), &docs, &n, &d, NULL, 0), 0);
        assert_int_equal(d.n, 1);
        assert_string_equal(d.v[0], "line 4: key \"a\" already set in map");
        assert_string_equal(kb_value_str(kb_value_dig(docs[0], "metadata", "labels", "a")), "2");
        kb_value_free_docs(docs, n);
        kb_value_dups_release(&d);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_json_roundtrip),
            cmocka_unit_test(test_json_errors),
            cmocka_unit_test(test_json_pool),
            cmocka_unit_test(test_json_depth_limit),
            cmocka_unit_test(test_yaml_scalars),
            cmocka_unit_test(test_yaml_multidoc),
            cmocka_unit_test(test_yaml_errors),
            cmocka_unit_test(test_yaml_aliases_bounded),
            cmocka_unit_test(test_build_and_edit),
            cmocka_unit_test(test_int_reading),
            cmocka_unit_test(test_time),
            cmocka_unit_test(test_many_keys_linear),
            cmocka_unit_test(test_freeze),
            cmocka_unit_test(test_freeze_shared),
            cmocka_unit_test(test_yaml_alias_bomb),
            cmocka_unit_test(test_nul_refused),
            cmocka_unit_test(test_nul_pooled),
            cmocka_unit_test(test_duplicate_keys_noted),
            cmocka_unit_test(test_raw_nul_refused),
        };
        return cmocka_run_group_tests_name("value", tests, NULL, NULL);
}
