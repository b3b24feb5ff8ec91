/*
 * kbatch-sim --plot: a self-contained SVG of a timed run, written by hand
 * (no fonts, scripts or images to fetch), in two panels over one time axis:
 *
 *   cluster utilisation   one line per resource (cpu, memory, GPUs...):
 *                         the requests of pods holding room on nodes over
 *                         the nodes' allocatable;
 *   queue shares          one colour per queue: solid what its pods hold,
 *                         dashed what the quota plugin says it deserves, as
 *                         a share of the cluster's busiest resource (the one
 *                         with the highest average utilisation), since that
 *                         is the one the queues contend for.
 *
 * Lines are steps (a value holds until the next point).  A series with more
 * points than a few per pixel is drawn per pixel column as its first, lowest,
 * highest and last value there, which keeps spikes visible and the file
 * small.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

#define W        1000.0 /* the picture */
#define LEFT     70.0   /* plot area's left edge */
#define PW       700.0  /* plot area's width */
#define PH       240.0  /* each panel's height */
#define LEGEND_X (LEFT + PW + 20)

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

struct frame {
        double top;   /* the panel's top edge */
        int64_t tend; /* the time at the right edge */
};

static double x_of(const struct frame *f, int64_t t)
{
        return LEFT + PW * (double)t / (double)f->tend;
}

static double y_of(const struct frame *f, double frac)
{
        /* 0 to 105%: a line at 100% stays clear of the frame. */
        return f->top + PH * (1 - KB_MIN(KB_MAX(frac, 0), 1.05) / 1.05);
}

static void escaped(FILE *out, const char *s)
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

/* One step line of resource res of series s. */
static void line(FILE *out, const struct kb_sim_report *rep, const struct frame *f,
                 const struct kb_sim_series *s, int res, const char *color, bool dashed)
{
        if (!s->n)
                return;
        fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"", color,
                dashed ? "1.5" : "2", dashed ? " stroke-dasharray=\"6 4\"" : "");
        double prev_y = y_of(f, kb__sim_fraction(rep, &s->v[0].v, res));
        fprintf(out, "%.1f,%.1f", x_of(f, s->v[0].t), prev_y);
        bool dense = s->n > 4 * (size_t)PW;
        for (size_t k = 1; k < s->n && s->v[k].t <= f->tend;) {
                double x = x_of(f, s->v[k].t);
                if (!dense) {
                        double y = y_of(f, kb__sim_fraction(rep, &s->v[k].v, res));
                        fprintf(out, " %.1f,%.1f %.1f,%.1f", x, prev_y, x, y);
                        prev_y = y;
                        k++;
                        continue;
                }
                /* Every point in this pixel column: first, extremes, last. */
                int col = (int)x;
                double lo = prev_y, hi = prev_y, y = prev_y;
                fprintf(out, " %.1f,%.1f", x, prev_y);
                for (; k < s->n && s->v[k].t <= f->tend && (int)x_of(f, s->v[k].t) == col; k++) {
                        y = y_of(f, kb__sim_fraction(rep, &s->v[k].v, res));
                        lo = KB_MIN(lo, y);
                        hi = KB_MAX(hi, y);
                }
                fprintf(out, " %.1f,%.1f %.1f,%.1f %.1f,%.1f", x, hi, x, lo, x, y);
                prev_y = y;
        }
        fprintf(out, " %.1f,%.1f\"/>\n", LEFT + PW, prev_y);
}

/* A tick step of about a tenth of the span, at a round clock value. */
static int64_t tick_step(int64_t span)
{
        static const int64_t steps[] = {1,     2,     5,     10,    15,     30,     60,
                                        120,   300,   600,   900,   1800,   3600,   7200,
                                        10800, 21600, 43200, 86400, 172800, 604800, 2592000};
        for (size_t i = 0; i < KB_ARRAY_SIZE(steps); i++)
                if (span / (steps[i] * 1000000000LL) <= 10)
                        return steps[i] * 1000000000LL;
        return span / 10 + 1;
}

static void tick_label(int64_t t, int64_t step, char *buf, size_t n)
{
        int64_t s = t / 1000000000LL;
        if (step >= 60 * 1000000000LL)
                snprintf(buf, n, "%lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60));
        else
                kb__sim_clock_format(t, buf, n);
}

static void panel(FILE *out, const struct frame *f, const char *title)
{
        fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"15\" font-weight=\"bold\">", LEFT,
                f->top - 10);
        escaped(out, title);
        fprintf(out, "</text>\n");
        for (int p = 0; p <= 100; p += 25) {
                double y = y_of(f, p / 100.0);
                if (p == 100) {
                        fprintf(out,
                                "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
                                "stroke=\"#b0b0b0\"/>\n<text x=\"%.0f\" y=\"%.1f\" "
                                "text-anchor=\"end\" font-size=\"12\">100%%</text>\n",
                                LEFT, y, LEFT + PW, y, LEFT - 6, y + 4);
                        continue;
                }
                fprintf(out,
                        "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"%s\"/>\n"
                        "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"12\">%d%%"
                        "</text>\n",
                        LEFT, y, LEFT + PW, y, p ? "#e0e0e0" : "#404040", LEFT - 6, y + 4, p);
        }
        int64_t step = tick_step(f->tend);
        for (int64_t t = 0; t <= f->tend; t += step) {
                char label[32];
                double x = x_of(f, t);
                tick_label(t, step, label, sizeof(label));
                fprintf(
                    out,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n"
                    "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                    "font-size=\"12\">%s</text>\n",
                    x, f->top, x, f->top + PH, x, f->top + PH + 16, label);
        }
        fprintf(out,
                "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
                "stroke=\"#404040\"/>\n",
                LEFT, f->top, PW, PH);
}

