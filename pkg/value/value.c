/* Building, reading and comparing trees. */
#include "value/value.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "value/value-int.h"

#ifdef KB_TESTING
_Thread_local unsigned long long kb__value_key_compares;
#endif

static void reindex(struct kb_value *obj);

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

bool kb_json_double_text(double d, char buf[static 64])
{
        /* 17 significant digits round-trip any double; JSON has no NaN. */
        if (!isfinite(d))
                return false;
        snprintf(buf, 64, "%.17g", d);
        /* Prefer the shortest text that reads back the same. */
        for (int prec = 1; prec < 17; prec++) {
                char shorter[64];
                snprintf(shorter, sizeof(shorter), "%.*g", prec, d);
                if (strtod(shorter, NULL) == d) {
                        memcpy(buf, shorter, sizeof(shorter));
                        break;
                }
        }
        return true;
}

struct kb_value *kb_value_new_double(double d)
{
        char buf[64];
        if (!kb_json_double_text(d, buf))
                return kb_value_new(KB_VNULL);
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
                free(v->obj.idx);
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
                if (!v->obj.n)
                        break;
                c->obj.m = kb_xmalloc(v->obj.n * sizeof(*c->obj.m));
                c->obj.cap = v->obj.n;
                for (size_t i = 0; i < v->obj.n; i++) {
                        c->obj.m[i].key = kb_xstrdup(v->obj.m[i].key);
                        c->obj.m[i].val = kb_value_clone(v->obj.m[i].val);
                }
                c->obj.n = v->obj.n;
                reindex(c);
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

/* ---- the key index (value-int.h) ---------------------------------------- */

size_t kb__value_index_slots(size_t n)
{
        size_t slots = 2 * KB_VALUE_INDEX_MIN;
        while (slots < 2 * n)
                slots *= 2;
        return slots;
}

/*
 * Keys are hashed with SipHash-1-3 under a key drawn at random once per
 * process (kb_siphash): the keys of an object come from whoever sent it,
 * and with a hash anyone can compute (FNV, say) they could all be chosen
 * to fall in one run of slots, making each lookup a scan again (hash
 * flooding).  The index stays this module's own rather than a kb_map: it
 * is 4 bytes a slot beside members that already hold their keys, and
 * positions shift when a member is removed, where a kb_map slot is 32
 * bytes and would copy what the members hold.
 */
static uint64_t key_hash(const char *key)
{
        return kb_siphash(key, strlen(key));
}

void kb__value_index_add(uint32_t *idx, size_t slots, const struct kb_member *m, size_t pos)
{
        size_t i = key_hash(m[pos].key) & (slots - 1);
        while (idx[i])
                i = (i + 1) & (slots - 1);
        idx[i] = (uint32_t)pos + 1;
}

void kb__value_index_build(uint32_t *idx, size_t slots, const struct kb_member *m, size_t n)
{
        memset(idx, 0, slots * sizeof(*idx));
        for (size_t pos = 0; pos < n; pos++)
                kb__value_index_add(idx, slots, m, pos);
}

ptrdiff_t kb__value_index_find(const uint32_t *idx, size_t slots, const struct kb_member *m,
                               const char *key)
{
        for (size_t i = key_hash(key) & (slots - 1); idx[i]; i = (i + 1) & (slots - 1)) {
                KB__KEY_COMPARED();
                if (strcmp(m[idx[i] - 1].key, key) == 0)
                        return (ptrdiff_t)idx[i] - 1;
        }
        return -1;
}

/*
 * Takes member pos (of n) out of the index before the members above it
 * move down one: its slot is emptied and the run after it shifted back
 * (linear probing's deletion), then the positions above pos drop by one,
 * a pass over the slots unless pos was the last member.
 */
static void unindex(uint32_t *idx, size_t slots, const struct kb_member *m, size_t pos, size_t n)
{
        size_t mask = slots - 1, hole = key_hash(m[pos].key) & mask;
        while (idx[hole] != pos + 1)
                hole = (hole + 1) & mask;
        idx[hole] = 0;
        for (size_t j = (hole + 1) & mask; idx[j]; j = (j + 1) & mask) {
                size_t home = key_hash(m[idx[j] - 1].key) & mask;
                /* Move the entry at j into the hole unless its home lies
                 * cyclically in (hole, j]. */
                bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
                if (!stays) {
                        idx[hole] = idx[j];
                        idx[j] = 0;
                        hole = j;
                }
        }
        if (pos + 1 == n)
                return;
        for (size_t s = 0; s < slots; s++)
                if (idx[s] > pos + 1)
                        idx[s]--;
}

/* Makes obj's index fit its members: none below KB_VALUE_INDEX_MIN. */
static void reindex(struct kb_value *obj)
{
        size_t n = obj->obj.n;
        if (n < KB_VALUE_INDEX_MIN) {
                free(obj->obj.idx);
                obj->obj.idx = NULL;
                return;
        }
        size_t slots = kb__value_index_slots(n);
        obj->obj.idx = kb_xrealloc(obj->obj.idx, slots * sizeof(*obj->obj.idx));
        kb__value_index_build(obj->obj.idx, slots, obj->obj.m, n);
}

static struct kb_member *find_member(const struct kb_value *obj, const char *key)
{
        if (!obj || obj->type != KB_VOBJECT)
                return NULL;
        if (obj->obj.idx) {
                ptrdiff_t i = kb__value_index_find(obj->obj.idx, kb__value_index_slots(obj->obj.n),
                                                   obj->obj.m, key);
                return i < 0 ? NULL : &obj->obj.m[i];
        }
        for (size_t i = 0; i < obj->obj.n; i++) {
                KB__KEY_COMPARED();
                if (strcmp(obj->obj.m[i].key, key) == 0)
                        return &obj->obj.m[i];
        }
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
        size_t n = obj->obj.n;
        if (n == UINT32_MAX - 1)
                kb_die("object with more than %u members", (unsigned)n);
        if (n == obj->obj.cap) {
                size_t cap = n ? 2 * (size_t)n : 8;
                if (cap > UINT32_MAX - 1)
                        cap = UINT32_MAX - 1;
                obj->obj.m = kb_xrealloc(obj->obj.m, cap * sizeof(*obj->obj.m));
                obj->obj.cap = (uint32_t)cap;
        }
        obj->obj.m[n] = (struct kb_member){kb_xstrdup(key), val};
        obj->obj.n++;
        /* The index grows by doubling, as the members do: O(1) amortised. */
        if (obj->obj.idx && kb__value_index_slots(n + 1) == kb__value_index_slots(n))
                kb__value_index_add(obj->obj.idx, kb__value_index_slots(n + 1), obj->obj.m, n);
        else if (n + 1 >= KB_VALUE_INDEX_MIN)
                reindex(obj);
}

struct kb_value *kb_value_take(struct kb_value *obj, const char *key)
{
        struct kb_member *m = find_member(obj, key);
        if (!m)
                return NULL;
        struct kb_value *v = m->val;
        char *mkey = m->key;
        size_t i = (size_t)(m - obj->obj.m), n = obj->obj.n;
        bool keep = obj->obj.idx && n - 1 >= KB_VALUE_INDEX_MIN &&
                    kb__value_index_slots(n - 1) == kb__value_index_slots(n);
        if (keep)
                unindex(obj->obj.idx, kb__value_index_slots(n), obj->obj.m, i, n);
        memmove(&obj->obj.m[i], &obj->obj.m[i + 1], (n - i - 1) * sizeof(*m));
        obj->obj.n--;
        if (obj->obj.idx && !keep)
                reindex(obj);
        free(mkey);
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

char *kb__value_nul_message(char *path, const char *key, size_t keylen)
{
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_adds(&b, path[0] ? path : "(the document)");
        if (!key) {
                kb_buf_adds(&b, ": a NUL character (\\u0000) in a string is not accepted");
        } else {
                /* The key as JSON would write it, cut at 64 bytes. */
                kb_buf_adds(&b, ": a NUL character (\\u0000) in the key \"");
                for (size_t i = 0; i < keylen && i < 64; i++) {
                        unsigned char c = (unsigned char)key[i];
                        if (c < 0x20 || c == '"' || c == '\\')
                                kb_buf_printf(&b, "\\u%04x", c);
                        else
                                kb_buf_addc(&b, (char)c);
                }
                kb_buf_adds(&b, keylen > 64 ? "...\" is not accepted" : "\" is not accepted");
        }
        free(path);
        char *s = kb_xstrdup(b.data);
        kb_buf_release(&b);
        return s;
}

void kb_value_dups_release(struct kb_value_dups *d)
{
        for (size_t i = 0; i < d->n; i++)
                free(d->v[i]);
        free(d->v);
        memset(d, 0, sizeof(*d));
}
