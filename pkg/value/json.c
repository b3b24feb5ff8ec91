/* JSON to and from kb_value, on yajl's event parser and generator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>

#include "base/base.h"
#include "value/value-int.h"
#include "value/value.h"

/*
 * The builder keeps the open containers on an explicit stack, so depth is
 * bounded by KB_VALUE_MAX_DEPTH rather than by the C stack.
 */
struct builder {
        struct kb_value *stack[KB_VALUE_MAX_DEPTH + 1];
        char *pending_key[KB_VALUE_MAX_DEPTH + 1];
        char *name[KB_VALUE_MAX_DEPTH + 1]; /* stack[i]'s key in its parent */
        int depth;
        struct kb_value *root;
        bool too_deep;
        char *nul_at;               /* the message for a NUL character */
        uintptr_t text, text_end;   /* the input (see may_hold_nul) */
        struct kb_value_dups *dups; /* where repeated keys are noted, or NULL */
};

/* Where the builder is, as Kubernetes names fields ("spec.containers[0]"):
 * the innermost open container, then with leaf true the value about to be
 * added to it (its pending key, or its next index). */
static char *where(const struct builder *b, bool leaf)
{
        struct kb_buf path;
        kb_buf_init(&path);
        for (int d = 1; d <= b->depth; d++) {
                const struct kb_value *parent = b->stack[d - 1];
                if (d == b->depth && !leaf)
                        break;
                if (parent->type == KB_VARRAY) {
                        kb_buf_printf(&path, "[%zu]",
                                      d == b->depth ? parent->arr.n : parent->arr.n - 1);
                } else {
                        const char *name = d == b->depth ? b->pending_key[d - 1] : b->name[d];
                        kb_buf_printf(&path, "%s%s", path.len ? "." : "", name ? name : "");
                }
        }
        char *s = kb_xstrdup(path.data);
        kb_buf_release(&path);
        return s;
}

/* Adds v to the open container.  With keep, an object's key for v is
 * handed to *keep rather than freed (an opening container's name, for
 * messages, without a copy). */
static int add_keep(struct builder *b, struct kb_value *v, char **keep)
{
        if (b->depth == 0) {
                if (b->root) { /* yajl_allow_multiple_values is off: cannot happen */
                        kb_value_free(v);
                        return 0;
                }
                b->root = v;
                return 1;
        }
        struct kb_value *top = b->stack[b->depth - 1];
        if (top->type == KB_VARRAY) {
                kb_value_append(top, v);
        } else {
                char *key = b->pending_key[b->depth - 1];
                size_t had = top->obj.n;
                kb_value_set(top, key, v);
                /* The last of repeated keys wins, in the first one's place;
                 * kube-apiserver's strict decoding names each repeat. */
                if (top->obj.n == had && b->dups && b->dups->n < KB_VALUE_DUPS_MAX) {
                        char *path = where(b, true);
                        KB_PUSH(b->dups->v, b->dups->n, b->dups->cap,
                                kb_xasprintf("duplicate field \"%s\"", path));
                        free(path);
                }
                if (keep)
                        *keep = key;
                else
                        free(key);
                b->pending_key[b->depth - 1] = NULL;
        }
        return 1;
}

static int add(struct builder *b, struct kb_value *v)
{
        return add_keep(b, v, NULL);
}

static int open_container(struct builder *b, enum kb_value_type t)
{
        if (b->depth >= KB_VALUE_MAX_DEPTH) {
                b->too_deep = true;
                return 0;
        }
        struct kb_value *v = kb_value_new(t);
        char *name = NULL;
        add_keep(b, v, &name);
        b->name[b->depth] = name;
        b->stack[b->depth++] = v;
        return 1;
}

static int cb_null(void *ctx)
{
        return add(ctx, kb_value_new(KB_VNULL));
}

static int cb_bool(void *ctx, int v)
{
        return add(ctx, kb_value_new_bool(v));
}

static int cb_number(void *ctx, const char *s, size_t n)
{
        struct kb_value *v = kb_value_new(KB_VNUMBER);
        v->s = kb_xstrndup(s, n);
        return add(ctx, v);
}

/*
 * Whether a string yajl hands over may hold a NUL.  yajl refuses raw
 * control characters in strings, so only an escape (\u0000) makes one, and
 * a string with escapes comes from yajl's decode buffer, never from the
 * input itself: a string inside the input needs no scan (most of them).
 */
static bool may_hold_nul(uintptr_t text, uintptr_t end, const unsigned char *s, size_t n)
{
        uintptr_t p = (uintptr_t)s;
        return !(p >= text && p < end) && memchr(s, 0, n);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
        struct builder *b = ctx;
        if (may_hold_nul(b->text, b->text_end, s, n)) {
                b->nul_at = kb__value_nul_message(where(b, true), NULL, 0);
                return 0;
        }
        return add(ctx, kb_value_new_stringn((const char *)s, n));
}

