/*
 * kbatch-sim --plot: a self-contained SVG of a timed run (svg.c draws), in
 * panels over one time axis, read top to bottom:
 *
 *   utilisation       one line per resource (cpu, memory, GPUs...): the
 *                     requests of pods holding room on nodes over the
 *                     nodes' allocatable;
 *   waiting gangs     per queue, how many gangs have arrived and not
 *                     started: a run whose gangs wait hours shows it here
 *                     even when the cluster is full and evenly shared;
 *   pending demand    per queue, what those gangs ask of the cluster's
 *                     busiest resource (the one with the highest average
 *                     utilisation, the one queues contend for), as a share
 *                     of the cluster (it may pass 100%);
 *   one small panel   per queue: filled, what its pods hold of that
 *                     resource; black dashes on top, what the quota plugin
 *                     says it deserves, so the dashes stay visible where
 *                     the two are equal.  The small panels share one scale.
 *
 * Queues keep one colour throughout.  Queues that never held, deserved or
 * waited for anything are left out.  Example: two queues, q0 holding the
 * whole cluster for an hour while q1's three gangs wait: the waiting panel
 * shows q1 at 3 for that hour, q0's small panel is full to 100% above its
 * dashes at 50%, q1's empty under its dashes at 50%.
 *
 * kb_sim_compare_write_svg overlays several runs (--compare-confs): the
 * gangs waiting, all queues together, one line per conf.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

#define W         1000.0 /* the picture */
#define LEFT      70.0   /* the big panels' left edge */
#define PW        620.0  /* their width */
#define PH        170.0  /* their height */
#define GAP       72.0   /* between panels: title, time labels */
#define LEGEND_X  (LEFT + PW + 18)
#define SMALL_H   100.0
#define SMALL_GAP 75.0

/* A step series of the report as fractions of the cluster's resource res. */
static size_t fractions(const struct kb_sim_report *rep, const struct kb_sim_series *s, int res,
                        struct kb__plot_xy **out)
{
        *out = kb_xmalloc((s->n + 1) * sizeof(**out));
        for (size_t k = 0; k < s->n; k++)
                (*out)[k] = (struct kb__plot_xy){s->v[k].t, kb__sim_fraction(rep, &s->v[k].v, res)};
        return s->n;
}

static double peak(const struct kb__plot_xy *p, size_t n)
{
        double m = 0;
        for (size_t k = 0; k < n; k++)
                m = KB_MAX(m, p[k].v);
        return m;
}

/* Legend rows for n entries beside a panel of height h: 18 px apart, or
 * closer when many (never under 13 px, the font's height). */
static double row_gap(size_t n, double h)
{
        return n <= 1 ? 18 : KB_MAX(13.0, KB_MIN(18.0, (h - 4) / (double)n));
}

struct queue_fig {
        const struct kb_sim_queue *q;
        struct kb__plot_xy *held, *deserved, *waiting, *demand;
        size_t nheld, ndeserved, nwaiting;
        struct kb__sim_waits w;
        size_t color; /* index into the palette */
};

/* Waiting gangs and pending demand, one line per queue. */
static void waiting_panels(FILE *out, const struct kb_sim_report *rep, struct queue_fig *qs,
                           size_t nq, double top, int64_t end, int busiest)
{
        double maxw = 0, maxd = 0;
        for (size_t i = 0; i < nq; i++) {
                maxw = KB_MAX(maxw, peak(qs[i].waiting, qs[i].nwaiting));
                maxd = KB_MAX(maxd, peak(qs[i].demand, qs[i].nwaiting));
        }
        char title[200];
        struct kb__plot_frame fw = {LEFT, top, PW, PH, end, kb__plot_top(maxw, false), false};
        kb__plot_axes(out, &fw, "Gangs waiting (arrived, not started), per queue", 10);
        snprintf(title, sizeof(title),
                 "Pending demand: %s asked by waiting gangs / the cluster's, per queue",
                 kb_res_name(busiest));
        struct kb__plot_frame fd = {LEFT, top + PH + GAP,           PW,  PH,
                                    end,  kb__plot_top(maxd, true), true};
        kb__plot_axes(out, &fd, title, 10);
        double gap = row_gap(nq, PH);
        for (size_t i = 0; i < nq; i++) {
                /* Queues waiting as many gangs would hide each other:
                 * each line sits up to 2 px off, in queue order. */
                double nudge = nq > 1 ? 4.0 * ((double)i / (double)(nq - 1) - 0.5) : 0;
                struct kb__plot_pen pen = {kb__plot_color(qs[i].color), 2,
                                           kb__plot_dash(qs[i].color), false, nudge};
                char label[200], p95[32], mx[32];
                kb__plot_steps(out, &fw, qs[i].waiting, qs[i].nwaiting, &pen);
                kb__plot_steps(out, &fd, qs[i].demand, qs[i].nwaiting, &pen);
                if (qs[i].w.started) {
                        kb__sim_clock_format((int64_t)(qs[i].w.p95 * 1e9), p95, sizeof(p95));
                        kb__sim_clock_format((int64_t)(qs[i].w.max * 1e9), mx, sizeof(mx));
                        snprintf(label, sizeof(label), "%s: wait p95 %s, max %s", qs[i].q->name,
                                 p95, mx);
                } else {
                        snprintf(label, sizeof(label), "%s: %zu gang(s), none started",
                                 qs[i].q->name, qs[i].w.gangs);
                }
                kb__plot_legend(out, LEGEND_X, top + 10 + gap * (double)i, &pen, label);
                snprintf(label, sizeof(label), "%s: peak %.0f%%", qs[i].q->name,
                         100 * peak(qs[i].demand, qs[i].nwaiting));
                kb__plot_legend(out, LEGEND_X, fd.top + 10 + gap * (double)i, &pen, label);
        }
}

