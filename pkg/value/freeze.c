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
 * With a table of shares (kb_value_shares_new), the members whose key the
 * table's rule names (kbatch-apiserver: managedFields' fieldsV1, a pod's
 * containers, labels, ...: what every pod of a template repeats) are
 * frozen once per distinct value, store-wide: the document points at the
 * shared copy and holds a count on it, dropped when the document is freed.
 * The table may also name common texts (keys such as "metadata", values
 * such as "v1"): the document points at the table's copy of the text and
 * of its leaf.  The block then starts with the list of shares it holds,
 * its length just before the root:
 *
 *     [share 0] .. [share n-1] [n] [root node] [nodes] [members] [elements]
 *     [key indexes] [text]
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
        char *copy;                     /* in the block (second pass) */
        struct kb_value *str, *num;     /* the leaf nodes (second pass) */
        bool want_str, want_num;        /* counted (first pass) */
        struct kb_value_common *common; /* the table's copy, or NULL */
};

/* A text common to many documents (kb_value_shares_new): the documents
 * point at its text and at its leaves rather than hold their own. */
struct kb_value_common {
        const char *s;
        size_t len;
        uint64_t hash;
        struct kb_value str, num;
};

/* One shared value: frozen on its own (no shares inside), counted by the
 * documents that point at it, in its table's chain of its hash. */
struct kb_value_share {
        struct kb_value *v;
        uint64_t hash;
        size_t refs;
        struct kb_value_shares *tab;
        struct kb_value_share *next;
};

struct kb_value_shares {
        bool (*rule)(const char *key);
        struct kb_value_common *common;
        uint32_t *ctab; /* open addressing over common, 0 empty */
        size_t ncommon, cslots;
        struct kb_value_share **b; /* chains by hash; a power of two of them */
        size_t nb, n;
};

