/*
 * The event recorder, after Kubernetes' event correlator: one Event per
 * object and reason, with a count; writes in proportion to what changes;
 * and the first thing to give way.
 *
 * Every kb__event() is an occurrence and finds its record in O(1): a hash
 * by (object, type, reason) - not by message - plus a list in
 * least-recently-used order and a list of records with something to
 * write.  An occurrence bumps the record's count (and replaces its message
 * when that changed).  What is written:
 *
 *   - the Event, created at the first occurrence;
 *   - its message when it changes: the first change at once (a gang's
 *     first session often sees it before its pods exist, and the reason
 *     that stands should not wait behind "no pods yet"), later ones at most
 *     every EVENT_PATCH_PERIOD;
 *   - its count (count, lastTimestamp, series {count, lastObservedTime}):
 *     once EVENT_PATCH_PERIOD after the create, when it first repeats, then
 *     every EVENT_HEARTBEAT while it goes on, as client-go's events.k8s.io
 *     broadcaster (tools/events) starts a series at its first repeat and
 *     then refreshes it every 30 minutes.  A repeat is no change: the
 *     scheduler sees an unschedulable pod every session, and patching its
 *     count every few seconds was the bulk of what it wrote while nothing
 *     happened.
 *
 * Every write of an object's Events takes a token from that object's
 * bucket, as client-go's spam filter, and one from the recorder's own:
 * eventfilter.c says whether a write may go.  client-go drops an
 * occurrence its filter refuses, after counting it; kbatch keeps what it
 * could not write in the record and writes it when a token comes, so the
 * message that stands reaches the server (late) rather than never.
 *
 * Giving way.  Events travel in the client's lowest lane (they never take
 * a place a bind or a status patch wants), behind their own token bucket
 * (eventfilter.c), and only while that lane's backlog is not
 * full.  What cannot go now stays in the record and on the list, which
 * each tick flushes as tokens allow.  At most EVENT_RECORDS records are
 * kept: a new one evicts the least recently used, and an evicted record
 * whose Event or message never reached the server is a dropped event
 * (counted in kbatch_events_total{result="dropped"}).
 *
 * For example, a gang of 8 pods that stays unschedulable for an hour with
 * a session every second: 9 Events (8 FailedScheduling, one Unschedulable
 * on the group) are created, patched once when they repeat and twice more
 * with their counts (3600 by then): 36 requests in the hour, where one per
 * object and session would be 32,400.  A burst of 140,000 binds records
 * 140,000 Scheduled events: the first ones go as tokens allow, the rest
 * are evicted unsent and counted as dropped; no bind waits for any of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/scheduler-int.h"

#define EVENT_PATCH_PERIOD 5.0
/* A count that goes on growing is written this often (client-go's
 * tools/events refreshTime). */
#define EVENT_HEARTBEAT 1800.0
/* How often the records are swept for heartbeats that are due. */
#define EVENT_SWEEP 60.0
/* A repeat after this long starts a new Event, as the recorder's series
 * end after a quiet while (client-go's aggregation window). */
#define EVENT_WINDOW 600.0
/* As client-go's event cache. */
#define EVENT_RECORDS 4096

struct rec {
        struct kb_sched *s;
        struct rec *lru_prev, *lru_next; /* most recently used first */
        struct rec *dirty_prev, *dirty_next;
        bool dirty;
        /* Into text[]: the key (kind, namespace, name, uid, type, reason),
         * the object's key in the spam filter (kind, namespace, name, uid,
         * apiVersion) and the strings that never change. */
        const char *key, *object;
        const char *kind, *api_version, *ns, *name, *uid, *type, *reason;
        const char *event_ns;
        char *message;
        bool message_unsent;
        bool corrected;   /* its message's first change went without the period */
        char *event_name; /* set once created */
        char *creating;   /* the name of the Event being created */
        int count, sent_count;
        bool failed;         /* the last write failed: wait a patch period */
        bool detached;       /* evicted while its write was in flight */
        double last_seen;    /* monotonic */
        double last_sent;    /* monotonic, 0 when never */
        char first_time[40]; /* RFC 3339 */
        struct kb_kube_call *call;
        char text[];
};