/* One small panel per queue: held (filled) and deserved (dashes). */
static double share_panels(FILE *out, const struct kb_sim_report *rep, struct queue_fig *qs,
                           size_t nq, double top, int64_t end, int busiest, int64_t avg_end)
{
        size_t cols = nq <= 1 ? 1 : nq <= 4 ? 2 : nq <= 9 ? 3 : 4;
        double gapx = 60, sw = (W - LEFT - 20 - gapx * (double)(cols - 1)) / (double)cols;
        double maxv = 0;
        for (size_t i = 0; i < nq; i++)
                maxv = KB_MAX(maxv, KB_MAX(peak(qs[i].held, qs[i].nheld),
                                           peak(qs[i].deserved, qs[i].ndeserved)));
        double ymax = kb__plot_top(KB_MAX(maxv, 0.01) * 1.05, true);
        fprintf(out,
                "<text x=\"%.0f\" y=\"%.0f\" font-size=\"14\" font-weight=\"bold\">Each queue's "
                "share of the cluster's %s: filled, what it holds; black dashes, what it "
                "deserves</text>\n",
                LEFT, top, kb_res_name(busiest));
        top += 20 + 36;
        struct kb__plot_pen dpen = {"#111111", 1.6, "5 3", false, 0};
        for (size_t i = 0; i < nq; i++) {
                size_t r = i / cols, c = i % cols;
                struct kb__plot_frame f = {LEFT + (double)c * (sw + gapx),
                                           top + (double)r * (SMALL_H + SMALL_GAP),
                                           sw,
                                           SMALL_H,
                                           end,
                                           ymax,
                                           true};
                struct kb__plot_pen hpen = {kb__plot_color(qs[i].color), 1.5,
                                            kb__plot_dash(qs[i].color), true, 0};
                /* The name on a line of its own: four panels a row leave
                 * little width. */
                fprintf(out,
                        "<text x=\"%.0f\" y=\"%.0f\" font-size=\"13\" font-weight=\"bold\" "
                        "fill=\"%s\">",
                        f.left, f.top - 22, kb__plot_color(qs[i].color));
                kb__svg_escaped(out, qs[i].q->name);
                fprintf(out,
                        "</text>\n<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">average: "
                        "held %.0f%%, deserved %.0f%%</text>\n",
                        f.left, f.top - 7,
                        100 * kb__sim_average(rep, &qs[i].q->allocated, busiest, avg_end),
                        100 * kb__sim_average(rep, &qs[i].q->deserved, busiest, avg_end));
                kb__plot_axes(out, &f, NULL, 4);
                kb__plot_steps(out, &f, qs[i].held, qs[i].nheld, &hpen);
                kb__plot_steps(out, &f, qs[i].deserved, qs[i].ndeserved, &dpen);
        }
        size_t rows = (nq + cols - 1) / cols;
        return top + (double)rows * (SMALL_H + SMALL_GAP);
}

/* Leaves out queues that never held, deserved or waited for anything. */
static bool shown(const struct kb_sim_queue *q, const struct kb__sim_waits *w)
{
        return w->gangs || q->allocated.n > 1 || q->deserved.n > 1 ||
               (q->allocated.n && !kb_res_is_empty(&q->allocated.v[0].v)) ||
               (q->deserved.n && !kb_res_is_empty(&q->deserved.v[0].v));
}

