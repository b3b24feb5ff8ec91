/*
 * The field readers every decoder uses, object metadata and resource lists.
 *
 * Reading rules shared by all kinds (api-int.h says them per function):
 *   - an absent field and a JSON null are the same, "unset", as Kubernetes'
 *     own decoding treats them;
 *   - a wrong type is an error naming the field ("metadata.labels: must be
 *     an object, got array"), never a silent default;
 *   - string fields also take numbers (YAML `value: 1`), by their literal
 *     text, which is laxer than the API server but loses nothing.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-int.h"

void kb__api_dec_init(struct kb__api_dec *d, const char *kind, char *err, size_t errlen)
{
        d->kind = kind;
        d->ns = NULL;
        d->name = NULL;
        d->err = err;
        d->errlen = err ? errlen : 0;
        d->skip_full_res = false;
        if (d->errlen)
                err[0] = '\0';
}

int kb__api_fail(struct kb__api_dec *d, const char *path, const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        if (!d->errlen)
                return KB_EBADINPUT;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (!d->kind)
                snprintf(d->err, d->errlen, "%s: %s", path, msg);
        else if (!d->name)
                snprintf(d->err, d->errlen, "%s: %s: %s", d->kind, path, msg);
        else if (d->ns)
                snprintf(d->err, d->errlen, "%s %s/%s: %s: %s", d->kind, d->ns, d->name, path, msg);
        else
                snprintf(d->err, d->errlen, "%s %s: %s: %s", d->kind, d->name, path, msg);
        return KB_EBADINPUT;
}

void kb__api_path(char *buf, size_t n, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, n, fmt, ap);
        va_end(ap);
}

static int want_type(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                     enum kb_value_type t, const char *what)
{
        if (!kb__api_set(v) || v->type == t)
                return 0;
        return kb__api_fail(d, path, "must be %s, got %s", what, kb_value_type_name(v->type));
}

int kb__api_object(struct kb__api_dec *d, const struct kb_value *v, const char *path)
{
        return want_type(d, v, path, KB_VOBJECT, "an object");
}

int kb__api_list(struct kb__api_dec *d, const struct kb_value *v, const char *path)
{
        return want_type(d, v, path, KB_VARRAY, "a list");
}

int kb__api_list_of(struct kb__api_dec *d, const struct kb_value *list, const char *path,
                    size_t elsize, void **out, size_t *n, kb__api_elem_fn fn, void *ctx)
{
        int rc;
        if ((rc = kb__api_list(d, list, path)))
                return rc;
        if (!kb__api_set(list) || !list->arr.n)
                return 0;
        /* Sized and counted up front: a failure half-way leaves zeroed
         * elements for the owner's free to pass over. */
        char *v = kb_xcalloc(list->arr.n, elsize);
        *out = v;
        *n = list->arr.n;
        for (size_t i = 0; i < list->arr.n; i++) {
                char p[KB__API_PATH];
                kb__api_path(p, sizeof(p), "%s[%zu]", path, i);
                if ((rc = fn(d, list->arr.v[i], p, v + i * elsize, ctx)))
                        return rc;
        }
        return 0;
}

int kb__api_str(struct kb__api_dec *d, const struct kb_value *v, const char *path, char **out)
{
        if (!kb__api_set(v))
                return 0;
        const char *s = kb_value_text(v);
        if (!s)
                return kb__api_fail(d, path, "must be a string, got %s",
                                    kb_value_type_name(v->type));
        free(*out);
        *out = kb_xstrdup(s);
        return 0;
}

int kb__api_int32(struct kb__api_dec *d, const struct kb_value *v, const char *path, int32_t min,
                  int32_t max, int32_t *out)
{
        int64_t x;
        int rc;

        if (!kb__api_set(v))
                return 0;
        rc = kb_value_int(v, &x);
        if (rc == KB_EOVERFLOW)
                return kb__api_fail(d, path, "%s \"%s\"", kb_strerror(rc), kb_value_text(v));
        if (rc) {
                const char *t = kb_value_text(v);
                if (t)
                        return kb__api_fail(d, path, "must be an integer, got \"%s\"", t);
                return kb__api_fail(d, path, "must be an integer, got %s",
                                    kb_value_type_name(v->type));
        }
        if (x < min || x > max) {
                if (x < INT32_MIN || x > INT32_MAX)
                        return kb__api_fail(d, path, "must be a 32-bit integer, got %" PRId64, x);
                if (max == INT32_MAX)
                        return kb__api_fail(d, path, "must be >= %" PRId32 ", got %" PRId64, min,
                                            x);
                return kb__api_fail(d, path,
                                    "must be between %" PRId32 " and %" PRId32 ", got %" PRId64,
                                    min, max, x);
        }
        *out = (int32_t)x;
        return 0;
}

