/*
 * The store: resource types, objects, the global resourceVersion and the
 * watch history.  Every function here runs with srv->mu held.
 *
 * One counter numbers every write of every type, as etcd's revision does for
 * the real server; a list's resourceVersion is the counter's value, and a
 * watch from N replays the retained events with rv > N.  The history is a
 * ring of the last opts.history events; a watch from an rv older than the
 * ring gets 410 Expired and lists again.
 */
#include "apiserver/apiserver-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double kb__now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* xorshift64*: fault rolls and generated names need no more. */
uint64_t kb__rand(struct kb_apiserver *srv)
{
        uint64_t x = srv->rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        srv->rng = x;
        return x * 2685821657736338717ULL;
}

struct kb_doc *kb__doc_new(struct kb_value *v)
{
        struct kb_doc *d = kb_xmalloc(sizeof(*d));
        d->refs = 1;
        d->v = v;
        return d;
}

void kb__doc_unref(struct kb_doc *d)
{
        if (d && --d->refs == 0) {
                kb_value_free(d->v);
                free(d);
        }
}

const char *kb__meta_str(const struct kb_value *obj, const char *key)
{
        return kb_value_str(kb_value_dig(obj, "metadata", key));
}

char *kb__api_version(const struct kb_rtype *rt)
{
        if (!rt->group[0])
                return kb_xstrdup(rt->version);
        return kb_xasprintf("%s/%s", rt->group, rt->version);
}

static char *obj_key(const char *ns, const char *name)
{
        if (ns && ns[0])
                return kb_xasprintf("%s/%s", ns, name);
        return kb_xstrdup(name);
}

struct kb_obj *kb__obj_find(struct kb_rtype *rt, const char *ns, const char *name)
{
        struct kb_obj *o = NULL;
        char *key = obj_key(rt->namespaced ? ns : NULL, name);
        HASH_FIND_STR(rt->objs, key, o);
        free(key);
        return o;
}

static void hist_push(struct kb_apiserver *srv, enum kb_evtype type, struct kb_rtype *rt,
                      struct kb_doc *obj, struct kb_doc *old)
{
        size_t cap = srv->opts.history;
        if (srv->hist_len == cap) {
                struct kb_event *e = &srv->hist[srv->hist_start];
                srv->compacted_rv = e->rv;
                kb__doc_unref(e->obj);
                kb__doc_unref(e->old);
                srv->hist_start = (srv->hist_start + 1) % cap;
                srv->hist_len--;
        }
        struct kb_event *e = &srv->hist[(srv->hist_start + srv->hist_len) % cap];
        srv->hist_len++;
        e->rv = srv->rv;
        e->type = type;
        e->rt = rt;
        e->obj = obj;
        obj->refs++;
        e->old = old;
        if (old)
                old->refs++;
        pthread_cond_broadcast(&srv->cond);
}

static void set_rv(struct kb_value *v, uint64_t rv)
{
        char buf[32];
        snprintf(buf, sizeof(buf), "%" PRIu64, rv);
        kb_value_set(kb_value_ensure_object(v, "metadata"), "resourceVersion",
                     kb_value_new_string(buf));
}

struct kb_doc *kb__store_put(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_value *v)
{
        const char *ns = kb__meta_str(v, "namespace");
        const char *name = kb__meta_str(v, "name");
        char *key = obj_key(rt->namespaced ? ns : NULL, name);
        struct kb_obj *o = NULL;
        HASH_FIND_STR(rt->objs, key, o);
        srv->rv++;
        set_rv(v, srv->rv);
        struct kb_doc *d = kb__doc_new(v);
        if (o) {
                free(key);
                struct kb_doc *old = o->doc;
                kb__sim_observe(srv, rt, o->key, old->v, v);
                o->doc = d;
                hist_push(srv, KB_EV_MODIFIED, rt, d, old);
                kb__doc_unref(old);
        } else {
                o = kb_xcalloc(1, sizeof(*o));
                o->key = key;
                o->doc = d;
                HASH_ADD_KEYPTR(hh, rt->objs, o->key, strlen(o->key), o);
                kb__index_insert(rt, o);
                kb__sim_observe(srv, rt, o->key, NULL, v);
                hist_push(srv, KB_EV_ADDED, rt, d, NULL);
        }
        return d;
}

