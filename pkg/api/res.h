/*
 * pkg/api's public interface, continued: resource vectors added,
 * subtracted and compared (inline: the session does it per task and per
 * node).  Part of api/api.h, which includes it after struct kb_res; not
 * included on its own.
 */
#ifndef KB_PKG_API_RES_H
#define KB_PKG_API_RES_H

/* Sums saturate at INT64_MAX / INT64_MIN instead of wrapping: two pods
 * of 4Ei memory each are valid, and their sum does not fit an int64 (a
 * fuzzed manifest found it in a job's request total; every sum of
 * requests has the same edge). */
static inline void kb_res_add(struct kb_res *a, const struct kb_res *b)
{
        /* Added as unsigned (a loop the compiler vectorises), the overflow
         * of any slot gathered in one word; the rare fix-up after. */
        uint64_t over = 0;
        for (int i = 0; i < KB_RES_MAX; i++) {
                uint64_t x = (uint64_t)a->q[i], y = (uint64_t)b->q[i], sum = x + y;
                over |= (x ^ sum) & (y ^ sum);
                a->q[i] = (int64_t)sum;
        }
        if (!(over >> 63))
                return;
        for (int i = 0; i < KB_RES_MAX; i++) {
                uint64_t y = (uint64_t)b->q[i], sum = (uint64_t)a->q[i], x = sum - y;
                if (((x ^ sum) & (y ^ sum)) >> 63)
                        a->q[i] = b->q[i] > 0 ? INT64_MAX : INT64_MIN;
        }
}

/* The sum of two quantities, saturated as kb_res_add saturates. */
static inline int64_t kb_qty_add(int64_t x, int64_t y)
{
        int64_t sum;
        if (__builtin_add_overflow(x, y, &sum))
                return y > 0 ? INT64_MAX : INT64_MIN;
        return sum;
}

/* kb_res_add over the first n slots only: the interned resources
 * (kb_res_count()), the only ones a request can have non-zero, for sums
 * taken per task. */
static inline void kb_res_add_first(struct kb_res *a, const struct kb_res *b, int n)
{
        for (int i = 0; i < n; i++)
                a->q[i] = kb_qty_add(a->q[i], b->q[i]);
}

/* kb_res_sub over the first n slots only, saturated (a request is never
 * negative, so b's slots are at least 0). */
static inline void kb_res_sub_first(struct kb_res *a, const struct kb_res *b, int n)
{
        for (int i = 0; i < n; i++)
                a->q[i] = kb_qty_add(a->q[i], -b->q[i]);
}

/* a and b equal in their first n slots (the interned resources: every
 * other slot of a request is 0). */
static inline bool kb_res_eq_first(const struct kb_res *a, const struct kb_res *b, int n)
{
        int i = 0;
        while (i < n && a->q[i] == b->q[i])
                i++;
        return i == n;
}

static inline void kb_res_sub(struct kb_res *a, const struct kb_res *b)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                a->q[i] -= b->q[i];
}

/* a <= b in every slot. */
static inline bool kb_res_le(const struct kb_res *a, const struct kb_res *b)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (a->q[i] > b->q[i])
                        return false;
        return true;
}

/* First slot where need > avail, or -1 when need fits. */
static inline int kb_res_first_short(const struct kb_res *need, const struct kb_res *avail)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (need->q[i] > avail->q[i])
                        return i;
        return -1;
}

#endif /* KB_PKG_API_RES_H */
