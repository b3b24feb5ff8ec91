/* YAML (multi-document) to kb_value, on libyaml's event parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "base/base.h"
#include "value/value.h"

/* Aliases are expanded by copying; this bounds the total node count so that
 * nested aliases cannot blow up memory. */
#define MAX_NODES (8u * 1024 * 1024)

struct anchor {
        char *name;
        struct kb_value *val;
};

struct yparser {
        yaml_parser_t p;
        char *err;
        size_t errlen;
        struct anchor *anchors;
        size_t nanchors, capanchors;
        size_t nodes;
};

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
        /* A copy: the original may still be replaced by a duplicate key. */
        struct anchor a = {kb_xstrdup((const char *)name), kb_value_clone(v)};
        KB_PUSH(y->anchors, y->nanchors, y->capanchors, a);
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
                char *key = kb_xstrndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
                yaml_event_delete(&ev);
                if (!next_event(y, &ev)) {
                        free(key);
                        goto fail;
                }
                struct kb_value *val = parse_node(y, &ev, depth + 1);
                yaml_event_delete(&ev);
                if (!val) {
                        free(key);
                        goto fail;
                }
                kb_value_set(v, key, val);
                free(key);
        }
        /* Anchored collections are remembered only once complete, so an
         * alias can never refer to its own ancestor (no cycles). */
        remember_anchor(y, anchor, v);
        return v;
fail:
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
                for (size_t i = y->nanchors; i-- > 0;) {
                        if (strcmp(y->anchors[i].name, name) == 0) {
                                size_t n = count_nodes(y->anchors[i].val);
                                if (y->nodes + n > MAX_NODES) {
                                        fail(y, line, "%s", "aliases expand too far");
                                        return NULL;
                                }
                                y->nodes += n;
                                return kb_value_clone(y->anchors[i].val);
                        }
                }
                fail(y, line, "unknown alias *%s", name);
                return NULL;
        }
        default:
                fail(y, line, "%s", "unexpected YAML event");
                return NULL;
        }
}

int kb_yaml_parse(const char *text, size_t len, struct kb_value ***docs_out, size_t *n_out,
                  char *err, size_t errlen)
{
        struct yparser y;
        struct kb_value **docs = NULL;
        size_t ndocs = 0, cap = 0;
        int rc = KB_EBADINPUT;

        memset(&y, 0, sizeof(y));
        y.err = err;
        y.errlen = errlen;
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
                for (size_t i = 0; i < y.nanchors; i++) {
                        free(y.anchors[i].name);
                        kb_value_free(y.anchors[i].val);
                }
                y.nanchors = 0;
                if (v->type == KB_VNULL) {
                        kb_value_free(v);
                        continue;
                }
                KB_PUSH(docs, ndocs, cap, v);
        }
        rc = 0;
out:
        for (size_t i = 0; i < y.nanchors; i++) {
                free(y.anchors[i].name);
                kb_value_free(y.anchors[i].val);
        }
        free(y.anchors);
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
