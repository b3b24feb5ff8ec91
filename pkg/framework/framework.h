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

/* A PodGroup's owner that asks for a scheduler kbatch does not serve (a
 * Volcano Job still saying spec.schedulerName: volcano), resolved by
 * whoever builds the snapshot: its controller makes pods only once the
 * group is admitted, so no pod can say it first (issue 23). */
struct kb_foreign_owner {
        const char *kind;      /* "Volcano Job" */
        const char *ns, *name; /* the owner's */
        const char *scheduler; /* what it asks for; NULL: nothing to say */
};

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
        struct kb_hypernode **hypernodes;
        size_t nhypernodes;
        struct kb_pdb **pdbs; /* PodDisruptionBudgets (preemption's tie-break) */
        size_t npdbs;
        const char *const *scheduler_names;
        size_t nscheduler_names;
        const char *default_queue;       /* "default" when NULL */
        const char *const *assumed_node; /* per pod, or NULL: a bind in flight's node (bound) */
        double now;                      /* wall-clock seconds (kb_session_now) */
        /* A pod of ours that names no group joins the PodGroup kbatch makes
         * for its workload (kb_pod.workload_group), and waits while it does
         * not exist yet; false: it is a job of its own (kbatch-sim sets the
         * pods' groups as it loads them instead). */
        bool workload_podgroups;
        /* Per PodGroup (as podgroups), or NULL when none has one. */
        const struct kb_foreign_owner *pg_foreign;
        /* The producer's generation of everything above but now: equal
         * nonzero generations mean equal contents (the same objects,
         * unchanged, in the same order), which lets a kept model (struct
         * kb_model) be used again as it is; 0: not tracked.  An object
         * changed (or made) after a snapshot of generation G carries a
         * kb_meta.gen above G, so a kept model can tell what changed.
         * epoch: changes when the producer cannot say which objects
         * changed (then a kept model is built again). */
        uint64_t gen, epoch;
};

#include "framework/points.h"

/* ---- configuration ------------------------------------------------------ */

