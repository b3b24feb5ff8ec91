/*
 * The cluster cache: one hash table per kind, keyed "namespace/name" (or
 * "name"), of reference-counted decoded objects; binding marks; snapshots.
 *
 * Every kb_<kind> struct starts with its struct kb_meta, so the cache reads
 * names and uids through a cast to the meta without knowing the kind.
 *
 * Sources.  Several reflectors may feed one kind, each watching a part of
 * it through a field selector (pods: "spec.schedulerName=kbatch" and
 * "spec.nodeName!="), and the parts overlap.  Each entry remembers which
 * sources hold it (a bit per source) and goes only when none does: a
 * DELETED from one source, or its absence from one source's relist, only
 * drops that source's bit.  For example, a pod of ours that gets bound is
 * held by both; a pod of another scheduler arrives from the second when it
 * is bound and was never in the first; a deleted pod goes when the last of
 * its sources says so.  The sources' streams are not ordered with respect
 * to each other, so an update never replaces a newer copy of the same
 * object (same uid, higher numeric resourceVersion) with an older one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "cache/cache.h"

#define NKINDS (KB_KIND_HYPERNODE + 1)
/* How long an acknowledged bind may wait for the watch to show it. */
#define MARK_TTL 60.0

struct cobj {
        int refs;
        enum kb_kind kind;
        void *ptr;
};

struct entry {
        UT_hash_handle hh;
        char *key;
        struct cobj *o;
        unsigned sources; /* a bit per source holding the object */
        unsigned seen;    /* a bit per source: upserted since its list began */
};

struct mark {
        UT_hash_handle hh;
        char *key;
        char *uid;
        char *node;
        double acked; /* monotonic time of a successful answer, 0 while in flight */
};

struct feed {
        struct kb_cache *c;
        enum kb_kind kind;
        unsigned source;
};

struct kb_cache {
        struct entry *tab[NKINDS];
        struct mark *marks;
        struct feed feeds[NKINDS][KB_CACHE_MAX_SOURCES];
        kb_cache_change_fn on_change;
        void *on_change_arg;
};

static const char *kind_name(enum kb_kind k)
{
        static const char *const names[NKINDS] = {"object",    "node",     "pod",
                                                  "podgroup",  "queue",    "priorityclass",
                                                  "namespace", "hypernode"};
        return (unsigned)k < NKINDS ? names[k] : "object";
}

static const struct kb_meta *meta_of(const void *ptr)
{
        return ptr;
}

static void cobj_unref(struct cobj *o)
{
        if (!o || --o->refs > 0)
                return;
        struct kb_object obj = {.kind = o->kind, .ptr = o->ptr};
        kb_object_release(&obj);
        free(o);
}

static char *make_key(const char *ns, const char *name)
{
        return ns && *ns ? kb_xasprintf("%s/%s", ns, name) : kb_xstrdup(name);
}

static void mark_del(struct kb_cache *c, struct mark *m)
{
        HASH_DEL(c->marks, m);
        free(m->key);
        free(m->uid);
        free(m->node);
        free(m);
}

static void entry_del(struct kb_cache *c, enum kb_kind kind, struct entry *e)
{
        HASH_DEL(c->tab[kind], e);
        if (kind == KB_KIND_POD) {
                struct mark *m;
                HASH_FIND_STR(c->marks, e->key, m);
                if (m)
                        mark_del(c, m);
        }
        cobj_unref(e->o);
        free(e->key);
        free(e);
}

struct kb_cache *kb_cache_new(void)
{
        struct kb_cache *c = kb_xcalloc(1, sizeof(*c));
        for (int k = 0; k < NKINDS; k++) {
                for (unsigned src = 0; src < KB_CACHE_MAX_SOURCES; src++) {
                        c->feeds[k][src].c = c;
                        c->feeds[k][src].kind = (enum kb_kind)k;
                        c->feeds[k][src].source = src;
                }
        }
        return c;
}

void kb_cache_free(struct kb_cache *c)
{
        if (!c)
                return;
        for (int k = 0; k < NKINDS; k++) {
                struct entry *e, *tmp;
                HASH_ITER(hh, c->tab[k], e, tmp)
                entry_del(c, (enum kb_kind)k, e);
        }
        struct mark *m, *mt;
        HASH_ITER(hh, c->marks, m, mt)
        mark_del(c, m);
        free(c);
}

