/*
 * A timed run's figures for spreadsheets: kbatch-sim --csv PREFIX writes
 * PREFIX-gangs.csv (one row a gang), PREFIX-queues.csv (one row a queue)
 * and PREFIX-timeline.csv (one row each time a figure changes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

static FILE *open_csv(const char *prefix, const char *what, char **path)
{
        size_t n = strlen(prefix);
        if (n >= 4 && strcmp(prefix + n - 4, ".csv") == 0)
                n -= 4;
        *path = kb_xasprintf("%.*s-%s.csv", (int)n, prefix, what);
        return fopen(*path, "w");
}

static int close_csv(FILE *f, char *path, char *err, size_t errlen)
{
        int rc = 0;
        if (ferror(f) | fclose(f)) {
                rc = -errno;
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
        }
        free(path);
        return rc;
}

/* Value of series s at time t (its last point at or before t). */
static const struct kb_res *value_at(const struct kb_sim_series *s, size_t *cursor, int64_t t)
{
        static const struct kb_res zero;
        while (*cursor + 1 < s->n && s->v[*cursor + 1].t <= t)
                (*cursor)++;
        return s->n && s->v[*cursor].t <= t ? &s->v[*cursor].v : &zero;
}

static int cmp_i64(const void *a, const void *b)
{
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return x < y ? -1 : x > y;
}

/* One row per moment anything changed: utilisation, then each queue's
 * share and deserved share, per resource. */
static void write_timeline(const struct kb_sim_report *rep, FILE *f, const int *idx, int nidx)
{
        size_t n = rep->used.n, k = 0;
        for (size_t q = 0; q < rep->nqueues; q++)
                n += rep->queues[q].allocated.n + rep->queues[q].deserved.n;
        int64_t *times = kb_xmalloc((n + 1) * sizeof(*times));
        for (size_t i = 0; i < rep->used.n; i++)
                times[k++] = rep->used.v[i].t;
        for (size_t q = 0; q < rep->nqueues; q++) {
                for (size_t i = 0; i < rep->queues[q].allocated.n; i++)
                        times[k++] = rep->queues[q].allocated.v[i].t;
                for (size_t i = 0; i < rep->queues[q].deserved.n; i++)
                        times[k++] = rep->queues[q].deserved.v[i].t;
        }
        qsort(times, k, sizeof(*times), cmp_i64);
        fputs("time_seconds", f);
        for (int i = 0; i < nidx; i++)
                fprintf(f, ",utilization %s", kb_res_name(idx[i]));
        for (size_t q = 0; q < rep->nqueues; q++)
                for (int w = 0; w < 2; w++)
                        for (int i = 0; i < nidx; i++) {
                                char *h =
                                    kb_xasprintf("%s %s %s", rep->queues[q].name,
                                                 w ? "deserved" : "share", kb_res_name(idx[i]));
                                fputc(',', f);
                                kb__csv_field(f, h);
                                free(h);
                        }
        fputc('\n', f);
        size_t ucur = 0;
        size_t *cur = kb_xcalloc(2 * rep->nqueues + 1, sizeof(*cur));
        for (size_t i = 0; i < k; i++) {
                if (i && times[i] == times[i - 1])
                        continue;
                fprintf(f, "%.3f", (double)times[i] / 1e9);
                const struct kb_res *u = value_at(&rep->used, &ucur, times[i]);
                for (int x = 0; x < nidx; x++)
                        fprintf(f, ",%.4f", kb__sim_fraction(rep, u, idx[x]));
                for (size_t q = 0; q < rep->nqueues; q++)
                        for (int w = 0; w < 2; w++) {
                                const struct kb_sim_series *s =
                                    w ? &rep->queues[q].deserved : &rep->queues[q].allocated;
                                const struct kb_res *v = value_at(s, &cur[2 * q + w], times[i]);
                                for (int x = 0; x < nidx; x++)
                                        fprintf(f, ",%.4f", kb__sim_fraction(rep, v, idx[x]));
                        }
                fputc('\n', f);
        }
        free(cur);
        free(times);
}

static void csv_seconds(FILE *f, int64_t ns)
{
        if (ns >= 0)
                fprintf(f, ",%.3f", (double)ns / 1e9);
        else
                fputc(',', f);
}

int kb_sim_report_write_csv(const struct kb_sim_report *rep, const char *prefix, char *err,
                            size_t errlen)
{
        int idx[KB_RES_MAX];
        int nidx = kb__sim_resources(rep, idx);
        char *path;
        FILE *f = open_csv(prefix, "gangs", &path);
        if (!f)
                goto fail;
        fputs("gang,kind,queue,pods,min_member,arrival_seconds,start_seconds,end_seconds,"
              "wait_seconds,evictions,why\n",
              f);
        for (size_t i = 0; i < rep->ngangs; i++) {
                const struct kb_sim_gang *g = &rep->gangs[i];
                if (g->prior)
                        continue;
                kb__csv_field(f, g->name);
                fprintf(f, ",%s,", g->lone ? "pod" : "podgroup");
                kb__csv_field(f, g->queue);
                fprintf(f, ",%d,%d", g->pods, g->min_member);
                csv_seconds(f, g->arrival);
                csv_seconds(f, g->start);
                csv_seconds(f, g->end);
                csv_seconds(f, g->start >= 0 ? g->start - g->arrival : -1);
                fprintf(f, ",%d,", g->evictions);
                kb__csv_field(f, g->start < 0 ? (g->why ? g->why : "never placed") : "");
                fputc('\n', f);
        }
        if (close_csv(f, path, err, errlen))
                return -EIO;

        if (!(f = open_csv(prefix, "queues", &path)))
                goto fail;
        fputs("queue,gangs,started,finished,wait_p50_seconds,wait_p95_seconds,wait_max_seconds,"
              "wait_mean_seconds",
              f);
        for (int i = 0; i < nidx; i++)
                fprintf(f, ",average share %s,average deserved %s", kb_res_name(idx[i]),
                        kb_res_name(idx[i]));
        fputc('\n', f);
        for (size_t q = 0; q < rep->nqueues; q++) {
                struct kb__sim_waits w = kb__sim_queue_waits(rep, rep->queues[q].name);
                kb__csv_field(f, rep->queues[q].name);
                fprintf(f, ",%zu,%zu,%zu", w.gangs, w.started, w.finished);
                if (w.started)
                        fprintf(f, ",%.3f,%.3f,%.3f,%.3f", w.p50, w.p95, w.max, w.mean);
                else
                        fputs(",,,,", f);
                for (int i = 0; i < nidx; i++)
                        fprintf(f, ",%.4f,%.4f",
                                kb__sim_average(rep, &rep->queues[q].allocated, idx[i],
                                                kb__sim_end(rep)),
                                kb__sim_average(rep, &rep->queues[q].deserved, idx[i],
                                                kb__sim_end(rep)));
                fputc('\n', f);
        }
        if (close_csv(f, path, err, errlen))
                return -EIO;

        if (!(f = open_csv(prefix, "timeline", &path)))
                goto fail;
        write_timeline(rep, f, idx, nidx);
        return close_csv(f, path, err, errlen) ? -EIO : 0;
fail:
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        free(path);
        return -EIO;
}
