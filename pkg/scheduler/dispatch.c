/*
 * The dispatcher: what a session decided goes back to the API server.
 *
 * Binds.  All of a session's binds go out at once (concurrently on the curl
 * multi handle), so a ready gang's pods are bound together.  Each pod is
 * marked binding in the cache first, so the next session cannot place it
 * again however long the answer takes.  The client retries transient
 * failures; a 409 means the pod is already bound (perhaps by an earlier
 * attempt whose answer was lost) and is settled by reading the pod, never by
 * binding again; any other failure forgets the mark and resyncs the pod.
 *
 * Status.  PodGroup status (phase, counts, conditions) is written with a
 * merge patch only when it differs from the object's and from what was last
 * sent; Queue status likewise.  Events are deduplicated as the Kubernetes
 * event recorder does: a repeat of the same object, type, reason and
 * message within EVENT_WINDOW of the last one bumps the count of one Event
 * instead of creating another; the Event is patched with count,
 * lastTimestamp and series {count, lastObservedTime} at most every
 * EVENT_PATCH_PERIOD (so a gang waiting for an hour costs one Event and a
 * patch every few seconds, not an Event per session).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uthash.h>

#include "scheduler/scheduler-int.h"

#define EVENT_PATCH_PERIOD 5.0
/* A repeat after this long starts a new Event, as the recorder's series
 * end after a quiet while. */
#define EVENT_WINDOW 600.0
#define EVENT_MAX    20000

struct kb__status_memo {
        UT_hash_handle hh;
        char *key;
        uint64_t hash;
};

struct kb__evicting {
        UT_hash_handle hh;
        char *key;
};

struct kb__event_rec {
        UT_hash_handle hh;
        char *key;
        char *ns;
        char *name; /* the Event's name, NULL until created */
        int count, sent_count;
        double last_patch;
        double last_seen; /* monotonic */
        char first[40];
        bool creating;
};

void kb__micro_time(char *buf, size_t n)
{
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        char sec[32];
        strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf, n, "%s.%06ldZ", sec, ts.tv_nsec / 1000);
}

static void now_time(char *buf, size_t n)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        kb_format_time((double)ts.tv_sec, buf, n);
}

static const char *ns_of(const struct kb_meta *m)
{
        return m->namespace ? m->namespace : "default";
}

/* ---- memo ------------------------------------------------------------------- */

static bool memo_same(struct kb_sched *s, const char *key, uint64_t h)
{
        struct kb__status_memo *m;
        HASH_FIND_STR(s->memo, key, m);
        return m && m->hash == h;
}

static void memo_set(struct kb_sched *s, const char *key, uint64_t h)
{
        struct kb__status_memo *m;
        HASH_FIND_STR(s->memo, key, m);
        if (!m) {
                m = kb_xcalloc(1, sizeof(*m));
                m->key = kb_xstrdup(key);
                HASH_ADD_KEYPTR(hh, s->memo, m->key, strlen(m->key), m);
        }
        m->hash = h;
}

static void memo_forget(struct kb_sched *s, const char *key)
{
        struct kb__status_memo *m;
        HASH_FIND_STR(s->memo, key, m);
        if (m) {
                HASH_DEL(s->memo, m);
                free(m->key);
                free(m);
        }
}

void kb__dispatch_release(struct kb_sched *s)
{
        struct kb__status_memo *m, *mt;
        HASH_ITER(hh, s->memo, m, mt)
        {
                HASH_DEL(s->memo, m);
                free(m->key);
                free(m);
        }
        struct kb__evicting *x, *xt;
        HASH_ITER(hh, s->evicting, x, xt)
        {
                HASH_DEL(s->evicting, x);
                free(x->key);
                free(x);
        }
        struct kb__event_rec *e, *et;
        HASH_ITER(hh, s->events, e, et)
        {
                HASH_DEL(s->events, e);
                free(e->key);
                free(e->ns);
                free(e->name);
                free(e);
        }
}

/* A request whose answer only needs logging (and forgetting a memo). */
struct fire {
        struct kb_sched *s;
        char *what;
        char *memo_key;
};

static void fire_done(void *arg, const struct kb_kube_resp *r)
{
        struct fire *f = arg;
        if (!r->cancelled && (r->status < 200 || r->status >= 300)) {
                KB_WARN("%s: %ld %.200s", f->what, r->status, r->status ? r->body : r->error);
                if (f->memo_key)
                        memo_forget(f->s, f->memo_key);
        }
        free(f->what);
        free(f->memo_key);
        free(f);
}

static void fire(struct kb_sched *s, const char *method, const char *path, const char *body,
                 const char *ctype, const char *what, const char *memo_key)
{
        struct fire *f = kb_xcalloc(1, sizeof(*f));
        f->s = s;
        f->what = kb_xstrdup(what);
        f->memo_key = memo_key ? kb_xstrdup(memo_key) : NULL;
        struct kb_kube_req req = {.method = method,
                                  .path = path,
                                  .body = body,
                                  .content_type = ctype,
                                  .lane = KB_KUBE_LANE_STATUS};
        kb_kube_request(s->kube, &req, fire_done, f);
}

