/*
 * Placing a task with evictions: the algorithm preempt and reclaim share.
 *
 * Volcano's preempt walks nodes in score order and evicts on the first node
 * where the plugins' victims make room; its reclaim walks nodes in list
 * order.  kbatch looks for the cheapest way instead, in three steps:
 *
 *   1. No eviction: room free now, or being freed (future idle), as
 *      allocate would choose it.  The task is pipelined there.
 *   2. Parts of gangs, per node: the node's eligible tasks, cheapest first
 *      (Volcano's victim order: what the session would place last — the
 *      lowest job priority, the lowest task priority, the most recently
 *      created — goes first), go to the plugins' vote (priority, gang,
 *      conformance, drf, proportion...); the shortest prefix of the victims
 *      that makes the task fit the node's future idle room (and, for
 *      preempt, its queue take it: a queue at its capability needs room
 *      freed in the queue too) is what that node costs.  The node with the
 *      fewest victims wins, then the lowest victim priority, then the most
 *      recent victims, then node order.  The gang plugin keeps every victim
 *      job at minMember here.
 *      Topology-aware preemption (e->topology) changes this step as
 *      kube-scheduler's DefaultPreemption: a node whose filters fail now is
 *      a candidate when they pass with its candidates gone; the prefix must
 *      also pass every filter on the node so simulated (the victims evicted
 *      in the statement, then rolled back); victims it does not need after
 *      all are given back, highest priority first; and nodes rank by
 *      budgets broken, highest victim pod priority, sum of priorities,
 *      count, latest start.
 *   3. Whole gangs: victim jobs, cheapest first (priority, size, age), each
 *      offered whole to the vote (the gang plugin lets a job go whole); the
 *      first one the plugins give up entirely and whose room lets the task
 *      fit is evicted, and the task placed as in step 1.
 *
 * Every task is pipelined, never allocated: the job's statement is kept
 * only when the whole gang is pipelined (the caller's rule), and its tasks
 * bind in a later session, once the victims are gone.
 *
 * Example: two 4-cpu nodes full of 1-cpu pods: n1 holds four of gang L1
 * (priority 1, minMember 4), n2 two of L2 (priority 1, minMember 1) and two
 * of L3 (priority 5, minMember 1).  A 2-cpu task of priority 10: step 1
 * finds no room; step 2: on n1 the gang plugin refuses to cut L1 below 4, on
 * n2 the cheapest prefix is L2's two pods (priority 1 before L3's 5): n2,
 * two victims.  Had L2 been minMember 2, step 3 would evict L2 whole.
 *
 * Memos per node remember that a node gave nothing — for a job's placement
 * class, or for any preemptor of a queue because no candidate there could
 * go without cutting a gang — while the node has not changed and nothing
 * was undone (kb__evictor_forget), so that a gang of 32 does not look at
 * 5,000 full nodes again for every task, nor every gang after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions-int.h"

#ifdef KB_TESTING
unsigned long kb__evict_node_scans, kb__evict_whole_sorts, kb__evict_offers;
#define COUNT(c) ((c)++)
#else
#define COUNT(c) ((void)0)
#endif

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

void kb__evictor_init(struct kb__evictor *e, struct kb_session *s, const char *action)
{
        size_t nn;
        memset(e, 0, sizeof(*e));
        e->s = s;
        e->action = action;
        size_t njobs, ntasks = 0;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        kb_session_nodes(s, &nn);
        e->memo = kb_xcalloc(nn + 1, sizeof(*e->memo));
        e->own = kb_xcalloc(nn + 1, sizeof(*e->own));
        for (size_t i = 0; i < njobs; i++)
                for (uint32_t k = 0; k < jobs[i]->ntasks; k++)
                        if (jobs[i]->tasks[k]->index >= ntasks)
                                ntasks = jobs[i]->tasks[k]->index + 1;
        e->picked = kb_xcalloc(ntasks + 1, sizeof(*e->picked));
        e->taken = kb_xcalloc(njobs + 1, sizeof(*e->taken));
        e->skip = kb_xcalloc(njobs + 1, sizeof(*e->skip));
        e->pdb_left = kb_xcalloc(kb_session_snapshot(s)->npdbs + 1, sizeof(*e->pdb_left));
}

void kb__evictor_forget(struct kb__evictor *e)
{
        e->epoch++;
}

void kb__evictor_release(struct kb__evictor *e)
{
        free(e->memo);
        free(e->own);
        free(e->whole);
        free(e->bounds);
        free(e->picked);
        free(e->taken);
        free(e->skip);
        free(e->pdb_left);
        free(e->pick);
        free(e->cand);
        free(e->out);
        free(e->best);
        memset(e, 0, sizeof(*e));
}

static void reserve(struct kb__evictor *e, size_t n)
{
        if (n <= e->cap)
                return;
        size_t cap = e->cap ? e->cap : 64;
        while (cap < n)
                cap *= 2;
        e->cand = kb_xrealloc(e->cand, cap * sizeof(*e->cand));
        e->out = kb_xrealloc(e->out, cap * sizeof(*e->out));
        e->best = kb_xrealloc(e->best, cap * sizeof(*e->best));
        e->pick = kb_xrealloc(e->pick, cap * sizeof(*e->pick));
        e->cap = cap;
}

/* ---- rules ------------------------------------------------------------------------ */

