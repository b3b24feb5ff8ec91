/* The apiserver's pieces without HTTP: ages, selectors, patches, schema
 * validation, and requests through kb_apiserver_handle. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/apiserver-http.h"
#include "value/value-int.h"

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
        assert_true(kb_dns_subdomain("a.b-c.d"));
        assert_false(kb_dns_subdomain("A"));
        assert_false(kb_dns_label("a.b"));
        assert_false(kb_dns_label("-a"));
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

/* Evictions honour PodDisruptionBudgets as kube-apiserver's do: a budget
 * whose healthy pods would fall below minAvailable refuses with 429 and a
 * DisruptionBudget cause; a pod that is not running goes regardless; a
 * budget the server cannot read is refused when created. */
static void make_pod(struct kb_apiserver *srv, const char *name, bool ready)
{
        struct kb_api_resp r;
        char body[256], path[128];
        snprintf(body, sizeof(body),
                 "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\","
                 "\"labels\":{\"app\":\"x\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
                 "\"image\":\"i\"}]}}",
                 name);
        assert_int_equal(request(srv, "POST", "/api/v1/namespaces/default/pods", body, NULL, &r),
                         201);
        kb_api_resp_release(&r);
        if (!ready)
                return;
        snprintf(path, sizeof(path), "/api/v1/namespaces/default/pods/%s/binding", name);
        assert_int_equal(request(srv, "POST", path, "{\"target\":{\"name\":\"n1\"}}", NULL, &r),
                         201);
        kb_api_resp_release(&r);
        snprintf(path, sizeof(path), "/api/v1/namespaces/default/pods/%s/status", name);
        assert_int_equal(request(srv, "PATCH", path,
                                 "{\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":"
                                 "\"Ready\",\"status\":\"True\"}]}}",
                                 "application/merge-patch+json", &r),
                         200);
        kb_api_resp_release(&r);
}

static int evict(struct kb_apiserver *srv, const char *name, struct kb_api_resp *r)
{
        char path[128];
        snprintf(path, sizeof(path), "/api/v1/namespaces/default/pods/%s/eviction", name);
        return request(srv, "POST", path,
                       "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{}}", NULL,
                       r);
}

static int make_pdb(struct kb_apiserver *srv, const char *name, const char *min,
                    struct kb_api_resp *r)
{
        char body[256];
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{"
                 "\"name\":\"%s\"},\"spec\":{\"minAvailable\":%s,\"selector\":{\"matchLabels\":"
                 "{\"app\":\"x\"}}}}",
                 name, min);
        return request(srv, "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", body,
                       NULL, r);
}

/* What the store tells its observers, counted. */
struct seen {
        int creates, updates, removals, gone;
        char last_gone[64];
};

static void seen_write(void *arg, const struct kb_rtype *rt, const char *key,
                       const struct kb_value *old, const struct kb_value *now)
{
        struct seen *s = arg;
        if (strcmp(rt->resource, "configmaps"))
                return;
        if (!old)
                s->creates++;
        else if (!now)
                s->removals++;
        else
                s->updates++;
        (void)key;
}

static void seen_gone(void *arg, const char *uid)
{
        struct seen *s = arg;
        s->gone++;
        snprintf(s->last_gone, sizeof(s->last_gone), "%s", uid);
}

/* The layers: storage tells observers of writes (the simulated cluster is
 * one), every built-in kind is one descriptor registered once, and the
 * simulated nodes carry kubelet's well-known labels. */
