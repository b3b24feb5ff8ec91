/*
 * Helpers that several plugin files share (not a public interface: the
 * plugins' only public symbols are their kb_plugin descriptors).
 */
#ifndef KB_PLUGINS_PLUGINS_INT_H
#define KB_PLUGINS_PLUGINS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "framework/framework.h"

/* The node's label value for key, or NULL when it has none. */
const char *kb__plugins_node_label(const struct kb_node *node, const char *key);

/*
 * Whether node matches one NodeSelectorTerm, as kube-scheduler's
 * nodeaffinity helpers decide (see plugins/nodeselector.c).  predicates uses
 * it for required terms, nodeorder for preferred ones.
 */
bool kb__plugins_term_matches(const struct kb_node_term *term, const struct kb_node *node);

/* Whether node passes pod's nodeSelector and required node affinity
 * (kube-scheduler's RequiredNodeAffinity.Match). */
bool kb__plugins_node_affinity(const struct kb_pod *pod, const struct kb_node *node);
/* Whether some toleration of pod tolerates the taint (ToleratesTaint). */
bool kb__plugins_tolerates(const struct kb_pod *pod, const char *key, const char *value,
                           enum kb_taint_effect effect);
/* The node's first NoSchedule or NoExecute taint pod does not tolerate, or
 * NULL. */
const struct kb_taint *kb__plugins_untolerated(const struct kb_pod *pod,
                                               const struct kb_node *node);
/* How many of the node's PreferNoSchedule taints pod does not tolerate
 * (TaintToleration's score before normalising). */
uint32_t kb__plugins_intolerable_soft(const struct kb_pod *pod, const struct kb_node *node);

/* ---- the inter-pod index (interpod.c) -------------------------------------------- */

/*
 * Pods per topology domain, kept current through the session's
 * statements (see interpod.c).  One per session, a session service: a
 * plugin gets it in its open (the first to ask builds it) and asks for the
 * counters its tasks need; once every plugin has opened, the index counts
 * what is on the nodes and keeps the counts current.  The session frees it.
 */

/* The kinds of terms pods carry that an incoming pod is matched against. */
enum kb__carry_class {
        KB__CARRY_ANTI,      /* required anti-affinity (symmetry of the filter) */
        KB__CARRY_PREF_AFF,  /* preferred affinity (scores the incoming pod) */
        KB__CARRY_PREF_ANTI, /* preferred anti-affinity */
        KB__CARRY_CLASSES
};

/* The index's parts, shared by its files (interpod.c: the service, its
 * counters and tasks; interpod_count.c: the counts; interpod_match.c: the
 * label selectors; interpod_elig.c: topology spread's node eligibility).
 * No plugin but those reads them. */
struct ptask;
struct kb__ctr {
        uint32_t id;
        bool carrying;
        bool live;                    /* skip pods being deleted */
        const struct kb_domains *dom; /* NULL: per node */
        const uint8_t *eligible;      /* per node; NULL: every node */
        const struct kb_pod_term *const *terms;
        size_t nterms;
        /* Counts: dense[d], or a map from domain to count. */
        int32_t *dense;
        struct kb_map counts;
        int64_t total;
        /* Domains holding an eligible node, and the histogram of their
         * counts (hist[c]: how many such domains count c): the minimum is
         * kept in O(1) per change. */
        uint8_t *present;
        uint32_t npresent;
        uint32_t *hist;
        size_t nhist;
        int32_t min;
};

struct postings {
        /* "key\0value" (in the session pool) -> struct anchor * */
        struct kb_map anchors;
        uint32_t *loose; /* filed under nothing: checked for every pod */
        size_t nloose, caploose;
};

struct nslabels {
        const char *name;
        const struct kb_meta *meta; /* NULL: the namespace is not in the snapshot */
};