bool kb__never_preempts(struct kb_session *s, const struct kb_task *t)
{
        if (t->pod->preempt_never)
                return true;
        const char *name = t->pod->priority_class_name;
        const struct kb_snapshot *snap = kb_session_snapshot(s);
        for (size_t i = 0; name && *name && i < snap->npriorityclasses; i++)
                if (kb_streq(snap->priorityclasses[i]->meta.name, name))
                        return snap->priorityclasses[i]->preempt_never;
        return false;
}

bool kb__victim_status_ok(const struct kb_task *preemptor, const struct kb_task *v,
                          bool running_only)
{
        if (!v->job || v == preemptor)
                return false;
        if (v->status != KB_TASK_RUNNING && (running_only || v->status != KB_TASK_BOUND))
                return false;
        /* A best-effort preemptor evicts only best-effort tasks. */
        if (preemptor->best_effort && !v->best_effort)
                return false;
        return v->preemptable;
}

/* Whether req fits avail in every resource req asks for (a node may be over
 * committed in a resource the task does not ask for). */
static bool fits(const struct kb_res *req, const struct kb_res *avail)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (req->q[i] > 0 && req->q[i] > avail->q[i])
                        return false;
        return true;
}

/* The session whose orders victim_cmp follows, and the preemptor's queue
 * (qsort has no context). */
static _Thread_local struct kb_session *order_session;
static _Thread_local const struct kb_queue_info *order_queue;

/* Cheapest first, as Volcano's BuildVictimsPriorityQueue orders victims:
 * what the session would place last goes first — across queues the queue
 * that comes last, then the job that comes last in job order (with the
 * priority plugin, the lowest priority), then the task that comes last in
 * task order (the lowest priority, the highest pod index, the most recently
 * created).  Across queues the plugins' victim queue order comes first
 * (capacity's hierarchy: the queue closer to the preemptor's). */
static int victim_cmp(const void *a, const void *b)
{
        struct kb_task *x = *(struct kb_task *const *)a, *y = *(struct kb_task *const *)b;
        struct kb_session *s = order_session;
        int c;
        if (x->job != y->job) {
                if (x->job->queue != y->job->queue && x->job->queue && y->job->queue &&
                    ((order_queue &&
                      (c = kb_victim_queue_order(s, x->job->queue, y->job->queue, order_queue))) ||
                     (c = kb_queue_order(s, y->job->queue, x->job->queue))))
                        return c;
                if ((c = kb_job_order(s, y->job, x->job)))
                        return c;
        }
        return kb_task_order(s, y, x);
}

static void sort_victims(struct kb_session *s, const struct kb_task *t, struct kb_task **v,
                         size_t n)
{
        order_session = s;
        order_queue = t->job ? t->job->queue : NULL;
        qsort(v, n, sizeof(*v), victim_cmp);
        order_session = NULL;
        order_queue = NULL;
}

/* ---- placing --------------------------------------------------------------------- */

static const char *reason_for(struct kb__evictor *e, const struct kb_task *t)
{
        return kb_pool_printf(kb_session_pool(e->s),
                              "evicted by %s to make room for %s (podgroup %s)", e->action, t->name,
                              t->job->name);
}

static bool queue_takes(struct kb__evictor *e, const struct kb_task *t)
{
        return !e->allocatable || kb_allocatable(e->s, t->job->queue, t);
}

/* Step 1: room free or being freed, as allocate chooses it; the queue's
 * answer is asked unless the caller knows it (queue_known). */
static bool place_free(struct kb__evictor *e, struct kb_task *t, bool queue_known)
{
        const char *why = NULL;
        struct kb_node_info *n = kb_select_node(e->s, t, &why);
        if (!n || (!queue_known && !queue_takes(e, t)))
                return false;
        kb_statement_pipeline(e->st, t, n);
        return true;
}