void kb_cache_on_change(struct kb_cache *c, kb_cache_change_fn fn, void *arg)
{
        c->on_change = fn;
        c->on_change_arg = arg;
}

static void changed(struct kb_cache *c, enum kb_kind kind)
{
        if (c->on_change)
                c->on_change(c->on_change_arg, kind);
}

/* ---- feeding ------------------------------------------------------------------- */

static int decode(enum kb_kind kind, const struct kb_value *obj, void **out, char *err,
                  size_t errlen)
{
        switch (kind) {
        case KB_KIND_NODE:
                return kb_node_decode(obj, (struct kb_node **)out, err, errlen);
        case KB_KIND_POD:
                return kb_pod_decode(obj, (struct kb_pod **)out, err, errlen);
        case KB_KIND_PODGROUP:
                return kb_podgroup_decode(obj, (struct kb_podgroup **)out, err, errlen);
        case KB_KIND_QUEUE:
                return kb_queue_decode(obj, (struct kb_queue **)out, err, errlen);
        case KB_KIND_PRIORITYCLASS:
                return kb_priorityclass_decode(obj, (struct kb_priorityclass **)out, err, errlen);
        case KB_KIND_NAMESPACE:
                return kb_namespace_decode(obj, (struct kb_namespace **)out, err, errlen);
        case KB_KIND_HYPERNODE:
                return kb_hypernode_decode(obj, (struct kb_hypernode **)out, err, errlen);
        default:
                snprintf(err, errlen, "unknown kind");
                return KB_EBADINPUT;
        }
}

/* Whether b is an older copy of the object a is: the same uid and a lower
 * resourceVersion, when both versions are decimal numbers (as etcd's and
 * kbatch-apiserver's are; anything else counts as not older). */
static bool older(const struct kb_meta *a, const struct kb_meta *b)
{
        if (!a->uid || !b->uid || strcmp(a->uid, b->uid) || !a->resource_version ||
            !b->resource_version)
                return false;
        char *ea, *eb;
        unsigned long long va = strtoull(a->resource_version, &ea, 10);
        unsigned long long vb = strtoull(b->resource_version, &eb, 10);
        if (*ea || *eb || ea == a->resource_version || eb == b->resource_version)
                return false;
        return vb < va;
}

/* Stores obj for source src; refresh_only: update an entry that exists and
 * change no membership (refresh_only and src are exclusive). */
static int upsert(struct kb_cache *c, enum kb_kind kind, const struct kb_value *obj, unsigned src,
                  bool refresh_only)
{
        char err[512];
        void *ptr = NULL;
        int rc = decode(kind, obj, &ptr, err, sizeof(err));
        if (rc) {
                KB_WARN("ignoring %s: %s", kind_name(kind), err);
                return rc;
        }
        const struct kb_meta *m = meta_of(ptr);
        char *key = make_key(m->namespace, m->name);
        struct entry *e;
        HASH_FIND_STR(c->tab[kind], key, e);
        if (!e && refresh_only) {
                free(key);
                struct kb_object o = {.kind = kind, .ptr = ptr};
                kb_object_release(&o);
                return 0;
        }
        if (!e) {
                e = kb_xcalloc(1, sizeof(*e));
                e->key = key;
                HASH_ADD_KEYPTR(hh, c->tab[kind], e->key, strlen(e->key), e);
        } else {
                free(key);
                if (older(meta_of(e->o->ptr), m)) {
                        /* Another source is ahead: keep its copy. */
                        if (!refresh_only) {
                                e->sources |= 1u << src;
                                e->seen |= 1u << src;
                        }
                        struct kb_object o = {.kind = kind, .ptr = ptr};
                        kb_object_release(&o);
                        return 0;
                }
                cobj_unref(e->o);
        }
        e->o = kb_xcalloc(1, sizeof(*e->o));
        e->o->refs = 1;
        e->o->kind = kind;
        e->o->ptr = ptr;
        if (!refresh_only) {
                e->sources |= 1u << src;
                e->seen |= 1u << src;
        }
        if (kind == KB_KIND_POD) {
                /* The watch shows the pod bound (or replaced): the mark has
                 * done its work. */
                const struct kb_pod *p = ptr;
                struct mark *mk;
                HASH_FIND_STR(c->marks, e->key, mk);
                if (mk && ((p->node_name && *p->node_name) || !kb_streq(mk->uid, p->meta.uid) ||
                           p->meta.deletion || kb_pod_terminal(p)))
                        mark_del(c, mk);
        }
        changed(c, kind);
        return 0;
}