/* The resources drawn, and the busiest of them (highest average use). */
static int resources(const struct kb_sim_report *rep, int64_t avg_end, int *res, int *busiest)
{
        int nres = 0;
        double best = -1;
        *busiest = KB_RES_CPU;
        for (int i = 0; i < kb_res_count(); i++)
                if (i != KB_RES_PODS && rep->total.q[i] > 0) {
                        res[nres++] = i;
                        double a = kb__sim_average(rep, &rep->used, i, avg_end);
                        if (a > best) {
                                best = a;
                                *busiest = i;
                        }
                }
        return nres;
}

/* The time the picture runs to, and where its averages end. */
static int64_t span(const struct kb_sim_report *rep, int64_t *avg_end)
{
        /* The picture runs to the last session; its averages end where the
         * report's do (kb__sim_end), so the legend agrees with the table and
         * the JSON. */
        int64_t end = KB_MAX(rep->clock, rep->makespan);
        if (end <= 0)
                end = rep->period > 0 ? rep->period : 1000000000LL;
        *avg_end = kb__sim_end(rep);
        if (*avg_end <= 0)
                *avg_end = end;
        return end;
}

static int close_svg(FILE *out, const char *path, char *err, size_t errlen)
{
        fprintf(out, "</svg>\n");
        if (ferror(out) | fclose(out)) {
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                return -EIO;
        }
        return 0;
}

static FILE *open_svg(const char *path, double height, char *err, size_t errlen)
{
        FILE *out = fopen(path, "w");
        if (!out) {
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                return NULL;
        }
        fprintf(out,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                W, height, W, height);
        return out;
}

int kb_sim_report_write_svg(const struct kb_sim_report *rep, const char *path, char *err,
                            size_t errlen)
{
        int res[KB_RES_MAX], busiest;
        int64_t avg_end, end = span(rep, &avg_end);
        int nres = resources(rep, avg_end, res, &busiest);
        struct queue_fig *qs = kb_xcalloc(rep->nqueues + 1, sizeof(*qs));
        size_t nq = 0;
        for (size_t q = 0; q < rep->nqueues; q++) {
                struct queue_fig *x = &qs[nq];
                x->q = &rep->queues[q];
                x->w = kb__sim_queue_waits(rep, x->q->name);
                if (!shown(x->q, &x->w))
                        continue;
                x->color = nq;
                x->nheld = fractions(rep, &x->q->allocated, busiest, &x->held);
                x->ndeserved = fractions(rep, &x->q->deserved, busiest, &x->deserved);
                x->nwaiting = kb__sim_waiting(rep, x->q->name, busiest, &x->waiting, &x->demand);
                nq++;
        }
        size_t cols = nq <= 1 ? 1 : nq <= 4 ? 2 : nq <= 9 ? 3 : 4;
        size_t rows = (nq + cols - 1) / cols;
        double top = 105,
               height = top + 3 * (PH + GAP) + 26 + (double)rows * (SMALL_H + SMALL_GAP) - 20;
        int rc = 0;
        FILE *out = open_svg(path, height, err, errlen);
        if (!out) {
                rc = -errno;
                goto out;
        }

        struct kb_sim_jobs j;
        char ms[32], ck[32], p95[32], mx[32];
        kb_sim_report_jobs(rep, &j);
        kb__sim_clock_format(rep->makespan, ms, sizeof(ms));
        kb__sim_clock_format(rep->clock, ck, sizeof(ck));
        kb__sim_clock_format((int64_t)(j.wait_p95 * 1e9), p95, sizeof(p95));
        kb__sim_clock_format((int64_t)(j.wait_max * 1e9), mx, sizeof(mx));
        fprintf(out,
                "<text x=\"%.0f\" y=\"26\" font-size=\"17\" font-weight=\"bold\">kbatch-sim: "
                "utilisation, waiting and queue shares over time</text>\n"
                "<text x=\"%.0f\" y=\"46\" font-size=\"12\" fill=\"#303030\">%s %s, %ld "
                "sessions, a session every %gs; time since the start (H:MM)</text>\n"
                "<text x=\"%.0f\" y=\"63\" font-size=\"12\" fill=\"#303030\">%zu gang(s) "
                "finished; wait p95 %s, max %s; %zu unfinished</text>\n",
                LEFT, LEFT,
                rep->stop == KB_SIM_DONE ? "every gang finished; makespan" : "stopped at",
                rep->stop == KB_SIM_DONE ? ms : ck, rep->sessions, (double)rep->period / 1e9, LEFT,
                j.finished, p95, mx, kb_sim_report_unfinished(rep));

        struct kb__plot_frame f1 = {LEFT, top, PW, PH, end, 1.05, true};
        kb__plot_axes(out, &f1, "Cluster utilisation (requests of pods on nodes / allocatable)",
                      10);
        for (int i = 0; i < nres; i++) {
                char label[128];
                struct kb__plot_xy *p;
                size_t n = fractions(rep, &rep->used, res[i], &p);
                /* Resources in greys and black: the colours are the queues'. */
                static const char *const greys[] = {"#000000", "#707070", "#a0a0a0"};
                struct kb__plot_pen pen = {greys[i % 3], 2, i < 3 ? NULL : "4 3", false, 0};
                snprintf(label, sizeof(label), "%s (average %.0f%%)", kb_res_name(res[i]),
                         100 * kb__sim_average(rep, &rep->used, res[i], avg_end));
                kb__plot_steps(out, &f1, p, n, &pen);
                kb__plot_legend(out, LEGEND_X, f1.top + 10 + 18 * i, &pen, label);
                free(p);
        }
        waiting_panels(out, rep, qs, nq, top + PH + GAP, end, busiest);
        share_panels(out, rep, qs, nq, top + 3 * (PH + GAP) - 30, end, busiest, avg_end);
        rc = close_svg(out, path, err, errlen);
out:
        for (size_t i = 0; i < nq; i++) {
                free(qs[i].held);
                free(qs[i].deserved);
                free(qs[i].waiting);
                free(qs[i].demand);
        }
        free(qs);
        return rc;
}