static void evict_all(struct kb__evictor *e, const struct kb_task *t, struct kb_task *const *v,
                      size_t n)
{
        const char *reason = reason_for(e, t);
        for (size_t i = 0; i < n; i++)
                kb_statement_evict(e->st, v[i], e->action, reason, t->job);
        t->job->evictions += (uint32_t)n;
        t->job->evicted_by = e->action;
}


static bool cheaper(const struct kb__evictor *e, const struct cost *a, const struct cost *b)
{
        if (e->topology) {
                /* kube-scheduler's pickOneNodeForPreemption
                 * (framework/preemption/preemption.go): the fewest victims
                 * that break a PodDisruptionBudget; then, as Volcano
                 * master's actions/utils/topology_aware.go goes on, the
                 * lowest highest victim priority, the lowest sum of
                 * priorities, the fewest victims, the latest start of the
                 * highest-priority victims; then the first node (Volcano:
                 * map order). */
                if (a->pdb_broken != b->pdb_broken)
                        return a->pdb_broken < b->pdb_broken;
                if (a->top_pod != b->top_pod)
                        return a->top_pod < b->top_pod;
                if (a->sum != b->sum)
                        return a->sum < b->sum;
                if (a->victims != b->victims)
                        return a->victims < b->victims;
                return a->top_started > b->top_started;
        }
        if (a->victims != b->victims)
                return a->victims < b->victims;
        if (a->top_priority != b->top_priority)
                return a->top_priority < b->top_priority;
        return a->oldest > b->oldest;
}

/*
 * Whether the k victims in e->pick are enough for t: t fits avail (the
 * node's room with them gone) and, when t's queue is short (e->queue_short),
 * the queue takes t once they are gone.  Volcano's preempt evicts a node's
 * victims one by one until both hold (actions/preempt/preempt.go: the
 * preemptor must fit the node's future idle room and ssn.Allocatable must
 * pass), so a task whose node has room but whose queue is at its
 * capability still evicts tasks of its own queue.  Topology-aware
 * preemption (e->topology) also asks the filters on the node so simulated
 * (kube-scheduler's SelectVictimsOnNode): a pod whose anti-affinity blocks
 * t is a victim like one whose room t needs.  Both answers are read from
 * the plugins with the victims evicted in the statement, then the
 * evictions are undone: the rare path, taken only while the queue refuses
 * t or when the conf asks for topology-aware preemption.
 */
static bool enough(struct kb__evictor *e, const struct kb_task *t, const struct kb_node_info *n,
                   const struct kb_res *avail, size_t k)
{
        if (!fits(&t->resreq, avail))
                return false;
        if (!e->queue_short && !e->topology)
                return true;
        size_t mark = kb_statement_mark(e->st);
        for (size_t i = 0; i < k; i++)
                kb_statement_evict(e->st, e->pick[i], e->action, NULL, NULL);
        bool ok = (!e->queue_short || kb_allocatable(e->s, t->job->queue, t)) &&
                  (!e->topology || !kb_predicate(e->s, t, n));
        kb_statement_rollback(e->st, mark);
        return ok;
}

/*
 * Chooses, among the permitted victims in e->out (cheapest first), the
 * fewest that make t fit avail (and its queue take it: enough), into
 * e->pick; returns how many (0: they do not).  A gang is never left cut
 * below minMember: a victim whose job would fall below it is taken only
 * with every other placed task of the job (all of them permitted, so all on
 * this node), else skipped.
 */