int kb__api_bool(struct kb__api_dec *d, const struct kb_value *v, const char *path, bool *out)
{
        if (!kb__api_set(v))
                return 0;
        if (v->type != KB_VBOOL)
                return kb__api_fail(d, path, "must be a boolean, got %s",
                                    kb_value_type_name(v->type));
        *out = v->b;
        return 0;
}

int kb__api_time(struct kb__api_dec *d, const struct kb_value *v, const char *path, double *out)
{
        if (!kb__api_set(v))
                return 0;
        const char *s = kb_value_str(v);
        if (!s)
                return kb__api_fail(d, path, "must be an RFC 3339 time string, got %s",
                                    kb_value_type_name(v->type));
        if (kb_parse_time(s, out))
                return kb__api_fail(d, path, "malformed time \"%s\" (want RFC 3339)", s);
        return 0;
}

void kb__api_kvs_free(struct kb_kv *kv, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(kv[i].key);
                free(kv[i].value);
        }
        free(kv);
}

int kb__api_kvs(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                struct kb_kv **out, size_t *n)
{
        int rc;

        if (!kb__api_set(v))
                return 0;
        if ((rc = kb__api_object(d, v, path)))
                return rc;
        if (!v->obj.n)
                return 0;
        /* The array is sized and counted up front so that a failure half-way
         * leaves only NULL slots for the object's free to pass over. */
        *out = kb_xcalloc(v->obj.n, sizeof(**out));
        *n = v->obj.n;
        for (size_t i = 0; i < v->obj.n; i++) {
                const struct kb_member *m = &v->obj.m[i];
                struct kb_kv *kv = &(*out)[i];
                kv->key = kb_xstrdup(m->key);
                if (!kb__api_set(m->val)) {
                        /* A null value decodes to Go's zero value, "". */
                        kv->value = kb_xstrdup("");
                        continue;
                }
                char p[KB__API_PATH];
                kb__api_path(p, sizeof(p), "%s.%s", path, m->key);
                if ((rc = kb__api_str(d, m->val, p, &kv->value)))
                        return rc;
        }
        return 0;
}

int kb__api_res_add(struct kb_res *out, const struct kb_res *add)
{
        struct kb_res sum;
        for (int i = 0; i < KB_RES_MAX; i++)
                if (__builtin_add_overflow(out->q[i], add->q[i], &sum.q[i]))
                        return KB_EOVERFLOW;
        *out = sum;
        return 0;
}

int kb__api_res(struct kb__api_dec *d, const struct kb_value *list, const char *path,
                struct kb_res *out, uint32_t *present)
{
        struct kb_res add = {{0}};
        uint32_t mask = 0;
        int rc;

        if (!kb__api_set(list))
                return 0;
        if ((rc = kb__api_object(d, list, path)))
                return rc;
        for (size_t i = 0; i < list->obj.n; i++) {
                const struct kb_member *m = &list->obj.m[i];
                char p[KB__API_PATH];
                int64_t q;

                kb__api_path(p, sizeof(p), "%s.%s", path, m->key);
                if (!m->key[0])
                        return kb__api_fail(d, path, "empty resource name");
                /* The type is checked before the name is interned, so that
                 * junk does not take up a slot of the process-wide table. */
                const char *text = kb_value_text(m->val);
                if (!text)
                        return kb__api_fail(d, p, "must be a quantity, got %s",
                                            kb_value_type_name(m->val->type));
                int idx = kb_res_intern(m->key);
                if (idx < 0 && d->skip_full_res) {
                        KB_V(2, "%s %s: %s: ignored: %s", d->kind, d->name, p, kb_strerror(idx));
                        continue;
                }
                if (idx < 0)
                        return kb__api_fail(d, p, "%s (kbatch keeps at most %d)", kb_strerror(idx),
                                            KB_RES_MAX);
                rc = kb_quantity_parse(text, kb_res_is_milli(idx), &q);
                if (rc)
                        return kb__api_fail(d, p, "%s \"%s\"", kb_strerror(rc), text);
                /* The API server rejects negative requests, limits and
                 * capacities (ValidateResourceQuantityValue). */
                if (q < 0)
                        return kb__api_fail(d, p, "must not be negative, got \"%s\"", text);
                /* A repeated key in hand-written YAML adds up rather than
                 * wraps. */
                if (__builtin_add_overflow(add.q[idx], q, &add.q[idx]))
                        return kb__api_fail(d, p, "%s", kb_strerror(KB_EOVERFLOW));
                mask |= (uint32_t)1 << idx;
        }
        if (kb__api_res_add(out, &add))
                return kb__api_fail(d, path, "%s", kb_strerror(KB_EOVERFLOW));
        if (present)
                *present |= mask;
        return 0;
}

