/*
 * Reads: get, list (label and field selectors, limit and continue) and the
 * start of a watch (initial ADDED events, or a cursor into the history).
 */
#include "apiserver/apiserver-http.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool kb__selectors(struct kb_ctx *c, struct kb_selector **ls, struct kb_selector **fs)
{
        char err[256];
        *ls = *fs = NULL;
        if (kb__selector_parse(kb__query(c->req, "labelSelector"), false, ls, err, sizeof(err)) ||
            kb__selector_parse(kb__query(c->req, "fieldSelector"), true, fs, err, sizeof(err))) {
                kb__selector_free(*ls);
                *ls = NULL;
                kb__fail(c->resp, 400, "BadRequest", NULL, "%s", err);
                return false;
        }
        const char *bad = kb__selector_unsupported(*fs, c->rt);
        if (bad) {
                kb__fail(c->resp, 400, "BadRequest", NULL, "field label not supported: %s", bad);
                kb__selector_free(*ls);
                kb__selector_free(*fs);
                *ls = *fs = NULL;
                return false;
        }
        return true;
}

/* The request's keys: a namespace's ("ns/..." keys, between "ns/" and
 * "ns\x02" in kb__key_cmp's order) or every key. */
struct range {
        char *first; /* seek from here, inclusive; NULL: the first key */
        char *end;   /* the first key past the range; NULL: none */
        size_t nslen;
        const char *ns;
};

static void range_init(struct range *r, const struct kb_ctx *c)
{
        memset(r, 0, sizeof(*r));
        if (!c->ns || !c->rt->namespaced)
                return;
        r->ns = c->ns;
        r->nslen = strlen(c->ns);
        r->first = kb_xasprintf("%s/", c->ns);
        r->end = kb_xasprintf("%s\x02", c->ns);
}

static void range_release(struct range *r)
{
        free(r->first);
        free(r->end);
}

static bool in_range(const struct range *r, const struct kb_obj *o)
{
        return !o || !r->ns || (!strncmp(o->key, r->ns, r->nslen) && o->key[r->nslen] == '/');
}

static struct kb_obj *next_in(const struct range *r, const struct kb_rtype *rt,
                              const struct kb_obj *o)
{
        struct kb_obj *n = kb__index_seek(rt, o->key, false);
        return n && in_range(r, n) ? n : NULL;
}

void kb__collect(struct kb_ctx *c, struct kb_selector *ls, struct kb_selector *fs,
                 struct kb_listing *l)
{
        struct range r;
        range_init(&r, c);
        struct kb_obj *o = kb__index_seek(c->rt, r.first, true);
        for (o = in_range(&r, o) ? o : NULL; o; o = next_in(&r, c->rt, o)) {
                const struct kb_value *v = o->doc->v;
                if (kb__selector_match(ls, v) && kb__selector_match(fs, v))
                        KB_PUSH(l->objs, l->n, l->cap, v);
        }
        range_release(&r);
}

static char *hex_encode(const char *s)
{
        struct kb_buf b;
        kb_buf_init(&b);
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                kb_buf_printf(&b, "%02x", *p);
        return kb_buf_detach(&b);
}

static char *hex_decode(const char *s)
{
        size_t n = strlen(s);
        if (n % 2)
                return NULL;
        char *out = kb_xmalloc(n / 2 + 1);
        for (size_t i = 0; i < n / 2; i++) {
                unsigned v;
                char two[3] = {s[2 * i], s[2 * i + 1], 0};
                char *end;
                v = (unsigned)strtoul(two, &end, 16);
                if (*end || !v) {
                        free(out);
                        return NULL;
                }
                out[i] = (char)v;
        }
        out[n / 2] = 0;
        return out;
}

/*
 * A list, or one page of it.  The page walks the ordered index from the
 * continue key, so it costs its own length (plus what selectors skip), not
 * the whole type's.  remainingItemCount comes from ranks in the index, and
 * is left out when selectors make it unknowable, as upstream does.
 */