static size_t pick_victims(struct kb__evictor *e, const struct kb_task *t,
                           const struct kb_node_info *n, struct kb_res avail, size_t nvotes)
{
        size_t k = 0;
        bool done = false;
        for (size_t i = 0;
             i < nvotes && !(done = fits(&t->resreq, &avail) && enough(e, t, n, &avail, k)); i++) {
                struct kb_task *v = e->out[i];
                struct kb_job *j = v->job;
                if (e->picked[v->index] || e->skip[j->index])
                        continue;
                if (kb_job_ready_count(j) - e->taken[j->index] > (uint32_t)j->min_available) {
                        e->picked[v->index] = true;
                        e->taken[j->index]++;
                        e->pick[k++] = v;
                        kb_res_add(&avail, &v->resreq);
                        continue;
                }
                /* Whole or not at all; never the preemptor's own job. */
                if (j == t->job) {
                        e->skip[j->index] = true;
                        continue;
                }
                uint32_t offered = 0;
                for (size_t x = i; x < nvotes; x++)
                        offered += e->out[x]->job == j && !e->picked[e->out[x]->index];
                if (e->taken[j->index] + offered < kb_job_placed_count(j)) {
                        e->skip[j->index] = true;
                        continue;
                }
                for (size_t x = i; x < nvotes; x++) {
                        struct kb_task *w = e->out[x];
                        if (w->job != j || e->picked[w->index])
                                continue;
                        e->picked[w->index] = true;
                        e->taken[j->index]++;
                        e->pick[k++] = w;
                        kb_res_add(&avail, &w->resreq);
                }
        }
        /* Clear the scratch for the next node. */
        for (size_t i = 0; i < nvotes; i++) {
                e->picked[e->out[i]->index] = false;
                e->taken[e->out[i]->job->index] = 0;
                e->skip[e->out[i]->job->index] = false;
        }
        if (!done)
                done = enough(e, t, n, &avail, k);
        return done ? k : 0;
}

/* Whether some candidate could go without cutting a gang: its job has
 * ready tasks to spare above minMember, or every placed task of its job (not
 * t's) is among the candidates.  Cheap, and exact: pick_victims never takes
 * anything else, so a node where this fails is skipped without a vote. */
static bool any_spare(struct kb__evictor *e, const struct kb_task *t, size_t k)
{
        bool spare = false;
        for (size_t i = 0; i < k && !spare; i++) {
                const struct kb_job *j = e->cand[i]->job;
                spare = kb_job_ready_count(j) > (uint32_t)j->min_available;
        }
        for (size_t i = 0; i < k && !spare; i++) {
                const struct kb_job *j = e->cand[i]->job;
                spare = j != t->job && ++e->taken[j->index] >= kb_job_placed_count(j);
        }
        for (size_t i = 0; i < k; i++)
                e->taken[e->cand[i]->job->index] = 0;
        return spare;
}

/*
 * Marks (e->picked) which of the k victims in e->pick would break a
 * PodDisruptionBudget, as kube-scheduler's filterPodsWithPDBViolation
 * counts them, most important first (from the end of e->pick): each
 * budget may lose status.disruptionsAllowed of the pods it covers; a
 * victim that takes one below that breaks it.
 */
static void mark_pdb_violations(struct kb__evictor *e, size_t k)
{
        const struct kb_snapshot *snap = kb_session_snapshot(e->s);
        for (size_t b = 0; b < snap->npdbs; b++)
                e->pdb_left[b] = snap->pdbs[b]->disruptions_allowed;
        for (size_t i = k; i-- > 0;) {
                struct kb_task *v = e->pick[i];
                for (size_t b = 0; b < snap->npdbs; b++)
                        if (kb_pdb_covers(snap->pdbs[b], v->pod) && --e->pdb_left[b] < 0)
                                e->picked[v->index] = true;
        }
}

/* One pass of reprieve over the victims that break a budget (breaking)
 * or over the others; a breaking one that must go counts in *broken. */
static size_t reprieve_pass(struct kb__evictor *e, const struct kb_task *t,
                            const struct kb_node_info *n, const struct kb_res *idle, size_t k,
                            bool breaking, size_t *broken)
{
        for (size_t i = k; i-- > 0;) {
                struct kb_task *v = e->pick[i];
                if (e->picked[v->index] != breaking)
                        continue;
                uint32_t taken = 0;
                for (size_t x = 0; x < k; x++)
                        taken += e->pick[x]->job == v->job;
                bool gang_ok = taken == 1 || kb_job_ready_count(v->job) - (taken - 1) >=
                                                 (uint32_t)v->job->min_available;
                if (gang_ok) {
                        memmove(&e->pick[i], &e->pick[i + 1], (k - i - 1) * sizeof(*e->pick));
                        struct kb_res avail = *idle;
                        for (size_t x = 0; x < k - 1; x++)
                                kb_res_add(&avail, &e->pick[x]->resreq);
                        if (enough(e, t, n, &avail, k - 1)) {
                                e->picked[v->index] = false;
                                k--;
                                continue;
                        }
                        memmove(&e->pick[i + 1], &e->pick[i], (k - i - 1) * sizeof(*e->pick));
                        e->pick[i] = v;
                }
                *broken += breaking;
        }
        return k;
}

