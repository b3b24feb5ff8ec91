/*
 * The three patch formats kubectl sends.
 *
 * JSON merge patch (RFC 7386): objects merge key by key, null deletes, any
 * other value (lists included) replaces.
 *
 * Strategic merge patch, the subset kubectl's built-in types use: lists of
 * objects named in merge_keys below merge element by element on that key
 * (containers by name, ports by containerPort, ...); finalizers merge as a
 * set; every other list is replaced.  Directives: "$patch": "delete" or
 * "replace" (in a map or a list element), "$retainKeys",
 * "$setElementOrder/<list>", "$deleteFromPrimitiveList/<list>".
 *   doc   {"containers":[{"name":"a","image":"x"},{"name":"b"}]}
 *   patch {"containers":[{"name":"b","image":"y"}]}
 *   out   {"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]}
 *
 * JSON patch (RFC 6902): add, remove, replace, move, copy, test.
 */
#include "apiserver/apiserver-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kb__merge_patch(struct kb_value **doc, const struct kb_value *patch)
{
        if (!kb_value_is(patch, KB_VOBJECT)) {
                kb_value_free(*doc);
                *doc = kb_value_clone(patch);
                return;
        }
        if (!kb_value_is(*doc, KB_VOBJECT)) {
                kb_value_free(*doc);
                *doc = kb_value_new(KB_VOBJECT);
        }
        for (size_t i = 0; i < patch->obj.n; i++) {
                const struct kb_member *m = &patch->obj.m[i];
                if (m->val->type == KB_VNULL) {
                        kb_value_del(*doc, m->key);
                        continue;
                }
                struct kb_value *cur = kb_value_take(*doc, m->key);
                if (!cur)
                        cur = kb_value_new(KB_VNULL);
                kb__merge_patch(&cur, m->val);
                kb_value_set(*doc, m->key, cur);
        }
}

const char *kb__merge_key(const char *field)
{
        static const struct {
                const char *field, *key;
        } keys[] = {
            {"containers", "name"},
            {"initContainers", "name"},
            {"ephemeralContainers", "name"},
            {"volumes", "name"},
            {"env", "name"},
            {"imagePullSecrets", "name"},
            {"resourceClaims", "name"},
            {"ports", "containerPort"},
            {"volumeMounts", "mountPath"},
            {"conditions", "type"},
            {"addresses", "type"},
            {"ownerReferences", "uid"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(keys); i++)
                if (!strcmp(keys[i].field, field))
                        return keys[i].key;
        return NULL;
}

static int smp_obj(struct kb_value **doc, const struct kb_value *patch, char *err, size_t errlen);

static struct kb_value *find_keyed(struct kb_value *list, const char *key,
                                   const struct kb_value *want, size_t *idx)
{
        for (size_t i = 0; i < list->arr.n; i++) {
                if (kb_value_equal(kb_value_get(list->arr.v[i], key), want)) {
                        if (idx)
                                *idx = i;
                        return list->arr.v[i];
                }
        }
        return NULL;
}

static void arr_remove(struct kb_value *list, size_t i)
{
        kb_value_free(list->arr.v[i]);
        memmove(&list->arr.v[i], &list->arr.v[i + 1], (list->arr.n - i - 1) * sizeof(void *));
        list->arr.n--;
}

static int smp_list(struct kb_value **doc, const char *field, const struct kb_value *patch,
                    char *err, size_t errlen)
{
        const char *key = kb__merge_key(field);
        if (!strcmp(field, "finalizers")) {
                if (!kb_value_is(*doc, KB_VARRAY)) {
                        kb_value_free(*doc);
                        *doc = kb_value_new(KB_VARRAY);
                }
                for (size_t i = 0; i < patch->arr.n; i++) {
                        bool have = false;
                        for (size_t j = 0; j < (*doc)->arr.n; j++)
                                have |= kb_value_equal((*doc)->arr.v[j], patch->arr.v[i]);
                        if (!have)
                                kb_value_append(*doc, kb_value_clone(patch->arr.v[i]));
                }
                return 0;
        }
        if (!key) {
                kb_value_free(*doc);
                *doc = kb_value_clone(patch);
                return 0;
        }
        /* A "$patch: replace" element replaces the whole list. */
        for (size_t i = 0; i < patch->arr.n; i++) {
                if (kb_streq(kb_value_str(kb_value_get(patch->arr.v[i], "$patch")), "replace")) {
                        struct kb_value *out = kb_value_new(KB_VARRAY);
                        for (size_t j = 0; j < patch->arr.n; j++)
                                if (!kb_value_get(patch->arr.v[j], "$patch"))
                                        kb_value_append(out, kb_value_clone(patch->arr.v[j]));
                        kb_value_free(*doc);
                        *doc = out;
                        return 0;
                }
        }
        if (!kb_value_is(*doc, KB_VARRAY)) {
                kb_value_free(*doc);
                *doc = kb_value_new(KB_VARRAY);
        }
        for (size_t i = 0; i < patch->arr.n; i++) {
                const struct kb_value *el = patch->arr.v[i];
                const struct kb_value *kv = kb_value_get(el, key);
                if (!kb_value_is(el, KB_VOBJECT) || !kv) {
                        snprintf(err, errlen, "%s: element without merge key %s", field, key);
                        return KB_EBADINPUT;
                }
                size_t idx;
                struct kb_value *cur = find_keyed(*doc, key, kv, &idx);
                const char *directive = kb_value_str(kb_value_get(el, "$patch"));
                if (kb_streq(directive, "delete")) {
                        if (cur)
                                arr_remove(*doc, idx);
                        continue;
                }
                if (!cur) {
                        struct kb_value *n = kb_value_new(KB_VOBJECT);
                        int rc = smp_obj(&n, el, err, errlen);
                        if (rc) {
                                kb_value_free(n);
                                return rc;
                        }
                        kb_value_append(*doc, n);
                        continue;
                }
                int rc = smp_obj(&(*doc)->arr.v[idx], el, err, errlen);
                if (rc)
                        return rc;
        }
        return 0;
}

/* Orders list elements as $setElementOrder says; the rest keep their
 * relative order after them. */
static void set_order(struct kb_value *list, const char *field, const struct kb_value *order)
{
        const char *key = kb__merge_key(field);
        if (!kb_value_is(list, KB_VARRAY) || !kb_value_is(order, KB_VARRAY))
                return;
        struct kb_value *out = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < order->arr.n; i++) {
                const struct kb_value *want =
                    key ? kb_value_get(order->arr.v[i], key) : order->arr.v[i];
                for (size_t j = 0; want && j < list->arr.n; j++) {
                        const struct kb_value *have =
                            key ? kb_value_get(list->arr.v[j], key) : list->arr.v[j];
                        if (list->arr.v[j] && kb_value_equal(have, want)) {
                                kb_value_append(out, list->arr.v[j]);
                                list->arr.v[j] = NULL;
                                break;
                        }
                }
        }
        for (size_t j = 0; j < list->arr.n; j++)
                if (list->arr.v[j])
                        kb_value_append(out, list->arr.v[j]);
        free(list->arr.v);
        list->arr = out->arr;
        out->arr.v = NULL;
        out->arr.n = 0;
        kb_value_free(out);
}