int kb_cache_upsert(struct kb_cache *c, enum kb_kind kind, const struct kb_value *obj)
{
        return upsert(c, kind, obj, 0, false);
}

int kb_cache_refresh(struct kb_cache *c, enum kb_kind kind, const struct kb_value *obj)
{
        return upsert(c, kind, obj, 0, true);
}

static void remove_src(struct kb_cache *c, enum kb_kind kind, const struct kb_value *obj,
                       unsigned src)
{
        const char *ns = kb_value_str(kb_value_dig(obj, "metadata", "namespace", NULL));
        const char *name = kb_value_str(kb_value_dig(obj, "metadata", "name", NULL));
        if (!name)
                return;
        char *key = make_key(ns, name);
        struct entry *e;
        HASH_FIND_STR(c->tab[kind], key, e);
        free(key);
        if (!e)
                return;
        e->sources &= ~(1u << src);
        if (!e->sources) {
                entry_del(c, kind, e);
                changed(c, kind);
        }
}

void kb_cache_remove(struct kb_cache *c, enum kb_kind kind, const struct kb_value *obj)
{
        remove_src(c, kind, obj, 0);
}

static void list_begin(struct kb_cache *c, enum kb_kind kind, unsigned src)
{
        struct entry *e, *tmp;
        HASH_ITER(hh, c->tab[kind], e, tmp)
        e->seen &= ~(1u << src);
}

static void list_end(struct kb_cache *c, enum kb_kind kind, unsigned src)
{
        struct entry *e, *tmp;
        bool any = false;
        HASH_ITER(hh, c->tab[kind], e, tmp)
        {
                if (e->seen & (1u << src))
                        continue;
                e->sources &= ~(1u << src);
                if (!e->sources) {
                        entry_del(c, kind, e);
                        any = true;
                }
        }
        if (any)
                changed(c, kind);
}

void kb_cache_list_begin(struct kb_cache *c, enum kb_kind kind)
{
        list_begin(c, kind, 0);
}

void kb_cache_list_end(struct kb_cache *c, enum kb_kind kind)
{
        list_end(c, kind, 0);
}

static void feed_begin(void *arg)
{
        struct feed *f = arg;
        list_begin(f->c, f->kind, f->source);
}

static void feed_upsert(void *arg, const struct kb_value *obj)
{
        struct feed *f = arg;
        upsert(f->c, f->kind, obj, f->source, false);
}

static void feed_remove(void *arg, const struct kb_value *obj)
{
        struct feed *f = arg;
        remove_src(f->c, f->kind, obj, f->source);
}

static void feed_end(void *arg)
{
        struct feed *f = arg;
        list_end(f->c, f->kind, f->source);
}

const struct kb_reflector_ops kb_cache_reflector_ops = {
    .list_begin = feed_begin,
    .upsert = feed_upsert,
    .remove = feed_remove,
    .list_end = feed_end,
};

void *kb_cache_feed(struct kb_cache *c, enum kb_kind kind)
{
        return &c->feeds[kind][0];
}

void *kb_cache_feed_source(struct kb_cache *c, enum kb_kind kind, unsigned source)
{
        if (source >= KB_CACHE_MAX_SOURCES)
                kb_die("cache: source %u out of range", source);
        return &c->feeds[kind][source];
}

/* ---- reading ------------------------------------------------------------------- */

const void *kb_cache_get(const struct kb_cache *c, enum kb_kind kind, const char *ns,
                         const char *name)
{
        char *key = make_key(ns, name);
        struct entry *e;
        HASH_FIND_STR(c->tab[kind], key, e);
        free(key);
        return e ? e->o->ptr : NULL;
}

size_t kb_cache_count(const struct kb_cache *c, enum kb_kind kind)
{
        return HASH_COUNT(c->tab[kind]);
}