/*
 * Topology-aware preemption: gives back, highest priority first, each of
 * the k victims in e->pick that t does not need after all, as
 * kube-scheduler's SelectVictimsOnNode "reprieves" them (Volcano master's
 * actions/utils/topology_aware.go): victims were taken cheapest first until
 * t fit, which may have taken cheap ones before the one whose pod blocked
 * t's anti-affinity.  Those that would break a PodDisruptionBudget are
 * tried first, and *broken counts the ones that still must go.  A victim
 * is kept when giving it back would leave its job cut below minMember.
 * Returns how many victims are left.
 */
static size_t reprieve(struct kb__evictor *e, const struct kb_task *t, const struct kb_node_info *n,
                       const struct kb_res *idle, size_t k, size_t *broken)
{
        *broken = 0;
        mark_pdb_violations(e, k);
        for (int pass = 0; pass < 2; pass++)
                k = reprieve_pass(e, t, n, idle, k, pass == 0, broken);
        for (size_t i = 0; i < k; i++)
                e->picked[e->pick[i]->index] = false;
        return k;
}

/* Whether t could go on n with every candidate of e->cand[0..k) gone:
 * topology-aware preemption's look at nodes whose filters fail now. */
static bool passes_without(struct kb__evictor *e, const struct kb_task *t,
                           const struct kb_node_info *n, size_t k)
{
        size_t mark = kb_statement_mark(e->st);
        for (size_t i = 0; i < k; i++)
                kb_statement_evict(e->st, e->cand[i], e->action, NULL, NULL);
        bool ok = !kb_predicate(e->s, t, n);
        kb_statement_rollback(e->st, mark);
        return ok;
}

/* A cost no offer of the candidates e->cand[0..k) can beat: at least one
 * victim, or, when no candidate's job has a task to spare above minMember,
 * the smallest job that could go whole (every victim job then goes whole);
 * a highest priority at least the lowest of theirs; an earliest creation at
 * most the latest of theirs.  cheaper() orders any real offer of the node
 * at or after it. */
static void cost_bound(const struct kb__evictor *e, const struct kb_task *t, size_t k,
                       struct cost *lb)
{
        bool slack = false;
        size_t whole = SIZE_MAX;
        *lb = (struct cost){.top_priority = INT32_MAX, .oldest = -1e300};
        for (size_t i = 0; i < k; i++) {
                const struct kb_task *v = e->cand[i];
                const struct kb_job *j = v->job;
                slack = slack || kb_job_ready_count(j) > (uint32_t)j->min_available;
                if (j->priority < lb->top_priority)
                        lb->top_priority = j->priority;
                if (v->pod->meta.creation > lb->oldest)
                        lb->oldest = v->pod->meta.creation;
        }
        if (!slack) {
                for (size_t i = 0; i < k; i++) {
                        const struct kb_job *j = e->cand[i]->job;
                        if (j != t->job && ++e->taken[j->index] == kb_job_placed_count(j) &&
                            kb_job_placed_count(j) < whole)
                                whole = kb_job_placed_count(j);
                }
                for (size_t i = 0; i < k; i++)
                        e->taken[e->cand[i]->job->index] = 0;
        }
        lb->victims = slack || whole == SIZE_MAX ? 1 : whole;
}

/* What node n asks of e to take t: its permitted victims (cheapest first)
 * into e->out, the ones it needs into e->pick, and their cost; returns how
 * many it needs, 0 when it cannot take t at all.  With lb (not for
 * topology-aware preemption), only whether the node may give anything:
 * then 1 and, in *lb, a bound on its cost (cost_bound), without the
 * plugins' vote. */