/* What the garbage collector does when an owner is gone (background
 * propagation): the pods and Volcano PodGroups it owned go too, unless the
 * delete asked to orphan them.  Its deletes ask no grace period, so a
 * running pod takes its own (kube-controller-manager's collector does the
 * same: the pods of a deleted Job hold their node for
 * terminationGracePeriodSeconds). */
static void collect_dependents(struct kb_apiserver *srv, const char *uid)
{
        struct kb_rtype *pgs = kb__type_find(srv, "scheduling.volcano.sh", "v1beta1", "podgroups");
        struct kb_rtype *types[] = {srv->pods, pgs};
        for (size_t t = 0; t < KB_ARRAY_SIZE(types); t++) {
                if (!types[t] || types[t]->gone)
                        continue;
                size_t n;
                char **keys = t == 0 ? kb__sim_owned_pods(srv, uid, &n)
                                     : kb__sim_owned_podgroups(srv, uid, &n);
                for (size_t i = 0; i < n; i++) {
                        struct kb_obj *d = NULL;
                        HASH_FIND_STR(types[t]->objs, keys[i], d);
                        if (d)
                                kb__store_delete(srv, types[t], d,
                                                 t == 0 ? kb__pod_grace(srv, d->doc->v, NULL) : 0);
                }
                kb__strv_free(keys, n);
        }
}

void kb__store_remove(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_obj *o)
{
        char *uid = srv->orphan ? NULL : kb_xstrdup(kb__meta_str(o->doc->v, "uid"));
        HASH_DEL(rt->objs, o);
        kb__index_remove(rt, o);
        kb__sim_observe(srv, rt, o->key, o->doc->v, NULL);
        /* The DELETED event carries the last state under a new rv. */
        srv->rv++;
        struct kb_value *last = kb_value_clone(o->doc->v);
        set_rv(last, srv->rv);
        struct kb_doc *d = kb__doc_new(last);
        hist_push(srv, KB_EV_DELETED, rt, d, NULL);
        kb__doc_unref(d);
        kb__doc_unref(o->doc);
        free(o->key);
        free(o);
        if (uid)
                collect_dependents(srv, uid);
        free(uid);
}

void kb__store_cascade_namespace(struct kb_apiserver *srv, const char *ns)
{
        /* Everything in it goes anyway, and the walks below must not see
         * the collector remove what they are about to visit. */
        bool orphan = srv->orphan;
        srv->orphan = true;
        for (size_t i = 0; i < srv->ntypes; i++) {
                struct kb_rtype *rt = srv->types[i];
                if (rt->gone || !rt->namespaced)
                        continue;
                struct kb_obj *o, *tmp;
                HASH_ITER(hh, rt->objs, o, tmp)
                {
                        if (kb_streq(kb__meta_str(o->doc->v, "namespace"), ns))
                                kb__store_remove(srv, rt, o);
                }
        }
        srv->orphan = orphan;
}

void kb__store_delete(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_obj *o, double grace)
{
        const struct kb_value *fin = kb_value_dig(o->doc->v, "metadata", "finalizers");
        bool has_fin = kb_value_is(fin, KB_VARRAY) && fin->arr.n > 0;
        if (has_fin || grace > 0) {
                if (kb_value_dig(o->doc->v, "metadata", "deletionTimestamp"))
                        return; /* already being deleted */
                struct kb_value *v = kb_value_clone(o->doc->v);
                struct kb_value *md = kb_value_ensure_object(v, "metadata");
                char ts[40];
                kb_format_time(kb__now() + grace, ts, sizeof(ts));
                kb_value_set(md, "deletionTimestamp", kb_value_new_string(ts));
                kb_value_set(md, "deletionGracePeriodSeconds", kb_value_new_int((int64_t)grace));
                kb__store_put(srv, rt, v);
                return;
        }
        if (!rt->group[0] && !strcmp(rt->resource, "namespaces")) {
                char *ns = kb_xstrdup(kb__meta_str(o->doc->v, "name"));
                kb__store_cascade_namespace(srv, ns);
                free(ns);
        }
        if (!strcmp(rt->group, "apiextensions.k8s.io") &&
            !strcmp(rt->resource, "customresourcedefinitions")) {
                char *name = kb_xstrdup(kb__meta_str(o->doc->v, "name"));
                kb__store_remove(srv, rt, o);
                kb__unregister_crd(srv, name);
                free(name);
                return;
        }
        kb__store_remove(srv, rt, o);
}

