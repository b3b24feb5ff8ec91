/*
 * Field sets for server-side apply, in the FieldsV1 notation managedFields
 * carries: a tree whose keys are "f:<field>", "k:<key object>" for an item
 * of a list keyed by a field (containers by name), "v:<value>" for an item
 * of a set (finalizers), and "." for a list item itself; an empty object is
 * a leaf, a field someone owns.
 *   {"spec":{"replicas":2,"containers":[{"name":"c","image":"x"}]}}
 *   -> {"f:spec":{"f:replicas":{},
 *                 "f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:name":{},"f:image":{}}}}}
 * Maps and structs are walked into; any other list is one leaf (atomic), as
 * are scalars.  A list is keyed when the schema says x-kubernetes-list-type
 * map (CRDs), or when strategic merge patch merges it by a key (built-ins,
 * patch.c's table); finalizers are a set.
 */
#include "apiserver/apiserver-http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool leaf(const struct kb_value *n)
{
        return kb_value_is(n, KB_VOBJECT) && n->obj.n == 0;
}

/* How the list in field `name` with schema s merges: its key field, or
 * NULL; *set when it is a set. */
static const char *list_key(const struct kb_fieldwalk *fw, const struct kb_value *s,
                            const char *name, bool *set)
{
        const char *type = kb_value_str(kb_value_get(s, "x-kubernetes-list-type"));
        *set = kb_streq(type, "set") || (fw->builtin && !strcmp(name, "finalizers"));
        if (kb_streq(type, "map")) {
                const struct kb_value *keys = kb_value_get(s, "x-kubernetes-list-map-keys");
                if (kb_value_is(keys, KB_VARRAY) && keys->arr.n == 1)
                        return kb_value_str(keys->arr.v[0]);
        }
        return fw->builtin ? kb__merge_key(name) : NULL;
}

static const struct kb_value *sub_schema(const struct kb_fieldwalk *fw, const struct kb_value *s,
                                         const char *key)
{
        s = kb__schema_resolve(fw->defs, s, NULL);
        const struct kb_value *p = kb_value_get(kb_value_get(s, "properties"), key);
        if (!p)
                p = kb_value_get(s, "additionalProperties");
        return kb_value_is(p, KB_VOBJECT) ? p : NULL;
}

static struct kb_value *node(struct kb_value *parent, const char *key)
{
        return kb_value_ensure_object(parent, key);
}

static void walk(const struct kb_fieldwalk *fw, const struct kb_value *s, const char *name,
                 const struct kb_value *v, struct kb_value *out)
{
        if (kb_value_is(v, KB_VOBJECT)) {
                for (size_t i = 0; i < v->obj.n; i++) {
                        char *k = kb_xasprintf("f:%s", v->obj.m[i].key);
                        struct kb_value *n = node(out, k);
                        free(k);
                        const struct kb_value *mv = v->obj.m[i].val;
                        if (kb_value_is(mv, KB_VOBJECT) || kb_value_is(mv, KB_VARRAY))
                                walk(fw, sub_schema(fw, s, v->obj.m[i].key), v->obj.m[i].key, mv,
                                     n);
                }
                return;
        }
        if (!kb_value_is(v, KB_VARRAY))
                return;
        bool set;
        const struct kb_value *rs = kb__schema_resolve(fw->defs, s, NULL);
        const char *key = list_key(fw, rs, name, &set);
        const struct kb_value *items = kb_value_get(rs, "items");
        for (size_t i = 0; (key || set) && i < v->arr.n; i++) {
                const struct kb_value *it = v->arr.v[i];
                const struct kb_value *kv = key ? kb_value_get(it, key) : NULL;
                if (key && !kv)
                        continue; /* an item without its key: the list stays atomic */
                char *text;
                if (key) {
                        struct kb_value *ko = kb_value_new(KB_VOBJECT);
                        kb_value_set(ko, key, kb_value_clone(kv));
                        char *j = kb_json_emit(ko, false);
                        kb_value_free(ko);
                        text = kb_xasprintf("k:%s", j);
                        free(j);
                } else {
                        char *j = kb_json_emit(it, false);
                        text = kb_xasprintf("v:%s", j);
                        free(j);
                }
                struct kb_value *n = node(out, text);
                free(text);
                if (key) {
                        node(n, ".");
                        walk(fw, items, "", it, n);
                }
        }
}

struct kb_value *kb__fields_of(const struct kb_fieldwalk *fw, const struct kb_value *schema,
                               const struct kb_value *obj)
{
        struct kb_value *out = kb_value_new(KB_VOBJECT);
        walk(fw, schema, "", obj, out);
        return out;
}

void kb__fields_union(struct kb_value *into, const struct kb_value *add)
{
        for (size_t i = 0; kb_value_is(add, KB_VOBJECT) && i < add->obj.n; i++)
                kb__fields_union(node(into, add->obj.m[i].key), add->obj.m[i].val);
}

/* Whether path (keys from the root) is a leaf of set. */
static bool has_leaf(const struct kb_value *set, char *const *path, size_t n)
{
        for (size_t i = 0; i < n && set; i++)
                set = kb_value_get(set, path[i]);
        return set && leaf(set);
}

