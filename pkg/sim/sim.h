/*
 * sim: an in-memory cluster for kbatch-sim and the scenario tests — loaded
 * from Kubernetes manifests or built synthetically — that runs sessions and
 * applies their decisions between them (bound pods run, evicted pods are
 * deleted, PodGroup status is written back), and prints results.
 *
 * Everything here runs on the caller's thread; a cluster is not shared.
 */
#ifndef KB_PKG_SIM_H
#define KB_PKG_SIM_H

#include <stdbool.h>
#include <stdio.h>

#include "api/api.h"
#include "framework/framework.h"

struct kb_cluster {
        struct kb_node **nodes;
        size_t nnodes, capnodes;
        struct kb_pod **pods;
        size_t npods, cappods;
        struct kb_podgroup **podgroups;
        size_t npodgroups, cappodgroups;
        struct kb_queue **queues;
        size_t nqueues, capqueues;
        struct kb_priorityclass **priorityclasses;
        size_t npriorityclasses, cappriorityclasses;
        struct kb_namespace **namespaces;
        size_t nnamespaces, capnamespaces;
        struct kb_hypernode **hypernodes;
        size_t nhypernodes, caphypernodes;
        struct kb_pdb **pdbs;
        size_t npdbs, cappdbs;
        const char **scheduler_names;
        size_t nscheduler_names, capscheduler_names;
        const char *default_queue;
        /* Whether pods of ours that name no group join the PodGroup kbatch
         * makes for their workload (true; kbatch-sim
         * --workload-podgroups=false keeps each a job of its own). */
        bool workload_podgroups;
        double now;
        /* Bumped on every change to the objects above (or to the arrays):
         * the snapshots' generation (kb_snapshot.gen), which lets a kept
         * session model be used again; an object changed in place gets
         * the new value as its kb_meta.gen.  Code that changes the
         * objects by hand calls kb_cluster_changed, which also bumps the
         * epoch (kb_snapshot.epoch: which objects changed is not known). */
        uint64_t gen, epoch;
        /* The batch/v1 Jobs loaded (their metadata), whose annotations the
         * PodGroups made for their pods read. */
        struct kb_value **owners;
        size_t nowners, capowners;
        /* What earlier --synthetic specs built, so that later ones carry on
         * (creation times, the spread of running pods). */
        int64_t synthetic_groups, synthetic_placed;
        double synthetic_time; /* creation time of the next synthetic group */
};

void kb_cluster_init(struct kb_cluster *c);
void kb_cluster_release(struct kb_cluster *c);
/* Adds a name pods must carry as schedulerName to be scheduled ("kbatch"
 * when none is added).  The string must outlive the cluster. */
/* The cluster's objects changed (by hand): the next snapshot is new, and
 * a kept model is built again. */
void kb_cluster_changed(struct kb_cluster *c);
void kb_cluster_add_scheduler(struct kb_cluster *c, const char *name);

/*
 * Loads manifests (YAML, multi-document, or JSON; kind List is expanded).
 * Workloads become what their controllers would make (pkg/workload): a
 * batch/v1 Job its pods, parallelism of them, named <job>-<index>; a
 * batch.volcano.sh/v1alpha1 Job its PodGroup and its tasks' pods; a
 * scheduling.x-k8s.io/v1alpha1 PodGroup the Volcano PodGroup of the same
 * name.  With c->workload_podgroups, a pod of ours (scheduler names are
 * added first) that names no group and has not finished joins the
 * PodGroup kbatch makes for its workload, podgroup-<controller uid>, made
 * here when it does not exist yet (the pod's group is set to it, as
 * Volcano's controller annotates pods).  label names the source in
 * messages ("jobs.yaml").  Unknown kinds are skipped with a warning.
 * Returns 0, or KB_EBADINPUT with err = "jobs.yaml:12: podgroup
 * team-a/train: spec.minMember: ..."; on error nothing of this text is
 * kept.
 */
int kb_cluster_load(struct kb_cluster *c, const char *label, const char *text, size_t len,
                    char *err, size_t errlen);

/*
 * Builds a synthetic cluster from a spec like
 * "nodes=5000,node-cpu=32,node-memory=128Gi,node-pods=110,groups=5000,
 *  group-size=20,pod-cpu=1,pod-memory=1Gi,queues=4,besteffort-groups=0"
 * (synthetic.c lists the keys and defaults; nodes and groups default to 0).
 * Every group's minMember is its size.  Returns 0 or KB_EBADINPUT with err.
 */
