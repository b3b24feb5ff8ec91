/*
 * Text: DNS names checked, tables laid out in columns, numbers written as
 * words, base64, edit distance (base.h).
 */
#include "base/base.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool dns_alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* The characters of s[0..n) form one label: alphanumerics and '-', with
 * an alphanumeric at each end. */
static bool dns_label_n(const char *s, size_t n)
{
        if (n == 0 || !dns_alnum(s[0]) || !dns_alnum(s[n - 1]))
                return false;
        for (size_t i = 1; i + 1 < n; i++)
                if (!dns_alnum(s[i]) && s[i] != '-')
                        return false;
        return true;
}

bool kb_dns_label(const char *s)
{
        size_t n = s ? strlen(s) : 0;
        return n <= 63 && dns_label_n(s, n);
}

bool kb_dns_subdomain(const char *s)
{
        size_t n = s ? strlen(s) : 0;
        if (n == 0 || n > 253)
                return false;
        for (const char *p = s;;) {
                const char *dot = strchr(p, '.');
                size_t len = dot ? (size_t)(dot - p) : strlen(p);
                if (!dns_label_n(p, len))
                        return false;
                if (!dot)
                        return true;
                p = dot + 1;
        }
}

/* ---- tables ----------------------------------------------------------- */

void kb_table_init(struct kb_table *t, size_t ncols)
{
        memset(t, 0, sizeof(*t));
        t->ncols = ncols;
}

void kb_table_release(struct kb_table *t)
{
        for (size_t i = 0; i < t->nrows * t->ncols; i++)
                free(t->cells[i]);
        free(t->cells);
        memset(t, 0, sizeof(*t));
}

void kb_table_row(struct kb_table *t, const char *const *cells)
{
        size_t need = (t->nrows + 1) * t->ncols;
        if (need > t->cap)
                kb_grow((void **)&t->cells, &t->cap, need, sizeof(*t->cells));
        for (size_t c = 0; c < t->ncols; c++)
                t->cells[t->nrows * t->ncols + c] = kb_xstrdup(cells[c] ? cells[c] : "");
        t->nrows++;
}

void kb_table_print(const struct kb_table *t, struct kb_buf *out)
{
        size_t *w = kb_xcalloc(t->ncols + 1, sizeof(*w));
        for (size_t r = 0; r < t->nrows; r++)
                for (size_t c = 0; c < t->ncols; c++)
                        w[c] = KB_MAX(w[c], strlen(t->cells[r * t->ncols + c]));
        for (size_t r = 0; r < t->nrows; r++) {
                for (size_t c = 0; c < t->ncols; c++) {
                        const char *cell = t->cells[r * t->ncols + c];
                        if (c + 1 == t->ncols) {
                                kb_buf_adds(out, cell);
                                break;
                        }
                        kb_buf_printf(out, "%-*s   ", (int)w[c], cell);
                }
                /* No trailing blanks when the last cells are empty. */
                while (out->len && out->data[out->len - 1] == ' ')
                        out->data[--out->len] = 0;
                kb_buf_addc(out, '\n');
        }
        free(w);
}

size_t kb_format_i64(int64_t v, char *buf, size_t n)
{
        char tmp[24], *w = tmp + sizeof(tmp);
        uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        do
                *--w = (char)('0' + u % 10);
        while (u /= 10);
        if (v < 0)
                *--w = '-';
        size_t len = (size_t)(tmp + sizeof(tmp) - w);
        if (n == 0)
                return len;
        size_t k = len < n ? len : n - 1;
        memcpy(buf, w, k);
        buf[k] = '\0';
        return len;
}

void kb_format_decimal(double v, int decimals, char *buf, size_t n)
{
        /* A whole number (the usual quantity: "8", "32") has no digits
         * to trim: printed without snprintf, which costs some 2,000
         * instructions a call and ran for every quota refusal of every
         * session.  |v| < 2^53 keeps the conversion exact; -0 is 0. */
        if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v) {
                kb_format_i64((int64_t)v, buf, n);
                return;
        }
        snprintf(buf, n, "%.*f", decimals, v);
        char *dot = strchr(buf, '.');
        if (dot) {
                char *end = buf + strlen(buf);
                while (end > dot + 1 && end[-1] == '0')
                        *--end = '\0';
                if (end == dot + 1)
                        *dot = '\0';
        }
        if (strcmp(buf, "-0") == 0)
                snprintf(buf, n, "0");
}

char *kb_base64_encode(const void *data, size_t n)
{
        static const char b64[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const unsigned char *s = data;
        char *out = kb_xmalloc(4 * ((n + 2) / 3) + 1), *w = out;
        for (size_t i = 0; i < n; i += 3) {
                unsigned v = (unsigned)s[i] << 16;
                if (i + 1 < n)
                        v |= (unsigned)s[i + 1] << 8;
                if (i + 2 < n)
                        v |= s[i + 2];
                *w++ = b64[(v >> 18) & 63];
                *w++ = b64[(v >> 12) & 63];
                *w++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
                *w++ = i + 2 < n ? b64[v & 63] : '=';
        }
        *w = 0;
        return out;
}

size_t kb_edit_distance(const char *a, const char *b)
{
        size_t na = strlen(a), nb = strlen(b);
        if (na > 63 || nb > 63)
                return SIZE_MAX;
        size_t row[64];
        for (size_t j = 0; j <= nb; j++)
                row[j] = j;
        for (size_t i = 1; i <= na; i++) {
                size_t diag = row[0];
                row[0] = i;
                for (size_t j = 1; j <= nb; j++) {
                        size_t up = row[j];
                        size_t cost =
                            tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
                        size_t best = diag + cost;
                        if (up + 1 < best)
                                best = up + 1;
                        if (row[j - 1] + 1 < best)
                                best = row[j - 1] + 1;
                        row[j] = best;
                        diag = up;
                }
        }
        return row[nb];
}