static void test_layers(void **state)
{
        (void)state;
        struct kb_apiserver_opts o;
        kb_apiserver_opts_init(&o);
        o.seed = 7;
        struct kb_apiserver *srv = kb_apiserver_new(&o);
        struct seen s = {0};
        struct kb_store_observer ob = {seen_write, seen_gone, &s};
        pthread_mutex_lock(&srv->mu);
        kb__store_observe(srv, &ob);
        pthread_mutex_unlock(&srv->mu);
        struct kb_api_resp r;
        const char *cm = "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\","
                         "\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"1\"}}";
        assert_int_equal(
            request(srv, "POST", "/api/v1/namespaces/default/configmaps", cm, NULL, &r), 201);
        kb_api_resp_release(&r);
        const char *cm2 = "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\","
                          "\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"2\"}}";
        assert_int_equal(
            request(srv, "PUT", "/api/v1/namespaces/default/configmaps/c", cm2, NULL, &r), 200);
        kb_api_resp_release(&r);
        assert_int_equal(s.gone, 0);
        assert_int_equal(
            request(srv, "DELETE", "/api/v1/namespaces/default/configmaps/c", NULL, NULL, &r), 200);
        kb_api_resp_release(&r);
        assert_int_equal(s.creates, 1);
        assert_int_equal(s.updates, 1);
        assert_int_equal(s.removals, 1);
        assert_int_equal(s.gone, 1); /* the collector hears of every owner gone */
        assert_int_equal(strlen(s.last_gone), 36);

        /* One descriptor per built-in kind, each registered once and
         * found by its group, version and resource. */
        size_t n;
        const struct kb_apikind *const *kinds = kb__kinds(&n);
        assert_true(n >= 20);
        pthread_mutex_lock(&srv->mu);
        for (size_t i = 0; i < n; i++) {
                struct kb_rtype *rt =
                    kb__type_find(srv, kinds[i]->group, kinds[i]->version, kinds[i]->resource);
                assert_non_null(rt);
                assert_ptr_equal(rt->k, kinds[i]);
                for (size_t j = 0; j < i; j++)
                        assert_false(!strcmp(kinds[i]->group, kinds[j]->group) &&
                                     !strcmp(kinds[i]->resource, kinds[j]->resource));
        }
        pthread_mutex_unlock(&srv->mu);

        /* Simulated nodes carry the labels a kubelet gives every node. */
        char err[128];
        assert_int_equal(kb_apiserver_add_nodes(srv, "2:cpu=4,memory=8Gi", err, sizeof(err)), 0);
        assert_int_equal(request(srv, "GET", "/api/v1/nodes/node-2", NULL, NULL, &r), 200);
        assert_non_null(strstr(r.body.data, "\"kubernetes.io/os\":\"linux\""));
        assert_non_null(strstr(r.body.data, "\"kubernetes.io/arch\":\"amd64\""));
        assert_non_null(strstr(r.body.data, "\"kubernetes.io/hostname\":\"node-2\""));
        kb_api_resp_release(&r);
        kb_apiserver_free(srv);
}

static void test_disruption_budgets(void **state)
{
        (void)state;
        struct kb_apiserver_opts o;
        kb_apiserver_opts_init(&o);
        struct kb_apiserver *srv = kb_apiserver_new(&o);
        struct kb_api_resp r;
        make_pod(srv, "a", true);
        make_pod(srv, "b", true);
        make_pod(srv, "pending", false);

        /* minAvailable 2 over two healthy pods: none may go. */
        assert_int_equal(make_pdb(srv, "two", "2", &r), 201);
        kb_api_resp_release(&r);
        assert_int_equal(evict(srv, "a", &r), 429);
        assert_non_null(strstr(r.body.data, "\"reason\":\"TooManyRequests\""));
        assert_non_null(strstr(r.body.data, "Cannot evict pod as it would violate the pod's "
                                            "disruption budget."));
        assert_non_null(strstr(r.body.data, "\"reason\":\"DisruptionBudget\""));
        assert_non_null(strstr(r.body.data,
                               "The disruption budget two needs 2 healthy pods and has 2 "
                               "currently"));
        kb_api_resp_release(&r);
        /* A pending pod takes nothing healthy away: evicted regardless. */
        assert_int_equal(evict(srv, "pending", &r), 201);
        kb_api_resp_release(&r);
        assert_int_equal(request(srv, "GET", "/api/v1/namespaces/default/pods/a", NULL, NULL, &r),
                         200);
        assert_null(strstr(r.body.data, "deletionTimestamp"));
        kb_api_resp_release(&r);

        /* minAvailable 1: one goes (and is then being deleted), the other
         * stays. */
        assert_int_equal(request(srv, "DELETE",
                                 "/apis/policy/v1/namespaces/default/poddisruptionbudgets/two",
                                 NULL, NULL, &r),
                         200);
        kb_api_resp_release(&r);
        assert_int_equal(make_pdb(srv, "one", "1", &r), 201);
        kb_api_resp_release(&r);
        assert_int_equal(evict(srv, "a", &r), 201);
        kb_api_resp_release(&r);
        assert_int_equal(evict(srv, "b", &r), 429);
        assert_non_null(strstr(r.body.data,
                               "The disruption budget one needs 1 healthy pods and has 1 "
                               "currently"));
        kb_api_resp_release(&r);

        /* A budget that is neither a number nor a percentage is refused,
         * naming the field. */
        assert_int_equal(make_pdb(srv, "bad", "\"abc\"", &r), 422);
        assert_non_null(strstr(r.body.data, "spec.minAvailable"));
        assert_non_null(strstr(r.body.data, "abc"));
        kb_api_resp_release(&r);
        kb_apiserver_free(srv);
}

