/*
 * A timed run's figures, for people (a table), for tools (the
 * "simulation" member of kbatch-sim's JSON), and several runs side by
 * side (csv.c writes the CSV files, plot.c the SVG).
 *
 * What is measured, from struct kb_sim_report:
 *   utilisation   per resource, the requests of the pods holding room on
 *                 nodes over the nodes' allocatable, a step function of
 *                 time; its average is weighted by time over [0, end],
 *                 end being the makespan when every gang finished, else
 *                 the last session's time;
 *   share         per queue and resource, what the queue's pods hold over
 *                 the cluster's allocatable; deserved likewise for what
 *                 the quota plugin (proportion, capacity) said it deserves;
 *   wait          per gang, start - arrival; per queue its nearest-rank
 *                 p50 and p95, max and mean over the gangs that started.
 * Example: waits 0, 0, 60, 600 s: p50 is the value at rank ceil(0.5*4) = 2,
 * 0 s; p95 at rank ceil(0.95*4) = 4, 600 s; max 600 s; mean 165 s.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

#define NS_PER_S 1e9

int kb__sim_resources(const struct kb_sim_report *rep, int *idx)
{
        int n = 0;
        for (int i = 0; i < kb_res_count(); i++)
                if (i != KB_RES_PODS && rep->total.q[i] > 0)
                        idx[n++] = i;
        return n;
}

int64_t kb__sim_end(const struct kb_sim_report *rep)
{
        return rep->stop == KB_SIM_DONE ? rep->makespan : rep->clock;
}

double kb__sim_fraction(const struct kb_sim_report *rep, const struct kb_res *v, int i)
{
        return rep->total.q[i] > 0 ? (double)v->q[i] / (double)rep->total.q[i] : 0;
}

double kb__sim_average(const struct kb_sim_report *rep, const struct kb_sim_series *s, int i,
                       int64_t end)
{
        if (!s->n)
                return 0;
        if (end <= 0)
                return kb__sim_fraction(rep, &s->v[0].v, i);
        double sum = 0;
        for (size_t k = 0; k < s->n && s->v[k].t < end; k++) {
                int64_t until = k + 1 < s->n ? KB_MIN(s->v[k + 1].t, end) : end;
                sum += kb__sim_fraction(rep, &s->v[k].v, i) * (double)(until - s->v[k].t);
        }
        return sum / (double)end;
}

static double series_peak(const struct kb_sim_report *rep, const struct kb_sim_series *s, int i,
                          int64_t end)
{
        double peak = 0;
        for (size_t k = 0; k < s->n && (k == 0 || s->v[k].t <= end); k++)
                peak = KB_MAX(peak, kb__sim_fraction(rep, &s->v[k].v, i));
        return peak;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

struct kb__sim_waits kb__sim_queue_waits(const struct kb_sim_report *rep, const char *queue)
{
        struct kb__sim_waits w = {0};
        double *v = kb_xmalloc((rep->ngangs + 1) * sizeof(*v));
        for (size_t i = 0; i < rep->ngangs; i++) {
                const struct kb_sim_gang *g = &rep->gangs[i];
                if (g->prior || strcmp(g->queue, queue))
                        continue;
                w.gangs++;
                w.finished += g->end >= 0;
                if (g->start >= 0)
                        v[w.started++] = (double)(g->start - g->arrival) / NS_PER_S;
        }
        if (w.started) {
                qsort(v, w.started, sizeof(*v), cmp_double);
                w.p50 = kb_sim_percentile(v, w.started, 50);
                w.p95 = kb_sim_percentile(v, w.started, 95);
                w.max = v[w.started - 1];
                for (size_t i = 0; i < w.started; i++)
                        w.mean += v[i];
                w.mean /= (double)w.started;
        }
        free(v);
        return w;
}

/* Asks half the cluster or more of some resource (the pods slot aside). */
static bool wide(const struct kb_sim_report *rep, const struct kb_sim_gang *g)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (i != KB_RES_PODS && rep->total.q[i] > 0 &&
                    g->requests.q[i] >= rep->total.q[i] - rep->total.q[i] / 2)
                        return true;
        return false;
}

