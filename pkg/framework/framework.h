/*
 * framework: the scheduling session.
 *
 * A session is opened on a snapshot (read-only Kubernetes objects), builds its
 * own working state (jobs, tasks, nodes, queues) in a memory pool, lets the
 * configured plugins register callbacks at named extension points, runs the
 * configured actions in order, and on close computes each PodGroup's status.
 * Its output is a kb_result: the binds and evictions that left the session
 * (committed statements only) and the PodGroup statuses.  A session never
 * does I/O and touches nothing outside its snapshot, so it may run on a
 * worker thread while the cache keeps changing.
 *
 * Semantics follow Volcano's scheduler framework (pkg/scheduler/framework);
 * where a rule comes from Volcano the code says where.
 */
#ifndef KB_PKG_FRAMEWORK_H
#define KB_PKG_FRAMEWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "base/base.h"
#include "value/value.h"

/* ---- the snapshot ------------------------------------------------------- */

/*
 * What a session reads.  The arrays and the objects they point to must stay
 * unchanged while a session runs on them; the session never writes to them.
 * scheduler_names lists the schedulerName values this scheduler serves.
 */
struct kb_snapshot {
        struct kb_node **nodes;
        size_t nnodes;
        struct kb_pod **pods;
        size_t npods;
        struct kb_podgroup **podgroups;
        size_t npodgroups;
        struct kb_queue **queues;
        size_t nqueues;
        struct kb_priorityclass **priorityclasses;
        size_t npriorityclasses;
        struct kb_namespace **namespaces;
        size_t nnamespaces;
        const char *const *scheduler_names;
        size_t nscheduler_names;
        const char *default_queue; /* "default" when NULL */
        double now;                /* wall-clock seconds, for conditions */
};

/* ---- configuration ------------------------------------------------------ */

/*
 * The extension points, as an X-macro so that the enum, the conf flag names
 * and the storage stay in step.  Columns: enum suffix, the Volcano conf flag
 * governing it (NULL: always on), and the flag's other spelling.  Volcano
 * spells most flags "enableX" and a few "enabledX"; both are accepted for all.
 */
#define KB_POINTS(XX)                                                                              \
        XX(JOB_ORDER, "enableJobOrder")                                                            \
        XX(QUEUE_ORDER, "enableQueueOrder")                                                        \
        XX(TASK_ORDER, "enableTaskOrder")                                                          \
        XX(NAMESPACE_ORDER, "enableNamespaceOrder")                                                \
        XX(PREDICATE, "enablePredicate")                                                           \
        XX(NODE_ORDER, "enableNodeOrder")                                                          \
        XX(BATCH_NODE_ORDER, "enableNodeOrder")                                                    \
        XX(JOB_READY, "enableJobReady")                                                            \
        XX(JOB_PIPELINED, "enableJobPipelined")                                                    \
        XX(JOB_VALID, NULL)                                                                        \
        XX(JOB_ENQUEUEABLE, "enableJobEnqueued")                                                   \
        XX(JOB_ENQUEUED, "enableJobEnqueued")                                                      \
        XX(JOB_STARVING, "enableJobStarving")                                                      \
        XX(OVERUSED, "enableOverused")                                                             \
        XX(ALLOCATABLE, "enableAllocatable")                                                       \
        XX(PREEMPTABLE, "enablePreemptable")                                                       \
        XX(RECLAIMABLE, "enableReclaimable")                                                       \
        XX(PREEMPTIVE, "enablePreemptive")                                                         \
        XX(EVENT_HANDLER, NULL)

enum kb_point {
#define XX(name, flag) KB_POINT_##name,
        KB_POINTS(XX)
#undef XX
            KB_NPOINTS
};

struct kb_plugin_conf {
        char *name;
        /* Per extension point: 1 enabled (the default), 0 disabled. */
        signed char enabled[KB_NPOINTS];
        struct kb_value *arguments; /* an object, never NULL */
};

struct kb_tier_conf {
        struct kb_plugin_conf *plugins;
        size_t nplugins;
};

struct kb_action_conf {
        char *name;
        struct kb_value *arguments; /* from configurations[]; an object */
};

struct kb_conf {
        struct kb_action_conf *actions;
        size_t nactions;
        struct kb_tier_conf *tiers;
        size_t ntiers;
        /* Test and benchmark switch: choose nodes by scanning every node for
         * every task instead of through the per-class caches.  Placements
         * are the same either way; this exists to prove it. */
        bool full_scan;
};