static int cb_start_map(void *ctx)
{
        return open_container(ctx, KB_VOBJECT);
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t n)
{
        struct builder *b = ctx;
        if (may_hold_nul(b->text, b->text_end, s, n)) {
                b->nul_at = kb__value_nul_message(where(b, false), (const char *)s, n);
                return 0;
        }
        free(b->pending_key[b->depth - 1]);
        b->pending_key[b->depth - 1] = kb_xstrndup((const char *)s, n);
        return 1;
}

static int cb_end(void *ctx)
{
        struct builder *b = ctx;
        b->depth--;
        free(b->name[b->depth]);
        b->name[b->depth] = NULL;
        return 1;
}

static int cb_start_array(void *ctx)
{
        return open_container(ctx, KB_VARRAY);
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

static int line_of(const char *text, size_t off)
{
        int line = 1;
        for (size_t i = 0; i < off; i++)
                line += text[i] == '\n';
        return line;
}

int kb_json_parse(const char *text, size_t len, struct kb_value **out, char *err, size_t errlen)
{
        return kb_json_parse_dups(text, len, out, NULL, err, errlen);
}

int kb_json_parse_dups(const char *text, size_t len, struct kb_value **out,
                       struct kb_value_dups *dups, char *err, size_t errlen)
{
        struct builder b;
        memset(&b, 0, sizeof(b));
        b.dups = dups;
        b.text = (uintptr_t)text;
        b.text_end = (uintptr_t)text + len;
        yajl_handle h = yajl_alloc(&callbacks, NULL, &b);
        if (!h)
                kb_die("yajl_alloc failed");
        yajl_status st = yajl_parse(h, (const unsigned char *)text, len);
        if (st == yajl_status_ok)
                st = yajl_complete_parse(h);
        int rc = 0;
        if (st != yajl_status_ok || !b.root) {
                if (err && errlen) {
                        size_t off = yajl_get_bytes_consumed(h);
                        if (b.nul_at) {
                                snprintf(err, errlen, "line %d: %s",
                                         line_of(text, off < len ? off : len), b.nul_at);
                        } else if (b.too_deep) {
                                snprintf(err, errlen, "line %d: nesting deeper than %d",
                                         line_of(text, off < len ? off : len), KB_VALUE_MAX_DEPTH);
                        } else if (st == yajl_status_ok) {
                                snprintf(err, errlen, "empty document");
                        } else {
                                unsigned char *msg = yajl_get_error(h, 0, NULL, 0);
                                char *nl;
                                snprintf(err, errlen, "line %d: %s",
                                         line_of(text, off < len ? off : len), (char *)msg);
                                if ((nl = strchr(err, '\n')) != NULL)
                                        *nl = '\0';
                                yajl_free_error(h, msg);
                        }
                }
                for (int i = 0; i <= KB_VALUE_MAX_DEPTH; i++) {
                        free(b.pending_key[i]);
                        free(b.name[i]);
                }
                kb_value_free(b.root);
                rc = KB_EBADINPUT;
        } else {
                *out = b.root;
        }
        free(b.nul_at);
        yajl_free(h);
        return rc;
}

/* ---- emitting --------------------------------------------------------- */

static void gen(yajl_gen g, const struct kb_value *v)
{
        switch (v->type) {
        case KB_VNULL:
                yajl_gen_null(g);
                break;
        case KB_VBOOL:
                yajl_gen_bool(g, v->b);
                break;
        case KB_VNUMBER:
                yajl_gen_number(g, v->s, strlen(v->s));
                break;
        case KB_VSTRING:
                yajl_gen_string(g, (const unsigned char *)v->s, strlen(v->s));
                break;
        case KB_VARRAY:
                yajl_gen_array_open(g);
                for (size_t i = 0; i < v->arr.n; i++)
                        gen(g, v->arr.v[i]);
                yajl_gen_array_close(g);
                break;
        case KB_VOBJECT:
                yajl_gen_map_open(g);
                for (size_t i = 0; i < v->obj.n; i++) {
                        const char *k = v->obj.m[i].key;
                        yajl_gen_string(g, (const unsigned char *)k, strlen(k));
                        gen(g, v->obj.m[i].val);
                }
                yajl_gen_map_close(g);
                break;
        }
}

char *kb_json_emit(const struct kb_value *v, bool pretty)
{
        yajl_gen g = yajl_gen_alloc(NULL);
        const unsigned char *buf;
        size_t len;
        if (!g)
                kb_die("yajl_gen_alloc failed");
        yajl_gen_config(g, yajl_gen_beautify, pretty ? 1 : 0);
        yajl_gen_config(g, yajl_gen_indent_string, "  ");
        if (v)
                gen(g, v);
        else
                yajl_gen_null(g);
        yajl_gen_get_buf(g, &buf, &len);
        char *s = kb_xstrndup((const char *)buf, len);
        yajl_gen_free(g);
        return s;
}
