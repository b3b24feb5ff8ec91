/*
 * capacity's reclaimable: which of the candidates a reclaimer may take back
 * from other queues, as Volcano master's capacity (its AddReclaimableFn).
 * The rule is in plugins/capacity.c's banner; this is its walk.
 *
 * The candidates are weighed one at a time in Volcano's victim order
 * (BuildVictimsPriorityQueue), against a working copy of each queue's
 * allocated from which every victim taken so far is already gone: so a
 * queue 1 cpu above what it deserves gives up one 1-cpu task, not all of
 * them.  The order decides which one.
 *
 * Example: queue a deserves 2 cpu and holds 4 (tasks a1, a2, a3, a4 of 1
 * cpu, a4 last in job order); queue b deserves 2, holds 2 (b1, b2), and
 * has a guarantee of 2; the reclaimer asks for cpu.  a4 goes first: a
 * holds 4 > 2, a4 is a victim and a's copy drops to 3; a3: 3 > 2, victim,
 * 2 left; a2: 2 > 2 fails; a1 likewise.  b1 and b2: taking either leaves b
 * below its guarantee.  Victims: a4, a3.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "framework/quota.h"
#include "plugins/plugins-int.h"

/* Volcano's LessEqual for one resource: l <= r, give or take the epsilon. */
static bool le_eps(double l, double r)
{
        return l < r || fabs(l - r) < KB_QUOTA_EPS;
}

/* Whether t uses a resource in which amounts (a deserved) has some: with
 * none, t is an "immediate victim" of that queue (Volcano's
 * hasRelevantDeserved; pods count, as in Volcano's Intersection). */
static bool relevant(const struct kb_task *t, const double *amounts)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if ((double)t->resreq->q[i] >= KB_QUOTA_EPS && amounts[i] >= KB_QUOTA_EPS)
                        return true;
        return false;
}

/* Volcano's GreaterPartlyWithRelevantDimensions(allocated, deserved,
 * t's request): allocated above deserved in a resource t uses and the
 * queue deserves (pods aside). */
static bool exceeds(const double *allocated, const double *deserved, const struct kb_task *t)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (i != KB_RES_PODS && t->resreq->q[i] > 0 && deserved[i] >= KB_QUOTA_EPS &&
                    allocated[i] > deserved[i])
                        return true;
        return false;
}

/* The depth of the deepest queue above both a and b (Volcano's
 * getQueueLevel), 0 when they have none in common. */
static int common_depth(const struct kb__capacity *c, int a, int b)
{
        int x = c->q[a].parent, y = c->q[b].parent;
        if (x < 0 || y < 0)
                return 0;
        while (c->q[x].depth > c->q[y].depth)
                x = c->q[x].parent;
        while (c->q[y].depth > c->q[x].depth)
                y = c->q[y].parent;
        while (x != y) {
                x = c->q[x].parent;
                y = c->q[y].parent;
                if (x < 0 || y < 0)
                        return 0;
        }
        return c->q[x].depth;
}

/* ---- the victim order ------------------------------------------------------------ */

int kb__capacity_victim_queue_order(void *arg, const struct kb_queue_info *l,
                                    const struct kb_queue_info *r,
                                    const struct kb_queue_info *preemptor)
{
        const struct kb__capacity *c = arg;
        int p = (int)preemptor->index;
        int ll = common_depth(c, (int)l->index, p), rl = common_depth(c, (int)r->index, p);
        return ll == rl ? 0 : ll > rl ? -1 : 1;
}

struct order {
        struct kb__capacity *c;
        int reclaimer; /* the reclaimer's queue */
        const struct kb_queue_info *rq;
};

static const struct kb_queue_info *queue_of(const struct kb_task *t)
{
        return t->job ? t->job->queue : NULL;
}

/* Volcano's BuildVictimsPriorityQueue: < 0 when a is evicted before b.
 * Within a job, the task last in task order first; a task without a job
 * or queue first of all; across queues, with hierarchy the queue closer to
 * the reclaimer's (a deeper common ancestor), then reverse queue order;
 * within a queue, the job last in job order, then the task last in task
 * order. */
static int victim_order(void *ctx, const void *pa, const void *pb)
{
        const struct order *o = ctx;
        const struct kb_task *a = pa, *b = pb;
        struct kb_session *s = o->c->s;
        const struct kb_queue_info *qa = queue_of(a), *qb = queue_of(b);
        if (a->job == b->job)
                return kb_task_order(s, b, a);
        if (!qa || !qb)
                return qa ? 1 : qb ? -1 : 0;
        if (qa != qb) {
                int c = o->c->hierarchy ? kb__capacity_victim_queue_order(o->c, qa, qb, o->rq) : 0;
                if (c)
                        return c;
                return kb_queue_order(s, qb, qa);
        }
        int c = kb_job_order(s, b->job, a->job);
        return c ? c : kb_task_order(s, b, a);
}

/* ---- working copies of allocated ------------------------------------------------- */