struct kb__ipod {
        struct kb_session *s;
        size_t nnodes, ntasks;
        struct kb_task *tasks;
        struct kb__ctr **ctrs;
        size_t nctrs, capctrs;
        size_t nrequests; /* counters asked for, shared ones included */
        /* canonical key (binary, in the session pool) -> counter id */
        struct kb_map byname;
        struct postings match_post, carry_post[KB__CARRY_CLASSES];
        struct ptask *pt;
        /* eligibility signature (in the pool) -> per-node flags */
        struct kb_map eligs;
        /* namespace name -> struct nslabels * */
        struct kb_map ns;
        bool started;
        struct kb_buf key; /* scratch for canonical keys */
};
/* What interpod_count.c, _match.c and _elig.c share with interpod.c: a
 * copy of b in the session pool; canonical key parts (binary: numbers as
 * they are, strings with their length first); a change of c's count at
 * domain d by delta. */
void *kb__ipod_copy_key(struct kb__ipod *ix, const struct kb_buf *b);
void kb__ipod_key_num(struct kb_buf *b, uint64_t v);
void kb__ipod_key_str(struct kb_buf *b, const char *s);
void kb__ctr_bump(struct kb__ctr *c, uint32_t d, int32_t delta);

/* Whether any job has a task Pending when the session opens: without one
 * nothing is placed in the session (evictions leave tasks Releasing, not
 * Pending), so the placement filters and scores have nothing to do and an
 * idle session does not read every pod's rules.  From the jobs' counts. */
bool kb__any_pending(struct kb_session *s);

struct kb__ipod *kb__ipod_get(struct kb_session *s);
/* How many counters have been asked for so far (a plugin compares before
 * and after its open to know whether it needs the index at all). */
size_t kb__ipod_requests(const struct kb__ipod *ix);
/* gang_count.c: Volcano's per-role counts (JobInfo.CheckTaskValid,
 * CheckTaskReady, CheckTaskPipelined) and the gang's own; gang_close.c:
 * the conditions gang writes at close. */
enum kb__gang_count { KB__COUNT_VALID, KB__COUNT_READY, KB__COUNT_PIPELINED };
/* Per task (inline: gang_valid asks it of every task of every job); a
 * pending best-effort task counts as ready, since it needs no room. */
static inline bool kb__gang_counts(enum kb__gang_count which, const struct kb_task *t)
{
        enum kb_task_status st = t->status;
        bool ready = kb_task_status_allocated(st) || st == KB_TASK_SUCCEEDED ||
                     (st == KB_TASK_PENDING && t->best_effort);
        switch (which) {
        case KB__COUNT_VALID:
                return ready || st == KB_TASK_PIPELINED || st == KB_TASK_PENDING;
        case KB__COUNT_READY:
                return ready;
        case KB__COUNT_PIPELINED:
                return ready || st == KB_TASK_PIPELINED;
        }
        return false;
}

/* Whether every role with a minTaskMember has enough tasks counted. */
bool kb__gang_roles_ok(const struct kb_job *j, enum kb__gang_count which);
static inline bool kb__gang_is_ready(const struct kb_job *j)
{
        return kb_job_ready_count(j) + j->pending_best_effort >= (uint32_t)j->min_available;
}
static inline bool kb__gang_is_pipelined(const struct kb_job *j)
{
        return kb_job_waiting_count(j) + kb_job_ready_count(j) + j->pending_best_effort >=
               (uint32_t)j->min_available;
}
void kb__gang_close(struct kb_session *s, void *state);

#ifdef KB_TESTING
/* Indexes built so far (one per session that asks). */
extern unsigned kb__ipod_builds;
#endif
/* Pods matching every one of terms, per domain of topology_key (NULL: per
 * node); live: not pods being deleted; eligible (per node, NULL: all):
 * only pods on those nodes.  Equal requests share one counter.  terms
 * must outlive the session (they point into pods). */
struct kb__ctr *kb__ipod_matching(struct kb__ipod *ix, const struct kb_pod_term *const *terms,
                                  size_t nterms, const char *topology_key, bool live,
                                  const uint8_t *eligible);
/* Pods carrying term (of class cls), weighted, per domain of its key. */
struct kb__ctr *kb__ipod_carrying(struct kb__ipod *ix, enum kb__carry_class cls,
                                  const struct kb_pod_term *term);
/* The pods topology spread constraint c of pod counts, as a term: pod's
 * own namespace, c's selector (matching nothing when empty, as
 * kube-scheduler counts); from the session pool. */
const struct kb_pod_term *kb__ipod_spread_term(struct kb__ipod *ix, const struct kb_pod *pod,
                                               const struct kb_spread *c);