/* Volcano's default conf: enqueue, allocate, backfill; tiers priority, gang,
 * conformance / overcommit, drf, predicates, proportion, nodeorder. */
extern const char kb_default_conf_yaml[];

/*
 * Parses a conf (Volcano's YAML format).  Unknown action or plugin names
 * are errors naming them; unknown keys and flags are warnings (logged).
 * Returns 0 and fills conf (release with kb_conf_release), or KB_EBADCONF
 * with a message in err.  Any thread.
 */
int kb_conf_parse(const char *text, size_t len, struct kb_conf *conf, char *err, size_t errlen);
int kb_conf_load_file(const char *path, struct kb_conf *conf, char *err, size_t errlen);
void kb_conf_release(struct kb_conf *conf);
/* Whether the conf runs the action. */
bool kb_conf_has_action(const struct kb_conf *conf, const char *name);

/* Plugin argument helpers: read conf arguments by key with a default. */
double kb_args_double(const struct kb_value *args, const char *key, double dflt);
int64_t kb_args_int(const struct kb_value *args, const char *key, int64_t dflt);
bool kb_args_bool(const struct kb_value *args, const char *key, bool dflt);

/* ---- session state -------------------------------------------------------- */

/* Task states, as Volcano's TaskStatus. */
#define KB_TASK_STATUSES(XX)                                                                       \
        XX(PENDING, "Pending")                                                                     \
        XX(ALLOCATED, "Allocated")                                                                 \
        XX(PIPELINED, "Pipelined")                                                                 \
        XX(BINDING, "Binding")                                                                     \
        XX(BOUND, "Bound")                                                                         \
        XX(RUNNING, "Running")                                                                     \
        XX(RELEASING, "Releasing")                                                                 \
        XX(SUCCEEDED, "Succeeded")                                                                 \
        XX(FAILED, "Failed")                                                                       \
        XX(UNKNOWN, "Unknown")

enum kb_task_status {
#define XX(name, str) KB_TASK_##name,
        KB_TASK_STATUSES(XX)
#undef XX
            KB_TASK_NSTATUS
};
const char *kb_task_status_name(enum kb_task_status s);
/* Volcano's AllocatedStatus: Allocated, Binding, Bound, Running. */
bool kb_task_status_allocated(enum kb_task_status s);

struct kb_job;
struct kb_node_info;
struct kb_queue_info;

struct kb_task {
        const struct kb_pod *pod;
        struct kb_job *job;
        const char *name; /* "namespace/name" */
        const char *role; /* annotation volcano.sh/task-spec, or "" */
        uint32_t index;   /* position in the session's task array */
        uint32_t eclass;  /* placement class: tasks with equal placement specs */
        enum kb_task_status status;
        int32_t node; /* node index, -1 when none */
        int32_t priority;
        bool best_effort;
        struct kb_res resreq;
        /* The task's last fit failure in this session (node-level reasons),
         * kept for the PodGroup condition. */
        const char *fit_error;
};

/* PodGroup phases, as Volcano's PodGroupPhase. */
#define KB_PG_PHASES(XX)                                                                           \
        XX(PENDING, "Pending")                                                                     \
        XX(INQUEUE, "Inqueue")                                                                     \
        XX(RUNNING, "Running")                                                                     \
        XX(UNKNOWN, "Unknown")                                                                     \
        XX(COMPLETED, "Completed")

enum kb_pg_phase {
#define XX(name, str) KB_PG_##name,
        KB_PG_PHASES(XX)
#undef XX
};
const char *kb_pg_phase_name(enum kb_pg_phase p);

struct kb_job {
        const struct kb_podgroup *pg; /* NULL for a pod without a group */
        const char *name;             /* "namespace/name" of the PodGroup (or pod) */
        const char *namespace;
        const char *queue_name;
        struct kb_queue_info *queue; /* NULL when the queue does not exist */
        uint32_t index;
        int32_t min_available;
        int32_t priority;
        double creation;
        enum kb_pg_phase phase; /* current phase inside the session */
        struct kb_task **tasks;
        uint32_t ntasks;
        uint32_t count[KB_TASK_NSTATUS];
        struct kb_res allocated;     /* resreq of tasks in allocated states */
        struct kb_res total_request; /* resreq of every non-terminal task */
        /* Why this job cannot be scheduled at all (missing queue, invalid
         * group, gang too small...), or NULL. */
        const char *invalid;
        /* Set by enqueue when a Pending group stayed Pending, to explain it. */
        const char *enqueue_reason;
        /* The fit error of the first task that fit no node in this session
         * ("0/4 nodes are available: ..."), or NULL. */
        const char *fit_error;
        bool touched; /* allocate looked at this job in this session */
};

