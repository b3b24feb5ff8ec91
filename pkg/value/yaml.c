/* YAML (multi-document) to kb_value, on libyaml's event parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "base/base.h"
#include "value/value-int.h"
#include "value/value.h"

/*
 * Aliases are expanded by copying.  Before an alias is copied, the nodes
 * made so far plus the alias's must stay within ALIAS_RATIO per event
 * parsed so far plus ALIAS_SLACK, so what a document costs is linear in
 * its size: a 701-byte "billion laughs" (nine aliases of nine aliases ...)
 * stops at its first few expansions, while a manifest that reuses a block
 * a few times stays far below.  kube-apiserver's YAML decoder refuses
 * "excessive aliasing" in the same spirit (a cap on aliases relative to
 * the nodes decoded).  MAX_NODES caps any stream.
 */
#define ALIAS_RATIO 10
#define ALIAS_SLACK 10000
#define MAX_NODES   (8u * 1024 * 1024)

/* One open collection, for naming a field in a message. */
struct yframe {
        bool map;
        const char *key; /* a mapping's current key */
        size_t index;    /* a sequence's current index */
};

struct yparser {
        yaml_parser_t p;
        char *err;
        size_t errlen;
        struct kb_value *anchors; /* name -> a copy of the anchored node */
        size_t nodes, events;
        struct yframe fr[KB_VALUE_MAX_DEPTH + 2];
        int nfr;
        struct kb_value_dups *dups;
};

/* The field the first k open collections lead to: "spec.containers[0]". */
static char *path_of(const struct yparser *y, int k)
{
        struct kb_buf b;
        kb_buf_init(&b);
        for (int i = 0; i < k; i++) {
                if (y->fr[i].map)
                        kb_buf_printf(&b, "%s%s", b.len ? "." : "",
                                      y->fr[i].key ? y->fr[i].key : "");
                else
                        kb_buf_printf(&b, "[%zu]", y->fr[i].index);
        }
        char *s = kb_xstrdup(b.data);
        kb_buf_release(&b);
        return s;
}

/* A NUL character in a scalar (keys: key true) refuses the document. */
static bool has_nul(struct yparser *y, int line, const yaml_event_t *ev, bool key)
{
        const char *s = (const char *)ev->data.scalar.value;
        size_t n = ev->data.scalar.length;
        if (!memchr(s, 0, n))
                return false;
        char *msg = key ? kb__value_nul_message(path_of(y, y->nfr - 1), s, n)
                        : kb__value_nul_message(path_of(y, y->nfr), NULL, 0);
        if (y->err && y->errlen && !y->err[0])
                snprintf(y->err, y->errlen, "line %d: %s", line, msg);
        free(msg);
        return true;
}

static void fail(struct yparser *y, int line, const char *fmt, const char *arg)
{
        if (y->err && y->errlen && !y->err[0]) {
                char msg[256];
                snprintf(msg, sizeof(msg), fmt, arg ? arg : "");
                snprintf(y->err, y->errlen, "line %d: %s", line, msg);
        }
}

static bool next_event(struct yparser *y, yaml_event_t *ev)
{
        y->events++;
        if (!yaml_parser_parse(&y->p, ev)) {
                char msg[256];
                snprintf(msg, sizeof(msg), "%s%s%s", y->p.problem ? y->p.problem : "syntax error",
                         y->p.context ? " " : "", y->p.context ? y->p.context : "");
                fail(y, (int)y->p.problem_mark.line + 1, "%s", msg);
                return false;
        }
        return true;
}

static size_t count_nodes(const struct kb_value *v)
{
        size_t n = 1;
        if (v->type == KB_VARRAY)
                for (size_t i = 0; i < v->arr.n; i++)
                        n += count_nodes(v->arr.v[i]);
        else if (v->type == KB_VOBJECT)
                for (size_t i = 0; i < v->obj.n; i++)
                        n += count_nodes(v->obj.m[i].val);
        return n;
}