void kb_sim_report_jobs(const struct kb_sim_report *rep, struct kb_sim_jobs *j)
{
        memset(j, 0, sizeof(*j));
        double *v = kb_xmalloc((rep->ngangs + 1) * sizeof(*v));
        double slowdown = 0;
        for (size_t i = 0; i < rep->ngangs; i++) {
                const struct kb_sim_gang *g = &rep->gangs[i];
                if (g->prior || g->end < 0 || g->start < 0)
                        continue;
                double wait = (double)(g->start - g->arrival) / NS_PER_S;
                double run = (double)(g->end - g->start) / NS_PER_S;
                v[j->finished++] = wait;
                slowdown += KB_MAX(1.0, (wait + run) / KB_MAX(run, 10.0));
                if (wide(rep, g)) {
                        j->wide++;
                        j->wide_wait_max = KB_MAX(j->wide_wait_max, wait);
                }
        }
        if (j->finished) {
                for (size_t i = 0; i < j->finished; i++)
                        j->wait_mean += v[i];
                j->wait_mean /= (double)j->finished;
                j->slowdown_mean = slowdown / (double)j->finished;
                qsort(v, j->finished, sizeof(*v), cmp_double);
                j->wait_p50 = kb_sim_percentile(v, j->finished, 50);
                j->wait_p95 = kb_sim_percentile(v, j->finished, 95);
                j->wait_p99 = kb_sim_percentile(v, j->finished, 99);
                j->wait_max = v[j->finished - 1];
        }
        free(v);
}

static const char *stop_name(enum kb_sim_stop s)
{
        switch (s) {
        case KB_SIM_DONE:
                return "Done";
        case KB_SIM_STUCK:
                return "Stuck";
        case KB_SIM_TIME_LIMIT:
                return "TimeLimit";
        default:
                return "SessionLimit";
        }
}

/* ---- JSON ------------------------------------------------------------------------ */

/* A number with at most `decimals` decimals, trailing zeros dropped. */
static struct kb_value *num(double v, int decimals)
{
        char buf[64];
        kb_format_decimal(v, decimals, buf, sizeof(buf));
        return kb_value_new_number(buf);
}

static struct kb_value *seconds(int64_t ns)
{
        return ns < 0 ? kb_value_new(KB_VNULL) : num((double)ns / NS_PER_S, 3);
}

/* [{"time": 0, "cpu": 0.5, "memory": 0.25}, ...] */
static struct kb_value *series_json(const struct kb_sim_report *rep, const struct kb_sim_series *s,
                                    const int *idx, int nidx)
{
        struct kb_value *arr = kb_value_new(KB_VARRAY);
        for (size_t k = 0; k < s->n; k++) {
                struct kb_value *p = kb_value_new(KB_VOBJECT);
                kb_value_set(p, "time", seconds(s->v[k].t));
                for (int i = 0; i < nidx; i++)
                        kb_value_set(p, kb_res_name(idx[i]),
                                     num(kb__sim_fraction(rep, &s->v[k].v, idx[i]), 4));
                kb_value_append(arr, p);
        }
        return arr;
}

static struct kb_value *averages_json(const struct kb_sim_report *rep,
                                      const struct kb_sim_series *s, const int *idx, int nidx,
                                      bool peak)
{
        struct kb_value *m = kb_value_new(KB_VOBJECT);
        int64_t end = kb__sim_end(rep);
        for (int i = 0; i < nidx; i++)
                kb_value_set(m, kb_res_name(idx[i]),
                             num(peak ? series_peak(rep, s, idx[i], end)
                                      : kb__sim_average(rep, s, idx[i], end),
                                 4));
        return m;
}

static struct kb_value *gang_json(const struct kb_sim_gang *g)
{
        struct kb_value *o = kb_value_new(KB_VOBJECT);
        kb_value_set(o, g->lone ? "pod" : "podGroup", kb_value_new_string(g->name));
        kb_value_set(o, "queue", kb_value_new_string(g->queue));
        if (!g->lone) {
                kb_value_set(o, "pods", kb_value_new_int(g->pods));
                kb_value_set(o, "minMember", kb_value_new_int(g->min_member));
        }
        kb_value_set(o, "arrivalTime", seconds(g->arrival));
        kb_value_set(o, "startTime", seconds(g->start));
        kb_value_set(o, "endTime", seconds(g->end));
        kb_value_set(o, "waitSeconds", seconds(g->start >= 0 ? g->start - g->arrival : -1));
        kb_value_set(o, "evictions", kb_value_new_int(g->evictions));
        if (g->start < 0)
                kb_value_set(o, "why", kb_value_new_string(g->why ? g->why : "never placed"));
        return o;
}