/* ---- events ------------------------------------------------------------------- */

struct event_call {
        struct kb_sched *s;
        char *key;
};

static void event_created(void *arg, const struct kb_kube_resp *r)
{
        struct event_call *ec = arg;
        struct kb__event_rec *e;
        HASH_FIND_STR(ec->s->events, ec->key, e);
        if (e && !r->cancelled) {
                e->creating = false;
                if (r->status >= 200 && r->status < 300) {
                        struct kb_value *doc = NULL;
                        if (kb_json_parse(r->body, r->len, &doc, NULL, 0) == 0) {
                                const char *n =
                                    kb_value_str(kb_value_dig(doc, "metadata", "name", NULL));
                                if (n)
                                        e->name = kb_xstrdup(n);
                        }
                        kb_value_free(doc);
                } else {
                        KB_V(1, "event %s: %ld", ec->key, r->status);
                        HASH_DEL(ec->s->events, e);
                        ec->s->nevents--;
                        free(e->key);
                        free(e->ns);
                        free(e->name);
                        free(e);
                }
        }
        free(ec->key);
        free(ec);
}

void kb__event(struct kb_sched *s, const char *kind, const char *api_version, const char *ns,
               const char *name, const char *uid, const char *type, const char *reason,
               const char *message)
{
        char *key = kb_xasprintf("%s|%s|%s|%s|%s|%s|%s", kind, ns ? ns : "", name, uid ? uid : "",
                                 type, reason, message);
        struct kb__event_rec *e;
        char ts[40];
        now_time(ts, sizeof(ts));
        HASH_FIND_STR(s->events, key, e);
        double now = kb_now_mono();
        if (e && !e->creating && now - e->last_seen > EVENT_WINDOW) {
                /* The series went quiet: a new Event. */
                HASH_DEL(s->events, e);
                s->nevents--;
                free(e->key);
                free(e->ns);
                free(e->name);
                free(e);
                e = NULL;
        }
        if (e) {
                free(key);
                e->count++;
                e->last_seen = now;
                if (e->name && !e->creating && now - e->last_patch >= EVENT_PATCH_PERIOD) {
                        e->last_patch = now;
                        e->sent_count = e->count;
                        char micro[40];
                        kb__micro_time(micro, sizeof(micro));
                        char *body = kb_xasprintf(
                            "{\"count\":%d,\"lastTimestamp\":\"%s\",\"series\":{\"count\":%d,"
                            "\"lastObservedTime\":\"%s\"}}",
                            e->count, ts, e->count, micro);
                        char *path =
                            kb_xasprintf("/api/v1/namespaces/%s/events/%s", e->ns, e->name);
                        fire(s, "PATCH", path, body, "application/merge-patch+json", "event update",
                             NULL);
                        free(path);
                        free(body);
                }
                return;
        }
        if (s->nevents >= EVENT_MAX) {
                /* Old records only save API calls; start afresh. */
                struct kb__event_rec *x, *xt;
                HASH_ITER(hh, s->events, x, xt)
                {
                        if (x->creating)
                                continue;
                        HASH_DEL(s->events, x);
                        s->nevents--;
                        free(x->key);
                        free(x->ns);
                        free(x->name);
                        free(x);
                }
        }
        e = kb_xcalloc(1, sizeof(*e));
        e->key = key;
        e->ns = kb_xstrdup(ns ? ns : "default");
        e->count = e->sent_count = 1;
        e->creating = true;
        e->last_patch = e->last_seen = now;
        snprintf(e->first, sizeof(e->first), "%s", ts);
        HASH_ADD_KEYPTR(hh, s->events, e->key, strlen(e->key), e);
        s->nevents++;

        struct kb_value *ev = kb_value_new(KB_VOBJECT);
        kb_value_set(ev, "apiVersion", kb_value_new_string("v1"));
        kb_value_set(ev, "kind", kb_value_new_string("Event"));
        struct kb_value *md = kb_value_ensure_object(ev, "metadata");
        char gen[64];
        snprintf(gen, sizeof(gen), "%s.%016llx", name,
                 (unsigned long long)kb_hash(key, strlen(key), (uint64_t)(kb_now_mono() * 1e9)));
        kb_value_set(md, "name", kb_value_new_string(gen));
        kb_value_set(md, "namespace", kb_value_new_string(e->ns));
        struct kb_value *io = kb_value_ensure_object(ev, "involvedObject");
        kb_value_set(io, "kind", kb_value_new_string(kind));
        kb_value_set(io, "apiVersion", kb_value_new_string(api_version));
        if (ns)
                kb_value_set(io, "namespace", kb_value_new_string(ns));
        kb_value_set(io, "name", kb_value_new_string(name));
        if (uid)
                kb_value_set(io, "uid", kb_value_new_string(uid));
        kb_value_set(ev, "reason", kb_value_new_string(reason));
        kb_value_set(ev, "message", kb_value_new_string(message));
        kb_value_set(ev, "type", kb_value_new_string(type));
        kb_value_set(ev, "count", kb_value_new_int(1));
        kb_value_set(ev, "firstTimestamp", kb_value_new_string(ts));
        kb_value_set(ev, "lastTimestamp", kb_value_new_string(ts));
        struct kb_value *src = kb_value_ensure_object(ev, "source");
        kb_value_set(src, "component", kb_value_new_string("kbatch"));
        kb_value_set(ev, "reportingComponent", kb_value_new_string("kbatch"));
        kb_value_set(ev, "reportingInstance", kb_value_new_string(s->identity));
        char *body = kb_json_emit(ev, false);
        kb_value_free(ev);
        char *path = kb_xasprintf("/api/v1/namespaces/%s/events", e->ns);
        struct event_call *ec = kb_xcalloc(1, sizeof(*ec));
        ec->s = s;
        ec->key = kb_xstrdup(e->key);
        struct kb_kube_req req = {
            .method = "POST", .path = path, .body = body, .lane = KB_KUBE_LANE_EVENT};
        kb_kube_request(s->kube, &req, event_created, ec);
        free(path);
        free(body);
}

