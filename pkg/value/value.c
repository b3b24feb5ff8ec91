/* Building, reading and comparing trees. */
#include "value/value.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

struct kb_value *kb_value_new(enum kb_value_type type)
{
        struct kb_value *v = kb_xcalloc(1, sizeof(*v));
        v->type = type;
        return v;
}

struct kb_value *kb_value_new_bool(bool b)
{
        struct kb_value *v = kb_value_new(KB_VBOOL);
        v->b = b;
        return v;
}

struct kb_value *kb_value_new_stringn(const char *s, size_t n)
{
        struct kb_value *v = kb_value_new(KB_VSTRING);
        v->s = kb_xstrndup(s, n);
        return v;
}

struct kb_value *kb_value_new_string(const char *s)
{
        return kb_value_new_stringn(s, strlen(s));
}

struct kb_value *kb_value_new_number(const char *text)
{
        struct kb_value *v = kb_value_new(KB_VNUMBER);
        v->s = kb_xstrdup(text);
        return v;
}

struct kb_value *kb_value_new_int(int64_t i)
{
        char buf[32];
        snprintf(buf, sizeof(buf), "%" PRId64, i);
        return kb_value_new_number(buf);
}

struct kb_value *kb_value_new_double(double d)
{
        char buf[64];
        /* 17 significant digits round-trip any double; JSON has no NaN. */
        if (!isfinite(d))
                return kb_value_new(KB_VNULL);
        snprintf(buf, sizeof(buf), "%.17g", d);
        /* Prefer the shortest text that reads back the same. */
        for (int prec = 1; prec < 17; prec++) {
                char shorter[64];
                snprintf(shorter, sizeof(shorter), "%.*g", prec, d);
                if (strtod(shorter, NULL) == d) {
                        memcpy(buf, shorter, sizeof(shorter));
                        break;
                }
        }
        return kb_value_new_number(buf);
}

void kb_value_free(struct kb_value *v)
{
        if (!v)
                return;
        switch (v->type) {
        case KB_VSTRING:
        case KB_VNUMBER:
                free(v->s);
                break;
        case KB_VARRAY:
                for (size_t i = 0; i < v->arr.n; i++)
                        kb_value_free(v->arr.v[i]);
                free(v->arr.v);
                break;
        case KB_VOBJECT:
                for (size_t i = 0; i < v->obj.n; i++) {
                        free(v->obj.m[i].key);
                        kb_value_free(v->obj.m[i].val);
                }
                free(v->obj.m);
                break;
        default:
                break;
        }
        free(v);
}

void kb_value_free_docs(struct kb_value **docs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                kb_value_free(docs[i]);
        free(docs);
}

struct kb_value *kb_value_clone(const struct kb_value *v)
{
        if (!v)
                return NULL;
        struct kb_value *c = kb_value_new(v->type);
        c->line = v->line;
        switch (v->type) {
        case KB_VBOOL:
                c->b = v->b;
                break;
        case KB_VSTRING:
        case KB_VNUMBER:
                c->s = kb_xstrdup(v->s);
                break;
        case KB_VARRAY:
                for (size_t i = 0; i < v->arr.n; i++)
                        kb_value_append(c, kb_value_clone(v->arr.v[i]));
                break;
        case KB_VOBJECT:
                kb_grow((void **)&c->obj.m, &c->obj.cap, v->obj.n, sizeof(*c->obj.m));
                for (size_t i = 0; i < v->obj.n; i++) {
                        c->obj.m[i].key = kb_xstrdup(v->obj.m[i].key);
                        c->obj.m[i].val = kb_value_clone(v->obj.m[i].val);
                }
                c->obj.n = v->obj.n;
                break;
        default:
                break;
        }
        return c;
}

bool kb_value_equal(const struct kb_value *a, const struct kb_value *b)
{
        if (!a || !b)
                return a == b;
        if (a->type != b->type) {
                return false;
        }
        switch (a->type) {
        case KB_VNULL:
                return true;
        case KB_VBOOL:
                return a->b == b->b;
        case KB_VNUMBER:
                return strcmp(a->s, b->s) == 0 || strtod(a->s, NULL) == strtod(b->s, NULL);
        case KB_VSTRING:
                return strcmp(a->s, b->s) == 0;
        case KB_VARRAY:
                if (a->arr.n != b->arr.n)
                        return false;
                for (size_t i = 0; i < a->arr.n; i++)
                        if (!kb_value_equal(a->arr.v[i], b->arr.v[i]))
                                return false;
                return true;
        case KB_VOBJECT:
                if (a->obj.n != b->obj.n)
                        return false;
                for (size_t i = 0; i < a->obj.n; i++) {
                        const struct kb_value *o = kb_value_get(b, a->obj.m[i].key);
                        if (!o || !kb_value_equal(a->obj.m[i].val, o))
                                return false;
                }
                return true;
        }
        return false;
}