int kb_cluster_synthetic(struct kb_cluster *c, const char *spec, char *err, size_t errlen);

/* ---- real traces (kbatch-sim --swf; swf.c) ----------------------------------- */

struct kb_swf_opts {
        struct kb_res processor; /* one processor as a pod's requests: cpu=1, memory=1Gi */
        struct kb_res node;      /* a node's allocatable; all zero: one processor */
        int64_t nodes;           /* > 0: this many; else the header's MaxNodes, or
                                  * MaxProcs over the processors a node holds */
};
void kb_swf_opts_init(struct kb_swf_opts *o);
struct kb_swf_stats {
        size_t jobs, pods;      /* the jobs that became gangs, and their pods */
        size_t skipped_runtime; /* run time 0 or less (cancelled, failed at once) */
        size_t skipped_procs;   /* no processor count */
        size_t skipped_wide;    /* wider than the machine */
        int64_t nodes, processors;
};
/*
 * Reads a Standard Workload Format trace (swf.c says which fields) into c:
 * the nodes, then one PodGroup a job with a pod per processor, created at
 * its submit time, running its run time, declaring its requested time.
 * Returns 0 with st filled, or KB_EBADINPUT with err naming the line and
 * the field ("lublin.swf:12: field 4 (run time): want a whole number, got
 * \"x\"").
 */
int kb_cluster_swf(struct kb_cluster *c, const char *label, const char *text, size_t len,
                   const struct kb_swf_opts *o, struct kb_swf_stats *st, char *err,
                   size_t errlen);
/* "cpu=1,memory=1Gi" (flag names it in errors) into out. */
int kb_swf_res_parse(const char *text, const char *flag, struct kb_res *out, char *err,
                     size_t errlen);

/* Adds the default queue (weight 1) when no queue has that name, as the
 * daemon creates it in a real cluster.  Returns whether it added one. */
bool kb_cluster_ensure_default_queue(struct kb_cluster *c);

/* Points snap at the cluster's objects; valid until the cluster changes. */
void kb_cluster_snapshot(const struct kb_cluster *c, struct kb_snapshot *snap);

/* Applies a session's decisions: bound pods get their node and run,
 * evicted pods are deleted, PodGroups get the session's status. */
void kb_cluster_apply(struct kb_cluster *c, const struct kb_result *r);

/* ---- simulated time (kbatch-sim --until-done) --------------------------------- */

/* How long a pod runs once started: kbatch.io/runtime, else kbatch-apiserver's
 * kbatch.io/sim-duration, each a Go duration. */
#define KB_RUNTIME_ANNOTATION      "kbatch.io/runtime"
#define KB_SIM_DURATION_ANNOTATION "kbatch.io/sim-duration"

/*
 * p's runtime from its annotations: 1 with *ns set when it declares one, 0
 * when it declares none, KB_EBADINPUT with err = "pod team/a-0: annotation
 * kbatch.io/runtime: unknown unit ..." when the value is no Go duration or
 * is negative.
 */
int kb_pod_runtime(const struct kb_pod *p, int64_t *ns, char *err, size_t errlen);

struct kb_sim_opts {
        int64_t period;          /* ns of simulated time between sessions (1 s) */
        int64_t default_runtime; /* ns, for pods of ours that declare none (1 h) */
        int64_t time_limit;      /* ns of simulated time at most (30 days) */
        /* Whether time_limit was asked for: when not, and every pod of
         * ours declares its runtime, the run has no limit (it ends: every
         * pod ends, and a run where nothing can change stops as Stuck). */
        bool time_limit_set;
        long max_sessions;       /* sessions at most; 0 for no limit */
};
void kb_sim_opts_init(struct kb_sim_opts *o);

/* A step function of time: v holds from t until the next point's t. */
struct kb_sim_point {
        int64_t t; /* ns since the start */
        struct kb_res v;
};
struct kb_sim_series {
        struct kb_sim_point *v;
        size_t n, cap;
};

