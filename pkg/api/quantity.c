/*
 * Kubernetes quantities and the resource-name table.
 *
 * The grammar (k8s.io/apimachinery resource.Quantity):
 *   quantity ::= [sign] number [suffix]
 *   number   ::= digits | digits "." [digits] | "." digits
 *   suffix   ::= binarySI (Ki Mi Gi Ti Pi Ei) | decimalSI (m "" k M G T P E)
 *              | ("e" | "E") [sign] digits
 *
 * The value is exact: the digits form an integer mantissa M, the fraction
 * and the suffix a power of ten and a power of two, so
 *   value = M * 10^e10 * 2^e2
 * which is computed in 128-bit arithmetic and rounded up (towards +inf) to a
 * whole number of units or milli-units, as Quantity.Value()/MilliValue() do.
 * Example: "1.5Gi" in bytes: M = 15, e10 = -1, e2 = 30, so 15 * 2^30 / 10
 * = 1610612736.  "0.1m" as milli-units: M = 1, e10 = -1 - 3 + 3 = -1, so
 * ceil(1/10) = 1.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "base/base.h"

__extension__ typedef __int128 i128;

/* Mantissa digits kept exactly; further non-zero digits only round up. */
#define MAX_DIGITS 36

int kb_quantity_parse(const char *s, bool milli, int64_t *out)
{
        const char *p = s;
        bool neg = false;
        i128 mant = 0;
        int ndigits = 0, e10 = 0, e2 = 0;
        bool sticky = false, any = false;

        if (!s)
                return KB_EBADQTY;
        if (*p == '+' || *p == '-')
                neg = *p++ == '-';
        while (*p >= '0' && *p <= '9') {
                any = true;
                if (ndigits < MAX_DIGITS) {
                        mant = mant * 10 + (*p - '0');
                        if (mant)
                                ndigits++;
                } else {
                        e10++; /* a dropped integer digit scales by ten */
                        sticky |= *p != '0';
                }
                p++;
        }
        if (*p == '.') {
                p++;
                while (*p >= '0' && *p <= '9') {
                        any = true;
                        if (ndigits < MAX_DIGITS) {
                                mant = mant * 10 + (*p - '0');
                                if (mant)
                                        ndigits++;
                                e10--;
                        } else {
                                sticky |= *p != '0';
                        }
                        p++;
                }
        }
        if (!any)
                return KB_EBADQTY;

        /* Suffix.  An e or E followed by a (signed) number is an exponent;
         * otherwise "E" and "Ei" are the exa suffixes. */
        bool exponent = false;
        if (*p == 'e' || *p == 'E') {
                const char *q = p[1] == '+' || p[1] == '-' ? p + 2 : p + 1;
                exponent = *q >= '0' && *q <= '9';
        }
        if (exponent) {
                const char *q = p + 1;
                bool eneg = false;
                int ex = 0;
                if (*q == '+' || *q == '-')
                        eneg = *q++ == '-';
                while (*q >= '0' && *q <= '9') {
                        if (ex < 100000)
                                ex = ex * 10 + (*q - '0');
                        q++;
                }
                if (*q)
                        return KB_EBADQTY;
                e10 += eneg ? -ex : ex;
        } else if (*p) {
                static const struct {
                        const char *sfx;
                        int e10, e2;
                } sfx[] = {
                    {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},
                    {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20}, {"Gi", 0, 30},
                    {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
                };
                size_t i;
                for (i = 0; i < KB_ARRAY_SIZE(sfx); i++)
                        if (strcmp(p, sfx[i].sfx) == 0)
                                break;
                if (i == KB_ARRAY_SIZE(sfx))
                        return KB_EBADQTY;
                e10 += sfx[i].e10;
                e2 = sfx[i].e2;
        }
        if (milli)
                e10 += 3;

        if (mant == 0) {
                /* Only dropped digits can be non-zero here, and they never are
                 * (digits are dropped only after 36 significant ones). */
                *out = 0;
                return 0;
        }

        /* Trailing zeros of a fraction ("1.000Gi") carry no information. */
        while (e10 < 0 && mant % 10 == 0) {
                mant /= 10;
                e10++;
        }
        const i128 limit = (i128)INT64_MAX + 1; /* allows INT64_MIN when negative */
        const i128 i128_half = ((i128)1 << 125);
        i128 v = mant;
        for (int i = 0; i < e2; i++) {
                if (v > i128_half)
                        return KB_EOVERFLOW;
                v *= 2;
        }
        if (e10 >= 0) {
                /* Checked before each step: v may come in near 2^125 from
                 * a binary suffix, and ten times that overflows. */
                for (int i = 0; i < e10; i++) {
                        if (v > limit)
                                return KB_EOVERFLOW;
                        v *= 10;
                }
        } else {
                bool rem = sticky;
                for (int i = 0; i < -e10 && v; i++) {
                        rem |= v % 10 != 0;
                        v /= 10;
                }
                /* Round towards +inf: up for positive values, and a
                 * negative value's truncation already rounds up. */
                if (rem && !neg)
                        v += 1;
        }
        if (v > limit || (!neg && v == limit))
                return KB_EOVERFLOW;
        *out = neg ? (int64_t)-v : (int64_t)v;
        return 0;
}

/* unit after the len bytes already in buf, truncated as snprintf would. */
static void add_unit(char *buf, size_t n, size_t len, const char *unit)
{
        if (n == 0 || len >= n - 1)
                return;
        size_t b = strlen(unit);
        if (b > n - 1 - len)
                b = n - 1 - len;
        memcpy(buf + len, unit, b);
        buf[len + b] = '\0';
}

/* v and a unit, as snprintf's "%lld%s" without its cost (quantities are
 * printed for every quota refusal of every session). */
static void with_suffix(int64_t v, const char *unit, char *buf, size_t n)
{
        add_unit(buf, n, kb_format_i64(v, buf, n), unit);
}

void kb_quantity_format(int64_t v, bool milli, bool binary, char *buf, size_t n)
{
        if (milli) {
                if (v % 1000 == 0)
                        kb_format_i64(v / 1000, buf, n);
                else
                        with_suffix(v, "m", buf, n);
                return;
        }
        if (binary && v != 0) {
                static const char *const sfx[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
                int k = -1;
                int64_t x = v;
                while (k < 5 && x % 1024 == 0) {
                        x /= 1024;
                        k++;
                }
                if (k >= 0) {
                        with_suffix(x, sfx[k], buf, n);
                        return;
                }
        }
        kb_format_i64(v, buf, n);
}

/* "%.2f" without trailing zeros: 9.3, 21, 0.25. */
static void decimal(double v, const char *unit, char *buf, size_t n)
{
        if (n == 0)
                return;
        kb_format_decimal(v, 2, buf, n);
        add_unit(buf, n, strlen(buf), unit);
}

void kb_quantity_human(double v, bool milli, bool binary, char *buf, size_t n)
{
        if (!isfinite(v) || v >= (double)KB_RES_UNLIMITED) {
                snprintf(buf, n, "unlimited");
                return;
        }
        if (milli) {
                decimal(v / 1000, "", buf, n);
                return;
        }
        if (binary) {
                static const char *const sfx[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
                int k = 0;
                while (k < 6 && fabs(v) >= 1024) {
                        v /= 1024;
                        k++;
                }
                decimal(v, sfx[k], buf, n);
                return;
        }
        decimal(v, "", buf, n);
}

const char *kb_res_qty(int i, double v, char *buf, size_t n)
{
        if (!isfinite(v) || v >= (double)KB_RES_UNLIMITED)
                snprintf(buf, n, "unlimited");
        else
                kb_quantity_format((int64_t)v, kb_res_is_milli(i), kb_res_is_bytes(i), buf, n);
        return buf;
}

const char *kb_res_human(int i, double v, char *buf, size_t n)
{
        kb_quantity_human(v, kb_res_is_milli(i), kb_res_is_bytes(i), buf, n);
        return buf;
}

/* ---- the resource-name table ------------------------------------------ */

static char res_names[KB_RES_MAX][128] = {"cpu", "memory", "pods"};
static int res_count = 3;

int kb_res_lookup(const char *name)
{
        int n = __atomic_load_n(&res_count, __ATOMIC_ACQUIRE);
        for (int i = 0; i < n; i++)
                if (strcmp(res_names[i], name) == 0)
                        return i;
        return -1;
}

int kb_res_intern(const char *name)
{
        int i = kb_res_lookup(name);
        if (i >= 0)
                return i;
        if (res_count >= KB_RES_MAX || strlen(name) >= sizeof(res_names[0]))
                return KB_ETOOMANYRES;
        snprintf(res_names[res_count], sizeof(res_names[0]), "%s", name);
        /* Publish the name before the count, for readers on other threads. */
        __atomic_store_n(&res_count, res_count + 1, __ATOMIC_RELEASE);
        return res_count - 1;
}

const char *kb_res_name(int i)
{
        return i >= 0 && i < KB_RES_MAX ? res_names[i] : "?";
}

int kb_res_count(void)
{
        return __atomic_load_n(&res_count, __ATOMIC_ACQUIRE);
}

bool kb_res_is_bytes(int i)
{
        const char *n = kb_res_name(i);
        return i == KB_RES_MEMORY || strcmp(n, "ephemeral-storage") == 0 ||
               kb_has_prefix(n, "hugepages-");
}

bool kb_res_is_milli(int i)
{
        return i != KB_RES_PODS && !kb_res_is_bytes(i);
}

bool kb_res_is_empty(const struct kb_res *r)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (i != KB_RES_PODS && r->q[i] != 0)
                        return false;
        return true;
}

void kb_res_fill(struct kb_res *r, int64_t v)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                r->q[i] = v;
}

void kb_res_format(const struct kb_res *r, bool with_pods, char *buf, size_t n)
{
        size_t off = 0;
        int count = kb_res_count();
        buf[0] = '\0';
        for (int i = 0; i < count && off < n; i++) {
                if (r->q[i] == 0 || r->q[i] == KB_RES_UNLIMITED || (i == KB_RES_PODS && !with_pods))
                        continue;
                char q[48];
                kb_quantity_format(r->q[i], kb_res_is_milli(i), kb_res_is_bytes(i), q, sizeof(q));
                int w =
                    snprintf(buf + off, n - off, "%s%s: %s", off ? ", " : "", kb_res_name(i), q);
                if (w < 0)
                        break;
                off += (size_t)w;
        }
}