static void test_query_bool(void **state)
{
        (void)state;
        /* apimachinery: present and not "0"/"false" in any case is true. */
        static const struct {
                const char *value;
                bool want;
        } cases[] = {{"true", true},   {"True", true},   {"1", true},
                     {"", true},       {"yes", true},    {"false", false},
                     {"FALSE", false}, {"False", false}, {"0", false}};
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                struct kb_api_query q[] = {{"watch", cases[i].value}};
                struct kb_api_req req = {.query = q, .nquery = 1};
                if (kb__query_bool(&req, "watch") != cases[i].want)
                        fail_msg("watch=%s", cases[i].value);
        }
        struct kb_api_req none = {0};
        assert_false(kb__query_bool(&none, "watch"));
}

static void test_accept(void **state)
{
        (void)state;
        static const struct {
                const char *accept;
                bool ok, yaml;
        } cases[] = {
            {NULL, true, false},
            {"application/json", true, false},
            {"application/vnd.kubernetes.protobuf,application/json", true, false},
            {"application/json;as=Table;v=v1;g=meta.k8s.io,application/json", true, false},
            {"application/yaml", true, true},
            {"Application/YAML; charset=utf-8", true, true},
            {"*/*;q=0.8", true, false},
            {"application/*", true, false},
            {"application/vnd.kubernetes.protobuf", false, false},
            {"text/html, image/png", false, false},
            {"application/jsonx", false, false},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                bool yaml;
                if (kb__acceptable(cases[i].accept, &yaml) != cases[i].ok || yaml != cases[i].yaml)
                        fail_msg("Accept: %s", cases[i].accept ? cases[i].accept : "(none)");
        }
}

static void test_event_versions(void **state)
{
        (void)state;
        struct kb_value *core =
            json("{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"e\"},"
                 "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\"},\"message\":\"m\","
                 "\"source\":{\"component\":\"c\"},\"count\":2,\"reason\":\"R\"}");
        struct kb_value *v1 = kb__event_to_v1(core);
        assert_json(
            v1,
            "{\"kind\":\"Event\",\"apiVersion\":\"events.k8s.io/v1\",\"metadata\":{\"name\":\"e\"},"
            "\"reason\":\"R\",\"regarding\":{\"kind\":\"Pod\",\"name\":\"p\"},\"note\":\"m\","
            "\"deprecatedSource\":{\"component\":\"c\"},\"deprecatedCount\":2}");
        struct kb_value *back = kb__event_from_v1(v1);
        assert_true(kb_value_equal(kb_value_get(back, "involvedObject"),
                                   kb_value_get(core, "involvedObject")));
        assert_string_equal(kb_value_str(kb_value_get(back, "message")), "m");
        assert_string_equal(kb_value_str(kb_value_get(back, "apiVersion")), "v1");
        kb_value_free(back);
        kb_value_free(core);
}