/* Volcano JobInfo helpers. */
uint32_t
kb_job_ready_count(const struct kb_job *j); /* Allocated, Binding, Bound, Running, Succeeded */
uint32_t kb_job_waiting_count(const struct kb_job *j); /* Pipelined */
uint32_t kb_job_pending_count(const struct kb_job *j);

struct kb_node_info {
        const struct kb_node *node;
        const char *name;
        uint32_t index;
        struct kb_res allocatable;
        struct kb_res idle;
        struct kb_res used;
        struct kb_res releasing;
        struct kb_res pipelined;
        uint32_t ntasks; /* tasks counted on the node (any scheduler) */
};

/* Volcano's FutureIdle: idle + releasing - pipelined. */
void kb_node_future_idle(const struct kb_node_info *n, struct kb_res *out);

struct kb_queue_info {
        const struct kb_queue *queue;
        const char *name;
        uint32_t index;
        int32_t weight;
        enum kb_queue_state state;
        /* Filled by a quota plugin (proportion) for the queue status. */
        struct kb_res deserved;
        double share;
};

/* ---- results ------------------------------------------------------------- */

struct kb_bind {
        const struct kb_pod *pod;
        const char *node;
};

struct kb_eviction {
        const struct kb_pod *pod;
        const char *action; /* "preempt", "reclaim" */
        const char *reason;
};

/* A task left Pipelined when the session closed: it waits on node for
 * resources being released there.  The daemon writes the node to the pod's
 * status.nominatedNodeName (as Volcano does for pipelined tasks), so that
 * users and other schedulers see the claim. */
struct kb_nomination {
        const struct kb_pod *pod;
        const char *node;
};

struct kb_pg_status {
        const struct kb_podgroup *pg; /* NULL: no PodGroup object (a lone pod) */
        const char *name;             /* namespace/name */
        enum kb_pg_phase phase;
        int32_t running, succeeded, failed, pending;
        /* The condition set by this session: Unschedulable (status True)
         * with reason and message, or Scheduled.  type NULL when none. */
        const char *cond_type;
        const char *cond_status;
        const char *cond_reason;
        const char *cond_message;
};

struct kb_queue_status {
        const char *name;
        enum kb_queue_state state;
        int32_t pending, inqueue, running, unknown, completed;
        struct kb_res allocated;
        struct kb_res deserved;
        struct kb_res capability;
        double share;
};

/* How long parts of a session took, for the daemon's latency histograms
 * (Volcano's action_ and plugin_scheduling_latency_microseconds).  name
 * points at the conf (valid while the conf is), seconds are monotonic. */
struct kb_action_time {
        const char *name;
        double seconds; /* execute */
};
struct kb_plugin_time {
        const char *name;
        double open, close; /* seconds in open (OnSessionOpen), close (OnSessionClose) */
};

/* Everything a session decided.  Strings and pointers stay valid until
 * kb_result_release (they point into the result's own pool or at snapshot
 * objects). */
struct kb_result {
        struct kb_pool pool;
        struct kb_bind *binds;
        size_t nbinds, capbinds;
        struct kb_eviction *evictions;
        size_t nevictions, capevictions;
        struct kb_pg_status *podgroups;
        size_t npodgroups;
        struct kb_queue_status *queues;
        size_t nqueues;
        /* Pipelined tasks at close, in task order (only tasks of statements
         * kept, since a discarded statement undoes its pipelines). */
        struct kb_nomination *nominations;
        size_t nnominations;
        double duration; /* seconds, the session alone */
        /* One entry per action run, in conf order, and per plugin, in tier
         * order (from the result's pool). */
        struct kb_action_time *action_times;
        size_t naction_times;
        struct kb_plugin_time *plugin_times;
        size_t nplugin_times;
};
void kb_result_release(struct kb_result *r);

/* ---- the session ---------------------------------------------------------- */