/* ---- binds -------------------------------------------------------------------- */

struct bind_call {
        struct kb_sched *s;
        char *ns, *name, *uid, *node;
};

static void bind_call_free(struct bind_call *b)
{
        free(b->ns);
        free(b->name);
        free(b->uid);
        free(b->node);
        free(b);
}

/* Reads a pod after a failed or conflicting bind and puts what the server
 * has into the cache; the binding mark goes either way. */
static void resync_done(void *arg, const struct kb_kube_resp *r)
{
        struct bind_call *b = arg;
        struct kb_sched *s = b->s;
        if (!r->cancelled) {
                if (r->status == 200) {
                        struct kb_value *doc = NULL;
                        if (kb_json_parse(r->body, r->len, &doc, NULL, 0) == 0)
                                kb_cache_refresh(s->cache, KB_KIND_POD, doc);
                        kb_value_free(doc);
                }
                kb_cache_bind_done(s->cache, b->ns, b->name, false);
        }
        s->binds_inflight--;
        bind_call_free(b);
        if (!r->cancelled)
                kb__sched_shutdown_check(s);
}

static void bind_done(void *arg, const struct kb_kube_resp *r)
{
        struct bind_call *b = arg;
        struct kb_sched *s = b->s;
        if (r->cancelled) {
                s->binds_inflight--;
                bind_call_free(b);
                return;
        }
        if (r->status == 200 || r->status == 201) {
                kb_cache_bind_done(s->cache, b->ns, b->name, true);
                kb__metrics_bind(s, true);
                KB_V(1, "bound %s/%s to %s", b->ns, b->name, b->node);
                char *msg =
                    kb_xasprintf("Successfully assigned %s/%s to %s", b->ns, b->name, b->node);
                kb__event(s, "Pod", "v1", b->ns, b->name, b->uid, "Normal", "Scheduled", msg);
                free(msg);
                s->binds_inflight--;
                bind_call_free(b);
                kb__sched_shutdown_check(s);
                return;
        }
        kb__metrics_bind(s, false);
        if (r->status == 409)
                KB_INFO("bind %s/%s to %s: conflict, reading the pod: %.200s", b->ns, b->name,
                        b->node, r->body);
        else if (r->status == 404)
                KB_INFO("bind %s/%s: the pod is gone", b->ns, b->name);
        else
                KB_WARN("bind %s/%s to %s failed after %d attempts: %ld %.200s", b->ns, b->name,
                        b->node, r->attempts, r->status, r->status ? r->body : r->error);
        char *path = kb_xasprintf("/api/v1/namespaces/%s/pods/%s", b->ns, b->name);
        struct kb_kube_req req = {.method = "GET", .path = path, .lane = KB_KUBE_LANE_BIND};
        kb_kube_request(s->kube, &req, resync_done, b);
        free(path);
}

