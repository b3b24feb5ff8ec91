/*
 * The ordered index of a type's objects: a treap (a binary search tree
 * whose nodes also form a heap on random priorities, so it stays balanced
 * in expectation) keyed by namespace then name, with subtree sizes so that
 * "how many objects come before this key" costs O(log n).
 *
 * A list page walks it from its continue key: a page of 500 out of 140,000
 * pods costs 500 steps of O(log n), not a collection and sort of all 140,000.
 *
 * Priorities are hashes of the keys.  Keys are the store's "namespace/name" strings (or "name" for
 * cluster-scoped objects), compared with '/' ranking below every other
 * character, so namespace "a" sorts before "a-b" as upstream lists them:
 *   "a/x" < "a-b/w"  (at the second byte, '/' ranks below '-')
 */
#include "apiserver/apiserver-int.h"

#include <stdlib.h>
#include <string.h>

struct kb_inode {
        struct kb_obj *obj;
        struct kb_inode *l, *r;
        uint64_t prio;
        size_t size;
};

int kb__key_cmp(const char *a, const char *b)
{
        for (;; a++, b++) {
                int x = *a == '/' ? 1 : (unsigned char)*a;
                int y = *b == '/' ? 1 : (unsigned char)*b;
                if (x != y || !x)
                        return x - y;
        }
}

static size_t size(const struct kb_inode *n)
{
        return n ? n->size : 0;
}

static void fix(struct kb_inode *n)
{
        n->size = 1 + size(n->l) + size(n->r);
}

/* Splits t into keys < key (or <= key when inclusive) and the rest. */
static void split(struct kb_inode *t, const char *key, bool inclusive, struct kb_inode **lo,
                  struct kb_inode **hi)
{
        if (!t) {
                *lo = *hi = NULL;
                return;
        }
        int c = kb__key_cmp(t->obj->key, key);
        if (c < 0 || (inclusive && c == 0)) {
                split(t->r, key, inclusive, &t->r, hi);
                *lo = t;
        } else {
                split(t->l, key, inclusive, lo, &t->l);
                *hi = t;
        }
        fix(t);
}

static struct kb_inode *merge(struct kb_inode *a, struct kb_inode *b)
{
        if (!a || !b)
                return a ? a : b;
        if (a->prio > b->prio) {
                a->r = merge(a->r, b);
                fix(a);
                return a;
        }
        b->l = merge(a, b->l);
        fix(b);
        return b;
}

void kb__index_insert(struct kb_rtype *rt, struct kb_obj *o)
{
        struct kb_inode *n = kb_xcalloc(1, sizeof(*n));
        n->obj = o;
        /* A hash of the key is as good a priority as a random number, and
         * leaves the server's seeded generator (fault rolls) alone. */
        n->prio = kb_hash(o->key, strlen(o->key), KB_HASH_SEED);
        n->size = 1;
        struct kb_inode *lo, *hi;
        split(rt->index, o->key, false, &lo, &hi);
        rt->index = merge(merge(lo, n), hi);
}

void kb__index_remove(struct kb_rtype *rt, struct kb_obj *o)
{
        struct kb_inode *lo, *mid, *hi;
        split(rt->index, o->key, false, &lo, &mid);
        split(mid, o->key, true, &mid, &hi);
        free(mid); /* exactly the one node of this key */
        rt->index = merge(lo, hi);
}

struct kb_obj *kb__index_seek(const struct kb_rtype *rt, const char *key, bool inclusive)
{
        const struct kb_inode *t = rt->index;
        struct kb_obj *best = NULL;
        while (t) {
                int c = key ? kb__key_cmp(t->obj->key, key) : 1;
                if (c > 0 || (inclusive && c == 0)) {
                        best = t->obj;
                        t = t->l;
                } else {
                        t = t->r;
                }
        }
        return best;
}

size_t kb__index_rank(const struct kb_rtype *rt, const char *key)
{
        const struct kb_inode *t = rt->index;
        size_t below = 0;
        while (t) {
                if (kb__key_cmp(t->obj->key, key) < 0) {
                        below += size(t->l) + 1;
                        t = t->r;
                } else {
                        t = t->l;
                }
        }
        return below;
}

size_t kb__index_count(const struct kb_rtype *rt)
{
        return size(rt->index);
}

static void free_all(struct kb_inode *t)
{
        if (!t)
                return;
        free_all(t->l);
        free_all(t->r);
        free(t);
}

void kb__index_free(struct kb_rtype *rt)
{
        free_all(rt->index);
        rt->index = NULL;
}