/* One gang: a PodGroup, or a pod of ours without one (lone). */
struct kb_sim_gang {
        char *name;  /* "ns/pg", or "ns/pod" when lone */
        char *queue; /* the queue it asks for */
        bool lone;
        bool has_pg; /* its PodGroup exists in the input */
        int32_t pods, min_member, finished, evictions;
        /* ns since the start; start and end -1 until they happen.  A gang
         * arrives with its PodGroup (a lone pod with itself), starts at
         * its first bind and ends when its last pod finishes. */
        int64_t arrival, start, end;
        char *why;  /* the latest Unschedulable message, or NULL */
        bool prior; /* every pod had finished before time 0: no part of the run */
        struct kb_res requests; /* of all its pods */
};

struct kb_sim_queue {
        char *name;
        struct kb_sim_series allocated; /* what its pods hold on nodes */
        struct kb_sim_series deserved;  /* as each session's quota plugin said */
};

enum kb_sim_stop {
        KB_SIM_DONE,          /* every gang finished */
        KB_SIM_STUCK,         /* nothing can change any more, gangs left */
        KB_SIM_TIME_LIMIT,    /* opts.time_limit reached */
        KB_SIM_SESSION_LIMIT, /* opts.max_sessions run */
};

/* What a timed run found; times are ns since the start (time 0, the
 * earliest creationTimestamp among the input's pods and PodGroups). */
struct kb_sim_report {
        double origin; /* wall-clock seconds at time 0 */
        int64_t period;
        int64_t clock;    /* time of the last session */
        int64_t makespan; /* the last gang's end (0 when none ended) */
        long sessions;
        enum kb_sim_stop stop;
        struct kb_res total;       /* the nodes' allocatable */
        struct kb_sim_series used; /* requests of pods holding room on nodes */
        struct kb_sim_gang *gangs; /* PodGroups by name, then lone pods by name */
        size_t ngangs;
        struct kb_sim_queue *queues; /* by name */
        size_t nqueues;
        size_t default_runtime_pods; /* pods of ours that started (at least once) and ran
                                      * opts.default_runtime; not those that never ran */
        int64_t default_runtime;
        double wall; /* seconds the run took */
        /* How often the session model was built, used again and updated
         * (kb_model_counts), for --stats. */
        uint64_t model_built, model_reused, model_updated, model_repeated;
};
void kb_sim_report_release(struct kb_sim_report *rep);

/* Handed to the caller after each session, before its decisions apply. */
struct kb_sim_step {
        long index;   /* from 1 */
        int64_t time; /* ns since the start */
        const struct kb_result *r;
        /* Per r->podgroups entry: its phase or condition differs from the
         * one the cluster has. */
        const bool *pg_changed;
        /* The session changes the cluster: binds, evictions, nominations,
         * phases, queue states.  Otherwise a session run again on the same
         * cluster would decide the same, so the clock jumps. */
        bool changed;
        /* The gangs of the run (not those done before it started), and how
         * many have finished by this session. */
        size_t gangs, finished;
};
typedef void (*kb_sim_step_fn)(void *arg, const struct kb_sim_step *step);

/*
 * Runs sessions on a simulated clock until every gang has finished, nothing
 * can change any more, or a limit is reached (the stop field says which):
 * a session every opts.period while sessions change something, otherwise
 * straight to the period in which the next pod ends, an evicted pod's
 * grace period ends or the next object arrives.  Pods and PodGroups appear
 * at their creationTimestamp's offset; a bound pod runs its runtime and
 * then Succeeded; an evicted pod is deleted after its grace period (and,
 * in a PodGroup or a Job, comes back Pending, as its controller recreates
 * it); a finished PodGroup becomes Completed and leaves the cluster.
 * Every object is back in c when it returns (pods finished, still pending
 * or not yet arrived).  Returns 0 with rep filled (release it), KB_EBADINPUT
 * (a bad runtime annotation) or KB_EBADCONF (a session's conf names a
 * missing action or plugin) with err.  c->now is the wall-clock time that
 * counts when the input carries no creationTimestamp.
 */
int kb_sim_run(struct kb_cluster *c, const struct kb_conf *conf, const struct kb_sim_opts *opts,
               kb_sim_step_fn fn, void *arg, struct kb_sim_report *rep, char *err, size_t errlen);

/* The nearest-rank percentile p (0 < p <= 100) of n sorted values: the
 * value at rank ceil(p/100 * n); 0 when n is 0. */
