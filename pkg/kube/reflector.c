/*
 * Reflectors, as client-go's: list the collection in pages (limit=500 and
 * continue), then watch from the list's resourceVersion with bookmarks.
 * Every event moves the resourceVersion on, so a dropped stream rewatches
 * from where it stopped; a 410 Gone (as an HTTP status or an ERROR event)
 * means history was lost and the reflector lists again.  Failures back off
 * exponentially with jitter, reset by a watch that delivered something.
 *
 *   list p1 (rv -) -> list p2 (continue) -> [list_end] -> watch rv=17
 *     ADDED/MODIFIED -> upsert, DELETED -> remove, BOOKMARK -> rv only
 *     stream ends -> watch rv=<last>      ERROR 410 -> list again
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "kube/kube-int.h"

struct kb_reflector {
        struct kb_kube *k;
        char *name;
        char *path;
        char *query;
        struct kb_reflector_ops ops;
        void *arg;
        char *rv;
        char *cont; /* a list's continue token */
        struct kb_kube_call *call;
        uv_timer_t timer;
        bool synced;
        bool listing; /* a paged list is under way (list_begin called) */
        bool relist;  /* the watch ended with 410 */
        bool got_event;
        bool optional; /* a 404 means an API not served: empty (kb_reflector_set_optional) */
        bool absent;   /* the last list was such a 404 */
        bool watching; /* call is a watch (else a list, or nothing) */
        int failures;
        unsigned lists, watches;
        uint64_t rnd;
};

static void start_list(struct kb_reflector *r);
static void start_watch(struct kb_reflector *r);

/* How often an optional collection that is not served is asked for. */
#define ABSENT_RETRY_SECONDS 10

static double rnd01(struct kb_reflector *r)
{
        r->rnd ^= r->rnd << 13;
        r->rnd ^= r->rnd >> 7;
        r->rnd ^= r->rnd << 17;
        return (double)(r->rnd >> 11) / 9007199254740992.0;
}

static void set_rv(struct kb_reflector *r, const char *rv)
{
        if (!rv || !*rv)
                return;
        free(r->rv);
        r->rv = kb_xstrdup(rv);
}

static void timer_fired(uv_timer_t *t)
{
        struct kb_reflector *r = t->data;
        if (r->relist || !r->rv)
                start_list(r);
        else
                start_watch(r);
}

/* Schedules the next list or watch after a failure. */
static void retry_later(struct kb_reflector *r)
{
        r->failures++;
        double d = kb_kube_backoff(r->failures, 0.5, 30.0, rnd01(r));
        KB_V(2, "reflector %s: retrying in %.2fs", r->name, d);
        uv_timer_start(&r->timer, timer_fired, (uint64_t)(d * 1000), 0);
}

/* ---- list ------------------------------------------------------------------ */

/* An optional collection the API server does not serve (a CRD not
 * installed; 404) or will not show us (an RBAC from before the
 * collection was read; 403): as an empty list, synced, and asked for
 * again later.  A 403 waited on as a required list would stop every
 * session after an upgrade that kept the old ClusterRole. */
static void absent(struct kb_reflector *r, long status)
{
        if (!r->absent && status == 403)
                KB_WARN("reflector %s: forbidden (HTTP 403): the scheduler's RBAC does not "
                        "grant list/watch on %s (apply deploy/rbac.yaml); taken as empty, "
                        "asking again every %ds",
                        r->name, r->path, ABSENT_RETRY_SECONDS);
        else if (!r->absent)
                KB_INFO("reflector %s: not served by the API server (CRD not installed?); "
                        "taken as empty, asking again every %ds",
                        r->name, ABSENT_RETRY_SECONDS);
        r->absent = true;
        if (!r->listing && r->ops.list_begin)
                r->ops.list_begin(r->arg);
        r->listing = false;
        if (r->ops.list_end)
                r->ops.list_end(r->arg);
        free(r->cont);
        r->cont = NULL;
        free(r->rv);
        r->rv = NULL;
        r->synced = true;
        r->failures = 0;
        uv_timer_start(&r->timer, timer_fired, ABSENT_RETRY_SECONDS * 1000, 0);
}

/*
 * The next page's continue token, read from the top of a list page before
 * the page is parsed, so that the next page is asked for while this one is
 * parsed and decoded (the server works on it meanwhile: on a 2-core machine
 * that halves the time of a 140,000-pod list).  API servers write a list's
 * metadata before its items; the token is taken only from there, only when
 * it has no escapes, and checked against the parsed page, which wins.
 */