/* A record and its constant strings in one allocation (a record is about
 * 250 bytes, and up to EVENT_RECORDS of them are kept). */
static struct rec *rec_new(const char *key, const char *object, const char *kind,
                           const char *api_version, const char *ns, const char *name,
                           const char *uid, const char *type, const char *reason)
{
        const char *src[] = {key,  object, kind, api_version, ns,
                             name, uid,    type, reason,      kb_ns_or_default(ns)};
        size_t len[KB_ARRAY_SIZE(src)], total = 0;
        for (size_t i = 0; i < KB_ARRAY_SIZE(src); i++) {
                len[i] = src[i] ? strlen(src[i]) + 1 : 0;
                total += len[i];
        }
        struct rec *r = kb_xcalloc(1, sizeof(*r) + total);
        const char **dst[] = {&r->key,  &r->object, &r->kind, &r->api_version, &r->ns,
                              &r->name, &r->uid,    &r->type, &r->reason,      &r->event_ns};
        char *t = r->text;
        for (size_t i = 0; i < KB_ARRAY_SIZE(src); i++) {
                if (!src[i])
                        continue;
                *dst[i] = memcpy(t, src[i], len[i]);
                t += len[i];
        }
        return r;
}

struct kb__events {
        struct kb_map by_key; /* rec->key -> struct rec * */
        struct rec *lru_head, *lru_tail;
        struct rec *dirty_head, *dirty_tail;
        size_t n;
        double swept; /* monotonic: the last heartbeat sweep */
        struct kb__event_filter *filter;
};

static struct kb__events *recorder(struct kb_sched *s)
{
        if (!s->events) {
                s->events = kb_xcalloc(1, sizeof(*s->events));
                kb_map_init(&s->events->by_key, KB_MAP_STR);
                s->events->swept = kb_now_mono();
                s->events->filter = kb__event_filter_new(s->events->swept);
        }
        return s->events;
}

/* ---- lists ---------------------------------------------------------------------------- */

static void lru_unlink(struct kb__events *ev, struct rec *r)
{
        if (r->lru_prev)
                r->lru_prev->lru_next = r->lru_next;
        else
                ev->lru_head = r->lru_next;
        if (r->lru_next)
                r->lru_next->lru_prev = r->lru_prev;
        else
                ev->lru_tail = r->lru_prev;
        r->lru_prev = r->lru_next = NULL;
}

static void lru_front(struct kb__events *ev, struct rec *r)
{
        if (ev->lru_head == r)
                return;
        if (r->lru_prev || r->lru_next || ev->lru_tail == r)
                lru_unlink(ev, r);
        r->lru_next = ev->lru_head;
        if (ev->lru_head)
                ev->lru_head->lru_prev = r;
        ev->lru_head = r;
        if (!ev->lru_tail)
                ev->lru_tail = r;
}

static void dirty_set(struct kb__events *ev, struct rec *r, bool dirty)
{
        if (r->dirty == dirty)
                return;
        r->dirty = dirty;
        if (dirty) {
                r->dirty_next = NULL;
                r->dirty_prev = ev->dirty_tail;
                if (ev->dirty_tail)
                        ev->dirty_tail->dirty_next = r;
                else
                        ev->dirty_head = r;
                ev->dirty_tail = r;
                return;
        }
        if (r->dirty_prev)
                r->dirty_prev->dirty_next = r->dirty_next;
        else
                ev->dirty_head = r->dirty_next;
        if (r->dirty_next)
                r->dirty_next->dirty_prev = r->dirty_prev;
        else
                ev->dirty_tail = r->dirty_prev;
        r->dirty_prev = r->dirty_next = NULL;
}

