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

/* ---- a timed run's state (clock.c, setup.c, timeline.c) ------------------------------ */

#define KB__NS_PER_S 1000000000LL

/* A pointer table: pods and PodGroups to their records, filled once. */
struct ptrmap {
        struct kb_map map;
};
void kb__ptrmap_init(struct ptrmap *m, size_t n);
void kb__ptrmap_release(struct ptrmap *m);
void kb__ptrmap_put(struct ptrmap *m, const void *key, uint32_t val);
bool kb__ptrmap_get(const struct ptrmap *m, const void *key, uint32_t *val);

struct spod {
        struct kb_pod *pod;
        int64_t arrival;
        int64_t runtime; /* -1: runs until deleted (another scheduler's pod) */
        uint32_t gen;    /* bumped at each start and recreation: older events are stale */
        int32_t gang;    /* -1: not tracked (another scheduler's, or finished at load) */
        int32_t queue;   /* for shares; -1 */
        bool ours, recreate, on_node, finished, retired;
        bool default_rt; /* runs opts.default_runtime; counted at its first start */
};

enum ev_kind { EV_END, EV_REAP };

struct event {
        int64_t t;
        uint32_t pod, gen;
        enum ev_kind kind;
};

struct arrival {
        int64_t t;
        size_t seq;
        struct kb_pod *pod; /* or */
        struct kb_podgroup *pg;
};

struct run {
        struct kb_cluster *c;
        const struct kb_conf *conf;
        const struct kb_sim_opts *o;
        struct kb_sim_report *rep;
        struct spod *pods;
        size_t npods;
        struct ptrmap podmap, pgmap;      /* pod -> pods[], PodGroup -> gang */
        uint32_t *gang_first, *gang_pods; /* each gang's pods: gang_pods[first[g]..first[g+1]) */
        bool *gang_retired;
        struct event *heap;
        size_t nheap, capheap;
        struct arrival *future;
        size_t nfuture, nextfuture;
        /* What left the cluster, given back at the end. */
        struct kb_pod **gone_pods;
        size_t ngone_pods, capgone_pods;
        struct kb_podgroup **gone_pgs;
        size_t ngone_pgs, capgone_pgs;
        bool compact;
        struct kb_res used;
        struct kb_res *qalloc, *qdeserved;
        size_t unfinished;
        bool default_runtimes; /* some pod of ours declares no runtime */
};

/* ns since time 0 of a wall-clock time (0 for one before the origin). */
int64_t kb__sim_offset(double origin, double when);

/* timeline.c: the event heap, the figures, and the events as they happen. */
void kb__sim_ev_push(struct run *r, int64_t t, uint32_t pod, enum ev_kind kind);
/* Appends (t, v) to a step series: a point at the same time is replaced,
 * one equal to the previous value is not added. */
void kb__sim_series_note(struct kb_sim_series *s, int64_t t, const struct kb_res *v);
/* A pod is done: finished and, when its gang's last, the gang ends. */
void kb__sim_pod_finished(struct run *r, struct spod *sp, int64_t t);
/* Pod i runs from t: it holds its room and its end is an event. */
void kb__sim_start_pod(struct run *r, uint32_t i, int64_t t);
/* The next event after now: an arrival, a pod's end or reaping, or a
 * PodGroup's Inqueue timeout or backoff, or a Pending one's sla waiting
 * time, running out (sessions depend on the clock there); -1 when none. */
int64_t kb__sim_next_event(const struct run *r, int64_t now);
/* Everything that happens up to and including time `to`, in time order. */
void kb__sim_advance(struct run *r, int64_t to);
/* Drops what finished from the cluster's arrays (kept aside until the end). */
void kb__sim_compact(struct run *r);
/* Gives every object that left the cluster, or never arrived, back. */
void kb__sim_restore(struct run *r);

/* setup.c: the report's queues and gangs, and the cluster at time 0. */
int kb__sim_setup(struct run *r, char *err, size_t errlen);
/* A gang by name (lone: a pod without a PodGroup), or -1. */
int32_t kb__sim_find_gang(const struct kb_sim_report *rep, const char *name, bool lone);
/* A queue of the report by name, or -1. */
int32_t kb__sim_find_queue(const struct kb_sim_report *rep, const char *name);

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

/* The resources a report shows, every one the nodes have but pods, into idx
 * (KB_RES_MAX long); returns how many. */
int kb__sim_resources(const struct kb_sim_report *rep, int *idx);
/* A queue's gangs (those of the run), how many started and finished, and
 * their waits in seconds: nearest-rank p50 and p95, max and mean. */
struct kb__sim_waits {
        size_t gangs, started, finished;
        double p50, p95, max, mean;
};
struct kb__sim_waits kb__sim_queue_waits(const struct kb_sim_report *rep, const char *queue);

/* ---- figures in SVG (svg.c) ------------------------------------------------------- */

/* A point of a step series drawn in a panel: v from t on. */
struct kb__plot_xy {
        int64_t t;
        double v;
};
/* A panel: time [0, tend] across its width, [0, ymax] up its height;
 * percent labels values as percentages (0.25 is 25%). */
struct kb__plot_frame {
        double left, top, w, h;
        int64_t tend;
        double ymax;
        bool percent;
};
/* How a series is drawn: colour, line width, dash pattern (NULL: solid),
 * whether the room under it is filled (lightly, in the colour), and a
 * shift down in pixels (lines of equal values side by side, not hidden
 * under each other). */
struct kb__plot_pen {
        const char *color;
        double width;
        const char *dash;
        bool fill;
        double nudge;
};
/* The i-th series' colour, and past the palette's ten a dash pattern. */
const char *kb__plot_color(size_t i);
const char *kb__plot_dash(size_t i);
void kb__svg_escaped(FILE *out, const char *s);
/* A round top for an axis whose values reach v (whole numbers unless
 * percent). */
double kb__plot_top(double v, bool percent);
/* The frame, grid lines with their values, time ticks (about `ticks` of
 * them, labelled H:MM) and a title above (NULL: none). */
void kb__plot_axes(FILE *out, const struct kb__plot_frame *f, const char *title, int ticks);
void kb__plot_steps(FILE *out, const struct kb__plot_frame *f, const struct kb__plot_xy *p,
                    size_t n, const struct kb__plot_pen *pen);
/* A legend row at (x, y): a sample of the pen and the label. */
void kb__plot_legend(FILE *out, double x, double y, const struct kb__plot_pen *pen,
                     const char *label);
/*
 * The gangs of a queue (NULL: every queue) waiting over time, that is
 * arrived and not started, and what they ask of resource res as a share of
 * the cluster's: two step series of the same times, in *gangs and *demand
 * (heap arrays the caller frees).  Returns their length (at least 1).
 */
size_t kb__sim_waiting(const struct kb_sim_report *rep, const char *queue, int res,
                       struct kb__plot_xy **gangs, struct kb__plot_xy **demand);

/* ---- formatting ------------------------------------------------------------------ */

/* ns since the simulation's start as "H:MM:SS" ("0:00:00", "26:05:30"),
 * or "-" when negative (never). */
void kb__sim_clock_format(int64_t ns, char *buf, size_t n);
/* A CSV field: quoted when it holds a comma, a quote or a line break. */
void kb__csv_field(FILE *out, const char *s);

#endif /* KB_PKG_SIM_INT_H */