/* t carries c's term with weight (1 for a required term). */
void kb__ipod_carries(struct kb__ipod *ix, const struct kb_task *t, struct kb__ctr *c,
                      int32_t weight);
/* Topology spread's node eligibility for pod's constraint c (all of pod's
 * constraints of that kind need their key; the inclusion policies), per
 * node; shared between equal signatures. */
const uint8_t *kb__ipod_eligible(struct kb__ipod *ix, const struct kb_pod *pod,
                                 const struct kb_spread *c, bool schedule_anyway);
/* The carrying counters of class cls whose term matches t's pod (kept for
 * t); their number. */
size_t kb__ipod_carriers(struct kb__ipod *ix, const struct kb_task *t, enum kb__carry_class cls,
                         struct kb__ctr *const **out);

int32_t kb__ctr_get(const struct kb__ctr *c, uint32_t domain);
int64_t kb__ctr_total(const struct kb__ctr *c);
/* Node n's domain for c (KB_NO_DOMAIN without the label). */
uint32_t kb__ctr_domain(const struct kb__ctr *c, uint32_t node);
const struct kb_domains *kb__ctr_domains(const struct kb__ctr *c);
/* For an eligible counter: the least count over the domains holding an
 * eligible node, and their number; false when there is none. */
bool kb__ctr_min(const struct kb__ctr *c, int32_t *min, uint32_t *ndomains);
/* The domains with a non-zero count into out (up to cap); their number. */
size_t kb__ctr_nonzero(const struct kb__ctr *c, uint32_t *out, size_t cap);

/* Whether pod matches a pod affinity term (namespace, then labels). */
bool kb__term_matches(const struct kb__ipod *ix, const struct kb_pod_term *t,
                      const struct kb_pod *pod);

/* ---- placement filters (podfilter.c) and batch scores (podscore.c) ---------------- */

/* Opens the placement filters predicates registers — host ports,
 * inter-pod affinity, topology spread — those switched on; NULL when none
 * is.  Called from predicates' open; freed by its close. */
struct kb__podfilter;
struct kb__podfilter *kb__podfilter_open(struct kb_session *s, bool ports, bool affinity,
                                         bool spread);
void kb__podfilter_close(struct kb__podfilter *f);

/* Opens the batch scores nodeorder registers — inter-pod affinity, taint
 * toleration, topology spread — with their weights (0 leaves one out);
 * NULL when every weight is 0. */
struct kb__podscore;
struct kb__podscore *kb__podscore_open(struct kb_session *s, int64_t w_aff, int64_t w_taint,
                                       int64_t w_spread);
void kb__podscore_close(struct kb__podscore *p);

/* Images on nodes, for ImageLocality: per image name, the nodes holding it
 * and its size. */
struct kb__images;

/* nodeorder's configuration: the weight of each scorer. */
struct kb__nodeorder {
        int64_t least, most, balanced, affinity;
        int64_t pod_affinity, taint, image, spread;
        int gpu; /* resource slot of nvidia.com/gpu, or -1 */
        struct kb__images *images;
        struct kb__podscore *batch;
};

/* binpack's configuration. */
struct kb__binpack {
        int64_t weight;
        bool has[KB_RES_MAX];    /* the slot has a weight (was configured) */
        int64_t res[KB_RES_MAX]; /* its weight */
};

/* ---- capacity (plugins/capacity.c, its queue tree in capacity_tree.c) ---- */

/* A resource vector: one amount per resource slot (INFINITY: no limit). */
typedef double kb__vec[KB_RES_MAX];

/* One queue's attributes in capacity (Volcano's queueAttr). */
struct kb__capq {
        const struct kb_queue_info *info; /* NULL for the implicit root */
        const char *name;
        int parent; /* index; -1 at the root, without hierarchy, or when broken */
        int depth;  /* 0 at the root */
        int nchildren;
        /* Why the queue has no place in the hierarchy (its spec.parent names
         * no queue, or its parents form a cycle), or NULL. */
        const char *broken;
        /* Why a job in this queue cannot run: broken, or (with hierarchy) a
         * queue with children; NULL when jobs may run here. */
        const char *refuse;
        kb__vec deserved, allocated, inqueue, elastic, guarantee, capability, real_cap;
        double share;
};

