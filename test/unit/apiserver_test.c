/* The apiserver's pieces without HTTP: ages, selectors, patches, schema
 * validation, and requests through kb_apiserver_handle. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver-int.h"

static struct kb_value *json(const char *text)
{
        struct kb_value *v;
        assert_int_equal(kb_json_parse(text, strlen(text), &v, NULL, 0), 0);
        return v;
}

static void assert_json(const struct kb_value *v, const char *want)
{
        char *got = kb_json_emit(v, false);
        assert_string_equal(got, want);
        free(got);
}

static void test_humanize(void **state)
{
        (void)state;
        static const struct {
                double secs;
                const char *want;
        } cases[] = {
            {0, "0s"},
            {59, "59s"},
            {119, "119s"},
            {123, "2m3s"},
            {600, "10m"},
            {15 * 60, "15m"},
            {3 * 3600 + 300, "3h5m"},
            {12 * 3600, "12h"},
            {76 * 3600, "3d4h"},
            {689 * 86400.0, "689d"},
            {(2 * 365 + 5) * 86400.0, "2y5d"},
            {9 * 365 * 86400.0, "9y"},
            {-5, "<invalid>"},
        };
        char buf[32];
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                kb_human_duration(cases[i].secs, buf, sizeof(buf));
                assert_string_equal(buf, cases[i].want);
        }
}

static void test_selectors(void **state)
{
        (void)state;
        struct kb_value *pod =
            json("{\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"a\",\"tier\":\"x\"}},"
                 "\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\"}}");
        static const struct {
                const char *sel;
                bool fields, want;
        } cases[] = {
            {"app=a", false, true},
            {"app==a,tier!=y", false, true},
            {"app in (b, a)", false, true},
            {"app notin (a)", false, false},
            {"tier", false, true},
            {"!tier", false, false},
            {"!gone,app", false, true},
            {"", false, true},
            {"spec.nodeName=n1", true, true},
            {"status.phase!=Running", true, false},
            {"involvedObject.namespace=", true, true},
            {"metadata.name=q", true, false},
            /* The scheduler's bound-pods watch; "x!=" matches a set x. */
            {"spec.nodeName!=", true, true},
            {"spec.nodeName!=,spec.schedulerName=kbatch", true, false},
            {"spec.schedulerName!=", true, false},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                struct kb_selector *s;
                char err[128];
                assert_int_equal(
                    kb__selector_parse(cases[i].sel, cases[i].fields, &s, err, sizeof(err)), 0);
                if (kb__selector_match(s, pod) != cases[i].want)
                        fail_msg("selector %s", cases[i].sel);
                kb__selector_free(s);
        }
        const char *bad[] = {"app in (a", "=x", "a=b,,", "a b"};
        for (size_t i = 0; i < KB_ARRAY_SIZE(bad); i++) {
                struct kb_selector *s = NULL;
                char err[128];
                assert_int_equal(kb__selector_parse(bad[i], false, &s, err, sizeof(err)),
                                 KB_EBADINPUT);
        }
        kb_value_free(pod);
}

static void test_merge_patch(void **state)
{
        (void)state;
        struct kb_value *doc = json("{\"a\":{\"b\":1,\"c\":[1,2]},\"d\":1}");
        struct kb_value *p = json("{\"a\":{\"b\":null,\"c\":[3],\"e\":{\"f\":1}},\"d\":null}");
        kb__merge_patch(&doc, p);
        assert_json(doc, "{\"a\":{\"c\":[3],\"e\":{\"f\":1}}}");
        kb_value_free(doc);
        kb_value_free(p);
}