/* ---- binding ------------------------------------------------------------------- */

void kb_cache_assume(struct kb_cache *c, const struct kb_pod *pod, const char *node)
{
        char *key = make_key(pod->meta.namespace, pod->meta.name);
        struct mark *m;
        HASH_FIND_STR(c->marks, key, m);
        if (m)
                mark_del(c, m);
        m = kb_xcalloc(1, sizeof(*m));
        m->key = key;
        m->uid = kb_xstrdup(pod->meta.uid ? pod->meta.uid : "");
        m->node = kb_xstrdup(node);
        HASH_ADD_KEYPTR(hh, c->marks, m->key, strlen(m->key), m);
}

void kb_cache_bind_done(struct kb_cache *c, const char *ns, const char *name, bool ok)
{
        char *key = make_key(ns, name);
        struct mark *m;
        HASH_FIND_STR(c->marks, key, m);
        free(key);
        if (!m)
                return;
        if (ok)
                m->acked = kb_now_mono();
        else
                mark_del(c, m);
        changed(c, KB_KIND_POD);
}

bool kb_cache_binding(const struct kb_cache *c, const char *ns, const char *name)
{
        char *key = make_key(ns, name);
        struct mark *m;
        HASH_FIND_STR(c->marks, key, m);
        free(key);
        return m != NULL;
}

size_t kb_cache_nbinding(const struct kb_cache *c)
{
        return HASH_COUNT(c->marks);
}

/* ---- snapshots ------------------------------------------------------------------ */

#define FILL(field, nfield, kind, type)                                                            \
        do {                                                                                       \
                size_t n_ = HASH_COUNT(c->tab[kind]), i_ = 0;                                      \
                s->snap.field = kb_xmalloc((n_ + 1) * sizeof(*s->snap.field));                     \
                struct entry *e_, *t_;                                                             \
                HASH_ITER(hh, c->tab[kind], e_, t_)                                                \
                {                                                                                  \
                        e_->o->refs++;                                                             \
                        s->refs[s->nrefs++] = e_->o;                                               \
                        s->snap.field[i_++] = (type *)e_->o->ptr;                                  \
                }                                                                                  \
                s->snap.nfield = i_;                                                               \
        } while (0)

struct kb_cache_snap *kb_cache_snapshot(struct kb_cache *c, const char *const *names, size_t nnames,
                                        const char *default_queue)
{
        struct kb_cache_snap *s = kb_xcalloc(1, sizeof(*s));
        size_t total = 0;
        for (int k = 0; k < NKINDS; k++)
                total += HASH_COUNT(c->tab[k]);
        s->cache = c;
        s->refs = kb_xmalloc((total + 1) * sizeof(*s->refs));

        /* Acknowledged marks the watch never confirmed are dropped after a
         * while, so a lost event cannot hold a pod forever. */
        double now = kb_now_mono();
        struct mark *m, *mt;
        HASH_ITER(hh, c->marks, m, mt)
        {
                if (m->acked && now - m->acked > MARK_TTL) {
                        KB_WARN("pod %s: bind acknowledged %.0fs ago but not seen; forgetting it",
                                m->key, now - m->acked);
                        mark_del(c, m);
                }
        }

        FILL(nodes, nnodes, KB_KIND_NODE, struct kb_node);
        FILL(pods, npods, KB_KIND_POD, struct kb_pod);
        FILL(podgroups, npodgroups, KB_KIND_PODGROUP, struct kb_podgroup);
        FILL(queues, nqueues, KB_KIND_QUEUE, struct kb_queue);
        FILL(priorityclasses, npriorityclasses, KB_KIND_PRIORITYCLASS, struct kb_priorityclass);
        FILL(namespaces, nnamespaces, KB_KIND_NAMESPACE, struct kb_namespace);
        FILL(hypernodes, nhypernodes, KB_KIND_HYPERNODE, struct kb_hypernode);

        /* Assumed pods: a shallow copy whose nodeName is the bind's target.
         * The copy shares the original's strings and arrays, which the
         * snapshot's reference keeps alive. */
        if (c->marks) {
                s->assumed = kb_xmalloc(HASH_COUNT(c->marks) * sizeof(*s->assumed));
                for (size_t i = 0; i < s->snap.npods; i++) {
                        struct kb_pod *p = s->snap.pods[i];
                        if (p->node_name && *p->node_name)
                                continue;
                        char *key = make_key(p->meta.namespace, p->meta.name);
                        HASH_FIND_STR(c->marks, key, m);
                        free(key);
                        if (!m)
                                continue;
                        struct kb_pod *a = kb_xmalloc(sizeof(*a));
                        *a = *p;
                        a->node_name = m->node;
                        s->assumed[s->nassumed++] = a;
                        s->snap.pods[i] = a;
                }
                /* The node strings belong to marks, which may go while the
                 * session runs: give the copies their own. */
                for (size_t i = 0; i < s->nassumed; i++)
                        s->assumed[i]->node_name = kb_xstrdup(s->assumed[i]->node_name);
        }
        s->snap.scheduler_names = names;
        s->snap.nscheduler_names = nnames;
        s->snap.default_queue = default_queue;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        s->snap.now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
        return s;
}

