/*
 * Server-side printing: the meta.k8s.io/v1 Table kubectl asks for with
 * "Accept: application/json;as=Table".  kubectl prints the cells as given,
 * so ages are humanised here (kb_human_duration, as upstream's
 * HumanDuration: 59s, 2m3s, 15m, 3h5m, 12h, 3d4h, 689d, 2y5d).
 */
#include "apiserver/apiserver-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- custom resources ----------------------------------------------------------- */

/* Evaluates the simple JSONPath that printer columns use: ".a.b[0].c". */
static const struct kb_value *jsonpath(const struct kb_value *obj, const char *path)
{
        const struct kb_value *v = obj;
        const char *p = path;
        if (*p == '{')
                p++;
        if (*p == '$')
                p++;
        while (v && *p && *p != '}') {
                if (*p == '.') {
                        p++;
                        size_t len = strcspn(p, ".[}");
                        char key[256];
                        if (len == 0 || len >= sizeof(key))
                                return NULL;
                        memcpy(key, p, len);
                        key[len] = 0;
                        v = kb_value_get(v, key);
                        p += len;
                } else if (*p == '[') {
                        char *end;
                        long idx = strtol(p + 1, &end, 10);
                        if (*end != ']' || !kb_value_is(v, KB_VARRAY))
                                return NULL;
                        if (idx < 0)
                                idx += (long)v->arr.n;
                        v = idx >= 0 && (size_t)idx < v->arr.n ? v->arr.v[idx] : NULL;
                        p = end + 1;
                } else {
                        return NULL;
                }
        }
        return v;
}

static void cr_cell(const struct kb_value *col, const struct kb_value *obj, struct kb_value *cells)
{
        const char *type = kb_value_str(kb_value_get(col, "type"));
        const char *path = kb_value_str(kb_value_get(col, "jsonPath"));
        const struct kb_value *v = path ? jsonpath(obj, path) : NULL;
        if (!v || v->type == KB_VNULL) {
                kb_value_append(cells, kb_value_new(KB_VNULL));
                return;
        }
        if (kb_streq(type, "date") && v->type == KB_VSTRING) {
                char buf[32];
                kb__age_of(v->s, buf, sizeof(buf));
                kb_value_append(cells, kb_value_new_string(buf));
                return;
        }
        if (v->type == KB_VOBJECT || v->type == KB_VARRAY) {
                char *t = kb_json_emit(v, false);
                kb_value_append(cells, kb_value_new_string(t));
                free(t);
                return;
        }
        kb_value_append(cells, kb_value_clone(v));
}

static void add_coldef(struct kb_value *defs, const char *name, const char *type,
                       const char *format, int64_t priority, const char *desc)
{
        struct kb_value *d = kb_value_new(KB_VOBJECT);
        kb_value_set(d, "name", kb_value_new_string(name));
        kb_value_set(d, "type", kb_value_new_string(type ? type : "string"));
        kb_value_set(d, "format", kb_value_new_string(format ? format : ""));
        kb_value_set(d, "description", kb_value_new_string(desc ? desc : ""));
        kb_value_set(d, "priority", kb_value_new_int(priority));
        kb_value_append(defs, d);
}

static void row_object(const struct kb_value *obj, const char *include, struct kb_value *row)
{
        if (kb_streq(include, "None"))
                return;
        if (kb_streq(include, "Object")) {
                kb_value_set(row, "object", kb_value_clone(obj));
                return;
        }
        struct kb_value *pom = kb_value_new(KB_VOBJECT);
        kb_value_set(pom, "kind", kb_value_new_string("PartialObjectMetadata"));
        kb_value_set(pom, "apiVersion", kb_value_new_string("meta.k8s.io/v1"));
        const struct kb_value *md = kb_value_get(obj, "metadata");
        kb_value_set(pom, "metadata", md ? kb_value_clone(md) : kb_value_new(KB_VOBJECT));
        kb_value_set(row, "object", pom);
}

void kb__table(struct kb_apiserver *srv, const struct kb_rtype *rt, const struct kb_value **objs,
               size_t n, const char *include, bool with_columns, const char *rv,
               struct kb_value *out)
{
        kb_value_set(out, "kind", kb_value_new_string("Table"));
        kb_value_set(out, "apiVersion", kb_value_new_string("meta.k8s.io/v1"));
        struct kb_value *md = kb_value_ensure_object(out, "metadata");
        if (rv)
                kb_value_set(md, "resourceVersion", kb_value_new_string(rv));
        if (with_columns) {
                struct kb_value *defs = kb_value_new(KB_VARRAY);
                if (rt->custom) {
                        add_coldef(defs, "Name", "string", "name", 0,
                                   "Name must be unique within a namespace.");
                        const struct kb_value *cols = rt->columns;
                        if (!cols || cols->arr.n == 0)
                                add_coldef(defs, "Age", "date", "", 0,
                                           "CreationTimestamp is a timestamp.");
                        for (size_t i = 0; cols && i < cols->arr.n; i++) {
                                const struct kb_value *c = cols->arr.v[i];
                                int64_t prio = 0;
                                kb_value_int(kb_value_get(c, "priority"), &prio);
                                const char *name = kb_value_str(kb_value_get(c, "name"));
                                add_coldef(defs, name ? name : "",
                                           kb_value_str(kb_value_get(c, "type")),
                                           kb_value_str(kb_value_get(c, "format")), prio,
                                           kb_value_str(kb_value_get(c, "description")));
                        }
                } else {
                        for (size_t i = 0; i < rt->ncols; i++)
                                add_coldef(defs, rt->cols[i].name, rt->cols[i].type,
                                           rt->cols[i].format, rt->cols[i].priority,
                                           rt->cols[i].desc);
                }
                kb_value_set(out, "columnDefinitions", defs);
        } else {
                kb_value_set(out, "columnDefinitions", kb_value_new(KB_VNULL));
        }
        struct kb_value *rows = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < n; i++) {
                struct kb_value *row = kb_value_new(KB_VOBJECT);
                struct kb_value *cells = kb_value_new(KB_VARRAY);
                if (rt->custom) {
                        kb__cell_name(cells, objs[i]);
                        const struct kb_value *cols = rt->columns;
                        if (!cols || cols->arr.n == 0)
                                kb__cell_age(cells, objs[i]);
                        for (size_t j = 0; cols && j < cols->arr.n; j++)
                                cr_cell(cols->arr.v[j], objs[i], cells);
                } else {
                        rt->row(srv, objs[i], cells);
                }
                kb_value_set(row, "cells", cells);
                row_object(objs[i], include, row);
                kb_value_append(rows, row);
        }
        kb_value_set(out, "rows", rows);
}
