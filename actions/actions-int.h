/*
 * What actions share (not a public interface: the actions' only public
 * symbols are their kb_action descriptors): placing a task with evictions
 * (evict.c, parts.c, whole.c, victims.c, for preempt and reclaim), and
 * allocate's turn with its task loop and network topology path
 * (allocate.c, tasks.c, topology.c).
 */
#ifndef KB_ACTIONS_ACTIONS_INT_H
#define KB_ACTIONS_ACTIONS_INT_H

#include "framework/framework.h"

struct kb__memo;
struct kb__whole;
struct kb__bound;

/*
 * How an action evicts: which tasks it may consider at all, which vote of
 * the plugins picks victims among them, and into which statement.
 */
struct kb__evictor {
        struct kb_session *s;
        const char *action; /* "preempt" or "reclaim": the evictions' action */
        /* The action's own rule, before the plugins vote: whether victim
         * may be evicted for preemptor at all (status, queue, job). */
        bool (*eligible)(const struct kb_task *preemptor, const struct kb_task *victim);
        /* The plugins' vote among eligible candidates (kb_preemptable or
         * kb_reclaimable). */
        size_t (*vote)(struct kb_session *s, const struct kb_task *preemptor,
                       struct kb_task *const *candidates, size_t n, struct kb_task **out);
        /* Preempt: the preemptor's queue must also take the task once the
         * victims are gone (allocatable); reclaim asked preemptive first. */
        bool allocatable;
        /* Set per task by kb__evict_place: allocatable, and the queue does
         * not take the task before anything is evicted, so victims are
         * taken until it does. */
        bool queue_short;
        /* Topology-aware preemption (preempt's argument
         * enableTopologyAwarePreemption): victims are chosen per node by
         * simulating the node without them and asking every filter again,
         * and nodes are ranked as kube-scheduler's DefaultPreemption does
         * (evict.c). */
        bool topology;
        /* Whether eligible reads the preemptor's own job (preempt's rules:
         * other jobs, or its own): then a node's "nothing to spare" holds
         * for that job only where the job has tasks on the node; elsewhere
         * every job of the queue sees the same candidates. */
        bool per_job;
        struct kb_statement *st;
        /* Scratch, owned by evict.c. */
        struct kb__memo *memo; /* per node */
        uint32_t epoch;
        uint32_t *own; /* per node: own_stamp where the preemptor's job has tasks */
        uint32_t own_stamp;
        struct kb__whole *whole; /* place_whole's jobs, kept sorted between calls */
        size_t nwhole;
        struct kb__bound *bounds; /* place_parts: per node that may give */
        bool *picked;             /* per task index */
        int32_t *pdb_left;        /* per PodDisruptionBudget: disruptions left */
        uint32_t *taken;          /* per job index */
        bool *skip;               /* per job index */
        struct kb_task **cand, **out, **pick, **best;
        size_t cap;
};

#ifdef KB_TESTING
/* Test builds: how many times a node's candidates were looked at, past
 * the memos (evict.c, node_offer), how many nodes were asked for their
 * victims after their bounds (place_parts), and how many times the jobs
 * were sorted for a whole-gang eviction (place_whole); tests count them,
 * never time. */
extern unsigned long kb__evict_node_scans, kb__evict_whole_sorts, kb__evict_offers;
/* ... and how many tasks allocate asked its queue about (tasks.c). */
extern unsigned long kb__alloc_queue_asks;
#define COUNT(c) ((c)++)
#else
#define COUNT(c) ((void)0)
#endif

/* evict.c, parts.c: what a node offered, and what it may still give. */
typedef bool (*kb__rule_fn)(const struct kb_task *, const struct kb_task *);

struct cost {
        size_t victims;
        int32_t top_priority; /* the highest job priority among them */
        double oldest;        /* the earliest creation among them */
        /* Topology-aware preemption (kube-scheduler's order): */
        size_t pdb_broken;  /* victims that would break a PodDisruptionBudget */
        int32_t top_pod;    /* the highest pod priority among them */
        int64_t sum;        /* the sum of (pod priority + 2^31) */
        double top_started; /* the earliest creation among those of top_pod */
};

