/*
 * Binds and evictions: what a session decided about pods.
 *
 * Binds.  All of a session's binds are dispatched at once, so a ready
 * gang's pods are bound together.  Each pod is marked binding in the cache
 * first, so the next session cannot place it again however long the answer
 * takes.  The client retries transient failures; a 409 means the pod is
 * already bound (perhaps by an earlier attempt whose answer was lost) and
 * is settled by reading the pod, never by binding again; any other failure
 * forgets the mark and resyncs the pod.
 *
 * The backlog.  A session may decide 100,000 binds at once.  Rather than
 * 100,000 client requests (a call, its timer, URL and body each: about a
 * kilobyte), a decided bind waits in a backlog as one small record (the
 * four names in one allocation), and the pump hands binds to the client
 * only while its bind lane holds fewer than BIND_FEED: enough to keep the
 * window full, never the whole backlog.  Every answer pumps again.  The
 * binds still leave in the order decided, at the rate the server answers.
 *
 * Evictions.  Through the Eviction API (POST pods/NAME/eviction, policy/v1),
 * as kube-scheduler's preemption does, so that PodDisruptionBudgets hold:
 * the pod's own grace period and its uid as a precondition; one in flight
 * per pod.  A budget that refuses answers 429, which the client hands back
 * at once (final_429) rather than retrying.  A refusal is recorded: a
 * warning and an EvictionRefused event on the pod and on the PodGroup the
 * room was for, a note in that group's Unschedulable message for a minute
 * (kb__evictions_refused), and a hold-off: the next sessions will likely
 * choose the same victim, and for EVICT_HOLD seconds no eviction of it is
 * sent, so a budget that holds is asked every few seconds, not every
 * session.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scheduler/scheduler-int.h"

/* Binds handed to the client ahead of the window (which is 32). */
#define BIND_FEED 64

/* No eviction of a pod is sent for this long after one was refused, and
 * the refusal is reported on the group the room was for for REFUSAL_KEEP. */
#define EVICT_HOLD   5.0
#define REFUSAL_KEEP 60.0

/* A refused eviction, by the victim's "ns/name". */
struct kb__refusal {
        char *key;
        char *group;   /* the PodGroup the room was for ("ns/name"), or NULL */
        char *message; /* the server's */
        double at;     /* monotonic */
};

static void refusal_free(struct kb_sched *s, struct kb__refusal *x)
{
        kb_map_del_str(&s->refused, x->key, strlen(x->key));
        free(x->key);
        free(x->group);
        free(x->message);
        free(x);
}

static struct kb__refusal *refusal_of(struct kb_sched *s, const char *key)
{
        uint64_t *v = kb_map_get_str(kb__strmap(&s->refused), key, strlen(key));
        return v ? (struct kb__refusal *)(uintptr_t)*v : NULL;
}

/* A bind, from the backlog to its answer: one allocation. */
struct kb__bind {
        struct kb_sched *s;
        struct kb__bind *next; /* in the backlog */
        const char *ns, *name, *uid, *node;
        char text[]; /* the four strings */
};

static struct kb__bind *bind_new(struct kb_sched *s, const char *ns, const char *name,
                                 const char *uid, const char *node)
{
        size_t ln = strlen(ns) + 1, lm = strlen(name) + 1, lu = strlen(uid) + 1,
               lo = strlen(node) + 1;
        struct kb__bind *b = kb_xmalloc(sizeof(*b) + ln + lm + lu + lo);
        char *t = b->text;
        b->s = s;
        b->next = NULL;
        b->ns = memcpy(t, ns, ln);
        b->name = memcpy(t += ln, name, lm);
        b->uid = memcpy(t += lm, uid, lu);
        b->node = memcpy(t + lu, node, lo);
        return b;
}

size_t kb__binds_drop(struct kb_sched *s)
{
        struct kb__bind *b = s->backlog, *next;
        size_t n = 0;
        for (; b; b = next) {
                next = b->next;
                free(b);
                n++;
        }
        s->backlog = s->backlog_tail = NULL;
        s->nbacklog = 0;
        s->binds_inflight -= n;
        return n;
}

