/*
 * Step 2 of placing a task with evictions (evict.c's banner): parts of
 * gangs, on the cheapest node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions-int.h"

#ifdef KB_TESTING
unsigned long kb__evict_node_scans, kb__evict_offers;
#endif

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
        if (!kb__fits(t->resreq, avail))
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
             i < nvotes && !(done = kb__fits(t->resreq, &avail) && enough(e, t, n, &avail, k));
             i++) {
                struct kb_task *v = e->out[i];
                struct kb_job *j = v->job;
                if (e->picked[v->index] || e->skip[j->index])
                        continue;
                if (kb_job_ready_count(j) - e->taken[j->index] > (uint32_t)j->min_available) {
                        e->picked[v->index] = true;
                        e->taken[j->index]++;
                        e->pick[k++] = v;
                        kb_res_add(&avail, v->resreq);
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
                        kb_res_add(&avail, w->resreq);
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
                                kb_res_add(&avail, e->pick[x]->resreq);
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
        uint32_t job = e->per_job && e->own[n->index] == e->own_stamp ? t->job->index : UINT32_MAX;
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
        kb__evictor_reserve(e, n->ntasks + 1);
        for (struct kb_task *v = n->tasks; v; v = v->node_next)
                if (e->eligible(t, v)) {
                        e->cand[k++] = v;
                        kb_res_add(&avail, v->resreq);
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
                m->lb_gives = spare && kb__fits(t->resreq, &avail);
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
        if (spare && kb__fits(t->resreq, &avail)) {
                /* Whether the plugins give up enough victims at all does not
                 * depend on their order (gang counts per job, and what a job
                 * may lose is the same whichever of its tasks go first): ask
                 * first, and sort only on nodes that can give enough. */
                size_t unsorted = e->vote(e->s, t, e->cand, k, e->out);
                if (unsorted && pick_victims(e, t, n, idle, unsorted)) {
                        kb__sort_victims(e->s, t, e->cand, k);
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
bool kb__evict_place_parts(struct kb__evictor *e, struct kb_task *t)
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
        kb__evict_all(e, t, e->best, best_need);
        /* The queue must take the task too (preempt): when its quota is
         * short, the node is given up; topology-aware, so must the filters
         * (Volcano's final PredicateForPreemptAction). */
        if (!kb__evict_queue_takes(e, t) || (e->topology && kb_predicate(e->s, t, best))) {
                kb_statement_rollback(e->st, mark);
                kb__evictor_forget(e);
                t->job->evictions -= (uint32_t)best_need;
                return false;
        }
        kb_statement_pipeline(e->st, t, best);
        return true;
}