static size_t node_offer(struct kb__evictor *e, struct kb_task *t, struct kb_node_info *n,
                         size_t *nvotes, struct cost *c, struct cost *lb)
{
        struct kb__memo *m = &e->memo[n->index];
        uint32_t eclass = kb_task_class(e->s, t), queue = t->job->queue->index;
        uint32_t job =
            e->per_job && e->own[n->index] == e->own_stamp ? t->job->index : UINT32_MAX;
        if (m->epoch != e->epoch)
                memset(m, 0, sizeof(*m));
        m->epoch = e->epoch;
        if (m->set && m->version == n->version && m->job == t->job->index && m->eclass == eclass &&
            m->rule == e->eligible)
                return 0;
        if (m->nospare_set && m->nospare_version == n->version && m->nospare_queue == queue &&
            m->nospare_job == job && m->nospare_best_effort == t->best_effort &&
            m->nospare_rule == e->eligible)
                return 0;
        if (lb && m->lb_set && m->lb_version == n->version && m->lb_queue == queue &&
            m->lb_job == job && m->lb_eclass == eclass && m->lb_rule == e->eligible &&
            m->lb_best_effort == t->best_effort) {
                *lb = m->lb;
                return m->lb_gives;
        }
        if (lb || e->topology)
                COUNT(kb__evict_node_scans);
        else
                COUNT(kb__evict_offers);
        /* Topology-aware: a filter that fails now may pass once victims
         * are gone (pod anti-affinity, topology spread, host ports). */
        bool blocked = kb_predicate(e->s, t, n) != NULL;
        if (blocked && !e->topology)
                return 0;
        struct kb_res avail, idle;
        kb_node_future_idle(n, &idle);
        avail = idle;
        size_t k = 0, need = 0, broken = 0;
        reserve(e, n->ntasks + 1);
        for (struct kb_task *v = n->tasks; v; v = v->node_next)
                if (e->eligible(t, v)) {
                        e->cand[k++] = v;
                        kb_res_add(&avail, &v->resreq);
                }
        if (blocked && (!k || !passes_without(e, t, n, k)))
                return 0;
        bool spare = k && any_spare(e, t, k);
        if (!spare) {
                m->nospare_version = n->version;
                m->nospare_queue = queue;
                m->nospare_job = job;
                m->nospare_best_effort = t->best_effort;
                m->nospare_rule = e->eligible;
                m->nospare_set = true;
        }
        if (lb) {
                m->lb_gives = spare && fits(&t->resreq, &avail);
                if (m->lb_gives)
                        cost_bound(e, t, k, &m->lb);
                m->lb_version = n->version;
                m->lb_queue = queue;
                m->lb_job = job;
                m->lb_eclass = eclass;
                m->lb_rule = e->eligible;
                m->lb_best_effort = t->best_effort;
                m->lb_set = true;
                *lb = m->lb;
                return m->lb_gives;
        }
        if (spare && fits(&t->resreq, &avail)) {
                /* Whether the plugins give up enough victims at all does not
                 * depend on their order (gang counts per job, and what a job
                 * may lose is the same whichever of its tasks go first): ask
                 * first, and sort only on nodes that can give enough. */
                size_t unsorted = e->vote(e->s, t, e->cand, k, e->out);
                if (unsorted && pick_victims(e, t, n, idle, unsorted)) {
                        sort_victims(e->s, t, e->cand, k);
                        *nvotes = e->vote(e->s, t, e->cand, k, e->out);
                        need = pick_victims(e, t, n, idle, *nvotes);
                }
                if (need && e->topology)
                        need = reprieve(e, t, n, &idle, need, &broken);
        }
        /* What a short queue refuses changes as the statement evicts
         * elsewhere, and filters read other nodes' pods (topology spread
         * across zones): only the node's own "nothing" is remembered. */
        if (!need && (e->queue_short || e->topology))
                return 0;
        if (!need) {
                m->version = n->version;
                m->job = t->job->index;
                m->eclass = eclass;
                m->rule = e->eligible;
                m->set = true;
                return 0;
        }
        c->victims = need;
        c->top_priority = e->pick[0]->job->priority;
        c->oldest = e->pick[0]->pod->meta.creation;
        for (size_t i = 1; i < need; i++) {
                if (e->pick[i]->job->priority > c->top_priority)
                        c->top_priority = e->pick[i]->job->priority;
                if (e->pick[i]->pod->meta.creation < c->oldest)
                        c->oldest = e->pick[i]->pod->meta.creation;
        }
        if (!e->topology)
                return need;
        c->pdb_broken = broken;
        c->top_pod = e->pick[0]->priority;
        c->sum = 0;
        for (size_t i = 0; i < need; i++) {
                if (e->pick[i]->priority > c->top_pod)
                        c->top_pod = e->pick[i]->priority;
                c->sum += (int64_t)e->pick[i]->priority + ((int64_t)1 << 31);
        }
        /* kbatch keeps no pod start time: creation stands in for it. */
        c->top_started = 0;
        for (size_t i = 0; i < need; i++) {
                const struct kb_task *v = e->pick[i];
                if (v->priority == c->top_pod &&
                    (c->top_started == 0 || v->pod->meta.creation < c->top_started))
                        c->top_started = v->pod->meta.creation;
        }
        return need;
}

/* Step 2: parts of gangs, on the cheapest node. */
struct kb__bound {
        struct cost lb;
        size_t node;
};

/* Bounds cheapest first (cheaper() for non-topology costs), then nodes in
 * order. */