static void test_secret_data(void **state)
{
        (void)state;
        struct kb_apiserver_opts o;
        kb_apiserver_opts_init(&o);
        struct kb_apiserver *srv = kb_apiserver_new(&o);
        struct kb_rtype *secrets = kb__type_find(srv, "", "v1", "secrets");
        char err[256];
        /* base64 of "", "f", "fo", "foo", "foob" by hand. */
        struct kb_value *s =
            json("{\"stringData\":{\"a\":\"\",\"b\":\"f\",\"c\":\"fo\",\"d\":\"foo\","
                 "\"e\":\"foob\"}}");
        assert_int_equal(kb__normalize(secrets, s, err, sizeof(err)), 0);
        assert_json(s, "{\"data\":{\"a\":\"\",\"b\":\"Zg==\",\"c\":\"Zm8=\",\"d\":\"Zm9v\","
                       "\"e\":\"Zm9vYg==\"},\"type\":\"Opaque\"}");
        kb_value_free(s);
        const char *bad[][2] = {{"Zm9", "3"}, {"Z!==", "1"}, {"Zg=a", "2"}};
        for (size_t i = 0; i < KB_ARRAY_SIZE(bad); i++) {
                char *text = kb_xasprintf("{\"data\":{\"k\":\"%s\"}}", bad[i][0]);
                s = json(text);
                assert_int_equal(kb__normalize(secrets, s, err, sizeof(err)), KB_EBADINPUT);
                char *want = kb_xasprintf("illegal base64 data at input byte %s", bad[i][1]);
                if (!strstr(err, want))
                        fail_msg("%s: %s", bad[i][0], err);
                free(want);
                free(text);
                kb_value_free(s);
        }
        kb_apiserver_free(srv);
}

static int key_order(const void *a, const void *b)
{
        return kb__key_cmp(*(char *const *)a, *(char *const *)b);
}

/* The ordered index against a sorted array: seek, rank and count agree
 * after random inserts and removals. */
static void test_index(void **state)
{
        (void)state;
        struct kb_apiserver_opts o;
        kb_apiserver_opts_init(&o);
        o.seed = 3;
        struct kb_apiserver *srv = kb_apiserver_new(&o);
        struct kb_rtype rt = {0};
        enum { N = 600 };
        static const char *const ns[] = {"a", "a-b", "ab", "b"};
        struct kb_obj objs[N];
        char *keys[N];
        bool in[N] = {false};
        for (int i = 0; i < N; i++) {
                keys[i] = kb_xasprintf("%s/p%03d", ns[i % 4], (i * 7919) % N);
                objs[i].key = keys[i];
        }
        assert_true(kb__key_cmp("a/x", "a-b/w") < 0); /* namespace a before a-b */
        assert_true(kb__key_cmp("a-b/w", "ab/a") < 0);
        uint64_t r = 12345;
        for (int step = 0; step < 3000; step++) {
                r = r * 6364136223846793005ULL + 1442695040888963407ULL;
                int i = (int)((r >> 33) % N);
                if (in[i])
                        kb__index_remove(&rt, &objs[i]);
                else
                        kb__index_insert(&rt, &objs[i]);
                in[i] = !in[i];
                if (step % 100)
                        continue;
                const char *sorted[N];
                size_t n = 0;
                for (int k = 0; k < N; k++)
                        if (in[k])
                                sorted[n++] = keys[k];
                qsort(sorted, n, sizeof(*sorted), key_order);
                assert_int_equal(kb__index_count(&rt), n);
                const struct kb_obj *first = kb__index_seek(&rt, NULL, true);
                assert_ptr_equal(first ? first->key : NULL, n ? sorted[0] : NULL);
                for (size_t k = 0; k < n; k++) {
                        assert_int_equal(kb__index_rank(&rt, sorted[k]), k);
                        const struct kb_obj *nx = kb__index_seek(&rt, sorted[k], false);
                        assert_ptr_equal(nx ? nx->key : NULL, k + 1 < n ? sorted[k + 1] : NULL);
                }
                /* The first key of namespace "ab" is the first past "ab/". */
                const struct kb_obj *ab = kb__index_seek(&rt, "ab/", true);
                size_t k = 0;
                while (k < n && kb__key_cmp(sorted[k], "ab/") < 0)
                        k++;
                assert_ptr_equal(ab ? ab->key : NULL, k < n ? sorted[k] : NULL);
        }
        kb__index_free(&rt);
        for (int i = 0; i < N; i++)
                free(keys[i]);
        kb_apiserver_free(srv);
}