static char *early_continue(const char *body, size_t len)
{
        const char *items = memmem(body, len, "\"items\":", 8);
        if (!items)
                return NULL;
        size_t lim = (size_t)(items - body);
        const char *c = memmem(body, lim, "\"continue\":\"", 12);
        if (!c)
                return NULL;
        c += 12;
        const char *end = memchr(c, '"', lim - (size_t)(c - body));
        if (!end || end == c || memchr(c, '\\', (size_t)(end - c)))
                return NULL;
        return kb_xstrndup(c, (size_t)(end - c));
}

static void list_done(void *arg, const struct kb_kube_resp *resp)
{
        struct kb_reflector *r = arg;
        r->call = NULL;
        struct kb_value *doc = NULL;
        struct kb_pool pool;
        char err[256];
        if (resp->status == 410 && r->cont) {
                /* The continue token expired: start over. */
                free(r->cont);
                r->cont = NULL;
                retry_later(r);
                return;
        }
        if ((resp->status == 404 || resp->status == 403) && r->optional) {
                absent(r, resp->status);
                return;
        }
        if (resp->status == 404 && !r->absent && kb_has_prefix(r->path, "/apis/")) {
                /* A required CRD that is not installed: one line that names
                 * it and the fix, then quiet (issue 23, point 7); "served
                 * now" when it comes (the list path below). */
                const char *g = r->path + 6, *v = strchr(g, '/');
                const char *res = v ? strrchr(v, '/') : NULL;
                KB_WARN("reflector %s: %s is not served: the CRD %s.%.*s is not installed "
                        "(kubectl apply -f crds/, or deploy/); asking again, quietly",
                        r->name, r->path, res ? res + 1 : r->path, v ? (int)(v - g) : 0, g);
                r->absent = true;
                free(r->cont);
                r->cont = NULL;
                retry_later(r);
                return;
        }
        if (resp->status != 200) {
                if (resp->status == 404 && r->absent)
                        KB_V(2, "reflector %s: list: still 404", r->name);
                else if (resp->status)
                        KB_WARN("reflector %s: list: HTTP %ld: %.200s", r->name, resp->status,
                                resp->body);
                else
                        KB_WARN("reflector %s: list: %s", r->name, resp->error);
                free(r->cont);
                r->cont = NULL;
                retry_later(r);
                return;
        }
        char *next = early_continue(resp->body, resp->len);
        if (next) {
                free(r->cont);
                r->cont = next;
                start_list(r); /* in flight while this page is read */
        }
        /* The page's tree lives in a pool, dropped at once after the
         * items are handed on (each consumer decodes what it keeps). */
        kb_pool_init(&pool, 256 * 1024);
        if (kb_json_parse_pool(resp->body, resp->len, &pool, &doc, err, sizeof(err))) {
                KB_WARN("reflector %s: list: %s", r->name, err);
                kb_pool_release(&pool);
                kb_kube_cancel(r->call);
                r->call = NULL;
                free(r->cont);
                r->cont = NULL;
                retry_later(r);
                return;
        }
        if (!r->listing) {
                r->listing = true;
                if (r->ops.list_begin)
                        r->ops.list_begin(r->arg);
        }
        const struct kb_value *items = kb_value_get(doc, "items");
        if (kb_value_is(items, KB_VARRAY))
                for (size_t i = 0; i < items->arr.n; i++)
                        r->ops.upsert(r->arg, items->arr.v[i]);
        const char *cont = kb_value_str(kb_value_dig(doc, "metadata", "continue", NULL));
        if (next && !kb_streq(cont, r->cont)) {
                /* The early token was not the page's: ask again. */
                KB_V(1, "reflector %s: list: the continue token moved; asking again", r->name);
                kb_kube_cancel(r->call);
                r->call = NULL;
                next = NULL;
        }
        if (!next) {
                free(r->cont);
                r->cont = cont && *cont ? kb_xstrdup(cont) : NULL;
        }
        if (r->cont) {
                kb_pool_release(&pool);
                if (!next)
                        start_list(r);
                return;
        }
        if (r->absent)
                KB_INFO("reflector %s: served now", r->name);
        r->absent = false;
        /* The last page's resourceVersion is the list's. */
        set_rv(r, kb_value_str(kb_value_dig(doc, "metadata", "resourceVersion", NULL)));
        kb_pool_release(&pool);
        r->listing = false;
        r->relist = false;
        if (r->ops.list_end)
                r->ops.list_end(r->arg);
        if (!r->synced)
                KB_V(1, "reflector %s: synced", r->name);
        r->synced = true;
        r->failures = 0;
        start_watch(r);
}