static void test_strategic_patch(void **state)
{
        (void)state;
        char err[128];
        struct kb_value *doc =
            json("{\"metadata\":{\"finalizers\":[\"a\"]},\"spec\":{\"containers\":["
                 "{\"name\":\"a\",\"image\":\"x\"},{\"name\":\"b\",\"image\":\"y\"}],"
                 "\"tolerations\":[{\"key\":\"k\"}]}}");
        struct kb_value *p = json(
            "{\"metadata\":{\"finalizers\":[\"b\",\"a\"]},\"spec\":{"
            "\"$setElementOrder/containers\":[{\"name\":\"c\"},{\"name\":\"b\"}],"
            "\"containers\":[{\"name\":\"b\",\"image\":\"z\"},{\"name\":\"c\",\"image\":\"w\"},"
            "{\"name\":\"a\",\"$patch\":\"delete\"}],\"tolerations\":[]}}");
        assert_int_equal(kb__strategic_patch(&doc, p, err, sizeof(err)), 0);
        assert_json(doc, "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]},\"spec\":{\"containers\":["
                         "{\"name\":\"c\",\"image\":\"w\"},{\"name\":\"b\",\"image\":\"z\"}],"
                         "\"tolerations\":[]}}");
        kb_value_free(p);
        p = json("{\"spec\":{\"$retainKeys\":[\"containers\"],\"unschedulable\":null}}");
        assert_int_equal(kb__strategic_patch(&doc, p, err, sizeof(err)), 0);
        assert_json(doc, "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]},\"spec\":{\"containers\":["
                         "{\"name\":\"c\",\"image\":\"w\"},{\"name\":\"b\",\"image\":\"z\"}]}}");
        kb_value_free(p);
        kb_value_free(doc);
}

static void test_json_patch(void **state)
{
        (void)state;
        char err[256];
        struct kb_value *doc = json("{\"a\":[1,2],\"b\":{\"c\":1}}");
        struct kb_value *ops = json("[{\"op\":\"add\",\"path\":\"/a/1\",\"value\":9},"
                                    "{\"op\":\"add\",\"path\":\"/a/-\",\"value\":7},"
                                    "{\"op\":\"move\",\"from\":\"/b/c\",\"path\":\"/d\"},"
                                    "{\"op\":\"test\",\"path\":\"/d\",\"value\":1},"
                                    "{\"op\":\"remove\",\"path\":\"/a/0\"},"
                                    "{\"op\":\"replace\",\"path\":\"/b\",\"value\":\"x~/\"}]");
        assert_int_equal(kb__json_patch(&doc, ops, err, sizeof(err)), 0);
        assert_json(doc, "{\"a\":[9,2,7],\"b\":\"x~/\",\"d\":1}");
        kb_value_free(ops);
        ops = json("[{\"op\":\"replace\",\"path\":\"/zz\",\"value\":1}]");
        assert_int_equal(kb__json_patch(&doc, ops, err, sizeof(err)), KB_EBADINPUT);
        kb_value_free(ops);
        kb_value_free(doc);
}

static void test_schema(void **state)
{
        (void)state;
        struct kb_value *schema =
            json("{\"type\":\"object\",\"required\":[\"w\"],\"properties\":{"
                 "\"w\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":65535},"
                 "\"s\":{\"type\":\"string\",\"enum\":[\"Open\",\"Closed\"]},"
                 "\"q\":{\"type\":\"object\",\"additionalProperties\":{\"x-kubernetes-int-or-"
                 "string\":true,"
                 "\"pattern\":\"^[0-9]+(m|Gi)?$\"}}}}");
        struct kb_value *v =
            json("{\"w\":0,\"s\":\"Bogus\",\"q\":{\"cpu\":\"1x\",\"mem\":\"2Gi\"}}");
        struct kb_causes c = {0};
        kb__validate_schema(schema, v, "spec", &c);
        assert_int_equal(c.n, 3);
        assert_string_equal(c.v[0].field, "spec.w");
        assert_string_equal(c.v[1].field, "spec.s");
        assert_string_equal(c.v[1].reason, "FieldValueNotSupported");
        assert_string_equal(c.v[2].field, "spec.q.cpu");
        kb__causes_release(&c);
        kb_value_free(v);
        v = json("{\"s\":\"Open\"}");
        kb__validate_schema(schema, v, "spec", &c);
        assert_int_equal(c.n, 1);
        assert_string_equal(c.v[0].field, "spec.w");
        assert_string_equal(c.v[0].reason, "FieldValueRequired");
        kb__causes_release(&c);
        kb_value_free(v);
        kb_value_free(schema);
        assert_true(kb__is_dns_subdomain("a.b-c.d"));
        assert_false(kb__is_dns_subdomain("A"));
        assert_false(kb__is_dns_label("a.b"));
        assert_false(kb__is_dns_label("-a"));
}

