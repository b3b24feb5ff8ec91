/*
 * JSON into a read-only kb_value tree carved from a pool: the daemon's
 * reading of API lists and watch events, which it decodes once and drops.
 *
 * kb_json_parse builds a tree of separately allocated nodes, strings and
 * growing arrays (a pod of an API list costs some 200 mallocs and as many
 * frees; malloc and free were 40% of reading a list).  Here every node
 * comes from the pool, strings are packed into blocks taken from it, and a
 * container's members collect in a scratch vector per nesting depth
 * (reused from one container to the next) and are copied into the pool,
 * exactly sized, when the container closes.  Releasing the pool frees the
 * whole tree at once.
 *
 * For example, {"a":[1,2],"b":{}}: the scratch at depth 1 collects a and
 * b; a's array collects 1 and 2 at depth 2 and is copied out when "]"
 * comes; at "}" the two members are copied out and depth 1's scratch is
 * free for the next object at that depth.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "base/base.h"
#include "value/value.h"

/* Strings are packed into blocks of this size (longer ones get their own). */
#define TEXT_BLOCK 4096

struct level {
        struct kb_value *v; /* the open container */
        struct kb_member *m;
        size_t n, cap;
        char *key; /* the pending key of an object */
};

struct pbuilder {
        struct kb_pool *pool;
        char *text;
        size_t text_left;
        struct level *lv; /* one per open container, grown on use */
        int depth, nlv;
        struct kb_value *root;
        bool too_deep;
};

static char *pstr(struct pbuilder *b, const char *s, size_t n)
{
        if (n + 1 > b->text_left) {
                if (n + 1 > TEXT_BLOCK / 4) {
                        char *d = kb_pool_alloc(b->pool, n + 1);
                        memcpy(d, s, n);
                        return d;
                }
                b->text = kb_pool_alloc(b->pool, TEXT_BLOCK);
                b->text_left = TEXT_BLOCK;
        }
        char *d = b->text;
        memcpy(d, s, n);
        d[n] = 0;
        b->text += n + 1;
        b->text_left -= n + 1;
        return d;
}

static struct kb_value *node(struct pbuilder *b, enum kb_value_type t)
{
        struct kb_value *v = kb_pool_alloc(b->pool, sizeof(*v));
        v->type = t;
        return v;
}

static int put(struct pbuilder *b, struct kb_value *v)
{
        if (b->depth == 0) {
                if (b->root)
                        return 0;
                b->root = v;
                return 1;
        }
        struct level *l = &b->lv[b->depth - 1];
        char *key = NULL;
        if (l->v->type == KB_VOBJECT) {
                key = l->key;
                l->key = NULL;
                if (!key)
                        return 0;
                /* A repeated key: the last one wins, as kb_json_parse. */
                for (size_t i = 0; i < l->n; i++) {
                        if (l->m[i].key[0] == key[0] && !strcmp(l->m[i].key, key)) {
                                l->m[i].val = v;
                                return 1;
                        }
                }
        }
        struct kb_member m = {key, v};
        KB_PUSH(l->m, l->n, l->cap, m);
        return 1;
}

static int cb_null(void *ctx)
{
        return put(ctx, node(ctx, KB_VNULL));
}

static int cb_bool(void *ctx, int v)
{
        struct kb_value *n = node(ctx, KB_VBOOL);
        n->b = v;
        return put(ctx, n);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
        struct kb_value *n = node(ctx, KB_VNUMBER);
        n->s = pstr(ctx, s, len);
        return put(ctx, n);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
        struct kb_value *n = node(ctx, KB_VSTRING);
        n->s = pstr(ctx, (const char *)s, len);
        return put(ctx, n);
}

static int open_level(struct pbuilder *b, enum kb_value_type t)
{
        if (b->depth >= KB_VALUE_MAX_DEPTH) {
                b->too_deep = true;
                return 0;
        }
        struct kb_value *v = node(b, t);
        if (!put(b, v))
                return 0;
        if (b->depth == b->nlv) {
                int n = b->nlv ? 2 * b->nlv : 16;
                b->lv = kb_xrealloc(b->lv, (size_t)n * sizeof(*b->lv));
                memset(b->lv + b->nlv, 0, (size_t)(n - b->nlv) * sizeof(*b->lv));
                b->nlv = n;
        }
        struct level *l = &b->lv[b->depth++];
        l->v = v;
        l->n = 0;
        l->key = NULL;
        return 1;
}

static int cb_start_map(void *ctx)
{
        return open_level(ctx, KB_VOBJECT);
}

static int cb_start_array(void *ctx)
{
        return open_level(ctx, KB_VARRAY);
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t len)
{
        struct pbuilder *b = ctx;
        b->lv[b->depth - 1].key = pstr(b, (const char *)s, len);
        return 1;
}

/* The container closes: its members go into the pool, exactly sized. */
static int cb_end(void *ctx)
{
        struct pbuilder *b = ctx;
        struct level *l = &b->lv[--b->depth];
        struct kb_value *v = l->v;
        if (!l->n)
                return 1;
        if (v->type == KB_VOBJECT) {
                v->obj.m = kb_pool_alloc(b->pool, l->n * sizeof(*v->obj.m));
                memcpy(v->obj.m, l->m, l->n * sizeof(*v->obj.m));
                v->obj.n = v->obj.cap = l->n;
        } else {
                v->arr.v = kb_pool_alloc(b->pool, l->n * sizeof(*v->arr.v));
                for (size_t i = 0; i < l->n; i++)
                        v->arr.v[i] = l->m[i].val;
                v->arr.n = v->arr.cap = l->n;
        }
        return 1;
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_bool,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end,
};

int kb_json_parse_pool(const char *text, size_t len, struct kb_pool *pool, struct kb_value **out,
                       char *err, size_t errlen)
{
        struct pbuilder b = {.pool = pool};
        yajl_handle h = yajl_alloc(&callbacks, NULL, &b);
        if (!h)
                kb_die("yajl_alloc failed");
        yajl_status st = yajl_parse(h, (const unsigned char *)text, len);
        if (st == yajl_status_ok)
                st = yajl_complete_parse(h);
        int rc = 0;
        *out = NULL;
        if (st != yajl_status_ok || !b.root) {
                if (err && errlen) {
                        if (b.too_deep) {
                                snprintf(err, errlen, "nesting deeper than %d", KB_VALUE_MAX_DEPTH);
                        } else if (st == yajl_status_ok) {
                                snprintf(err, errlen, "empty document");
                        } else {
                                unsigned char *msg = yajl_get_error(h, 0, NULL, 0);
                                snprintf(err, errlen, "%s", (char *)msg);
                                char *nl = strchr(err, '\n');
                                if (nl)
                                        *nl = '\0';
                                yajl_free_error(h, msg);
                        }
                }
                rc = KB_EBADINPUT;
        } else {
                *out = b.root;
        }
        yajl_free(h);
        for (int i = 0; i < b.nlv; i++)
                free(b.lv[i].m);
        free(b.lv);
        return rc;
}
