/*
 * Drawing for kbatch-sim's SVG figures (plot.c): panels with their axes,
 * step lines and filled steps, legends, and the series the figures draw
 * that the report keeps only as gangs (how many wait, and what they ask).
 * Written by hand: no fonts, scripts or images to fetch.
 *
 * A panel maps time [0, tend] across and [0, ymax] up.  Lines are steps
 * (a value holds until the next point).  A series with more points than a
 * few per pixel is drawn per pixel column as its first, lowest, highest
 * and last value there, which keeps spikes visible and the file small.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

/* Ten colours told apart by most eyes (Tableau's ten); past ten, the
 * colours come again with a dash pattern. */
static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

const char *kb__plot_color(size_t i)
{
        return palette[i % KB_ARRAY_SIZE(palette)];
}

const char *kb__plot_dash(size_t i)
{
        static const char *const dashes[] = {NULL, "2 3", "8 3 2 3"};
        return dashes[i / KB_ARRAY_SIZE(palette) % KB_ARRAY_SIZE(dashes)];
}

void kb__svg_escaped(FILE *out, const char *s)
{
        for (; *s; s++) {
                if (*s == '&')
                        fputs("&amp;", out);
                else if (*s == '<')
                        fputs("&lt;", out);
                else if (*s == '>')
                        fputs("&gt;", out);
                else if (*s == '"')
                        fputs("&quot;", out);
                else
                        fputc(*s, out);
        }
}

static double x_of(const struct kb__plot_frame *f, int64_t t)
{
        return f->left + f->w * (double)t / (double)f->tend;
}

static double y_of(const struct kb__plot_frame *f, double v)
{
        return f->top + f->h * (1 - KB_MIN(KB_MAX(v, 0), f->ymax) / f->ymax);
}

/* A round step with at most `most` of them up to v. */
static double grid_step(double v, int most)
{
        static const double m[] = {1, 2, 2.5, 5};
        for (double p = 0.001;; p *= 10)
                for (size_t i = 0; i < KB_ARRAY_SIZE(m); i++)
                        if (v / (m[i] * p) <= most + 1e-9)
                                return m[i] * p;
}

double kb__plot_top(double v, bool percent)
{
        if (v <= 0)
                return percent ? 0.1 : 1;
        /* Room above a full 100% line without wasting a third of the panel. */
        if (percent && v > 0.75 && v <= 1.05)
                return 1.05;
        double step = grid_step(v, 4);
        double top = ceil(v / step - 1e-9) * step;
        return percent || top >= 4 || top == floor(top) ? top : ceil(top);
}

/* A tick step of about a tenth (or 1/n) of the span, at a round clock value. */
static int64_t tick_step(int64_t span, int n)
{
        static const int64_t steps[] = {1,     2,     5,     10,    15,     30,     60,
                                        120,   300,   600,   900,   1800,   3600,   7200,
                                        10800, 21600, 43200, 86400, 172800, 604800, 2592000};
        for (size_t i = 0; i < KB_ARRAY_SIZE(steps); i++)
                if (span / (steps[i] * 1000000000LL) <= n)
                        return steps[i] * 1000000000LL;
        return span / n + 1;
}

static void tick_label(int64_t t, int64_t step, char *buf, size_t n)
{
        int64_t s = t / 1000000000LL;
        if (step >= 60 * 1000000000LL)
                snprintf(buf, n, "%lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60));
        else
                kb__sim_clock_format(t, buf, n);
}

static void value_label(const struct kb__plot_frame *f, double v, char *buf, size_t n)
{
        if (!f->percent)
                snprintf(buf, n, "%g", v);
        else if (fabs(v * 100 - round(v * 100)) < 1e-6)
                snprintf(buf, n, "%.0f%%", v * 100);
        else
                snprintf(buf, n, "%.1f%%", v * 100);
}

void kb__plot_axes(FILE *out, const struct kb__plot_frame *f, const char *title, int ticks)
{
        double fs = f->h < 150 ? 11 : 12;
        if (title) {
                fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"%.0f\" font-weight=\"bold\">",
                        f->left, f->top - 8, fs + 2);
                kb__svg_escaped(out, title);
                fprintf(out, "</text>\n");
        }
        double step = grid_step(f->ymax, f->h < 150 ? 2 : 4);
        for (int k = 0; k * step <= f->ymax * (1 + 1e-9); k++) {
                double v = k * step, y = y_of(f, v);
                char label[32];
                /* Whole gangs only on a count axis. */
                if (!f->percent && v != floor(v))
                        continue;
                value_label(f, v, label, sizeof(label));
                fprintf(out,
                        "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"%s\"/>\n"
                        "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"%.0f\">%s"
                        "</text>\n",
                        f->left, y, f->left + f->w, y, k ? "#e0e0e0" : "#404040", f->left - 5,
                        y + 4, fs, label);
        }
        int64_t ts = tick_step(f->tend, ticks);
        for (int64_t t = 0; t <= f->tend; t += ts) {
                char label[32];
                double x = x_of(f, t);
                tick_label(t, ts, label, sizeof(label));
                fprintf(out,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                        "stroke=\"#e8e8e8\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
                        "text-anchor=\"middle\" font-size=\"%.0f\">%s</text>\n",
                        x, f->top, x, f->top + f->h, x, f->top + f->h + fs + 3, fs, label);
        }
        fprintf(out,
                "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
                "stroke=\"#404040\"/>\n",
                f->left, f->top, f->w, f->h);
}