static void remember_anchor(struct yparser *y, const unsigned char *name, struct kb_value *v)
{
        if (!name)
                return;
        /* A copy: the original may still be replaced by a duplicate key.  A
         * name anchored again means the later node from here on. */
        kb_value_set(y->anchors, (const char *)name, kb_value_clone(v));
}

static struct kb_value *resolve_plain(const char *s, size_t n)
{
        if (n == 0 || (n == 1 && s[0] == '~') || (n == 4 && strncasecmp(s, "null", 4) == 0))
                return kb_value_new(KB_VNULL);
        if (n == 4 && strncasecmp(s, "true", 4) == 0)
                return kb_value_new_bool(true);
        if (n == 5 && strncasecmp(s, "false", 5) == 0)
                return kb_value_new_bool(false);
        if (strlen(s) == n && kb_json_is_number(s))
                return kb_value_new_number(s);
        return kb_value_new_stringn(s, n);
}

static struct kb_value *parse_node(struct yparser *y, yaml_event_t *ev, int depth);

/* Parses the contents of a sequence or mapping whose start event was ev. */
static struct kb_value *parse_collection(struct yparser *y, yaml_event_t *start, int depth)
{
        bool is_map = start->type == YAML_MAPPING_START_EVENT;
        struct kb_value *v = kb_value_new(is_map ? KB_VOBJECT : KB_VARRAY);
        v->line = (int)start->start_mark.line + 1;
        /* depth <= KB_VALUE_MAX_DEPTH (parse_node), so a frame is free. */
        struct yframe *fr = &y->fr[y->nfr++];
        *fr = (struct yframe){.map = is_map};
        char *key = NULL;
        const unsigned char *anchor =
            is_map ? start->data.mapping_start.anchor : start->data.sequence_start.anchor;
        yaml_event_type_t end = is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;

        for (;;) {
                yaml_event_t ev;
                if (!next_event(y, &ev))
                        goto fail;
                if (ev.type == end) {
                        yaml_event_delete(&ev);
                        break;
                }
                if (!is_map) {
                        fr->index = v->arr.n;
                        struct kb_value *item = parse_node(y, &ev, depth + 1);
                        yaml_event_delete(&ev);
                        if (!item)
                                goto fail;
                        kb_value_append(v, item);
                        continue;
                }
                /* Mapping: key then value.  Keys must be scalars. */
                int line = (int)ev.start_mark.line + 1;
                if (ev.type != YAML_SCALAR_EVENT) {
                        yaml_event_delete(&ev);
                        fail(y, line, "%s", "mapping keys must be scalars");
                        goto fail;
                }
                if (has_nul(y, line, &ev, true)) {
                        yaml_event_delete(&ev);
                        goto fail;
                }
                free(key);
                key = kb_xstrndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
                fr->key = key;
                yaml_event_delete(&ev);
                if (!next_event(y, &ev))
                        goto fail;
                struct kb_value *val = parse_node(y, &ev, depth + 1);
                yaml_event_delete(&ev);
                if (!val)
                        goto fail;
                size_t had = v->obj.n;
                kb_value_set(v, key, val);
                /* The last of repeated keys wins; kube-apiserver's strict
                 * decoding names each repeat this way. */
                if (v->obj.n == had && y->dups && y->dups->n < KB_VALUE_DUPS_MAX)
                        KB_PUSH(y->dups->v, y->dups->n, y->dups->cap,
                                kb_xasprintf("line %d: key \"%s\" already set in map", line, key));
        }
        free(key);
        y->nfr--;
        /* Anchored collections are remembered only once complete, so an
         * alias can never refer to its own ancestor (no cycles). */
        remember_anchor(y, anchor, v);
        return v;
fail:
        free(key);
        y->nfr--;
        kb_value_free(v);
        return NULL;
}