static void dispatch_bind(struct kb_sched *s, const struct kb_bind *bd)
{
        const struct kb_pod *p = bd->pod;
        const char *ns = ns_of(&p->meta);
        /* The pod may have changed while the session ran: bind only the one
         * the session saw, still unbound and not already being bound. */
        const struct kb_pod *cur = kb_cache_get(s->cache, KB_KIND_POD, ns, p->meta.name);
        if (!cur || !kb_streq(cur->meta.uid, p->meta.uid) || (cur->node_name && *cur->node_name) ||
            cur->meta.deletion || kb_cache_binding(s->cache, ns, p->meta.name)) {
                KB_V(1, "bind %s/%s skipped: the pod changed during the session", ns, p->meta.name);
                return;
        }
        kb_cache_assume(s->cache, cur, bd->node);
        struct bind_call *b = kb_xcalloc(1, sizeof(*b));
        b->s = s;
        b->ns = kb_xstrdup(ns);
        b->name = kb_xstrdup(p->meta.name);
        b->uid = kb_xstrdup(p->meta.uid ? p->meta.uid : "");
        b->node = kb_xstrdup(bd->node);
        struct kb_value *v = kb_value_new(KB_VOBJECT);
        kb_value_set(v, "apiVersion", kb_value_new_string("v1"));
        kb_value_set(v, "kind", kb_value_new_string("Binding"));
        struct kb_value *md = kb_value_ensure_object(v, "metadata");
        kb_value_set(md, "name", kb_value_new_string(b->name));
        kb_value_set(md, "namespace", kb_value_new_string(ns));
        if (p->meta.uid)
                kb_value_set(md, "uid", kb_value_new_string(p->meta.uid));
        struct kb_value *tg = kb_value_ensure_object(v, "target");
        kb_value_set(tg, "apiVersion", kb_value_new_string("v1"));
        kb_value_set(tg, "kind", kb_value_new_string("Node"));
        kb_value_set(tg, "name", kb_value_new_string(bd->node));
        char *body = kb_json_emit(v, false);
        kb_value_free(v);
        char *path = kb_xasprintf("/api/v1/namespaces/%s/pods/%s/binding", ns, b->name);
        struct kb_kube_req req = {
            .method = "POST", .path = path, .body = body, .lane = KB_KUBE_LANE_BIND};
        s->binds_inflight++;
        kb_kube_request(s->kube, &req, bind_done, b);
        free(path);
        free(body);
}

/* ---- evictions ---------------------------------------------------------------------- */

struct evict_call {
        struct kb_sched *s;
        char *key; /* "ns/name", in s->evicting while in flight */
        char *ns, *name, *uid, *action, *reason;
};

static void evict_done(void *arg, const struct kb_kube_resp *r)
{
        struct evict_call *ev = arg;
        struct kb_sched *s = ev->s;
        struct kb__evicting *e;
        HASH_FIND_STR(s->evicting, ev->key, e);
        if (e) {
                HASH_DEL(s->evicting, e);
                free(e->key);
                free(e);
        }
        if (!r->cancelled) {
                if (r->status == 200 || r->status == 202) {
                        KB_V(1, "evicted %s/%s (%s)", ev->ns, ev->name, ev->action);
                        /* Volcano's evictor records a Warning "Evict" with
                         * the reason on the pod. */
                        kb__event(s, "Pod", "v1", ev->ns, ev->name, ev->uid, "Warning", "Evict",
                                  ev->reason);
                } else if (r->status == 404 || r->status == 409) {
                        /* Gone already, or replaced by a pod of the same
                         * name (the uid precondition failed): done. */
                        KB_V(1, "evict %s/%s: the pod is gone", ev->ns, ev->name);
                } else {
                        KB_WARN("evict %s/%s failed after %d attempts: %ld %.200s", ev->ns,
                                ev->name, r->attempts, r->status, r->status ? r->body : r->error);
                }
        }
        s->binds_inflight--;
        free(ev->key);
        free(ev->ns);
        free(ev->name);
        free(ev->uid);
        free(ev->action);
        free(ev->reason);
        free(ev);
        if (!r->cancelled)
                kb__sched_shutdown_check(s);
}

/* DELETE with the pod's own grace period and its uid as a precondition;
 * the client retries transient failures, a 404 means done. */
static void dispatch_eviction(struct kb_sched *s, const struct kb_eviction *e)
{
        const struct kb_pod *p = e->pod;
        const char *ns = ns_of(&p->meta);
        const struct kb_pod *cur = kb_cache_get(s->cache, KB_KIND_POD, ns, p->meta.name);
        if (!cur || !kb_streq(cur->meta.uid, p->meta.uid) || cur->meta.deletion) {
                KB_V(2, "evict %s/%s skipped: the pod is gone or going", ns, p->meta.name);
                return;
        }
        char *key = kb_xasprintf("%s/%s", ns, p->meta.name);
        struct kb__evicting *x;
        HASH_FIND_STR(s->evicting, key, x);
        if (x) {
                free(key);
                return; /* an earlier session's eviction is in flight */
        }
        x = kb_xcalloc(1, sizeof(*x));
        x->key = key;
        HASH_ADD_KEYPTR(hh, s->evicting, x->key, strlen(x->key), x);

        struct evict_call *ev = kb_xcalloc(1, sizeof(*ev));
        ev->s = s;
        ev->key = kb_xstrdup(key);
        ev->ns = kb_xstrdup(ns);
        ev->name = kb_xstrdup(p->meta.name);
        ev->uid = p->meta.uid ? kb_xstrdup(p->meta.uid) : NULL;
        ev->action = kb_xstrdup(e->action ? e->action : "evict");
        ev->reason = kb_xstrdup(e->reason && *e->reason ? e->reason : ev->action);
        struct kb_value *v = kb_value_new(KB_VOBJECT);
        kb_value_set(v, "apiVersion", kb_value_new_string("v1"));
        kb_value_set(v, "kind", kb_value_new_string("DeleteOptions"));
        if (p->grace_period >= 0)
                kb_value_set(v, "gracePeriodSeconds", kb_value_new_int(p->grace_period));
        if (p->meta.uid)
                kb_value_set(kb_value_ensure_object(v, "preconditions"), "uid",
                             kb_value_new_string(p->meta.uid));
        char *body = kb_json_emit(v, false);
        kb_value_free(v);
        char *path = kb_xasprintf("/api/v1/namespaces/%s/pods/%s", ns, p->meta.name);
        struct kb_kube_req req = {
            .method = "DELETE", .path = path, .body = body, .lane = KB_KUBE_LANE_BIND};
        s->binds_inflight++;
        kb_kube_request(s->kube, &req, evict_done, ev);
        free(path);
        free(body);
}