/* The step points of p, as "x,y" pairs, ending at the right edge. */
static void step_points(FILE *out, const struct kb__plot_frame *f, const struct kb__plot_xy *p,
                        size_t n, double nudge)
{
        struct kb__plot_frame g = *f;
        g.top += nudge;
        f = &g;
        double prev_y = y_of(f, p[0].v);
        fprintf(out, "%.1f,%.1f", x_of(f, p[0].t), prev_y);
        bool dense = n > 4 * (size_t)f->w;
        for (size_t k = 1; k < n && p[k].t <= f->tend;) {
                double x = x_of(f, p[k].t);
                if (!dense) {
                        double y = y_of(f, p[k].v);
                        fprintf(out, " %.1f,%.1f %.1f,%.1f", x, prev_y, x, y);
                        prev_y = y;
                        k++;
                        continue;
                }
                /* Every point in this pixel column: first, extremes, last. */
                int col = (int)x;
                double lo = prev_y, hi = prev_y, y = prev_y;
                fprintf(out, " %.1f,%.1f", x, prev_y);
                for (; k < n && p[k].t <= f->tend && (int)x_of(f, p[k].t) == col; k++) {
                        y = y_of(f, p[k].v);
                        lo = KB_MIN(lo, y);
                        hi = KB_MAX(hi, y);
                }
                fprintf(out, " %.1f,%.1f %.1f,%.1f %.1f,%.1f", x, hi, x, lo, x, y);
                prev_y = y;
        }
        fprintf(out, " %.1f,%.1f", f->left + f->w, prev_y);
}

void kb__plot_steps(FILE *out, const struct kb__plot_frame *f, const struct kb__plot_xy *p,
                    size_t n, const struct kb__plot_pen *pen)
{
        if (!n)
                return;
        if (pen->fill) {
                fprintf(out, "<polygon fill=\"%s\" fill-opacity=\"0.3\" stroke=\"none\" points=\"",
                        pen->color);
                step_points(out, f, p, n, 0);
                fprintf(out, " %.1f,%.1f %.1f,%.1f\"/>\n", f->left + f->w, f->top + f->h,
                        x_of(f, p[0].t), f->top + f->h);
        }
        fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"", pen->color,
                pen->width);
        if (pen->dash)
                fprintf(out, " stroke-dasharray=\"%s\"", pen->dash);
        fprintf(out, " points=\"");
        step_points(out, f, p, n, pen->nudge);
        fprintf(out, "\"/>\n");
}

void kb__plot_legend(FILE *out, double x, double y, const struct kb__plot_pen *pen,
                     const char *label)
{
        if (pen->fill)
                fprintf(out,
                        "<rect x=\"%.0f\" y=\"%.0f\" width=\"24\" height=\"8\" fill=\"%s\" "
                        "fill-opacity=\"0.3\"/>\n",
                        x, y - 8, pen->color);
        fprintf(out,
                "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" "
                "stroke-width=\"%.1f\"",
                x, y - (pen->fill ? 8 : 0), x + 24, y - (pen->fill ? 8 : 0), pen->color,
                KB_MAX(pen->width, 2));
        if (pen->dash)
                fprintf(out, " stroke-dasharray=\"%s\"", pen->dash);
        fprintf(out, "/>\n<text x=\"%.0f\" y=\"%.0f\" font-size=\"11.5\">", x + 30, y + 4);
        kb__svg_escaped(out, label);
        fprintf(out, "</text>\n");
}

struct wait_ev {
        int64_t t;
        int sign;
        const struct kb_res *req;
};

static int cmp_wait_ev(const void *a, const void *b)
{
        const struct wait_ev *x = a, *y = b;
        return x->t < y->t ? -1 : x->t > y->t;
}

size_t kb__sim_waiting(const struct kb_sim_report *rep, const char *queue, int res,
                       struct kb__plot_xy **gangs, struct kb__plot_xy **demand)
{
        struct wait_ev *ev = kb_xmalloc((2 * rep->ngangs + 1) * sizeof(*ev));
        size_t nev = 0, n = 0;
        for (size_t i = 0; i < rep->ngangs; i++) {
                const struct kb_sim_gang *g = &rep->gangs[i];
                if (g->prior || (queue && strcmp(g->queue, queue)) ||
                    (g->start >= 0 && g->start <= g->arrival))
                        continue;
                ev[nev++] = (struct wait_ev){g->arrival, 1, &g->requests};
                if (g->start >= 0)
                        ev[nev++] = (struct wait_ev){g->start, -1, &g->requests};
        }
        if (nev)
                qsort(ev, nev, sizeof(*ev), cmp_wait_ev);
        *gangs = kb_xmalloc((nev + 2) * sizeof(**gangs));
        *demand = kb_xmalloc((nev + 2) * sizeof(**demand));
        (*gangs)[n] = (struct kb__plot_xy){0, 0};
        (*demand)[n++] = (struct kb__plot_xy){0, 0};
        double count = 0, asked = 0;
        for (size_t k = 0; k < nev;) {
                int64_t t = ev[k].t;
                for (; k < nev && ev[k].t == t; k++) {
                        count += ev[k].sign;
                        asked += ev[k].sign * kb__sim_fraction(rep, ev[k].req, res);
                }
                if (n == 1 && t == 0)
                        n = 0;
                (*gangs)[n] = (struct kb__plot_xy){t, count};
                (*demand)[n++] = (struct kb__plot_xy){t, KB_MAX(asked, 0)};
        }
        free(ev);
        return n;
}
