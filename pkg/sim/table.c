/* Text tables sized to their content, and the small formatters kbatch-sim's
 * reports share. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

/* ncols strings from a va_list into a row. */
static void row_from(struct kb_table *t, va_list ap)
{
        const char **cells = kb_xcalloc(t->ncols + 1, sizeof(*cells));
        for (size_t i = 0; i < t->ncols; i++)
                cells[i] = va_arg(ap, const char *);
        kb_table_row(t, cells);
        free(cells);
}

void kb__table_init(struct kb_table *t, size_t ncols, ...)
{
        va_list ap;
        kb_table_init(t, ncols);
        va_start(ap, ncols);
        row_from(t, ap);
        va_end(ap);
}

void kb__table_row(struct kb_table *t, ...)
{
        va_list ap;
        va_start(ap, t);
        row_from(t, ap);
        va_end(ap);
}

void kb__table_row_take(struct kb_table *t, char **cells)
{
        kb_table_row(t, (const char *const *)cells);
        for (size_t i = 0; i < t->ncols; i++)
                free(cells[i]);
}

void kb__table_print(struct kb_table *t, FILE *out, const char *indent)
{
        struct kb_buf b;
        kb_buf_init(&b);
        kb_table_print(t, &b);
        for (char *line = b.data, *nl; line && *line; line = nl + 1) {
                nl = strchr(line, '\n');
                fprintf(out, "%s%.*s\n", indent, (int)(nl - line), line);
        }
        kb_buf_release(&b);
        kb_table_release(t);
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
