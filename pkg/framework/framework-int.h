/*
 * What the framework's files share; not for actions or plugins.
 *
 * The files form layers, and a file calls only into the layers below it
 * (test/e2e/framework_layers.sh checks this on the built objects):
 *
 *   session.c     lifecycle: open, execute, close; accessors
 *   open.c        snapshot -> model (nodes, queues, jobs, tasks)
 *   close.c       phases, conditions, queue statuses, nominations
 *   statement.c   undoable operations          select.c  node selection
 *                                              search.c  ... under filters and batch scores
 *                                              class.c   placement classes
 *                                              topology.c network topology
 *                                              hypernodes.c  HyperNodes into domains
 *                                              domains.c topology domains
 *   heap.c        priority queues                service.c shared per-session state
 *   points.c      registration and dispatchers   result.c  the result's lists
 *   model.c       names, counters, node accounting and task lists, lookups
 *   (keep.c       the model kept between sessions: reuse, undo, check;
 *    update.c     ... brought up to a snapshot where pods changed,
 *                 came or went (update_add.c: the ones that came);
 *    update_node.c    ... and where nodes changed in place;
 *                 all above open.c, which builds into it)
 *
 * conf.c and registry.c stand apart (conf parsing and the static tables).
 */
#ifndef KB_PKG_FRAMEWORK_INT_H
#define KB_PKG_FRAMEWORK_INT_H

#include "framework/framework.h"

/* ---- callback storage (points.c) --------------------------------------------- */

/* One member per point, typed: a dispatcher reads the member of its own
 * point, so no callback is ever cast. */
union kb_cb_fn {
#define XX(E, name, fnt, reg, flag, ret, disp, params) fnt name;
        KB_POINTS(XX)
#undef XX
};

struct kb_cb {
        union kb_cb_fn fn;
        void *arg;
        const char *plugin; /* the registering plugin's name; NULL outside a plugin */
        int tier;
        unsigned flags; /* KB_PURE */
};

struct kb_cb_list {
        struct kb_cb *v;
        size_t n, cap;
};

/* Loops over the callbacks of point P (an enum kb_point) as `e`, in tier
 * and registration order (no pointer arithmetic on an empty list's NULL). */
