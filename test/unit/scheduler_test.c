/*
 * pkg/scheduler's dispatcher against an in-process kbatch-apiserver: a
 * session result is fed to kb__dispatch_result as the session's
 * after-callback would, the loop runs until every request is answered, and
 * the server is asked what happened.  No session runs here: the results are
 * made by hand, so paths no action exercises yet (evictions) are covered.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apiserver/apiserver.h"
#include "scheduler/scheduler-int.h"

struct fixture {
        struct kb_apiserver *srv;
        struct kb_sched s;
        struct kb_sched_opts o;
        uv_timer_t timer;
};

static int call(struct kb_apiserver *srv, const char *method, const char *path, const char *body,
                struct kb_value **out)
{
        struct kb_api_req req = {.method = method,
                                 .path = path,
                                 .content_type = "application/json",
                                 .body = body,
                                 .body_len = body ? strlen(body) : 0};
        struct kb_api_resp resp;
        kb_apiserver_handle(srv, &req, &resp);
        int code = resp.status;
        if (out) {
                *out = NULL;
                assert_int_equal(kb_json_parse(resp.body.data ? resp.body.data : "", resp.body.len,
                                               out, NULL, 0),
                                 0);
        }
        kb_api_resp_release(&resp);
        return code;
}

/* The test owns the loop, as scheduler.c does in the daemon: no stop is
 * under way, so an answer that comes back finishes nothing. */
static void settled(struct kb_sched *s)
{
        (void)s;
}

static void stop(struct kb_sched *s, int code)
{
        fail_msg("the daemon was told to stop (exit code %d)", code);
}

static int setup(void **state)
{
        struct fixture *f = kb_xcalloc(1, sizeof(*f));
        struct kb_apiserver_opts ao;
        char err[256];
        kb_apiserver_opts_init(&ao);
        ao.seed = 3;
        f->srv = kb_apiserver_new(&ao);
        assert_int_equal(kb_apiserver_add_nodes(f->srv, "1:cpu=8,memory=32Gi", err, sizeof(err)),
                         0);
        assert_int_equal(kb_apiserver_start(f->srv, "127.0.0.1", 0), 0);

        struct kb_sched *s = &f->s;
        kb_sched_opts_init(&f->o);
        s->o = &f->o;
        s->identity = kb_xstrdup("test");
        s->leader = true;
        s->settled = settled;
        s->stop = stop;
        assert_int_equal(uv_loop_init(&s->loop), 0);
        char *server = kb_xasprintf("http://127.0.0.1:%d", kb_apiserver_port(f->srv));
        struct kb_kube_config cfg = {.server = server};
        s->kube = kb_kube_new(&s->loop, &cfg, NULL);
        free(server);
        s->cache = kb_cache_new();
        s->metrics = kb__metrics_new();
        uv_timer_init(&s->loop, &f->timer);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        struct kb_sched *s = &f->s;
        kb_kube_free(s->kube);
        uv_close((uv_handle_t *)&f->timer, NULL);
        uv_run(&s->loop, UV_RUN_DEFAULT);
        assert_int_equal(uv_loop_close(&s->loop), 0);
        kb__dispatch_release(s);
        kb_cache_free(s->cache);
        kb__metrics_free(s->metrics);
        free(s->identity);
        kb_apiserver_free(f->srv);
        free(f);
        return 0;
}

/* Puts the server's pod into the cache (as the reflector would) and returns
 * the cached object. */
static const struct kb_pod *cache_pod(struct fixture *f, const char *name)
{
        struct kb_value *doc;
        char *path = kb_xasprintf("/api/v1/namespaces/default/pods/%s", name);
        assert_int_equal(call(f->srv, "GET", path, NULL, &doc), 200);
        assert_int_equal(kb_cache_upsert(f->s.cache, KB_KIND_POD, doc), 0);
        kb_value_free(doc);
        free(path);
        return kb_cache_get(f->s.cache, KB_KIND_POD, "default", name);
}