/* ---- nominations -------------------------------------------------------------------- */

/* status.nominatedNodeName of a pipelined task, through the status
 * subresource, when the pod does not say it already. */
static void dispatch_nomination(struct kb_sched *s, const struct kb_nomination *nm)
{
        const struct kb_pod *p = nm->pod;
        const char *ns = ns_of(&p->meta);
        const struct kb_pod *cur = kb_cache_get(s->cache, KB_KIND_POD, ns, p->meta.name);
        if (!cur || !kb_streq(cur->meta.uid, p->meta.uid) || (cur->node_name && *cur->node_name) ||
            cur->meta.deletion || kb_streq(cur->nominated_node_name, nm->node))
                return;
        uint64_t h = kb_hash(nm->node, strlen(nm->node), KB_HASH_SEED);
        char *mkey =
            kb_xasprintf("nominate/%s/%s/%s", ns, p->meta.name, p->meta.uid ? p->meta.uid : "");
        if (!memo_same(s, mkey, h)) {
                memo_set(s, mkey, h);
                struct kb_value *body = kb_value_new(KB_VOBJECT);
                kb_value_set(kb_value_ensure_object(body, "status"), "nominatedNodeName",
                             kb_value_new_string(nm->node));
                char *text = kb_json_emit(body, false);
                kb_value_free(body);
                char *path = kb_xasprintf("/api/v1/namespaces/%s/pods/%s/status", ns, p->meta.name);
                char *what = kb_xasprintf("pod %s/%s nominatedNodeName", ns, p->meta.name);
                KB_V(1, "nominating %s/%s to %s", ns, p->meta.name, nm->node);
                fire(s, "PATCH", path, text, "application/merge-patch+json", what, mkey);
                free(what);
                free(path);
                free(text);
        }
        free(mkey);
}

/* ---- PodGroup status -------------------------------------------------------------- */

static struct kb_value *cond_json(const char *type, const char *status, const char *reason,
                                  const char *message, const char *ts, const char *tid)
{
        struct kb_value *c = kb_value_new(KB_VOBJECT);
        kb_value_set(c, "type", kb_value_new_string(type));
        kb_value_set(c, "status", kb_value_new_string(status));
        if (tid)
                kb_value_set(c, "transitionID", kb_value_new_string(tid));
        kb_value_set(c, "lastTransitionTime", kb_value_new_string(ts));
        kb_value_set(c, "reason", kb_value_new_string(reason ? reason : ""));
        kb_value_set(c, "message", kb_value_new_string(message ? message : ""));
        return c;
}

static bool cond_same(const struct kb_condition *c, const char *status, const char *reason,
                      const char *message)
{
        return kb_streq(c->status, status) && kb_streq(c->reason ? c->reason : "", reason) &&
               kb_streq(c->message ? c->message : "", message);
}

