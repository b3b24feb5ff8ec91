/* pkg/base's hash map (kb_map) and heap (kb_heap): checked against plain
 * arrays under random operations, and against keys chosen to collide. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

/* Integer keys: 20,000 random puts, gets and deletes over 1,000 keys,
 * the map always agreeing with an array that says which are in. */
static void test_int_map(void **state)
{
        (void)state;
        enum { K = 1000 };
        static bool in[K];
        static uint64_t val[K];
        memset(in, 0, sizeof(in));
        struct kb_map m;
        kb_map_init(&m, KB_MAP_INT);
        assert_null(kb_map_get_int(&m, 5));
        assert_false(kb_map_del_int(&m, 5));
        for (int op = 0; op < 20000; op++) {
                uint64_t k = next() % K, key = k * 0x10000; /* spaced keys */
                switch (next() % 3) {
                case 0: {
                        bool added;
                        uint64_t *v = kb_map_put_int(&m, key, &added);
                        assert_int_equal(added, !in[k]);
                        if (added)
                                assert_int_equal(*v, 0);
                        *v = val[k] = next();
                        in[k] = true;
                        break;
                }
                case 1:
                        assert_int_equal(kb_map_del_int(&m, key), in[k]);
                        in[k] = false;
                        break;
                default: {
                        uint64_t *v = kb_map_get_int(&m, key);
                        if (in[k])
                                assert_int_equal(*v, val[k]);
                        else
                                assert_null(v);
                }
                }
        }
        size_t n = 0, seen = 0;
        for (size_t k = 0; k < K; k++)
                n += in[k];
        assert_int_equal(kb_map_count(&m), n);
        for (size_t i = 0; i < m.cap; i++)
                if (m.slots[i].hash) {
                        uint64_t k = m.slots[i].key / 0x10000;
                        assert_true(in[k]);
                        assert_int_equal(m.slots[i].val, val[k]);
                        seen++;
                }
        assert_int_equal(seen, n);
        kb_map_release(&m);
}

/* String keys: lengths count (a key with a NUL inside, the empty key, a
 * prefix of another), and puts and deletes agree with an array. */
static void test_str_map(void **state)
{
        (void)state;
        enum { K = 500 };
        static char keys[K][24];
        static bool in[K];
        memset(in, 0, sizeof(in));
        for (unsigned i = 0; i < K; i++)
                snprintf(keys[i], sizeof(keys[i]), "ns/pod-%u", i);
        struct kb_map m;
        kb_map_init(&m, KB_MAP_STR);
        *kb_map_put_str(&m, "", 0, NULL) = 1;
        *kb_map_put_str(&m, "a\0b", 3, NULL) = 2;
        *kb_map_put_str(&m, "a", 1, NULL) = 3;
        assert_int_equal(*kb_map_get_str(&m, "", 0), 1);
        assert_int_equal(*kb_map_get_str(&m, "a\0b", 3), 2);
        assert_int_equal(*kb_map_get_str(&m, "a\0c", 1), 3);
        assert_null(kb_map_get_str(&m, "a\0c", 3));
        assert_true(kb_map_del_str(&m, "a", 1));
        assert_null(kb_map_get_str(&m, "a", 1));
        assert_int_equal(*kb_map_get_str(&m, "a\0b", 3), 2);
        for (int op = 0; op < 10000; op++) {
                size_t k = next() % K, len = strlen(keys[k]);
                /* A copy: equal bytes elsewhere find the same entry. */
                char copy[24];
                memcpy(copy, keys[k], len + 1);
                if (next() % 2) {
                        bool added;
                        *kb_map_put_str(&m, keys[k], len, &added) = k;
                        assert_int_equal(added, !in[k]);
                        in[k] = true;
                } else {
                        assert_int_equal(kb_map_del_str(&m, copy, len), in[k]);
                        in[k] = false;
                }
                uint64_t *v = kb_map_get_str(&m, copy, len);
                assert_int_equal(v != NULL, in[k]);
        }
        for (size_t k = 0; k < K; k++) {
                uint64_t *v = kb_map_get_str(&m, keys[k], strlen(keys[k]));
                assert_int_equal(v != NULL, in[k]);
                if (v)
                        assert_int_equal(*v, k);
        }
        kb_map_release(&m);
}