static void rec_destroy(struct rec *r)
{
        free(r->message);
        free(r->event_name);
        free(r->creating);
        free(r);
}

/* Forgets a record.  One with a write in flight is only detached: its
 * answer (every call gets one, cancelled at the latest) frees it. */
static void rec_free(struct kb__events *ev, struct rec *r)
{
        kb_map_del_str(&ev->by_key, r->key, strlen(r->key));
        lru_unlink(ev, r);
        dirty_set(ev, r, false);
        ev->n--;
        if (r->call)
                r->detached = true;
        else
                rec_destroy(r);
}

/* ---- what is due ------------------------------------------------------------------------ */

/* Whether the Event or its current message has not reached the server: a
 * record evicted so is a dropped event. */
static bool unsent(const struct rec *r)
{
        return !r->event_name || r->message_unsent;
}

/* Whether r has something to write, now or after a wait: its Event, its
 * message, the count of a series that just started, or a heartbeat. */
static bool wants_write(const struct rec *r, double now)
{
        if (unsent(r))
                return true;
        if (r->count <= r->sent_count)
                return false;
        return r->sent_count <= 1 || now - r->last_sent >= EVENT_HEARTBEAT;
}

static void flush(struct kb_sched *s, struct rec *r);

static void written(void *arg, const struct kb_kube_resp *resp)
{
        struct rec *r = arg;
        struct kb_sched *s = r->s;
        r->call = NULL;
        if (r->detached) {
                if (!resp->cancelled && resp->status >= 200 && resp->status < 300)
                        kb__metrics_event(s, r->creating ? "created" : "updated");
                rec_destroy(r);
                return;
        }
        if (resp->cancelled) {
                free(r->creating);
                r->creating = NULL;
                return;
        }
        bool ok = resp->status >= 200 && resp->status < 300;
        r->failed = !ok;
        if (r->creating) {
                if (ok) {
                        free(r->event_name);
                        r->event_name = r->creating;
                        r->creating = NULL;
                        kb__metrics_event(s, "created");
                } else {
                        KB_V(1, "event %s %s/%s %s: create: %ld", r->kind, r->event_ns, r->name,
                             r->reason, resp->status);
                        free(r->creating);
                        r->creating = NULL;
                        r->sent_count = 0;
                }
        } else if (ok) {
                kb__metrics_event(s, "updated");
        } else {
                KB_V(1, "event %s/%s: update: %ld", r->event_ns, r->event_name, resp->status);
                r->message_unsent = true; /* the next write carries it again */
                if (resp->status == 404) {
                        /* Gone (events expire): the next write creates
                         * a new one. */
                        free(r->event_name);
                        r->event_name = NULL;
                        r->failed = false;
                }
                r->sent_count = 0;
        }
        flush(s, r);
}