struct work {
        struct kb__capacity *c;
        kb__vec *v;
        int *queue; /* v[i] belongs to queue[i] */
        size_t n;
};

/* q's working allocated: its allocated less the victims taken so far. */
static double *work_of(struct work *w, int q)
{
        int *slot = &w->c->slot[q];
        if (*slot < 0) {
                *slot = (int)w->n;
                w->queue[w->n] = q;
                memcpy(w->v[w->n++], w->c->q[q].allocated, sizeof(kb__vec));
        }
        return w->v[*slot];
}

/* The ancestor of the victim's queue q at level l that the reclaimer's
 * queue p does not share at that level (and that is not the root), or -1
 * (Volcano's getReclaimeeAncestorToCheck). */
static int ancestor_to_check(const struct kb__capacity *c, int p, int q, int64_t l)
{
        int k = kb__capacity_above(c, q, l);
        if (k < 0 || k == c->root || kb__capacity_above(c, p, l) == k)
                return -1;
        return k;
}

/* Whether p and q have a queue other than the root among their ancestors up
 * to the level. */
static bool share_ancestor(const struct kb__capacity *c, int p, int q)
{
        for (int64_t i = 1; i <= c->level; i++) {
                int a = kb__capacity_above(c, p, i);
                if (a < 0)
                        break;
                for (int64_t j = 1; a != c->root && j <= c->level; j++)
                        if (kb__capacity_above(c, q, j) == a)
                                return true;
        }
        return false;
}

/* ---- the walk -------------------------------------------------------------------- */

/* Whether t may go, given what its queue q (through w) has left. */
static bool eligible(struct work *w, int p, int q, const struct kb_task *reclaimer,
                     const struct kb_task *t)
{
        struct kb__capacity *c = w->c;
        const struct kb__capq *a = &c->q[q];
        bool levels = c->hierarchy && c->level > 0;
        double *alloc = work_of(w, q);
        for (int i = 0; i < KB_RES_MAX; i++)
                if (!le_eps(a->guarantee[i], alloc[i] - (double)t->resreq->q[i]))
                        return false;
        if (!relevant(t, a->deserved)) {
                /* Within a shared parent, an immediate victim is spared
                 * when the reclaimer's queue deserves nothing of what it
                 * asks for either: no real contention. */
                if (levels && share_ancestor(c, p, q) && !relevant(reclaimer, c->q[p].deserved))
                        return false;
        } else if (!exceeds(alloc, a->deserved, t)) {
                return false;
        }
        for (int64_t l = 1; levels && l <= c->level; l++) {
                int k = ancestor_to_check(c, p, q, l);
                if (k < 0 || !relevant(t, c->q[k].deserved))
                        continue;
                if (!exceeds(work_of(w, k), c->q[k].deserved, t))
                        return false;
        }
        return true;
}

int kb__capacity_reclaimable(void *arg, const struct kb_task *reclaimer,
                             struct kb_task *const *cand, size_t n, struct kb_task **out)
{
        struct kb__capacity *c = arg;
        const struct kb_queue_info *rq = queue_of(reclaimer);
        if (!rq || c->q[rq->index].refuse || n == 0)
                return 0;
        int p = (int)rq->index;
        struct order o = {c, p, rq};
        struct kb_heap h;
        kb_heap_init(&h, victim_order, &o);
        for (size_t i = 0; i < n; i++)
                kb_heap_push(&h, cand[i]);
        int64_t levels = c->hierarchy ? c->level : 0;
        size_t cap = n * (size_t)(1 + levels) + 1;
        struct work w = {c, kb_xmalloc(cap * sizeof(kb__vec)), kb_xmalloc(cap * sizeof(int)), 0};
        int k = 0;
        struct kb_task *t;
        while ((t = kb_heap_pop(&h))) {
                const struct kb_queue_info *tq = queue_of(t);
                if (!tq || c->q[tq->index].broken)
                        continue;
                bool shared = false;
                for (int i = 0; i < KB_RES_MAX && !shared; i++)
                        shared = i != KB_RES_PODS && (double)t->resreq->q[i] >= KB_QUOTA_EPS &&
                                 (double)reclaimer->resreq->q[i] >= KB_QUOTA_EPS;
                int q = (int)tq->index;
                if (!shared || !eligible(&w, p, q, reclaimer, t))
                        continue;
                for (int64_t l = 0; l <= levels; l++) {
                        int a = l == 0 ? q : ancestor_to_check(c, p, q, l);
                        if (a < 0)
                                continue;
                        double *alloc = work_of(&w, a);
                        for (int i = 0; i < KB_RES_MAX; i++)
                                alloc[i] -= (double)t->resreq->q[i];
                }
                out[k++] = t;
        }
        for (size_t i = 0; i < w.n; i++)
                c->slot[w.queue[i]] = -1;
        free(w.v);
        free(w.queue);
        kb_heap_release(&h);
        return k;
}
