/*
 * What the files of pkg/sim share and nobody else uses: the pieces of
 * applying a session result, a text table sized to its content, and time
 * and CSV formatting.
 */
#ifndef KB_PKG_SIM_INT_H
#define KB_PKG_SIM_INT_H

#include "sim/sim.h"

/* ---- applying results (cluster.c) --------------------------------------------- */

/* Binds: the pod gets its node, runs, and loses its nomination. */
void kb__cluster_bind(struct kb_pod *p, const char *node);
/* Queue states the session changed, and each PodGroup's phase, counts and
 * condition (the condition's transition time is c->now). */
void kb__cluster_apply_statuses(struct kb_cluster *c, const struct kb_result *r);
/* Whether pods of this schedulerName are the cluster's to schedule. */
bool kb__cluster_ours(const struct kb_cluster *c, const struct kb_pod *p);

/* ---- tables (table.c) ------------------------------------------------------------ */

/*
 * pkg/base's kb_table (columns as wide as their widest cell), with what
 * kbatch-sim's reports add: rows given as arguments, or as heap strings the
 * table takes, and printing to a FILE with each line indented:
 *
 *   struct kb_table t;
 *   kb__table_init(&t, 3, "NODE", "PODS", "WHY");   the header row
 *   kb__table_row(&t, "n1", "2", "");
 *   kb__table_print(&t, out, "  ");                  then releases the table
 */
void kb__table_init(struct kb_table *t, size_t ncols, ...);
/* Adds a row of ncols strings (copied; NULL prints as ""). */
void kb__table_row(struct kb_table *t, ...);
/* Adds a row of ncols heap strings and frees them. */
void kb__table_row_take(struct kb_table *t, char **cells);
void kb__table_print(struct kb_table *t, FILE *out, const char *indent);

/* ---- figures (report.c) ---------------------------------------------------------- */

/* v's resource i as a fraction of the cluster's allocatable (0 when the
 * cluster has none). */
/* Where the run's averages end: the makespan of a run that finished
 * (sessions after the last gang ended count for nothing), else the clock. */
int64_t kb__sim_end(const struct kb_sim_report *rep);
double kb__sim_fraction(const struct kb_sim_report *rep, const struct kb_res *v, int i);
/* Time-weighted mean of that fraction over [0, end] for a step series; its
 * value at time 0 when end is 0. */
double kb__sim_average(const struct kb_sim_report *rep, const struct kb_sim_series *s, int i,
                       int64_t end);

/* ---- formatting ------------------------------------------------------------------ */

/* ns since the simulation's start as "H:MM:SS" ("0:00:00", "26:05:30"),
 * or "-" when negative (never). */
void kb__sim_clock_format(int64_t ns, char *buf, size_t n);
/* A CSV field: quoted when it holds a comma, a quote or a line break. */
void kb__csv_field(FILE *out, const char *s);

#endif /* KB_PKG_SIM_INT_H */