static void pg_status(struct kb_sched *s, const struct kb_pg_status *st)
{
        const struct kb_podgroup *pg = st->pg;
        const char *ns = ns_of(&pg->meta);
        const struct kb_podgroup *cur = kb_cache_get(s->cache, KB_KIND_PODGROUP, ns, pg->meta.name);
        if (!cur || !kb_streq(cur->meta.uid, pg->meta.uid))
                return; /* deleted or replaced meanwhile */
        const char *phase = kb_pg_phase_name(st->phase);
        char ts[40];
        now_time(ts, sizeof(ts));
        /* Every session that finds the gang unschedulable says so, as
         * Volcano's RecordJobStatusEvent; repeats become one Event's count
         * and series. */
        if (st->cond_type && !strcmp(st->cond_type, "Unschedulable") &&
            kb_streq(st->cond_status, "True"))
                kb__event(s, "PodGroup", "scheduling.volcano.sh/v1beta1", ns, pg->meta.name,
                          pg->meta.uid, "Warning", "Unschedulable",
                          st->cond_message ? st->cond_message : "");

        /* The desired conditions: the current ones with the session's
         * replacing its type (Volcano's UpdatePodGroupCondition); Scheduled
         * turns a standing Unschedulable to False. */
        bool changed = !kb_streq(cur->phase, phase) || cur->running != st->running ||
                       cur->succeeded != st->succeeded || cur->failed != st->failed;
        struct kb_value *conds = kb_value_new(KB_VARRAY);
        bool have = false;
        for (size_t i = 0; i < cur->nconditions; i++) {
                const struct kb_condition *c = &cur->conditions[i];
                if (st->cond_type && kb_streq(c->type, st->cond_type)) {
                        have = true;
                        if (!cond_same(c, st->cond_status, st->cond_reason, st->cond_message)) {
                                changed = true;
                                kb_value_append(conds,
                                                cond_json(c->type, st->cond_status, st->cond_reason,
                                                          st->cond_message, ts, NULL));
                                continue;
                        }
                } else if (st->cond_type && !strcmp(st->cond_type, "Scheduled") &&
                           kb_streq(c->type, "Unschedulable") && kb_streq(c->status, "True")) {
                        changed = true;
                        kb_value_append(conds, cond_json(c->type, "False", "Scheduled",
                                                         "the gang is scheduled", ts, NULL));
                        continue;
                }
                char lt[40] = "";
                if (c->last_transition)
                        kb_format_time(c->last_transition, lt, sizeof(lt));
                kb_value_append(conds, cond_json(c->type, c->status ? c->status : "", c->reason,
                                                 c->message, lt[0] ? lt : ts, c->transition_id));
        }
        if (st->cond_type && !have) {
                changed = true;
                kb_value_append(conds, cond_json(st->cond_type, st->cond_status, st->cond_reason,
                                                 st->cond_message, ts, NULL));
        }
        bool sched_new = false;
        for (size_t i = 0; i < cur->nconditions && st->cond_type; i++) {
                const struct kb_condition *c = &cur->conditions[i];
                if (kb_streq(c->type, st->cond_type) &&
                    !cond_same(c, st->cond_status, st->cond_reason, st->cond_message)) {
                        sched_new = !strcmp(st->cond_type, "Scheduled");
                }
        }
        if (st->cond_type && !strcmp(st->cond_type, "Scheduled") && !have)
                sched_new = true;
        if (!changed) {
                kb_value_free(conds);
                return;
        }
        struct kb_value *body = kb_value_new(KB_VOBJECT);
        struct kb_value *sv = kb_value_ensure_object(body, "status");
        kb_value_set(sv, "phase", kb_value_new_string(phase));
        kb_value_set(sv, "running", kb_value_new_int(st->running));
        kb_value_set(sv, "succeeded", kb_value_new_int(st->succeeded));
        kb_value_set(sv, "failed", kb_value_new_int(st->failed));
        kb_value_set(sv, "conditions", conds);
        /* The memo ignores times, so an unchanged status is not re-sent
         * while the watch catches up. */
        struct kb_value *key_doc = kb_value_new(KB_VOBJECT);
        kb_value_set(key_doc, "phase", kb_value_new_string(phase));
        kb_value_set(key_doc, "r", kb_value_new_int(st->running));
        kb_value_set(key_doc, "s", kb_value_new_int(st->succeeded));
        kb_value_set(key_doc, "f", kb_value_new_int(st->failed));
        kb_value_set(key_doc, "t", kb_value_new_string(st->cond_type ? st->cond_type : ""));
        kb_value_set(key_doc, "c", kb_value_new_string(st->cond_status ? st->cond_status : ""));
        kb_value_set(key_doc, "m", kb_value_new_string(st->cond_message ? st->cond_message : ""));
        kb_value_set(key_doc, "v", kb_value_new_string(cur->meta.uid ? cur->meta.uid : ""));
        char *kj = kb_json_emit(key_doc, false);
        kb_value_free(key_doc);
        uint64_t h = kb_hash(kj, strlen(kj), KB_HASH_SEED);
        free(kj);
        char *mkey = kb_xasprintf("pg/%s/%s", ns, pg->meta.name);
        /* Until discovery says how status is written, nothing is (the
         * next session tries again). */
        h ^= (uint64_t)s->pg_status_sub;
        if (s->pg_status_sub >= 0 && !memo_same(s, mkey, h)) {
                memo_set(s, mkey, h);
                char *text = kb_json_emit(body, false);
                char *path = kb_xasprintf(KB_GROUP_API "/namespaces/%s/podgroups/%s%s", ns,
                                          pg->meta.name, s->pg_status_sub ? "/status" : "");
                char *what = kb_xasprintf("podgroup %s/%s status", ns, pg->meta.name);
                fire(s, "PATCH", path, text, "application/merge-patch+json", what, mkey);
                free(what);
                free(path);
                free(text);
                if (sched_new)
                        kb__event(s, "PodGroup", "scheduling.volcano.sh/v1beta1", ns, pg->meta.name,
                                  pg->meta.uid, "Normal", "Scheduled",
                                  st->cond_message && *st->cond_message ? st->cond_message
                                                                        : "pod group is ready");
        }
        free(mkey);
        kb_value_free(body);
}

/* ---- Queue status ------------------------------------------------------------------ */