static int smp_obj(struct kb_value **doc, const struct kb_value *patch, char *err, size_t errlen)
{
        if (!kb_value_is(patch, KB_VOBJECT)) {
                kb_value_free(*doc);
                *doc = kb_value_clone(patch);
                return 0;
        }
        const char *directive = kb_value_str(kb_value_get(patch, "$patch"));
        if (!kb_value_is(*doc, KB_VOBJECT) || kb_streq(directive, "replace")) {
                kb_value_free(*doc);
                *doc = kb_value_new(KB_VOBJECT);
        }
        if (kb_streq(directive, "delete")) {
                kb_value_free(*doc);
                *doc = kb_value_new(KB_VNULL);
                return 0;
        }
        for (size_t i = 0; i < patch->obj.n; i++) {
                const struct kb_member *m = &patch->obj.m[i];
                if (m->key[0] == '$')
                        continue;
                if (m->val->type == KB_VNULL) {
                        kb_value_del(*doc, m->key);
                        continue;
                }
                struct kb_value *cur = kb_value_take(*doc, m->key);
                if (!cur)
                        cur = kb_value_new(KB_VNULL);
                int rc = m->val->type == KB_VARRAY ? smp_list(&cur, m->key, m->val, err, errlen)
                                                   : smp_obj(&cur, m->val, err, errlen);
                if (cur->type == KB_VNULL && kb_value_is(m->val, KB_VOBJECT) &&
                    kb_value_get(m->val, "$patch")) {
                        kb_value_free(cur);
                } else {
                        kb_value_set(*doc, m->key, cur);
                }
                if (rc)
                        return rc;
        }
        for (size_t i = 0; i < patch->obj.n; i++) {
                const struct kb_member *m = &patch->obj.m[i];
                if (kb_has_prefix(m->key, "$deleteFromPrimitiveList/")) {
                        struct kb_value *l = kb_value_get(*doc, m->key + 25);
                        if (!kb_value_is(l, KB_VARRAY) || !kb_value_is(m->val, KB_VARRAY))
                                continue;
                        for (size_t j = l->arr.n; j-- > 0;)
                                for (size_t k = 0; k < m->val->arr.n; k++)
                                        if (kb_value_equal(l->arr.v[j], m->val->arr.v[k])) {
                                                arr_remove(l, j);
                                                break;
                                        }
                } else if (kb_has_prefix(m->key, "$setElementOrder/")) {
                        set_order(kb_value_get(*doc, m->key + 17), m->key + 17, m->val);
                } else if (!strcmp(m->key, "$retainKeys") && kb_value_is(m->val, KB_VARRAY)) {
                        for (size_t j = (*doc)->obj.n; j-- > 0;) {
                                bool keep = false;
                                for (size_t k = 0; k < m->val->arr.n; k++)
                                        keep |= kb_streq(kb_value_str(m->val->arr.v[k]),
                                                         (*doc)->obj.m[j].key);
                                if (!keep)
                                        kb_value_del(*doc, (*doc)->obj.m[j].key);
                        }
                } else if (m->key[0] == '$' && strcmp(m->key, "$patch") != 0) {
                        snprintf(err, errlen, "unknown strategic merge directive %s", m->key);
                        return KB_EBADINPUT;
                }
        }
        return 0;
}