struct freezer {
        struct kb_value_shares *shares;
        struct kb_value_share **held; /* the shares this document points at, in walk order */
        size_t nheld, capheld, next_held;
        struct text *t;
        size_t n, cap, slots; /* slots a power of two, 0 empty (t[i-1] otherwise) */
        uint32_t *tab;
        size_t nodes, members, elems, idx, text;
        /* The entry of each text met by the first pass, in walk order: the
         * second meets the same texts in the same order, so it hashes none. */
        uint32_t *order;
        size_t norder, caporder, next_order;
        struct text scratch; /* a common text, as next_text returns it */
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
static struct text *enter_text(struct freezer *f, const char *s, size_t len)
{
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

/* Mixes b into a (the texts are hashed with SipHash under the process's
 * secret key; mixing their hashes needs no key of its own). */
static uint64_t mix(uint64_t a, uint64_t b)
{
        a ^= b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2);
        a *= 0xff51afd7ed558ccdULL;
        return a ^ (a >> 33);
}

/* A hash of the whole value: its type, texts and order. */
static uint64_t tree_hash(const struct kb_value *v)
{
        uint64_t h = 0x9e3779b97f4a7c15ULL * ((uint64_t)v->type + 1);
        switch (v->type) {
        case KB_VBOOL:
                return h + v->b;
        case KB_VSTRING:
        case KB_VNUMBER:
                return mix(h, kb_siphash(v->s, strlen(v->s)));
        case KB_VARRAY:
                for (size_t i = 0; i < v->arr.n; i++)
                        h = mix(h, tree_hash(v->arr.v[i]));
                return h;
        case KB_VOBJECT:
                for (size_t i = 0; i < v->obj.n; i++) {
                        const char *k = v->obj.m[i].key;
                        h = mix(mix(h, kb_siphash(k, strlen(k))), tree_hash(v->obj.m[i].val));
                }
                return h;
        default:
                return h;
        }
}

/* Exactly the same value: types, texts (a number's literal) and order
 * (kb_value_equal reads 1.0 as 1, and ignores the order of members). */
static bool same(const struct kb_value *a, const struct kb_value *b)
{
        if (a->type != b->type)
                return false;
        switch (a->type) {
        case KB_VBOOL:
                return a->b == b->b;
        case KB_VSTRING:
        case KB_VNUMBER:
                return !strcmp(a->s, b->s);
        case KB_VARRAY:
                if (a->arr.n != b->arr.n)
                        return false;
                for (size_t i = 0; i < a->arr.n; i++)
                        if (!same(a->arr.v[i], b->arr.v[i]))
                                return false;
                return true;
        case KB_VOBJECT:
                if (a->obj.n != b->obj.n)
                        return false;
                for (size_t i = 0; i < a->obj.n; i++)
                        if (strcmp(a->obj.m[i].key, b->obj.m[i].key) ||
                            !same(a->obj.m[i].val, b->obj.m[i].val))
                                return false;
                return true;
        default:
                return true;
        }
}

static void shares_grow(struct kb_value_shares *t)
{
        size_t nb = t->nb ? 2 * t->nb : 256;
        struct kb_value_share **b = kb_xcalloc(nb, sizeof(*b));
        for (size_t i = 0; i < t->nb; i++)
                for (struct kb_value_share *s = t->b[i], *next; s; s = next) {
                        next = s->next;
                        s->next = b[s->hash & (nb - 1)];
                        b[s->hash & (nb - 1)] = s;
                }
        free(t->b);
        t->b = b;
        t->nb = nb;
}

/* The share of v, made (with no count yet) when v is new. */
static struct kb_value_share *share_of(struct kb_value_shares *t, const struct kb_value *v)
{
        uint64_t h = tree_hash(v);
        if (t->nb) {
                for (struct kb_value_share *s = t->b[h & (t->nb - 1)]; s; s = s->next)
                        if (s->hash == h && same(s->v, v))
                                return s;
        }
        if (t->n >= t->nb)
                shares_grow(t);
        struct kb_value_share *s = kb_xmalloc(sizeof(*s));
        *s = (struct kb_value_share){.v = kb_value_freeze(v), .hash = h, .tab = t};
        s->next = t->b[h & (t->nb - 1)];
        t->b[h & (t->nb - 1)] = s;
        t->n++;
        return s;
}

static void share_unref(struct kb_value_share *s)
{
        if (--s->refs)
                return;
        struct kb_value_shares *t = s->tab;
        struct kb_value_share **p = &t->b[s->hash & (t->nb - 1)];
        while (*p != s)
                p = &(*p)->next;
        *p = s->next;
        t->n--;
        kb_value_free_frozen(s->v);
        free(s);
}

/* Whether member m of an object goes to a share. */
static bool shared_member(const struct freezer *f, const struct kb_member *m)
{
        return f->shares && !shared_leaf(m->val) &&
               (m->val->type == KB_VOBJECT || m->val->type == KB_VARRAY) && f->shares->rule(m->key);
}

/* The table's copy of a common text, or NULL.  The table is fixed, at
 * most half full, so no text can make its probes long: FNV will do, and
 * most texts (keys) end here without a SipHash. */
static struct kb_value_common *common_of(const struct kb_value_shares *sh, const char *s,
                                         size_t len)
{
        if (!sh || !sh->cslots)
                return NULL;
        uint64_t h = kb_hash(s, len, KB_HASH_SEED);
        for (size_t c = h & (sh->cslots - 1); sh->ctab[c]; c = (c + 1) & (sh->cslots - 1)) {
                struct kb_value_common *k = &sh->common[sh->ctab[c] - 1];
                if (k->hash == h && k->len == len && !memcmp(k->s, s, len))
                        return k;
        }
        return NULL;
}

/* In the walk order, a common text's position in the table with this bit,
 * else the position of the document's own text. */
#define COMMON_TEXT 0x80000000u

/* The text as the walk meets it: a common one, in the scratch entry. */
static struct text *common_text(struct freezer *f, struct kb_value_common *k)
{
        f->scratch = (struct text){.s = k->s, .len = k->len, .common = k};
        return &f->scratch;
}

/* The first pass's lookup of a text, noted in walk order. */
static struct text *text_of(struct freezer *f, const char *s)
{
        size_t len = strlen(s);
        struct kb_value_common *k = common_of(f->shares, s, len);
        struct text *t = k ? common_text(f, k) : enter_text(f, s, len);
        if (f->norder == f->caporder)
                kb_grow((void **)&f->order, &f->caporder, f->norder + 1, sizeof(*f->order));
        f->order[f->norder++] =
            k ? COMMON_TEXT | (uint32_t)(k - f->shares->common) : (uint32_t)(t - f->t);
        return t;
}

/* The second pass's: the next text the first met. */
static struct text *next_text(struct freezer *f)
{
        uint32_t code = f->order[f->next_order++];
        if (code & COMMON_TEXT)
                return common_text(f, &f->shares->common[code & ~COMMON_TEXT]);
        return &f->t[code];
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
                if (!*want && !t->common)
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
                        if (shared_member(f, &v->obj.m[i])) {
                                struct kb_value_share *sh = share_of(f->shares, v->obj.m[i].val);
                                if (f->nheld == f->capheld)
                                        kb_grow((void **)&f->held, &f->capheld, f->nheld + 1,
                                                sizeof(*f->held));
                                f->held[f->nheld++] = sh;
                                continue;
                        }
                        count(f, v->obj.m[i].val);
                }
                return;
        default:
                return;
        }
}

