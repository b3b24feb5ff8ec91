/*
 * Go durations (time.ParseDuration), the format Kubernetes uses for
 * metav1.Duration and that annotations such as kbatch.io/runtime carry.
 *
 * The grammar:
 *   duration ::= [sign] ( "0" | term { term } )
 *   term     ::= number unit
 *   number   ::= digits [ "." [digits] ] | "." digits
 *   unit     ::= "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h"
 * so "30m", "1h30m", "1.5h", "90s", ".5s", "2h45m30.5s"; a number without a
 * unit ("30") is refused, except "0".  The value is whole nanoseconds in an
 * int64, as Go's Duration: each term's integer part is exact, its fraction
 * truncated to the nanosecond, and anything beyond about 292 years is
 * refused.  Worked example: "1.5h" is 1 h = 3,600,000,000,000 ns plus
 * 0.5 × 3,600,000,000,000 = 1,800,000,000,000 ns: 5,400,000,000,000 ns.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "base/base.h"

static const struct {
        const char *name;
        uint64_t ns;
} units[] = {
    {"ns", 1ULL},
    {"us", 1000ULL},
    {"\xc2\xb5s", 1000ULL}, /* U+00B5 micro sign */
    {"\xce\xbcs", 1000ULL}, /* U+03BC Greek small letter mu */
    {"ms", 1000000ULL},
    {"s", 1000000000ULL},
    {"m", 60ULL * 1000000000ULL},
    {"h", 3600ULL * 1000000000ULL},
};

#define FAIL(...)                                                                                  \
        do {                                                                                       \
                snprintf(why, whylen, __VA_ARGS__);                                                \
                return KB_EBADINPUT;                                                               \
        } while (0)

int kb_duration_parse(const char *s, int64_t *out, char *why, size_t whylen)
{
        const char *p = s;
        bool neg = false;
        uint64_t total = 0;

        if (!s || !*s)
                FAIL("empty duration (want a Go duration such as 30m, 1h30m or 90s)");
        if (*p == '+' || *p == '-')
                neg = *p++ == '-';
        if (strcmp(p, "0") == 0) {
                *out = 0;
                return 0;
        }
        if (!*p)
                FAIL("invalid duration \"%s\"", s);
        while (*p) {
                uint64_t whole = 0, frac = 0, scale = 1;
                bool digits = false, overflow = false;
                if (!(*p == '.' || (*p >= '0' && *p <= '9')))
                        FAIL("invalid duration \"%s\"", s);
                for (; *p >= '0' && *p <= '9'; p++) {
                        digits = true;
                        if (whole > (UINT64_MAX - 9) / 10)
                                overflow = true;
                        else
                                whole = whole * 10 + (uint64_t)(*p - '0');
                }
                if (*p == '.') {
                        /* Fraction digits past what a nanosecond can show
                         * change nothing: keep 19 at most. */
                        for (p++; *p >= '0' && *p <= '9'; p++) {
                                digits = true;
                                if (scale < 10000000000000000000ULL) {
                                        frac = frac * 10 + (uint64_t)(*p - '0');
                                        scale *= 10;
                                }
                        }
                }
                if (!digits)
                        FAIL("invalid duration \"%s\"", s);
                const char *u = p;
                while (*p && *p != '.' && !(*p >= '0' && *p <= '9'))
                        p++;
                size_t ulen = (size_t)(p - u);
                if (!ulen)
                        FAIL("missing unit in duration \"%s\" (units: ns, us, ms, s, m, h)", s);
                size_t k;
                for (k = 0; k < KB_ARRAY_SIZE(units); k++)
                        if (strlen(units[k].name) == ulen && memcmp(units[k].name, u, ulen) == 0)
                                break;
                if (k == KB_ARRAY_SIZE(units))
                        FAIL("unknown unit \"%.*s\" in duration \"%s\" (units: ns, us, ms, s, m, "
                             "h)",
                             (int)ulen, u, s);
                uint64_t unit = units[k].ns;
                if (overflow || whole > (uint64_t)INT64_MAX / unit)
                        FAIL("duration \"%s\" is too long (at most about 292 years)", s);
                uint64_t v = whole * unit;
                /* frac/scale of a unit, truncated to whole nanoseconds. */
                if (frac) {
                        __extension__ unsigned __int128 f = (unsigned __int128)frac * unit / scale;
                        v += (uint64_t)f;
                }
                if (v > (uint64_t)INT64_MAX - total)
                        FAIL("duration \"%s\" is too long (at most about 292 years)", s);
                total += v;
        }
        *out = neg ? -(int64_t)total : (int64_t)total;
        return 0;
}

/* whole.frac (frac has digits digits, its trailing zeros left out) and
 * unit, at buf: exact where "%g" printed "1e-06s" for a microsecond past
 * 5 h, which no duration parser reads back. */
static size_t put_fraction(char *buf, size_t n, uint64_t whole, uint64_t frac, int digits,
                           const char *unit)
{
        if (!frac)
                return (size_t)snprintf(buf, n, "%llu%s", (unsigned long long)whole, unit);
        while (frac % 10 == 0) {
                frac /= 10;
                digits--;
        }
        return (size_t)snprintf(buf, n, "%llu.%0*llu%s", (unsigned long long)whole, digits,
                                (unsigned long long)frac, unit);
}

void kb_duration_format(int64_t ns, char *buf, size_t n)
{
        static const struct {
                const char *name;
                int64_t ns;
        } parts[] = {{"h", 3600000000000LL}, {"m", 60000000000LL}, {"s", 1000000000LL}};
        size_t len = 0;
        uint64_t left;
        if (n == 0)
                return;
        buf[0] = '\0';
        if (ns == 0) {
                snprintf(buf, n, "0s");
                return;
        }
        if (ns < 0) {
                len += (size_t)snprintf(buf, n, "-");
                left = (uint64_t)0 - (uint64_t)ns;
        } else {
                left = (uint64_t)ns;
        }
        if (left < 1000000000ULL) {
                /* Below a second: the largest unit that keeps it whole or
                 * short ("250ms", "1.5ms", "800ns"). */
                if (left >= 1000000ULL)
                        put_fraction(buf + len, n - len, left / 1000000, left % 1000000, 6, "ms");
                else if (left >= 1000ULL)
                        put_fraction(buf + len, n - len, left / 1000, left % 1000, 3, "us");
                else
                        snprintf(buf + len, n - len, "%lluns", (unsigned long long)left);
                return;
        }
        for (size_t i = 0; i < KB_ARRAY_SIZE(parts) && len < n; i++) {
                uint64_t unit = (uint64_t)parts[i].ns;
                uint64_t q = left / unit;
                left -= q * unit;
                if (i == 2) {
                        /* Seconds carry the fraction left ("1.5s"). */
                        if (q || left)
                                len += put_fraction(buf + len, n - len, q, left, 9, "s");
                } else if (q) {
                        len += (size_t)snprintf(buf + len, n - len, "%llu%s", (unsigned long long)q,
                                                parts[i].name);
                }
        }
}