int kb_res_decode(const struct kb_value *list, const char *what, struct kb_res *out, char *err,
                  size_t errlen)
{
        struct kb__api_dec d;
        kb__api_dec_init(&d, NULL, err, errlen);
        return kb__api_res(&d, list, what, out, NULL);
}

/* ---- metadata --------------------------------------------------------- */

int kb__api_doc(struct kb__api_dec *d, const struct kb_value *doc)
{
        if (kb_value_is(doc, KB_VOBJECT))
                return 0;
        return kb__api_fail(d, "document", "must be an object, got %s",
                            kb_value_type_name(doc ? doc->type : KB_VNULL));
}

int kb__api_meta(struct kb__api_dec *d, const struct kb_value *doc, bool namespaced,
                 struct kb_meta *m)
{
        const struct kb_value *md = kb_value_get(doc, "metadata");
        int rc;

        if ((rc = kb__api_object(d, md, "metadata")))
                return rc;
        /* The API server requires a name (generateName is resolved before an
         * object is stored, so a stored object always has one). */
        if ((rc = kb__api_str(d, kb_value_get(md, "name"), "metadata.name", &m->name)))
                return rc;
        if (!m->name || !m->name[0])
                return kb__api_fail(d, "metadata.name", "required");
        if (namespaced) {
                if ((rc = kb__api_str(d, kb_value_get(md, "namespace"), "metadata.namespace",
                                      &m->namespace)))
                        return rc;
                /* kubectl sends manifests without a namespace to the
                 * context's namespace, "default" unless configured. */
                if (!m->namespace || !m->namespace[0]) {
                        free(m->namespace);
                        m->namespace = kb_xstrdup("default");
                }
        }
        /* A cluster-scoped object keeps no namespace: the API server clears
         * it on create (rest.BeforeCreate), so one in a manifest is ignored. */
        d->ns = m->namespace;
        d->name = m->name;

        if ((rc = kb__api_str(d, kb_value_get(md, "uid"), "metadata.uid", &m->uid)))
                return rc;
        if (!m->uid || !m->uid[0]) {
                /* Hand-written manifests have no uid.  The cache keys objects
                 * by uid, so synthesize one that is stable across reads and
                 * cannot collide between kinds: "pod:team-a/train-0". */
                free(m->uid);
                m->uid = namespaced ? kb_xasprintf("%s:%s/%s", d->kind, m->namespace, m->name)
                                    : kb_xasprintf("%s:%s", d->kind, m->name);
        }
        if ((rc = kb__api_str(d, kb_value_get(md, "resourceVersion"), "metadata.resourceVersion",
                              &m->resource_version)))
                return rc;
        if ((rc = kb__api_kvs(d, kb_value_get(md, "labels"), "metadata.labels", &m->labels,
                              &m->nlabels)))
                return rc;
        if ((rc = kb__api_kvs(d, kb_value_get(md, "annotations"), "metadata.annotations",
                              &m->annotations, &m->nannotations)))
                return rc;
        if ((rc = kb__api_time(d, kb_value_get(md, "creationTimestamp"),
                               "metadata.creationTimestamp", &m->creation)))
                return rc;
        if ((rc = kb__api_time(d, kb_value_get(md, "deletionTimestamp"),
                               "metadata.deletionTimestamp", &m->deletion)))
                return rc;
        return 0;
}

void kb_meta_release(struct kb_meta *m)
{
        if (!m)
                return;
        free(m->name);
        free(m->namespace);
        free(m->uid);
        free(m->resource_version);
        kb__api_kvs_free(m->labels, m->nlabels);
        kb__api_kvs_free(m->annotations, m->nannotations);
        memset(m, 0, sizeof(*m));
}

static const char *kv_find(const struct kb_kv *kv, size_t n, const char *key)
{
        /* Asked per pod per session (a task's role, preemptable): most
         * keys differ from the one asked in their first byte. */
        for (size_t i = 0; i < n; i++)
                if (kv[i].key[0] == key[0] && strcmp(kv[i].key, key) == 0)
                        return kv[i].value;
        return NULL;
}

const char *kb_meta_label(const struct kb_meta *m, const char *key)
{
        return kv_find(m->labels, m->nlabels, key);
}

const char *kb_meta_annotation(const struct kb_meta *m, const char *key)
{
        return kv_find(m->annotations, m->nannotations, key);
}