static const char *copy_text(struct freezer *f, struct text *t)
{
        if (t->common)
                return t->common->s;
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
                struct text *t = next_text(f);
                if (t->common && !root)
                        return v->type == KB_VSTRING ? &t->common->str : &t->common->num;
                struct kb_value **leaf = v->type == KB_VSTRING ? &t->str : &t->num;
                if (*leaf && !root)
                        return *leaf;
                struct kb_value *c = f->node++;
                /* The text stays read-only: s is char * only as the tree's. */
                *c = (struct kb_value){
                    .type = v->type, .line = v->line, .s = (char *)copy_text(f, t)};
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
                        c->obj.m[i].key = (char *)copy_text(f, next_text(f));
                        c->obj.m[i].val = shared_member(f, &v->obj.m[i])
                                              ? f->held[f->next_held++]->v
                                              : lay(f, v->obj.m[i].val, false);
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

struct kb_value *kb_value_freeze_shared(const struct kb_value *v, struct kb_value_shares *shares)
{
        struct freezer f = {.shares = shares};
        count(&f, v);
        /* The root is always a node of the block (so that freeing the block
         * frees the tree), even a leaf that count() left to a constant. */
        if (shared_leaf(v) ||
            ((v->type == KB_VSTRING || v->type == KB_VNUMBER) && f.t[f.order[0]].common))
                f.nodes++;
        size_t head = (f.nheld + 1) * sizeof(void *);
        size_t bytes = head + f.nodes * sizeof(struct kb_value) +
                       f.members * sizeof(struct kb_member) + f.elems * sizeof(struct kb_value *) +
                       f.idx * sizeof(uint32_t) + f.text;
        char *block = kb_xmalloc(bytes);
        struct kb_value_share **held = (struct kb_value_share **)block;
        for (size_t i = 0; i < f.nheld; i++) {
                held[i] = f.held[i];
                held[i]->refs++;
        }
        *(size_t *)(held + f.nheld) = f.nheld;
        f.node = (struct kb_value *)(block + head);
        f.mem = (struct kb_member *)(f.node + f.nodes);
        f.elem = (struct kb_value **)(f.mem + f.members);
        f.ix = (uint32_t *)(f.elem + f.elems);
        f.chars = (char *)(f.ix + f.idx);
        struct kb_value *root = lay(&f, v, true);
        free(f.t);
        free(f.tab);
        free(f.held);
        free(f.order);
        return root;
}

struct kb_value *kb_value_freeze(const struct kb_value *v)
{
        return kb_value_freeze_shared(v, NULL);
}

void kb_value_free_frozen(struct kb_value *v)
{
        if (!v)
                return;
        size_t n = ((size_t *)v)[-1];
        struct kb_value_share **held = (struct kb_value_share **)((size_t *)v - 1) - n;
        for (size_t i = 0; i < n; i++)
                share_unref(held[i]);
        free(held);
}

struct kb_value_shares *kb_value_shares_new(bool (*rule)(const char *key),
                                            const char *const *common, size_t ncommon)
{
        struct kb_value_shares *t = kb_xcalloc(1, sizeof(*t));
        t->rule = rule;
        if (!ncommon)
                return t;
        t->common = kb_xcalloc(ncommon, sizeof(*t->common));
        t->cslots = 16;
        while (t->cslots < 2 * ncommon)
                t->cslots *= 2;
        t->ctab = kb_xcalloc(t->cslots, sizeof(*t->ctab));
        for (size_t i = 0; i < ncommon; i++) {
                size_t len = strlen(common[i]);
                uint64_t h = kb_hash(common[i], len, KB_HASH_SEED);
                size_t c = h & (t->cslots - 1);
                bool dup = false;
                for (; t->ctab[c]; c = (c + 1) & (t->cslots - 1))
                        dup |= !strcmp(t->common[t->ctab[c] - 1].s, common[i]);
                if (dup)
                        continue;
                struct kb_value_common *k = &t->common[t->ncommon];
                /* Leaves of either type: a number leaf only ever points
                 * at num when its own text (this one) was a number. */
                *k = (struct kb_value_common){.s = common[i],
                                              .len = len,
                                              .hash = h,
                                              .str = {.type = KB_VSTRING, .s = (char *)common[i]},
                                              .num = {.type = KB_VNUMBER, .s = (char *)common[i]}};
                t->ctab[c] = (uint32_t)++t->ncommon;
        }
        return t;
}

size_t kb_value_shares_count(const struct kb_value_shares *t)
{
        return t->n;
}

void kb_value_shares_free(struct kb_value_shares *t)
{
        if (!t)
                return;
        for (size_t i = 0; i < t->nb; i++)
                for (struct kb_value_share *s = t->b[i], *next; s; s = next) {
                        next = s->next;
                        kb_value_free_frozen(s->v);
                        free(s);
                }
        free(t->b);
        free(t->common);
        free(t->ctab);
        free(t);
}