struct kb_plugin_conf {
        char *name;
        /* Per extension point: 1 enabled (the default), 0 disabled. */
        signed char enabled[KB_NPOINTS];
        bool hierarchy;             /* enableHierarchy: true (kb_plugin.hierarchy) */
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

/* Something the conf names that kbatch reads but does not act on. */
struct kb_conf_skip {
        const char *kind; /* "action", "plugin", "flag", "argument", "configuration", "key" */
        char *name;       /* "preempt", "nodeorder podaffinity.weight", ... */
};

struct kb_conf {
        struct kb_action_conf *actions;
        size_t nactions;
        struct kb_tier_conf *tiers;
        size_t ntiers;
        /* What was skipped (each also logged as a warning). */
        struct kb_conf_skip *skipped;
        size_t nskipped, capskipped;
        /* Test and benchmark switch: choose nodes by scanning every node for
         * every task instead of through the per-class caches.  Placements
         * are the same either way; this exists to prove it. */
        bool full_scan;
        uint64_t serial; /* distinct per conf parsed, never changed after (repeat.c) */
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
/* "action preempt, plugin capacity, argument nodeorder podaffinity.weight"
 * into buf ("" when nothing was skipped). */
void kb_conf_skipped_summary(const struct kb_conf *conf, char *buf, size_t len);
/* --strict-conf: KB_EBADCONF with the skipped items in err when anything
 * was skipped, else 0. */
int kb_conf_strict(const struct kb_conf *conf, char *err, size_t errlen);

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

/*
 * A task is one pod.  Every pod of the schedulers this session serves is a
 * task of a job; so is every other pod bound to a node (a "foreign" task:
 * job NULL, never placed or evicted by kbatch), so that a node's task list
 * shows everything on it.  Actions and plugins read tasks; only statements
 * change them.
 */
#define KB_NAME_INDEX_UNREAD INT32_MIN
struct kb_task {
        const struct kb_pod *pod;
        struct kb_job *job; /* NULL for another scheduler's pod */
        const char *name;   /* "namespace/name" */
        const char *role;   /* volcano.sh/task-spec (annotation, else label), or "" */
        uint32_t index;     /* position in the session's task array */
        uint32_t eclass;    /* placement class: tasks with equal placement specs */
        enum kb_task_status status;
        int32_t node; /* node index, -1 when none */
        int32_t priority;
        /* The number after the pod name's last dash when the name has two
         * dashes or more (Volcano's GetPodIndexUnderTask), else -1: task
         * order's tie-break, read from the name the first time the task
         * is compared (KB_NAME_INDEX_UNREAD until then). */
        int32_t name_index; /* at most 1,000,000,009 (kb__pod_name_index) */
        bool best_effort;
        /* volcano.sh/preemptable on the pod (annotation, else label):
         * absent means preemptable (Volcano master), anything but "true"
         * means not. */
        bool preemptable;
        bool unevaluated; /* the pod has fields kbatch does not evaluate yet */
        bool has_rules;   /* the pod has inter-pod rules or host ports (kb_pod_rules) */
        bool bad_runtime; /* the pod's declared runtime is unusable (runtime_invalid) */
        /* The pod's requests: a copy that tasks asking alike share
         * (model.c's kb__request_of): the task array is the session's
         * largest (a million tasks at W8), and a copy in each task took
         * 128 of its 224 bytes. */
        const struct kb_res *resreq;
        /* The task's last fit failure in this session (node-level reasons),
         * kept for the PodGroup condition. */
        const char *fit_error;
        /* Links of the node's task list (kb_node_info.tasks). */
        struct kb_task *node_prev, *node_next;
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
        uint32_t pending_best_effort; /* Pending tasks that request nothing */
        uint32_t unevaluated;         /* tasks whose pod has fields not evaluated */
        uint32_t bad_runtime;         /* tasks whose pod's declared runtime is unusable */
        /* Every task's request when all point at one shared copy (model.c,
         * kb__request_of), else NULL; requests_differ once two did not
         * (kept until the job is built again, even if one of them goes). */
        const struct kb_res *request_alike;
        bool requests_differ;
        struct kb_res allocated;       /* resreq of tasks in allocated states */
        uint32_t allocated_gen;        /* bumped whenever allocated changes (model.c) */
        struct kb_res total_request;   /* resreq of every non-terminal task */
        struct kb_res pending_request; /* resreq of Pending tasks */
        /* Why this job cannot be scheduled at all (missing PodGroup or
         * queue), or NULL, and the condition reason for it. */
        const char *invalid;
        const char *invalid_reason;
        /* Pending pods naming this PodGroup that ask for another
         * scheduler, and the first one's scheduler name (open.c). */
        uint32_t foreign_pods;
        const char *foreign_scheduler;
        /* Its PodGroup's owner asking for another scheduler (the
         * snapshot's pg_foreign), or NULL. */
        const struct kb_foreign_owner *foreign_owner;
        /* Set by enqueue when a Pending group stayed Pending, to explain it
         * (kb_job_explain), with its condition reason. */
        const char *enqueue_why;
        const char *enqueue_reason;
        /* The fit error of the first task that fit no node in this session
         * ("0/4 nodes are available: ..."), or NULL; the task, and how many
         * of the job's tasks held room (placed before or in this turn) when
         * it failed. */
        const char *fit_error;
        const struct kb_task *fit_task;
        uint32_t fit_placed;
        /* Why the queue's quota refused a task of the job (allocate,
         * reclaim), with the numbers (kb_job_explain_quota), and the
         * condition reason; NULL when it never did. */
        const char *quota_error;
        const char *quota_reason;
        bool quota_checked; /* allocate looked at the nodes for it */
        /* Among the jobs of its queue still waiting at close (not ready,
         * valid), its place in the order they are considered (1 first),
         * out of queue->waiting; 0 when not waiting. */
        uint32_t position;
        /* For a gang partly bound (tasks on nodes, not ready), what allocate
         * did about the rest: room held for it, or why it can never
         * complete; NULL otherwise. */
        const char *partial;
        bool partial_never; /* partial says it can never complete */
        /* The Inqueue timeout (inqueue.c): since when the group holds its
         * reservation (0: not timed), the timeout that expired as the
         * session opened and sent it back to Pending (0: none), and until
         * when it may not be admitted again (0: no backoff). */
        double inqueue_since, inqueue_expired, inqueue_backoff;
        /* Tasks evicted (preempt, reclaim) to make room for this job in
         * this session, by which action. */
        uint32_t evictions;
        const char *evicted_by;
        /* What the reservation plugin says of when the gang should start
         * ("expected to start at 2026-11-26T14:32:00Z on 8 node(s), when
         * default/train-a ends") or why it has no such time; NULL when it
         * says nothing.  expected_start: that time (seconds since the
         * epoch), 0 when none. */
        const char *expected;
        double expected_start;
};

/* Tasks of j on nodes from before this session (Binding, Bound, Running):
 * a gang with some but not ready is "partly bound". */
uint32_t kb_job_placed_count(const struct kb_job *j);
/* Volcano JobInfo helpers. */
uint32_t
kb_job_ready_count(const struct kb_job *j); /* Allocated, Binding, Bound, Running, Succeeded */
uint32_t kb_job_waiting_count(const struct kb_job *j); /* Pipelined */
uint32_t kb_job_pending_count(const struct kb_job *j);

/*
 * A node in the session.  The resource sums follow Volcano's NodeInfo; the
 * task list holds every task on the node — bound, running, releasing,
 * assumed (allocated) or pipelined, ours or another scheduler's — in the
 * order it arrived, for victim selection and inter-pod rules:
 *
 *     for (const struct kb_task *t = n->tasks; t; t = t->node_next) ...
 *
 * Statements keep the sums and the list current (O(1) per operation).
 */
struct kb_node_info {
        const struct kb_node *node;
        const char *name;
        uint32_t index;
        struct kb_res allocatable;
        struct kb_res idle;
        struct kb_res used;
        struct kb_res releasing;
        struct kb_res pipelined;
        struct kb_task *tasks, *tasks_tail;
        uint32_t ntasks;  /* length of the task list */
        uint32_t version; /* bumped on every change to the sums or the list */
};

/* Volcano's FutureIdle: idle + releasing - pipelined. */
void kb_node_future_idle(const struct kb_node_info *n, struct kb_res *out);

#include "framework/domains.h"

struct kb_queue_info {
        const struct kb_queue *queue;
        const char *name;
        uint32_t index;
        int32_t weight;
        enum kb_queue_state state;
        /* Filled by a quota plugin for the queue status; parent is the
         * parent queue's index when the plugin builds a hierarchy (then a
         * parent's status counts its subtree's allocated), else -1. */
        struct kb_res deserved;
        double share;
        int32_t parent;
        uint32_t waiting; /* jobs waiting at close (kb_job.position) */
};

#include "framework/result.h"

/* ---- the session ---------------------------------------------------------- */

struct kb_session;

/*
 * A session's life, in three calls that both binaries and the tests use:
 *
 *   s = kb_session_open(snap, conf, result);   build the model, open plugins
 *   rc = kb_session_execute(s);                the conf's actions, in order
 *   kb_session_close(s);                       close plugins, statuses; frees s
 *
 * open builds the session's own state from snap (which must stay unchanged
 * until close) and runs every configured plugin's open; it never fails (a
 * plugin the registry lacks is remembered and reported by execute).
 * execute returns 0, or KB_EBADCONF when the conf names an action or plugin
 * missing at run time (the others still run).  close fills result (caller
 * releases it with kb_result_release) and frees the session.  Between open
 * and close, a test may register callbacks of its own with kb_on_*() and run
 * single actions with kb_action_find(name)->execute(s).  One thread per
 * session; sessions on distinct snapshots may run concurrently.
 */
struct kb_session *kb_session_open(const struct kb_snapshot *snap, const struct kb_conf *conf,
                                   struct kb_result *result);
int kb_session_execute(struct kb_session *s);
void kb_session_close(struct kb_session *s);
/* open + execute + close. */
int kb_session_run(const struct kb_snapshot *snap, const struct kb_conf *conf,
                   struct kb_result *result);

/*
 * The model kept between sessions (docs/scheduling.md, "The model kept
 * between sessions"): the nodes, queues, jobs and tasks a session builds
 * from its snapshot, kept by the caller so that the next session on a
 * snapshot of the same nonzero generation (kb_snapshot.gen) uses them
 * again instead of building them, each session's changes to them undone
 * when it closes.  The snapshot objects the model points to must stay
 * alive while their generation lasts (the cache and kbatch-sim's cluster
 * keep them).  One session at a time per model; the caller owns it:
 * kb_model_free(NULL) does nothing.  kb_session_open_model and
 * kb_session_run_model are kb_session_open and kb_session_run on a model;
 * their decisions are those of a fresh build, which test builds (KB_TESTING)
 * check every KB_MODEL_CHECK-th session (env, default 1; 0: never) by
 * building a fresh model and comparing it field by field (abort on the
 * first difference, named).
 */
struct kb_model;
struct kb_model *kb_model_new(void);
void kb_model_free(struct kb_model *m);
struct kb_session *kb_session_open_model(struct kb_model *m, const struct kb_snapshot *snap,
                                         const struct kb_conf *conf, struct kb_result *result);
int kb_session_run_model(struct kb_model *m, const struct kb_snapshot *snap,
                         const struct kb_conf *conf, struct kb_result *result);
/* Sessions that built the model, that used it again as it was, and that
 * brought it up to date where pods and PodGroups changed (for tests and
 * --stats). */
void kb_model_counts(const struct kb_model *m, uint64_t *built, uint64_t *reused);
uint64_t kb_model_updates(const struct kb_model *m);
/* Sessions that repeated the last one's result instead of running (also
 * counted as reused; pkg/framework/repeat.c). */
uint64_t kb_model_repeats(const struct kb_model *m);

/*
 * A session service: state that several plugins share (the inter-pod
 * index that predicates' filters and nodeorder's scores both read), made
 * by the first plugin that asks for it while plugins open, and the same
 * state returned to every later caller.  Once every plugin has opened,
 * ready(state) runs (as the plugin that made it: callbacks it registers
 * count as that plugin's); free(state) runs when the session closes, after
 * the plugins' close.  The descriptor's address is the service's identity:
 * one static const struct per service.  ready and free may be NULL.
 * Session thread only.
 */
struct kb_service {
        const char *name;
        void *(*create)(struct kb_session *s);
        void (*ready)(void *state);
        void (*free)(void *state);
};
void *kb_session_service(struct kb_session *s, const struct kb_service *svc);

/* Accessors used by actions and plugins. */
struct kb_pool *kb_session_pool(struct kb_session *s);
const struct kb_snapshot *kb_session_snapshot(struct kb_session *s);
const struct kb_conf *kb_session_conf(struct kb_session *s);
struct kb_job **kb_session_jobs(struct kb_session *s, size_t *n);
struct kb_node_info *kb_session_nodes(struct kb_session *s, size_t *n);
/* Every task: ours (in jobs), then other schedulers' pods on nodes;
 * tasks[i].index == i.  A kept model's may hold holes, the tasks of pods
 * deleted since it was built: no job, no node, a pod of nothing. */
struct kb_task *kb_session_tasks(struct kb_session *s, size_t *n);
struct kb_queue_info *kb_session_queues(struct kb_session *s, size_t *n);
/* Sum of every node's allocatable. */
const struct kb_res *kb_session_total(struct kb_session *s);
/* The snapshot's clock, seconds, read only through these (repeat.c):
 * kb_session_now's reader decides for this clock alone; kb_session_clock's
 * says from which clock t on any decision of its could turn. */
double kb_session_now(struct kb_session *s);
double kb_session_clock(struct kb_session *s);
void kb_session_clock_until(struct kb_session *s, double t);
struct kb_queue_info *kb_session_queue(struct kb_session *s, const char *name);
/* A node by name, or NULL. */
struct kb_node_info *kb_session_node(struct kb_session *s, const char *name);
/* The action's configurations[] arguments (an object, never NULL). */
const struct kb_value *kb_session_action_args(struct kb_session *s);
/* Whether the conf sets enableHierarchy: true for the named plugin, one
 * that acts on it (Volcano's HierarchyEnabled). */
bool kb_session_hierarchy(struct kb_session *s, const char *plugin);
/* A priority class value by name; false when none. */
bool kb_session_priority_class(struct kb_session *s, const char *name, int32_t *value);
/*
 * The enqueue gate, Volcano master's rule in one place: whether allocate
 * and backfill may place j's tasks.  A group still Pending waits for the
 * enqueue action when the conf runs it; without enqueue in the conf it is
 * admitted here and moves to Inqueue (so it closes as Inqueue), as
 * Volcano's allocate does.
 */
bool kb_job_admit(struct kb_session *s, struct kb_job *j);
/* Interns a message string in the session pool (for fit reasons that are
 * counted by identity). */
const char *kb_session_intern(struct kb_session *s, const char *str);
#include "framework/explain.h"

#include "framework/callbacks.h"

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
 * of scores kept current through the session's node change log; placement
 * filters and batch scores evaluated on it per task) unless a non-pure
 * predicate or node order is registered or conf full_scan is set; the
 * result is the same either way.
 */
struct kb_node_info *kb_select_node(struct kb_session *s, struct kb_task *t, const char **why);
/* t's placement class: tasks with equal placement specs (requests, node
 * selector and affinity, tolerations, images) share one; ids from 1. */
uint32_t kb_task_class(struct kb_session *s, struct kb_task *t);

#include "framework/topology.h"

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
/* A task on a node (Running, Bound, ...) to Releasing: it stays on the
 * node's list and its room becomes future idle.  for_job is the job the
 * room is made for (NULL: none); its PodGroup is named in the eviction. */
void kb_statement_evict(struct kb_statement *st, struct kb_task *t, const char *action,
                        const char *reason, const struct kb_job *for_job);
void kb_statement_commit(struct kb_statement *st);
void kb_statement_discard(struct kb_statement *st);
/* A point in the statement to come back to: rollback undoes, in reverse
 * order, every operation recorded after mark (a node tried and given up
 * on, say) and keeps the earlier ones. */
size_t kb_statement_mark(const struct kb_statement *st);
void kb_statement_rollback(struct kb_statement *st, size_t mark);

/* ---- priority queues ------------------------------------------------------ */

/* Priority queues are kb_heap (pkg/base). */
/* Heaps of jobs, queues or tasks in the session's order (kb_job_order,
 * kb_queue_order, kb_task_order): what every action keeps them in. */
void kb_heap_init_jobs(struct kb_heap *h, struct kb_session *s);
void kb_heap_init_queues(struct kb_heap *h, struct kb_session *s);
void kb_heap_init_tasks(struct kb_heap *h, struct kb_session *s);

/* ---- plugins and actions ------------------------------------------------ */

/*
 * A plugin: on session open, open() registers callbacks with kb_on_*() and
 * returns its per-session state (from the session pool, or NULL); close()
 * runs at session close, before statuses are computed.  args are the conf's
 * arguments for this plugin (an object, never NULL).
 */
struct kb_plugin {
        const char *name;
        void *(*open)(struct kb_session *s, const struct kb_value *args);
        void (*close)(struct kb_session *s, void *state);
        /* NULL-terminated argument keys the plugin acts on, and Volcano's
         * keys it accepts but does not act on yet; an entry ending in '*'
         * covers a prefix.  Any other key is unknown.  The conf warns about
         * (and --strict-conf refuses) the last two kinds. */
        const char *const *arguments;
        const char *const *ignored;
        bool hierarchy; /* acts on enableHierarchy (else it is skipped) */
        /* Checks the arguments' values when the conf loads (NULL: any
         * value goes): 0, or nonzero with "<key>: <problem>" in err, which
         * makes the conf invalid. */
        int (*check)(const struct kb_value *args, char *err, size_t errlen);
};

struct kb_action {
        const char *name;
        void (*execute)(struct kb_session *s);
        /* The arguments it reads from configurations[] (NULL-terminated;
         * others are skipped with a warning), and their values' check when
         * the conf loads (as kb_plugin's). */
        const char *const *arguments;
        int (*check)(const struct kb_value *args, char *err, size_t errlen);
};

const struct kb_plugin *kb_plugin_find(const char *name);
const struct kb_action *kb_action_find(const char *name);

#endif /* KB_PKG_FRAMEWORK_H */