struct kb__memo {
        uint32_t epoch;   /* the evictor's epoch when written (kb__evictor_forget) */
        uint32_t version; /* the node's version when it gave nothing */
        uint32_t job, eclass;
        kb__rule_fn rule;
        bool set;
        /* The node's version when none of its candidates could go without
         * cutting a gang, for preemptors of this queue under this rule,
         * best-effort or not (the status rule tells them apart), and of
         * this job when the rule reads it (e->per_job) and the job has
         * tasks on the node: where it has none, preempt's rules give every
         * job of the queue the same candidates, so the memo is shared by
         * the rule set, not kept per job (one per job cost 100 gangs a
         * scan of 5,000 nodes each, W5 in docs/PERFORMANCE.md).  That holds
         * for every such preemptor until the node changes: in preempt and
         * reclaim jobs only lose tasks, so what a job can spare only
         * shrinks. */
        uint32_t nospare_version, nospare_queue, nospare_job;
        kb__rule_fn nospare_rule;
        bool nospare_best_effort;
        bool nospare_set;
        /* place_parts' bound on what the node may give (node_offer with lb)
         * for preemptors of this class under this rule set, while the node
         * is unchanged.  Within an epoch jobs only lose tasks, so a job's
         * spare tasks only go away: a node that could give nothing still
         * cannot (a job can become whole on it only by losing spare tasks
         * elsewhere, and then it had spare ones here too), and the bound
         * only grows, so the one kept stays a bound. */
        uint32_t lb_version, lb_queue, lb_job, lb_eclass;
        kb__rule_fn lb_rule;
        bool lb_best_effort, lb_set, lb_gives;
        struct cost lb;
};

/* Whether req fits avail in every resource req asks for (a node may be over
 * committed in a resource the task does not ask for). */
static inline bool kb__fits(const struct kb_res *req, const struct kb_res *avail)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (req->q[i] > 0 && req->q[i] > avail->q[i])
                        return false;
        return true;
}

/* victims.c: e's scratch arrays (cand, out, pick, best) for n tasks;
 * victims cheapest first (Volcano's BuildVictimsPriorityQueue order); the
 * queue's answer for t, when the action asks it; step 1 (room free or being
 * freed; the queue's answer asked unless queue_known); and evicting
 * v[0..n) for t in e's statement. */
void kb__evictor_reserve(struct kb__evictor *e, size_t n);
void kb__sort_victims(struct kb_session *s, const struct kb_task *t, struct kb_task **v, size_t n);
bool kb__evict_queue_takes(struct kb__evictor *e, const struct kb_task *t);
bool kb__evict_place_free(struct kb__evictor *e, struct kb_task *t, bool queue_known);
void kb__evict_all(struct kb__evictor *e, const struct kb_task *t, struct kb_task *const *v,
                   size_t n);
/* Steps 2 (parts.c) and 3 (whole.c): whether t was placed. */
bool kb__evict_place_parts(struct kb__evictor *e, struct kb_task *t);
bool kb__evict_place_whole(struct kb__evictor *e, struct kb_task *t);

void kb__evictor_init(struct kb__evictor *e, struct kb_session *s, const char *action);
void kb__evictor_release(struct kb__evictor *e);
/* Forgets what the memos learned: after a statement of e's was discarded or
 * rolled back, tasks came back and nodes may give what they did not. */
void kb__evictor_forget(struct kb__evictor *e);

/*
 * Places t (a pending task of a starving job) into e->st, evicting as
 * little as it must: on room free now or being freed (no eviction), else on
 * the node where the fewest, cheapest victims make room, else by evicting
 * a whole victim gang; t is pipelined onto that room.  Returns whether t
 * was placed.  The job's evictions count grows by the victims taken.
 */
bool kb__evict_place(struct kb__evictor *e, struct kb_task *t);