static void send_create(struct kb_sched *s, struct rec *r, const char *ts)
{
        struct kb_value *e = kb_value_new(KB_VOBJECT);
        kb_value_set(e, "apiVersion", kb_value_new_string("v1"));
        kb_value_set(e, "kind", kb_value_new_string("Event"));
        struct kb_value *md = kb_value_ensure_object(e, "metadata");
        /* As Kubernetes names them: the object's name and a unique
         * suffix. */
        r->creating = kb_xasprintf(
            "%s.%016llx", r->name,
            (unsigned long long)kb_hash(r->key, strlen(r->key), (uint64_t)(kb_now_mono() * 1e9)));
        kb_value_set(md, "name", kb_value_new_string(r->creating));
        kb_value_set(md, "namespace", kb_value_new_string(r->event_ns));
        struct kb_value *io = kb_value_ensure_object(e, "involvedObject");
        kb_value_set(io, "kind", kb_value_new_string(r->kind));
        kb_value_set(io, "apiVersion", kb_value_new_string(r->api_version));
        if (r->ns)
                kb_value_set(io, "namespace", kb_value_new_string(r->ns));
        kb_value_set(io, "name", kb_value_new_string(r->name));
        if (r->uid)
                kb_value_set(io, "uid", kb_value_new_string(r->uid));
        kb_value_set(e, "reason", kb_value_new_string(r->reason));
        kb_value_set(e, "message", kb_value_new_string(r->message));
        kb_value_set(e, "type", kb_value_new_string(r->type));
        kb_value_set(e, "count", kb_value_new_int(r->count));
        kb_value_set(e, "firstTimestamp", kb_value_new_string(r->first_time));
        kb_value_set(e, "lastTimestamp", kb_value_new_string(ts));
        kb_value_set(kb_value_ensure_object(e, "source"), "component",
                     kb_value_new_string("kbatch"));
        kb_value_set(e, "reportingComponent", kb_value_new_string("kbatch"));
        kb_value_set(e, "reportingInstance", kb_value_new_string(s->identity));
        char *body = kb_json_emit(e, false);
        kb_value_free(e);
        char *path = kb_xasprintf("/api/v1/namespaces/%s/events", r->event_ns);
        struct kb_kube_req req = {
            .method = "POST", .path = path, .body = body, .lane = KB_KUBE_LANE_EVENT};
        r->call = kb_kube_request(s->kube, &req, written, r);
        free(path);
        free(body);
}

static void send_patch(struct kb_sched *s, struct rec *r, const char *ts, bool with_message)
{
        char micro[40];
        kb_now_micro_time(micro, sizeof(micro));
        struct kb_value *p = kb_value_new(KB_VOBJECT);
        kb_value_set(p, "count", kb_value_new_int(r->count));
        kb_value_set(p, "lastTimestamp", kb_value_new_string(ts));
        struct kb_value *series = kb_value_ensure_object(p, "series");
        kb_value_set(series, "count", kb_value_new_int(r->count));
        kb_value_set(series, "lastObservedTime", kb_value_new_string(micro));
        if (with_message)
                kb_value_set(p, "message", kb_value_new_string(r->message));
        char *body = kb_json_emit(p, false);
        kb_value_free(p);
        char *path = kb_xasprintf("/api/v1/namespaces/%s/events/%s", r->event_ns, r->event_name);
        struct kb_kube_req req = {.method = "PATCH",
                                  .path = path,
                                  .body = body,
                                  .content_type = "application/merge-patch+json",
                                  .lane = KB_KUBE_LANE_EVENT};
        r->call = kb_kube_request(s->kube, &req, written, r);
        free(path);
        free(body);
}

/* Sends what the record has to write if it may go now; otherwise keeps it
 * on the list, which later ticks flush. */
static void flush(struct kb_sched *s, struct rec *r)
{
        struct kb__events *ev = s->events;
        double now = kb_now_mono();
        if (!wants_write(r, now)) {
                dirty_set(ev, r, false);
                return;
        }
        dirty_set(ev, r, true);
        if (r->call)
                return; /* its answer flushes again */
        bool quick = r->event_name && r->message_unsent && !r->corrected && !r->failed;
        if (!quick && (r->event_name || r->failed) && r->last_sent &&
            now - r->last_sent < EVENT_PATCH_PERIOD)
                return;
        if (!kb__leading(s) || kb_kube_lane_full(s->kube, KB_KUBE_LANE_EVENT))
                return;
        if (!kb__event_filter_admit(ev->filter, r->object, now))
                return;
        char ts[40];
        kb_now_time(ts, sizeof(ts));
        bool with_message = r->message_unsent;
        r->corrected |= quick;
        r->last_sent = now;
        r->sent_count = r->count;
        r->message_unsent = false;
        dirty_set(ev, r, false);
        if (r->event_name)
                send_patch(s, r, ts, with_message);
        else
                send_create(s, r, ts);
}

/* ---- entry points ------------------------------------------------------------------------ */