static int request(struct kb_apiserver *srv, const char *method, const char *path, const char *body,
                   const char *ctype, struct kb_api_resp *resp)
{
        struct kb_api_req req = {.method = method,
                                 .path = path,
                                 .content_type = ctype ? ctype : "application/json",
                                 .accept = "application/json",
                                 .body = body,
                                 .body_len = body ? strlen(body) : 0};
        kb_apiserver_handle(srv, &req, resp);
        return resp->status;
}

static void test_requests(void **state)
{
        (void)state;
        struct kb_apiserver_opts o;
        kb_apiserver_opts_init(&o);
        o.seed = 7;
        o.history = 8;
        struct kb_apiserver *srv = kb_apiserver_new(&o);
        struct kb_api_resp r;
        const char *pod = "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p\"},"
                          "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}";
        assert_int_equal(request(srv, "POST", "/api/v1/namespaces/default/pods", pod, NULL, &r),
                         201);
        assert_non_null(strstr(r.body.data, "\"phase\":\"Pending\""));
        kb_api_resp_release(&r);
        assert_int_equal(request(srv, "POST", "/api/v1/namespaces/default/pods", pod, NULL, &r),
                         409);
        kb_api_resp_release(&r);
        assert_int_equal(request(srv, "POST", "/api/v1/namespaces/default/pods/p/binding",
                                 "{\"target\":{\"name\":\"n1\"}}", NULL, &r),
                         201);
        kb_api_resp_release(&r);
        assert_int_equal(request(srv, "POST", "/api/v1/namespaces/default/pods/p/binding",
                                 "{\"target\":{\"name\":\"n2\"}}", NULL, &r),
                         409);
        kb_api_resp_release(&r);
        assert_int_equal(request(srv, "POST", "/api/v1/namespaces/default/pods/q/binding",
                                 "{\"target\":{\"name\":\"n2\"}}", NULL, &r),
                         404);
        kb_api_resp_release(&r);
        assert_int_equal(request(srv, "POST", "/api/v1/namespaces/default/pods", "{", NULL, &r),
                         400);
        kb_api_resp_release(&r);
        assert_int_equal(request(srv, "GET", "/api/v1/things", NULL, NULL, &r), 404);
        kb_api_resp_release(&r);
        /* A watch from an rv the ring of 8 no longer holds is Expired. */
        for (int i = 0; i < 10; i++) {
                char body[64];
                snprintf(body, sizeof(body), "{\"metadata\":{\"labels\":{\"n\":\"%d\"}}}", i);
                assert_int_equal(request(srv, "PATCH", "/api/v1/namespaces/default/pods/p", body,
                                         "application/merge-patch+json", &r),
                                 200);
                kb_api_resp_release(&r);
        }
        struct kb_api_query q[] = {{"watch", "true"}, {"resourceVersion", "2"}};
        struct kb_api_req req = {.method = "GET", .path = "/api/v1/pods", .query = q, .nquery = 2};
        kb_apiserver_handle(srv, &req, &r);
        assert_non_null(r.watch);
        const char *out;
        long n = kb_apiserver_watch_next(r.watch, 0, &out);
        assert_true(n > 0);
        assert_non_null(strstr(out, "\"code\":410"));
        assert_int_equal(kb_apiserver_watch_next(r.watch, 0, &out), -1);
        kb_api_resp_release(&r);
        kb_apiserver_free(srv);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_humanize),    cmocka_unit_test(test_selectors),
            cmocka_unit_test(test_merge_patch), cmocka_unit_test(test_strategic_patch),
            cmocka_unit_test(test_json_patch),  cmocka_unit_test(test_schema),
            cmocka_unit_test(test_requests),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