/* Whether t must never evict anyone (preemptionPolicy: Never, on the pod
 * or its PriorityClass). */
bool kb__never_preempts(struct kb_session *s, const struct kb_task *t);

/* Whether v may be a victim at all: Running or Bound (reclaim: Running
 * only), of a job this session knows, not marked volcano.sh/preemptable:
 * "false", and not a non-best-effort task of a best-effort preemptor. */
bool kb__victim_status_ok(const struct kb_task *preemptor, const struct kb_task *v,
                          bool running_only);

/* ---- allocate (allocate.c), its task loop (tasks.c) and its network topology path (topology.c) */

struct kb__alloc_job {
        struct kb_heap tasks; /* pending tasks not yet tried */
        bool made;
        bool uniform; /* every task in tasks asks for the same resources */
        /* Roles that fit nowhere in this session (Volcano keeps them as
         * the job's NodesFitErrors). */
        const char **failed;
        size_t nfailed, capfailed;
};

struct kb__alloc {
        struct kb_session *s;
        struct kb__alloc_job *jobs; /* per job index */
};

/*
 * One pass of j's turn: tasks popped from tasks in task order go into st on
 * the best node — among d's nodes, or any node when d is NULL — until j is
 * ready with tasks left, the tasks run out, or a task that fits nowhere
 * means the gang can no longer complete.  Why a task fit nowhere is kept
 * (for the condition) only when d is NULL.
 */
void kb__allocate_tasks(struct kb__alloc *c, struct kb_queue_info *q, struct kb_job *j,
                        struct kb_heap *tasks, const struct kb_domain *d, struct kb_statement *st);

/*
 * j's turn within the network topology its PodGroup asks for: the domains
 * it may use, lowest tier first and tightest fit first, until one takes the
 * gang (ready or pipelined) into st.  Returns whether one did (tasks then
 * holds what is left); otherwise st and tasks are as they were and, for a
 * hard gang, j->fit_error says why.
 */
bool kb__allocate_in_domain(struct kb__alloc *c, struct kb_queue_info *q, struct kb_job *j,
                            struct kb_heap *tasks, struct kb_statement *st);

/* Whether a networkTopology bound (highestTierAllowed tier, -1 when unset;
 * else highestTierName tier_name; neither: any) lets a gang span d. */
bool kb__domain_allowed(const struct kb_domain *doms, const struct kb_domain *d, int32_t tier,
                        const char *tier_name);
/* Whether a bound names only a highestTierName that no domain carries:
 * Volcano then finds no tier for it (updateJobTier leaves
 * highestTierAllowed unset) and the hard mode sets no limit. */
bool kb__tier_name_unknown(struct kb_session *s, int32_t tier, const char *tier_name);
/* Volcano's HyperNode binpack score of request in d (topology.c). */
double kb__domain_binpack(struct kb_session *s, const struct kb_domain *d,
                          const struct kb_res *request);

/*
 * The domains a hard PodGroup topology lets j take that could hold the
 * gang, in the order kb__allocate_in_domain tries them (a fresh array, *n
 * long, the caller frees); NULL with *n 0 when there is none, and then
 * j->fit_error says why.
 */
const struct kb_domain **kb__topology_candidates(struct kb__alloc *c, struct kb_job *j,
                                                 const struct kb_heap *tasks, size_t *n);

/*
 * j's turn by its PodGroup's spec.subGroupPolicy (subgroups.c): sub-group
 * by sub-group, within one of kb__topology_candidates for a hard PodGroup
 * topology, else on every node.  Returns 2 when the gang is ready
 * (minMember and every minSubGroups) in st, 1 when only pipelined, 0 when
 * it could not be placed (st as it was, j->fit_error says why).  On
 * success tasks keeps the tasks not tried.
 */
int kb__allocate_subgroups(struct kb__alloc *c, struct kb_queue_info *q, struct kb_job *j,
                           struct kb_heap *tasks, struct kb_statement *st);

#endif /* KB_ACTIONS_ACTIONS_INT_H */