struct kb__capacity {
        struct kb_session *s;
        bool hierarchy;     /* enableHierarchy */
        int64_t level;      /* ancestorReclaimLevel (no deeper than depth) */
        struct kb__capq *q; /* by session queue index, then the implicit root */
        size_t n;           /* the session's queues, plus the implicit root if any */
        int root;           /* the root's index; -1 without hierarchy */
        int depth;          /* the deepest queue's depth */
        int *slot;          /* reclaimable's scratch, by queue: -1 */
};

/* Fills c->q from the session (c->s, c->hierarchy set): limits, deserved,
 * what the jobs hold, request and reserve, shares. */
void kb__capacity_build(struct kb__capacity *c);
/* a's share: the largest allocated/deserved over the resources it deserves;
 * 1 for a queue that deserves nothing (best effort). */
void kb__capacity_share(struct kb__capq *a);
/* The queue level steps above q (1: its parent), or -1. */
static inline int kb__capacity_above(const struct kb__capacity *c, int q, int64_t level)
{
        for (; level > 0 && q >= 0; level--)
                q = c->q[q].parent;
        return q;
}
/* With hierarchy, Volcano's victimQueueOrder: of two victims' queues, the
 * one whose lowest common ancestor with the preemptor's is deeper first
 * (plugins/capacity_victims.c), a kb_victim_queue_order_fn. */
int kb__capacity_victim_queue_order(void *arg, const struct kb_queue_info *l,
                                    const struct kb_queue_info *r,
                                    const struct kb_queue_info *preemptor);
/* capacity's reclaimable (plugins/capacity_victims.c), a kb_victims_fn. */
int kb__capacity_reclaimable(void *arg, const struct kb_task *reclaimer,
                             struct kb_task *const *cand, size_t n, struct kb_task **out);

/* ---- drf's hierarchy (plugins/hdrf.c) ---- */

/* The hierarchical drf tree of a session (Volcano's hdrf): built from the
 * session's queues and jobs; kb__hdrf_close frees what open allocated
 * outside the session pool. */
struct kb__hdrf;
struct kb__hdrf *kb__hdrf_open(struct kb_session *s);
void kb__hdrf_close(struct kb__hdrf *h);
/* t took room (sign 1) or gave it back (-1): the tree is recomputed when
 * next asked. */
void kb__hdrf_account(struct kb__hdrf *h, const struct kb_task *t, double sign);
/* A kb_queue_order_fn and a kb_victims_fn over the tree. */
int kb__hdrf_queue_order(void *arg, const struct kb_queue_info *l, const struct kb_queue_info *r);
int kb__hdrf_reclaimable(void *arg, const struct kb_task *reclaimer, struct kb_task *const *cand,
                         size_t n, struct kb_task **out);

/* Volcano's binpack weights under a key prefix ("binpack.", and
 * network-topology-aware's "hypernode.binpack."): <prefix>cpu and
 * <prefix>memory (1), <prefix>resources ("a, b") and
 * <prefix>resources.<name> (1); negative weights mean 1.  Sets has[] and
 * res[] only. */
void kb__plugins_binpack_weights(const struct kb_value *args, const char *prefix,
                                 struct kb__binpack *bp);

#ifdef KB_TESTING
/* The plugins' file-local functions (KB_TESTABLE), for the unit tests. */
const char *predicates_check(const struct kb_pod *pod, const struct kb_node *node, char *buf,
                             size_t len);

void nodeorder_conf(const struct kb_value *args, struct kb__nodeorder *no);
int64_t nodeorder_least_requested(const struct kb_task *t, const struct kb_node_info *n);
int64_t nodeorder_most_requested(const struct kb_task *t, const struct kb_node_info *n);
int64_t nodeorder_balanced_resource(const struct kb_task *t, const struct kb_node_info *n, int gpu);
int64_t nodeorder_node_affinity(const struct kb_task *t, const struct kb_node_info *n);
int64_t nodeorder_image_locality(const struct kb__images *im, const struct kb_task *t,
                                 const struct kb_node_info *n);
double nodeorder_score(void *arg, const struct kb_task *t, const struct kb_node_info *n);

void binpack_conf(const struct kb_value *args, struct kb__binpack *bp);
double binpack_score(void *arg, const struct kb_task *t, const struct kb_node_info *n);
#endif

