/*
 * The one hash map (and the SipHash under it) and the one heap that every
 * module uses; see base.h.
 *
 * The map is open addressing with linear probing, kept at most half full,
 * so a miss looks at about 2.5 slots on average.  Each slot keeps the full
 * hash (never 0: its top bit is set), so a probe compares keys only when
 * hashes agree.  Deletion shifts the run after the hole back instead of
 * leaving tombstones, as Knuth's Algorithm R: a map that sees many puts
 * and deletes (the cache's marks, say) never needs a rebuild.
 *
 * Example: cap 8, keys A and B both hash to slot 3, C to slot 4.  Put A,
 * B, C: A at 3, B at 4 (next free), C at 5.  Delete A: the hole at 3 takes
 * B (its home 3 is not in (3, 4]), then the hole at 4 takes C (home 4 is
 * not in (4, 5]), leaving B at 3, C at 4: every key still reachable from
 * its home without crossing an empty slot.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

/* ---- SipHash-1-3 under a per-process key --------------------------------- */

static uint64_t sip_k0, sip_k1;
static pthread_once_t sip_once = PTHREAD_ONCE_INIT;
/* Set once the key is drawn: every hash after the first skips the call
 * to pthread_once (a plain load on x86). */
static atomic_bool sip_ready;

static void sip_init(void)
{
        uint64_t k[2];
        if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k)) {
                /* No entropy to be had: still differs from run to run. */
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                k[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
                k[1] = (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&ts;
        }
        sip_k0 = k[0];
        sip_k1 = k[1];
        atomic_store_explicit(&sip_ready, true, memory_order_release);
}

static inline void sip_key(void)
{
        if (!atomic_load_explicit(&sip_ready, memory_order_acquire))
                pthread_once(&sip_once, sip_init);
}

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
        do {                                                                                       \
                v0 += v1;                                                                          \
                v1 = ROTL(v1, 13);                                                                 \
                v1 ^= v0;                                                                          \
                v0 = ROTL(v0, 32);                                                                 \
                v2 += v3;                                                                          \
                v3 = ROTL(v3, 16);                                                                 \
                v3 ^= v2;                                                                          \
                v0 += v3;                                                                          \
                v3 = ROTL(v3, 21);                                                                 \
                v3 ^= v0;                                                                          \
                v2 += v1;                                                                          \
                v1 = ROTL(v1, 17);                                                                 \
                v1 ^= v2;                                                                          \
                v2 = ROTL(v2, 32);                                                                 \
        } while (0)

uint64_t kb_siphash(const void *data, size_t len)
{
        sip_key();
        const unsigned char *p = data, *end = p + (len & ~(size_t)7);
        uint64_t v0 = 0x736f6d6570736575ull ^ sip_k0, v1 = 0x646f72616e646f6dull ^ sip_k1;
        uint64_t v2 = 0x6c7967656e657261ull ^ sip_k0, v3 = 0x7465646279746573ull ^ sip_k1;
        for (; p != end; p += 8) {
                uint64_t m;
                memcpy(&m, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                m = __builtin_bswap64(m);
#endif
                v3 ^= m;
                SIPROUND;
                v0 ^= m;
        }
        uint64_t b = (uint64_t)len << 56;
        for (size_t i = 0; i < (len & 7); i++)
                b |= (uint64_t)p[i] << (8 * i);
        v3 ^= b;
        SIPROUND;
        v0 ^= b;
        v2 ^= 0xff;
        SIPROUND;
        SIPROUND;
        SIPROUND;
        return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- the map ------------------------------------------------------------- */

#ifdef KB_TESTING
uint64_t kb__map_probes;
#define PROBED() (kb__map_probes++)
#else
#define PROBED() ((void)0)
#endif

#define USED (1ull << 63)

/* Integers (indices, mostly) are mixed with murmur3's finaliser under the
 * process key: sequential keys spread over the slots, and their order
 * there is not predictable from outside. */
static uint64_t int_hash(uint64_t k)
{
        sip_key();
        k ^= sip_k0;
        k ^= k >> 33;
        k *= 0xff51afd7ed558ccdull;
        k ^= k >> 33;
        k *= 0xc4ceb9fe1a85ec53ull;
        k ^= k >> 33;
        return k | USED;
}

static uint64_t str_hash(const void *key, size_t len)
{
        return kb_siphash(key, len) | USED;
}

static bool same(const struct kb_map_slot *s, uint64_t h, uint64_t key, size_t len,
                 enum kb_map_keys keys)
{
        if (s->hash != h)
                return false;
        if (keys == KB_MAP_INT)
                return s->key == key;
        return s->len == len && (len == 0 || memcmp((const void *)(uintptr_t)s->key,
                                                    (const void *)(uintptr_t)key, len) == 0);
}

void kb_map_init(struct kb_map *m, enum kb_map_keys keys)
{
        m->slots = NULL;
        m->cap = m->n = 0;
        m->keys = keys;
}

void kb_map_release(struct kb_map *m)
{
        free(m->slots);
        m->slots = NULL;
        m->cap = m->n = 0;
}

static void resize(struct kb_map *m, size_t cap)
{
        struct kb_map_slot *old = m->slots;
        size_t oldcap = m->cap;
        m->slots = kb_xcalloc(cap, sizeof(*m->slots));
        m->cap = cap;
        for (size_t i = 0; i < oldcap; i++) {
                if (!old[i].hash)
                        continue;
                size_t k = old[i].hash & (cap - 1);
                while (m->slots[k].hash)
                        k = (k + 1) & (cap - 1);
                m->slots[k] = old[i];
        }
        free(old);
}

void kb_map_reserve(struct kb_map *m, size_t n)
{
        size_t cap = m->cap ? m->cap : 16;
        while (cap < 2 * n)
                cap *= 2;
        if (cap != m->cap)
                resize(m, cap);
}

static struct kb_map_slot *find(const struct kb_map *m, uint64_t h, uint64_t key, size_t len,
                                size_t *hole)
{
        if (!m->cap) {
                *hole = 0;
                return NULL;
        }
        size_t mask = m->cap - 1, k = h & mask;
        for (; m->slots[k].hash; k = (k + 1) & mask) {
                PROBED();
                if (same(&m->slots[k], h, key, len, m->keys))
                        return &m->slots[k];
        }
        PROBED();
        *hole = k;
        return NULL;
}

static uint64_t *put(struct kb_map *m, uint64_t h, uint64_t key, size_t len, bool *added)
{
        size_t hole;
        struct kb_map_slot *s = find(m, h, key, len, &hole);
        if (added)
                *added = !s;
        if (s)
                return &s->val;
        if (2 * (m->n + 1) > m->cap) {
                kb_map_reserve(m, m->n + 1);
                find(m, h, key, len, &hole);
        }
        s = &m->slots[hole];
        *s = (struct kb_map_slot){h, key, len, 0};
        m->n++;
        return &s->val;
}

static bool del(struct kb_map *m, uint64_t h, uint64_t key, size_t len)
{
        size_t hole;
        struct kb_map_slot *s = find(m, h, key, len, &hole);
        if (!s)
                return false;
        size_t mask = m->cap - 1;
        hole = (size_t)(s - m->slots);
        m->slots[hole].hash = 0;
        for (size_t j = (hole + 1) & mask; m->slots[j].hash; j = (j + 1) & mask) {
                size_t home = m->slots[j].hash & mask;
                /* The entry at j moves into the hole unless its home lies
                 * cyclically in (hole, j]. */
                bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
                if (!stays) {
                        m->slots[hole] = m->slots[j];
                        m->slots[j].hash = 0;
                        hole = j;
                }
        }
        m->n--;
        return true;
}

uint64_t *kb_map_get_int(const struct kb_map *m, uint64_t key)
{
        size_t hole;
        struct kb_map_slot *s = find(m, m->cap ? int_hash(key) : 0, key, 0, &hole);
        return s ? &s->val : NULL;
}

uint64_t *kb_map_get_str(const struct kb_map *m, const void *key, size_t len)
{
        size_t hole;
        struct kb_map_slot *s =
            find(m, m->cap ? str_hash(key, len) : 0, (uint64_t)(uintptr_t)key, len, &hole);
        return s ? &s->val : NULL;
}

uint64_t *kb_map_put_int(struct kb_map *m, uint64_t key, bool *added)
{
        return put(m, int_hash(key), key, 0, added);
}

uint64_t *kb_map_put_str(struct kb_map *m, const void *key, size_t len, bool *added)
{
        return put(m, str_hash(key, len), (uint64_t)(uintptr_t)key, len, added);
}

bool kb_map_del_int(struct kb_map *m, uint64_t key)
{
        return m->cap && del(m, int_hash(key), key, 0);
}

bool kb_map_del_str(struct kb_map *m, const void *key, size_t len)
{
        return m->cap && del(m, str_hash(key, len), (uint64_t)(uintptr_t)key, len);
}

/* ---- the heap ------------------------------------------------------------ */

void kb_heap_init(struct kb_heap *h, kb_heap_cmp_fn cmp, void *ctx)
{
        h->v = NULL;
        h->n = h->cap = 0;
        h->cmp = cmp;
        h->ctx = ctx;
}

void kb_heap_release(struct kb_heap *h)
{
        free(h->v);
        h->v = NULL;
        h->n = h->cap = 0;
}

void kb_heap_reserve(struct kb_heap *h, size_t n)
{
        if (h->cap >= n)
                return;
        h->v = kb_xrealloc(h->v, n * sizeof(*h->v));
        h->cap = n;
}

void kb_heap_push(struct kb_heap *h, void *item)
{
        KB_PUSH(h->v, h->n, h->cap, item);
        size_t i = h->n - 1;
        while (i > 0) {
                size_t parent = (i - 1) / 2;
                if (h->cmp(h->ctx, h->v[i], h->v[parent]) >= 0)
                        break;
                void *tmp = h->v[i];
                h->v[i] = h->v[parent];
                h->v[parent] = tmp;
                i = parent;
        }
}

void *kb_heap_pop(struct kb_heap *h)
{
        if (h->n == 0)
                return NULL;
        void *top = h->v[0];
        h->v[0] = h->v[--h->n];
        size_t i = 0;
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;
                if (l < h->n && h->cmp(h->ctx, h->v[l], h->v[m]) < 0)
                        m = l;
                if (r < h->n && h->cmp(h->ctx, h->v[r], h->v[m]) < 0)
                        m = r;
                if (m == i)
                        break;
                void *tmp = h->v[i];
                h->v[i] = h->v[m];
                h->v[m] = tmp;
                i = m;
        }
        return top;
}

void kb_heap_copy(struct kb_heap *dst, const struct kb_heap *src)
{
        *dst = *src;
        dst->cap = src->n + 1;
        dst->v = kb_xmalloc(dst->cap * sizeof(*dst->v));
        if (src->n)
                memcpy(dst->v, src->v, src->n * sizeof(*src->v));
}