void kb_cache_snapshot_free(struct kb_cache_snap *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->nassumed; i++) {
                free(s->assumed[i]->node_name);
                free(s->assumed[i]);
        }
        free(s->assumed);
        for (size_t i = 0; i < s->nrefs; i++)
                cobj_unref(s->refs[i]);
        free(s->refs);
        free(s->snap.nodes);
        free(s->snap.pods);
        free(s->snap.podgroups);
        free(s->snap.queues);
        free(s->snap.priorityclasses);
        free(s->snap.namespaces);
        free(s->snap.hypernodes);
        free(s);
}

/* ---- dump ------------------------------------------------------------------------ */

char *kb_cache_dump_json(const struct kb_cache *c)
{
        struct kb_value *root = kb_value_new(KB_VOBJECT);
        static const char *const lists[NKINDS] = {NULL,         "nodes",     "pods",
                                                  "podGroups",  "queues",    "priorityClasses",
                                                  "namespaces", "hyperNodes"};
        for (int k = 1; k < NKINDS; k++) {
                struct kb_value *arr = kb_value_new(KB_VARRAY);
                struct entry *e, *t;
                HASH_ITER(hh, c->tab[k], e, t)
                {
                        const struct kb_meta *m = meta_of(e->o->ptr);
                        struct kb_value *o = kb_value_new(KB_VOBJECT);
                        kb_value_set(o, "name", kb_value_new_string(e->key));
                        kb_value_set(
                            o, "resourceVersion",
                            kb_value_new_string(m->resource_version ? m->resource_version : ""));
                        char buf[256];
                        if (k == KB_KIND_POD) {
                                const struct kb_pod *p = e->o->ptr;
                                kb_value_set(o, "phase",
                                             kb_value_new_string(kb_pod_phase_name(p->phase)));
                                if (p->node_name)
                                        kb_value_set(o, "nodeName",
                                                     kb_value_new_string(p->node_name));
                                if (p->group_name)
                                        kb_value_set(o, "group",
                                                     kb_value_new_string(p->group_name));
                                struct mark *mk;
                                HASH_FIND_STR(c->marks, e->key, mk);
                                if (mk)
                                        kb_value_set(o, "binding", kb_value_new_string(mk->node));
                                kb_res_format(&p->requests, false, buf, sizeof(buf));
                                kb_value_set(o, "requests", kb_value_new_string(buf));
                        } else if (k == KB_KIND_NODE) {
                                const struct kb_node *n = e->o->ptr;
                                kb_res_format(&n->allocatable, true, buf, sizeof(buf));
                                kb_value_set(o, "allocatable", kb_value_new_string(buf));
                        } else if (k == KB_KIND_PODGROUP) {
                                const struct kb_podgroup *pg = e->o->ptr;
                                kb_value_set(o, "minMember", kb_value_new_int(pg->min_member));
                                if (pg->phase)
                                        kb_value_set(o, "phase", kb_value_new_string(pg->phase));
                        }
                        kb_value_append(arr, o);
                }
                kb_value_set(root, lists[k], arr);
        }
        char *s = kb_json_emit(root, true);
        kb_value_free(root);
        return s;
}