static void path_of(char *const *path, size_t n, void *arg)
{
        char *p = kb__fields_path(path, n);
        struct kb_buf *b = arg;
        kb_buf_printf(b, "%s;", p);
        free(p);
}

/* FieldsV1 as upstream writes it: keyed list items, set items, leaves. */
static void test_fieldsets(void **state)
{
        (void)state;
        struct kb_value *pod =
            json("{\"metadata\":{\"labels\":{\"a\":\"1\"},\"finalizers\":[\"x\"]},"
                 "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],"
                 "\"tolerations\":[{\"key\":\"k\"}]}}");
        struct kb_fieldwalk fw = {.defs = NULL, .builtin = true};
        struct kb_value *f = kb__fields_of(&fw, NULL, pod);
        assert_json(
            f, "{\"f:metadata\":{\"f:labels\":{\"f:a\":{}},\"f:finalizers\":{\"v:\\\"x\\\"\":{}}},"
               "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},"
               "\"f:name\":{},\"f:image\":{}}},\"f:tolerations\":{}}}");
        struct kb_buf b;
        kb_buf_init(&b);
        kb__fields_leaves(f, path_of, &b);
        assert_string_equal(b.data,
                            ".metadata.labels.a;.metadata.finalizers[=\"x\"];"
                            ".spec.containers[name=\"c\"];.spec.containers[name=\"c\"].name;"
                            ".spec.containers[name=\"c\"].image;.spec.tolerations;");
        kb_buf_release(&b);
        struct kb_value *minus =
            json("{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{"
                 "\"f:image\":{}}},\"f:tolerations\":{}}}");
        kb__fields_remove(f, minus);
        assert_json(
            f, "{\"f:metadata\":{\"f:labels\":{\"f:a\":{}},\"f:finalizers\":{\"v:\\\"x\\\"\":{}}},"
               "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},"
               "\"f:name\":{}}}}}");
        char *path[] = {"f:spec", "f:containers", "k:{\"name\":\"c\"}", "."};
        assert_true(kb__fields_delete(pod, path, 4));
        assert_json(kb_value_get(pod, "spec"),
                    "{\"containers\":[],\"tolerations\":[{\"key\":\"k\"}]}");
        kb_value_free(minus);
        kb_value_free(f);
        kb_value_free(pod);
}

/* A create body of n labels, with an annotation of alen bytes and an env
 * value of elen bytes (0: none). */
static char *pod_body(const char *name, int n, size_t alen, size_t elen)
{
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_printf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"",
                      name);
        if (n) {
                kb_buf_adds(&b, ",\"labels\":{");
                for (int i = 0; i < n; i++)
                        kb_buf_printf(&b, "%s\"k%05d\":\"v%05d\"", i ? "," : "", i, i);
                kb_buf_adds(&b, "}");
        }
        if (alen) {
                kb_buf_adds(&b, ",\"annotations\":{\"a\":\"");
                for (size_t i = 0; i < alen; i++)
                        kb_buf_addc(&b, 'x');
                kb_buf_adds(&b, "\"}");
        }
        kb_buf_adds(&b, "},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"");
        if (elen) {
                kb_buf_adds(&b, ",\"env\":[{\"name\":\"A\",\"value\":\"");
                for (size_t i = 0; i < elen; i++)
                        kb_buf_addc(&b, 'x');
                kb_buf_adds(&b, "\"}]");
        }
        kb_buf_adds(&b, "}]}}");
        char *s = kb_xstrdup(b.data);
        kb_buf_release(&b);
        return s;
}

static const char *status_message(struct kb_api_resp *r, struct kb_value **doc)
{
        assert_int_equal(kb_json_parse(r->body.data, r->body.len, doc, NULL, 0), 0);
        return kb_value_str(kb_value_get(*doc, "message"));
}