static struct kb_value *parse_node(struct yparser *y, yaml_event_t *ev, int depth)
{
        int line = (int)ev->start_mark.line + 1;
        if (depth > KB_VALUE_MAX_DEPTH) {
                char d[16];
                snprintf(d, sizeof(d), "%d", KB_VALUE_MAX_DEPTH);
                fail(y, line, "nesting deeper than %s", d);
                return NULL;
        }
        if (++y->nodes > MAX_NODES) {
                fail(y, line, "%s", "document too large");
                return NULL;
        }
        switch (ev->type) {
        case YAML_SCALAR_EVENT: {
                if (has_nul(y, line, ev, false))
                        return NULL;
                const char *s = (const char *)ev->data.scalar.value;
                size_t n = ev->data.scalar.length;
                struct kb_value *v;
                if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag)
                        v = resolve_plain(s, n);
                else
                        v = kb_value_new_stringn(s, n);
                v->line = line;
                if (ev->data.scalar.anchor)
                        remember_anchor(y, ev->data.scalar.anchor, v);
                return v;
        }
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
                return parse_collection(y, ev, depth);
        case YAML_ALIAS_EVENT: {
                const char *name = (const char *)ev->data.alias.anchor;
                const struct kb_value *a = kb_value_get(y->anchors, name);
                if (!a) {
                        fail(y, line, "unknown alias *%s", name);
                        return NULL;
                }
                /* This alias node was counted above; its copy replaces it. */
                size_t n = count_nodes(a), made = y->nodes - 1 + n;
                size_t limit = ALIAS_RATIO * y->events + ALIAS_SLACK;
                if (made > limit || made > MAX_NODES) {
                        char msg[200];
                        snprintf(msg, sizeof(msg),
                                 "document contains excessive aliasing: *%s would make %zu "
                                 "nodes from %zu YAML events (at most %d per event plus %d)",
                                 name, made, y->events, ALIAS_RATIO, ALIAS_SLACK);
                        fail(y, line, "%s", msg);
                        return NULL;
                }
                y->nodes = made;
                return kb_value_clone(a);
        }
        default:
                fail(y, line, "%s", "unexpected YAML event");
                return NULL;
        }
}

int kb_yaml_parse(const char *text, size_t len, struct kb_value ***docs_out, size_t *n_out,
                  char *err, size_t errlen)
{
        return kb_yaml_parse_dups(text, len, docs_out, n_out, NULL, err, errlen);
}

int kb_yaml_parse_dups(const char *text, size_t len, struct kb_value ***docs_out, size_t *n_out,
                       struct kb_value_dups *dups, char *err, size_t errlen)
{
        struct yparser y;
        struct kb_value **docs = NULL;
        size_t ndocs = 0, cap = 0;
        int rc = KB_EBADINPUT;

        memset(&y, 0, sizeof(y));
        y.err = err;
        y.errlen = errlen;
        y.dups = dups;
        y.anchors = kb_value_new(KB_VOBJECT);
        if (err && errlen)
                err[0] = '\0';
        if (!yaml_parser_initialize(&y.p))
                kb_die("yaml_parser_initialize failed");
        yaml_parser_set_input_string(&y.p, (const unsigned char *)text, len);

        for (;;) {
                yaml_event_t ev;
                if (!next_event(&y, &ev))
                        goto out;
                yaml_event_type_t t = ev.type;
                if (t == YAML_STREAM_END_EVENT) {
                        yaml_event_delete(&ev);
                        break;
                }
                if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT ||
                    t == YAML_DOCUMENT_END_EVENT) {
                        yaml_event_delete(&ev);
                        continue;
                }
                struct kb_value *v = parse_node(&y, &ev, 0);
                yaml_event_delete(&ev);
                if (!v)
                        goto out;
                /* Anchors are scoped to their document. */
                kb_value_free(y.anchors);
                y.anchors = kb_value_new(KB_VOBJECT);
                if (v->type == KB_VNULL) {
                        kb_value_free(v);
                        continue;
                }
                KB_PUSH(docs, ndocs, cap, v);
        }
        rc = 0;
out:
        kb_value_free(y.anchors);
        yaml_parser_delete(&y.p);
        if (rc) {
                if (err && errlen && !err[0])
                        snprintf(err, errlen, "invalid YAML");
                kb_value_free_docs(docs, ndocs);
                return rc;
        }
        *docs_out = docs;
        *n_out = ndocs;
        return 0;
}
