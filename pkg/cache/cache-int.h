/* Shared between the cache's files (cache.c, snapshot.c); not a public
 * interface. */
#ifndef KB_PKG_CACHE_INT_H
#define KB_PKG_CACHE_INT_H

#include <uthash.h>

#include "cache/cache.h"

#define KB__NKINDS (KB_KIND_VCJOB + 1)
/* How long an acknowledged bind may wait for the watch to show it. */
#define KB__MARK_TTL 60.0

/* One set of pod labels, shared by every cached pod that carries exactly
 * these (the pods of a Job carry the same four): key is the labels
 * written out, kv and its strings live in text[]. */
struct kb__labelset {
        struct kb_cache *c;
        int refs;
        const char *key;
        struct kb_kv *kv;
        size_t n;
        char text[];
};

/* A decoded object and the references to it (the cache's, and one per
 * snapshot holding it); freed at the last.  A pod's labels may be a shared
 * set, given back before the pod is freed. */
struct kb__cobj {
        int refs;
        enum kb_kind kind;
        void *ptr;
        struct kb__labelset *labels;
};

struct kb__entry {
        UT_hash_handle hh;
        char *key;
        struct kb__cobj *o;
        unsigned sources; /* a bit per source holding the object */
        unsigned seen;    /* a bit per source: upserted since its list began */
        /* The newest resourceVersion seen of the object when it is newer
         * than the kept object's own (a node update that changed nothing
         * kbatch reads keeps the old object: kb_node_same), so that an
         * older copy from another source, arriving later, still loses;
         * NULL when the object's own is the newest. */
        char *rv;
};

/* A pod being bound: snapshots show it on node. */
struct kb__mark {
        const char *key; /* key, uid and node point into text[] */
        const char *uid;
        const char *node;
        double acked; /* monotonic time of a successful answer, 0 while in flight */
        char text[];
};

/* An object kbatch could not decode (struct kb_cache_invalid's storage). */
struct kb__invalid {
        UT_hash_handle hh;
        char *key;
        struct kb_cache_invalid pub;
        bool seen; /* upserted since its kind's list began */
};

struct kb__feed {
        struct kb_cache *c;
        enum kb_kind kind;
        unsigned source;
};

struct kb_cache {
        struct kb__entry *tab[KB__NKINDS];
        /* Objects stay in uthash tables: their insertion order is the
         * snapshot's order, which sessions' ties see; marks and label sets
         * are only looked up, in kb_maps. */
        struct kb_map marks;     /* pod key -> struct kb__mark * */
        struct kb_map labelsets; /* labels written out -> struct kb__labelset * */
        struct kb__invalid *invalid;
        unsigned invalid_gen;
        /* Bumped on every change (changed(): an object stored, replaced
         * or dropped, a relist's end if the relist changed anything, a
         * bind's outcome) and every bind mark made or dropped: the
         * snapshots' generation, plus 1 (kb_snapshot.gen; 0 would mean
         * untracked).  A Node update that changes nothing kbatch reads
         * is no change (kinds.c, kb__cache_keep_same). */
        uint64_t gen;
        /* gen when each source's list of each kind began: a list whose
         * end finds it unchanged and drops nothing changed nothing. */
        uint64_t list_gen[KB__NKINDS][KB_CACHE_MAX_SOURCES];
        struct kb__feed feeds[KB__NKINDS][KB_CACHE_MAX_SOURCES];
        kb_cache_change_fn on_change;
        void *on_change_arg;
};

/* An object's meta: every kb_<kind> struct starts with it. */
static inline const struct kb_meta *meta_of(const void *ptr)
{
        return ptr;
}

/* "ns/name", or "name" for cluster-scoped objects (caller frees). */
char *kb__cache_key(const char *ns, const char *name);
void kb__cache_mark_del(struct kb_cache *c, struct kb__mark *m);
/* The mark of the pod with this key, or NULL. */
struct kb__mark *kb__cache_mark_find(const struct kb_cache *c, const char *key);
void kb__cache_cobj_unref(struct kb__cobj *o);
/* kinds.c: a kind's name in messages; an object decoded as kind into
 * *out (0 or KB_EBADINPUT with err), with only what the cache keeps. */
const char *kb__cache_kind_name(enum kb_kind k);
int kb__cache_decode(enum kb_kind kind, const struct kb_value *obj, void **out, char *err,
                     size_t errlen);
/* kinds.c: whether b is an older copy of e's object (the same uid, a
 * lower resourceVersion than the newest seen); whether the decoded ptr
 * changes nothing kbatch reads of e's object, which then stays (its
 * resourceVersion noted in e->rv). */
bool kb__cache_older(const struct kb__entry *e, const struct kb_meta *b);
/* kinds.c: the newest resourceVersion e's object was seen at (e->rv, or
 * the object's own). */
const char *kb__cache_entry_rv(const struct kb__entry *e);
bool kb__cache_keep_same(struct kb__entry *e, enum kb_kind kind, const void *ptr);

#endif /* KB_PKG_CACHE_INT_H */