static void queue_status(struct kb_sched *s, const struct kb_queue_status *qs)
{
        struct kb_value *body = kb_value_new(KB_VOBJECT);
        struct kb_value *sv = kb_value_ensure_object(body, "status");
        kb_value_set(sv, "state", kb_value_new_string(kb_queue_state_name(qs->state)));
        kb_value_set(sv, "pending", kb_value_new_int(qs->pending));
        kb_value_set(sv, "inqueue", kb_value_new_int(qs->inqueue));
        kb_value_set(sv, "running", kb_value_new_int(qs->running));
        kb_value_set(sv, "unknown", kb_value_new_int(qs->unknown));
        kb_value_set(sv, "completed", kb_value_new_int(qs->completed));
        struct kb_value *alloc = kb_value_ensure_object(sv, "allocated");
        for (int i = 0; i < kb_res_count(); i++) {
                if (i == KB_RES_PODS || qs->allocated.q[i] == 0)
                        continue;
                char buf[64];
                kb_quantity_format(qs->allocated.q[i], kb_res_is_milli(i), kb_res_is_bytes(i), buf,
                                   sizeof(buf));
                kb_value_set(alloc, kb_res_name(i), kb_value_new_string(buf));
        }
        char *text = kb_json_emit(body, false);
        kb_value_free(body);
        uint64_t h = kb_hash(text, strlen(text), KB_HASH_SEED) ^ (uint64_t)s->queue_status_sub;
        char *mkey = kb_xasprintf("queue/%s", qs->name);
        if (s->queue_status_sub >= 0 && !memo_same(s, mkey, h)) {
                memo_set(s, mkey, h);
                char *path = kb_xasprintf(KB_GROUP_API "/queues/%s%s", qs->name,
                                          s->queue_status_sub ? "/status" : "");
                char *what = kb_xasprintf("queue %s status", qs->name);
                fire(s, "PATCH", path, text, "application/merge-patch+json", what, mkey);
                free(what);
                free(path);
        }
        free(mkey);
        free(text);
}

/* ---- pods of unschedulable gangs ---------------------------------------------------- */

struct pg_idx {
        UT_hash_handle hh;
        const char *key; /* pool-owned "ns/name" */
        const struct kb_pg_status *st;
};

/* FailedScheduling events and the PodScheduled=False condition on the
 * pending pods of every gang the session found unschedulable. */
static void pod_failures(struct kb_sched *s, const struct kb_cache_snap *snap,
                         const struct kb_result *r)
{
        struct pg_idx *idx = NULL, *e, *t;
        struct kb_pool pool;
        kb_pool_init(&pool, 0);
        for (size_t i = 0; i < r->npodgroups; i++) {
                const struct kb_pg_status *st = &r->podgroups[i];
                if (!st->cond_type || strcmp(st->cond_type, "Unschedulable") ||
                    !kb_streq(st->cond_status, "True"))
                        continue;
                e = kb_pool_alloc(&pool, sizeof(*e));
                e->key = st->name;
                e->st = st;
                HASH_ADD_KEYPTR(hh, idx, e->key, strlen(e->key), e);
        }
        if (!idx)
                goto out;
        for (size_t i = 0; i < snap->snap.npods; i++) {
                const struct kb_pod *p = snap->snap.pods[i];
                if (!p->group_name || (p->node_name && *p->node_name) ||
                    p->phase != KB_POD_PENDING || p->meta.deletion)
                        continue;
                bool ours = false;
                for (size_t k = 0; k < snap->snap.nscheduler_names; k++)
                        ours |= kb_streq(p->scheduler_name, snap->snap.scheduler_names[k]);
                if (!ours)
                        continue;
                const char *ns = ns_of(&p->meta);
                char *key = kb_pool_printf(&pool, "%s/%s", ns, p->group_name);
                HASH_FIND_STR(idx, key, e);
                if (!e)
                        continue;
                const char *msg = e->st->cond_message ? e->st->cond_message : "";
                kb__event(s, "Pod", "v1", ns, p->meta.name, p->meta.uid, "Warning",
                          "FailedScheduling", msg);
                /* PodScheduled=False, written when the reason changes. */
                uint64_t h = kb_hash(msg, strlen(msg), KB_HASH_SEED);
                char *mkey =
                    kb_xasprintf("pod/%s/%s/%s", ns, p->meta.name, p->meta.uid ? p->meta.uid : "");
                if (!memo_same(s, mkey, h)) {
                        memo_set(s, mkey, h);
                        char ts[40];
                        now_time(ts, sizeof(ts));
                        struct kb_value *body = kb_value_new(KB_VOBJECT);
                        struct kb_value *conds = kb_value_new(KB_VARRAY);
                        struct kb_value *c =
                            cond_json("PodScheduled", "False", "Unschedulable", msg, ts, NULL);
                        kb_value_set(c, "lastProbeTime", kb_value_new(KB_VNULL));
                        kb_value_append(conds, c);
                        kb_value_set(kb_value_ensure_object(body, "status"), "conditions", conds);
                        char *text = kb_json_emit(body, false);
                        kb_value_free(body);
                        char *path =
                            kb_xasprintf("/api/v1/namespaces/%s/pods/%s/status", ns, p->meta.name);
                        char *what = kb_xasprintf("pod %s/%s condition", ns, p->meta.name);
                        fire(s, "PATCH", path, text, "application/strategic-merge-patch+json", what,
                             mkey);
                        free(what);
                        free(path);
                        free(text);
                }
                free(mkey);
        }
out:
        HASH_ITER(hh, idx, e, t)
        HASH_DEL(idx, e);
        kb_pool_release(&pool);
}

