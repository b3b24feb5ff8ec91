/*
 * The cluster cache: one hash table per kind, keyed "namespace/name" (or
 * "name"), of reference-counted decoded objects (kinds.c decodes them);
 * binding marks; snapshots.
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

#include "cache/cache-int.h"

/* ---- shared label sets ------------------------------------------------------------ */

static void labelset_unref(struct kb__labelset *ls)
{
        if (--ls->refs > 0)
                return;
        kb_map_del_str(&ls->c->labelsets, ls->key, strlen(ls->key));
        free(ls);
}

/*
 * Replaces a pod's own labels by the shared set with the same contents
 * (made if need be) and returns it.  The pods of one Job carry the same
 * labels (job-name and controller-uid, twice each: about 300 bytes), so a
 * cache of 140,000 pods in 7,000 Jobs keeps 7,000 sets, not 140,000.
 */
static struct kb__labelset *labels_share(struct kb_cache *c, struct kb_pod *p)
{
        if (!p->meta.nlabels)
                return NULL;
        struct kb_buf key;
        kb_buf_init(&key);
        size_t bytes = 0;
        for (size_t i = 0; i < p->meta.nlabels; i++) {
                kb_buf_printf(&key, "%s=%s\x1f", p->meta.labels[i].key, p->meta.labels[i].value);
                bytes += strlen(p->meta.labels[i].key) + strlen(p->meta.labels[i].value) + 2;
        }
        uint64_t *found = kb_map_get_str(&c->labelsets, key.data, key.len);
        struct kb__labelset *ls = found ? (struct kb__labelset *)(uintptr_t)*found : NULL;
        if (!ls) {
                size_t n = p->meta.nlabels;
                ls = kb_xcalloc(1, sizeof(*ls) + n * sizeof(struct kb_kv) + key.len + 1 + bytes);
                ls->c = c;
                ls->n = n;
                ls->kv = (struct kb_kv *)ls->text;
                char *t = ls->text + n * sizeof(struct kb_kv);
                ls->key = memcpy(t, key.data, key.len + 1);
                t += key.len + 1;
                for (size_t i = 0; i < n; i++) {
                        size_t lk = strlen(p->meta.labels[i].key) + 1;
                        size_t lv = strlen(p->meta.labels[i].value) + 1;
                        ls->kv[i].key = memcpy(t, p->meta.labels[i].key, lk);
                        ls->kv[i].value = memcpy(t + lk, p->meta.labels[i].value, lv);
                        t += lk + lv;
                }
                *kb_map_put_str(&c->labelsets, ls->key, key.len, NULL) = (uint64_t)(uintptr_t)ls;
        }
        kb_buf_release(&key);
        ls->refs++;
        for (size_t i = 0; i < p->meta.nlabels; i++) {
                free(p->meta.labels[i].key);
                free(p->meta.labels[i].value);
        }
        free(p->meta.labels);
        p->meta.labels = ls->kv;
        return ls;
}

void kb__cache_cobj_unref(struct kb__cobj *o)
{
        if (!o || --o->refs > 0)
                return;
        if (o->labels) {
                /* The labels are the set's: the pod must not free them. */
                struct kb_pod *p = o->ptr;
                p->meta.labels = NULL;
                p->meta.nlabels = 0;
                labelset_unref(o->labels);
        }
        struct kb_object obj = {.kind = o->kind, .ptr = o->ptr};
        kb_object_release(&obj);
        free(o);
}

char *kb__cache_key(const char *ns, const char *name)
{
        return ns && *ns ? kb_xasprintf("%s/%s", ns, name) : kb_xstrdup(name);
}

void kb__cache_mark_del(struct kb_cache *c, struct kb__mark *m)
{
        kb_map_del_str(&c->marks, m->key, strlen(m->key));
        free(m);
}

struct kb__mark *kb__cache_mark_find(const struct kb_cache *c, const char *key)
{
        uint64_t *v = kb_map_get_str(&c->marks, key, strlen(key));
        return v ? (struct kb__mark *)(uintptr_t)*v : NULL;
}

static void invalid_free(struct kb_cache *c, struct kb__invalid *iv);