int kb__strategic_patch(struct kb_value **doc, const struct kb_value *patch, char *err,
                        size_t errlen)
{
        if (!kb_value_is(patch, KB_VOBJECT)) {
                snprintf(err, errlen, "strategic merge patch must be an object");
                return KB_EBADINPUT;
        }
        return smp_obj(doc, patch, err, errlen);
}

/* ---- JSON patch ----------------------------------------------------------- */

/* Splits a JSON pointer into its unescaped tokens. */
static char **pointer_split(const char *ptr, size_t *n)
{
        *n = 0;
        if (!ptr[0])
                return NULL;
        if (ptr[0] != '/') {
                *n = (size_t)-1;
                return NULL;
        }
        size_t cap = 1;
        for (const char *p = ptr; *p; p++)
                cap += *p == '/';
        char **out = kb_xcalloc(cap, sizeof(*out));
        const char *p = ptr + 1;
        for (;;) {
                const char *e = strchr(p, '/');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                char *tok = kb_xmalloc(len + 1);
                size_t k = 0;
                for (size_t i = 0; i < len; i++) {
                        if (p[i] == '~' && i + 1 < len && (p[i + 1] == '0' || p[i + 1] == '1')) {
                                tok[k++] = p[i + 1] == '0' ? '~' : '/';
                                i++;
                        } else
                                tok[k++] = p[i];
                }
                tok[k] = 0;
                out[(*n)++] = tok;
                if (!e)
                        break;
                p = e + 1;
        }
        return out;
}