/* ---- entry points --------------------------------------------------------------------- */

void kb__dispatch_result(struct kb_sched *s, const struct kb_cache_snap *snap,
                         const struct kb_result *r)
{
        for (size_t i = 0; i < r->nbinds; i++)
                dispatch_bind(s, &r->binds[i]);
        for (size_t i = 0; i < r->nevictions; i++)
                dispatch_eviction(s, &r->evictions[i]);
        for (size_t i = 0; i < r->nnominations; i++)
                dispatch_nomination(s, &r->nominations[i]);
        for (size_t i = 0; i < r->npodgroups; i++)
                if (r->podgroups[i].pg)
                        pg_status(s, &r->podgroups[i]);
        for (size_t i = 0; i < r->nqueues; i++)
                queue_status(s, &r->queues[i]);
        pod_failures(s, snap, r);
}

/* ---- discovery ------------------------------------------------------------------------ */

#define DISCOVERY_PERIOD 30.0

/* Whether the group's discovery document lists resource/status. */
static int has_status(const struct kb_value *doc, const char *resource)
{
        const struct kb_value *l = kb_value_get(doc, "resources");
        char *want = kb_xasprintf("%s/status", resource);
        int found = 0;
        for (size_t i = 0; kb_value_is(l, KB_VARRAY) && i < l->arr.n; i++)
                found |= kb_streq(kb_value_str(kb_value_get(l->arr.v[i], "name")), want);
        free(want);
        return found;
}

static void discovery_done(void *arg, const struct kb_kube_resp *r)
{
        struct kb_sched *s = arg;
        if (r->cancelled)
                return;
        s->discovery_inflight = false;
        s->discovered_at = kb_now_mono();
        struct kb_value *doc = NULL;
        if (r->status != 200 || kb_json_parse(r->body, r->len, &doc, NULL, 0) != 0) {
                /* Not known yet (the CRDs may be missing): status waits,
                 * and the next tick asks again. */
                KB_V(2, "discovery of " KB_GROUP_API ": %ld", r->status);
                s->discovered_at = 0;
                kb_value_free(doc);
                return;
        }
        signed char pg = (signed char)has_status(doc, "podgroups");
        signed char q = (signed char)has_status(doc, "queues");
        if (pg != s->pg_status_sub || q != s->queue_status_sub)
                KB_INFO("status of podgroups %s, of queues %s",
                        pg ? "through the status subresource" : "on the object (no subresource)",
                        q ? "through the status subresource" : "on the object (no subresource)");
        s->pg_status_sub = pg;
        s->queue_status_sub = q;
        kb_value_free(doc);
}

void kb__discover(struct kb_sched *s)
{
        if (s->discovery_inflight ||
            (s->discovered_at && kb_now_mono() - s->discovered_at < DISCOVERY_PERIOD))
                return;
        s->discovery_inflight = true;
        struct kb_kube_req req = {.method = "GET", .path = KB_GROUP_API};
        kb_kube_request(s->kube, &req, discovery_done, s);
}

static void default_queue_done(void *arg, const struct kb_kube_resp *r)
{
        struct kb_sched *s = arg;
        if (r->cancelled)
                return;
        if (r->status == 201 || r->status == 200 || r->status == 409) {
                KB_INFO("default queue %s: %s", s->o->default_queue,
                        r->status == 409 ? "exists" : "created");
        } else {
                KB_WARN("creating the default queue %s: %ld %.200s", s->o->default_queue, r->status,
                        r->status ? r->body : r->error);
                s->default_queue_requested = false;
        }
}

void kb__ensure_default_queue(struct kb_sched *s)
{
        if (kb_cache_get(s->cache, KB_KIND_QUEUE, NULL, s->o->default_queue)) {
                s->default_queue_requested = false;
                return;
        }
        if (s->default_queue_requested)
                return;
        s->default_queue_requested = true;
        char *body = kb_xasprintf("{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":"
                                  "\"Queue\",\"metadata\":{\"name\":\"%s\"},\"spec\":{\"weight\":"
                                  "1,\"reclaimable\":true}}",
                                  s->o->default_queue);
        struct kb_kube_req req = {.method = "POST",
                                  .path = KB_GROUP_API "/queues",
                                  .body = body,
                                  .lane = KB_KUBE_LANE_STATUS};
        kb_kube_request(s->kube, &req, default_queue_done, s);
        free(body);
}