void kb_value_append(struct kb_value *arr, struct kb_value *val)
{
        KB_PUSH(arr->arr.v, arr->arr.n, arr->arr.cap, val);
}

static struct kb_member *find_member(const struct kb_value *obj, const char *key)
{
        if (!obj || obj->type != KB_VOBJECT)
                return NULL;
        for (size_t i = 0; i < obj->obj.n; i++)
                if (strcmp(obj->obj.m[i].key, key) == 0)
                        return &obj->obj.m[i];
        return NULL;
}

void kb_value_set(struct kb_value *obj, const char *key, struct kb_value *val)
{
        struct kb_member *m = find_member(obj, key);
        if (m) {
                kb_value_free(m->val);
                m->val = val;
                return;
        }
        struct kb_member nm = {kb_xstrdup(key), val};
        KB_PUSH(obj->obj.m, obj->obj.n, obj->obj.cap, nm);
}

struct kb_value *kb_value_take(struct kb_value *obj, const char *key)
{
        struct kb_member *m = find_member(obj, key);
        if (!m)
                return NULL;
        struct kb_value *v = m->val;
        size_t i = (size_t)(m - obj->obj.m);
        free(m->key);
        memmove(&obj->obj.m[i], &obj->obj.m[i + 1], (obj->obj.n - i - 1) * sizeof(*m));
        obj->obj.n--;
        return v;
}

bool kb_value_del(struct kb_value *obj, const char *key)
{
        struct kb_value *v = kb_value_take(obj, key);
        kb_value_free(v);
        return v != NULL;
}

struct kb_value *kb_value_ensure_object(struct kb_value *obj, const char *key)
{
        struct kb_value *v = kb_value_get(obj, key);
        if (v && v->type == KB_VOBJECT)
                return v;
        v = kb_value_new(KB_VOBJECT);
        kb_value_set(obj, key, v);
        return v;
}

struct kb_value *kb_value_get(const struct kb_value *obj, const char *key)
{
        struct kb_member *m = find_member(obj, key);
        return m ? m->val : NULL;
}

struct kb_value *kb_value_dig_keys(const struct kb_value *v, ...)
{
        va_list ap;
        const char *key;
        va_start(ap, v);
        while (v && (key = va_arg(ap, const char *)) != NULL)
                v = kb_value_get(v, key);
        va_end(ap);
        return (struct kb_value *)v;
}

const char *kb_value_str(const struct kb_value *v)
{
        return v && v->type == KB_VSTRING ? v->s : NULL;
}

const char *kb_value_text(const struct kb_value *v)
{
        return v && (v->type == KB_VSTRING || v->type == KB_VNUMBER) ? v->s : NULL;
}

int kb_value_int(const struct kb_value *v, int64_t *out)
{
        const char *t = kb_value_text(v);
        char *end;
        if (!t || !*t)
                return KB_EBADINPUT;
        errno = 0;
        long long x = strtoll(t, &end, 10);
        if (errno == ERANGE)
                return KB_EOVERFLOW;
        if (*end) {
                /* JSON writers may print 3 as 3.0; accept whole values. */
                double d = strtod(t, &end);
                if (*end || d != d)
                        return KB_EBADINPUT;
                if (d >= 9.2233720368547758e18 || d < -9.2233720368547758e18)
                        return KB_EOVERFLOW;
                if (d != (double)(long long)d)
                        return KB_EBADINPUT;
                x = (long long)d;
        }
        *out = x;
        return 0;
}

bool kb_value_bool(const struct kb_value *v, bool dflt)
{
        return v && v->type == KB_VBOOL ? v->b : dflt;
}

bool kb_value_is(const struct kb_value *v, enum kb_value_type t)
{
        return v && v->type == t;
}

const char *kb_value_type_name(enum kb_value_type t)
{
        static const char *const names[] = {"null",   "boolean", "number",
                                            "string", "array",   "object"};
        return (size_t)t < KB_ARRAY_SIZE(names) ? names[t] : "?";
}

bool kb_json_is_number(const char *p)
{
        if (*p == '-')
                p++;
        if (*p == '0') {
                p++;
        } else if (*p >= '1' && *p <= '9') {
                while (*p >= '0' && *p <= '9')
                        p++;
        } else {
                return false;
        }
        if (*p == '.') {
                p++;
                if (*p < '0' || *p > '9')
                        return false;
                while (*p >= '0' && *p <= '9')
                        p++;
        }
        if (*p == 'e' || *p == 'E') {
                p++;
                if (*p == '+' || *p == '-')
                        p++;
                if (*p < '0' || *p > '9')
                        return false;
                while (*p >= '0' && *p <= '9')
                        p++;
        }
        return *p == '\0';
}
