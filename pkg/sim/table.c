/* Text tables sized to their content, and the small formatters kbatch-sim's
 * reports share. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

void kb__table_init(struct kb_table *t, size_t ncols, ...)
{
        va_list ap;
        memset(t, 0, sizeof(*t));
        t->ncols = ncols;
        va_start(ap, ncols);
        for (size_t i = 0; i < ncols; i++) {
                const char *s = va_arg(ap, const char *);
                KB_PUSH(t->cells, t->ncells, t->capcells, kb_xstrdup(s ? s : ""));
        }
        va_end(ap);
}

void kb__table_row(struct kb_table *t, ...)
{
        va_list ap;
        va_start(ap, t);
        for (size_t i = 0; i < t->ncols; i++) {
                const char *s = va_arg(ap, const char *);
                KB_PUSH(t->cells, t->ncells, t->capcells, kb_xstrdup(s ? s : ""));
        }
        va_end(ap);
}

void kb__table_row_take(struct kb_table *t, char **cells)
{
        for (size_t i = 0; i < t->ncols; i++)
                KB_PUSH(t->cells, t->ncells, t->capcells, cells[i] ? cells[i] : kb_xstrdup(""));
}

/* Display width: UTF-8 continuation bytes take no column. */
static size_t width(const char *s)
{
        size_t w = 0;
        for (; *s; s++)
                w += ((unsigned char)*s & 0xc0) != 0x80;
        return w;
}

void kb__table_print(struct kb_table *t, FILE *out, const char *indent)
{
        size_t *w = kb_xcalloc(t->ncols ? t->ncols : 1, sizeof(*w));
        for (size_t i = 0; i < t->ncells; i++)
                w[i % t->ncols] = KB_MAX(w[i % t->ncols], width(t->cells[i]));
        for (size_t r = 0; r * t->ncols < t->ncells; r++) {
                /* Trailing empty cells print nothing, not padding. */
                size_t last = t->ncols;
                while (last > 1 && !t->cells[r * t->ncols + last - 1][0])
                        last--;
                fputs(indent, out);
                for (size_t k = 0; k < last; k++) {
                        const char *s = t->cells[r * t->ncols + k];
                        fputs(s, out);
                        if (k + 1 < last)
                                fprintf(out, "%*s", (int)(w[k] - width(s) + 2), "");
                }
                fputc('\n', out);
        }
        free(w);
        kb__table_release(t);
}

void kb__table_release(struct kb_table *t)
{
        for (size_t i = 0; i < t->ncells; i++)
                free(t->cells[i]);
        free(t->cells);
        memset(t, 0, sizeof(*t));
}

void kb__sim_clock_format(int64_t ns, char *buf, size_t n)
{
        if (ns < 0) {
                snprintf(buf, n, "-");
                return;
        }
        int64_t s = ns / 1000000000LL;
        snprintf(buf, n, "%lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60),
                 (long long)(s % 60));
}

void kb__csv_field(FILE *out, const char *s)
{
        if (!s)
                s = "";
        if (!strpbrk(s, ",\"\r\n")) {
                fputs(s, out);
                return;
        }
        fputc('"', out);
        for (; *s; s++) {
                if (*s == '"')
                        fputc('"', out);
                fputc(*s, out);
        }
        fputc('"', out);
}