static struct kb_value *res_quantities(const struct kb_res *r, const int *idx, int nidx)
{
        struct kb_value *m = kb_value_new(KB_VOBJECT);
        for (int i = 0; i < nidx; i++) {
                char q[48];
                kb_quantity_format(r->q[idx[i]], kb_res_is_milli(idx[i]), kb_res_is_bytes(idx[i]),
                                   q, sizeof(q));
                kb_value_set(m, kb_res_name(idx[i]), kb_value_new_string(q));
        }
        return m;
}

static struct kb_value *jobs_json(const struct kb_sim_jobs *j)
{
        struct kb_value *jo = kb_value_new(KB_VOBJECT), *jw = kb_value_new(KB_VOBJECT);
        kb_value_set(jo, "finished", kb_value_new_int((int64_t)j->finished));
        kb_value_set(jw, "mean", num(j->wait_mean, 3));
        kb_value_set(jw, "p50", num(j->wait_p50, 3));
        kb_value_set(jw, "p95", num(j->wait_p95, 3));
        kb_value_set(jw, "p99", num(j->wait_p99, 3));
        kb_value_set(jw, "max", num(j->wait_max, 3));
        kb_value_set(jo, "waitSeconds", jw);
        kb_value_set(jo, "meanBoundedSlowdown", num(j->slowdown_mean, 3));
        kb_value_set(jo, "wide", kb_value_new_int((int64_t)j->wide));
        kb_value_set(jo, "wideMaxWaitSeconds", num(j->wide_wait_max, 3));
        return jo;
}

struct kb_value *kb_sim_report_to_json(const struct kb_sim_report *rep)
{
        int idx[KB_RES_MAX];
        int nidx = kb__sim_resources(rep, idx);
        char ts[64];
        struct kb_value *o = kb_value_new(KB_VOBJECT);
        kb_format_time(rep->origin, ts, sizeof(ts));
        kb_value_set(o, "start", kb_value_new_string(ts));
        kb_value_set(o, "periodSeconds", seconds(rep->period));
        kb_value_set(o, "sessions", kb_value_new_int(rep->sessions));
        kb_value_set(o, "stop", kb_value_new_string(stop_name(rep->stop)));
        kb_value_set(o, "timeSeconds", seconds(rep->clock));
        kb_value_set(o, "makespanSeconds", seconds(rep->makespan));
        kb_value_set(o, "wallSeconds", num(rep->wall, 3));
        kb_value_set(o, "capacity", res_quantities(&rep->total, idx, nidx));
        kb_value_set(o, "defaultRuntimeSeconds", seconds(rep->default_runtime));
        kb_value_set(o, "defaultRuntimePods", kb_value_new_int((int64_t)rep->default_runtime_pods));
        kb_value_set(o, "utilization", series_json(rep, &rep->used, idx, nidx));
        kb_value_set(o, "averageUtilization", averages_json(rep, &rep->used, idx, nidx, false));
        kb_value_set(o, "peakUtilization", averages_json(rep, &rep->used, idx, nidx, true));
        struct kb_sim_jobs j;
        kb_sim_report_jobs(rep, &j);
        kb_value_set(o, "finishedGangs", jobs_json(&j));

        struct kb_value *queues = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < rep->nqueues; i++) {
                const struct kb_sim_queue *q = &rep->queues[i];
                struct kb__sim_waits w = kb__sim_queue_waits(rep, q->name);
                struct kb_value *qo = kb_value_new(KB_VOBJECT);
                struct kb_value *wo = kb_value_new(KB_VOBJECT);
                kb_value_set(qo, "name", kb_value_new_string(q->name));
                kb_value_set(qo, "gangs", kb_value_new_int((int64_t)w.gangs));
                kb_value_set(qo, "started", kb_value_new_int((int64_t)w.started));
                kb_value_set(qo, "finished", kb_value_new_int((int64_t)w.finished));
                kb_value_set(wo, "p50", w.started ? num(w.p50, 3) : kb_value_new(KB_VNULL));
                kb_value_set(wo, "p95", w.started ? num(w.p95, 3) : kb_value_new(KB_VNULL));
                kb_value_set(wo, "max", w.started ? num(w.max, 3) : kb_value_new(KB_VNULL));
                kb_value_set(wo, "mean", w.started ? num(w.mean, 3) : kb_value_new(KB_VNULL));
                kb_value_set(qo, "waitSeconds", wo);
                kb_value_set(qo, "share", series_json(rep, &q->allocated, idx, nidx));
                kb_value_set(qo, "deserved", series_json(rep, &q->deserved, idx, nidx));
                kb_value_set(qo, "averageShare",
                             averages_json(rep, &q->allocated, idx, nidx, false));
                kb_value_set(qo, "averageDeserved",
                             averages_json(rep, &q->deserved, idx, nidx, false));
                kb_value_append(queues, qo);
        }
        kb_value_set(o, "queues", queues);
        struct kb_value *pgs = kb_value_new(KB_VARRAY), *pods = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < rep->ngangs; i++)
                if (!rep->gangs[i].prior)
                        kb_value_append(rep->gangs[i].lone ? pods : pgs, gang_json(&rep->gangs[i]));
        kb_value_set(o, "podGroups", pgs);
        kb_value_set(o, "pods", pods);
        return o;
}

