/*
 * The inter-pod index's counts: per domain of a counter (dense, or a map
 * for keys with many domains), their total, and for an eligible counter
 * the histogram that keeps the least count in O(1) per change.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

/* ---- counts ------------------------------------------------------------------------ */

static int32_t *slot_of(struct kb__ctr *c, uint32_t d, bool create)
{
        if (c->dense)
                return &c->dense[d];
        /* The count lives in the value's low 32 bits. */
        uint64_t *v = create ? kb_map_put_int(&c->counts, d, NULL) : kb_map_get_int(&c->counts, d);
        return (int32_t *)v;
}

int32_t kb__ctr_get(const struct kb__ctr *c, uint32_t d)
{
        if (d == KB_NO_DOMAIN)
                return 0;
        int32_t *v = slot_of((struct kb__ctr *)c, d, false);
        return v ? *v : 0;
}

int64_t kb__ctr_total(const struct kb__ctr *c)
{
        return c->total;
}

uint32_t kb__ctr_domain(const struct kb__ctr *c, uint32_t node)
{
        return c->dom ? c->dom->of[node] : node;
}

const struct kb_domains *kb__ctr_domains(const struct kb__ctr *c)
{
        return c->dom;
}

bool kb__ctr_min(const struct kb__ctr *c, int32_t *min, uint32_t *ndomains)
{
        *ndomains = c->npresent;
        *min = c->min;
        return c->npresent > 0;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

size_t kb__ctr_nonzero(const struct kb__ctr *c, uint32_t *out, size_t cap)
{
        size_t n = 0;
        if (c->dense) {
                for (uint32_t d = 0; d < c->dom->ndomains; d++)
                        if (c->dense[d]) {
                                if (n < cap)
                                        out[n] = d;
                                n++;
                        }
                return n;
        }
        for (size_t i = 0; i < c->counts.cap; i++) {
                const struct kb_map_slot *e = &c->counts.slots[i];
                if (e->hash && (int32_t)e->val) {
                        if (n < cap)
                                out[n] = (uint32_t)e->key;
                        n++;
                }
        }
        /* In domain order, whatever the map's. */
        if (n <= cap)
                qsort(out, n, sizeof(*out), cmp_u32);
        return n;
}

static void hist_move(struct kb__ctr *c, int32_t from, int32_t to)
{
        if ((size_t)to >= c->nhist) {
                size_t n = KB_MAX((size_t)to + 1, 2 * c->nhist);
                c->hist = kb_xrealloc(c->hist, n * sizeof(*c->hist));
                memset(c->hist + c->nhist, 0, (n - c->nhist) * sizeof(*c->hist));
                c->nhist = n;
        }
        c->hist[from]--;
        c->hist[to]++;
        if (to > from && from == c->min && !c->hist[from])
                c->min = to;
        else if (to < c->min)
                c->min = to;
}

void kb__ctr_bump(struct kb__ctr *c, uint32_t d, int32_t delta)
{
        int32_t *v = slot_of(c, d, true);
        int32_t old = *v;
        *v += delta;
        c->total += delta;
        if (c->present && c->present[d] && delta)
                hist_move(c, old, *v);
}