static void start_list(struct kb_reflector *r)
{
        struct kb_buf p;
        kb_buf_init(&p);
        kb_buf_printf(&p, "%s?limit=500", r->path);
        if (r->query)
                kb_buf_printf(&p, "&%s", r->query);
        if (r->cont) {
                char *e = curl_easy_escape(NULL, r->cont, 0);
                kb_buf_printf(&p, "&continue=%s", e);
                curl_free(e);
        }
        /* A paged list that broke off starts over; its list_begin stands. */
        if (!r->cont)
                r->lists++;
        struct kb_kube_req req = {.method = "GET", .path = p.data};
        r->watching = false;
        r->call = kb_kube_request(r->k, &req, list_done, r);
        kb_buf_release(&p);
}

/* ---- watch ------------------------------------------------------------------ */

int kb_watch_event_parse(const char *line, size_t len, struct kb_watch_event *ev, char *err,
                         size_t errlen)
{
        static const char *const types[] = {
            [KB_WATCH_ADDED] = "ADDED",     [KB_WATCH_MODIFIED] = "MODIFIED",
            [KB_WATCH_DELETED] = "DELETED", [KB_WATCH_BOOKMARK] = "BOOKMARK",
            [KB_WATCH_ERROR] = "ERROR",
        };
        memset(ev, 0, sizeof(*ev));
        /* One chunk holds a typical event's tree. */
        kb_pool_init(&ev->pool, 16 * 1024);
        char perr[256];
        struct kb_value *doc;
        if (kb_json_parse_pool(line, len, &ev->pool, &doc, perr, sizeof(perr))) {
                snprintf(err, errlen, "watch event: %s", perr);
                kb_watch_event_release(ev);
                return KB_EBADINPUT;
        }
        const char *type = kb_value_str(kb_value_get(doc, "type"));
        ev->object = kb_value_get(doc, "object");
        if (!type || !kb_value_is(ev->object, KB_VOBJECT)) {
                snprintf(err, errlen, "watch event: %s",
                         type ? "object: not an object" : "type: missing");
                kb_watch_event_release(ev);
                return KB_EBADINPUT;
        }
        size_t i = 0;
        while (i < KB_ARRAY_SIZE(types) && strcmp(types[i], type))
                i++;
        if (i == KB_ARRAY_SIZE(types)) {
                snprintf(err, errlen, "watch event: type: unknown \"%.40s\"", type);
                kb_watch_event_release(ev);
                return KB_EBADINPUT;
        }
        ev->type = (enum kb_watch_type)i;
        ev->resource_version =
            kb_value_str(kb_value_dig(ev->object, "metadata", "resourceVersion", NULL));
        if (ev->type == KB_WATCH_ERROR) {
                kb_value_int(kb_value_get(ev->object, "code"), &ev->code);
                ev->message = kb_value_str(kb_value_get(ev->object, "message"));
        }
        return 0;
}

void kb_watch_event_release(struct kb_watch_event *ev)
{
        kb_pool_release(&ev->pool);
        memset(ev, 0, sizeof(*ev));
}

static void watch_line(void *arg, const char *line, size_t len)
{
        struct kb_reflector *r = arg;
        struct kb_watch_event ev;
        char err[256];
        if (r->relist)
                return;
        if (kb_watch_event_parse(line, len, &ev, err, sizeof(err))) {
                KB_WARN("reflector %s: %s", r->name, err);
                return;
        }
        switch (ev.type) {
        case KB_WATCH_ERROR:
                KB_V(1, "reflector %s: watch error %lld: %s", r->name, (long long)ev.code,
                     ev.message ? ev.message : "");
                if (ev.code == 410)
                        r->relist = true;
                break;
        case KB_WATCH_ADDED:
        case KB_WATCH_MODIFIED:
                r->got_event = true;
                r->ops.upsert(r->arg, ev.object);
                set_rv(r, ev.resource_version);
                break;
        case KB_WATCH_DELETED:
                r->got_event = true;
                r->ops.remove(r->arg, ev.object);
                set_rv(r, ev.resource_version);
                break;
        case KB_WATCH_BOOKMARK:
                r->got_event = true;
                set_rv(r, ev.resource_version);
                break;
        }
        kb_watch_event_release(&ev);
}