struct kb_session;

/*
 * Runs one whole session (open, actions, close) on snap with conf, filling
 * result (caller releases).  Returns 0, or a negative code when the conf
 * names something missing at run time.  Any one thread; several sessions may
 * run on distinct snapshots concurrently.
 */
int kb_session_run(const struct kb_snapshot *snap, const struct kb_conf *conf,
                   struct kb_result *result);

/* Accessors used by actions and plugins. */
struct kb_pool *kb_session_pool(struct kb_session *s);
const struct kb_snapshot *kb_session_snapshot(struct kb_session *s);
const struct kb_conf *kb_session_conf(struct kb_session *s);
struct kb_job **kb_session_jobs(struct kb_session *s, size_t *n);
struct kb_node_info *kb_session_nodes(struct kb_session *s, size_t *n);
struct kb_queue_info *kb_session_queues(struct kb_session *s, size_t *n);
/* Sum of every node's allocatable. */
const struct kb_res *kb_session_total(struct kb_session *s);
struct kb_queue_info *kb_session_queue(struct kb_session *s, const char *name);
/* The action's configurations[] arguments (an object, never NULL). */
const struct kb_value *kb_session_action_args(struct kb_session *s);
/* A priority class value by name; false when none. */
bool kb_session_priority_class(struct kb_session *s, const char *name, int32_t *value);
/* Sets the PodGroup condition this session reports for j (Volcano's
 * UpdatePodGroupCondition): type "Unschedulable" or "Scheduled", status
 * "True"/"False".  Strings are copied into the session pool. */
void kb_job_set_condition(struct kb_session *s, struct kb_job *j, const char *type,
                          const char *status, const char *reason, const char *message);
/* Records why j stays Pending (a plugin rejecting it at enqueue, say);
 * the first reason of a session is kept.  Shown in its PodGroup condition. */
void kb_job_explain(struct kb_session *s, const struct kb_job *j, const char *why);
/* Interns a message string in the session pool (for fit reasons that are
 * counted by identity). */
const char *kb_session_intern(struct kb_session *s, const char *str);

/* ---- extension points ----------------------------------------------------- */

/* Orders return < 0 when l goes first, > 0 when r goes first, 0 no opinion. */
typedef int (*kb_job_order_fn)(void *arg, const struct kb_job *l, const struct kb_job *r);
typedef int (*kb_queue_order_fn)(void *arg, const struct kb_queue_info *l,
                                 const struct kb_queue_info *r);
typedef int (*kb_task_order_fn)(void *arg, const struct kb_task *l, const struct kb_task *r);
typedef int (*kb_namespace_order_fn)(void *arg, const char *l, const char *r);
/* NULL when the task may go to the node, else the reason in kube-scheduler's
 * words ("node(s) didn't match Pod's node affinity/selector"), a string that
 * lives for the session (static or from kb_session_intern). */
typedef const char *(*kb_predicate_fn)(void *arg, const struct kb_task *t,
                                       const struct kb_node_info *n);
typedef double (*kb_node_order_fn)(void *arg, const struct kb_task *t,
                                   const struct kb_node_info *n);
/* Adds a score per node into scores[i] for nodes[i]. */
typedef void (*kb_batch_node_order_fn)(void *arg, const struct kb_task *t,
                                       struct kb_node_info *const *nodes, size_t n, double *scores);
typedef bool (*kb_job_bool_fn)(void *arg, const struct kb_job *j);
/* Votes: > 0 permit, 0 abstain, < 0 reject. */
typedef int (*kb_job_vote_fn)(void *arg, const struct kb_job *j);
/* NULL when valid, else a reason. */
typedef const char *(*kb_job_valid_fn)(void *arg, const struct kb_job *j);
typedef void (*kb_job_event_fn)(void *arg, const struct kb_job *j);
typedef bool (*kb_queue_bool_fn)(void *arg, const struct kb_queue_info *q);
typedef bool (*kb_allocatable_fn)(void *arg, const struct kb_queue_info *q,
                                  const struct kb_task *t);
/* Writes the permitted subset of candidates into out (at most n) and returns
 * its size; returns -1 for "no opinion". */
typedef int (*kb_victims_fn)(void *arg, const struct kb_task *preemptor,
                             struct kb_task *const *candidates, size_t n, struct kb_task **out);