static void entry_del(struct kb_cache *c, enum kb_kind kind, struct kb__entry *e)
{
        HASH_DEL(c->tab[kind], e);
        if (kind == KB_KIND_POD) {
                struct kb__mark *m = kb__cache_mark_find(c, e->key);
                if (m)
                        kb__cache_mark_del(c, m);
        }
        kb__cache_cobj_unref(e->o);
        free(e->key);
        free(e->rv);
        free(e);
}

struct kb_cache *kb_cache_new(void)
{
        struct kb_cache *c = kb_xcalloc(1, sizeof(*c));
        kb_map_init(&c->marks, KB_MAP_STR);
        kb_map_init(&c->labelsets, KB_MAP_STR);
        for (int k = 0; k < KB__NKINDS; k++) {
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
        for (int k = 0; k < KB__NKINDS; k++) {
                struct kb__entry *e, *tmp;
                HASH_ITER(hh, c->tab[k], e, tmp)
                entry_del(c, (enum kb_kind)k, e);
        }
        for (size_t i = 0; i < c->marks.cap; i++)
                if (c->marks.slots[i].hash)
                        free((void *)(uintptr_t)c->marks.slots[i].val);
        kb_map_release(&c->marks);
        kb_map_release(&c->labelsets); /* empty: the pods gave their sets back */
        struct kb__invalid *iv, *it;
        HASH_ITER(hh, c->invalid, iv, it)
        invalid_free(c, iv);
        free(c);
}

void kb_cache_on_change(struct kb_cache *c, kb_cache_change_fn fn, void *arg)
{
        c->on_change = fn;
        c->on_change_arg = arg;
}

static void changed(struct kb_cache *c, enum kb_kind kind)
{
        c->gen++;
        if (c->on_change)
                c->on_change(c->on_change_arg, kind);
}

/* ---- feeding ------------------------------------------------------------------- */

/* ---- invalid objects ------------------------------------------------------------ */

static char *invalid_key(enum kb_kind kind, const char *ns, const char *name)
{
        return kb_xasprintf("%d/%s/%s", (int)kind, ns ? ns : "", name);
}

static void invalid_free(struct kb_cache *c, struct kb__invalid *iv)
{
        HASH_DEL(c->invalid, iv);
        free(iv->key);
        free((char *)iv->pub.ns);
        free((char *)iv->pub.name);
        free((char *)iv->pub.uid);
        free((char *)iv->pub.resource_version);
        free((char *)iv->pub.message);
        free(iv);
        c->invalid_gen++;
}

static void invalid_forget(struct kb_cache *c, enum kb_kind kind, const char *ns, const char *name)
{
        if (!c->invalid || !name)
                return;
        char *key = invalid_key(kind, ns, name);
        struct kb__invalid *iv;
        HASH_FIND_STR(c->invalid, key, iv);
        free(key);
        if (iv)
                invalid_free(c, iv);
}

static char *dup_or_null(const char *s)
{
        return s ? kb_xstrdup(s) : NULL;
}

/* Remembers an object that did not decode; a PodGroup or Queue that was in
 * the cache leaves it (see cache.h). */
static void invalid_note(struct kb_cache *c, enum kb_kind kind, const struct kb_value *obj,
                         const char *err)
{
        const char *ns = kb_value_str(kb_value_dig(obj, "metadata", "namespace", NULL));
        const char *name = kb_value_str(kb_value_dig(obj, "metadata", "name", NULL));
        const char *uid = kb_value_str(kb_value_dig(obj, "metadata", "uid", NULL));
        const char *rv = kb_value_str(kb_value_dig(obj, "metadata", "resourceVersion", NULL));
        if (!name || !*name)
                return;
        if (ns && !*ns)
                ns = NULL;
        char *key = invalid_key(kind, ns, name);
        struct kb__invalid *iv;
        HASH_FIND_STR(c->invalid, key, iv);
        if (iv && kb_streq(iv->pub.uid, uid) && kb_streq(iv->pub.resource_version, rv) &&
            kb_streq(iv->pub.message, err)) {
                free(key);
                iv->seen = true;
                return;
        }
        if (iv)
                invalid_free(c, iv);
        iv = kb_xcalloc(1, sizeof(*iv));
        iv->key = key;
        iv->seen = true;
        iv->pub.kind = kind;
        iv->pub.ns = dup_or_null(ns);
        iv->pub.name = kb_xstrdup(name);
        iv->pub.uid = dup_or_null(uid);
        iv->pub.resource_version = dup_or_null(rv);
        iv->pub.message = kb_xstrdup(err);
        HASH_ADD_KEYPTR(hh, c->invalid, iv->key, strlen(iv->key), iv);
        c->invalid_gen++;
        if (kind != KB_KIND_PODGROUP && kind != KB_KIND_QUEUE)
                return;
        char *ekey = kb__cache_key(ns, name);
        struct kb__entry *e;
        HASH_FIND_STR(c->tab[kind], ekey, e);
        free(ekey);
        if (e) {
                entry_del(c, kind, e);
                changed(c, kind);
        }
}

void kb_cache_invalid_each(const struct kb_cache *c, kb_cache_invalid_fn fn, void *arg)
{
        struct kb__invalid *iv, *t;
        HASH_ITER(hh, c->invalid, iv, t)
        fn(arg, &iv->pub);
}

unsigned kb_cache_invalid_gen(const struct kb_cache *c)
{
        return c->invalid_gen;
}

const struct kb_cache_invalid *kb_cache_invalid_get(const struct kb_cache *c, enum kb_kind kind,
                                                    const char *ns, const char *name)
{
        if (!c->invalid)
                return NULL;
        char *key = invalid_key(kind, ns, name);
        struct kb__invalid *iv;
        HASH_FIND_STR(c->invalid, key, iv);
        free(key);
        return iv ? &iv->pub : NULL;
}

/* ---- upsert and remove -------------------------------------------------------------- */

/* Stores obj for source src; refresh_only: update an entry that exists and
 * change no membership (refresh_only and src are exclusive). */
static int upsert(struct kb_cache *c, enum kb_kind kind, const struct kb_value *obj, unsigned src,
                  bool refresh_only)
{
        char err[512];
        void *ptr = NULL;
        int rc = kb__cache_decode(kind, obj, &ptr, err, sizeof(err));
        if (rc) {
                KB_WARN("ignoring %s: %s", kb__cache_kind_name(kind), err);
                if (!refresh_only)
                        invalid_note(c, kind, obj, err);
                return rc;
        }
        if (kind == KB_KIND_POD)
                kb_pod_trim(ptr); /* annotations no session reads are not kept */
        const struct kb_meta *m = meta_of(ptr);
        invalid_forget(c, kind, m->namespace, m->name);
        char *key = kb__cache_key(m->namespace, m->name);
        struct kb__entry *e;
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
                /* Another source is ahead, or nothing kbatch reads
                 * changed: keep the copy there is. */
                if (kb__cache_older(e, m) || kb__cache_keep_same(e, kind, ptr)) {
                        if (!refresh_only) {
                                e->sources |= 1u << src;
                                e->seen |= 1u << src;
                        }
                        struct kb_object o = {.kind = kind, .ptr = ptr};
                        kb_object_release(&o);
                        return 0;
                }
                kb__cache_cobj_unref(e->o);
                free(e->rv);
                e->rv = NULL;
        }
        e->o = kb_xcalloc(1, sizeof(*e->o));
        e->o->refs = 1;
        e->o->kind = kind;
        e->o->ptr = ptr;
        if (kind == KB_KIND_POD)
                e->o->labels = labels_share(c, ptr);
        if (!refresh_only) {
                e->sources |= 1u << src;
                e->seen |= 1u << src;
        }
        if (kind == KB_KIND_POD) {
                /* The watch shows the pod bound (or replaced): the mark has
                 * done its work. */
                const struct kb_pod *p = ptr;
                struct kb__mark *mk;
                mk = kb__cache_mark_find(c, e->key);
                if (mk && ((p->node_name && *p->node_name) || !kb_streq(mk->uid, p->meta.uid) ||
                           p->meta.deletion || kb_pod_terminal(p)))
                        kb__cache_mark_del(c, mk);
        }
        changed(c, kind);
        ((struct kb_meta *)ptr)->gen = c->gen + 1; /* above every snapshot's so far */
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
        invalid_forget(c, kind, ns && *ns ? ns : NULL, name);
        char *key = kb__cache_key(ns, name);
        struct kb__entry *e;
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
        c->list_gen[kind][src] = c->gen;
        struct kb__entry *e, *tmp;
        HASH_ITER(hh, c->tab[kind], e, tmp)
        e->seen &= ~(1u << src);
        struct kb__invalid *iv, *it;
        HASH_ITER(hh, c->invalid, iv, it)
        if (iv->pub.kind == kind)
                iv->seen = false;
}

