/*
 * Micro-benchmark of pkg/base's kb_map against uthash (the Debian
 * library kbatch already allows) on what the scheduler does with its
 * tables: index N names ("ns/pod-000123"), then look each up 10 times
 * (half misses), and count per small integer key.  Run by
 * test/bench/map.sh; prints nanoseconds per operation.  Wall-clock: a
 * benchmark, not a test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

#include "base/base.h"

struct ut {
        const char *key;
        uint64_t val;
        UT_hash_handle hh;
};

struct uti {
        uint64_t key, val;
        UT_hash_handle hh;
};

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
        size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
        char **names = kb_xcalloc(2 * n, sizeof(*names));
        size_t *lens = kb_xcalloc(2 * n, sizeof(*lens));
        for (size_t i = 0; i < 2 * n; i++) {
                names[i] = kb_xasprintf("default/pg-%06zu-%zu", i / 20, i % 20);
                lens[i] = strlen(names[i]);
        }
        uint64_t sum = 0;

        double t0 = now();
        struct kb_map m;
        kb_map_init(&m, KB_MAP_STR);
        for (size_t i = 0; i < n; i++)
                *kb_map_put_str(&m, names[i], lens[i], NULL) = i;
        double t1 = now();
        for (int r = 0; r < 10; r++)
                for (size_t i = r % 2 ? n : 0, e = i + n; i < e; i++) {
                        uint64_t *v = kb_map_get_str(&m, names[i], lens[i]);
                        sum += v ? *v : 1;
                }
        double t2 = now();
        kb_map_release(&m);

        struct ut *tab = NULL, *items = kb_xcalloc(n, sizeof(*items));
        double u0 = now();
        for (size_t i = 0; i < n; i++) {
                items[i].key = names[i];
                items[i].val = i;
                HASH_ADD_KEYPTR(hh, tab, names[i], lens[i], &items[i]);
        }
        double u1 = now();
        for (int r = 0; r < 10; r++)
                for (size_t i = r % 2 ? n : 0, e = i + n; i < e; i++) {
                        struct ut *f;
                        HASH_FIND(hh, tab, names[i], lens[i], f);
                        sum += f ? f->val : 1;
                }
        double u2 = now();
        HASH_CLEAR(hh, tab);
        free(items);

        /* Integer keys: counts per domain id, 10 bumps per key. */
        double i0 = now();
        kb_map_init(&m, KB_MAP_INT);
        for (int r = 0; r < 10; r++)
                for (size_t i = 0; i < n; i++)
                        ++*kb_map_put_int(&m, i, NULL);
        double i1 = now();
        kb_map_release(&m);
        struct uti *itab = NULL, *iitems = kb_xcalloc(n, sizeof(*iitems));
        double j0 = now();
        for (int r = 0; r < 10; r++)
                for (size_t i = 0; i < n; i++) {
                        struct uti *f;
                        uint64_t k = i;
                        HASH_FIND(hh, itab, &k, sizeof(k), f);
                        if (!f) {
                                f = &iitems[i];
                                f->key = k;
                                HASH_ADD(hh, itab, key, sizeof(f->key), f);
                        }
                        f->val++;
                }
        double j1 = now();
        HASH_CLEAR(hh, itab);
        free(iitems);

        printf("%zu keys                 kb_map      uthash (ns/op)\n", n);
        printf("string insert        %8.1f    %8.1f\n", (t1 - t0) * 1e9 / n, (u1 - u0) * 1e9 / n);
        printf("string lookup (1/2 miss) %6.1f    %8.1f\n", (t2 - t1) * 1e9 / (10 * n),
               (u2 - u1) * 1e9 / (10 * n));
        printf("integer count        %8.1f    %8.1f\n", (i1 - i0) * 1e9 / (10 * n),
               (j1 - j0) * 1e9 / (10 * n));
        for (size_t i = 0; i < 2 * n; i++)
                free(names[i]);
        free(names);
        free(lens);
        return sum == 42; /* keeps the lookups */
}