void kb__fields_remove(struct kb_value *from, const struct kb_value *what)
{
        for (size_t i = 0; kb_value_is(from, KB_VOBJECT) && i < from->obj.n;) {
                const char *k = from->obj.m[i].key;
                const struct kb_value *w = kb_value_get(what, k);
                struct kb_value *n = from->obj.m[i].val;
                if (w && leaf(w) && leaf(n)) {
                        char *kk = kb_xstrdup(k);
                        kb_value_del(from, kk);
                        free(kk);
                        continue;
                }
                if (w && !leaf(n)) {
                        kb__fields_remove(n, w);
                        if (leaf(n)) { /* nothing left under it */
                                char *kk = kb_xstrdup(k);
                                kb_value_del(from, kk);
                                free(kk);
                                continue;
                        }
                }
                i++;
        }
}

static void leaves(const struct kb_value *set, char **path, size_t depth, kb_fields_leaf_fn fn,
                   void *arg)
{
        if (depth >= KB_FIELDS_MAX_DEPTH)
                return;
        for (size_t i = 0; kb_value_is(set, KB_VOBJECT) && i < set->obj.n; i++) {
                path[depth] = set->obj.m[i].key;
                if (leaf(set->obj.m[i].val))
                        fn(path, depth + 1, arg);
                else
                        leaves(set->obj.m[i].val, path, depth + 1, fn, arg);
        }
}

void kb__fields_leaves(const struct kb_value *set, kb_fields_leaf_fn fn, void *arg)
{
        char *path[KB_FIELDS_MAX_DEPTH];
        leaves(set, path, 0, fn, arg);
}

bool kb__fields_has(const struct kb_value *set, char *const *path, size_t n)
{
        return has_leaf(set, path, n);
}

/* The element of list a path segment names, or NULL; *idx its index. */
static struct kb_value *item(struct kb_value *list, const char *seg, size_t *idx)
{
        struct kb_value *want = NULL;
        if (!kb_value_is(list, KB_VARRAY) ||
            kb_json_parse(seg + 2, strlen(seg + 2), &want, NULL, 0))
                return NULL;
        struct kb_value *found = NULL;
        for (size_t i = 0; i < list->arr.n && !found; i++) {
                const struct kb_value *it = list->arr.v[i];
                bool match =
                    seg[0] == 'v' ? kb_value_equal(it, want) : kb_value_is(want, KB_VOBJECT);
                for (size_t k = 0; seg[0] == 'k' && match && k < want->obj.n; k++)
                        match = kb_value_equal(kb_value_get(it, want->obj.m[k].key),
                                               want->obj.m[k].val);
                if (match) {
                        found = list->arr.v[i];
                        *idx = i;
                }
        }
        kb_value_free(want);
        return found;
}

struct kb_value *kb__fields_value(struct kb_value *obj, char *const *path, size_t n)
{
        struct kb_value *v = obj;
        for (size_t i = 0; i < n && v; i++) {
                size_t idx;
                if (!strcmp(path[i], "."))
                        continue;
                if (!strncmp(path[i], "f:", 2))
                        v = kb_value_get(v, path[i] + 2);
                else
                        v = item(v, path[i], &idx);
        }
        return v;
}

bool kb__fields_delete(struct kb_value *obj, char *const *path, size_t n)
{
        if (n && !strcmp(path[n - 1], "."))
                n--; /* a list item itself: delete the item */
        if (!n)
                return false;
        struct kb_value *parent = kb__fields_value(obj, path, n - 1);
        const char *last = path[n - 1];
        if (!strncmp(last, "f:", 2))
                return kb_value_del(parent, last + 2);
        size_t idx;
        if (!item(parent, last, &idx))
                return false;
        kb_value_free(parent->arr.v[idx]);
        memmove(&parent->arr.v[idx], &parent->arr.v[idx + 1],
                (parent->arr.n - idx - 1) * sizeof(*parent->arr.v));
        parent->arr.n--;
        return true;
}

char *kb__fields_path(char *const *path, size_t n)
{
        struct kb_buf b;
        kb_buf_init(&b);
        for (size_t i = 0; i < n; i++) {
                const char *s = path[i];
                if (!strcmp(s, "."))
                        continue;
                if (!strncmp(s, "f:", 2)) {
                        kb_buf_printf(&b, ".%s", s + 2);
                        continue;
                }
                struct kb_value *v = NULL;
                if (kb_json_parse(s + 2, strlen(s + 2), &v, NULL, 0)) {
                        kb_buf_printf(&b, "[%s]", s);
                        continue;
                }
                /* [name="c"] for keyed items, [="x"] for set items. */
                kb_buf_adds(&b, "[");
                if (s[0] == 'k') {
                        for (size_t k = 0; kb_value_is(v, KB_VOBJECT) && k < v->obj.n; k++) {
                                char *j = kb_json_emit(v->obj.m[k].val, false);
                                kb_buf_printf(&b, "%s%s=%s", k ? "," : "", v->obj.m[k].key, j);
                                free(j);
                        }
                } else {
                        char *j = kb_json_emit(v, false);
                        kb_buf_printf(&b, "=%s", j);
                        free(j);
                }
                kb_buf_adds(&b, "]");
                kb_value_free(v);
        }
        if (!b.data)
                kb_buf_adds(&b, "");
        return kb_buf_detach(&b);
}