static void list_end(struct kb_cache *c, enum kb_kind kind, unsigned src)
{
        struct kb__entry *e, *tmp;
        struct kb__invalid *iv, *it;
        HASH_ITER(hh, c->invalid, iv, it)
        if (iv->pub.kind == kind && !iv->seen)
                invalid_free(c, iv);
        bool dropped = false;
        HASH_ITER(hh, c->tab[kind], e, tmp)
        {
                if (e->seen & (1u << src))
                        continue;
                e->sources &= ~(1u << src);
                if (!e->sources) {
                        entry_del(c, kind, e);
                        dropped = true;
                }
        }
        /* A list that ends is news even when it changed nothing: the
         * consumer may be waiting for the kind to be complete.  But the
         * generation moves only if the list changed something (an object
         * stored, replaced or dropped since it began; any other change
         * meanwhile counts too): a relist that finds the nodes as they
         * were, or the empty list the reflector of a kind the server does
         * not serve reports every 10 s (a CRD not installed), leaves the
         * snapshot unchanged. */
        if (dropped || c->gen != c->list_gen[kind][src])
                changed(c, kind);
        else if (c->on_change)
                c->on_change(c->on_change_arg, kind);
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
        struct kb__feed *f = arg;
        list_begin(f->c, f->kind, f->source);
}