void kb__binds_release(struct kb_sched *s)
{
        kb__binds_drop(s);
        for (size_t i = 0; i < s->evicting.cap; i++)
                if (s->evicting.slots[i].hash)
                        free((char *)(uintptr_t)s->evicting.slots[i].val);
        kb_map_release(&s->evicting);
        for (size_t i = 0; i < s->refused.cap; i++) {
                if (!s->refused.slots[i].hash)
                        continue;
                struct kb__refusal *x = (struct kb__refusal *)(uintptr_t)s->refused.slots[i].val;
                free(x->key);
                free(x->group);
                free(x->message);
                free(x);
        }
        kb_map_release(&s->refused);
}

/* Reads a pod after a failed or conflicting bind and puts what the server
 * has into the cache; the binding mark goes either way. */
static void resync_done(void *arg, const struct kb_kube_resp *r)
{
        struct kb__bind *b = arg;
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
        free(b);
        if (!r->cancelled) {
                kb__binds_pump(s);
                s->settled(s);
        }
}

static void bind_done(void *arg, const struct kb_kube_resp *r)
{
        struct kb__bind *b = arg;
        struct kb_sched *s = b->s;
        if (r->cancelled) {
                s->binds_inflight--;
                free(b);
                return;
        }
        if (r->status == 200 || r->status == 201) {
                kb_cache_bind_done(s->cache, b->ns, b->name, true);
                kb__metrics_bind(s, true);
                KB_V(1, "bound %s/%s to %s", b->ns, b->name, b->node);
                char *msg =
                    kb_xasprintf("Successfully assigned %s/%s to %s", b->ns, b->name, b->node);
                kb__event(s, "Pod", "v1", b->ns, b->name, *b->uid ? b->uid : NULL, "Normal",
                          "Scheduled", msg);
                free(msg);
                s->binds_inflight--;
                free(b);
                kb__binds_pump(s);
                s->settled(s);
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

/* s as a JSON string's contents.  Names, uids and node names never need
 * escaping (the API server validates them), but nothing here relies on
 * that. */
static void json_text(struct kb_buf *o, const char *s)
{
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (c == '"' || c == '\\')
                        kb_buf_printf(o, "\\%c", c);
                else if (c < 0x20)
                        kb_buf_printf(o, "\\u%04x", c);
                else
                        kb_buf_addc(o, (char)c);
        }
}

static void send_bind(struct kb_sched *s, struct kb__bind *b)
{
        struct kb_buf body, path;
        kb_buf_init(&body);
        kb_buf_init(&path);
        kb_buf_adds(&body, "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"");
        json_text(&body, b->name);
        kb_buf_adds(&body, "\",\"namespace\":\"");
        json_text(&body, b->ns);
        if (*b->uid) {
                kb_buf_adds(&body, "\",\"uid\":\"");
                json_text(&body, b->uid);
        }
        kb_buf_adds(&body, "\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"");
        json_text(&body, b->node);
        kb_buf_adds(&body, "\"}}");
        kb_buf_printf(&path, "/api/v1/namespaces/%s/pods/%s/binding", b->ns, b->name);
        struct kb_kube_req req = {
            .method = "POST", .path = path.data, .body = body.data, .lane = KB_KUBE_LANE_BIND};
        kb_kube_request(s->kube, &req, bind_done, b);
        kb_buf_release(&path);
        kb_buf_release(&body);
}

void kb__binds_pump(struct kb_sched *s)
{
        while (s->backlog && !s->stopping && kb__leading(s) &&
               kb_kube_waiting(s->kube, KB_KUBE_LANE_BIND) < BIND_FEED) {
                struct kb__bind *b = s->backlog;
                s->backlog = b->next;
                s->nbacklog--;
                if (!s->backlog)
                        s->backlog_tail = NULL;
                send_bind(s, b);
        }
}

void kb__dispatch_bind(struct kb_sched *s, const struct kb_bind *bd)
{
        const struct kb_pod *p = bd->pod;
        const char *ns = kb_meta_ns(&p->meta);
        /* The pod may have changed while the session ran: bind only the one
         * the session saw, still unbound and not already being bound. */
        const struct kb_pod *cur = kb_cache_get(s->cache, KB_KIND_POD, ns, p->meta.name);
        if (!cur || !kb_streq(cur->meta.uid, p->meta.uid) || (cur->node_name && *cur->node_name) ||
            cur->meta.deletion || kb_cache_binding(s->cache, ns, p->meta.name)) {
                KB_V(1, "bind %s/%s skipped: the pod changed during the session", ns, p->meta.name);
                return;
        }
        kb_cache_assume(s->cache, cur, bd->node);
        struct kb__bind *b =
            bind_new(s, ns, p->meta.name, p->meta.uid ? p->meta.uid : "", bd->node);
        if (s->backlog_tail)
                s->backlog_tail->next = b;
        else
                s->backlog = b;
        s->backlog_tail = b;
        s->nbacklog++;
        s->binds_inflight++;
}

/* ---- evictions ---------------------------------------------------------------------- */

struct evict_call {
        struct kb_sched *s;
        char *key; /* "ns/name", in s->evicting while in flight */
        char *ns, *name, *uid, *action, *reason, *group;
};

/* The server's words in a refusal: its message and its causes' ("Cannot
 * evict pod as it would violate the pod's disruption budget. (The
 * disruption budget x needs 2 healthy pods and has 2 currently)"), and
 * whether a disruption budget is what refuses (else the server is
 * throttling).  The caller frees the text. */
static char *refusal_text(const struct kb_kube_resp *r, bool *budget)
{
        struct kb_value *doc = NULL;
        struct kb_buf b;
        kb_buf_init(&b);
        *budget = false;
        if (kb_json_parse(r->body, r->len, &doc, NULL, 0) == 0) {
                const char *msg = kb_value_str(kb_value_get(doc, "message"));
                kb_buf_adds(&b, msg ? msg : "");
                *budget = msg && strstr(msg, "disruption budget");
                const struct kb_value *cs = kb_value_dig(doc, "details", "causes");
                for (size_t i = 0; kb_value_is(cs, KB_VARRAY) && i < cs->arr.n; i++) {
                        const char *cm = kb_value_str(kb_value_get(cs->arr.v[i], "message"));
                        if (kb_streq(kb_value_str(kb_value_get(cs->arr.v[i], "reason")),
                                     "DisruptionBudget"))
                                *budget = true;
                        if (cm && *cm)
                                kb_buf_printf(&b, "%s(%s)", b.len ? " " : "", cm);
                }
        }
        kb_value_free(doc);
        if (!b.len)
                kb_buf_printf(&b, "%.200s", r->body);
        return kb_buf_detach(&b);
}

/* A 429: a disruption budget refuses (or the server throttles).  Held off
 * either way; a budget's refusal is reported where users look. */
static void evict_refused(struct kb_sched *s, struct evict_call *ev, const struct kb_kube_resp *r)
{
        bool budget;
        char *text = refusal_text(r, &budget);
        struct kb__refusal *x = refusal_of(s, ev->key);
        if (!x) {
                x = kb_xcalloc(1, sizeof(*x));
                x->key = kb_xstrdup(ev->key);
                *kb_map_put_str(&s->refused, x->key, strlen(x->key), NULL) = (uintptr_t)x;
        }
        free(x->group);
        free(x->message);
        x->group = budget && ev->group ? kb_xstrdup(ev->group) : NULL;
        x->message = kb_xstrdup(text);
        x->at = kb_now_mono();
        if (!budget) {
                KB_WARN("evict %s/%s (%s): the server refuses for now (429): %s; trying again "
                        "in %.0fs at the earliest",
                        ev->ns, ev->name, ev->action, text, EVICT_HOLD);
                free(text);
                return;
        }
        KB_WARN("eviction of %s/%s (%s) refused by a PodDisruptionBudget: %s", ev->ns, ev->name,
                ev->action, text);
        /* The reason says why it was to go: "evicted by preempt to make
         * room for ns/x (podgroup ns/g)"; the event says what did not. */
        char *prefix = kb_xasprintf("evicted by %s ", ev->action);
        const char *why = kb_has_prefix(ev->reason, prefix) ? ev->reason + strlen(prefix) : NULL;
        char *msg = kb_xasprintf("%s could not evict the pod%s%s: %s", ev->action, why ? " " : "",
                                 why ? why : "", text);
        free(prefix);
        kb__event(s, "Pod", "v1", ev->ns, ev->name, ev->uid, "Warning", "EvictionRefused", msg);
        free(msg);
        const char *slash = ev->group ? strchr(ev->group, '/') : NULL;
        if (slash) {
                char *gns = kb_xstrndup(ev->group, (size_t)(slash - ev->group));
                const struct kb_podgroup *pg =
                    kb_cache_get(s->cache, KB_KIND_PODGROUP, gns, slash + 1);
                msg = kb_xasprintf("the eviction of %s/%s (%s) to make room for this group was "
                                   "refused by a PodDisruptionBudget: %s",
                                   ev->ns, ev->name, ev->action, text);
                if (pg)
                        kb__event(s, "PodGroup", "scheduling.volcano.sh/v1beta1", gns, slash + 1,
                                  pg->meta.uid, "Warning", "EvictionRefused", msg);
                free(msg);
                free(gns);
        }
        free(text);
}

static void evict_done(void *arg, const struct kb_kube_resp *r)
{
        struct evict_call *ev = arg;
        struct kb_sched *s = ev->s;
        uint64_t *e = kb_map_get_str(kb__strmap(&s->evicting), ev->key, strlen(ev->key));
        if (e) {
                char *key = (char *)(uintptr_t)*e;
                kb_map_del_str(&s->evicting, key, strlen(key));
                free(key);
        }
        if (!r->cancelled) {
                struct kb__refusal *x = refusal_of(s, ev->key);
                if (x && r->status != 429)
                        refusal_free(s, x);
                if (r->status == 200 || r->status == 201) {
                        KB_V(1, "evicted %s/%s (%s)", ev->ns, ev->name, ev->action);
                        /* Volcano's evictor records a Warning "Evict" with
                         * the reason on the pod. */
                        kb__event(s, "Pod", "v1", ev->ns, ev->name, ev->uid, "Warning", "Evict",
                                  ev->reason);
                } else if (r->status == 404 || r->status == 409) {
                        /* Gone already, or replaced by a pod of the same
                         * name (the uid precondition failed): done. */
                        KB_V(1, "evict %s/%s: the pod is gone", ev->ns, ev->name);
                } else if (r->status == 429) {
                        evict_refused(s, ev, r);
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
        free(ev->group);
        free(ev);
        if (!r->cancelled)
                s->settled(s);
}

char *kb__evictions_refused(struct kb_sched *s, const char *group)
{
        struct kb__refusal *last = NULL;
        size_t n = 0, nold = 0;
        double now = kb_now_mono();
        struct kb_map *m = kb__strmap(&s->refused);
        if (!m->n)
                return NULL;
        struct kb__refusal **old = kb_xmalloc((m->n + 1) * sizeof(*old));
        /* The map's order is no order: the last refusal is the latest,
         * the least key among refusals of the same instant. */
        for (size_t i = 0; i < m->cap; i++) {
                if (!m->slots[i].hash)
                        continue;
                struct kb__refusal *x = (struct kb__refusal *)(uintptr_t)m->slots[i].val;
                if (now - x->at > REFUSAL_KEEP) {
                        old[nold++] = x; /* forgotten after the loop */
                        continue;
                }
                if (!x->group || strcmp(x->group, group))
                        continue;
                n++;
                if (!last || x->at > last->at ||
                    (x->at == last->at && strcmp(x->key, last->key) < 0))
                        last = x;
        }
        for (size_t i = 0; i < nold; i++)
                refusal_free(s, old[i]);
        free(old);
        if (!last)
                return NULL;
        if (n == 1)
                return kb_xasprintf("the eviction of %s was refused by a PodDisruptionBudget: %s",
                                    last->key, last->message);
        return kb_xasprintf("the evictions of %zu pods were refused by PodDisruptionBudgets, "
                            "the last of %s: %s",
                            n, last->key, last->message);
}

/* POST pods/NAME/eviction with the pod's own grace period and its uid as a
 * precondition; the client retries transient failures, a 404 means done, a
 * 429 comes back at once (a budget refuses). */
void kb__dispatch_eviction(struct kb_sched *s, const struct kb_eviction *e)
{
        const struct kb_pod *p = e->pod;
        const char *ns = kb_meta_ns(&p->meta);
        const struct kb_pod *cur = kb_cache_get(s->cache, KB_KIND_POD, ns, p->meta.name);
        if (!cur || !kb_streq(cur->meta.uid, p->meta.uid) || cur->meta.deletion) {
                KB_V(2, "evict %s/%s skipped: the pod is gone or going", ns, p->meta.name);
                return;
        }
        char *key = kb_xasprintf("%s/%s", ns, p->meta.name);
        if (kb_map_get_str(kb__strmap(&s->evicting), key, strlen(key))) {
                free(key);
                return; /* an earlier session's eviction is in flight */
        }
        struct kb__refusal *f = refusal_of(s, key);
        double ago = f ? kb_now_mono() - f->at : 0;
        if (f && ago > REFUSAL_KEEP) {
                refusal_free(s, f);
                f = NULL;
        }
        if (f && ago < EVICT_HOLD) {
                KB_V(2, "evict %s/%s held off: refused %.1fs ago (%s); asking again %.0fs after",
                     ns, p->meta.name, ago, f->message, EVICT_HOLD);
                free(key);
                return;
        }
        *kb_map_put_str(&s->evicting, key, strlen(key), NULL) = (uintptr_t)key;

        struct evict_call *ev = kb_xcalloc(1, sizeof(*ev));
        ev->s = s;
        ev->key = kb_xstrdup(key);
        ev->ns = kb_xstrdup(ns);
        ev->name = kb_xstrdup(p->meta.name);
        ev->uid = p->meta.uid ? kb_xstrdup(p->meta.uid) : NULL;
        ev->action = kb_xstrdup(e->action ? e->action : "evict");
        ev->reason = kb_xstrdup(e->reason && *e->reason ? e->reason : ev->action);
        ev->group = e->group ? kb_xstrdup(e->group) : NULL;
        struct kb_value *v = kb_value_new(KB_VOBJECT);
        kb_value_set(v, "apiVersion", kb_value_new_string("policy/v1"));
        kb_value_set(v, "kind", kb_value_new_string("Eviction"));
        struct kb_value *md = kb_value_ensure_object(v, "metadata");
        kb_value_set(md, "name", kb_value_new_string(p->meta.name));
        kb_value_set(md, "namespace", kb_value_new_string(ns));
        struct kb_value *opts = kb_value_ensure_object(v, "deleteOptions");
        if (p->grace_period >= 0)
                kb_value_set(opts, "gracePeriodSeconds", kb_value_new_int(p->grace_period));
        if (p->meta.uid)
                kb_value_set(kb_value_ensure_object(opts, "preconditions"), "uid",
                             kb_value_new_string(p->meta.uid));
        char *body = kb_json_emit(v, false);
        kb_value_free(v);
        char *path = kb_xasprintf("/api/v1/namespaces/%s/pods/%s/eviction", ns, p->meta.name);
        struct kb_kube_req req = {.method = "POST",
                                  .path = path,
                                  .body = body,
                                  .lane = KB_KUBE_LANE_BIND,
                                  .final_429 = true};
        s->binds_inflight++;
        kb_kube_request(s->kube, &req, evict_done, ev);
        free(path);
        free(body);
}