int kb_sim_compare_write_svg(const char *const *names, const struct kb_sim_report *reps, size_t n,
                             const char *path, char *err, size_t errlen)
{
        int64_t end = 1, avg_end;
        double maxw = 0;
        struct kb__plot_xy **waiting = kb_xcalloc(n + 1, sizeof(*waiting));
        struct kb__plot_xy **demand = kb_xcalloc(n + 1, sizeof(*demand));
        size_t *nw = kb_xcalloc(n + 1, sizeof(*nw));
        for (size_t i = 0; i < n; i++) {
                end = KB_MAX(end, span(&reps[i], &avg_end));
                nw[i] = kb__sim_waiting(&reps[i], NULL, KB_RES_CPU, &waiting[i], &demand[i]);
                maxw = KB_MAX(maxw, peak(waiting[i], nw[i]));
        }
        double top = 80, height = top + PH + 40;
        int rc = 0;
        FILE *out = open_svg(path, height, err, errlen);
        if (!out) {
                rc = -errno;
                goto out;
        }
        fprintf(out,
                "<text x=\"%.0f\" y=\"26\" font-size=\"17\" font-weight=\"bold\">kbatch-sim "
                "--compare-confs: the same input under %zu conf(s)</text>\n"
                "<text x=\"%.0f\" y=\"46\" font-size=\"12\" fill=\"#303030\">Gangs waiting "
                "(arrived, not started), all queues together; time since the start "
                "(H:MM)</text>\n",
                LEFT, n, LEFT);
        struct kb__plot_frame f = {LEFT, top, PW, PH, end, kb__plot_top(maxw, false), false};
        kb__plot_axes(out, &f, "Queue length: gangs waiting, one line per conf", 10);
        double gap = row_gap(n * 2, PH);
        for (size_t i = 0; i < n; i++) {
                struct kb_sim_jobs j;
                char label[256], mean[32];
                double nudge = n > 1 ? 4.0 * ((double)i / (double)(n - 1) - 0.5) : 0;
                struct kb__plot_pen pen = {kb__plot_color(i), 2, kb__plot_dash(i), false, nudge};
                kb_sim_report_jobs(&reps[i], &j);
                kb__sim_clock_format((int64_t)(j.wait_mean * 1e9), mean, sizeof(mean));
                kb__plot_steps(out, &f, waiting[i], nw[i], &pen);
                snprintf(label, sizeof(label), "%s", names[i]);
                kb__plot_legend(out, LEGEND_X, top + 10 + gap * (double)(2 * i), &pen, label);
                snprintf(label, sizeof(label), "mean wait %s, peak %.0f waiting", mean,
                         peak(waiting[i], nw[i]));
                fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" fill=\"#404040\">",
                        LEGEND_X + 30, top + 14 + gap * (double)(2 * i + 1));
                kb__svg_escaped(out, label);
                fprintf(out, "</text>\n");
        }
        rc = close_svg(out, path, err, errlen);
out:
        for (size_t i = 0; i < n; i++) {
                free(waiting[i]);
                free(demand[i]);
        }
        free(waiting);
        free(demand);
        free(nw);
        return rc;
}