static void watch_done(void *arg, const struct kb_kube_resp *resp)
{
        struct kb_reflector *r = arg;
        r->call = NULL;
        /* 410: history lost; 404 on an optional API: it may be gone. */
        if (resp->status == 410 || ((resp->status == 404 || resp->status == 403) && r->optional))
                r->relist = true;
        if (r->relist) {
                KB_V(1, "reflector %s: resourceVersion %s expired, listing again", r->name,
                     r->rv ? r->rv : "");
                r->failures = 0;
                start_list(r);
                return;
        }
        if (resp->status == 200 && r->got_event) {
                /* A stream that ended after delivering: rewatch at once. */
                r->failures = 0;
                start_watch(r);
                return;
        }
        if (resp->status && resp->status != 200)
                KB_WARN("reflector %s: watch: HTTP %ld", r->name, resp->status);
        else if (resp->status == 0)
                KB_V(1, "reflector %s: watch: %s", r->name, resp->error ? resp->error : "closed");
        retry_later(r);
}

static void start_watch(struct kb_reflector *r)
{
        struct kb_buf p;
        kb_buf_init(&p);
        /* A server-side timeout of 5 to 10 minutes, as client-go picks, and
         * a client-side cap a little above it for a silent dead peer. */
        int secs = 300 + (int)(rnd01(r) * 300);
        kb_buf_printf(&p, "%s?watch=true&allowWatchBookmarks=true&timeoutSeconds=%d", r->path,
                      secs);
        if (r->rv)
                kb_buf_printf(&p, "&resourceVersion=%s", r->rv);
        if (r->query)
                kb_buf_printf(&p, "&%s", r->query);
        r->watches++;
        r->got_event = false;
        r->watching = true;
        r->call = kb_kube_watch(r->k, p.data, secs + 30, watch_line, watch_done, r);
        kb_buf_release(&p);
}

/* ---- public -------------------------------------------------------------------- */

struct kb_reflector *kb_reflector_new(struct kb_kube *k, const char *name, const char *path,
                                      const char *query, const struct kb_reflector_ops *ops,
                                      void *arg)
{
        struct kb_reflector *r = kb_xcalloc(1, sizeof(*r));
        r->k = k;
        r->name = kb_xstrdup(name);
        r->path = kb_xstrdup(path);
        r->query = query ? kb_xstrdup(query) : NULL;
        r->ops = *ops;
        r->arg = arg;
        r->rnd = kb_hash(name, strlen(name), (uint64_t)(kb_now_mono() * 1e9)) | 1;
        uv_timer_init(kb_kube_loop(k), &r->timer);
        r->timer.data = r;
        start_list(r);
        return r;
}

void kb_reflector_set_optional(struct kb_reflector *r)
{
        r->optional = true;
}

bool kb_reflector_synced(const struct kb_reflector *r)
{
        return r->synced;
}

void kb_reflector_counts(const struct kb_reflector *r, unsigned *lists, unsigned *watches)
{
        *lists = r->lists;
        *watches = r->watches;
}

static void reflector_closed(uv_handle_t *h)
{
        struct kb_reflector *r = h->data;
        free(r->name);
        free(r->path);
        free(r->query);
        free(r->rv);
        free(r->cont);
        free(r);
}

void kb_reflector_free(struct kb_reflector *r)
{
        if (!r)
                return;
        kb_kube_cancel(r->call);
        r->call = NULL;
        uv_timer_stop(&r->timer);
        uv_close((uv_handle_t *)&r->timer, reflector_closed);
}

#ifdef KB_TESTING
/* The fuzz target's way in: the answers a server would give, without one.
 * The call in flight is withdrawn first, so that only these answer. */
bool kb__reflector_watching(const struct kb_reflector *r)
{
        return r->watching && r->call;
}

void kb__reflector_retry_now(struct kb_reflector *r)
{
        if (r->call || !uv_is_active((uv_handle_t *)&r->timer))
                return;
        uv_timer_stop(&r->timer);
        timer_fired(&r->timer);
}

void kb__reflector_list_answer(struct kb_reflector *r, const struct kb_kube_resp *resp)
{
        if (!r->call || r->watching)
                return;
        kb_kube_cancel(r->call);
        r->call = NULL;
        list_done(r, resp);
}

void kb__reflector_watch_line(struct kb_reflector *r, const char *line, size_t len)
{
        if (r->call && r->watching)
                watch_line(r, line, len);
}

void kb__reflector_watch_end(struct kb_reflector *r, const struct kb_kube_resp *resp)
{
        if (!r->call || !r->watching)
                return;
        kb_kube_cancel(r->call);
        r->call = NULL;
        watch_done(r, resp);
}
#endif