double kb_sim_percentile(const double *sorted, size_t n, double p);

/* ---- output ---------------------------------------------------------------- */

/* How one session is shown. */
struct kb_session_view {
        long index;
        /* Seconds since the start for a timed run (a "time" field and
         * header), or < 0. */
        double time;
        /* NULL: every PodGroup; else only the entries flagged (timed runs
         * list what changed). */
        const bool *pg_changed;
        /* Timed runs list only the pods without a PodGroup bound in the
         * session; otherwise every such pod not finished. */
        bool changes_only;
};

/*
 * kbatch-sim --output json, written as the run goes rather than built
 * whole and printed at the end (a long timed run held 1.66 GB of tree):
 * {"sessions":[ at the first session, each session as it ends (flushed),
 * then "]", the "simulation" member of a timed run and "}"; c gives the
 * pods without a PodGroup.  One writer per FILE; not thread-safe.
 */
struct kb_sim_json {
        FILE *f;
        bool open; /* {"sessions":[ is out */
        size_t n;  /* sessions written */
};
void kb_sim_json_init(struct kb_sim_json *j, FILE *f);
void kb_sim_json_session(struct kb_sim_json *j, const struct kb_result *r,
                         const struct kb_session_view *v, const struct kb_cluster *c);
/* Ends the document (opening it first when no session came); simulation,
 * when not NULL, is written as its "simulation" member and freed. */
void kb_sim_json_end(struct kb_sim_json *j, struct kb_value *simulation);

/* Writes a human-readable report of one session. */
void kb_result_print_table(const struct kb_result *r, const struct kb_session_view *v,
                           const struct kb_cluster *c, FILE *out);

/* A timed run's report: "simulation" member of the JSON document. */
struct kb_value *kb_sim_report_to_json(const struct kb_sim_report *rep);
/*
 * The figures of batch-scheduling studies, over the gangs of the run that
 * finished (wait = start - arrival, run = end - start):
 * mean and percentile waits, the longest wait, the mean bounded slowdown
 * max(1, (wait + run) / max(run, 10 s)) (Feitelson's, the threshold
 * keeping very short jobs from dominating), and the longest wait of wide
 * gangs (asking half the cluster or more of some resource).
 */
struct kb_sim_jobs {
        size_t finished, wide;
        double wait_mean, wait_p50, wait_p95, wait_p99, wait_max;
        double slowdown_mean;
        double wide_wait_max;
};
void kb_sim_report_jobs(const struct kb_sim_report *rep, struct kb_sim_jobs *out);
/* Runs' figures side by side, one column per conf (names[i] for reps[i]):
 * a table, or with json a document {"compare": [{"conf": ..., ...}]}. */
void kb_sim_compare_print(const char *const *names, const struct kb_sim_report *reps, size_t n,
                          bool json, FILE *out);
/* The gangs of the run (not those already done when it started) that had
 * not finished when it stopped. */
size_t kb_sim_report_unfinished(const struct kb_sim_report *rep);
void kb_sim_report_print_table(const struct kb_sim_report *rep, FILE *out);
/* The same without the table of gangs (kbatch-sim --summary). */
void kb_sim_report_print_summary(const struct kb_sim_report *rep, FILE *out);
/* PREFIX-gangs.csv, PREFIX-queues.csv and PREFIX-timeline.csv (a ".csv"
 * ending of prefix is dropped first).  Returns 0 or a negative errno with
 * err naming the file. */
int kb_sim_report_write_csv(const struct kb_sim_report *rep, const char *prefix, char *err,
                            size_t errlen);
/* A self-contained SVG of utilisation, waiting gangs and pending demand per
 * queue, and each queue's held and deserved share over time (plot.c says
 * how to read it).  Returns 0 or a negative errno with err naming the file. */
int kb_sim_report_write_svg(const struct kb_sim_report *rep, const char *path, char *err,
                            size_t errlen);
/* --compare-confs --plot: the gangs waiting over time (all queues), one line
 * per conf (names[i] for reps[i]).  Returns 0 or a negative errno. */
int kb_sim_compare_write_svg(const char *const *names, const struct kb_sim_report *reps, size_t n,
                             const char *path, char *err, size_t errlen);

#endif /* KB_PKG_SIM_H */