/* ---- the table ----------------------------------------------------------------- */

static char *pct(double f)
{
        return kb_xasprintf("%.0f%%", f * 100);
}

static char *clock_text(int64_t ns)
{
        char buf[32];
        kb__sim_clock_format(ns, buf, sizeof(buf));
        return kb_xstrdup(buf);
}

static char *wait_text(double s)
{
        char buf[32];
        kb_duration_format((int64_t)llround(s * NS_PER_S), buf, sizeof(buf));
        return kb_xstrdup(buf);
}

/* Gangs by arrival, then as the report lists them (PodGroups, then pods,
 * each by name). */
static int cmp_arrival(const void *a, const void *b)
{
        const struct kb_sim_gang *x = *(const struct kb_sim_gang *const *)a;
        const struct kb_sim_gang *y = *(const struct kb_sim_gang *const *)b;
        if (x->arrival != y->arrival)
                return x->arrival < y->arrival ? -1 : 1;
        return x < y ? -1 : x > y;
}

size_t kb_sim_report_unfinished(const struct kb_sim_report *rep)
{
        size_t n = 0;
        for (size_t i = 0; i < rep->ngangs; i++)
                n += !rep->gangs[i].prior && rep->gangs[i].end < 0;
        return n;
}

static void print_report(const struct kb_sim_report *rep, bool gangs, FILE *out)
{
        int idx[KB_RES_MAX];
        int nidx = kb__sim_resources(rep, idx);
        int64_t end = kb__sim_end(rep);
        char ms[32], ck[32];
        size_t unfinished = kb_sim_report_unfinished(rep);
        kb__sim_clock_format(rep->makespan, ms, sizeof(ms));
        kb__sim_clock_format(rep->clock, ck, sizeof(ck));
        fprintf(out, "Simulated %s in %ld session(s) (%.3fs): ", ck, rep->sessions, rep->wall);
        switch (rep->stop) {
        case KB_SIM_DONE:
                fprintf(out, "every gang finished; makespan %s\n", ms);
                break;
        case KB_SIM_STUCK:
                fprintf(out,
                        "%zu gang(s) can never run (nothing left would change); the others "
                        "finished by %s\n",
                        unfinished, ms);
                break;
        case KB_SIM_TIME_LIMIT:
                fprintf(out, "stopped at the time limit with %zu gang(s) unfinished\n", unfinished);
                break;
        default:
                fprintf(out, "stopped at the session limit with %zu gang(s) unfinished\n",
                        unfinished);
        }
        if (rep->default_runtime_pods) {
                char d[32];
                kb_duration_format(rep->default_runtime, d, sizeof(d));
                fprintf(out, "%zu pod(s) without kbatch.io/runtime ran the default %s.\n",
                        rep->default_runtime_pods, d);
        }

        struct kb_table t;
        fprintf(out, "\nUtilization (%s)\n",
                rep->stop == KB_SIM_DONE ? "over the makespan" : "until the last session");
        kb__table_init(&t, 3, "RESOURCE", "AVERAGE", "PEAK");
        for (int i = 0; i < nidx; i++) {
                char *c[3] = {kb_xstrdup(kb_res_name(idx[i])),
                              pct(kb__sim_average(rep, &rep->used, idx[i], end)),
                              pct(series_peak(rep, &rep->used, idx[i], end))};
                kb__table_row_take(&t, c);
        }
        kb__table_print(&t, out, "  ");

        struct kb_sim_jobs j;
        kb_sim_report_jobs(rep, &j);
        if (j.finished) {
                char *w[6] = {wait_text(j.wait_mean), wait_text(j.wait_p50), wait_text(j.wait_p95),
                              wait_text(j.wait_p99),  wait_text(j.wait_max),
                              wait_text(j.wide_wait_max)};
                fprintf(out,
                        "\nFinished gangs: %zu; wait mean %s (%.1fs), p50 %s, p95 %s, p99 %s, "
                        "max %s (%.0fs)\n"
                        "  mean bounded slowdown %.2f (runs under 10s count as 10s)\n"
                        "  wide gangs (half the cluster or more): %zu, longest wait %s (%.0fs)\n",
                        j.finished, w[0], j.wait_mean, w[1], w[2], w[3], w[4], j.wait_max,
                        j.slowdown_mean, j.wide, w[5], j.wide_wait_max);
                for (int i = 0; i < 6; i++)
                        free(w[i]);
        }

        fprintf(out, "\nQueues (wait = start - arrival; share = average of the cluster held)\n");
        kb__table_init(&t, 9, "QUEUE", "GANGS", "FINISHED", "WAIT P50", "WAIT P95", "WAIT MAX",
                       "SHARE", "DESERVED", "");
        for (size_t i = 0; i < rep->nqueues; i++) {
                const struct kb_sim_queue *q = &rep->queues[i];
                struct kb__sim_waits w = kb__sim_queue_waits(rep, q->name);
                struct kb_buf share, des;
                kb_buf_init(&share);
                kb_buf_init(&des);
                for (int k = 0; k < nidx; k++) {
                        kb_buf_printf(&share, "%s%s %.0f%%", k ? ", " : "", kb_res_name(idx[k]),
                                      100 * kb__sim_average(rep, &q->allocated, idx[k], end));
                        kb_buf_printf(&des, "%s%s %.0f%%", k ? ", " : "", kb_res_name(idx[k]),
                                      100 * kb__sim_average(rep, &q->deserved, idx[k], end));
                }
                char *c[9] = {kb_xstrdup(q->name),
                              kb_xasprintf("%zu", w.gangs),
                              kb_xasprintf("%zu", w.finished),
                              w.started ? wait_text(w.p50) : kb_xstrdup("-"),
                              w.started ? wait_text(w.p95) : kb_xstrdup("-"),
                              w.started ? wait_text(w.max) : kb_xstrdup("-"),
                              kb_buf_detach(&share),
                              kb_buf_detach(&des),
                              NULL};
                kb__table_row_take(&t, c);
        }
        kb__table_print(&t, out, "  ");
        if (!gangs) {
                fputc('\n', out);
                return;
        }

        fprintf(out, "\nGangs by arrival (times since the start, H:MM:SS)\n");
        kb__table_init(&t, 8, "GANG", "QUEUE", "PODS", "ARRIVAL", "START", "END", "WAIT", "WHY");
        const struct kb_sim_gang **order = kb_xmalloc((rep->ngangs + 1) * sizeof(*order));
        for (size_t i = 0; i < rep->ngangs; i++)
                order[i] = &rep->gangs[i];
        if (rep->ngangs)
                qsort(order, rep->ngangs, sizeof(*order), cmp_arrival);
        for (size_t i = 0; i < rep->ngangs; i++) {
                const struct kb_sim_gang *g = order[i];
                if (g->prior)
                        continue;
                char *c[8] = {kb_xasprintf("%s%s", g->lone ? "pod " : "", g->name),
                              kb_xstrdup(g->queue),
                              kb_xasprintf("%d", g->pods),
                              clock_text(g->arrival),
                              clock_text(g->start),
                              clock_text(g->end),
                              g->start >= 0 ? wait_text((double)(g->start - g->arrival) / NS_PER_S)
                                            : kb_xstrdup("-"),
                              g->start < 0 ? kb_xstrdup(g->why ? g->why : "never placed") : NULL};
                kb__table_row_take(&t, c);
        }
        kb__table_print(&t, out, "  ");
        free(order);
        fputc('\n', out);
}

