/*
 * Frozen trees: a read-only copy of a document in one allocation, as
 * kbatch-apiserver stores its objects (docs/apiserver.md, "Memory").
 *
 * A tree built by the parsers or the setters is a node, a string and a
 * member array per value, each its own malloc (16 bytes of glibc's own a
 * piece), arrays grown by doubling from 8 slots.  The frozen copy lays the
 * same struct kb_value nodes out in one block, root first, then the member
 * and element arrays exactly sized, the key indexes of large objects, and
 * the text.  Within the block each distinct text is written once (keys such
 * as "f:metadata" or "lastTransitionTime", and equal values such as a
 * timestamp set four times), and equal string and number leaves are one
 * node; null, true, false, {} and [] leaves point at shared constants.  So
 * the copy is a DAG: it must never be changed nor given to kb_value_free.
 *
 * Two passes: the first walks the tree counting nodes and slots and
 * entering each text in a table of distinct texts (SipHash, so no sender
 * can make the table degrade); the second lays out the block.  Both walk
 * the tree in the same order, so the node each distinct leaf gets in the
 * second pass is the one the first counted.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "value/value-int.h"
#include "value/value.h"

/* The shared leaves; never written (the tree is read-only). */
static struct kb_value frozen_null = {.type = KB_VNULL};
static struct kb_value frozen_true = {.type = KB_VBOOL, .b = true};
static struct kb_value frozen_false = {.type = KB_VBOOL, .b = false};
static struct kb_value frozen_object = {.type = KB_VOBJECT};
static struct kb_value frozen_array = {.type = KB_VARRAY};

struct text {
        const char *s;
        size_t len;
        uint64_t hash;
        char *copy;                       /* in the block (second pass) */
        struct kb_value *str, *num;       /* the leaf nodes (second pass) */
        bool want_str, want_num;          /* counted (first pass) */
};

struct freezer {
        struct text *t;
        size_t n, cap, slots; /* slots a power of two, 0 empty (t[i-1] otherwise) */
        uint32_t *tab;
        size_t nodes, members, elems, idx, text;
        /* the second pass: where the next of each goes */
        struct kb_value *node;
        struct kb_member *mem;
        struct kb_value **elem;
        uint32_t *ix;
        char *chars;
};

static struct kb_value *shared_leaf(const struct kb_value *v)
{
        switch (v->type) {
        case KB_VNULL:
                return &frozen_null;
        case KB_VBOOL:
                return v->b ? &frozen_true : &frozen_false;
        case KB_VOBJECT:
                return v->obj.n ? NULL : &frozen_object;
        case KB_VARRAY:
                return v->arr.n ? NULL : &frozen_array;
        default:
                return NULL;
        }
}

static void grow_table(struct freezer *f)
{
        size_t slots = f->slots ? 2 * f->slots : 64;
        uint32_t *tab = kb_xcalloc(slots, sizeof(*tab));
        for (size_t i = 0; i < f->n; i++) {
                size_t j = f->t[i].hash & (slots - 1);
                while (tab[j])
                        j = (j + 1) & (slots - 1);
                tab[j] = (uint32_t)i + 1;
        }
        free(f->tab);
        f->tab = tab;
        f->slots = slots;
}

/* The entry of text s, entered (and its bytes counted) when new. */
static struct text *text_of(struct freezer *f, const char *s)
{
        size_t len = strlen(s);
        uint64_t h = kb_siphash(s, len);
        if (2 * (f->n + 1) > f->slots)
                grow_table(f);
        size_t j = h & (f->slots - 1);
        for (; f->tab[j]; j = (j + 1) & (f->slots - 1)) {
                struct text *t = &f->t[f->tab[j] - 1];
                if (t->hash == h && t->len == len && !memcmp(t->s, s, len))
                        return t;
        }
        if (f->n == f->cap)
                kb_grow((void **)&f->t, &f->cap, f->n + 1, sizeof(*f->t));
        f->tab[j] = (uint32_t)f->n + 1;
        struct text *t = &f->t[f->n++];
        *t = (struct text){.s = s, .len = len, .hash = h};
        f->text += len + 1;
        return t;
}

