/*
 * Watch streams.  A watch keeps a cursor (the last resourceVersion it has
 * looked at) and replays the history after it, filtered by namespace and
 * selectors, as newline-separated {"type":...,"object":...} events.
 *
 * Selector transitions follow the real server: an object that stops
 * matching is sent as DELETED, one that starts matching as ADDED.
 *   watch labelSelector=app=a; pod p relabelled app=a -> app=b
 *   -> {"type":"DELETED","object":<p with app=b>}
 *
 * Table watches (Accept as=Table) send one-row Tables; only the first
 * carries columnDefinitions, as upstream does, so kubectl prints one header.
 */
#include "apiserver/apiserver-http.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void kb__watch_event(struct kb_watch *w, const char *type, const struct kb_value *obj)
{
        char *text;
        if (w->table) {
                struct kb_value *t = kb_value_new(KB_VOBJECT);
                const struct kb_value *objs[1] = {obj};
                kb__table(w->srv, w->rt, objs, 1, w->include, !w->sent_columns,
                          kb__meta_str(obj, "resourceVersion"), t);
                w->sent_columns = true;
                text = kb_json_emit(t, false);
                kb_value_free(t);
        } else if (w->view) {
                struct kb_value *v = kb__view_out(w->view, obj);
                text = kb_json_emit(v, false);
                kb_value_free(v);
        } else {
                text = kb_json_emit(obj, false);
        }
        kb_buf_printf(&w->out, "{\"type\":\"%s\",\"object\":%s}\n", type, text);
        free(text);
}

static bool matches(const struct kb_watch *w, const struct kb_value *obj)
{
        if (w->ns && !kb_streq(kb__meta_str(obj, "namespace"), w->ns))
                return false;
        return kb__selector_match(w->lsel, obj) && kb__selector_match(w->fsel, obj);
}

static void expired(struct kb_watch *w)
{
        kb_buf_printf(&w->out,
                      "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                      "\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource "
                      "version: %" PRIu64 " (%" PRIu64
                      ")\",\"reason\":\"Expired\",\"code\":410}}\n",
                      w->cursor, w->srv->compacted_rv + 1);
        w->end = true;
}

/* Index into the ring of the first event with rv > cursor (binary search:
 * the ring holds increasing rvs). */
static size_t first_after(const struct kb_apiserver *srv, uint64_t cursor)
{
        size_t lo = 0, hi = srv->hist_len;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const struct kb_event *e = &srv->hist[(srv->hist_start + mid) % srv->opts.history];
                if (e->rv <= cursor)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static void scan(struct kb_watch *w)
{
        struct kb_apiserver *srv = w->srv;
        if (w->cursor < srv->compacted_rv) {
                expired(w);
                return;
        }
        for (size_t i = first_after(srv, w->cursor); i < srv->hist_len; i++) {
                const struct kb_event *e = &srv->hist[(srv->hist_start + i) % srv->opts.history];
                w->cursor = e->rv;
                if (e->rt != w->rt)
                        continue;
                bool now = matches(w, e->obj->v);
                switch (e->type) {
                case KB_EV_ADDED:
                        if (now)
                                kb__watch_event(w, "ADDED", e->obj->v);
                        break;
                case KB_EV_DELETED:
                        if (now)
                                kb__watch_event(w, "DELETED", e->obj->v);
                        break;
                case KB_EV_MODIFIED: {
                        bool before = e->old && matches(w, e->old->v);
                        if (now && before)
                                kb__watch_event(w, "MODIFIED", e->obj->v);
                        else if (now)
                                kb__watch_event(w, "ADDED", e->obj->v);
                        else if (before)
                                kb__watch_event(w, "DELETED", e->obj->v);
                        break;
                }
                }
        }
}

/* A bookmark at the cursor; the first after sendInitialEvents' ADDED events
 * carries the annotation that says they are over. */
void kb__watch_bookmark(struct kb_watch *w)
{
        const struct kb_rtype *rt = w->view ? w->view : w->rt;
        char *av = kb__api_version(rt);
        kb_buf_printf(&w->out,
                      "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"%s\",\"apiVersion\":\"%s\","
                      "\"metadata\":{\"resourceVersion\":\"%" PRIu64 "\"%s}}}\n",
                      rt->kind, av, w->cursor,
                      w->initial_end ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}"
                                     : "");
        w->initial_end = false;
        free(av);
}

static void wait_until(struct kb_apiserver *srv, double mono_deadline)
{
        double left = mono_deadline - kb_now_mono();
        if (left <= 0)
                return;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double whole = floor(left);
        ts.tv_sec += (time_t)whole;
        ts.tv_nsec += (long)((left - whole) * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&srv->cond, &srv->mu, &ts);
}

long kb_apiserver_watch_next(struct kb_watch *w, double wait, const char **data)
{
        struct kb_apiserver *srv = w->srv;
        if (w->off) {
                kb_buf_reset(&w->out);
                w->off = 0;
        }
        if (w->out.len) {
                /* Events queued when the watch began. */
                *data = w->out.data;
                w->off = w->out.len;
                return (long)w->out.len;
        }
        if (w->end)
                return -1;
        double until = kb_now_mono() + wait;
        pthread_mutex_lock(&srv->mu);
        for (;;) {
                if (srv->stopping || w->rt->gone) {
                        w->end = true;
                        break;
                }
                if (w->cursor < srv->rv || w->cursor < srv->compacted_rv)
                        scan(w);
                if (w->out.len)
                        break;
                double now = kb_now_mono();
                if (w->deadline > 0 && now >= w->deadline) {
                        w->end = true;
                        break;
                }
                if (w->fault_close > 0 && now >= w->fault_close) {
                        KB_WARN("fault: closing watch on %s after %.1fs", w->rt->resource,
                                srv->opts.fault_watch_close);
                        w->end = true;
                        break;
                }
                if (w->bookmarks && now >= w->next_bookmark) {
                        double iv =
                            srv->opts.bookmark_interval > 0 ? srv->opts.bookmark_interval : 30;
                        w->next_bookmark = now + iv;
                        kb__watch_bookmark(w);
                        break;
                }
                if (now >= until)
                        break;
                double next = until;
                if (w->deadline > 0 && w->deadline < next)
                        next = w->deadline;
                if (w->fault_close > 0 && w->fault_close < next)
                        next = w->fault_close;
                if (w->bookmarks && w->next_bookmark < next)
                        next = w->next_bookmark;
                wait_until(srv, next);
        }
        pthread_mutex_unlock(&srv->mu);
        if (w->out.len) {
                *data = w->out.data;
                w->off = w->out.len;
                return (long)w->out.len;
        }
        return w->end ? -1 : 0;
}

void kb_apiserver_watch_free(struct kb_watch *w)
{
        if (!w)
                return;
        kb__selector_free(w->lsel);
        kb__selector_free(w->fsel);
        free(w->ns);
        free(w->include);
        kb_buf_release(&w->out);
        free(w);
}