static _Thread_local const struct kb__evictor *bound_evictor;
static int bound_cmp(const void *a, const void *b)
{
        const struct kb__bound *x = a, *y = b;
        if (cheaper(bound_evictor, &x->lb, &y->lb))
                return -1;
        if (cheaper(bound_evictor, &y->lb, &x->lb))
                return 1;
        return x->node < y->node ? -1 : x->node > y->node;
}

/*
 * The cheapest node (the first in node order among equals), as a scan of
 * every node's offer finds it.  Topology-aware preemption does that scan.
 * Otherwise each node that may give anything gets a bound on its cost
 * first, without the plugins' vote (cost_bound), and the offers are asked
 * cheapest bound first, until the best offer found is cheaper than every
 * bound left: with gangs whole on their nodes every node could give one,
 * and asking each of 5,000 nodes for every preemptor gang (the vote, the
 * queue's check through the statement) took W5p 14 s.
 */
static bool place_parts(struct kb__evictor *e, struct kb_task *t)
{
        size_t nn, best_need = 0, best_node = 0;
        struct kb_node_info *nodes = kb_session_nodes(e->s, &nn), *best = NULL;
        struct cost best_cost = {0};
        if (e->topology) {
                for (size_t i = 0; i < nn; i++) {
                        struct cost c;
                        size_t votes = 0, need = node_offer(e, t, &nodes[i], &votes, &c, NULL);
                        if (!need || (best && !cheaper(e, &c, &best_cost)))
                                continue;
                        best = &nodes[i];
                        best_cost = c;
                        best_need = need;
                        memcpy(e->best, e->pick, need * sizeof(*e->best));
                }
        } else {
                if (!e->bounds)
                        e->bounds = kb_xmalloc((nn + 1) * sizeof(*e->bounds));
                size_t nb = 0;
                for (size_t i = 0; i < nn; i++)
                        if (node_offer(e, t, &nodes[i], NULL, NULL, &e->bounds[nb].lb))
                                e->bounds[nb++].node = i;
                bound_evictor = e;
                qsort(e->bounds, nb, sizeof(*e->bounds), bound_cmp);
                for (size_t b = 0; b < nb; b++) {
                        if (best && cheaper(e, &best_cost, &e->bounds[b].lb))
                                break;
                        size_t i = e->bounds[b].node;
                        struct cost c;
                        size_t votes = 0, need = node_offer(e, t, &nodes[i], &votes, &c, NULL);
                        if (!need || (best && !cheaper(e, &c, &best_cost) &&
                                      (cheaper(e, &best_cost, &c) || best_node < i)))
                                continue;
                        best = &nodes[i];
                        best_node = i;
                        best_cost = c;
                        best_need = need;
                        memcpy(e->best, e->pick, need * sizeof(*e->best));
                }
        }
        if (!best)
                return false;
        size_t mark = kb_statement_mark(e->st);
        evict_all(e, t, e->best, best_need);
        /* The queue must take the task too (preempt): when its quota is
         * short, the node is given up; topology-aware, so must the filters
         * (Volcano's final PredicateForPreemptAction). */
        if (!queue_takes(e, t) || (e->topology && kb_predicate(e->s, t, best))) {
                kb_statement_rollback(e->st, mark);
                kb__evictor_forget(e);
                t->job->evictions -= (uint32_t)best_need;
                return false;
        }
        kb_statement_pipeline(e->st, t, best);
        return true;
}

/* Step 3: a whole victim gang.  Jobs cheapest first; each one the plugins
 * give up entirely and that frees room t fits is tried. */
struct kb__whole {
        struct kb_job *job;
        uint32_t ntasks;
};

static int whole_cmp(const void *a, const void *b)
{
        const struct kb__whole *x = a, *y = b;
        if (x->job->priority != y->job->priority)
                return x->job->priority < y->job->priority ? -1 : 1;
        if (x->ntasks != y->ntasks)
                return x->ntasks < y->ntasks ? -1 : 1;
        if (x->job->creation != y->job->creation)
                return x->job->creation > y->job->creation ? -1 : 1;
        int c = strcmp(x->job->name, y->job->name);
        if (c)
                return c;
        /* Same name in two namespaces: the session's order, as a stable
         * sort of the session's jobs gave before the order was kept. */
        return x->job->index < y->job->index ? -1 : x->job->index > y->job->index;
}

/* V's victim tasks into e->cand; 0 when one of its tasks on a node may not
 * be evicted for t by the action's rule, or none frees room t could use. */