static void legend(FILE *out, const struct frame *f, int row, const char *color, bool dashed,
                   const char *label)
{
        double y = f->top + 12 + 20 * row;
        fprintf(out,
                "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" "
                "stroke-width=\"2\"%s/>\n<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\">",
                LEGEND_X, y, LEGEND_X + 24, y, color, dashed ? " stroke-dasharray=\"6 4\"" : "",
                LEGEND_X + 30, y + 4);
        escaped(out, label);
        fprintf(out, "</text>\n");
}

int kb_sim_report_write_svg(const struct kb_sim_report *rep, const char *path, char *err,
                            size_t errlen)
{
        int res[KB_RES_MAX], nres = 0, busiest = KB_RES_CPU;
        /* The picture runs to the last session; its averages end where the
         * report's do (kb__sim_end), so the legend agrees with the table and
         * the JSON. */
        int64_t end = KB_MAX(rep->clock, rep->makespan);
        int64_t avg_end = kb__sim_end(rep);
        double best = -1;
        if (end <= 0)
                end = rep->period > 0 ? rep->period : 1000000000LL;
        if (avg_end <= 0)
                avg_end = end;
        for (int i = 0; i < kb_res_count(); i++)
                if (i != KB_RES_PODS && rep->total.q[i] > 0) {
                        res[nres++] = i;
                        double a = kb__sim_average(rep, &rep->used, i, avg_end);
                        if (a > best) {
                                best = a;
                                busiest = i;
                        }
                }
        FILE *out = fopen(path, "w");
        if (!out) {
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                return -errno;
        }
        size_t rows = KB_MAX((size_t)nres, rep->nqueues * 2);
        double h2 = KB_MAX(PH, 20.0 * (double)rows);
        double height = 70 + PH + 60 + h2 + 60;
        char ms[32], ck[32];
        kb__sim_clock_format(rep->makespan, ms, sizeof(ms));
        kb__sim_clock_format(rep->clock, ck, sizeof(ck));
        fprintf(out,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                "<text x=\"%.0f\" y=\"24\" font-size=\"17\" font-weight=\"bold\">kbatch-sim: "
                "utilisation and queue shares over time</text>\n"
                "<text x=\"%.0f\" y=\"44\" font-size=\"12\" fill=\"#404040\">%s %s, %ld "
                "sessions, a session every %gs; time since the start (H:MM)</text>\n",
                W, height, W, height, LEFT, LEFT,
                rep->stop == KB_SIM_DONE ? "every gang finished; makespan" : "stopped at",
                rep->stop == KB_SIM_DONE ? ms : ck, rep->sessions, (double)rep->period / 1e9);

        struct frame f1 = {80, end};
        panel(out, &f1, "Cluster utilisation (requests of pods on nodes / allocatable)");
        for (int i = 0; i < nres; i++) {
                char label[128];
                const char *color = palette[i % KB_ARRAY_SIZE(palette)];
                snprintf(label, sizeof(label), "%s (average %.0f%%)", kb_res_name(res[i]),
                         100 * kb__sim_average(rep, &rep->used, res[i], avg_end));
                line(out, rep, &f1, &rep->used, res[i], color, false);
                legend(out, &f1, i, color, false, label);
        }

        struct frame f2 = {f1.top + PH + 70, end};
        char title[160];
        snprintf(title, sizeof(title),
                 "Queue share of the cluster's %s (solid: held, dashed: deserved)",
                 kb_res_name(busiest));
        panel(out, &f2, title);
        int row = 0;
        for (size_t q = 0; q < rep->nqueues; q++) {
                char label[160];
                const char *color = palette[row / 2 % KB_ARRAY_SIZE(palette)];
                const struct kb_sim_queue *qq = &rep->queues[q];
                /* A queue that never held nor deserved anything is noise. */
                if (qq->allocated.n <= 1 && qq->deserved.n <= 1 &&
                    kb_res_is_empty(&qq->allocated.v[0].v) && kb_res_is_empty(&qq->deserved.v[0].v))
                        continue;
                line(out, rep, &f2, &qq->deserved, busiest, color, true);
                line(out, rep, &f2, &qq->allocated, busiest, color, false);
                snprintf(label, sizeof(label), "%s held (average %.0f%%)", qq->name,
                         100 * kb__sim_average(rep, &qq->allocated, busiest, avg_end));
                legend(out, &f2, row++, color, false, label);
                snprintf(label, sizeof(label), "%s deserved", qq->name);
                legend(out, &f2, row++, color, true, label);
        }
        fprintf(out, "</svg>\n");
        if (ferror(out) | fclose(out)) {
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                return -EIO;
        }
        return 0;
}