void kb__do_list(struct kb_ctx *c)
{
        struct kb_apiserver *srv = c->srv;
        struct kb_selector *ls, *fs;
        if (!kb__selectors(c, &ls, &fs))
                return;
        struct range r;
        range_init(&r, c);
        struct kb_listing l = {0};
        const char *cont = kb__query(c->req, "continue");
        const char *lim = kb__query(c->req, "limit");
        const char *lq = kb__query(c->req, "labelSelector");
        const char *fq = kb__query(c->req, "fieldSelector");
        bool selective = (lq && lq[0]) || (fq && fq[0]);
        char rvbuf[32];
        snprintf(rvbuf, sizeof(rvbuf), "%" PRIu64, srv->rv);
        char *next = NULL;
        struct kb_obj *o;
        if (cont && cont[0]) {
                char *tok = hex_decode(cont);
                char *colon = tok ? strchr(tok, ':') : NULL;
                if (!colon) {
                        free(tok);
                        kb__fail(c->resp, 400, "BadRequest", NULL, "continue key is not valid");
                        goto out;
                }
                *colon = 0;
                uint64_t trv = strtoull(tok, NULL, 10);
                if (trv < srv->compacted_rv) {
                        free(tok);
                        kb__fail(
                            c->resp, 410, "Expired", NULL,
                            "The provided continue parameter is too old to display a consistent "
                            "list result. You can start a new list without the continue "
                            "parameter.");
                        goto out;
                }
                o = kb__index_seek(c->rt, colon + 1, false);
                free(tok);
        } else {
                o = kb__index_seek(c->rt, r.first, true);
        }
        if (!in_range(&r, o))
                o = NULL;
        long limit = lim ? strtol(lim, NULL, 10) : 0;
        struct kb_obj *last = NULL;
        for (; o; o = next_in(&r, c->rt, o)) {
                const struct kb_value *v = o->doc->v;
                if (!kb__selector_match(ls, v) || !kb__selector_match(fs, v))
                        continue;
                KB_PUSH(l.objs, l.n, l.cap, v);
                if (limit > 0 && l.n == (size_t)limit) {
                        last = o;
                        break;
                }
        }
        int64_t remaining = -1;
        if (last && next_in(&r, c->rt, last)) {
                char *tok = kb_xasprintf("%" PRIu64 ":%s", srv->rv, last->key);
                next = hex_encode(tok);
                free(tok);
                size_t end = r.end ? kb__index_rank(c->rt, r.end) : kb__index_count(c->rt);
                if (!selective)
                        remaining = (int64_t)(end - kb__index_rank(c->rt, last->key) - 1);
        }
        struct kb_value *out = kb_value_new(KB_VOBJECT);
        if (kb__wants_table(c->req)) {
                const char *inc = kb__query(c->req, "includeObject");
                kb__table(srv, c->rt, l.objs, l.n, inc ? inc : "Metadata", true, rvbuf, out);
                struct kb_value *md = kb_value_get(out, "metadata");
                if (next)
                        kb_value_set(md, "continue", kb_value_new_string(next));
        } else {
                char *av = kb__api_version(c->rt);
                kb_value_set(out, "kind", kb_value_new_string(c->rt->list_kind));
                kb_value_set(out, "apiVersion", kb_value_new_string(av));
                free(av);
                struct kb_value *md = kb_value_ensure_object(out, "metadata");
                kb_value_set(md, "resourceVersion", kb_value_new_string(rvbuf));
                if (next)
                        kb_value_set(md, "continue", kb_value_new_string(next));
                if (remaining >= 0)
                        kb_value_set(md, "remainingItemCount", kb_value_new_int(remaining));
                struct kb_value *items = kb_value_new(KB_VARRAY);
                for (size_t i = 0; i < l.n; i++)
                        kb_value_append(items, kb_value_clone(l.objs[i]));
                kb_value_set(out, "items", items);
        }
        kb__reply(c->resp, 200, out);
out:
        free(next);
        free(l.objs);
        range_release(&r);
        kb__selector_free(ls);
        kb__selector_free(fs);
}

/* ---- watch ------------------------------------------------------------------ */