static void strv_free(char **v, size_t n)
{
        if (n == (size_t)-1)
                return;
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

static bool parse_index(const char *tok, size_t max, size_t *out)
{
        if (!tok[0] || (tok[0] == '0' && tok[1]))
                return false;
        size_t v = 0;
        for (const char *p = tok; *p; p++) {
                if (*p < '0' || *p > '9' || v > 100000000)
                        return false;
                v = v * 10 + (size_t)(*p - '0');
        }
        if (v > max)
                return false;
        *out = v;
        return true;
}

/* The parent container of the pointer's last token. */
static struct kb_value *walk(struct kb_value *doc, char **toks, size_t n)
{
        struct kb_value *v = doc;
        for (size_t i = 0; v && i + 1 < n; i++) {
                if (v->type == KB_VOBJECT)
                        v = kb_value_get(v, toks[i]);
                else if (v->type == KB_VARRAY) {
                        size_t idx;
                        v = parse_index(toks[i], v->arr.n - 1 + (v->arr.n == 0), &idx) &&
                                    idx < v->arr.n
                                ? v->arr.v[idx]
                                : NULL;
                } else
                        v = NULL;
        }
        return v;
}

static struct kb_value *ptr_take(struct kb_value **doc, const char *ptr, bool take)
{
        size_t n;
        char **t = pointer_split(ptr, &n);
        struct kb_value *res = NULL;
        if (n == (size_t)-1)
                return NULL;
        if (n == 0) {
                res = take ? *doc : kb_value_clone(*doc);
                if (take)
                        *doc = kb_value_new(KB_VNULL);
                goto out;
        }
        struct kb_value *parent = walk(*doc, t, n);
        if (!parent)
                goto out;
        if (parent->type == KB_VOBJECT) {
                if (take)
                        res = kb_value_take(parent, t[n - 1]);
                else if (kb_value_get(parent, t[n - 1]))
                        res = kb_value_clone(kb_value_get(parent, t[n - 1]));
        } else if (parent->type == KB_VARRAY) {
                size_t idx;
                if (parent->arr.n && parse_index(t[n - 1], parent->arr.n - 1, &idx)) {
                        if (take) {
                                res = parent->arr.v[idx];
                                memmove(&parent->arr.v[idx], &parent->arr.v[idx + 1],
                                        (parent->arr.n - idx - 1) * sizeof(void *));
                                parent->arr.n--;
                        } else
                                res = kb_value_clone(parent->arr.v[idx]);
                }
        }
out:
        strv_free(t, n);
        return res;
}

/* Adds val (owned) at ptr; replace=true requires the target to exist. */
static int ptr_put(struct kb_value **doc, const char *ptr, struct kb_value *val, bool replace)
{
        size_t n;
        char **t = pointer_split(ptr, &n);
        int rc = KB_EBADINPUT;
        if (n == (size_t)-1)
                goto fail;
        if (n == 0) {
                kb_value_free(*doc);
                *doc = val;
                return 0;
        }
        struct kb_value *parent = walk(*doc, t, n);
        if (!parent)
                goto fail;
        if (parent->type == KB_VOBJECT) {
                if (replace && !kb_value_get(parent, t[n - 1]))
                        goto fail;
                kb_value_set(parent, t[n - 1], val);
                val = NULL;
        } else if (parent->type == KB_VARRAY) {
                size_t idx;
                if (replace) {
                        if (!parent->arr.n || !parse_index(t[n - 1], parent->arr.n - 1, &idx))
                                goto fail;
                        kb_value_free(parent->arr.v[idx]);
                        parent->arr.v[idx] = val;
                        val = NULL;
                } else {
                        if (!strcmp(t[n - 1], "-"))
                                idx = parent->arr.n;
                        else if (!parse_index(t[n - 1], parent->arr.n, &idx))
                                goto fail;
                        kb_value_append(parent, val);
                        memmove(&parent->arr.v[idx + 1], &parent->arr.v[idx],
                                (parent->arr.n - 1 - idx) * sizeof(void *));
                        parent->arr.v[idx] = val;
                        val = NULL;
                }
        } else
                goto fail;
        rc = 0;
fail:
        kb_value_free(val);
        strv_free(t, n);
        return rc;
}

int kb__json_patch(struct kb_value **doc, const struct kb_value *ops, char *err, size_t errlen)
{
        if (!kb_value_is(ops, KB_VARRAY)) {
                snprintf(err, errlen, "json patch must be an array of operations");
                return KB_EBADINPUT;
        }
        for (size_t i = 0; i < ops->arr.n; i++) {
                const struct kb_value *op = ops->arr.v[i];
                const char *name = kb_value_str(kb_value_get(op, "op"));
                const char *path = kb_value_str(kb_value_get(op, "path"));
                const char *from = kb_value_str(kb_value_get(op, "from"));
                const struct kb_value *value = kb_value_get(op, "value");
                int rc = 0;
                if (!name || !path) {
                        snprintf(err, errlen, "operation %zu: missing op or path", i);
                        return KB_EBADINPUT;
                }
                if (!strcmp(name, "add") || !strcmp(name, "replace")) {
                        if (!value)
                                rc = KB_EBADINPUT;
                        else
                                rc = ptr_put(doc, path, kb_value_clone(value), name[0] == 'r');
                } else if (!strcmp(name, "remove")) {
                        struct kb_value *v = ptr_take(doc, path, true);
                        rc = v ? 0 : KB_EBADINPUT;
                        kb_value_free(v);
                } else if (!strcmp(name, "move") || !strcmp(name, "copy")) {
                        struct kb_value *v = from ? ptr_take(doc, from, name[0] == 'm') : NULL;
                        rc = v ? ptr_put(doc, path, v, false) : KB_EBADINPUT;
                } else if (!strcmp(name, "test")) {
                        struct kb_value *v = ptr_take(doc, path, false);
                        rc = v && value && kb_value_equal(v, value) ? 0 : KB_EBADINPUT;
                        kb_value_free(v);
                } else {
                        rc = KB_EBADINPUT;
                }
                if (rc) {
                        snprintf(err, errlen,
                                 "the server rejected our request due to an error "
                                 "in our request: operation %zu (%s %s) failed",
                                 i, name, path);
                        return rc;
                }
        }
        return 0;
}