static void feed_upsert(void *arg, const struct kb_value *obj)
{
        struct kb__feed *f = arg;
        upsert(f->c, f->kind, obj, f->source, false);
}

static void feed_remove(void *arg, const struct kb_value *obj)
{
        struct kb__feed *f = arg;
        remove_src(f->c, f->kind, obj, f->source);
}

static void feed_end(void *arg)
{
        struct kb__feed *f = arg;
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
        char *key = kb__cache_key(ns, name);
        struct kb__entry *e;
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
        char *key = kb__cache_key(pod->meta.namespace, pod->meta.name);
        struct kb__mark *m = kb__cache_mark_find(c, key);
        if (m)
                kb__cache_mark_del(c, m);
        /* One allocation per mark: a bind storm marks every pod at once. */
        const char *uid = pod->meta.uid ? pod->meta.uid : "";
        size_t lk = strlen(key) + 1, lu = strlen(uid) + 1, ln = strlen(node) + 1;
        m = kb_xcalloc(1, sizeof(*m) + lk + lu + ln);
        m->key = memcpy(m->text, key, lk);
        m->uid = memcpy(m->text + lk, uid, lu);
        m->node = memcpy(m->text + lk + lu, node, ln);
        free(key);
        *kb_map_put_str(&c->marks, m->key, lk - 1, NULL) = (uint64_t)(uintptr_t)m;
        c->gen++;
}

void kb_cache_bind_done(struct kb_cache *c, const char *ns, const char *name, bool ok)
{
        char *key = kb__cache_key(ns, name);
        struct kb__mark *m = kb__cache_mark_find(c, key);
        free(key);
        if (!m)
                return;
        if (ok)
                m->acked = kb_now_mono();
        else
                kb__cache_mark_del(c, m);
        changed(c, KB_KIND_POD);
}

bool kb_cache_binding(const struct kb_cache *c, const char *ns, const char *name)
{
        char *key = kb__cache_key(ns, name);
        struct kb__mark *m = kb__cache_mark_find(c, key);
        free(key);
        return m != NULL;
}

size_t kb_cache_nbinding(const struct kb_cache *c)
{
        return kb_map_count(&c->marks);
}

/* ---- snapshots ------------------------------------------------------------------ */