static void tick(uv_timer_t *t)
{
        struct fixture *f = t->data;
        if (f->s.binds_inflight == 0 && kb_kube_inflight(f->s.kube) == 0)
                uv_stop(&f->s.loop);
}

/* Runs the loop until nothing is in flight (at most 10 seconds). */
static void drain(struct fixture *f)
{
        f->timer.data = f;
        uv_timer_start(&f->timer, tick, 10, 10);
        double end = kb_now_mono() + 10;
        while (kb_now_mono() < end) {
                uv_run(&f->s.loop, UV_RUN_DEFAULT);
                if (f->s.binds_inflight == 0 && kb_kube_inflight(f->s.kube) == 0)
                        break;
        }
        uv_timer_stop(&f->timer);
        assert_int_equal(f->s.binds_inflight, 0);
}

static void test_eviction(void **state)
{
        struct fixture *f = *state;
        /* A running pod with a 7 s grace period, bound to node-1. */
        assert_int_equal(
            call(f->srv, "POST", "/api/v1/namespaces/default/pods",
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"victim\"},"
                 "\"spec\":{\"nodeName\":\"node-1\",\"terminationGracePeriodSeconds\":7,"
                 "\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                 NULL),
            201);
        const struct kb_pod *p = cache_pod(f, "victim");
        assert_non_null(p);
        assert_int_equal(p->grace_period, 7);

        /* A pod the server no longer has: its eviction ends at the 404. */
        assert_int_equal(call(f->srv, "POST", "/api/v1/namespaces/default/pods",
                              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                              "\"ghost\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
                              "\"x\"}]}}",
                              NULL),
                         201);
        const struct kb_pod *ghost = cache_pod(f, "ghost");
        assert_int_equal(
            call(f->srv, "DELETE", "/api/v1/namespaces/default/pods/ghost", NULL, NULL), 200);

        struct kb_result r = {0};
        kb_pool_init(&r.pool, 0);
        struct kb_eviction ev[2] = {{p, "preempt", "preempted by default/high", "default/high"},
                                    {ghost, "reclaim", "reclaimed", NULL}};
        r.evictions = ev;
        r.nevictions = 2;
        struct kb_cache_snap snap = {0};
        kb__dispatch_result(&f->s, &snap, &r);
        assert_int_equal(f->s.binds_inflight, 2);
        /* A second session deciding the same while the first is in flight
         * sends nothing more. */
        kb__dispatch_result(&f->s, &snap, &r);
        assert_int_equal(f->s.binds_inflight, 2);
        drain(f);
        kb_pool_release(&r.pool);

        /* The pod is terminating with its own grace period (the simulated
         * kubelet keeps it that long). */
        struct kb_value *doc;
        assert_int_equal(call(f->srv, "GET", "/api/v1/namespaces/default/pods/victim", NULL, &doc),
                         200);
        assert_non_null(kb_value_dig(doc, "metadata", "deletionTimestamp", NULL));
        int64_t g = 0;
        assert_int_equal(
            kb_value_int(kb_value_dig(doc, "metadata", "deletionGracePeriodSeconds", NULL), &g), 0);
        assert_int_equal(g, 7);
        kb_value_free(doc);

        /* One Warning "Evict" event on the victim, with the reason. */
        assert_int_equal(call(f->srv, "GET", "/api/v1/namespaces/default/events", NULL, &doc), 200);
        const struct kb_value *items = kb_value_get(doc, "items");
        int evicts = 0;
        for (size_t i = 0; kb_value_is(items, KB_VARRAY) && i < items->arr.n; i++) {
                const struct kb_value *e = items->arr.v[i];
                if (!kb_streq(kb_value_str(kb_value_get(e, "reason")), "Evict"))
                        continue;
                evicts++;
                assert_string_equal(kb_value_str(kb_value_dig(e, "involvedObject", "name", NULL)),
                                    "victim");
                assert_string_equal(kb_value_str(kb_value_get(e, "type")), "Warning");
                assert_string_equal(kb_value_str(kb_value_get(e, "message")),
                                    "preempted by default/high");
        }
        assert_int_equal(evicts, 1);
        kb_value_free(doc);
}

static void test_nomination(void **state)
{
        struct fixture *f = *state;
        assert_int_equal(
            call(f->srv, "POST", "/api/v1/namespaces/default/pods",
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"waiter\"},"
                 "\"spec\":{\"schedulerName\":\"kbatch\",\"containers\":[{\"name\":\"c\","
                 "\"image\":\"x\"}]}}",
                 NULL),
            201);
        const struct kb_pod *p = cache_pod(f, "waiter");
        struct kb_result r = {0};
        kb_pool_init(&r.pool, 0);
        struct kb_nomination nm = {p, "node-1"};
        r.nominations = &nm;
        r.nnominations = 1;
        struct kb_cache_snap snap = {0};
        kb__dispatch_result(&f->s, &snap, &r);
        drain(f);

        struct kb_value *doc;
        assert_int_equal(call(f->srv, "GET", "/api/v1/namespaces/default/pods/waiter", NULL, &doc),
                         200);
        assert_string_equal(kb_value_str(kb_value_dig(doc, "status", "nominatedNodeName", NULL)),
                            "node-1");
        assert_int_equal(kb_cache_upsert(f->s.cache, KB_KIND_POD, doc), 0);
        kb_value_free(doc);

        /* The pod says it now: the next session's nomination sends nothing. */
        p = kb_cache_get(f->s.cache, KB_KIND_POD, "default", "waiter");
        nm.pod = p;
        kb__dispatch_result(&f->s, &snap, &r);
        assert_int_equal(kb_kube_inflight(f->s.kube), 0);
        kb_pool_release(&r.pool);
}

/* Events on the server for an object and reason. */
static size_t server_events(struct fixture *f, const char *name, const char *reason,
                            struct kb_value **first)
{
        struct kb_value *doc;
        assert_int_equal(call(f->srv, "GET", "/api/v1/namespaces/default/events", NULL, &doc), 200);
        const struct kb_value *items = kb_value_get(doc, "items");
        size_t n = 0;
        for (size_t i = 0; kb_value_is(items, KB_VARRAY) && i < items->arr.n; i++) {
                const struct kb_value *e = items->arr.v[i];
                if ((name &&
                     !kb_streq(kb_value_str(kb_value_dig(e, "involvedObject", "name", NULL)),
                               name)) ||
                    !kb_streq(kb_value_str(kb_value_get(e, "reason")), reason))
                        continue;
                if (n++ == 0 && first)
                        *first = kb_value_clone(e);
        }
        kb_value_free(doc);
        return n;
}

/* An eviction a PodDisruptionBudget refuses: the 429 comes back at once,
 * the pod stays, an EvictionRefused event names the budget, the group the
 * room was for gets a note, and the next session's eviction of the same
 * pod is held off rather than sent. */
static void test_eviction_refused(void **state)
{
        struct fixture *f = *state;
        assert_int_equal(
            call(f->srv, "POST", "/api/v1/namespaces/default/pods",
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"guarded\","
                 "\"labels\":{\"app\":\"g\"}},\"spec\":{\"nodeName\":\"node-1\","
                 "\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                 NULL),
            201);
        /* Running and ready, as a kubelet would say (a merge patch). */
        const char *ready = "{\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":"
                            "\"Ready\",\"status\":\"True\"}]}}";
        struct kb_api_req req = {.method = "PATCH",
                                 .path = "/api/v1/namespaces/default/pods/guarded/status",
                                 .content_type = "application/merge-patch+json",
                                 .body = ready,
                                 .body_len = strlen(ready)};
        struct kb_api_resp resp;
        kb_apiserver_handle(f->srv, &req, &resp);
        assert_int_equal(resp.status, 200);
        kb_api_resp_release(&resp);
        assert_int_equal(call(f->srv, "POST",
                              "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
                              "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
                              "\"metadata\":{\"name\":\"keep-one\"},\"spec\":{\"minAvailable\":1,"
                              "\"selector\":{\"matchLabels\":{\"app\":\"g\"}}}}",
                              NULL),
                         201);
        const struct kb_pod *p = cache_pod(f, "guarded");
        struct kb_result r = {0};
        struct kb_eviction ev = {p, "preempt", "evicted by preempt to make room for default/high-0",
                                 "default/high"};
        r.evictions = &ev;
        r.nevictions = 1;
        struct kb_cache_snap snap = {0};
        double t0 = kb_now_mono();
        kb__dispatch_result(&f->s, &snap, &r);
        assert_int_equal(f->s.binds_inflight, 1);
        drain(f);
        /* Answered once, not retried with backoff. */
        assert_true(kb_now_mono() - t0 < 2);

        struct kb_value *doc;
        assert_int_equal(call(f->srv, "GET", "/api/v1/namespaces/default/pods/guarded", NULL, &doc),
                         200);
        assert_null(kb_value_dig(doc, "metadata", "deletionTimestamp", NULL));
        kb_value_free(doc);

        kb__events_flush(&f->s);
        drain(f);
        struct kb_value *e = NULL;
        assert_int_equal(server_events(f, "guarded", "EvictionRefused", &e), 1);
        const char *msg = kb_value_str(kb_value_get(e, "message"));
        assert_non_null(strstr(msg, "disruption budget"));
        assert_non_null(strstr(msg, "keep-one"));
        assert_non_null(strstr(msg, "default/high-0"));
        kb_value_free(e);
        assert_int_equal(server_events(f, "guarded", "Evict", NULL), 0);

        char *note = kb__evictions_refused(&f->s, "default/high");
        assert_non_null(note);
        assert_non_null(strstr(note, "the eviction of default/guarded was refused by a "
                                     "PodDisruptionBudget"));
        free(note);
        assert_null(kb__evictions_refused(&f->s, "default/other"));

        /* The next session picks it again: nothing is sent. */
        kb__dispatch_result(&f->s, &snap, &r);
        assert_int_equal(f->s.binds_inflight, 0);
        assert_int_equal(kb_kube_inflight(f->s.kube), 0);
}

static void test_events(void **state)
{
        struct fixture *f = *state;
        struct kb_sched *s = &f->s;
        /* The same object and reason five times, the message changing: one
         * record and one Event, created with the first.  The first change
         * of its message goes as soon as the create is answered (the
         * reason that stands should not wait a period behind the first
         * session's), carrying the latest message and the count so far. */
        for (int i = 0; i < 5; i++) {
                char msg[64];
                snprintf(msg, sizeof(msg), "0/1 nodes are available: attempt %d", i);
                kb__event(s, "Pod", "v1", "default", "p1", "uid-1", "Warning", "FailedScheduling",
                          msg);
        }
        drain(f);
        struct kb_value *e = NULL;
        assert_int_equal(server_events(f, "p1", "FailedScheduling", &e), 1);
        assert_string_equal(kb_value_str(kb_value_get(e, "message")),
                            "0/1 nodes are available: attempt 4");
        kb_value_free(e);
        size_t records, unsent;
        kb__events_stats(s, &records, &unsent);
        assert_int_equal(records, 1);
        assert_int_equal(unsent, 0);
        /* Later changes wait for the patch period, folded into the count. */
        kb__event(s, "Pod", "v1", "default", "p1", "uid-1", "Warning", "FailedScheduling",
                  "0/1 nodes are available: attempt 5");
        drain(f);
        assert_int_equal(server_events(f, "p1", "FailedScheduling", &e), 1);
        assert_string_equal(kb_value_str(kb_value_get(e, "message")),
                            "0/1 nodes are available: attempt 4");
        kb_value_free(e);
        kb__events_stats(s, &records, &unsent);
        assert_int_equal(unsent, 1);
        /* After the patch period, the next repeat patches the count and the
         * message that changed. */
        usleep(5100 * 1000);
        kb__event(s, "Pod", "v1", "default", "p1", "uid-1", "Warning", "FailedScheduling",
                  "0/1 nodes are available: final");
        drain(f);
        assert_int_equal(server_events(f, "p1", "FailedScheduling", &e), 1);
        assert_string_equal(kb_value_str(kb_value_get(e, "message")),
                            "0/1 nodes are available: final");
        int64_t count = 0;
        assert_int_equal(kb_value_int(kb_value_get(e, "count"), &count), 0);
        assert_int_equal(count, 7);
        kb_value_free(e);

        /* A flood of distinct events (the Scheduled event of 30,000
         * binds): each is O(1), at most 4096 records are kept, and what
         * the event rate does not allow is dropped, never queued without
         * bound. */
        double t0 = kb_now_mono();
        for (int i = 0; i < 30000; i++) {
                char name[32], msg[96];
                snprintf(name, sizeof(name), "flood-%d", i);
                snprintf(msg, sizeof(msg), "Successfully assigned default/%s to node-1", name);
                kb__event(s, "Pod", "v1", "default", name, NULL, "Normal", "Scheduled", msg);
        }
        double took = kb_now_mono() - t0;
        print_message("30000 events recorded in %.3fs\n", took);
        kb__events_stats(s, &records, &unsent);
        assert_int_equal(records, 4096);
        assert_true(kb_kube_waiting(s->kube, KB_KUBE_LANE_EVENT) <= 1000);
        drain(f);
        size_t sent = server_events(f, NULL, "Scheduled", NULL);
        print_message("%zu Scheduled events reached the server\n", sent);
        /* The bucket's burst (200) and what it refilled meanwhile. */
        assert_true(sent >= 100 && sent <= 200 + (size_t)((kb_now_mono() - t0) * 100) + 1);
}

/* A Lease at the most transitions an int32 holds: the candidate that
 * takes it over writes a count the API accepts (ValidateLeaseSpec: an
 * int32 >= 0), where (int)transitions + 1 overflowed (undefined
 * behaviour; UBSan stops the test).  A negative count reads as 0. */
static void test_lease_transitions(void **state)
{
        (void)state;
        static const struct {
                const char *transitions;
                bool mine;
                int64_t want;
        } cases[] = {
            {"3", false, 4},
            {"3", true, 3},
            {"2147483647", false, 2147483647},
            {"9223372036854775807", false, 2147483647},
            {"-4", false, 1},
            {"-4", true, 0},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                char *body = kb_xasprintf(
                    "{\"metadata\":{\"resourceVersion\":\"42\"},\"spec\":{\"holderIdentity\":"
                    "\"other\",\"acquireTime\":\"2026-01-01T00:00:00.000000Z\","
                    "\"leaseTransitions\":%s}}",
                    cases[i].transitions);
                struct kb__lease l;
                assert_int_equal(kb__lease_parse(body, strlen(body), &l), 0);
                assert_string_equal(l.holder, "other");
                assert_string_equal(l.rv, "42");
                char *next = kb__lease_body("kbatch-system", "kbatch", l.rv, "me",
                                            cases[i].mine ? l.acquire : NULL,
                                            l.transitions + !cases[i].mine, 15);
                struct kb_value *v;
                assert_int_equal(kb_json_parse(next, strlen(next), &v, NULL, 0), 0);
                int64_t got = -1;
                assert_int_equal(
                    kb_value_int(kb_value_dig(v, "spec", "leaseTransitions", NULL), &got), 0);
                if (got != cases[i].want)
                        fail_msg("leaseTransitions %s: wrote %lld, want %lld", cases[i].transitions,
                                 (long long)got, (long long)cases[i].want);
                assert_string_equal(
                    kb_value_str(kb_value_dig(v, "metadata", "resourceVersion", NULL)), "42");
                kb_value_free(v);
                free(next);
                kb_value_free(l.doc);
                free(body);
        }
}

/* The PodScheduled condition of a pod without a PodGroup that the session
 * left Pending, as the server has it. */
static void server_condition(struct fixture *f, const char *name, char *msg, size_t msglen,
                             char *ltt, size_t lttlen)
{
        struct kb_value *doc;
        char *path = kb_xasprintf("/api/v1/namespaces/default/pods/%s", name);
        assert_int_equal(call(f->srv, "GET", path, NULL, &doc), 200);
        free(path);
        const struct kb_value *conds = kb_value_dig(doc, "status", "conditions", NULL);
        msg[0] = ltt[0] = 0;
        for (size_t i = 0; kb_value_is(conds, KB_VARRAY) && i < conds->arr.n; i++) {
                const struct kb_value *c = conds->arr.v[i];
                if (!kb_streq(kb_value_str(kb_value_get(c, "type")), "PodScheduled"))
                        continue;
                assert_string_equal(kb_value_str(kb_value_get(c, "status")), "False");
                snprintf(msg, msglen, "%s", kb_value_str(kb_value_get(c, "message")));
                snprintf(ltt, lttlen, "%s", kb_value_str(kb_value_get(c, "lastTransitionTime")));
        }
        kb_value_free(doc);
}

/* The pod's resourceVersion on the server: it moves with every write. */
static char *pod_rv(struct fixture *f, const char *name)
{
        struct kb_value *doc;
        char *path = kb_xasprintf("/api/v1/namespaces/default/pods/%s", name);
        assert_int_equal(call(f->srv, "GET", path, NULL, &doc), 200);
        free(path);
        char *rv = kb_xstrdup(kb_value_str(kb_value_dig(doc, "metadata", "resourceVersion", NULL)));
        kb_value_free(doc);
        return rv;
}

/* kb__pod_failures for one lone pod and message, as a session's
 * dispatch calls it. */
static void pod_failure(struct fixture *f, const struct kb_pod *p, const char *msg)
{
        struct kb_result r = {0};
        struct kb_pod_status ps = {p, msg};
        r.unschedulable = &ps;
        r.nunschedulable = 1;
        struct kb_cache_snap snap = {0};
        kb__pod_failures(&f->s, &snap, &r);
}

/* A pending pod's PodScheduled=False condition: written when the pod would
 * change, never when it says it already (a restarted scheduler rewrites
 * nothing), and its lastTransitionTime kept while the status stays False,
 * as kube-scheduler's UpdatePodCondition keeps it. */
static void test_pod_condition(void **state)
{
        struct fixture *f = *state;
        assert_int_equal(
            call(f->srv, "POST", "/api/v1/namespaces/default/pods",
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"lone\"},"
                 "\"spec\":{\"schedulerName\":\"kbatch\",\"containers\":[{\"name\":\"c\","
                 "\"image\":\"x\"}]}}",
                 NULL),
            201);
        /* A condition as an earlier scheduler left it (create drops
         * status, so through the status subresource). */
        const char *cond = "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":"
                           "\"False\",\"reason\":\"Unschedulable\",\"message\":\"0/1 nodes are "
                           "available: 1 Insufficient cpu.\",\"lastTransitionTime\":"
                           "\"2020-01-02T03:04:05Z\"}]}}";
        struct kb_api_req req = {.method = "PATCH",
                                 .path = "/api/v1/namespaces/default/pods/lone/status",
                                 .content_type = "application/strategic-merge-patch+json",
                                 .body = cond,
                                 .body_len = strlen(cond)};
        struct kb_api_resp resp;
        kb_apiserver_handle(f->srv, &req, &resp);
        assert_int_equal(resp.status, 200);
        kb_api_resp_release(&resp);
        char msg[256], ltt[64];
        server_condition(f, "lone", msg, sizeof(msg), ltt, sizeof(ltt));
        assert_string_equal(ltt, "2020-01-02T03:04:05Z");

        /* What the pod says already: nothing is written (the event aside). */
        const struct kb_pod *p = cache_pod(f, "lone");
        char *rv0 = pod_rv(f, "lone");
        pod_failure(f, p, "0/1 nodes are available: 1 Insufficient cpu.");
        drain(f);
        char *rv1 = pod_rv(f, "lone");
        assert_string_equal(rv1, rv0);
        free(rv1);

        /* A new message, the status still False: written, the time kept. */
        pod_failure(f, p, "0/1 nodes are available: 1 Insufficient memory.");
        drain(f);
        server_condition(f, "lone", msg, sizeof(msg), ltt, sizeof(ltt));
        assert_string_equal(msg, "0/1 nodes are available: 1 Insufficient memory.");
        assert_string_equal(ltt, "2020-01-02T03:04:05Z");
        rv1 = pod_rv(f, "lone");
        assert_string_not_equal(rv1, rv0);

        /* The same again before the watch brings the write back: the memo
         * sends nothing; nor once the cache has it. */
        pod_failure(f, p, "0/1 nodes are available: 1 Insufficient memory.");
        drain(f);
        p = cache_pod(f, "lone");
        pod_failure(f, p, "0/1 nodes are available: 1 Insufficient memory.");
        drain(f);
        char *rv2 = pod_rv(f, "lone");
        assert_string_equal(rv2, rv1);
        free(rv0);
        free(rv1);
        free(rv2);
}

/* client-go's spam filter: 25 writes per object (all reasons together),
 * then one per 5 minutes.  Thirty reasons on one pod create 25 Events; a
 * second pod has its own bucket. */
static void test_event_spam(void **state)
{
        struct fixture *f = *state;
        struct kb_sched *s = &f->s;
        for (int i = 0; i < 30; i++) {
                char reason[32];
                snprintf(reason, sizeof(reason), "Reason%d", i);
                kb__event(s, "Pod", "v1", "default", "noisy", "uid-n", "Warning", reason, "m");
                kb__event(s, "Pod", "v1", "default", "other", "uid-o", "Warning", reason, "m");
        }
        drain(f);
        kb__events_flush(s);
        drain(f);
        size_t noisy = 0, other = 0;
        for (int i = 0; i < 30; i++) {
                char reason[32];
                snprintf(reason, sizeof(reason), "Reason%d", i);
                noisy += server_events(f, "noisy", reason, NULL);
                other += server_events(f, "other", reason, NULL);
        }
        assert_int_equal(noisy, 25);
        assert_int_equal(other, 25);
        /* What was held back is kept, not forgotten: 5 of each wait. */
        size_t records, unsent;
        kb__events_stats(s, &records, &unsent);
        assert_int_equal(records, 60);
        assert_int_equal(unsent, 10);

        /* Repeats alone change nothing but the count: no write follows at
         * once (the series starts after the patch period, then every 30
         * minutes). */
        for (int k = 0; k < 100; k++)
                kb__event(s, "Pod", "v1", "default", "third", "uid-t", "Warning",
                          "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.");
        drain(f);
        kb__events_flush(s);
        assert_int_equal(kb_kube_inflight(s->kube), 0);
        struct kb_value *e = NULL;
        assert_int_equal(server_events(f, "third", "FailedScheduling", &e), 1);
        int64_t count = 0;
        assert_int_equal(kb_value_int(kb_value_get(e, "count"), &count), 0);
        assert_int_equal(count, 1);
        kb_value_free(e);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_eviction, setup, teardown),
            cmocka_unit_test_setup_teardown(test_eviction_refused, setup, teardown),
            cmocka_unit_test_setup_teardown(test_nomination, setup, teardown),
            cmocka_unit_test_setup_teardown(test_events, setup, teardown),
            cmocka_unit_test(test_lease_transitions),
            cmocka_unit_test_setup_teardown(test_pod_condition, setup, teardown),
            cmocka_unit_test_setup_teardown(test_event_spam, setup, teardown),
        };
        return cmocka_run_group_tests_name("scheduler", tests, NULL, NULL);
}