typedef void (*kb_task_event_fn)(void *arg, const struct kb_task *t);

/*
 * Purity, for the node-selection caches.  A predicate or node order flagged
 * KB_PURE reads only the task's placement spec — its pod's requests,
 * nodeSelector, affinity and tolerations, which tasks of one placement class
 * share — and the node (for predicates: only its static attributes: labels,
 * taints, conditions, unschedulable; for node orders: also its resource
 * accounting).  Such answers are computed once per class and node and kept
 * current as nodes change.  Anything else must be registered without the
 * flag and is called for every task and candidate node.
 */
#define KB_PURE 1u

void kb_on_job_order(struct kb_session *s, kb_job_order_fn fn, void *arg);
void kb_on_queue_order(struct kb_session *s, kb_queue_order_fn fn, void *arg);
void kb_on_task_order(struct kb_session *s, kb_task_order_fn fn, void *arg);
void kb_on_namespace_order(struct kb_session *s, kb_namespace_order_fn fn, void *arg);
void kb_on_predicate(struct kb_session *s, kb_predicate_fn fn, void *arg, unsigned flags);
void kb_on_node_order(struct kb_session *s, kb_node_order_fn fn, void *arg, unsigned flags);
void kb_on_batch_node_order(struct kb_session *s, kb_batch_node_order_fn fn, void *arg);
void kb_on_job_ready(struct kb_session *s, kb_job_bool_fn fn, void *arg);
void kb_on_job_pipelined(struct kb_session *s, kb_job_vote_fn fn, void *arg);
void kb_on_job_valid(struct kb_session *s, kb_job_valid_fn fn, void *arg);
void kb_on_job_enqueueable(struct kb_session *s, kb_job_vote_fn fn, void *arg);
void kb_on_job_enqueued(struct kb_session *s, kb_job_event_fn fn, void *arg);
void kb_on_job_starving(struct kb_session *s, kb_job_bool_fn fn, void *arg);
void kb_on_overused(struct kb_session *s, kb_queue_bool_fn fn, void *arg);
void kb_on_allocatable(struct kb_session *s, kb_allocatable_fn fn, void *arg);
void kb_on_preemptable(struct kb_session *s, kb_victims_fn fn, void *arg);
void kb_on_reclaimable(struct kb_session *s, kb_victims_fn fn, void *arg);
void kb_on_preemptive(struct kb_session *s, kb_allocatable_fn fn, void *arg);
/* Called after a task is allocated/pipelined (allocate) or given back
 * (deallocate), inside statements and their undo, so shares stay current. */
void kb_on_event(struct kb_session *s, kb_task_event_fn allocate, kb_task_event_fn deallocate,
                 void *arg);

/*
 * The dispatchers.  Each states how answers combine across plugins and
 * tiers; the rules are Volcano's (framework/session_plugins.go).
 */
/* Orders: tiers in order, plugins in order, the first non-zero answer wins;
 * with none, the default order (see the function). */
int kb_job_order(struct kb_session *s, const struct kb_job *l, const struct kb_job *r);
int kb_queue_order(struct kb_session *s, const struct kb_queue_info *l,
                   const struct kb_queue_info *r);
int kb_task_order(struct kb_session *s, const struct kb_task *l, const struct kb_task *r);
int kb_namespace_order(struct kb_session *s, const char *l, const char *r);
/* Every predicate must pass; returns the first failing reason or NULL. */
const char *kb_predicate(struct kb_session *s, const struct kb_task *t,
                         const struct kb_node_info *n);
/* The weighted sum of every node order (batch orders added separately). */
double kb_node_order(struct kb_session *s, const struct kb_task *t, const struct kb_node_info *n);
/* Every job-ready answer must be true. */
bool kb_job_ready(struct kb_session *s, const struct kb_job *j);
/* Votes per tier: a reject is final; a tier with a permit decides true;
 * all abstaining means true. */