static void new_uid(struct kb_apiserver *srv, char *buf, size_t n)
{
        uint64_t a = kb__rand(srv), b = kb__rand(srv);
        snprintf(buf, n, "%08x-%04x-4%03x-%04x-%012" PRIx64, (unsigned)(a >> 32),
                 (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xfff,
                 (unsigned)(0x8000 | ((b >> 48) & 0x3fff)), (uint64_t)(b & 0xffffffffffffULL));
}

void kb__meta_init(struct kb_apiserver *srv, struct kb_value *obj)
{
        struct kb_value *md = kb_value_ensure_object(obj, "metadata");
        char buf[64];
        new_uid(srv, buf, sizeof(buf));
        kb_value_set(md, "uid", kb_value_new_string(buf));
        kb_format_time(kb__now(), buf, sizeof(buf));
        kb_value_set(md, "creationTimestamp", kb_value_new_string(buf));
        kb_value_del(md, "deletionTimestamp");
        kb_value_del(md, "deletionGracePeriodSeconds");
        kb_value_del(md, "managedFields");
        if (kb_value_get(obj, "spec"))
                kb_value_set(md, "generation", kb_value_new_int(1));
}

void kb__event_record(struct kb_apiserver *srv, const struct kb_rtype *rt,
                      const struct kb_value *obj, const char *type, const char *reason,
                      const char *component, const char *fmt, ...)
{
        struct kb_rtype *evt = kb__type_find(srv, "", "v1", "events");
        const char *ns = kb__meta_str(obj, "namespace");
        const char *name = kb__meta_str(obj, "name");
        if (!evt || !name)
                return;
        if (!ns || !ns[0])
                ns = "default";
        va_list ap;
        va_start(ap, fmt);
        struct kb_buf msg;
        kb_buf_init(&msg);
        kb_buf_vprintf(&msg, fmt, ap);
        va_end(ap);

        struct kb_value *ev = kb_value_new(KB_VOBJECT);
        kb_value_set(ev, "kind", kb_value_new_string("Event"));
        kb_value_set(ev, "apiVersion", kb_value_new_string("v1"));
        struct kb_value *md = kb_value_ensure_object(ev, "metadata");
        char *evname = kb_xasprintf("%s.%016" PRIx64, name, kb__rand(srv));
        kb_value_set(md, "name", kb_value_new_string(evname));
        free(evname);
        kb_value_set(md, "namespace", kb_value_new_string(ns));
        kb__meta_init(srv, ev);
        struct kb_value *io = kb_value_ensure_object(ev, "involvedObject");
        char *av = kb__api_version(rt);
        kb_value_set(io, "apiVersion", kb_value_new_string(av));
        free(av);
        kb_value_set(io, "kind", kb_value_new_string(rt->kind));
        kb_value_set(io, "name", kb_value_new_string(name));
        if (kb__meta_str(obj, "namespace"))
                kb_value_set(io, "namespace", kb_value_new_string(ns));
        const char *uid = kb__meta_str(obj, "uid");
        kb_value_set(io, "uid", kb_value_new_string(uid ? uid : ""));
        kb_value_set(ev, "reason", kb_value_new_string(reason));
        kb_value_set(ev, "message", kb_value_new_string(msg.data));
        kb_value_set(ev, "type", kb_value_new_string(type));
        kb_value_set(ev, "count", kb_value_new_int(1));
        char ts[40];
        kb_format_time(kb__now(), ts, sizeof(ts));
        kb_value_set(ev, "firstTimestamp", kb_value_new_string(ts));
        kb_value_set(ev, "lastTimestamp", kb_value_new_string(ts));
        struct kb_value *src = kb_value_ensure_object(ev, "source");
        kb_value_set(src, "component", kb_value_new_string(component));
        kb__store_put(srv, evt, ev);
        kb_buf_release(&msg);
}

void kb__store_free(struct kb_apiserver *srv)
{
        for (size_t i = 0; i < srv->hist_len; i++) {
                struct kb_event *e = &srv->hist[(srv->hist_start + i) % srv->opts.history];
                kb__doc_unref(e->obj);
                kb__doc_unref(e->old);
        }
        free(srv->hist);
        for (size_t i = 0; i < srv->ntypes; i++)
                kb__type_free(srv->types[i]);
        free(srv->types);
}