#define EACH_CB(s, P, e)                                                                           \
        for (const struct kb_cb *e = (s)->cb[P].v, *const e##_end =                                \
                                                       (s)->cb[P].n ? e + (s)->cb[P].n : e;        \
             e != e##_end; e++)

struct kb_select;
struct kb_classes;
struct kb_topology;
struct kb__domains_list;
struct kb__search;

/* What sessions change of a task (model.c, class.c), as built, saved
 * before the first change; a task's fit error is NULL as built, and its
 * name_index the same once read. */
struct kb__task_save {
        struct kb_task *t, *node_prev, *node_next;
        int32_t node;
        uint32_t eclass;
        enum kb_task_status status;
};

/*
 * The model kept between sessions (keep.c).  What open.c built, in its
 * pool, and copies of the jobs, nodes and queues as built; the tasks a
 * session changes are saved before their first change (saved, touched),
 * so that close puts everything back as built.
 */
struct kb_model {
        struct kb_pool pool;
        bool built;
        uint64_t gen, epoch;
        bool pg_foreign;  /* built from a snapshot with pg_foreign: not kept */
        unsigned updates; /* since built (update.c) */
        /* The pool's size as built: an update of a pool grown to twice
         * that builds instead (update.c). */
        size_t pool_built;
        /* The snapshot's other build inputs, copied. */
        char **scheduler_names;
        size_t nscheduler_names;
        char *default_queue;
        bool workload_podgroups;

        struct kb_node_info *nodes;
        size_t nnodes;
        struct kb_map node_ids, queue_ids;
        struct kb_task *tasks;
        size_t ntasks;
        struct kb_job **jobs;
        size_t njobs;
        struct kb_queue_info *queues;
        size_t nqueues;
        struct kb_res total;
        struct kb_job *base_jobs; /* per job index, as built */
        struct kb_node_info *base_nodes;
        struct kb_queue_info *base_queues;

        struct kb__task_save *saved; /* tasks changed, as built */
        size_t nsaved, capsaved;
        uint8_t *touched; /* per task index: saved already */

        /* What the model was built or updated from (update.c): the
         * snapshot's arrays as they were, each pod's task (index + 1, 0
         * for none) and each PodGroup's job. */
        const void **nodes_seen, **queues_seen, **pcs_seen, **pods_seen, **pgs_seen;
        const char **assumed_seen;
        size_t nnodes_seen, nqueues_seen, npcs_seen, npods_seen, npgs_seen;
        uint32_t *pod_task;
        struct kb_job **pg_job;
        /* Room for tasks added by updates (update.c): the task array and
         * touched hold taskcap; tasks of pods removed stay as holes
         * (kb__task_hole) until the next build.  nforeign: pods of other
         * schedulers without a task that count on a PodGroup's job
         * (foreign_pods), which an update cannot follow. */
        size_t taskcap, nforeign;
        struct kb_job **jobs_own; /* jobs, when an update made the array */

        /* repeat.c: the last result while it may be repeated (or NULL):
         * its generation, conf, clock and the clock it holds below. */
        struct kb__result_hold *last;
        uint64_t last_gen, last_conf;
        double last_now, last_until;

        uint64_t nbuilt, nreused, nupdated, nrepeated;
};

struct kb_session_cond {
        const char *type, *status, *reason, *message;
};

/*
 * The session.  Each group of fields says which file writes it; every other
 * file only reads it.
 */
struct kb_session {
        /* session.c: set by kb_session_open, constant afterwards. */
        struct kb_pool pool; /* everything below that is not freed by name */
        const struct kb_snapshot *snap;
        const struct kb_conf *conf;
        struct kb_result *result;
        bool has_enqueue;    /* the conf runs the enqueue action */
        void **plugin_state; /* per plugin, tiers flattened */
        int rc;              /* KB_EBADCONF when a conf name was missing */
        bool executed;       /* kb_session_execute ran the conf's actions */
        double clock_until;  /* decisions hold for clocks below (repeat.c) */
        /* session.c: the action being executed (for kb_session_action_args). */
        const struct kb_action_conf *cur_action;
        /* keep.c: the kept model this session builds into or uses (NULL:
         * the session's own, in its pool). */
        struct kb_model *model;

        /* points.c: the registering plugin while plugins open, and the
         * callbacks of every point. */
        const struct kb_plugin_conf *cur_plugin;
        int cur_tier;
        struct kb_cb_list cb[KB_NPOINTS];

        /* service.c: the session services made so far, in order. */
        struct kb__service *services;
        size_t nservices, capservices;

        /* open.c builds these arrays and what they point to; afterwards
         * model.c alone changes task statuses, job counters and node
         * accounting (through statements). */
        struct kb_node_info *nodes; /* sorted by name */
        size_t nnodes;
        /* Node indices by name: kb_session_node in a probe or two, where
         * a binary search over 5,000 names missed the cache a dozen times
         * for each of 100,000 tasks. */
        struct kb_map node_ids;
        struct kb_task *tasks; /* our pods' tasks, then other schedulers' */
        size_t ntasks;
        struct kb_job **jobs; /* PodGroup jobs first (by name), then lone pods */
        size_t njobs;
        struct kb_queue_info *queues; /* sorted by name */
        size_t nqueues;
        struct kb_map queue_ids; /* queue indices by name */
        struct kb_res total;
        struct kb_pool *bpool; /* what they live in: &pool, or a kept model's */
        /* The request copy in bpool made last (model.c's kb__request_of). */
        const struct kb_res *last_request;
        /* When a kept model is built: per snapshot pod, its task's index
         * + 1 (0: none); per snapshot PodGroup, its job. */
        uint32_t *pod_task;
        struct kb_job **pg_job;
        /* When a kept model is built: room for this many tasks more in the
         * task array; what foreign_pod counted (above). */
        size_t task_spare, nforeign;

        /* model.c: every change to a node's accounting appends the node's
         * index, so that caches can catch up with what changed since they
         * last looked; and the interned strings. */
        uint32_t *changes;
        size_t nchanges, capchanges;
        struct kb_map interned; /* string -> the pool's copy */

        /* select.c and class.c; search.c; domains.c */
        struct kb_select *select;
        struct kb_classes *classes;
        struct kb__search *search;
        struct kb__domains_list *domains;

        /* topology.c: the network topology (NULL until configured or
         * built), and the topology order of nodes that select.c lays its
         * trees out in: position per node index and node index per
         * position (both NULL without a topology). */
        struct kb_topology *topo;
        uint32_t *topo_pos, *topo_order;

        /* statement.c: every statement, so that the operations of ones
         * neither committed nor discarded are freed at close. */
        struct kb_statement *statements;

        /* close.c: the condition set in this session, per job index
         * (allocated by open.c). */
        struct kb_session_cond *conds;
};

#include "framework/clock.h"

/* ---- keep.c ------------------------------------------------------------------ */

/* t is about to change: a kept model saves it first (inline: model.c,
 * the bottom layer, calls it). */
static inline void kb__touch(struct kb_session *s, const struct kb_task *t)
{
        struct kb_model *m = s->model;
        if (m && !m->touched[t->index]) {
                m->touched[t->index] = 1;
                struct kb__task_save save = {
                    (struct kb_task *)t, t->node_prev, t->node_next, t->node, t->eclass, t->status};
                KB_PUSH(m->saved, m->nsaved, m->capsaved, save);
        }
}
/* update.c: m brought up to s's snapshot, when only pods and PodGroups
 * changed, were added or were removed; false when it cannot be (then m
 * is to be built). */
bool kb__model_update(struct kb_session *s, struct kb_model *m);
/* update_node.c: m's nodes brought up to s's snapshot, when its nodes are
 * m's names at the same positions, some of them changed (objects
 * replaced or updated in place); false when they are not (then m is to
 * be built).  Called by kb__model_update before the pods are looked at. */
bool kb__model_update_nodes(struct kb_session *s, struct kb_model *m);
/* The pod of a task whose pod an update removed: a hole in the task
 * array (no job, no node) until the model is built again. */
extern const struct kb_pod kb__hole_pod;
static inline bool kb__task_hole(const struct kb_task *t)
{
        return t->pod == &kb__hole_pod;
}
/* update.c and update_add.c: one update's work, what the walks found
 * and the jobs it touches. */
struct kb__update {
        struct kb_session *s;
        struct kb_model *m;
        uint64_t gen;
        size_t budget; /* pods added and removed before a build is cheaper */
        /* Per snapshot pod: its task's index + 1 (NULL while the
         * model's map holds: kb__update_map_pod); per PodGroup: its job. */
        uint32_t *pod_task;
        struct kb_job **pg_job;
        /* Snapshot positions of the pods and PodGroups new to the model. */
        size_t *pods_added, npods_added, cappods_added;
        size_t *pgs_added, npgs_added, cappgs_added;
        /* Per job index as the model has it: to be read again (why:
         * KB__DIRTY_*), dropped; and whether the job array was made
         * again (update_add.c). */
        uint8_t *dirty, *gone;
        bool restructured;
        /* Jobs made by this update (PodGroups' first), and the tasks added
         * to any job. */
        struct kb_job **made;
        size_t nmade, capmade, nmade_pg;
        struct kb__update_add {
                struct kb_job *j;
                struct kb_task *t;
        } * adds;
        size_t nadds, capadds;
};

/* Snapshot pod i's task (index + 1, 0 for none) into u's new map, in
 * order of i; the map is made only once it differs from the model's (a
 * pod added or removed before i), so an update where pods only changed
 * in place writes none. */
static inline void kb__update_map_pod(struct kb__update *u, size_t i, uint32_t v)
{
        const struct kb_model *m = u->m;
        if (!u->pod_task) {
                if (i < m->npods_seen && m->pod_task[i] == v)
                        return;
                u->pod_task = kb_xcalloc(u->s->snap->npods + 1, sizeof(*u->pod_task));
                for (size_t x = 0; x < i && x < m->npods_seen; x++)
                        u->pod_task[x] = m->pod_task[x];
        }
        u->pod_task[i] = v;
}
#define KB__DIRTY_GROUP 1 /* its PodGroup changed */
#define KB__DIRTY_TASKS 2 /* a task came, went or changed */
/* update_add.c: the new PodGroups' and pods' jobs and tasks, and the
 * job array with the jobs made merged in and the dropped ones out; false
 * when only a build says it right. */
bool kb__update_add(struct kb__update *u);
/* Whether j is the job of a pod without a group (its one task's). */
static inline bool kb__lone_job(const struct kb_job *j)
{
        return !j->pg && j->ntasks == 1 && j->name == j->tasks[0]->name;
}
/* A pod of another scheduler on no node that a build counts on a group's
 * job (open.c's foreign_pod). */
static inline bool kb__counts_foreign(const struct kb_pod *p)
{
        return p->group_name && *p->group_name && p->phase == KB_POD_PENDING && !p->meta.deletion;
}
/* Opening: the model's arrays into s, used again or built (kb__session_build). */
void kb__model_open(struct kb_session *s);
/* Closing: everything the session changed put back as built. */
void kb__model_close(struct kb_session *s);
/* Whether m was built from a snapshot like snap but for its objects. */
bool kb__model_same_input(const struct kb_model *m, const struct kb_snapshot *snap);
/* Every KB_MODEL_CHECK-th session (1 unless the environment says; tests). */
bool kb__model_check_due(const struct kb_model *m);

/* ---- repeat.c ---------------------------------------------------------------- */

/* When the last result is this session's: true, result it again. */
bool kb__repeat_result(struct kb_model *m, const struct kb_snapshot *snap,
                       const struct kb_conf *conf, struct kb_result *result);
/* Closing on a kept model: the result kept when it may be repeated. */
void kb__repeat_keep(struct kb_session *s);
/* Aborts on the first difference from running (test builds). */
void kb__repeat_check(const struct kb_result *repeated, const struct kb_result *ran);

/* ---- model.c ----------------------------------------------------------------- */

/* t to status st, keeping its job's counters and allocated sum and, when t
 * is on a node, the node's accounting (t stays in the node's list). */
void kb__task_move(struct kb_session *s, struct kb_task *t, enum kb_task_status st);
/* Puts t (not on any node) on n: accounting by t's status, appended to n's
 * task list, t->node set. */
void kb__node_attach(struct kb_session *s, struct kb_node_info *n, struct kb_task *t);
/* Takes t off its node: accounting, list, t->node = -1. */
void kb__node_detach(struct kb_session *s, struct kb_task *t);
/* kb__node_attach, with t placed in n's list by task index (where a
 * build would have put it). */
void kb__node_attach_ordered(struct kb_session *s, struct kb_node_info *n, struct kb_task *t);
/* Request r as a task keeps it: old (the task's copy, or NULL) when r is
 * equal to it, else a copy in s->bpool that tasks asking alike share. */
const struct kb_res *kb__request_of(struct kb_session *s, const struct kb_res *old,
                                    const struct kb_res *r);

/* ---- points.c ---------------------------------------------------------------- */

/* The predicates without the placement filters: what a placement class's
 * cache keeps per node. */
const char *kb__predicate_static(struct kb_session *s, const struct kb_task *t,
                                 const struct kb_node_info *n);

/* Callbacks registered from now on belong to plugin pc (NULL: none) in
 * tier; the conf's enable flags of pc apply. */
void kb__points_begin(struct kb_session *s, int tier, const struct kb_plugin_conf *pc);
void kb__points_release(struct kb_session *s);

/* ---- result.c ---------------------------------------------------------------- */

void kb__result_add_bind(struct kb_session *s, const struct kb_task *t);
/* r's lists held for sharing (r's reference and the one returned); r
 * again from a hold (no times); a reference dropped, the last frees. */
struct kb__result_hold *kb__result_hold(struct kb_result *r);
void kb__result_from_hold(struct kb_result *r, struct kb__result_hold *h);
void kb__result_unhold(struct kb__result_hold *h);
void kb__result_add_eviction(struct kb_session *s, const struct kb_task *t, const char *action,
                             const char *reason, const char *group);
/* Appends w (its strings must live in the result's pool or longer). */
void kb__result_add_warning(struct kb_session *s, const struct kb_warning *w);

/* ---- select.c, search.c, class.c, domains.c, statement.c ------------------------ */

/*
 * A placement class's cache (select.c builds and keeps it current; search.c
 * reads it).  The tree is a max-tree over size leaves (a power of two >=
 * the node count): node k's children are 2k and 2k+1, leaf i is size + i,
 * and every tree node holds its subtree's best (gradient, score, node).
 */
struct kb__prune;
/* A node of the max-tree over nodes (select.c): the best node under it,
 * its score and gradient (2 fits idle, 1 fits future idle, 0 infeasible).
 * One 16-byte entry, so that a step up the tree reads the two children
 * from one cache line instead of three arrays' three (W8's catch-up walks
 * 16 levels for each of a million placements). */
struct kb__entry {
        double score;
        uint32_t best;
        uint8_t grad;
};

struct kb__cache {
        uint32_t eclass;
        const struct kb_task *proto;
        size_t log_pos;
        uint64_t last_use;
        uint32_t size;          /* leaves, a power of two >= nnodes */
        struct kb__entry *tree; /* 2*size, [1] is the root */
        /* Per node: index+1 into reasons[] of the static verdict (0 passes),
         * and the mask of resources short. */
        uint16_t *static_why;
        uint16_t *short_mask;
        /* Reason counts: per resource slot, and per static reason (counted
         * only for nodes where nothing is short, as Volcano checks resources
         * before predicates). */
        uint32_t short_count[KB_RES_MAX];
        const char **reasons;
        uint32_t *reason_count;
        size_t nreasons;
        /* The words of those counts (kb__cache_reasons) as of log_pos
         * why_pos: asked for every task that fits nowhere, they change only
         * when the cache catches up with a change. */
        const char *why;
        size_t why_pos;
        /* Per topology key a placement filter hinted at: which domains each
         * subtree holds (search.c builds them on first use). */
        struct kb__prune *prune;
        size_t nprune;
};

/* Why no node of cache c takes its class's tasks, by the counts alone
 * ("0/4 nodes are available: 4 Insufficient cpu."). */
const char *kb__cache_reasons(struct kb_session *s, struct kb__cache *c);

/* Node i's leaf in cache c: its position in the topology order when the
 * session has a network topology (each domain's nodes then form a range of
 * leaves, which kb_select_node_in queries), else i.  Ties still go by node
 * index. */
#define KB__LEAF(c, s, i) ((c)->size + ((s)->topo_pos ? (s)->topo_pos[i] : (i)))

/* (gradient, score, index) a beats b: the higher gradient, then the higher
 * score, then the lower index (the name that sorts first). */
static inline bool kb__better(uint8_t ga, double sa, uint32_t ia, uint8_t gb, double sb,
                              uint32_t ib)
{
        if (ga != gb)
                return ga > gb;
        return sa > sb || (sa == sb && ia < ib);
}

/* Tree entry a beats b (kb__better). */
static inline bool kb__entry_better(const struct kb__entry *a, const struct kb__entry *b)
{
        return kb__better(a->grad, a->score, a->best, b->grad, b->score, b->best);
}

/*
 * search.c: the best node for t in a caught-up cache c, when placement
 * filters restrict t or batch scores vary for it; NULL with the reasons in
 * *why when none fits.  Sets *plain when neither applies to t (the tree's
 * root is the answer, and nothing was done).
 */
struct kb_node_info *kb__search(struct kb_session *s, struct kb__cache *c, struct kb_task *t,
                                uint32_t lo, uint32_t hi, const char **why, bool *plain);
/* Frees what search.c hung on a cache, and its scratch. */
void kb__search_cache_free(struct kb__cache *c);
void kb__search_release(struct kb_session *s);
/*
 * The fit error, worded as kube-scheduler's FitError ("0/N nodes are
 * available: <count> <reason>, ... ."): short_count[d] nodes short of
 * resource d, counts[i] nodes that failed with reasons[i].
 */
const char *kb__fit_error(struct kb_session *s, size_t nnodes,
                          const uint32_t short_count[KB_RES_MAX], const char *const *reasons,
                          const uint32_t *counts, size_t nreasons);
/* The reason a resource slot is short, in kube-scheduler's words. */
void kb__short_reason(int slot, char *buf, size_t n);
/* Whether t's request fits n's future idle resources, as a mask of the
 * slots it does not (0: fits). */
uint16_t kb__short_mask(const struct kb_task *t, const struct kb_node_info *n);
void kb__domains_release(struct kb_session *s);

void kb__select_init(struct kb_session *s);
void kb__select_release(struct kb_session *s);
void kb__classes_init(struct kb_session *s);
void kb__classes_release(struct kb_session *s);
/* t's placement class (computed once, kept in t->eclass). */
uint32_t kb__class_of(struct kb_session *s, struct kb_task *t);
void kb__statements_release(struct kb_session *s);

/* ---- topology.c and hypernodes.c ------------------------------------------------- */

struct kb__topo_seen {
        struct kb_res idle, future_idle, used;
};

struct kb__topo_warning {
        const struct kb_hypernode *hn;
        const char *message;
};

/* The session's network topology (s->topo). */
struct kb_topology {
        struct kb_topology_conf conf; /* labels point into the pool */
        /* hypernodes.c and topology.c build the forest. */
        struct kb_domain *domains;
        size_t ndomains, capdomains;
        int32_t *node_domain; /* per node index: its lowest domain, -1 */
        struct kb__topo_warning *warnings;
        size_t nwarnings, capwarnings;
        /* topology.c: the rooms and what they last counted per node. */
        struct kb_domain_room *room;
        struct kb__topo_seen *seen;
        size_t log_pos;
};

/* hypernodes.c: a warning about HyperNode hn (msg lives in the session
 * pool); a new domain (its index); whether domain a is d or above it; the
 * snapshot's HyperNodes into domains. */
void kb__topology_warn(struct kb_session *s, const struct kb_hypernode *hn, const char *msg);
#define KB__TOPOLOGY_WARN(s, hn, ...)                                                              \
        kb__topology_warn((s), (hn), kb_pool_printf(&(s)->pool, __VA_ARGS__))
int32_t kb__topology_add_domain(struct kb_session *s, const char *name, const char *tier_name,
                                int32_t tier, int32_t parent, const struct kb_hypernode *hn);
bool kb__topology_is_ancestor(const struct kb_topology *t, int32_t a, int32_t d);
void kb__topology_from_hypernodes(struct kb_session *s);

/* Builds the network topology (after the plugins opened: the conf's label
 * tiers come from one); nothing when there is none. */
void kb__topology_build(struct kb_session *s);
void kb__topology_release(struct kb_session *s);
/* The topology's warnings (bad HyperNodes) and node counts into the result. */
void kb__topology_report(struct kb_session *s);

/* ---- open.c, close.c ---------------------------------------------------------- */

/* Builds nodes, queues, jobs and tasks from the snapshot, in pool (the
 * session's or a kept model's). */
void kb__session_build(struct kb_session *s, struct kb_pool *pool);
/* What a build reads of a node object into n (update_node.c reads a
 * changed one again): the object, its name and allocatable; not its
 * index, sums or tasks. */
void kb__node_read(struct kb_node_info *n, const struct kb_node *node);
/* What update.c shares with the build: pod i's node (nodeName, or where
 * it is assumed), status, whether it is ours and the group it joins
 * (NULL: none; *workload: the group kbatch makes for its workload); a
 * task's fields from its pod (not its index, name, job or node; t->resreq
 * must be NULL or the task's request copy, kept if still equal); a task
 * counted on its job (sign 1) or taken off (-1); a job's PodGroup fields;
 * a job's queue and the invalid reasons found when its n tasks are known. */
const char *kb__pod_node(const struct kb_snapshot *snap, size_t i);
enum kb_task_status kb__pod_status(const struct kb_pod *p, const char *node);
bool kb__pod_ours(const struct kb_snapshot *snap, const struct kb_pod *p);
bool kb__pod_place(struct kb_session *s, size_t i, enum kb_task_status *st,
                   struct kb_node_info **node);
const char *kb__pod_group(const struct kb_snapshot *snap, const struct kb_pod *p, bool *workload);
void kb__task_fields(struct kb_session *s, struct kb_task *t, const struct kb_pod *p,
                     enum kb_task_status st);
void kb__job_count(struct kb_job *j, const struct kb_task *t, int sign);
void kb__job_from_pg(struct kb_session *s, struct kb_job *j, const struct kb_podgroup *pg);
void kb__job_resolve(struct kb_session *s, struct kb_job *j, uint32_t n);
/* A pod name's index for task order (kb_task.name_index), -1 for none. */
int64_t kb__pod_name_index(const char *name);
/* PodGroup and queue statuses and nominations into the result. */
void kb__session_statuses(struct kb_session *s);
/* inqueue.c: sends back to Pending the groups whose Inqueue timeout ran
 * out (after the model is built, before the plugins open). */
void kb__inqueue_timeouts(struct kb_session *s);
/* Before the plugins close: each waiting job's place in its queue. */
void kb__session_positions(struct kb_session *s);

#ifdef KB_TESTING
/* Purity violations seen by select.c's checks; test builds abort on the
 * first unless kb__purity_abort is cleared (a test that provokes one). */
extern unsigned kb__purity_violations;
extern bool kb__purity_abort;
#endif

/* service.c: runs each service's ready (after the plugins open) and free
 * (after they close). */
void kb__services_ready(struct kb_session *s);
void kb__services_release(struct kb_session *s);

#endif /* KB_PKG_FRAMEWORK_INT_H */