bool kb_job_pipelined(struct kb_session *s, const struct kb_job *j);
/* The first invalid reason, or NULL. */
const char *kb_job_valid(struct kb_session *s, const struct kb_job *j);
/* As kb_job_pipelined. */
bool kb_job_enqueueable(struct kb_session *s, const struct kb_job *j);
void kb_job_enqueued(struct kb_session *s, const struct kb_job *j);
/* All answers must be true, and some tier must have answered. */
bool kb_job_starving(struct kb_session *s, const struct kb_job *j);
/* Any answer true means overused. */
bool kb_overused(struct kb_session *s, const struct kb_queue_info *q);
/* Every answer must be true. */
bool kb_allocatable(struct kb_session *s, const struct kb_queue_info *q, const struct kb_task *t);
bool kb_preemptive(struct kb_session *s, const struct kb_queue_info *q, const struct kb_task *t);
/* Victims: within a tier the answers intersect; the first tier with an
 * opinion decides.  Returns the count written to out, or 0. */
size_t kb_preemptable(struct kb_session *s, const struct kb_task *preemptor,
                      struct kb_task *const *candidates, size_t n, struct kb_task **out);
size_t kb_reclaimable(struct kb_session *s, const struct kb_task *preemptor,
                      struct kb_task *const *candidates, size_t n, struct kb_task **out);

/* ---- node selection ----------------------------------------------------- */

/*
 * The best node for t, as Volcano's allocate chooses it: among nodes where
 * t's request fits the node's future idle resources and every predicate
 * passes, the highest total node score; ties go to the node that sorts first
 * by name (Volcano picks randomly among ties).  t's nominated node, when
 * feasible, is taken first.  Returns the node, or NULL with the aggregated
 * reasons in *why ("0/4 nodes are available: 3 Insufficient cpu, ...").
 *
 * Uses per-placement-class caches (static predicate results, and a max-tree
 * of scores kept current through the session's node change log) unless a
 * non-pure predicate or node order is registered, batch node orders exist,
 * or conf full_scan is set; the result is the same either way.
 */
struct kb_node_info *kb_select_node(struct kb_session *s, struct kb_task *t, const char **why);

/* ---- statements ------------------------------------------------------------ */

/*
 * A statement records allocate/pipeline/evict operations on session state,
 * each undoable.  Commit makes allocations leave the session as binds (and
 * evictions as evictions); discard undoes everything in reverse order.  A
 * statement neither committed nor discarded keeps its effects inside the
 * session (a pipelined job's place), but nothing leaves the session.
 */
struct kb_statement;
struct kb_statement *kb_statement_new(struct kb_session *s);
/* Task to node on idle resources: status Allocated. */
void kb_statement_allocate(struct kb_statement *st, struct kb_task *t, struct kb_node_info *n);
/* Task to node on future-idle resources: status Pipelined. */
void kb_statement_pipeline(struct kb_statement *st, struct kb_task *t, struct kb_node_info *n);
/* Running task to Releasing. */
void kb_statement_evict(struct kb_statement *st, struct kb_task *t, const char *action,
                        const char *reason);
void kb_statement_commit(struct kb_statement *st);
void kb_statement_discard(struct kb_statement *st);

/* ---- priority queues ------------------------------------------------------ */

/* A binary heap of pointers; cmp < 0 means a comes out before b.  Actions
 * keep queues, jobs and tasks in these, as Volcano's util.PriorityQueue. */
typedef int (*kb_heap_cmp_fn)(void *ctx, const void *a, const void *b);
struct kb_heap {
        void **v;
        size_t n, cap;
        kb_heap_cmp_fn cmp;
        void *ctx;
};
void kb_heap_init(struct kb_heap *h, kb_heap_cmp_fn cmp, void *ctx);
void kb_heap_release(struct kb_heap *h);
void kb_heap_push(struct kb_heap *h, void *item);
void *kb_heap_pop(struct kb_heap *h); /* NULL when empty */
static inline bool kb_heap_empty(const struct kb_heap *h)
{
        return h->n == 0;
}

/* ---- plugins and actions ------------------------------------------------ */

/*
 * A plugin: on session open, init() registers callbacks with kb_on_*() and
 * returns its per-session state (from the session pool, or NULL); close()
 * runs at session close, before statuses are computed.  args are the conf's
 * arguments for this plugin (an object, never NULL).
 */
struct kb_plugin {
        const char *name;
        void *(*open)(struct kb_session *s, const struct kb_value *args);
        void (*close)(struct kb_session *s, void *state);
};

struct kb_action {
        const char *name;
        void (*execute)(struct kb_session *s);
};

const struct kb_plugin *kb_plugin_find(const char *name);
const struct kb_action *kb_action_find(const char *name);

#endif /* KB_PKG_FRAMEWORK_H */