static void count(struct freezer *f, const struct kb_value *v)
{
        if (shared_leaf(v))
                return;
        switch (v->type) {
        case KB_VSTRING:
        case KB_VNUMBER: {
                struct text *t = text_of(f, v->s);
                bool *want = v->type == KB_VSTRING ? &t->want_str : &t->want_num;
                if (!*want)
                        f->nodes++;
                *want = true;
                return;
        }
        case KB_VARRAY:
                f->nodes++;
                f->elems += v->arr.n;
                for (size_t i = 0; i < v->arr.n; i++)
                        count(f, v->arr.v[i]);
                return;
        case KB_VOBJECT:
                f->nodes++;
                f->members += v->obj.n;
                if (v->obj.n >= KB_VALUE_INDEX_MIN)
                        f->idx += kb__value_index_slots(v->obj.n);
                for (size_t i = 0; i < v->obj.n; i++) {
                        text_of(f, v->obj.m[i].key);
                        count(f, v->obj.m[i].val);
                }
                return;
        default:
                return;
        }
}

static char *copy_text(struct freezer *f, struct text *t)
{
        if (!t->copy) {
                t->copy = f->chars;
                memcpy(f->chars, t->s, t->len + 1);
                f->chars += t->len + 1;
        }
        return t->copy;
}

static struct kb_value *lay(struct freezer *f, const struct kb_value *v, bool root)
{
        struct kb_value *shared = root ? NULL : shared_leaf(v);
        if (shared)
                return shared;
        if (v->type == KB_VSTRING || v->type == KB_VNUMBER) {
                struct text *t = text_of(f, v->s);
                struct kb_value **leaf = v->type == KB_VSTRING ? &t->str : &t->num;
                if (*leaf && !root)
                        return *leaf;
                struct kb_value *c = f->node++;
                *c = (struct kb_value){.type = v->type, .line = v->line, .s = copy_text(f, t)};
                if (!root)
                        *leaf = c;
                return c;
        }
        struct kb_value *c = f->node++;
        *c = (struct kb_value){.type = v->type, .line = v->line};
        if (v->type == KB_VBOOL) {
                c->b = v->b;
        } else if (v->type == KB_VARRAY && v->arr.n) {
                c->arr.v = f->elem;
                c->arr.n = c->arr.cap = v->arr.n;
                f->elem += v->arr.n;
                for (size_t i = 0; i < v->arr.n; i++)
                        c->arr.v[i] = lay(f, v->arr.v[i], false);
        } else if (v->type == KB_VOBJECT && v->obj.n) {
                c->obj.m = f->mem;
                c->obj.n = c->obj.cap = v->obj.n;
                f->mem += v->obj.n;
                for (size_t i = 0; i < v->obj.n; i++) {
                        c->obj.m[i].key = copy_text(f, text_of(f, v->obj.m[i].key));
                        c->obj.m[i].val = lay(f, v->obj.m[i].val, false);
                }
                if (v->obj.n >= KB_VALUE_INDEX_MIN) {
                        size_t slots = kb__value_index_slots(v->obj.n);
                        c->obj.idx = f->ix;
                        f->ix += slots;
                        kb__value_index_build(c->obj.idx, slots, c->obj.m, c->obj.n);
                }
        }
        return c;
}

struct kb_value *kb_value_freeze(const struct kb_value *v)
{
        struct freezer f = {0};
        count(&f, v);
        /* The root is always a node of the block (so that freeing the block
         * frees the tree), even a leaf that count() left to a constant. */
        if (shared_leaf(v))
                f.nodes++;
        size_t bytes = f.nodes * sizeof(struct kb_value) + f.members * sizeof(struct kb_member) +
                       f.elems * sizeof(struct kb_value *) + f.idx * sizeof(uint32_t) + f.text;
        char *block = kb_xmalloc(bytes);
        f.node = (struct kb_value *)block;
        f.mem = (struct kb_member *)(f.node + f.nodes);
        f.elem = (struct kb_value **)(f.mem + f.members);
        f.ix = (uint32_t *)(f.elem + f.elems);
        f.chars = (char *)(f.ix + f.idx);
        lay(&f, v, true);
        free(f.t);
        free(f.tab);
        return (struct kb_value *)block;
}

void kb_value_free_frozen(struct kb_value *v)
{
        free(v);
}