/* ---- the reservation plugin's domains (reservation_domain.c) ----------------------- */

/* A domain a hard-topology gang may be reserved in: its node indices and
 * their allocatable room, summed. */
struct kb__resv_domain {
        const struct kb_domain *d;
        uint32_t *nodes;
        size_t n;
        struct kb_res allocatable;
};

/*
 * Where j's reservation may go.  false: anywhere (no topology, a soft one,
 * or a tierName no domain has, which allocate ignores too).  true: within
 * one of *out (*n of them, lowest tier first, then by name; free with
 * kb__resv_domains_free) whose room can ever hold want; when there is
 * none, *why says so ("no expected start: ...", the session's string).
 * Session thread only.
 */
bool kb__resv_domains(struct kb_session *s, const struct kb_job *j, const struct kb_res *want,
                      struct kb__resv_domain **out, size_t *n, const char **why);
void kb__resv_domains_free(struct kb__resv_domain *v, size_t n);

/* ---- the reservation plugin's room over time (reservation_room.c) ------------------- */

/* Per session: what each node's tasks hold until their expected ends, and
 * what the reservations take, as sorted step functions.  Session thread
 * only; the nodes are the session's (a node's tasks are read again when
 * its version changes). */
struct kb__resv_room;
struct kb__resv_room *kb__resv_room_new(struct kb_session *s, double now, double window,
                                        double resolution);
void kb__resv_room_free(struct kb__resv_room *m);
/* A task's declared runtime in seconds, INFINITY when none (cached). */
double kb__resv_declared(struct kb__resv_room *m, const struct kb_task *t);
/* Whether t holds room on its node (placed, running or releasing). */
bool kb__resv_holds_room(const struct kb_task *t);
/* When t gives its room back: its start (now for one placed in this
 * session or not started) plus its declared runtime, never before now;
 * now for a releasing one; INFINITY when it declares none. */
double kb__resv_expected_end(struct kb__resv_room *m, const struct kb_task *t);
/* t rounded up to the resolution's grid, never before now. */
double kb__resv_on_grid(const struct kb__resv_room *m, double t);
/* Node's allocatable less what its tasks hold past at. */
void kb__resv_room_tasks(struct kb__resv_room *m, uint32_t node, double at, struct kb_res *out);
/* That, less the reservations active at at. */
void kb__resv_room_at(struct kb__resv_room *m, uint32_t node, double at, struct kb_res *out);
/* The least room, per resource, over [at, at + dur). */
void kb__resv_room_over(struct kb__resv_room *m, uint32_t node, double at, double dur,
                        struct kb_res *out);
/* Takes amount on node over [start, end) (end INFINITY: for ever). */
void kb__resv_room_reserve(struct kb__resv_room *m, uint32_t node, double start, double end,
                           const struct kb_res *amount);
/* How many tasks on node hold room declaring no runtime. */
uint32_t kb__resv_room_unbounded(struct kb__resv_room *m, uint32_t node);
/* Whether the nodes (only[0..nonly), or all when only is NULL) could
 * hold want at at as far as their tasks go: the room past at, summed
 * where positive.  False means no placement fits then, nor any earlier. */
bool kb__resv_room_may_fit(struct kb__resv_room *m, const uint32_t *only, size_t nonly,
                           double at, const struct kb_res *want);
/* Adds a reservation's room, summed over its nodes, to the cluster's. */
void kb__resv_room_reserved(struct kb__resv_room *m, double start, double end,
                            const struct kb_res *total);
/* Whether the whole cluster's room over [at, at + dur), summed over the
 * nodes where positive, may reach want; false means it does not (an
 * upper bound: the least over time of the unclamped sum, plus what nodes
 * below 0 take from it).  Call after kb__resv_room_candidates, with no
 * node changed since (within one plan). */
bool kb__resv_room_may_hold(struct kb__resv_room *m, double at, double dur,
                            const struct kb_res *want);
/* The tasks' expected ends within the window, on the grid, ascending,
 * each once (valid until the next call). */
const double *kb__resv_room_candidates(struct kb__resv_room *m, size_t *n);

#endif /* KB_PLUGINS_PLUGINS_INT_H */