void kb__event(struct kb_sched *s, const char *kind, const char *api_version, const char *ns,
               const char *name, const char *uid, const char *type, const char *reason,
               const char *message)
{
        struct kb__events *ev = recorder(s);
        struct kb_buf key;
        kb_buf_init(&key);
        kb_buf_printf(&key, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", kind, ns ? ns : "", name,
                      uid ? uid : "", type, reason);
        double now = kb_now_mono();
        uint64_t *found = kb_map_get_str(&ev->by_key, key.data, key.len);
        struct rec *r = found ? (struct rec *)(uintptr_t)*found : NULL;
        if (r) {
                if (now - r->last_seen > EVENT_WINDOW && !r->call) {
                        /* The series went quiet: a new Event. */
                        free(r->event_name);
                        r->event_name = NULL;
                        r->count = r->sent_count = 0;
                        r->failed = false;
                        r->corrected = false;
                        r->last_sent = 0;
                        kb_now_time(r->first_time, sizeof(r->first_time));
                }
        } else {
                if (ev->n >= EVENT_RECORDS) {
                        struct rec *old = ev->lru_tail;
                        if (unsent(old))
                                kb__metrics_event(s, "dropped");
                        rec_free(ev, old);
                }
                char *object = kb_xasprintf("%s\x1f%s\x1f%s\x1f%s\x1f%s", kind, ns ? ns : "", name,
                                            uid ? uid : "", api_version);
                r = rec_new(key.data, object, kind, api_version, ns, name, uid, type, reason);
                free(object);
                r->s = s;
                kb_now_time(r->first_time, sizeof(r->first_time));
                *kb_map_put_str(&ev->by_key, r->key, strlen(r->key), NULL) = (uintptr_t)r;
                ev->n++;
        }
        kb_buf_release(&key);
        r->count++;
        r->last_seen = now;
        if (!r->message || strcmp(r->message, message)) {
                free(r->message);
                r->message = kb_xstrdup(message);
                r->message_unsent = true;
        }
        lru_front(ev, r);
        flush(s, r);
}

void kb__events_flush(struct kb_sched *s)
{
        struct kb__events *ev = s->events;
        if (!ev)
                return;
        /* A count that grows without anything else changing is written
         * every EVENT_HEARTBEAT: the records are swept for those once in a
         * while rather than kept on the list. */
        double now = kb_now_mono();
        if (now - ev->swept >= EVENT_SWEEP) {
                ev->swept = now;
                for (struct rec *r = ev->lru_head; r; r = r->lru_next)
                        if (!r->dirty && wants_write(r, now))
                                dirty_set(ev, r, true);
        }
        /* Records that cannot go yet stay on the list; stop early when
         * the lane or the bucket is empty. */
        kb__event_filter_refill(ev->filter);
        struct rec *r = ev->dirty_head, *next;
        for (; r && kb__event_filter_ready(ev->filter) &&
               !kb_kube_lane_full(s->kube, KB_KUBE_LANE_EVENT);
             r = next) {
                next = r->dirty_next;
                flush(s, r);
        }
}

void kb__events_stats(struct kb_sched *s, size_t *records, size_t *unsent_records)
{
        struct kb__events *ev = s->events;
        *records = ev ? ev->n : 0;
        *unsent_records = 0;
        for (struct rec *r = ev ? ev->dirty_head : NULL; r; r = r->dirty_next)
                ++*unsent_records;
}

void kb__events_release(struct kb_sched *s)
{
        struct kb__events *ev = s->events;
        if (!ev)
                return;
        /* Every record is on the LRU list. */
        while (ev->lru_head) {
                ev->lru_head->call = NULL; /* the client is gone by now */
                rec_free(ev, ev->lru_head);
        }
        kb_map_release(&ev->by_key);
        kb__event_filter_free(ev->filter);

        free(ev);
        s->events = NULL;
}