void kb_sim_report_print_table(const struct kb_sim_report *rep, FILE *out)
{
        print_report(rep, true, out);
}

void kb_sim_report_print_summary(const struct kb_sim_report *rep, FILE *out)
{
        print_report(rep, false, out);
}

/* ---- several confs, side by side (--compare-confs) --------------------------- */

static char *fmt_num(const char *fmt, double v)
{
        return kb_xasprintf(fmt, v);
}

void kb_sim_compare_print(const char *const *names, const struct kb_sim_report *reps, size_t n,
                          bool json, FILE *out)
{
        struct kb_sim_jobs *j = kb_xcalloc(n + 1, sizeof(*j));
        for (size_t i = 0; i < n; i++)
                kb_sim_report_jobs(&reps[i], &j[i]);
        if (json) {
                struct kb_value *doc = kb_value_new(KB_VOBJECT), *list = kb_value_new(KB_VARRAY);
                for (size_t i = 0; i < n; i++) {
                        int idx[KB_RES_MAX];
                        int nidx = kb__sim_resources(&reps[i], idx);
                        struct kb_value *o = kb_value_new(KB_VOBJECT);
                        kb_value_set(o, "conf", kb_value_new_string(names[i]));
                        kb_value_set(o, "stop", kb_value_new_string(stop_name(reps[i].stop)));
                        kb_value_set(o, "sessions", kb_value_new_int(reps[i].sessions));
                        kb_value_set(o, "wallSeconds", num(reps[i].wall, 3));
                        kb_value_set(o, "makespanSeconds", seconds(reps[i].makespan));
                        kb_value_set(o, "averageUtilization",
                                     averages_json(&reps[i], &reps[i].used, idx, nidx, false));
                        kb_value_set(o, "finishedGangs", jobs_json(&j[i]));
                        kb_value_append(list, o);
                }
                kb_value_set(doc, "compare", list);
                char *text = kb_json_emit(doc, true);
                fprintf(out, "%s\n", text);
                free(text);
                kb_value_free(doc);
                free(j);
                return;
        }
        struct kb_table t;
        kb_table_init(&t, n + 1);
        char **cells = kb_xcalloc(n + 2, sizeof(*cells));
        cells[0] = kb_xstrdup("");
        for (size_t i = 0; i < n; i++)
                cells[i + 1] = kb_xstrdup(names[i]);
        kb__table_row_take(&t, cells);
        static const char *const rows[] = {
            "gangs finished", "wait mean",    "wait p50",         "wait p95",
            "wait p99",       "wait max",     "bounded slowdown", "wide gangs",
            "wide wait max",  "utilization",  "makespan",         "sessions",
        };
        for (size_t r = 0; r < KB_ARRAY_SIZE(rows); r++) {
                cells[0] = kb_xstrdup(rows[r]);
                for (size_t i = 0; i < n; i++) {
                        const struct kb_sim_jobs *x = &j[i];
                        const struct kb_sim_report *rp = &reps[i];
                        char ms[32];
                        switch (r) {
                        case 0: cells[i + 1] = kb_xasprintf("%zu", x->finished); break;
                        case 1: cells[i + 1] = fmt_num("%.1fs", x->wait_mean); break;
                        case 2: cells[i + 1] = fmt_num("%.0fs", x->wait_p50); break;
                        case 3: cells[i + 1] = fmt_num("%.0fs", x->wait_p95); break;
                        case 4: cells[i + 1] = fmt_num("%.0fs", x->wait_p99); break;
                        case 5: cells[i + 1] = fmt_num("%.0fs", x->wait_max); break;
                        case 6: cells[i + 1] = fmt_num("%.2f", x->slowdown_mean); break;
                        case 7: cells[i + 1] = kb_xasprintf("%zu", x->wide); break;
                        case 8: cells[i + 1] = fmt_num("%.0fs", x->wide_wait_max); break;
                        case 9: {
                                int idx[KB_RES_MAX];
                                int nidx = kb__sim_resources(rp, idx);
                                cells[i + 1] = nidx ? pct(kb__sim_average(rp, &rp->used, idx[0],
                                                                         kb__sim_end(rp)))
                                                    : kb_xstrdup("-");
                                break;
                        }
                        case 10:
                                kb__sim_clock_format(rp->makespan, ms, sizeof(ms));
                                cells[i + 1] = kb_xstrdup(ms);
                                break;
                        default: cells[i + 1] = kb_xasprintf("%ld", rp->sessions); break;
                        }
                }
                kb__table_row_take(&t, cells);
        }
        free(cells);
        kb__table_print(&t, out, "");
        free(j);
}