static size_t whole_tasks(struct kb__evictor *e, const struct kb_task *t, struct kb_job *v)
{
        size_t k = 0;
        bool useful = false;
        reserve(e, v->ntasks + 1);
        for (uint32_t i = 0; i < v->ntasks; i++) {
                struct kb_task *x = v->tasks[i];
                if (x->node < 0 || x->status == KB_TASK_RELEASING || x->status == KB_TASK_PIPELINED)
                        continue;
                if (!e->eligible(t, x))
                        return 0;
                e->cand[k++] = x;
        }
        size_t nn;
        struct kb_node_info *nodes = kb_session_nodes(e->s, &nn);
        for (size_t i = 0; i < k && !useful; i++) {
                struct kb_node_info *n = &nodes[e->cand[i]->node];
                if (kb_predicate(e->s, t, n))
                        continue;
                struct kb_res avail;
                kb_node_future_idle(n, &avail);
                for (size_t j = 0; j < k; j++)
                        if (e->cand[j]->node == (int32_t)n->index)
                                kb_res_add(&avail, &e->cand[j]->resreq);
                useful = fits(&t->resreq, &avail);
        }
        return useful ? k : 0;
}

/*
 * Every job with placed tasks in e->whole, cheapest first.  The order is
 * kept between calls: only the placed counts change (evictions), so the
 * counts are refreshed and the order checked in one pass, and the jobs are
 * sorted again only when it broke.  Sorting all 5,100 jobs of W5 for every
 * preemptor gang was most of what place_whole cost.
 */
static void whole_order(struct kb__evictor *e)
{
        size_t njobs;
        struct kb_job **jobs = kb_session_jobs(e->s, &njobs);
        if (!e->whole) {
                e->whole = kb_xmalloc((njobs + 1) * sizeof(*e->whole));
                for (size_t i = 0; i < njobs; i++)
                        e->whole[i] = (struct kb__whole){jobs[i], kb_job_placed_count(jobs[i])};
                e->nwhole = njobs;
                COUNT(kb__evict_whole_sorts);
                qsort(e->whole, e->nwhole, sizeof(*e->whole), whole_cmp);
                return;
        }
        bool sorted = true;
        const struct kb__whole *prev = NULL;
        for (size_t i = 0; i < e->nwhole; i++) {
                struct kb__whole *w = &e->whole[i];
                w->ntasks = kb_job_placed_count(w->job);
                if (!w->ntasks)
                        continue;
                if (prev && whole_cmp(prev, w) > 0)
                        sorted = false;
                prev = w;
        }
        if (!sorted) {
                COUNT(kb__evict_whole_sorts);
                qsort(e->whole, e->nwhole, sizeof(*e->whole), whole_cmp);
        }
}

static bool place_whole(struct kb__evictor *e, struct kb_task *t)
{
        whole_order(e);
        bool placed = false;
        for (size_t i = 0; i < e->nwhole && !placed; i++) {
                struct kb_job *v = e->whole[i].job;
                if (v == t->job || !e->whole[i].ntasks)
                        continue;
                size_t k = whole_tasks(e, t, v);
                if (!k || e->vote(e->s, t, e->cand, k, e->out) != k)
                        continue;
                size_t mark = kb_statement_mark(e->st);
                evict_all(e, t, e->out, k);
                if (place_free(e, t, false)) {
                        placed = true;
                } else {
                        kb_statement_rollback(e->st, mark);
                        kb__evictor_forget(e);
                        t->job->evictions -= (uint32_t)k;
                }
        }
        return placed;
}

/* Marks the nodes where t's job has tasks (the per-job memo's key). */
static void mark_own(struct kb__evictor *e, const struct kb_task *t)
{
        if (!e->per_job)
                return;
        if (++e->own_stamp == 0) {
                size_t nn;
                kb_session_nodes(e->s, &nn);
                memset(e->own, 0, (nn + 1) * sizeof(*e->own));
                e->own_stamp = 1;
        }
        for (uint32_t i = 0; i < t->job->ntasks; i++)
                if (t->job->tasks[i]->node >= 0)
                        e->own[t->job->tasks[i]->node] = e->own_stamp;
}

bool kb__evict_place(struct kb__evictor *e, struct kb_task *t)
{
        /* Asked once here: free room alone never does for a short queue. */
        e->queue_short = !queue_takes(e, t);
        mark_own(e, t);
        return (!e->queue_short && place_free(e, t, true)) || place_parts(e, t) ||
               place_whole(e, t);
}