/* Input that is large or shaped on purpose is refused as kube-apiserver
 * refuses it (each status and message taken from the test/k8s bed), and a
 * large object costs its own size: its body is decoded before the lock,
 * and the request's key comparisons stay O(n log n). */
static void test_hostile_bodies(void **state)
{
        (void)state;
        struct kb_apiserver_opts o;
        kb_apiserver_opts_init(&o);
        o.seed = 7;
        struct kb_apiserver *srv = kb_apiserver_new(&o);
        struct kb_api_resp r;
        struct kb_value *doc;
        const char *pods = "/api/v1/namespaces/default/pods";

        /* 80,000 labels (1.3 MB, which a real cluster stores: it drops the
         * managedFields that would pass etcd's limit, as here). */
        char *big = pod_body("big", 80000, 0, 0);
        kb__body_decodes_locked = 0;
        kb__value_key_compares = 0;
        assert_int_equal(request(srv, "POST", pods, big, NULL, &r), 201);
        assert_int_equal(kb__body_decodes_locked, 0);
        assert_true(kb__value_key_compares < 80000ull * 17 * 8);
        assert_null(strstr(r.body.data, "managedFields"));
        kb_api_resp_release(&r);
        free(big);

        /* NUL in a key or a string: refused naming the field, never cut. */
        assert_int_equal(request(srv, "POST", pods,
                                 "{\"metadata\":{\"name\":\"n\",\"annotations\":{\"g\\u0000evil\":"
                                 "\"x\"}},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
                                 NULL, &r),
                         400);
        assert_string_equal(status_message(&r, &doc),
                            "the object provided is unrecognized: line 1: metadata.annotations: "
                            "a NUL character (\\u0000) in the key \"g\\u0000evil\" is not "
                            "accepted");
        kb_value_free(doc);
        kb_api_resp_release(&r);

        /* Repeated keys: Strict refuses, Warn (the default) warns. */
        const char *dup = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"d1\",\"labels\":{\"a\":\"1\",\"a\":\"2\"},\"name\":\"d2\"},\"data\":{"
                          "\"x\":\"1\",\"x\":\"2\"}}";
        assert_int_equal(
            request(srv, "POST", "/api/v1/namespaces/default/configmaps", dup, NULL, &r), 201);
        assert_string_equal(r.warning, "duplicate field \"metadata.labels.a\"\nduplicate field "
                                       "\"metadata.name\"\nduplicate field \"data.x\"");
        assert_non_null(strstr(r.body.data, "\"name\":\"d2\""));
        kb_api_resp_release(&r);
        struct kb_api_query strict = {"fieldValidation", "Strict"};
        struct kb_api_req req = {.method = "POST",
                                 .path = "/api/v1/namespaces/default/configmaps",
                                 .query = &strict,
                                 .nquery = 1,
                                 .content_type = "application/json",
                                 .body = dup,
                                 .body_len = strlen(dup)};
        kb_apiserver_handle(srv, &req, &r);
        assert_int_equal(r.status, 400);
        assert_string_equal(status_message(&r, &doc),
                            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict "
                            "decoding error: duplicate field \"metadata.labels.a\", duplicate "
                            "field \"metadata.name\", duplicate field \"data.x\"");
        kb_value_free(doc);
        kb_api_resp_release(&r);
        const char *ydup = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y1\n  labels:\n"
                           "    a: \"1\"\n    a: \"2\"\n";
        req.body = ydup;
        req.body_len = strlen(ydup);
        req.content_type = "application/yaml";
        kb_apiserver_handle(srv, &req, &r);
        assert_int_equal(r.status, 400);
        assert_string_equal(status_message(&r, &doc),
                            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict "
                            "decoding error: yaml: unmarshal errors:\n  line 7: key \"a\" "
                            "already set in map");
        kb_value_free(doc);
        kb_api_resp_release(&r);
        req.nquery = 0;
        kb_apiserver_handle(srv, &req, &r);
        assert_int_equal(r.status, 201);
        assert_string_equal(r.warning, "line 7: key \"a\" already set in map");
        kb_api_resp_release(&r);

        /* Annotations over 256 KiB in total: 422, as ValidateAnnotationsSize. */
        char *ann = pod_body("ann", 0, 262144, 0);
        assert_int_equal(request(srv, "POST", pods, ann, NULL, &r), 422);
        assert_string_equal(status_message(&r, &doc),
                            "Pod \"ann\" is invalid: metadata.annotations: Too long: may not be "
                            "more than 262144 bytes");
        assert_string_equal(
            kb_value_str(kb_value_dig(doc, "details", "causes")->arr.v[0]->obj.m[0].val),
            "FieldValueTooLong");
        kb_value_free(doc);
        kb_api_resp_release(&r);
        free(ann);
        ann = pod_body("ann", 0, 262143, 0); /* with the key "a": 262144 */
        assert_int_equal(request(srv, "POST", pods, ann, NULL, &r), 201);
        kb_api_resp_release(&r);
        free(ann);

        /* Objects over etcd's 1.5 MiB: 500 in etcd's words; a dry run passes. */
        char *huge = pod_body("huge", 0, 0, 1600000);
        assert_int_equal(request(srv, "POST", pods, huge, NULL, &r), 500);
        assert_string_equal(status_message(&r, &doc), "etcdserver: request is too large");
        assert_null(kb_value_get(doc, "reason"));
        kb_value_free(doc);
        kb_api_resp_release(&r);
        struct kb_api_query dry = {"dryRun", "All"};
        req = (struct kb_api_req){.method = "POST",
                                  .path = pods,
                                  .query = &dry,
                                  .nquery = 1,
                                  .content_type = "application/json",
                                  .body = huge,
                                  .body_len = strlen(huge)};
        kb_apiserver_handle(srv, &req, &r);
        assert_int_equal(r.status, 201);
        kb_api_resp_release(&r);
        free(huge);
        huge = pod_body("huge", 0, 0, 2500000);
        assert_int_equal(request(srv, "POST", pods, huge, NULL, &r), 500);
        assert_non_null(strstr(status_message(&r, &doc),
                               "rpc error: code = ResourceExhausted desc = trying to send "
                               "message larger than max ("));
        kb_value_free(doc);
        kb_api_resp_release(&r);
        free(huge);

        /* A YAML alias bomb is refused at once, naming the problem. */
        struct kb_buf bomb;
        kb_buf_init(&bomb);
        kb_buf_adds(&bomb, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\n"
                           "  annotations:\n    a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\","
                           "\"lol\",\"lol\",\"lol\",\"lol\"]\n");
        for (char ch = 'b'; ch <= 'i'; ch++)
                kb_buf_printf(&bomb, "    %c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", ch, ch,
                              ch - 1, ch - 1, ch - 1, ch - 1, ch - 1, ch - 1, ch - 1, ch - 1,
                              ch - 1);
        assert_int_equal(request(srv, "POST", "/api/v1/namespaces/default/configmaps", bomb.data,
                                 "application/yaml", &r),
                         400);
        assert_non_null(strstr(status_message(&r, &doc), "excessive aliasing"));
        kb_value_free(doc);
        kb_api_resp_release(&r);
        kb_buf_release(&bomb);
        kb_apiserver_free(srv);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_humanize),       cmocka_unit_test(test_selectors),
            cmocka_unit_test(test_merge_patch),    cmocka_unit_test(test_strategic_patch),
            cmocka_unit_test(test_json_patch),     cmocka_unit_test(test_schema),
            cmocka_unit_test(test_requests),       cmocka_unit_test(test_query_bool),
            cmocka_unit_test(test_accept),         cmocka_unit_test(test_event_versions),
            cmocka_unit_test(test_secret_data),    cmocka_unit_test(test_index),
            cmocka_unit_test(test_fieldsets),      cmocka_unit_test(test_disruption_budgets),
            cmocka_unit_test(test_hostile_bodies), cmocka_unit_test(test_layers),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