/*
 * Hostile keys: 1,000 names that all fall in one slot of a 2,048-slot
 * table hashed with kb_hash (FNV-1a under its public seed), as the
 * tables before kb_map were; anyone can compute such names.  In kb_map,
 * hashed under the process's secret key, finding each of them looks at a
 * few slots, not hundreds.
 */
static void test_hostile_keys(void **state)
{
        (void)state;
        enum { N = 1000 };
        static char keys[N][24];
        size_t n = 0;
        for (uint64_t i = 0; n < N; i++) {
                char cand[24];
                int len = snprintf(cand, sizeof(cand), "default/x%llu", (unsigned long long)i);
                if ((kb_hash(cand, (size_t)len, KB_HASH_SEED) & 4095) == 0)
                        memcpy(keys[n++], cand, (size_t)len + 1);
        }
        struct kb_map m;
        kb_map_init(&m, KB_MAP_STR);
        for (size_t i = 0; i < N; i++)
                *kb_map_put_str(&m, keys[i], strlen(keys[i]), NULL) = i;
        assert_int_equal(m.cap, 2048);
        kb__map_probes = 0;
        for (size_t i = 0; i < N; i++)
                assert_int_equal(*kb_map_get_str(&m, keys[i], strlen(keys[i])), i);
        /* Half full under a good hash: about 1.5 slots per hit on average
         * (FNV would put all 1,000 in one run: 500 on average). */
        assert_true(kb__map_probes < 3 * N);
        kb_map_release(&m);
}

static int cmp_int(void *ctx, const void *a, const void *b)
{
        (*(int *)ctx)++;
        uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
        return x < y ? -1 : x > y;
}

/* The heap gives values back smallest first under the comparison, with
 * duplicates, pushes between pops, and integers as values. */
static void test_heap(void **state)
{
        (void)state;
        int calls = 0;
        struct kb_heap h;
        kb_heap_init(&h, cmp_int, &calls);
        assert_true(kb_heap_empty(&h));
        assert_null(kb_heap_pop(&h));
        enum { N = 3000 };
        size_t nout = 0, pushed = 0;
        while (nout < N) {
                if (pushed < N && (kb_heap_empty(&h) || next() % 3)) {
                        kb_heap_push(&h, (void *)(uintptr_t)(next() % 500 + 1));
                        pushed++;
                        continue;
                }
                uintptr_t top = (uintptr_t)kb_heap_top(&h);
                uintptr_t v = (uintptr_t)kb_heap_pop(&h);
                assert_int_equal(v, top);
                if (h.n) /* nothing left is smaller */
                        for (size_t i = 0; i < h.n; i++)
                                assert_true((uintptr_t)h.v[i] >= v);
                nout++;
        }
        assert_true(kb_heap_empty(&h));
        assert_true(calls > 0);
        /* A copy pops the same values and leaves the original as it was. */
        for (uintptr_t v = 10; v > 0; v--)
                kb_heap_push(&h, (void *)v);
        struct kb_heap c;
        kb_heap_copy(&c, &h);
        for (uintptr_t v = 1; v <= 10; v++)
                assert_int_equal((uintptr_t)kb_heap_pop(&c), v);
        assert_true(kb_heap_empty(&c));
        assert_int_equal(h.n, 10);
        assert_int_equal((uintptr_t)kb_heap_pop(&h), 1);
        kb_heap_release(&c);
        kb_heap_release(&h);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_int_map),
            cmocka_unit_test(test_str_map),
            cmocka_unit_test(test_hostile_keys),
            cmocka_unit_test(test_heap),
        };
        return cmocka_run_group_tests_name("map", tests, NULL, NULL);
}