void kb__do_watch(struct kb_ctx *c)
{
        struct kb_apiserver *srv = c->srv;
        struct kb_selector *ls, *fs;
        if (!kb__selectors(c, &ls, &fs))
                return;
        struct kb_watch *w = kb_xcalloc(1, sizeof(*w));
        w->srv = srv;
        w->rt = c->rt;
        w->view = c->view;
        w->ns = c->ns ? kb_xstrdup(c->ns) : NULL;
        w->lsel = ls;
        w->fsel = fs;
        w->table = kb__wants_table(c->req);
        const char *inc = kb__query(c->req, "includeObject");
        w->include = kb_xstrdup(inc ? inc : "Metadata");
        kb_buf_init(&w->out);
        w->bookmarks = kb__query_bool(c->req, "allowWatchBookmarks");
        double now = kb_now_mono();
        double interval = srv->opts.bookmark_interval > 0 ? srv->opts.bookmark_interval : 30;
        w->next_bookmark = now + interval;
        const char *ts = kb__query(c->req, "timeoutSeconds");
        if (ts && strtod(ts, NULL) > 0)
                w->deadline = now + strtod(ts, NULL);
        if (srv->opts.fault_watch_close > 0)
                w->fault_close = now + srv->opts.fault_watch_close;
        const char *rv = kb__query(c->req, "resourceVersion");
        c->resp->status = 200;
        c->resp->content_type = CT_JSON;
        c->resp->watch = w;
        /* sendInitialEvents (the watch-list protocol): the current state as
         * ADDED events from any resourceVersion, then a bookmark that marks
         * their end; =false from "" or "0" starts at the newest event. */
        const char *sie = kb__query(c->req, "sendInitialEvents");
        bool initial = kb__query_bool(c->req, "sendInitialEvents");
        bool from_now = !rv || !rv[0] || !strcmp(rv, "0");
        if (sie && !initial && from_now) {
                w->cursor = srv->rv;
                return;
        }
        if (from_now || initial) {
                struct kb_listing l = {0};
                kb__collect(c, ls, fs, &l);
                for (size_t i = 0; i < l.n; i++)
                        kb__watch_event(w, "ADDED", l.objs[i]);
                free(l.objs);
                w->cursor = srv->rv;
                if (initial && w->bookmarks) {
                        w->initial_end = true;
                        kb__watch_bookmark(w);
                }
                return;
        }
        char *end;
        errno = 0;
        uint64_t n = strtoull(rv, &end, 10);
        bool bad = *end || errno;
        bool injected =
            !bad && srv->opts.fault_watch_410 > 0 && kb__fault_roll(srv, srv->opts.fault_watch_410);
        if (injected)
                KB_WARN("fault: answering watch %s from resourceVersion %s with 410", c->req->path,
                        rv);
        if (bad || injected || n < srv->compacted_rv) {
                struct kb_value *st = kb__status_obj(410, "Expired", NULL);
                char *msg = kb_xasprintf("too old resource version: %s (%" PRIu64 ")", rv,
                                         srv->compacted_rv + 1);
                kb_value_set(st, "message", kb_value_new_string(msg));
                free(msg);
                kb_value_set(st, "code", kb_value_new_int(410));
                char *text = kb_json_emit(st, false);
                kb_buf_printf(&w->out, "{\"type\":\"ERROR\",\"object\":%s}\n", text);
                free(text);
                kb_value_free(st);
                w->end = true;
                return;
        }
        w->cursor = n;
}

void kb__do_item_get(struct kb_ctx *c, struct kb_obj *o)
{
        if (!o) {
                kb__not_found(c, c->rt, c->name);
                return;
        }
        if (kb__wants_table(c->req)) {
                struct kb_value *out = kb_value_new(KB_VOBJECT);
                const struct kb_value *objs[1] = {o->doc->v};
                const char *inc = kb__query(c->req, "includeObject");
                kb__table(c->srv, c->rt, objs, 1, inc ? inc : "Metadata", true,
                          kb__meta_str(o->doc->v, "resourceVersion"), out);
                kb__reply(c->resp, 200, out);
                return;
        }
        kb__reply(c->resp, 200, kb_value_clone(o->doc->v));
}
