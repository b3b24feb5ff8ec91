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
#include "value/value-int.h"
#include "value/value.h"

/* Strings are packed into blocks of this size (longer ones get their own). */
#define TEXT_BLOCK 4096

struct level {
        struct kb_value *v; /* the open container */
        struct kb_member *m;
        size_t n, cap;
        char *key;        /* the pending key of an object */
        const char *name; /* this container's key in its parent, for messages */
        /* An object's key index once it has KB_VALUE_INDEX_MIN members
         * (value-int.h): allocated once per depth and reused, cleared only
         * when a container reaches that size. */
        uint32_t *idx;
        size_t idx_cap;
};

struct pbuilder {
        struct kb_pool *pool;
        char *text;
        size_t text_left;
        struct level *lv; /* one per open container, grown on use */
        int depth, nlv;
        struct kb_value *root;
        bool too_deep;
        char *nul_at;                /* the first field holding a NUL character, if any */
        uintptr_t text_in, text_end; /* the input (see may_hold_nul) */
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

/* The member of l (an object) whose key is key, or -1. */
static ptrdiff_t level_find(const struct level *l, const char *key)
{
        if (l->n >= KB_VALUE_INDEX_MIN)
                return kb__value_index_find(l->idx, kb__value_index_slots(l->n), l->m, key);
        for (size_t i = 0; i < l->n; i++) {
                KB__KEY_COMPARED();
                if (l->m[i].key[0] == key[0] && !strcmp(l->m[i].key, key))
                        return (ptrdiff_t)i;
        }
        return -1;
}

/* Member l->n - 1 was added to object l: keep its index. */
static void level_indexed(struct level *l)
{
        size_t n = l->n;
        if (n < KB_VALUE_INDEX_MIN)
                return;
        size_t slots = kb__value_index_slots(n);
        if (n > KB_VALUE_INDEX_MIN && slots == kb__value_index_slots(n - 1)) {
                kb__value_index_add(l->idx, slots, l->m, n - 1);
                return;
        }
        if (slots > l->idx_cap) {
                free(l->idx);
                l->idx = kb_xmalloc(slots * sizeof(*l->idx));
                l->idx_cap = slots;
        }
        kb__value_index_build(l->idx, slots, l->m, n);
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
                ptrdiff_t i = level_find(l, key);
                if (i >= 0) {
                        l->m[i].val = v;
                        return 1;
                }
        }
        struct kb_member m = {key, v};
        KB_PUSH(l->m, l->n, l->cap, m);
        if (key && l->n >= KB_VALUE_INDEX_MIN)
                level_indexed(l);
        return 1;
}

/* Where the builder is, as Kubernetes names fields ("spec.containers[0]"):
 * the innermost open container, then with leaf true the value about to be
 * added to it (its pending key, or its next index). */
static char *where(const struct pbuilder *b, bool leaf)
{
        struct kb_buf path;
        kb_buf_init(&path);
        for (int d = 1; d <= b->depth; d++) {
                const struct level *parent = &b->lv[d - 1];
                if (d == b->depth && !leaf)
                        break;
                size_t i = d == b->depth ? parent->n : parent->n - 1;
                const char *name = d == b->depth ? parent->key : b->lv[d].name;
                if (parent->v->type == KB_VARRAY)
                        kb_buf_printf(&path, "[%zu]", i);
                else
                        kb_buf_printf(&path, "%s%s", path.len ? "." : "", name ? name : "");
        }
        char *s = kb_xstrdup(path.data);
        kb_buf_release(&path);
        return s;
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

/* As json.c's: only a string with escapes, from yajl's decode buffer
 * rather than the input, can hold a NUL. */
static bool may_hold_nul(const struct pbuilder *b, const unsigned char *s, size_t n)
{
        uintptr_t p = (uintptr_t)s;
        return !(p >= b->text_in && p < b->text_end) && memchr(s, 0, n);
}

/*
 * A NUL in a string (key: in the key s).  The API server accepts one in an
 * annotation's value, and this parser reads what the scheduler lists and
 * watches: refusing would make every page holding such a pod fail for
 * ever.  Cutting the string at the NUL would be worse ("g\u0000x" read as
 * group "g").  So each NUL becomes U+FFFD, a character no name has, and
 * the first one is logged with its field (kb_json_parse_pool).  Returns
 * the copy, in the pool.  The rare path, kept out of the callbacks that
 * run per string.
 */
static char *replace_nul(struct pbuilder *b, const unsigned char *s, size_t len, bool key)
{
        if (!b->nul_at)
                b->nul_at = key ? kb__value_nul_message(where(b, false), (const char *)s, len)
                                : kb__value_nul_message(where(b, true), NULL, 0);
        size_t nul = 0;
        for (size_t i = 0; i < len; i++)
                nul += s[i] == 0;
        char *d = kb_pool_alloc(b->pool, len + 2 * nul + 1), *o = d;
        for (size_t i = 0; i < len; i++) {
                if (s[i]) {
                        *o++ = (char)s[i];
                        continue;
                }
                memcpy(o, "\xEF\xBF\xBD", 3);
                o += 3;
        }
        *o = 0;
        return d;
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
        struct pbuilder *b = ctx;
        struct kb_value *n = node(ctx, KB_VSTRING);
        n->s = may_hold_nul(b, s, len) ? replace_nul(b, s, len, false)
                                       : pstr(ctx, (const char *)s, len);
        return put(ctx, n);
}

static int open_level(struct pbuilder *b, enum kb_value_type t)
{
        if (b->depth >= KB_VALUE_MAX_DEPTH) {
                b->too_deep = true;
                return 0;
        }
        struct kb_value *v = node(b, t);
        const char *name = b->depth ? b->lv[b->depth - 1].key : NULL;
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
        l->name = name;
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
        b->lv[b->depth - 1].key = may_hold_nul(b, s, len) ? replace_nul(b, s, len, true)
                                                          : pstr(b, (const char *)s, len);
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
                if (l->n >= UINT32_MAX)
                        return 0;
                v->obj.m = kb_pool_alloc(b->pool, l->n * sizeof(*v->obj.m));
                memcpy(v->obj.m, l->m, l->n * sizeof(*v->obj.m));
                v->obj.n = v->obj.cap = (uint32_t)l->n;
                if (l->n >= KB_VALUE_INDEX_MIN) {
                        /* The scratch index fits these positions exactly. */
                        size_t slots = kb__value_index_slots(l->n);
                        v->obj.idx = kb_pool_alloc(b->pool, slots * sizeof(*v->obj.idx));
                        memcpy(v->obj.idx, l->idx, slots * sizeof(*v->obj.idx));
                }
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
        struct pbuilder b = {
            .pool = pool, .text_in = (uintptr_t)text, .text_end = (uintptr_t)text + len};
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
                if (b.nul_at)
                        KB_WARN("%s: read with U+FFFD in its place", b.nul_at);
        }
        yajl_free(h);
        for (int i = 0; i < b.nlv; i++) {
                free(b.lv[i].m);
                free(b.lv[i].idx);
        }
        free(b.lv);
        free(b.nul_at);
        return rc;
}
